//! The mock endpoint's OpenAI Responses route (`POST /v1/responses`): the request's input items read
//! into the chat-completions shape the answer is decided in ([`chat_body`]), so every protocol gets
//! the same answers and faults, and the answer written as a `Response` ([`response`]).
//!
//! What a fault looks like here: `cut_off` is `status: "incomplete"` with
//! `incomplete_details.reason: "max_output_tokens"`, the output ending on the cut call (its arguments
//! half written); `content_filter` is `incomplete` for `content_filter` with no output;
//! `empty_choices` is an empty `output`; errors keep OpenAI's `{"error": {…}}` shape.

use super::{MockState, Wire, answer::answer, echo};
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
            (Some("function_call"), _) => {
                let call = json!({"id": item["call_id"], "type": "function", "function": {"name": item["name"], "arguments": item["arguments"]}});
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
    let tools: Vec<Value> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "function")
        .map(|t| json!({"type": "function", "function": {"name": t["name"], "description": t["description"].as_str().unwrap_or_default(), "parameters": t["parameters"]}}))
        .collect();
    let mut chat = json!({"model": body["model"], "messages": messages});
    if !tools.is_empty() {
        chat["tools"] = json!(tools);
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
        for (i, c) in decided["tool_calls"].as_array().into_iter().flatten().enumerate() {
            output.push(json!({"type": "function_call", "id": format!("fc_mock_{n}_{i}"), "call_id": c["id"],
                "name": c["function"]["name"], "arguments": c["function"]["arguments"].as_str().unwrap_or("{}"),
                "status": "completed"}));
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
