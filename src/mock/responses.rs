//! The mock endpoint's OpenAI Responses route (`POST /v1/responses`): the request's input items read
//! into the chat-completions shape the answer is decided in ([`chat_body`]), so every protocol gets
//! the same answers and faults, and the answer written as a `Response` ([`response`]).
//!
//! What a fault looks like here: `cut_off` is `status: "incomplete"` with
//! `incomplete_details.reason: "max_output_tokens"`, the output ending on the cut call (its arguments
//! half written); `content_filter` is `incomplete` for `content_filter` with no output;
//! `empty_choices` is an empty `output`; errors keep OpenAI's `{"error": {…}}` shape.

use super::{MockState, Wire, answer::answer, echo};
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::Finish;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

pub(super) async fn route(
    State(s): State<Arc<MockState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let r = answer(&s, &headers, chat_body(&body), Wire::Responses).await;
    echo(&s, &headers, r).await
}

/// The text of a message item's `content` (a string, or parts whose text is joined).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

/// The tools of a `tools` list with those of each `namespace` tool in its place, each with the
/// namespace tool holding it.
fn flattened(tools: &Value) -> Vec<(&Value, Option<&Value>)> {
    let mut out = Vec::new();
    for t in tools.as_array().into_iter().flatten() {
        if t["type"] == "namespace" {
            out.extend(t["tools"].as_array().into_iter().flatten().map(|f| (f, Some(t))));
        } else {
            out.push((t, None));
        }
    }
    out
}

/// Tools as a `tool_search_output` lists them: the functions of a group (the request's
/// `namespaces`, kept in the chat body) inside one `namespace` item per group, in order.
fn grouped_like_request(chat: &Value, tools: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for t in tools {
        let ns = &chat["namespaces"][t["name"].as_str().unwrap_or_default()];
        if ns.is_null() {
            out.push(t);
            continue;
        }
        match out.iter_mut().find(|o| o["type"] == "namespace" && o["name"] == ns["name"]) {
            Some(group) => group["tools"].as_array_mut().expect("tools").push(t),
            None => out.push(json!({"type": "namespace", "name": ns["name"],
                "description": ns["description"], "tools": [t]})),
        }
    }
    out
}

/// A Responses request in chat-completions shape: `instructions` and `developer`/`system` messages
/// as system messages, consecutive `function_call` items one assistant message's calls, each
/// `function_call_output` a tool message, the function tools as chat tools.
pub(super) fn chat_body(body: &Value) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    if let Some(i) = body["instructions"].as_str().filter(|i| !i.is_empty()) {
        messages.push(json!({"role": "system", "content": i}));
    }
    let items: Vec<Value> = match &body["input"] {
        Value::String(s) => vec![json!({"role": "user", "content": s})],
        Value::Array(items) => items.clone(),
        _ => vec![],
    };
    for item in &items {
        match (item["type"].as_str(), item["role"].as_str()) {
            (Some(kind @ ("function_call" | "tool_search_call")), _) => {
                // A search, whoever ran it, is the baseline's `search_tools` walk.
                let (name, arguments) = if kind == "tool_search_call" {
                    (json!(SEARCH_TOOLS), json!(item["arguments"].to_string()))
                } else {
                    (item["name"].clone(), item["arguments"].clone())
                };
                let call = json!({"id": item["call_id"], "type": "function", "function": {"name": name, "arguments": arguments}});
                match messages.last_mut() {
                    Some(last) if last["role"] == "assistant" => {
                        if last["tool_calls"].is_null() {
                            last["tool_calls"] = json!([]);
                        }
                        last["tool_calls"].as_array_mut().expect("array").push(call);
                    }
                    _ => messages.push(json!({"role": "assistant", "content": "", "tool_calls": [call]})),
                }
            }
            (Some("tool_search_output"), _) => {
                let tools: Vec<Value> = flattened(&item["tools"])
                    .into_iter()
                    .map(|(t, _)| t)
                    .map(|t| json!({"name": t["name"], "description": t["description"].as_str().unwrap_or_default(), "parameters": t["parameters"]}))
                    .collect();
                messages.push(json!({"role": "tool", "tool_call_id": item["call_id"], "content": json!({"tools": tools}).to_string()}))
            }
            (Some("function_call_output"), _) => messages.push(
                json!({"role": "tool", "tool_call_id": item["call_id"], "content": text_of(&item["output"])}),
            ),
            (_, Some(role)) => {
                let role = if role == "developer" { "system" } else { role };
                messages.push(json!({"role": role, "content": text_of(&item["content"])}));
            }
            _ => {}
        }
    }
    // The native layouts' parts ([`super::native`]): deferred functions apart, the API's own search
    // (`execution: "server"`) as `server_search`, a client-executed one as the `search_tools` function.
    // Functions grouped in `namespace` tools count as the functions they hold, in order; which group
    // holds each goes in `namespaces` (function name → group) for the writer.
    let (mut tools, mut deferred) = (Vec::new(), Vec::new());
    let (mut server_search, mut client_search) = (false, false);
    let mut namespaces = serde_json::Map::new();
    for (t, namespace) in flattened(&body["tools"]) {
        if let (Some(ns), Some(name)) = (namespace, t["name"].as_str()) {
            namespaces.insert(
                name.to_string(),
                json!({"name": ns["name"], "description": ns["description"]}),
            );
        }
        match t["type"].as_str() {
            Some("function") => {
                let f = json!({"name": t["name"], "description": t["description"].as_str().unwrap_or_default(), "parameters": t["parameters"]});
                if t["defer_loading"] == true {
                    deferred.push(f);
                } else {
                    tools.push(json!({"type": "function", "function": f}));
                }
            }
            Some("tool_search") if t["execution"] == "client" => {
                client_search = true;
                tools.push(json!({"type": "function", "function": {"name": SEARCH_TOOLS, "description": t["description"].as_str().unwrap_or_default(), "parameters": t["parameters"]}}));
            }
            Some("tool_search") => server_search = true,
            _ => {}
        }
    }
    let mut chat = json!({"model": body["model"], "messages": messages});
    if !tools.is_empty() {
        chat["tools"] = json!(tools);
    }
    if !deferred.is_empty() {
        chat["deferred"] = json!(deferred);
    }
    if server_search {
        chat["server_search"] = json!("tool_search");
    }
    if client_search {
        chat["client_search"] = json!(true);
    }
    if !namespaces.is_empty() {
        chat["namespaces"] = Value::Object(namespaces);
    }
    if let Some(t) = body.get("temperature") {
        chat["temperature"] = t.clone();
    }
    chat
}

