//! The mock endpoint's provider limits: a request that exceeds one is refused in the real provider's
//! error shape, so the runner's reading of each (`provider_limit` with its kind) is tested offline.
//!
//! With `--tool-limits`:
//! - Chat completions (OpenAI's limits): more than 128 tools → HTTP 400 `array_above_max_length`; a
//!   function name outside `^[a-zA-Z0-9_-]{1,64}$` → HTTP 400 `invalid_value` ("does not match
//!   pattern").
//! - Messages (Anthropic's): a tool name outside `^[a-zA-Z0-9_-]{1,128}$` → HTTP 400 "String should
//!   match pattern".
//! - A context size (`--context-size N`): a request whose tokens (a token per 4 bytes of the request
//!   body, the mock's own measure) exceed `N` is refused as `--context-error` says: `llama-cpp`
//!   (HTTP 400 `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`, llama-server's shape),
//!   `openai` (HTTP 400 `context_length_exceeded`), on the Messages route Anthropic's "prompt is too
//!   long" 400 either way, or `stop-reason` (Messages: an answer with `stop_reason:
//!   model_context_window_exceeded`; chat: as `openai`). `GET /props` then answers llama-server's
//!   `default_generation_settings.n_ctx`.
//!
//! The limits themselves are the runner's declarations ([`crate::agent::backends::limits`]).

use super::{MockState, Wire};
use crate::agent::backends::limits::{ANTHROPIC, OPENAI};
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// How a request over the context size is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextError {
    /// llama-server's `exceed_context_size_error` (Messages: Anthropic's "prompt is too long").
    #[default]
    LlamaCpp,
    /// OpenAI's `context_length_exceeded` (Messages: Anthropic's "prompt is too long").
    OpenAi,
    /// Messages: a 200 answer with `stop_reason: model_context_window_exceeded` (chat: as `OpenAi`).
    StopReason,
}

impl ContextError {
    pub const NAMES: [&str; 3] = ["llama-cpp", "openai", "stop-reason"];

    pub fn parse(s: &str) -> Option<ContextError> {
        Some(match s {
            "llama-cpp" => ContextError::LlamaCpp,
            "openai" => ContextError::OpenAi,
            "stop-reason" => ContextError::StopReason,
            _ => return None,
        })
    }
}

fn bad_request(body: Value) -> Response {
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// The refusal of `body` (in chat shape; `wire` is the route it came in on) for a limit, if it
/// exceeds one.
pub(super) fn refusal(s: &MockState, body: &Value, wire: Wire) -> Option<Response> {
    let names: Vec<&str> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap_or_default())
        .collect();
    match wire {
        _ if !s.config.tool_limits => {}
        Wire::Chat => {
            if let Some(max) = OPENAI.max_tools
                && names.len() > max
            {
                return Some(bad_request(json!({"error": {
                    "message": format!("Invalid 'tools': array too long. Expected an array with maximum length {max}, but got an array with length {} instead.", names.len()),
                    "type": "invalid_request_error", "param": "tools", "code": "array_above_max_length"}})));
            }
            if let Some(i) = names.iter().position(|n| OPENAI.names.check(n).is_some()) {
                return Some(bad_request(json!({"error": {
                    "message": format!("Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
                    "type": "invalid_request_error", "param": format!("tools[{i}].function.name"), "code": "invalid_value"}})));
            }
        }
        Wire::Messages => {
            if let Some(i) = names.iter().position(|n| ANTHROPIC.names.check(n).is_some()) {
                return Some(anthropic_error(&format!(
                    "tools.{i}.custom.name: String should match pattern '{}'",
                    ANTHROPIC.names.pattern
                )));
            }
        }
    }
    let n_ctx = s.config.context_size?;
    // The mock's own measure (one token per 4 bytes, as its usage counts): a test double's server,
    // like a real one, counts with its own tokenizer, not toolpick's estimate.
    let tokens = body.to_string().len() / 4;
    if tokens <= n_ctx {
        return None;
    }
    Some(match (wire, s.config.context_error) {
        (Wire::Chat, ContextError::LlamaCpp) => bad_request(json!({"error": {
            "code": 400, "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": n_ctx}})),
        (Wire::Chat, _) => bad_request(json!({"error": {
            "message": format!("This model's maximum context length is {n_ctx} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})),
        (Wire::Messages, ContextError::StopReason) => Json(json!({
            "id": "msg_mock_context", "type": "message", "role": "assistant",
            "model": body["model"].as_str().unwrap_or("mock"), "content": [],
            "stop_reason": "model_context_window_exceeded", "stop_sequence": null,
            "usage": {"input_tokens": n_ctx, "output_tokens": 0}}))
        .into_response(),
        (Wire::Messages, _) => {
            anthropic_error(&format!("prompt is too long: {tokens} tokens > {n_ctx} maximum"))
        }
    })
}

fn anthropic_error(message: &str) -> Response {
    bad_request(
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
    )
}

/// `GET /props`, as llama-server answers it: the context size it was started with. Without a
/// context size the route does not exist (404), as on servers other than llama.cpp's.
pub(super) async fn props(
    axum::extract::State(s): axum::extract::State<std::sync::Arc<MockState>>,
) -> Response {
    match s.config.context_size {
        Some(n) => Json(json!({"default_generation_settings": {"n_ctx": n}, "total_slots": 1}))
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
