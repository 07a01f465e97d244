//! The `generateContent` request's own shapes: the conversation as `contents` (system prompts apart,
//! as `systemInstruction`; the model's turns as `model` contents of text and `functionCall` parts —
//! or, when the answer carried signatures, its parts as they came, [`Memory`]; the results of one
//! turn's calls as one `user` content of `functionResponse` parts, one per call, in order), the tools
//! as `functionDeclarations` with a JSON Schema, and the function-calling mode.
//!
//! Tool names go out as the layout names them: every layout's names match `[a-zA-Z0-9_-]{1,64}`,
//! which the protocol's `[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}` accepts unless a name starts with a digit or
//! a dash — the run's check refuses such a cell before the first request
//! ([`limits::GEMINI`](crate::agent::backends::limits::GEMINI)).

use super::memory::Memory;
use crate::agent::backends::is_layout_error;
use crate::protocol::{FunctionDef, Message};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The prefix of the ids toolpick makes for calls that came without one: they are not sent back
/// (the model never wrote them).
pub(super) const MADE_ID: &str = "gemini_call_";

/// `true` when `id` is the model's own, to be sent back: not one toolpick made for a call without
/// one, nor for a call read from the text (`text_call_…`).
fn models_id(id: &str) -> bool {
    !id.starts_with(MADE_ID) && !id.starts_with("text_call_")
}

/// The system instruction (every system message, in order, joined by a blank line) and the
/// `contents`. Consecutive tool results become one `user` content; an assistant message with
/// neither text nor calls is left out (a content needs a part).
pub(super) fn contents(messages: &[Message], memory: &Memory) -> (Option<String>, Vec<Value>) {
    let mut system: Vec<&str> = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let mut names: HashMap<&str, &str> = HashMap::new();
    let flush = |results: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({"role": "user", "parts": std::mem::take(results)}));
        }
    };
    for m in messages {
        if !matches!(m, Message::Tool { .. }) {
            flush(&mut results, &mut out);
        }
        match m {
            Message::System { content } => system.push(content),
            Message::User { content } => {
                out.push(json!({"role": "user", "parts": [{"text": content}]}))
            }
            Message::Assistant { content, tool_calls } => {
                for c in tool_calls {
                    names.insert(c.id.as_str(), c.name.as_str());
                }
                let parts = memory.parts(content.as_deref(), tool_calls).unwrap_or_else(|| {
                    let mut parts = Vec::new();
                    if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                        parts.push(json!({"text": text}));
                    }
                    for c in tool_calls {
                        let mut call = json!({"name": c.name, "args": replayed_args(&c.arguments)});
                        if models_id(&c.id) {
                            call["id"] = json!(c.id);
                        }
                        parts.push(json!({"functionCall": call}));
                    }
                    parts
                });
                if !parts.is_empty() {
                    out.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::Tool { tool_call_id, name, content } => {
                let name = if name.is_empty() {
                    names.get(tool_call_id.as_str()).copied().unwrap_or_default()
                } else {
                    name.as_str()
                };
                let mut answer = json!({"name": name, "response": response(content)});
                if models_id(tool_call_id) {
                    answer["id"] = json!(tool_call_id);
                }
                results.push(json!({"functionResponse": answer}));
            }
        }
    }
    flush(&mut results, &mut out);
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, out)
}

/// A tool's result as the protocol's `response` object: a layout's error answer as `{"error": …}`,
/// anything else as `{"output": …}` (its JSON value, or its text when it is not JSON) — the keys the
/// API reads as a function's error and output.
fn response(content: &str) -> Value {
    if is_layout_error(content) {
        return serde_json::from_str(content).unwrap_or_else(|_| json!({"error": content}));
    }
    let output = serde_json::from_str::<Value>(content).unwrap_or_else(|_| json!(content));
    json!({ "output": output })
}