/// The `Response` answering `chat` (the request in chat shape) with the decided chat `message` and
/// `finish` reason. Usage: the tool definitions count as cached input after a conversation's first
/// request (`input_tokens` includes them either way, as the protocol's does).
pub(super) fn response(
    chat: &Value,
    n: u64,
    decided: &Value,
    finish: &str,
    empty: bool,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Value {
    let mut output = Vec::new();
    if !empty {
        if let Some(text) = decided["content"].as_str().filter(|t| !t.is_empty()) {
            output.push(json!({"type": "message", "id": format!("msg_mock_{n}"), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}));
        }
        // The searches the API ran itself first, each with the tools it loaded.
        for (i, search) in decided["server_searches"].as_array().into_iter().flatten().enumerate() {
            let tools: Vec<Value> = search["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    json!({"type": "function", "name": t["name"], "description": t["description"],
                    "parameters": t["parameters"], "strict": false, "defer_loading": true})
                })
                .collect();
            let tools = grouped_like_request(chat, tools);
            output.push(json!({"type": "tool_search_call", "id": format!("tsc_mock_{n}_{i}"), "call_id": search["id"],
                "execution": "server", "arguments": search["input"], "status": "completed"}));
            output.push(json!({"type": "tool_search_output", "id": format!("tso_mock_{n}_{i}"), "call_id": search["id"],
                "execution": "server", "status": "completed", "tools": tools}));
        }
        for (i, c) in decided["tool_calls"].as_array().into_iter().flatten().enumerate() {
            let arguments = c["function"]["arguments"].as_str().unwrap_or("{}");
            if chat["client_search"] == true && c["function"]["name"] == SEARCH_TOOLS {
                // The client is to run this search: the API's own item, arguments as an object.
                let arguments: Value =
                    serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
                output.push(json!({"type": "tool_search_call", "id": format!("tsc_mock_{n}_{i}"), "call_id": c["id"],
                    "execution": "client", "arguments": arguments, "status": "completed"}));
                continue;
            }
            let mut call = json!({"type": "function_call", "id": format!("fc_mock_{n}_{i}"), "call_id": c["id"],
                "name": c["function"]["name"], "arguments": arguments,
                "status": "completed"});
            // A grouped function is called in its namespace.
            let ns =
                &chat["namespaces"][c["function"]["name"].as_str().unwrap_or_default()]["name"];
            if !ns.is_null() {
                call["namespace"] = ns.clone();
            }
            output.push(call);
        }
    }
    let (status, incomplete) = match Finish::from_wire(finish) {
        Finish::Length => ("incomplete", json!({"reason": "max_output_tokens"})),
        Finish::ContentFilter => ("incomplete", json!({"reason": "content_filter"})),
        Finish::Complete => ("completed", Value::Null),
    };
    let tools = chat.get("tools").map_or(0, |t| t.to_string().len() as u64 / 4).min(prompt_tokens);
    let first =
        !chat["messages"].as_array().into_iter().flatten().any(|m| m["role"] == "assistant");
    let cached = if first { 0 } else { tools };
    json!({
        "id": format!("resp_mock_{n}"), "object": "response", "created_at": 0,
        "status": status, "incomplete_details": incomplete, "error": null,
        "model": chat["model"].as_str().unwrap_or("mock"),
        "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "instructions": null, "metadata": {}, "temperature": null, "top_p": null,
        "usage": {"input_tokens": prompt_tokens,
                  "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
                  "output_tokens": completion_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt_tokens + completion_tokens}
    })
}
