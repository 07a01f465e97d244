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

pub mod echo;
pub mod judge;

use crate::agent::backends::{LexicalBackend, LexicalConfig};
use crate::agent::{Addressing, Policy, TurnContext};
use crate::dataset::{Kind, Task};
use crate::layout::LayoutKind;
use crate::layout::progressive::DISCOVER;
use crate::protocol::{FunctionDef, Message, ToolCall};
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
        .route("/v1/models", get(models))
        .route("/stats", get(stats))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(MockServer { addr, state })
}

/// The first half of `text` (on a character boundary): what a token limit leaves of it.
fn half(text: &str) -> String {
    text.chars().take(text.chars().count() / 2).collect()
}

async fn stats(State(s): State<Arc<MockState>>) -> Json<Value> {
    let injected = s.injected.lock().expect("lock").clone();
    Json(json!({"requests": s.requests.load(Ordering::SeqCst), "injected": injected}))
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message, "type": "mock_error", "param": null, "code": null}}))).into_response()
}

fn messages_from(body: &Value) -> Vec<Message> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let content = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => {
                    parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("")
                }
                _ => String::new(),
            };
            Some(match m["role"].as_str()? {
                "system" | "developer" => Message::System { content },
                "user" => Message::User { content },
                "assistant" => Message::Assistant {
                    content: (!content.is_empty()).then_some(content),
                    tool_calls: m["tool_calls"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|c| ToolCall {
                            id: c["id"].as_str().unwrap_or_default().into(),
                            name: c["function"]["name"].as_str().unwrap_or_default().into(),
                            arguments: c["function"]["arguments"]
                                .as_str()
                                .unwrap_or_default()
                                .into(),
                        })
                        .collect(),
                },
                "tool" => Message::Tool {
                    tool_call_id: m["tool_call_id"].as_str().unwrap_or_default().into(),
                    name: String::new(),
                    content,
                },
                _ => return None,
            })
        })
        .collect()
}

/// The key the request carried (`Authorization: Bearer <key>`), empty when none.
fn sent_key(headers: &HeaderMap) -> String {
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
    let r = answer(&s, &headers, body).await;
    echo(&s, &headers, r).await
}

