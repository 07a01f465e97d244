//! The mock endpoint's Gemini route (`POST /v1beta/models/{model}:generateContent`): the request's
//! `contents` read into the chat-completions shape the answer is decided in ([`chat_body`]), so every
//! protocol gets the same answers and faults; the answer written as a `GenerateContentResponse`
//! ([`response`]); errors in Google's `{"error": {code, message, status}}` shape. `GET
//! /v1beta/models` lists the model, `GET /v1beta/models/{model}` describes it (its
//! `inputTokenLimit` when the mock has a `--context-size`).
//!
//! It plays a model that signs its calls, as Gemini 3 does: the first `functionCall` part of every
//! answer carries a `thoughtSignature`, and a request whose history holds a `model` turn with calls
//! but without its signature is refused with the API's 400 ("Function call is missing a
//! thought_signature in functionCall parts"), so a client that does not echo the parts fails here.
//! Its calls carry no `id` (the API's may not): the client pairs results by order and name. The
//! signature carries the mock's own ids of the calls, which the lexical baseline it answers with
//! reads back from the conversation ([`signature`]).
//!
//! What a fault looks like here: `cut_off` is `finishReason: MAX_TOKENS`, the parts ending on the
//! cut call (its `args` `{}`: an object, as the protocol's always is); `malformed_args` is
//! `MALFORMED_FUNCTION_CALL` with no content (the API's own answer to a call it cannot parse);
//! `content_filter` is `SAFETY` with no content; `empty_choices` an empty `candidates`.

use super::{MockState, Wire, answer::answer, authorized, echo, unauthorized};
use crate::protocol::Finish;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The signature the mock signs an answer's first call with: its own ids of the answer's calls (the
/// lexical baseline it answers with reads its earlier calls' ids), opaque to the client as a real
/// signature is, so the conversation is whole again when the client echoes it, though the calls went
/// out without ids. The same answer is signed the same way (a rerun's records are byte-identical).
fn signature(ids: &[Value]) -> String {
    crate::redact::base64(json!({ "mock_thought": ids }).to_string().as_bytes())
}

/// The call ids a signature carries, if it is one of the mock's.
fn signed_ids(signature: &str) -> Option<Vec<String>> {
    let bytes = unbase64(signature)?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    v["mock_thought"].as_array()?.iter().map(|id| id.as_str().map(String::from)).collect()
}

/// Standard base64 (padded) to bytes; `None` when it is not.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.trim_end_matches('=').bytes() {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `POST /v1beta/models/{model}:generateContent` (`{model}` is the path's last segment).
pub(super) async fn route(
    State(s): State<Arc<MockState>>,
    Path(segment): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let r = if segment.strip_suffix(":generateContent").is_none() {
        error_shape(StatusCode::NOT_FOUND, &format!("unknown method in `{segment}`"))
    } else if let Some(missing) = unsigned_call(&body) {
        error_shape(StatusCode::BAD_REQUEST, &missing)
    } else {
        let r = answer(&s, &headers, chat_body(&body), Wire::Gemini).await;
        if r.status().is_success() { r } else { reshaped(r).await }
    };
    echo(&s, &headers, r).await
}

/// `GET /v1beta/models/{model}`: the model's description.
pub(super) async fn model(
    State(s): State<Arc<MockState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&s, &headers) {
        return reshaped(unauthorized(&s, &headers)).await;
    }
    let mut m = json!({"name": format!("models/{name}"), "displayName": "toolpick mock",
        "supportedGenerationMethods": ["generateContent"]});
    if let Some(n) = s.config.context_size {
        m["inputTokenLimit"] = json!(n);
    }
    Json(m).into_response()
}

/// `GET /v1beta/models`: the model list.
pub(super) async fn models(State(s): State<Arc<MockState>>, headers: HeaderMap) -> Response {
    if !authorized(&s, &headers) {
        return reshaped(unauthorized(&s, &headers)).await;
    }
    Json(json!({"models": [{"name": "models/mock", "supportedGenerationMethods": ["generateContent"]}]}))
        .into_response()
}

