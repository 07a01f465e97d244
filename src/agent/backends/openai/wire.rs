//! The wire form of the chat-completions exchange that the client library does not give: the
//! conversation as the next request carries it, and the finish reasons of other providers read in
//! OpenAI's spelling for the schema check.

use crate::protocol::{Finish, Message};
use serde_json::{Value, json};

/// `value` with every choice's `finish_reason` in OpenAI's spelling, for the schema check only: other
/// providers' reasons (`max_tokens`, `MAX_TOKENS`, `SAFETY`, …) are not in the library's enum, yet the
/// response is a good one. The response itself is kept (and cached) as the endpoint sent it.
pub(super) fn openai_finish_reasons(mut value: Value) -> Value {
    for choice in value["choices"].as_array_mut().into_iter().flatten() {
        if let Some(reason) = choice["finish_reason"].as_str() {
            let known = ["stop", "length", "tool_calls", "content_filter", "function_call"]
                .contains(&reason);
            if !known {
                choice["finish_reason"] = json!(Finish::from_wire(reason).wire());
            }
        }
    }
    value
}

/// Is `arguments` a whole JSON value? (A call cut off by the token limit is not.)
pub(super) fn complete_json(arguments: &str) -> bool {
    !arguments.trim().is_empty() && serde_json::from_str::<Value>(arguments).is_ok()
}

/// The wire form of our messages (validated against async-openai's request type).
pub(super) fn wire_messages(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| match m {
            Message::System { content } => json!({"role": "system", "content": content}),
            Message::User { content } => json!({"role": "user", "content": content}),
            Message::Assistant { content, tool_calls } => {
                let mut v = json!({"role": "assistant", "content": content});
                if !tool_calls.is_empty() {
                    v["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": replayed_arguments(&c.arguments)}}))
                        .collect();
                }
                v
            }
            Message::Tool { tool_call_id, content, .. } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
        })
        .collect()
}

/// The arguments of an earlier call as the next request carries them: as the model wrote them when they
/// are a JSON object, else `{}`. Servers parse the arguments of the history they are sent (llama.cpp's
/// `func_args_not_string`, vLLM's message preprocessing) and reject a request whose history holds
/// arguments that are not JSON — with the same words as a parse failure of the model's new output
/// (llama.cpp: HTTP 500 `Failed to parse tool call arguments as JSON`; vLLM: HTTP 400 with Python's
/// JSON error) — so replaying a malformed, cut-off or text-parsed call verbatim would turn every later
/// turn of the episode into a failure of toolpick's own request. Chat templates that iterate the
/// arguments need an object, so anything else (a string, an array) is sent as `{}` too. The model
/// still reads what went wrong in the tool result answering that call, and the trial's transcript
/// keeps the arguments as written.
pub(super) fn replayed_arguments(arguments: &str) -> &str {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(_)) => arguments,
        _ => "{}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolCall;

    #[test]
    fn replayed_history_carries_only_json_objects_and_keeps_good_arguments_byte_for_byte() {
        // Every shape a model's arguments take: whole objects (kept as written, spacing and key order
        // included), and the ones servers reject in history or templates cannot iterate.
        let kept = [r#"{"city": "Pune"}"#, r#"{ "b":1,"a" : [1, {"x": null}] }"#, "{}"];
        let replaced = [
            "",
            " ",
            r#"{"city": "Pu"#,
            r#"{'city': 'Pune'}"#,
            r#""{\"city\": \"Pune\"}""#,
            "[1, 2]",
            "42",
            "null",
            "{} {}",
            "<tool_call>",
        ];
        for args in kept {
            assert_eq!(replayed_arguments(args), args);
        }
        for args in replaced {
            assert_eq!(replayed_arguments(args), "{}", "{args:?}");
        }
        let calls = kept
            .iter()
            .chain(&replaced)
            .enumerate()
            .map(|(i, a)| ToolCall {
                id: format!("c{i}"),
                name: "f".into(),
                arguments: a.to_string(),
            })
            .collect();
        let wire = wire_messages(&[Message::Assistant { content: None, tool_calls: calls }]);
        for call in wire[0]["tool_calls"].as_array().unwrap() {
            let text = call["function"]["arguments"].as_str().unwrap();
            assert!(
                serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()),
                "{text:?} would be rejected by a server parsing its history"
            );
        }
    }
}
