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
//!   model_context_window_exceeded`; chat: as `openai`); on the Gemini route Google's "The input token
//!   count (N) exceeds the maximum number of tokens allowed (M)." 400 whatever the style. The Gemini
//!   route refuses no tools (Google's words for that are not known here). `GET /props` then answers llama-server's
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
        // The Responses API refuses with the same words; its tools are flat (`tools[i].name`).
        Wire::Chat | Wire::Responses => {
            if let Some(max) = OPENAI.max_tools
                && names.len() > max
            {
                return Some(bad_request(json!({"error": {
                    "message": format!("Invalid 'tools': array too long. Expected an array with maximum length {max}, but got an array with length {} instead.", names.len()),
                    "type": "invalid_request_error", "param": "tools", "code": "array_above_max_length"}})));
            }
            if let Some(i) = names.iter().position(|n| OPENAI.names.check(n).is_some()) {
                let param = match wire {
                    Wire::Responses => format!("tools[{i}].name"),
                    _ => format!("tools[{i}].function.name"),
                };
                return Some(bad_request(json!({"error": {
                    "message": format!("Invalid '{param}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
                    "type": "invalid_request_error", "param": param, "code": "invalid_value"}})));
            }
        }
        // Gemini's words for a refused tool count or name are not known here: its declared limits
        // are checked by the run before the first request, not played by the mock.
        Wire::Gemini => {}
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
        (Wire::Chat | Wire::Responses, _) => bad_request(json!({"error": {
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
        // Google's words, whatever the style.
        (Wire::Gemini, _) => bad_request(json!({"error": {"code": 400,
            "message": format!("The input token count ({tokens}) exceeds the maximum number of tokens allowed ({n_ctx})."),
            "status": "INVALID_ARGUMENT"}})),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::backends::limits::LimitKind;
    use crate::agent::backends::limits::{anthropic_stop, classify_http, kind_of};

    fn state(tool_limits: bool, context_size: Option<usize>, style: ContextError) -> MockState {
        MockState {
            config: super::super::MockConfig {
                tool_limits,
                context_size,
                context_error: style,
                ..Default::default()
            },
            lexical: crate::agent::backends::LexicalBackend::new(Default::default()),
            requests: Default::default(),
            injected: Default::default(),
            down_after: std::sync::atomic::AtomicU64::new(u64::MAX),
        }
    }

    fn body(names: &[String]) -> Value {
        let tools: Vec<Value> = names
            .iter()
            .map(|n| json!({"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}))
            .collect();
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools})
    }

    /// The refusal's status and the limit the runner reads in it.
    async fn read(s: &MockState, body: &Value, wire: Wire) -> Option<(u16, Option<LimitKind>)> {
        let r = refusal(s, body, wire)?;
        let status = r.status().as_u16();
        let bytes = axum::body::to_bytes(r.into_body(), usize::MAX).await.unwrap();
        if status == 200 {
            // An answer: read as a limit from its stop reason, as the anthropic backend does.
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            return Some((status, anthropic_stop(&value).as_ref().and_then(kind_of)));
        }
        Some((status, classify_http(status, &String::from_utf8_lossy(&bytes))))
    }

    #[tokio::test]
    async fn each_route_refuses_what_its_provider_refuses_in_words_the_runner_reads() {
        let limited = state(true, None, ContextError::LlamaCpp);
        let tools = |n: usize| (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>();
        for n in [1, 127, 128, 129, 300] {
            let got = read(&limited, &body(&tools(n)), Wire::Chat).await;
            let want = (n > 128).then_some((400, Some(LimitKind::ToolCount)));
            assert_eq!(got, want, "{n} tools on the chat route");
            assert_eq!(
                read(&limited, &body(&tools(n)), Wire::Messages).await,
                None,
                "{n} on Messages"
            );
        }
        let long = |n: usize| "a".repeat(n);
        for (name, chat, messages) in [
            ("ok_name".to_string(), false, false),
            (long(64), false, false),
            (long(65), true, false),
            (long(128), true, false),
            (long(129), true, true),
            ("has space".to_string(), true, true),
            ("dot.name".to_string(), true, true),
        ] {
            let b = body(std::slice::from_ref(&name));
            let refused = |r: Option<(u16, Option<LimitKind>)>| {
                r.map(|(s, k)| {
                    assert_eq!((s, k), (400, Some(LimitKind::ToolName)), "{name}");
                })
                .is_some()
            };
            assert_eq!(refused(read(&limited, &b, Wire::Chat).await), chat, "chat: {name}");
            assert_eq!(
                refused(read(&limited, &b, Wire::Messages).await),
                messages,
                "Messages: {name}"
            );
        }
        // Without --tool-limits, nothing is refused for its tools.
        let open = state(false, None, ContextError::LlamaCpp);
        assert_eq!(read(&open, &body(&tools(300)), Wire::Chat).await, None);
    }

    #[tokio::test]
    async fn a_request_over_the_context_size_is_refused_in_each_style() {
        let b = body(&[]);
        let size = b.to_string().len() / 4;
        for style in [ContextError::LlamaCpp, ContextError::OpenAi, ContextError::StopReason] {
            for (n_ctx, refused) in [(size - 1, true), (size, false), (size + 1, false)] {
                let s = state(false, Some(n_ctx), style);
                let chat = read(&s, &b, Wire::Chat).await;
                assert_eq!(chat.is_some(), refused, "{style:?} chat at {n_ctx}");
                if refused {
                    assert_eq!(chat, Some((400, Some(LimitKind::Context))), "{style:?}");
                    let messages = read(&s, &b, Wire::Messages).await.unwrap();
                    let status = if style == ContextError::StopReason { 200 } else { 400 };
                    let want = (status, Some(LimitKind::Context));
                    assert_eq!(messages, want, "{style:?} Messages");
                }
            }
        }
    }
}