/// The API's refusal of a history whose `model` turn has calls but no signature on its first call.
fn unsigned_call(body: &Value) -> Option<String> {
    let contents = body["contents"].as_array()?;
    for (i, c) in contents.iter().enumerate().filter(|(_, c)| c["role"] == "model") {
        let parts = c["parts"].as_array().into_iter().flatten();
        let first = parts.clone().find(|p| p.get("functionCall").is_some());
        if let Some(first) = first
            && !first["thoughtSignature"].is_string()
        {
            return Some(format!(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call `default_api:{}`, position {}.",
                first["functionCall"]["name"].as_str().unwrap_or_default(),
                i + 1
            ));
        }
    }
    None
}

/// The text of a content's text parts (thoughts left out).
fn text_of(parts: &[Value]) -> String {
    parts.iter().filter(|p| p["thought"] != true).filter_map(|p| p["text"].as_str()).collect()
}

/// A `generateContent` request in chat-completions shape: `systemInstruction` as the system message,
/// each `model` turn's `functionCall` parts one assistant message's calls (ids by turn and place,
/// as the API sends none), each `functionResponse` a tool message paired with the calls of the turn
/// before it in order, the declarations as chat tools.
pub(super) fn chat_body(body: &Value) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    let system = text_of(body["systemInstruction"]["parts"].as_array().map_or(&[], |v| v));
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    let mut last_calls: Vec<String> = Vec::new();
    for (turn, c) in body["contents"].as_array().into_iter().flatten().enumerate() {
        let parts = c["parts"].as_array().map_or(&[][..], |v| v);
        if c["role"] == "model" {
            last_calls.clear();
            let signed = parts
                .iter()
                .find(|p| p.get("functionCall").is_some())
                .and_then(|p| p["thoughtSignature"].as_str())
                .and_then(signed_ids)
                .unwrap_or_default();
            let calls: Vec<Value> = parts
                .iter()
                .filter_map(|p| p.get("functionCall"))
                .enumerate()
                .map(|(i, f)| {
                    let id = f["id"].as_str().map(String::from);
                    let id = id
                        .or_else(|| signed.get(i).cloned())
                        .unwrap_or_else(|| format!("g_{turn}_{i}"));
                    last_calls.push(id.clone());
                    json!({"id": id, "type": "function", "function": {"name": f["name"], "arguments": f["args"].to_string()}})
                })
                .collect();
            let mut m = json!({"role": "assistant", "content": text_of(parts)});
            if !calls.is_empty() {
                m["tool_calls"] = json!(calls);
            }
            messages.push(m);
            continue;
        }
        for (i, r) in parts.iter().filter_map(|p| p.get("functionResponse")).enumerate() {
            let id = r["id"]
                .as_str()
                .map(String::from)
                .or_else(|| last_calls.get(i).cloned())
                .unwrap_or_default();
            let response = &r["response"];
            let content = match (&response["output"], &response["error"]) {
                (Value::String(s), _) => s.clone(),
                (Value::Null, Value::Null) => response.to_string(),
                (Value::Null, e) => json!({"error": e}).to_string(),
                (o, _) => o.to_string(),
            };
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
        }
        let text = text_of(parts);
        if !text.is_empty() {
            messages.push(json!({"role": "user", "content": text}));
        }
    }
    let tools: Vec<Value> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["functionDeclarations"].as_array().into_iter().flatten())
        .map(|f| {
            let schema = if f["parametersJsonSchema"].is_null() { &f["parameters"] } else { &f["parametersJsonSchema"] };
            json!({"type": "function", "function": {"name": f["name"], "description": f["description"].as_str().unwrap_or_default(), "parameters": schema}})
        })
        .collect();
    let mut chat = json!({"model": "mock", "messages": messages});
    if !tools.is_empty() {
        chat["tools"] = json!(tools);
    }
    if let Some(t) = body["generationConfig"].get("temperature") {
        chat["temperature"] = t.clone();
    }
    chat
}

