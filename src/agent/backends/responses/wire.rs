//! The Responses request's own shapes: the conversation as input items (system prompts as
//! `developer` messages; the model's calls as `function_call` items, each answered by one
//! `function_call_output` item paired by `call_id`) and the tools as flat function tools.
//!
//! Tool names go out as the layout names them (every layout's names match `[a-zA-Z0-9_-]{1,64}`, what
//! the API accepts), so names map to themselves both ways, as for `openai`.

use crate::protocol::{FunctionDef, Message};
use crate::record::{LayoutKind, nav};
use serde_json::{Value, json};

/// The `input` items of a conversation. In the native layouts a search goes back as the protocol's
/// own pair of items: `tool_search_call` and `tool_search_output`, `execution: "server"` for a search
/// the API ran (`native-search`; the output lists the `deferred` tools it loaded) and `"client"` for
/// toolpick's answer to `search_tools` (`native-search-client`; the output lists the tools found, or
/// none when the search failed).
pub(super) fn input(
    messages: &[Message],
    layout: LayoutKind,
    deferred: &[FunctionDef],
) -> Vec<Value> {
    let search = |name: &str| match layout {
        LayoutKind::NativeSearch if nav::is_provider_search(name) => Some("server"),
        LayoutKind::NativeSearchClient if name == nav::SEARCH_TOOLS => Some("client"),
        _ => None,
    };
    let loaded = |result: &str, execution: &str| -> Vec<Value> {
        let found: Vec<Value> = serde_json::from_str::<Value>(result)
            .ok()
            .and_then(|v| v["tools"].as_array().cloned())
            .unwrap_or_default();
        let defs: Vec<FunctionDef> = if execution == "server" {
            // The conversation keeps the names the API loaded: their definitions are the deferred ones.
            found
                .iter()
                .filter_map(|t| t["name"].as_str())
                .filter_map(|n| deferred.iter().find(|f| f.name == n).cloned())
                .collect()
        } else {
            found.into_iter().filter_map(|t| serde_json::from_value(t).ok()).collect()
        };
        defs.iter().map(|f| function(f, false)).collect()
    };
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
                    match search(&c.name) {
                        Some(execution) => {
                            let arguments: Value =
                                serde_json::from_str(replayed_arguments(&c.arguments))
                                    .unwrap_or_else(|_| json!({}));
                            out.push(json!({"type": "tool_search_call", "call_id": c.id,
                                "execution": execution, "arguments": arguments, "status": "completed"}));
                            if execution == "server" {
                                let result = messages.iter().find_map(|m| match m {
                                    Message::Tool { tool_call_id, content, .. } if *tool_call_id == c.id => Some(content.as_str()),
                                    _ => None,
                                });
                                out.push(json!({"type": "tool_search_output", "call_id": c.id, "execution": "server",
                                    "status": "completed", "tools": loaded(result.unwrap_or_default(), "server")}));
                            }
                        }
                        None => out.push(json!({"type": "function_call", "call_id": c.id, "name": c.name,
                            "arguments": replayed_arguments(&c.arguments)})),
                    }
                }
            }
            Message::Tool { name, .. } if search(name) == Some("server") => {}
            Message::Tool { tool_call_id, content, name } if search(name) == Some("client") => {
                out.push(json!({"type": "tool_search_output", "call_id": tool_call_id, "execution": "client",
                    "status": "completed", "tools": loaded(content, "client")}))
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

/// One function tool: `parameters` an object schema, `strict: false` (the layouts' schemas are not
/// written for strict mode), `defer_loading` when the API is to load it on a search.
fn function(f: &FunctionDef, defer: bool) -> Value {
    let mut schema = f.parameters.clone();
    if let Value::Object(m) = &mut schema {
        m.entry("type").or_insert(json!("object"));
    } else {
        schema = json!({"type": "object"});
    }
    let mut t = json!({"type": "function", "name": f.name, "description": f.description,
        "parameters": schema, "strict": false});
    if defer {
        t["defer_loading"] = json!(true);
    }
    t
}

/// The `tools` array: the functions shown, then the deferred ones (`defer_loading: true`). In
/// `native-search` the API's own `tool_search` (executed by the server) is added; in
/// `native-search-client` toolpick's `search_tools` is sent as a `tool_search` tool executed by the
/// client, with its description and parameters.
pub(super) fn tools(
    functions: &[FunctionDef],
    deferred: &[FunctionDef],
    layout: LayoutKind,
) -> Value {
    let mut out: Vec<Value> = functions
        .iter()
        .map(|f| {
            if layout == LayoutKind::NativeSearchClient && f.name == nav::SEARCH_TOOLS {
                json!({"type": "tool_search", "execution": "client", "description": f.description,
                    "parameters": f.parameters})
            } else {
                function(f, false)
            }
        })
        .collect();
    out.extend(deferred.iter().map(|f| function(f, true)));
    if layout == LayoutKind::NativeSearch {
        out.push(json!({"type": "tool_search", "execution": "server"}));
    }
    Value::Array(out)
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
        let items = input(
            &[
                Message::System { content: "Be brief.".into() },
                Message::User { content: "Oslo and Lima?".into() },
                Message::Assistant {
                    content: None,
                    tool_calls: vec![
                        call("c1", r#"{"city": "Oslo"}"#),
                        call("c2", r#"{"city": "Li"#),
                    ],
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
            ],
            LayoutKind::Flat,
            &[],
        );
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
