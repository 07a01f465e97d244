//! The Messages request's own shapes: the conversation (system prompt apart; the model's calls as
//! `tool_use` blocks; their results as `tool_result` blocks of one user turn, one per call), the tools
//! (`{name, description, input_schema}`, names checked against the protocol's pattern) and
//! `tool_choice` from the run's settings.
//!
//! Tool names go out as the layout names them: every layout's function names already match the
//! stricter pattern the `openai` backend sends (`[a-zA-Z0-9_-]{1,64}`, see
//! [`crate::protocol::is_valid_function_name`]), which Anthropic's `^[a-zA-Z0-9_-]{1,128}$` contains,
//! so the mapping is the identity both ways — as it is for `openai`. A name outside the pattern is
//! refused before the request is sent, by name, rather than sent to be rejected.

use crate::agent::backends::is_layout_error;
use crate::protocol::{FunctionDef, Message};
use crate::record::{LayoutKind, nav};
use anyhow::{Result, anyhow};
use serde_json::{Map, Value, json};

/// Longest tool name the protocol accepts.
pub(crate) const NAME_MAX: usize = 128;

/// `true` when `name` matches `^[a-zA-Z0-9_-]{1,128}$`.
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    (1..=NAME_MAX).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The system prompt (every system message, in order, joined by a blank line) and the `messages`.
/// Consecutive tool results become one user turn of `tool_result` blocks; an assistant message
/// with neither text nor calls is left out (the protocol refuses empty content, and joins the
/// turns around it).
///
/// In the native layouts a search goes back in the protocol's own form: a search the API ran
/// (`native-search`) as the `server_tool_use` and `tool_search_tool_result` blocks it answered with,
/// inside the assistant turn; toolpick's answer to `search_tools` (`native-search-client`) as
/// `tool_reference` blocks naming the tools to load.
pub(crate) fn messages(messages: &[Message], layout: LayoutKind) -> (Option<String>, Vec<Value>) {
    let mut system: Vec<&str> = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    // The tool results being gathered into one user turn.
    let mut results: Vec<Value> = Vec::new();
    let flush = |results: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(results)}));
        }
    };
    // The provider's searches, by call id: answered inside the assistant turn, not by the user.
    let server_search =
        |name: &str| layout == LayoutKind::NativeSearch && nav::is_provider_search(name);
    let result_of = |id: &str| {
        messages.iter().find_map(|m| match m {
            Message::Tool { tool_call_id, content, .. } if tool_call_id == id => {
                Some(content.as_str())
            }
            _ => None,
        })
    };
    for m in messages {
        if !matches!(m, Message::Tool { .. }) {
            flush(&mut results, &mut out);
        }
        match m {
            Message::System { content } => system.push(content),
            Message::User { content } => out.push(json!({"role": "user", "content": content})),
            Message::Assistant { content, tool_calls } => {
                let mut blocks = Vec::new();
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    if server_search(&c.name) {
                        let names = found_names(result_of(&c.id).unwrap_or_default());
                        let references: Vec<Value> = names
                            .iter()
                            .map(|n| json!({"type": "tool_reference", "tool_name": n}))
                            .collect();
                        blocks.push(json!({"type": "server_tool_use", "id": c.id, "name": c.name, "input": replayed_input(&c.arguments)}));
                        blocks.push(json!({"type": "tool_search_tool_result", "tool_use_id": c.id,
                            "content": {"type": "tool_search_tool_search_result", "tool_references": references}}));
                    } else {
                        blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": replayed_input(&c.arguments)}));
                    }
                }
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::Tool { name, .. } if server_search(name) => {}
            Message::Tool { tool_call_id, content, name } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content});
                if is_layout_error(content) {
                    block["is_error"] = json!(true);
                } else if layout == LayoutKind::NativeSearchClient && name == nav::SEARCH_TOOLS {
                    let names = found_names(content);
                    block["content"] = if names.is_empty() {
                        json!("No tools matched. Search again with other words.")
                    } else {
                        names
                            .iter()
                            .map(|n| json!({"type": "tool_reference", "tool_name": n}))
                            .collect()
                    };
                }
                results.push(block);
            }
        }
    }
    flush(&mut results, &mut out);
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, out)
}

