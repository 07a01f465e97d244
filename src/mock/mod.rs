//! `toolpick mock-endpoint`: a local OpenAI-compatible chat-completions server for tests and offline
//! CI dry runs. **It is a test double, not a model**: it decides with the lexical baseline over the tools
//! it is sent, so its answers are deterministic, and it injects faults on request.
//!
//! Faults are planned by request number (1-based, counted per server): `kind:every` injects `kind` into
//! every `every`-th request. Kinds: `rate_limit` (429 with `Retry-After`), `server_error` (500),
//! `unavailable` (503), `slow` (adds `slow_ms`), `timeout` (never answers in time), `malformed_args`
//! (argument JSON cut short), `invented_tool` (calls a name it was not offered), `text_calls` (the call
//! written in `content` as bare JSON, no `tool_calls`), `truncated` (half a body), `empty_choices`,
//! `unauthorized` (401); and, for the agent loop's bookkeeping, `cut_off` (a valid completion with
//! `finish_reason: length` whose last call's arguments — or whose text — stop half-way), `cut_off_text`
//! (the call written as text, as `text_calls`, then cut in half, `length`), `content_filter` (no
//! message, `finish_reason: content_filter`), `repeat_call` (the calls of the conversation's last
//! assistant message again, so an agent loops) and `duplicate_calls` (the first call three times in
//! one message). `length_reason` spells the cut-off reason another provider's way (`max_tokens`,
//! `MAX_TOKENS`).
//! `GET /stats` reports the request counter and the faults injected. `down_after: N` makes every chat
//! request after the N-th fail with 503 (an endpoint that goes down mid-run; `MockServer::set_down_after`
//! brings it back). `GET /v1/models` answers the model list, and 401 without the required key.
//!
//! Judge requests (no tools offered, a prompt asking for `answer_status`, `task_status` or
//! `claim_status`) are answered by a deterministic word rule instead ([`judge`]), after the same faults.
//!
//! `echo_key` (`--echo-key`) plays a careless endpoint: the key the request carried comes back in every
//! response — in `x-echo-key` and a `Basic` credential header, in 401 bodies ("Incorrect API key
//! provided: …", as OpenAI's says), in the model list and in the assistant's text — in every encoding
//! an endpoint can write ([`echo`]: as is, JSON-escaped `\/` and `\uXXXX`, hex, percent-encoded,
//! base64, `Basic`, HTML references), to test that no output stores it in any.
//!
//! Sampling noise (`--sampling-noise p`, off by default): each request is answered by the chance
//! baseline instead of the lexical one with probability `p · temperature` (temperature as sent, 1 when
//! absent, as in the OpenAI API), drawn from a generator seeded by `--seed` and the request number. It
//! stands in for a sampled model when measuring the noise floor of repeated trials; with one request in
//! flight at a time (`--concurrency 1`) the draws, and so the run, are reproducible.
//!
//! It speaks several protocols with the same answers and faults: chat completions
//! (`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`, [`messages`]: the
//! request read into the chat shape, the answer written as a `Message` — `tool_use` blocks,
//! `stop_reason`, usage with the tool definitions counted as a cache write on a conversation's first
//! request and a cache read after — and errors in the protocol's `{"type": "error"}` shape). The key is
//! read from `Authorization: Bearer`, `x-api-key` or `x-goog-api-key`. OpenAI's Responses protocol
//! (`POST /v1/responses`, [`responses`]) and Gemini's `generateContent`
//! (`POST /v1beta/models/{model}:generateContent`, [`gemini`]: a model that signs its calls) are read
//! and written the same way.
//!
//! Provider limits ([`limits`]): with `--tool-limits`, more than 128 tools or a refused tool name on
//! the chat route and a refused name on the Messages route; a request over `--context-size N` tokens are answered with
//! the provider's own error (`--context-error`: llama.cpp's, OpenAI's, Anthropic's stop reason);
//! `GET /props` then reports `n_ctx` as llama-server does.
//!
//! This file is the server (configuration, faults, routes, keys and their echo); what one chat
//! request is answered with is [`answer`].

mod answer;
pub mod echo;
mod gemini;
pub mod judge;
pub mod limits;
mod messages;
mod native;
mod responses;

use crate::agent::backends::{LexicalBackend, LexicalConfig};
use answer::answer;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    RateLimit,
    ServerError,
    Unavailable,
    Slow,
    Timeout,
    MalformedArgs,
    InventedTool,
    TextCalls,
    Truncated,
    EmptyChoices,
    Unauthorized,
    CutOff,
    CutOffText,
    ContentFilter,
    RepeatCall,
    DuplicateCalls,
}

