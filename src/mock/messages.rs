//! The mock endpoint's Anthropic Messages route (`POST /v1/messages`): the request read into the
//! chat-completions shape the answer is decided in ([`chat_body`]), so both protocols get the same
//! answers and faults; the answer written as a `Message` ([`message`]); error answers rewritten in the
//! protocol's `{"type": "error", "error": {type, message}}` shape, status and headers kept.
//!
//! What a fault looks like here: `malformed_args` and `cut_off` leave a call's `input` as `{}` (the
//! protocol's `input` is an object, so cut-off JSON cannot be sent), `cut_off` ends the content on
//! that `tool_use` block with `stop_reason: max_tokens`, `content_filter` is `stop_reason: refusal`
//! with no content, `empty_choices` is an empty `content`, `truncated` is half the body.

use super::{MockState, Wire, answer::answer, echo, native};
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::Finish;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub(super) async fn route(
    State(s): State<Arc<MockState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let r = answer(&s, &headers, chat_body(&body), Wire::Messages).await;
    let r = if r.status().is_success() { r } else { error_shape(r).await };
    echo(&s, &headers, r).await
}

/// The text of a Messages `content` (a string, or blocks whose text parts are joined).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A Messages request in chat-completions shape: `system` first, each `tool_use` a tool call, each
/// `tool_result` a tool message, the tools as functions. The native layouts' parts
/// ([`super::native`]): deferred tools go to `deferred`, the API's own search tool to `server_search`;
/// a search the API ran (`server_tool_use` and its `tool_search_tool_result`) becomes a `search_tools`
/// call and its result, and `tool_reference` blocks in a `tool_result` the definitions they load.
pub(super) fn chat_body(body: &Value) -> Value {
    let mut deferred: Vec<Value> = Vec::new();
    let mut tools: Vec<Value> = Vec::new();
    let mut server_search = None;
    for t in body["tools"].as_array().into_iter().flatten() {
        if t["type"].as_str().is_some_and(|k| k.starts_with("tool_search_tool_")) {
            server_search = t["name"].as_str();
            continue;
        }
        let f = json!({"name": t["name"], "description": t["description"].as_str().unwrap_or_default(), "parameters": t["input_schema"]});
        if t["defer_loading"] == true {
            deferred.push(f);
        } else {
            tools.push(json!({"type": "function", "function": f}));
        }
    }
    let defs: Vec<crate::protocol::FunctionDef> =
        deferred.iter().filter_map(|f| serde_json::from_value(f.clone()).ok()).collect();
    let references = |content: &Value| {
        let names = content["tool_references"]
            .as_array()
            .or(content.as_array())
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_reference")
            .filter_map(|b| b["tool_name"].as_str());
        native::loaded(&defs, names.collect::<Vec<_>>()).to_string()
    };
    let mut messages = Vec::new();
    let system = text_of(&body["system"]);
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        let blocks: Vec<&Value> = m["content"].as_array().into_iter().flatten().collect();
        match m["role"].as_str() {
            Some("assistant") => {
                let calls: Vec<Value> = blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_use" || b["type"] == "server_tool_use")
                    .map(|b| {
                        let name = if b["type"] == "server_tool_use" { json!(SEARCH_TOOLS) } else { b["name"].clone() };
                        json!({"id": b["id"], "type": "function", "function": {"name": name, "arguments": b["input"].to_string()}})
                    })
                    .collect();
                let mut v = json!({"role": "assistant", "content": text_of(&m["content"])});
                if !calls.is_empty() {
                    v["tool_calls"] = json!(calls);
                }
                messages.push(v);
                for b in blocks.iter().filter(|b| b["type"] == "tool_search_tool_result") {
                    messages.push(json!({"role": "tool", "tool_call_id": b["tool_use_id"], "content": references(&b["content"])}));
                }
            }
            Some("user") => {
                for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                    let loads = b["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|x| x["type"] == "tool_reference"));
                    let content =
                        if loads { references(&b["content"]) } else { text_of(&b["content"]) };
                    messages.push(json!({"role": "tool", "tool_call_id": b["tool_use_id"], "content": content}));
                }
                let text = text_of(&m["content"]);
                if !text.is_empty() {
                    messages.push(json!({"role": "user", "content": text}));
                }
            }
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
    if let Some(name) = server_search {
        chat["server_search"] = json!(name);
    }
    if let Some(t) = body.get("temperature") {
        chat["temperature"] = t.clone();
    }
    chat
}

/// The `Message` answering `chat` (the request in chat shape) with the decided chat `message` and
/// `finish` reason. Usage: the tool definitions count as a cache write on a conversation's first
/// request and as a cache read after it, the rest as `input_tokens` (which excludes both, as the
/// protocol's does).
pub(super) fn message(
    chat: &Value,
    n: u64,
    decided: &Value,
    finish: &str,
    empty: bool,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Value {
    let mut content = Vec::new();
    if !empty {
        // The searches the API ran itself come first, each with the tools it loaded.
        for search in decided["server_searches"].as_array().into_iter().flatten() {
            let references: Vec<Value> = search["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| json!({"type": "tool_reference", "tool_name": t["name"]}))
                .collect();
            content.push(json!({"type": "server_tool_use", "id": search["id"], "name": search["name"], "input": search["input"]}));
            content.push(json!({"type": "tool_search_tool_result", "tool_use_id": search["id"],
                "content": {"type": "tool_search_tool_search_result", "tool_references": references}}));
        }
        if let Some(text) = decided["content"].as_str().filter(|t| !t.is_empty()) {
            content.push(json!({"type": "text", "text": text}));
        }
        for c in decided["tool_calls"].as_array().into_iter().flatten() {
            let input = match serde_json::from_str::<Value>(
                c["function"]["arguments"].as_str().unwrap_or_default(),
            ) {
                Ok(v @ Value::Object(_)) => v,
                _ => Value::Object(Map::new()),
            };
            content.push(json!({"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": input}));
        }
    }
    let stop_reason = match (finish, Finish::from_wire(finish)) {
        ("tool_calls", _) => "tool_use",
        (_, Finish::Length) => "max_tokens",
        (_, Finish::ContentFilter) => "refusal",
        _ => "end_turn",
    };
    let tools = chat.get("tools").map_or(0, |t| t.to_string().len() as u64 / 4).min(prompt_tokens);
    let first =
        !chat["messages"].as_array().into_iter().flatten().any(|m| m["role"] == "assistant");
    let (writes, reads) = if first { (tools, 0) } else { (0, tools) };
    json!({
        "id": format!("msg_mock_{n}"), "type": "message", "role": "assistant",
        "model": chat["model"].as_str().unwrap_or("mock"),
        "content": content,
        "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": prompt_tokens - tools, "cache_creation_input_tokens": writes,
                  "cache_read_input_tokens": reads, "output_tokens": completion_tokens}
    })
}

/// An error answer in the protocol's shape, its status and headers kept.
async fn error_shape(r: Response) -> Response {
    let (parts, body) = r.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let said: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let kind = match parts.status.as_u16() {
        401 => "authentication_error",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    };
    let message = said["error"]["message"].as_str().unwrap_or("error (mock)");
    let mut out =
        (parts.status, Json(json!({"type": "error", "error": {"type": kind, "message": message}})))
            .into_response();
    for (name, value) in parts.headers.iter() {
        if name != axum::http::header::CONTENT_LENGTH && name != axum::http::header::CONTENT_TYPE {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}