/// The `args` of an earlier call as the next request carries them: the model's arguments when they
/// are a JSON object, else `{}` (a call parsed from text or cut off may not be one).
fn replayed_args(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// The `functionDeclarations`: `parametersJsonSchema` an object schema (a layout's parameters
/// without a `type` get `"type": "object"`).
pub(super) fn declarations(functions: &[FunctionDef]) -> Vec<Value> {
    functions
        .iter()
        .map(|f| {
            let mut schema = f.parameters.clone();
            if let Value::Object(m) = &mut schema {
                m.entry("type").or_insert(json!("object"));
            } else {
                schema = json!({"type": "object"});
            }
            json!({"name": f.name, "description": f.description, "parametersJsonSchema": schema})
        })
        .collect()
}

/// `functionCallingConfig.mode` from the run's `tool_choice`: `required` → `ANY`, `none` → `NONE`,
/// anything else (and unset) → `AUTO`.
pub(super) fn mode(choice: Option<&str>) -> &'static str {
    match choice {
        Some("required") => "ANY",
        Some("none") => "NONE",
        _ => "AUTO",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolCall;

    fn call(id: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "get_weather".into(), arguments: args.into() }
    }

    fn tool(id: &str, content: &str) -> Message {
        Message::Tool { tool_call_id: id.into(), name: String::new(), content: content.into() }
    }

    #[test]
    fn results_of_one_turn_go_back_in_one_user_content_paired_by_name_and_id() {
        let made = format!("{MADE_ID}1_1_00000000");
        let conversation = vec![
            Message::System { content: "Be brief.".into() },
            Message::User { content: "Oslo and Lima?".into() },
            Message::Assistant {
                content: Some("Checking.".into()),
                tool_calls: vec![call("abc", r#"{"city": "Oslo"}"#), call(&made, r#"{"ci"#)],
            },
            tool("abc", r#"{"temp": 3}"#),
            tool(&made, r#"{"error": "bad arguments"}"#),
            Message::User { content: "And Rome?".into() },
        ];
        let (system, wire) = contents(&conversation, &Memory::default());
        assert_eq!(system.as_deref(), Some("Be brief."));
        assert_eq!(wire.len(), 4, "{wire:#?}");
        assert_eq!(wire[1]["role"], "model");
        assert_eq!(wire[1]["parts"][0], json!({"text": "Checking."}));
        assert_eq!(
            wire[1]["parts"][1],
            json!({"functionCall": {"id": "abc", "name": "get_weather", "args": {"city": "Oslo"}}})
        );
        // A made-up id is not sent; cut-off arguments still go as an object.
        assert_eq!(
            wire[1]["parts"][2],
            json!({"functionCall": {"name": "get_weather", "args": {}}})
        );
        assert_eq!(wire[2]["role"], "user");
        assert_eq!(
            wire[2]["parts"],
            json!([
                {"functionResponse": {"id": "abc", "name": "get_weather", "response": {"output": {"temp": 3}}}},
                {"functionResponse": {"name": "get_weather", "response": {"error": "bad arguments"}}}
            ])
        );
        assert_eq!(wire[3], json!({"role": "user", "parts": [{"text": "And Rome?"}]}));
    }

    #[test]
    fn a_signed_answer_goes_back_as_it_came() {
        let memory = Memory::default();
        let calls = vec![call("gemini_call_1_0_12345678", r#"{"city":"Oslo"}"#)];
        let parts = vec![
            json!({"text": "thinking…", "thought": true}),
            json!({"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": "c2ln"}),
        ];
        memory.keep(None, &calls, &parts);
        let conversation = vec![
            Message::User { content: "Oslo?".into() },
            Message::Assistant { content: None, tool_calls: calls.clone() },
            tool(&calls[0].id, "3"),
        ];
        let (_, wire) = contents(&conversation, &memory);
        assert_eq!(wire[1], json!({"role": "model", "parts": parts}));
        assert_eq!(wire[2]["parts"][0]["functionResponse"]["response"], json!({"output": 3}));
        // Unsigned answers are not kept: rebuilt, the same.
        let plain = Memory::default();
        plain.keep(
            None,
            &calls,
            &[parts[1]
                .as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o.remove("thoughtSignature");
                    Value::Object(o)
                })
                .unwrap()],
        );
        assert!(plain.parts(None, &calls).is_none());
    }

    #[test]
    fn only_the_models_own_ids_go_back() {
        assert!(models_id("abc"));
        assert!(!models_id("gemini_call_1_0_0000abcd"));
        assert!(!models_id("text_call_1_0"));
    }

    #[test]
    fn tool_choice_becomes_the_calling_mode() {
        assert_eq!(mode(None), "AUTO");
        assert_eq!(mode(Some("auto")), "AUTO");
        assert_eq!(mode(Some("required")), "ANY");
        assert_eq!(mode(Some("none")), "NONE");
    }
}