/// How many times `duplicate_calls` puts the first call in one message.
pub const DUPLICATES: usize = 3;

impl Fault {
    pub fn parse(s: &str) -> Option<Fault> {
        Some(match s {
            "rate_limit" => Fault::RateLimit,
            "server_error" => Fault::ServerError,
            "unavailable" => Fault::Unavailable,
            "slow" => Fault::Slow,
            "timeout" => Fault::Timeout,
            "malformed_args" => Fault::MalformedArgs,
            "invented_tool" => Fault::InventedTool,
            "text_calls" => Fault::TextCalls,
            "truncated" => Fault::Truncated,
            "empty_choices" => Fault::EmptyChoices,
            "unauthorized" => Fault::Unauthorized,
            "cut_off" => Fault::CutOff,
            "cut_off_text" => Fault::CutOffText,
            "content_filter" => Fault::ContentFilter,
            "repeat_call" => Fault::RepeatCall,
            "duplicate_calls" => Fault::DuplicateCalls,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Fault::RateLimit => "rate_limit",
            Fault::ServerError => "server_error",
            Fault::Unavailable => "unavailable",
            Fault::Slow => "slow",
            Fault::Timeout => "timeout",
            Fault::MalformedArgs => "malformed_args",
            Fault::InventedTool => "invented_tool",
            Fault::TextCalls => "text_calls",
            Fault::Truncated => "truncated",
            Fault::EmptyChoices => "empty_choices",
            Fault::Unauthorized => "unauthorized",
            Fault::CutOff => "cut_off",
            Fault::CutOffText => "cut_off_text",
            Fault::ContentFilter => "content_filter",
            Fault::RepeatCall => "repeat_call",
            Fault::DuplicateCalls => "duplicate_calls",
        }
    }
}

/// How the mock behaves.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// Added to every response.
    pub latency: Duration,
    /// `(fault, every)`: inject into every `every`-th request; the first matching entry wins.
    pub faults: Vec<(Fault, u64)>,
    /// `Retry-After` seconds sent with 429s.
    pub retry_after_s: u64,
    pub slow: Duration,
    /// Only answer requests carrying `Authorization: Bearer <key>` when set.
    pub require_key: Option<String>,
    /// Probability (at temperature 1) that a request is answered by the chance baseline.
    pub sampling_noise: f64,
    /// Seed of the sampling-noise draws.
    pub seed: u64,
    /// Every chat request after this many answers 503 (`None`: never).
    pub down_after: Option<u64>,
    /// Echo the request's key in headers, 401 bodies and answers (a careless endpoint).
    pub echo_key: bool,
    /// The `finish_reason` of a `cut_off` answer: `length` (OpenAI), or another provider's spelling.
    pub length_reason: String,
    /// Refuse requests over the providers' tool limits ([`limits`]): OpenAI's tool count and names on
    /// the chat route, Anthropic's names on the Messages route. Off by default: the bundled catalog's
    /// flat layout offers more than OpenAI's 128 tools, as OpenAI-compatible servers accept.
    pub tool_limits: bool,
    /// Refuse requests of more tokens than this ([`limits`]); `None`: no context limit, no `/props`.
    pub context_size: Option<usize>,
    /// How a request over `context_size` is refused.
    pub context_error: limits::ContextError,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            latency: Duration::ZERO,
            faults: vec![],
            retry_after_s: 1,
            slow: Duration::from_millis(300),
            require_key: None,
            sampling_noise: 0.0,
            seed: 0,
            down_after: None,
            echo_key: false,
            length_reason: "length".into(),
            tool_limits: false,
            context_size: None,
            context_error: Default::default(),
        }
    }
}

/// `down_after` in an atomic: `u64::MAX` for never.
fn down_after_raw(v: Option<u64>) -> u64 {
    v.unwrap_or(u64::MAX)
}

/// Parse `kind:every` (every defaults to 1).
pub fn parse_fault(spec: &str) -> Option<(Fault, u64)> {
    let (kind, every) = spec.split_once(':').unwrap_or((spec, "1"));
    Some((Fault::parse(kind)?, every.parse().ok().filter(|n| *n >= 1)?))
}

struct MockState {
    config: MockConfig,
    lexical: LexicalBackend,
    requests: AtomicU64,
    injected: Mutex<std::collections::BTreeMap<&'static str, u64>>,
    down_after: AtomicU64,
}

/// A running mock server.
pub struct MockServer {
    pub addr: SocketAddr,
    state: Arc<MockState>,
}

