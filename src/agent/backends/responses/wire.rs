//! The Responses request's own shapes: the conversation as input items (system prompts as
//! `developer` messages; the model's calls as `function_call` items, each answered by one
//! `function_call_output` item paired by `call_id`) and the tools as flat function tools.
//!
//! Tool names go out as the layout names them (every layout's names match `[a-zA-Z0-9_-]{1,64}`, what
//! the API accepts), so names map to themselves both ways, as for `openai`.

use crate::protocol::{FunctionDef, Message};
use serde_json::{Value, json};

/// The `input` items of a conversation.
pub(super) fn input(messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        match m {
            Message::System { content } => {
                out.push(json!({"type": "message", "role": "developer", "content": content}))
            }
            Message::User { content } => {
                out.push(json!({"type": "message", "role": "user", "content": content}))
            }
            Message::Assistant { content, tool_calls } => {
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    out.push(json!({"type": "message", "role": "assistant", "content": text}));
                }
                for c in tool_calls {
                    out.push(json!({"type": "function_call", "call_id": c.id, "name": c.name,
                        "arguments": replayed_arguments(&c.arguments)}));
                }
            }
            Message::Tool { tool_call_id, content, .. } => out.push(
                json!({"type": "function_call_output", "call_id": tool_call_id, "output": content}),
            ),
        }
    }
    out
}

/// The arguments of an earlier call as the next request carries them: as written when they are a
/// JSON object, else `{}` (a cut-off or text-parsed call; the transcript keeps them as written).
fn replayed_arguments(arguments: &str) -> &str {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(_)) => arguments,
        _ => "{}",
    }
}

/// The `tools` array: function tools, `parameters` an object schema, `strict: false` (the layouts'
/// schemas are not written for strict mode).
pub(super) fn tools(functions: &[FunctionDef]) -> Value {
    functions
        .iter()
        .map(|f| {
            let mut schema = f.parameters.clone();
            if let Value::Object(m) = &mut schema {
                m.entry("type").or_insert(json!("object"));
            } else {
                schema = json!({"type": "object"});
            }
            json!({"type": "function", "name": f.name, "description": f.description,
                "parameters": schema, "strict": false})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolCall;

    #[test]
    fn calls_and_results_become_paired_items_and_the_system_prompt_a_developer_message() {
        let call = |id: &str, args: &str| ToolCall {
            id: id.into(),
            name: "get_weather".into(),
            arguments: args.into(),
        };
        let items = input(&[
            Message::System { content: "Be brief.".into() },
            Message::User { content: "Oslo and Lima?".into() },
            Message::Assistant {
                content: None,
                tool_calls: vec![call("c1", r#"{"city": "Oslo"}"#), call("c2", r#"{"city": "Li"#)],
            },
            Message::Tool {
                tool_call_id: "c1".into(),
                name: "get_weather".into(),
                content: "3".into(),
            },
            Message::Tool {
                tool_call_id: "c2".into(),
                name: "get_weather".into(),
                content: "e".into(),
            },
        ]);
        assert_eq!(items[0]["role"], "developer");
        assert_eq!(items[1]["role"], "user");
        assert_eq!(items[2]["type"], "function_call");
        assert_eq!(items[2]["arguments"], r#"{"city": "Oslo"}"#);
        assert_eq!(items[3]["arguments"], "{}", "cut-off arguments are not replayed");
        assert_eq!(
            items[4],
            json!({"type": "function_call_output", "call_id": "c1", "output": "3"})
        );
        assert_eq!(items[5]["call_id"], "c2");
        assert_eq!(items.len(), 6);
    }
}