/// The `GenerateContentResponse` answering `chat` (the request in chat shape) with the decided chat
/// `message` and `finish` reason; `malformed` the API's refusal of a call it could not parse. Usage:
/// the tool definitions count as cached content after a conversation's first request
/// (`promptTokenCount` includes them either way, as the protocol's does).
#[allow(clippy::too_many_arguments)]
pub(super) fn response(
    chat: &Value,
    n: u64,
    decided: &Value,
    finish: &str,
    empty: bool,
    malformed: bool,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Value {
    let tools = chat.get("tools").map_or(0, |t| t.to_string().len() as u64 / 4).min(prompt_tokens);
    let first =
        !chat["messages"].as_array().into_iter().flatten().any(|m| m["role"] == "assistant");
    let mut usage = json!({"promptTokenCount": prompt_tokens, "candidatesTokenCount": completion_tokens,
        "totalTokenCount": prompt_tokens + completion_tokens});
    if !first && tools > 0 {
        usage["cachedContentTokenCount"] = json!(tools);
    }
    let mut out = json!({"candidates": [], "usageMetadata": usage, "modelVersion": "mock",
        "responseId": format!("mock-{n}")});
    if empty {
        return out;
    }
    if malformed {
        let call = decided["tool_calls"][0]["function"]["name"].as_str().unwrap_or("call");
        out["candidates"] = json!([{"index": 0, "finishReason": "MALFORMED_FUNCTION_CALL",
            "finishMessage": format!("Malformed function call: {call}(")}]);
        return out;
    }
    let mut parts = Vec::new();
    if let Some(text) = decided["content"].as_str().filter(|t| !t.is_empty()) {
        parts.push(json!({"text": text}));
    }
    let calls = decided["tool_calls"].as_array().map_or(&[][..], |v| v);
    let ids: Vec<Value> = calls.iter().map(|c| c["id"].clone()).collect();
    for c in calls {
        let args = match serde_json::from_str::<Value>(
            c["function"]["arguments"].as_str().unwrap_or_default(),
        ) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::Object(Map::new()),
        };
        let mut part = json!({"functionCall": {"name": c["function"]["name"], "args": args}});
        if !parts.iter().any(|p: &Value| p.get("functionCall").is_some()) {
            part["thoughtSignature"] = json!(signature(&ids));
        }
        parts.push(part);
    }
    let reason = match Finish::from_wire(finish) {
        Finish::Length => "MAX_TOKENS",
        Finish::ContentFilter => "SAFETY",
        Finish::Complete => "STOP",
    };
    let mut candidate = json!({"index": 0, "finishReason": reason});
    if !parts.is_empty() {
        candidate["content"] = json!({"role": "model", "parts": parts});
    }
    out["candidates"] = json!([candidate]);
    out
}

/// An error in Google's shape: `{"error": {code, message, status}}`.
fn error_shape(status: StatusCode, message: &str) -> Response {
    let code = status.as_u16();
    let name = match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    };
    (status, Json(json!({"error": {"code": code, "message": message, "status": name}})))
        .into_response()
}

/// An error answer of the shared path in Google's shape, its status and headers kept.
async fn reshaped(r: Response) -> Response {
    let (parts, body) = r.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let said: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let message = said["error"]["message"].as_str().unwrap_or("error (mock)");
    let mut out = error_shape(parts.status, message);
    for (name, value) in parts.headers.iter() {
        if name != axum::http::header::CONTENT_LENGTH && name != axum::http::header::CONTENT_TYPE {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_carries_the_calls_ids_back() {
        let ids = [json!("call_1_0_for_0-1"), json!("call_1_1_for_2")];
        let back = signed_ids(&signature(&ids)).unwrap();
        assert_eq!(back, vec!["call_1_0_for_0-1".to_string(), "call_1_1_for_2".to_string()]);
        assert_eq!(unbase64(&crate::redact::base64(b"ab")).unwrap(), b"ab");
        assert!(signed_ids("bm90IG1pbmU=").is_none(), "another signature: not the mock's");
        assert!(unbase64("not*base64").is_none());
    }
}