/// The function names a search's result lists (`{"tools": [{"name": …}, …]}`, the `search` layout's
/// answer and a provider search as the conversation keeps it), in order.
pub(crate) fn found_names(result: &str) -> Vec<String> {
    serde_json::from_str::<Value>(result)
        .ok()
        .and_then(|v| v["tools"].as_array().cloned())
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

/// The `input` of an earlier call as the next request carries it: the model's arguments when they
/// are a JSON object, else `{}` (the protocol's `input` is an object; a call parsed from text or cut
/// off may not be one). The transcript keeps the arguments as written.
fn replayed_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// The `tools` array: the functions shown, then the deferred ones (`defer_loading: true`), then in
/// `native-search` the API's own search tool (`tool_search_tool_bm25`, or the regex one when the model
/// asks for it). `input_schema` must be an object schema: a layout's parameters without a `type` get
/// `"type": "object"`.
pub(crate) fn tools(
    functions: &[FunctionDef],
    deferred: &[FunctionDef],
    layout: LayoutKind,
    search: Option<&str>,
) -> Result<Value> {
    let tool = |f: &FunctionDef, defer: bool| {
        if !is_valid_tool_name(&f.name) {
            return Err(anyhow!(
                "tool name `{}` does not match the Messages API's pattern ^[a-zA-Z0-9_-]{{1,{NAME_MAX}}}$",
                f.name
            ));
        }
        let mut schema = f.parameters.clone();
        if let Value::Object(m) = &mut schema {
            m.entry("type").or_insert(json!("object"));
        } else {
            schema = json!({"type": "object"});
        }
        let mut t = json!({"name": f.name, "description": f.description, "input_schema": schema});
        if defer {
            t["defer_loading"] = json!(true);
        }
        Ok(t)
    };
    let mut out = Vec::new();
    for f in functions {
        out.push(tool(f, false)?);
    }
    for f in deferred {
        out.push(tool(f, true)?);
    }
    if layout == LayoutKind::NativeSearch {
        out.push(match search {
            Some("regex") => {
                json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
            }
            _ => json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}),
        });
    }
    Ok(Value::Array(out))
}

/// `tool_choice` from the run's settings: `auto` → `auto`, `required` → `any`, `none` → `none`;
/// `parallel_tool_calls = false` → `disable_parallel_tool_use: true` (and `true` → `false`). `None`
/// when neither is set (the API's default, `auto` with parallel calls).
pub(crate) fn tool_choice(choice: Option<&str>, parallel: Option<bool>) -> Option<Value> {
    if choice.is_none() && parallel.is_none() {
        return None;
    }
    let kind = match choice.unwrap_or("auto") {
        "required" => "any",
        "none" => "none",
        _ => "auto",
    };
    let mut v = json!({"type": kind});
    // `none` takes no parallelism flag in the protocol.
    if let (Some(p), true) = (parallel, kind != "none") {
        v["disable_parallel_tool_use"] = json!(!p);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolCall;

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    #[test]
    fn results_of_one_message_go_back_in_one_user_turn_paired_by_id() {
        let conversation = vec![
            Message::System { content: "Be brief.".into() },
            Message::User { content: "Weather in Oslo and Lima?".into() },
            Message::Assistant {
                content: Some("Checking.".into()),
                tool_calls: vec![
                    call("toolu_a", "get_weather", r#"{"city": "Oslo"}"#),
                    call("toolu_b", "get_weather", r#"{"city": "Li"#),
                ],
            },
            Message::Tool {
                tool_call_id: "toolu_a".into(),
                name: "get_weather".into(),
                content: r#"{"temp": 3}"#.into(),
            },
            Message::Tool {
                tool_call_id: "toolu_b".into(),
                name: "get_weather".into(),
                content: r#"{"error": "bad arguments"}"#.into(),
            },
        ];
        let (system, wire) = messages(&conversation, LayoutKind::Flat);
        assert_eq!(system.as_deref(), Some("Be brief."));
        assert_eq!(wire.len(), 3, "{wire:#?}");
        assert_eq!(wire[0], json!({"role": "user", "content": "Weather in Oslo and Lima?"}));
        assert_eq!(wire[1]["role"], "assistant");
        assert_eq!(wire[1]["content"][0], json!({"type": "text", "text": "Checking."}));
        assert_eq!(wire[1]["content"][1]["input"], json!({"city": "Oslo"}));
        // A call whose arguments were cut off still carries an object.
        assert_eq!(wire[1]["content"][2]["input"], json!({}));
        assert_eq!(wire[2]["role"], "user");
        let results = wire[2]["content"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["tool_use_id"], "toolu_a");
        assert!(results[0].get("is_error").is_none());
        assert_eq!(results[1]["tool_use_id"], "toolu_b");
        assert_eq!(results[1]["is_error"], true);
    }

    #[test]
    fn names_outside_the_pattern_are_refused_by_name() {
        let f = |name: &str| FunctionDef {
            name: name.into(),
            description: "d".into(),
            parameters: json!({"properties": {}}),
        };
        let ok =
            tools(&[f("get_weather"), f(&"a".repeat(128))], &[], LayoutKind::Flat, None).unwrap();
        assert_eq!(ok[0]["input_schema"]["type"], "object");
        for bad in ["get.weather", "", &"a".repeat(129)] {
            let e = tools(&[f(bad)], &[], LayoutKind::Flat, None).unwrap_err().to_string();
            assert!(e.contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn tool_choice_follows_the_settings() {
        assert_eq!(tool_choice(None, None), None);
        assert_eq!(tool_choice(Some("required"), None), Some(json!({"type": "any"})));
        assert_eq!(
            tool_choice(None, Some(false)),
            Some(json!({"type": "auto", "disable_parallel_tool_use": true}))
        );
        assert_eq!(tool_choice(Some("none"), Some(false)), Some(json!({"type": "none"})));
    }
}