async fn answer(s: &MockState, headers: &HeaderMap, body: Value) -> Response {
    let n = s.requests.fetch_add(1, Ordering::SeqCst) + 1;
    if !authorized(s, headers) {
        return unauthorized(s, headers);
    }
    if n > s.down_after.load(Ordering::SeqCst) {
        return error(StatusCode::SERVICE_UNAVAILABLE, "down (mock)");
    }
    let fault = s.config.faults.iter().find(|(_, every)| n.is_multiple_of(*every)).map(|(f, _)| *f);
    if let Some(f) = fault {
        *s.injected.lock().expect("lock").entry(f.name()).or_default() += 1;
    }
    tokio::time::sleep(s.config.latency).await;
    match fault {
        Some(Fault::RateLimit) => {
            let mut r = error(StatusCode::TOO_MANY_REQUESTS, "rate limited (mock)");
            r.headers_mut()
                .insert("retry-after", s.config.retry_after_s.to_string().parse().expect("header"));
            return r;
        }
        Some(Fault::ServerError) => {
            return error(StatusCode::INTERNAL_SERVER_ERROR, "internal error (mock)");
        }
        Some(Fault::Unavailable) => {
            return error(StatusCode::SERVICE_UNAVAILABLE, "overloaded (mock)");
        }
        Some(Fault::Unauthorized) => return unauthorized(s, headers),
        Some(Fault::Slow) => tokio::time::sleep(s.config.slow).await,
        Some(Fault::Timeout) => tokio::time::sleep(Duration::from_secs(3600)).await,
        _ => {}
    }

    let messages = messages_from(&body);
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let last_user = messages.iter().rev().find_map(|m| {
        if let Message::User { content } = m { Some(content.as_str()) } else { None }
    });
    if !offers_tools && let Some(verdict) = last_user.and_then(judge::reply) {
        return completion(
            &body,
            n,
            json!({"role": "assistant", "content": verdict}),
            "stop",
            fault,
        );
    }
    let functions: Vec<FunctionDef> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| serde_json::from_value(t["function"].clone()).ok())
        .collect();
    // The query is the last user message: a task's history may hold earlier user turns before it.
    let query = last_user.unwrap_or_default().to_string();
    let layout = if functions.iter().any(|f| f.name == DISCOVER) {
        LayoutKind::Progressive
    } else {
        LayoutKind::Flat
    };
    let task = Task {
        id: "mock".into(),
        query,
        history: vec![],
        kind: Kind::Single,
        expected: vec![],
        category: String::new(),
        tags: vec![],
        risk: None,
        forbidden: vec![],
        poison: None,
        candidates: vec![],
        live: None,
        must_not_call: vec![],
        claims: vec![],
        reference_answer: None,
        line: 0,
    };
    let addressing = Addressing::new();
    let ctx = TurnContext {
        task: &task,
        messages: &messages,
        functions: &functions,
        layout,
        addressing: &addressing,
        seed: 0,
        trial: 0,
    };
    let temperature = body["temperature"].as_f64().unwrap_or(1.0).max(0.0);
    let turn = if s.config.sampling_noise > 0.0 && temperature > 0.0 {
        use rand_chacha::rand_core::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            s.config.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let draw = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if draw < (s.config.sampling_noise * temperature).min(1.0) {
            let ctx = TurnContext { seed: rng.next_u64(), ..ctx };
            crate::agent::backends::RandomBackend.decide(&ctx).unwrap_or_default()
        } else {
            s.lexical.decide(&ctx).unwrap_or_default()
        }
    } else {
        s.lexical.decide(&ctx).unwrap_or_default()
    };

    let mut calls: Vec<Value> = turn
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
        .collect();
    let mut content = turn.content.clone();
    let mut finish = None;
    match fault {
        Some(Fault::MalformedArgs) => {
            for c in &mut calls {
                let a = c["function"]["arguments"].as_str().unwrap_or("{}").to_string();
                c["function"]["arguments"] = json!(a[..a.len() / 2].to_string());
            }
        }
        Some(Fault::InventedTool) if !calls.is_empty() => {
            calls[0]["function"]["name"] = json!("do_what_i_mean")
        }
        Some(Fault::TextCalls) if !calls.is_empty() => {
            let c = &turn.tool_calls[0];
            let args: Value = serde_json::from_str(&c.arguments).unwrap_or(json!({}));
            content = Some(json!({"name": c.name, "arguments": args}).to_string());
            calls.clear();
        }
        Some(Fault::CutOff) => {
            finish = Some(s.config.length_reason.clone());
            match calls.last_mut() {
                Some(c) => {
                    let a = c["function"]["arguments"].as_str().unwrap_or("{}").to_string();
                    c["function"]["arguments"] = json!(half(&a));
                }
                None => content = content.as_deref().map(half),
            }
        }
        Some(Fault::CutOffText) => {
            finish = Some(s.config.length_reason.clone());
            if let Some(c) = turn.tool_calls.first() {
                let args: Value = serde_json::from_str(&c.arguments).unwrap_or(json!({}));
                content = Some(json!({"name": c.name, "arguments": args}).to_string());
                calls.clear();
            }
            content = content.as_deref().map(half);
        }
        Some(Fault::ContentFilter) => {
            finish = Some("content_filter".into());
            content = None;
            calls.clear();
        }
        Some(Fault::RepeatCall) => {
            let previous = messages.iter().rev().find_map(|m| match m {
                Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                    Some(tool_calls.clone())
                }
                _ => None,
            });
            if let Some(previous) = previous {
                calls = previous
                    .iter()
                    .enumerate()
                    .map(|(i, c)| json!({"id": format!("call_{n}_{i}"), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
                content = None;
            }
        }
        Some(Fault::DuplicateCalls) if !calls.is_empty() => {
            let first = calls[0].clone();
            calls = (0..DUPLICATES)
                .map(|i| {
                    let mut c = first.clone();
                    c["id"] = json!(format!("{}_{i}", first["id"].as_str().unwrap_or("call")));
                    c
                })
                .collect();
        }
        _ => {}
    }
    if s.config.echo_key && calls.is_empty() {
        content = Some(format!(
            "{} (answered for key {})",
            content.unwrap_or_default(),
            echo::text(&sent_key(headers))
        ));
    }
    let prompt_tokens =
        (body["messages"].to_string().len() + body["tools"].to_string().len()) as u64 / 4;
    let completion_tokens = (content.as_deref().unwrap_or("").len()
        + calls.iter().map(|c| c.to_string().len()).sum::<usize>())
        as u64
        / 4
        + 1;
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    let finish =
        finish.unwrap_or_else(|| if calls.is_empty() { "stop" } else { "tool_calls" }.to_string());
    respond(&body, n, message, &finish, fault, prompt_tokens, completion_tokens)
}

/// A completion for a judge request (tokens estimated like the agent's).
fn completion(
    body: &Value,
    n: u64,
    message: Value,
    finish: &str,
    fault: Option<Fault>,
) -> Response {
    let prompt_tokens = body["messages"].to_string().len() as u64 / 4;
    let completion_tokens = message["content"].as_str().unwrap_or_default().len() as u64 / 4 + 1;
    respond(body, n, message, finish, fault, prompt_tokens, completion_tokens)
}

/// The response body around one message, with the response-level faults applied.
fn respond(
    body: &Value,
    n: u64,
    message: Value,
    finish: &str,
    fault: Option<Fault>,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Response {
    let choices = if fault == Some(Fault::EmptyChoices) {
        json!([])
    } else {
        json!([{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}])
    };
    let response = json!({
        "id": format!("chatcmpl-mock-{n}"), "object": "chat.completion", "created": 0,
        "model": body["model"].as_str().unwrap_or("mock"),
        "choices": choices,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    });
    if fault == Some(Fault::Truncated) {
        let text = response.to_string();
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            text[..text.len() / 2].to_string(),
        )
            .into_response();
    }
    Json(response).into_response()
}
