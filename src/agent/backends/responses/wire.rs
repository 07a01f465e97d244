//! The Responses request's own shapes: the conversation as input items (system prompts as
//! `developer` messages; the model's calls as `function_call` items, each answered by one
//! `function_call_output` item paired by `call_id`) and the tools as flat function tools.
//!
//! Tool names go out as the layout names them (every layout's names match `[a-zA-Z0-9_-]{1,64}`, what
//! the API accepts), so names map to themselves both ways, as for `openai`.
//!
//! With the model's `namespaces` option, the catalog's functions go out grouped: one `namespace` tool
//! per server ([`crate::protocol::ToolGroup`], named by [`crate::layout::flat::group_names`]), each
//! function inside it under the name it has top level; the layouts' meta-tools stay top level. The
//! model's `function_call` items then carry the group's name in `namespace`, and the history echoes it.

use crate::protocol::{FunctionDef, Message, ToolGroup};
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
    groups: Option<&[ToolGroup]>,
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
        grouped(defs.iter().map(|f| (f.name.as_str(), function(f, false))), groups)
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
                        None => {
                            let mut item = json!({"type": "function_call", "call_id": c.id, "name": c.name,
                                "arguments": replayed_arguments(&c.arguments)});
                            if let Some((namespace, name)) = namespace_of(&c.name, groups) {
                                item["namespace"] = json!(namespace);
                                item["name"] = json!(name);
                            }
                            out.push(item)
                        }
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

/// The namespace and name a call to `name` goes back with when `groups` are sent: the group holding
/// the function, or — for a call [`super::response`] read as `namespace.name` because the pair named
/// no function — the pair as the model wrote it. `None`: a top-level function.
fn namespace_of<'a>(name: &'a str, groups: Option<&'a [ToolGroup]>) -> Option<(&'a str, &'a str)> {
    let groups = groups?;
    if let Some(g) = groups.iter().find(|g| g.functions.iter().any(|f| f == name)) {
        return Some((&g.name, name));
    }
    name.split_once('.')
}

/// Function tools as a request lists them: without `groups`, as they come; with them, each function
/// of a group inside that group's `namespace` tool (groups in their order, each after the top-level
/// tools before its first function), the others top level.
fn grouped<'a>(
    functions: impl IntoIterator<Item = (&'a str, Value)>,
    groups: Option<&[ToolGroup]>,
) -> Vec<Value> {
    let Some(groups) = groups else {
        return functions.into_iter().map(|(_, f)| f).collect();
    };
    let mut out: Vec<Value> = Vec::new();
    // Where each group's namespace tool sits in `out`, once it holds a function.
    let mut placed: Vec<Option<usize>> = vec![None; groups.len()];
    for (name, f) in functions {
        match groups.iter().position(|g| g.functions.iter().any(|n| n == name)) {
            None => out.push(f),
            Some(g) => {
                let at = *placed[g].get_or_insert_with(|| {
                    out.push(json!({"type": "namespace", "name": groups[g].name,
                        "description": groups[g].description, "tools": []}));
                    out.len() - 1
                });
                out[at]["tools"].as_array_mut().expect("a namespace's tools").push(f);
            }
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
/// With `groups`, the catalog's functions go in their server's `namespace` tool ([`grouped`]).
pub(super) fn tools(
    functions: &[FunctionDef],
    deferred: &[FunctionDef],
    layout: LayoutKind,
    groups: Option<&[ToolGroup]>,
) -> Value {
    let shown = functions.iter().map(|f| {
        let tool = if layout == LayoutKind::NativeSearchClient && f.name == nav::SEARCH_TOOLS {
            json!({"type": "tool_search", "execution": "client", "description": f.description,
                "parameters": f.parameters})
        } else {
            function(f, false)
        };
        (f.name.as_str(), tool)
    });
    let hidden = deferred.iter().map(|f| (f.name.as_str(), function(f, true)));
    let mut out = grouped(shown.chain(hidden), groups);
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
            None,
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

    fn def(name: &str) -> FunctionDef {
        FunctionDef { name: name.into(), description: format!("{name} it"), parameters: json!({}) }
    }

    fn groups() -> Vec<ToolGroup> {
        let group = |name: &str, functions: &[&str]| ToolGroup {
            name: name.into(),
            description: format!("the {name} server"),
            functions: functions.iter().map(|f| f.to_string()).collect(),
        };
        vec![group("mail", &["send", "read"]), group("files", &["open"])]
    }

    #[test]
    fn with_groups_each_servers_functions_go_in_its_namespace_and_meta_tools_stay_top_level() {
        let (functions, deferred) =
            ([def(nav::SEARCH_TOOLS)], [def("send"), def("open"), def("read")]);
        let g = groups();
        let tools = tools(&functions, &deferred, LayoutKind::NativeSearchClient, Some(&g));
        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap_or("").to_string())
                .collect()
        };
        assert_eq!(tools[0]["type"], "tool_search");
        assert_eq!(tools.as_array().unwrap().len(), 3, "{tools}");
        assert_eq!(
            (&tools[1]["type"], &tools[1]["name"], &tools[1]["description"]),
            (&json!("namespace"), &json!("mail"), &json!("the mail server"))
        );
        assert_eq!(names(&tools[1]["tools"]), ["send", "read"]);
        assert_eq!(names(&tools[2]["tools"]), ["open"]);
        for f in tools[1]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .chain(tools[2]["tools"].as_array().unwrap())
        {
            assert_eq!((&f["type"], &f["defer_loading"]), (&json!("function"), &json!(true)));
        }
        // Without groups, nothing changes.
        let flat = super::tools(&deferred, &[], LayoutKind::Flat, None);
        assert_eq!(names(&flat), ["send", "open", "read"]);
        assert!(flat.as_array().unwrap().iter().all(|t| t["type"] == "function"));
    }

    #[test]
    fn the_history_echoes_the_namespace_of_grouped_calls() {
        let call = |id: &str, name: &str| ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        let calls = vec![call("c1", "open"), call("c2", "mail.open"), call("c3", "other")];
        let messages = [Message::Assistant { content: None, tool_calls: calls }];
        let g = groups();
        let items = input(&messages, LayoutKind::Flat, &[], Some(&g));
        assert_eq!((&items[0]["namespace"], &items[0]["name"]), (&json!("files"), &json!("open")));
        assert_eq!((&items[1]["namespace"], &items[1]["name"]), (&json!("mail"), &json!("open")));
        assert!(items[2].get("namespace").is_none());
        let plain = input(&messages, LayoutKind::Flat, &[], None);
        assert!(plain.iter().all(|i| i.get("namespace").is_none()));
    }
}