impl MockServer {
    /// Base URL to configure clients with, e.g. `http://127.0.0.1:41234/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
    /// Requests received so far.
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::SeqCst)
    }
    pub fn injected(&self, fault: Fault) -> u64 {
        self.state.injected.lock().expect("lock").get(fault.name()).copied().unwrap_or(0)
    }
    /// Change when the endpoint goes down: every chat request after the `n`-th (counted from the
    /// start) fails with 503; `None` brings it back.
    pub fn set_down_after(&self, n: Option<u64>) {
        self.state.down_after.store(down_after_raw(n), Ordering::SeqCst);
    }
}

/// Bind `addr` (port 0 for any) and serve in the background on the current tokio runtime.
pub async fn spawn(addr: SocketAddr, config: MockConfig) -> std::io::Result<MockServer> {
    let state = Arc::new(MockState {
        lexical: LexicalBackend::new(LexicalConfig::default()),
        requests: AtomicU64::new(0),
        injected: Mutex::new(Default::default()),
        down_after: AtomicU64::new(down_after_raw(config.down_after)),
        config,
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/messages", post(messages::route))
        .route("/v1/responses", post(responses::route))
        .route("/v1beta/models", get(gemini::models))
        .route("/v1beta/models/{model}", get(gemini::model).post(gemini::route))
        .route("/v1/models", get(models))
        .route("/props", get(limits::props))
        .route("/stats", get(stats))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(MockServer { addr, state })
}

async fn stats(State(s): State<Arc<MockState>>) -> Json<Value> {
    let injected = s.injected.lock().expect("lock").clone();
    Json(json!({"requests": s.requests.load(Ordering::SeqCst), "injected": injected}))
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message, "type": "mock_error", "param": null, "code": null}}))).into_response()
}

/// The protocol a request came in, and its answer goes out, in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    /// OpenAI chat completions.
    Chat,
    /// Anthropic Messages.
    Messages,
    /// OpenAI Responses.
    Responses,
    /// Gemini `generateContent`.
    Gemini,
}

/// The key the request carried (`x-api-key: <key>` or `x-goog-api-key: <key>`, else `Authorization:
/// Bearer <key>`), empty when none.
fn sent_key(headers: &HeaderMap) -> String {
    for name in ["x-api-key", "x-goog-api-key"] {
        if let Some(key) = headers.get(name).and_then(|v| v.to_str().ok()) {
            return key.to_string();
        }
    }
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default();
    auth.strip_prefix("Bearer ").unwrap_or(auth).to_string()
}

/// `false` when a key is required and the request does not carry it.
fn authorized(s: &MockState, headers: &HeaderMap) -> bool {
    s.config.require_key.as_ref().is_none_or(|key| *key == sent_key(headers))
}

/// A 401, echoing the key sent when `echo_key` is on (as OpenAI's "Incorrect API key provided" does).
fn unauthorized(s: &MockState, headers: &HeaderMap) -> Response {
    if s.config.echo_key {
        error(
            StatusCode::UNAUTHORIZED,
            &format!(
                "Incorrect API key provided: {}. Check the key.",
                echo::text(&sent_key(headers))
            ),
        )
    } else {
        error(StatusCode::UNAUTHORIZED, "invalid api key")
    }
}

/// `base64("user:" + key)`, as a `Basic` credential would carry it.
fn basic(key: &str) -> String {
    crate::redact::base64(format!("user:{key}").as_bytes())
}

/// With `echo_key`, the key sent comes back in two headers of every response, and the body's
/// escaped forms of it are written ([`echo::finish_body`]).
async fn echo(s: &MockState, headers: &HeaderMap, r: Response) -> Response {
    if !s.config.echo_key {
        return r;
    }
    let key = sent_key(headers);
    let (mut parts, body) = r.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let finished = echo::finish_body(&bytes, &key);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    let mut r = Response::from_parts(parts, axum::body::Body::from(finished));
    if let (Ok(k), Ok(b)) = (key.parse(), format!("Basic {}", basic(&key)).parse()) {
        r.headers_mut().insert("x-echo-key", k);
        r.headers_mut().insert("x-echo-authorization", b);
    }
    r
}

async fn models(State(s): State<Arc<MockState>>, headers: HeaderMap) -> Response {
    let r = if !authorized(&s, &headers) {
        unauthorized(&s, &headers)
    } else {
        let mut list = json!({"object": "list", "data": [{"id": "mock", "object": "model"}]});
        if s.config.echo_key {
            list["data"][0]["owned_by"] = json!(echo::text(&sent_key(&headers)));
        }
        Json(list).into_response()
    };
    echo(&s, &headers, r).await
}

async fn chat(
    State(s): State<Arc<MockState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let r = answer(&s, &headers, body, Wire::Chat).await;
    echo(&s, &headers, r).await
}
