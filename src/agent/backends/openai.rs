//! The `openai` backend: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp's
//! server, Ollama, …) over real HTTP.
//!
//! Requests are built as async-openai's `CreateChatCompletionRequest` and responses read as its
//! `CreateChatCompletionResponse`, so the wire format is the library's, not ours. The transport is a
//! plain `reqwest` client because the runner — not the client library — owns retries: every attempt is
//! bounded, counted, timed on its own, and honours `Retry-After` / `x-ratelimit-reset-*` up to a cap.
//! Rate limits (requests/min, tokens/min) are enforced before each attempt; the on-disk [`Cache`] is
//! consulted before any of that. [`OpenAiBackend::preflight`] checks the endpoint with one cheap request
//! (same retries) before a run starts. An answer in which the server could not parse the model's call
//! ([`serving_errors`]) is the model's, not a failure: it is never retried and becomes the turn's
//! `unparsed`. [`wire`] holds the conversation as the next request carries it.

use crate::agent::backends::serving_errors;
use crate::agent::cache::{self, Cache};
use crate::agent::spec::ModelSpec;
use crate::agent::textcalls::{cut_call, parse_text_calls};
use crate::agent::{Backend, BoxFuture, TurnContext};
use crate::protocol::{AssistantTurn, Finish, Message, ToolCall, TurnTiming, Usage};
use crate::redact::{self, Redactor};
use anyhow::{Result, anyhow};
use async_openai::types::chat::{CreateChatCompletionRequest, CreateChatCompletionResponse};
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;
use wire::{complete_json, openai_finish_reasons, wire_messages};

mod wire;

/// Counters of one endpoint, reported in `run.json`.
#[derive(Debug, Default)]
pub struct EndpointStats {
    pub requests: AtomicU64,
    pub retries: AtomicU64,
    pub cache_hits: AtomicU64,
    pub failures: AtomicU64,
    pub rate_limited: AtomicU64,
    /// Answers in which the server could not parse the model's call ([`serving_errors`]): the model's
    /// malformed calls, not failures.
    pub unparsed: AtomicU64,
}

#[derive(Debug, Serialize)]
pub struct EndpointStatsSnapshot {
    pub requests: u64,
    pub retries: u64,
    pub cache_hits: u64,
    pub failures: u64,
    pub rate_limited: u64,
    pub unparsed_calls: u64,
}

impl EndpointStats {
    pub fn snapshot(&self) -> EndpointStatsSnapshot {
        EndpointStatsSnapshot {
            requests: self.requests.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            rate_limited: self.rate_limited.load(Ordering::Relaxed),
            unparsed_calls: self.unparsed.load(Ordering::Relaxed),
        }
    }
}

/// Requests/min and tokens/min as a virtual schedule: each request reserves its slot, so concurrent
/// callers are spaced out fairly without a background task.
struct RateLimiter {
    rpm: Option<f64>,
    tpm: Option<f64>,
    next_free: Mutex<Instant>,
}

impl RateLimiter {
    async fn acquire(&self, tokens: u64) -> Duration {
        let cost = self
            .rpm
            .map(|r| 60.0 / r)
            .unwrap_or(0.0)
            .max(self.tpm.map(|t| 60.0 * tokens as f64 / t).unwrap_or(0.0));
        if cost <= 0.0 {
            return Duration::ZERO;
        }
        let wait = {
            let mut next = self.next_free.lock().await;
            let now = Instant::now();
            let start = (*next).max(now);
            *next = start + Duration::from_secs_f64(cost);
            start - now
        };
        tokio::time::sleep(wait).await;
        wait
    }
}

pub struct OpenAiBackend {
    spec: ModelSpec,
    url: String,
    endpoint: String,
    api_key: Option<String>,
    client: reqwest::Client,
    limiter: RateLimiter,
    cache: Option<Arc<Cache>>,
    pub stats: Arc<EndpointStats>,
    /// The request shape is checked against the library's schema once per backend, not per request.
    schema_checked: std::sync::atomic::AtomicBool,
    /// Removes the key from everything the endpoint says before it is parsed, cached or kept.
    redactor: Redactor,
}

/// Failure kind of a preflight `GET /models` the server does not implement (try a chat completion).
const NOT_IMPLEMENTED: &str = "not_implemented";

/// Failure kind of an answer in which the server could not parse the model's call ([`serving_errors`]):
/// never retried, and turned into the turn's answer, not an error.
const UNPARSED: &str = "unparsed";

/// The cache entry of such an answer: the model's answer to that request, cached like any other (a
/// rerun served from the cache scores it the same way). No chat completion has this key.
const UNPARSED_ENTRY: &str = "toolpick_unparsed_call";

/// A transport error in a few words: `no answer within 60 s`, `cannot connect: Connection refused (os
/// error 111)`, `cannot connect: dns error: …`. reqwest's own message only says "error sending request
/// for url (…)"; the cause is at the end of its source chain. Neither names a header, so the key
/// cannot leak through it.
fn describe(e: &reqwest::Error, timeout_s: f64) -> String {
    if e.is_timeout() {
        return format!("no answer within {timeout_s} s (request timeout)");
    }
    let what = if e.is_connect() {
        "cannot connect"
    } else if e.is_body() || e.is_decode() {
        "reading the response failed"
    } else {
        "request failed"
    };
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !text.is_empty() && !causes.iter().any(|c: &String| c.contains(&text)) {
            causes.push(text);
        }
        source = s.source();
    }
    match causes.last() {
        Some(root) => format!("{what}: {root}"),
        None => format!("{what}: {e}"),
    }
}

/// Why a request failed, and whether trying again may help.
#[derive(Debug)]
struct Failure {
    kind: &'static str,
    message: String,
    retryable: bool,
    retry_after: Option<Duration>,
}

fn header_secs(headers: &reqwest::header::HeaderMap, name: &str) -> Option<f64> {
    let v = headers.get(name)?.to_str().ok()?.trim();
    if let Ok(s) = v.parse::<f64>() {
        return Some(s);
    }
    // x-ratelimit-reset-* use durations such as "1s", "6m0s", "250ms".
    let mut total = 0.0;
    let mut num = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let n: f64 = num.parse().ok()?;
        num.clear();
        total += match c {
            'h' => n * 3600.0,
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                n / 1000.0
            }
            'm' => n * 60.0,
            's' => n,
            _ => return None,
        };
    }
    num.is_empty().then_some(total)
}

impl OpenAiBackend {
    pub fn new(spec: ModelSpec, cache: Option<Arc<Cache>>) -> Result<Self> {
        // `base_url` was checked where it was read (flag or config key); the environment variable is
        // checked here, with the same rule.
        let base = match (
            spec.base_url.clone(),
            std::env::var("OPENAI_BASE_URL").ok().filter(|v| !v.trim().is_empty()),
        ) {
            (Some(b), _) => b,
            (None, Some(env)) => crate::rules::base_url::check(env).map_err(|m| {
                crate::error::InputError::new(
                    "OPENAI_BASE_URL",
                    format!("environment variable: {m}"),
                )
            })?,
            (None, None) => "https://api.openai.com/v1".into(),
        };
        let endpoint = base.trim_end_matches('/').to_string();
        let api_key = std::env::var(&spec.api_key_env).ok().filter(|k| !k.is_empty());
        let redactor = Redactor::new(redact::keys_from_env([spec.api_key_env.as_str()]));
        // Registered process-wide too, so the CLI's messages and the trial writer remove this key.
        redact::install(&redactor);
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs_f64(spec.request_timeout_s))
            .pool_max_idle_per_host(spec.concurrency.max(1))
            .build()?;
        Ok(OpenAiBackend {
            url: format!("{endpoint}/chat/completions"),
            endpoint,
            api_key,
            client,
            limiter: RateLimiter {
                rpm: spec.requests_per_minute,
                tpm: spec.tokens_per_minute,
                next_free: Mutex::new(Instant::now()),
            },
            cache,
            stats: Arc::new(EndpointStats::default()),
            schema_checked: std::sync::atomic::AtomicBool::new(false),
            redactor,
            spec,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn body(&self, ctx: &TurnContext<'_>) -> Result<Value> {
        let s = &self.spec;
        let mut body = json!({"model": s.model.clone().unwrap_or_default(), "messages": wire_messages(ctx.messages)});
        if !ctx.functions.is_empty() {
            body["tools"] = ctx.functions.iter().map(|f| f.to_wire()).collect();
            if let Some(tc) = &s.tool_choice {
                body["tool_choice"] = json!(tc);
            }
            if let Some(p) = s.parallel_tool_calls {
                body["parallel_tool_calls"] = json!(p);
            }
        }
        if let Some(t) = s.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(t) = s.top_p {
            body["top_p"] = json!(t);
        }
        if let Some(seed) = s.seed {
            body["seed"] = json!(seed);
        }
        if let Some(m) = s.max_tokens {
            body["max_tokens"] = json!(m);
        }
        // The request must be a valid chat-completions request as the client library defines it. Every
        // request is built by this one function, so checking the first (with tools and a tool result
        // once one exists) is enough and keeps a 100 KB deserialisation off the hot path.
        if !self.schema_checked.load(Ordering::Relaxed) {
            serde_json::from_value::<CreateChatCompletionRequest>(body.clone()).map_err(|e| {
                anyhow!("internal: request does not match the chat-completions schema: {e}")
            })?;
            if ctx.messages.iter().any(|m| matches!(m, Message::Tool { .. })) {
                self.schema_checked.store(true, Ordering::Relaxed);
            }
        }
        Ok(body)
    }

    async fn attempt(&self, body: &[u8]) -> Result<Value, Failure> {
        let mut req = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let (status, headers, text) = self.send(req).await?;
        if !status.is_success() {
            // The model's output, rejected by the server's own parser: an answer, not a failure.
            if let Some(entry) = serving_errors::classify_http(status.as_u16(), &text) {
                let message = serving_errors::describe_http(entry, status.as_u16(), &text);
                return Err(Failure {
                    kind: UNPARSED,
                    message,
                    retryable: false,
                    retry_after: None,
                });
            }
            return Err(self.http_failure(status, &headers, &text));
        }
        let mut value: Value = serde_json::from_str(&text).map_err(|e| Failure {
            kind: "invalid_body",
            message: format!("response is not JSON (truncated?): {e}"),
            retryable: true,
            retry_after: None,
        })?;
        // The text was redacted as written; a key written with JSON escapes (`\u002d`) is only
        // visible once parsed.
        self.redactor.redact_json(&mut value);
        if let Err(e) = serde_json::from_value::<CreateChatCompletionResponse>(
            openai_finish_reasons(value.clone()),
        ) {
            return Err(Failure {
                kind: "invalid_body",
                message: format!("not a chat completion: {e}"),
                retryable: true,
                retry_after: None,
            });
        }
        if value["choices"].as_array().is_none_or(|c| c.is_empty()) {
            return Err(Failure {
                kind: "empty_choices",
                message: "the response has no choices".into(),
                retryable: true,
                retry_after: None,
            });
        }
        Ok(value)
    }

    /// Send a request and read its whole body; transport failures are retryable.
    async fn send(
        &self,
        req: reqwest::RequestBuilder,
    ) -> Result<(reqwest::StatusCode, reqwest::header::HeaderMap, String), Failure> {
        let transport = |e: reqwest::Error, kind: &'static str| Failure {
            kind: if e.is_timeout() { "timeout" } else { kind },
            message: describe(&e, self.spec.request_timeout_s),
            retryable: true,
            retry_after: None,
        };
        let resp = req.send().await.map_err(|e| transport(e, "connection"))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.map_err(|e| transport(e, "body"))?;
        // The endpoint's words are untrusted and may echo the key: removed before anything reads them.
        let text = match self.redactor.redact(&text) {
            std::borrow::Cow::Owned(clean) => clean,
            std::borrow::Cow::Borrowed(_) => text,
        };
        Ok((status, headers, text))
    }

    /// An HTTP error status as a failure: 429, 408 and 5xx are retryable (after `Retry-After` or the
    /// rate-limit reset headers, capped), other statuses are not.
    fn http_failure(
        &self,
        status: reqwest::StatusCode,
        headers: &reqwest::header::HeaderMap,
        text: &str,
    ) -> Failure {
        let retry_after = header_secs(headers, "retry-after")
            .or_else(|| header_secs(headers, "x-ratelimit-reset-requests"))
            .or_else(|| header_secs(headers, "x-ratelimit-reset-tokens"))
            .map(|s| Duration::from_secs_f64(s.clamp(0.0, self.spec.max_retry_after_s)));
        let code = status.as_u16();
        if code == 429 {
            self.stats.rate_limited.fetch_add(1, Ordering::Relaxed);
        }
        let snippet: String = text.chars().take(300).collect();
        Failure {
            kind: if code == 429 {
                "rate_limited"
            } else if status.is_server_error() {
                "server_error"
            } else {
                "client_error"
            },
            message: format!("HTTP {code}: {snippet}"),
            retryable: code == 429 || code == 408 || status.is_server_error(),
            retry_after,
        }
    }

    /// Run `attempt` until it succeeds, fails for good, or `max_attempts` are used: back-off with full
    /// jitter (salted by `salt`) or the server's `Retry-After`, rate limits before every attempt. Each
    /// attempt's latency goes to `timing`; `counted` attempts go to the endpoint's stats.
    async fn retrying<T, F, Fut>(
        &self,
        salt: u64,
        estimate: u64,
        counted: bool,
        timing: &mut TurnTiming,
        mut attempt: F,
    ) -> Result<T, (Failure, u32)>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, Failure>>,
    {
        let mut n = 0;
        loop {
            n += 1;
            timing.waited_ms += self.limiter.acquire(estimate).await.as_secs_f64() * 1000.0;
            if counted {
                self.stats.requests.fetch_add(1, Ordering::Relaxed);
            }
            let started = Instant::now();
            let result = attempt().await;
            timing.attempt_ms.push(started.elapsed().as_secs_f64() * 1000.0);
            match result {
                Ok(v) => return Ok(v),
                Err(f) if f.retryable && n < self.spec.max_attempts => {
                    if counted {
                        self.stats.retries.fetch_add(1, Ordering::Relaxed);
                    }
                    let wait = f.retry_after.unwrap_or_else(|| self.backoff(n, salt));
                    timing.waited_ms += wait.as_secs_f64() * 1000.0;
                    tokio::time::sleep(wait).await;
                }
                Err(f) => {
                    if counted {
                        let counter = if f.kind == UNPARSED {
                            &self.stats.unparsed
                        } else {
                            &self.stats.failures
                        };
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                    return Err((f, n));
                }
            }
        }
    }

    /// Full-jitter exponential back-off: uniform in [0, base·2^(attempt−1)], capped at 30 s.
    fn backoff(&self, attempt: u32, salt: u64) -> Duration {
        let ceiling = (self.spec.backoff_base_s * 2f64.powi(attempt as i32 - 1)).min(30.0);
        let mut x =
            salt ^ 0x9E37_79B9_7F4A_7C15 ^ (attempt as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
        Duration::from_secs_f64(ceiling * unit)
    }

    async fn request(&self, ctx: &TurnContext<'_>) -> Result<AssistantTurn> {
        let body = serde_json::to_vec(&self.body(ctx)?)?;
        let key = cache::key(&self.endpoint, &body, ctx.trial);
        if let Some(hit) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            self.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
            let mut turn = match hit[UNPARSED_ENTRY].as_str() {
                Some(message) => {
                    AssistantTurn { unparsed: Some(message.to_string()), ..Default::default() }
                }
                None => self.turn(&hit, ctx.turn() + 1),
            };
            turn.timing = Some(TurnTiming { cached: true, ..Default::default() });
            return Ok(turn);
        }
        let estimate = (body.len() / 4) as u64 + self.spec.max_tokens.unwrap_or(256) as u64;
        let mut timing = TurnTiming::default();
        match self.retrying(ctx.seed, estimate, true, &mut timing, || self.attempt(&body)).await {
            Ok(value) => {
                if let Some(c) = &self.cache {
                    c.put(&key, &value)?;
                }
                let mut turn = self.turn(&value, ctx.turn() + 1);
                turn.timing = Some(timing);
                Ok(turn)
            }
            Err((f, _)) if f.kind == UNPARSED => {
                let message = self.redactor.redact(&f.message).into_owned();
                if let Some(c) = &self.cache {
                    c.put(&key, &json!({ UNPARSED_ENTRY: message }))?;
                }
                Ok(AssistantTurn {
                    unparsed: Some(message),
                    timing: Some(timing),
                    ..Default::default()
                })
            }
            Err((f, attempts)) => Err(anyhow!(
                "{} after {attempts} attempt(s): {}",
                f.kind,
                self.redactor.redact(&f.message)
            )),
        }
    }

    /// One cheap request before a run: `GET {base}/models`, or — when the server does not implement it
    /// (404, 405, 501) — a one-token chat completion, with the normal retries and timeouts. Never
    /// cached and not counted in the endpoint's stats. `Ok`: what answered; `Err`: one line saying what
    /// was tried, what came back and what to check, with the API key removed.
    pub async fn preflight(&self) -> Result<String, String> {
        let mut timing = TurnTiming::default();
        let models = format!("{}/models", self.endpoint);
        let tried = match self.retrying(0, 1, false, &mut timing, || self.get_json(&models)).await {
            Ok(_) => return Ok(format!("GET {models}")),
            Err((f, _)) if f.kind == NOT_IMPLEMENTED => {
                format!("GET {models} → {}, then ", f.message)
            }
            Err((f, n)) => return Err(self.preflight_failure(&format!("GET {models}"), f, n)),
        };
        let ping = json!({"model": self.spec.model.clone().unwrap_or_default(), "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1});
        let body = serde_json::to_vec(&ping).map_err(|e| e.to_string())?;
        let tried = format!("{tried}POST {} (one token)", self.url);
        match self.retrying(0, 16, false, &mut timing, || self.attempt(&body)).await {
            Ok(_) => Ok(tried),
            Err((f, n)) => Err(self.preflight_failure(&tried, f, n)),
        }
    }

    /// `GET url` as JSON (an object); 404, 405 and 501 are [`NOT_IMPLEMENTED`].
    async fn get_json(&self, url: &str) -> Result<Value, Failure> {
        let mut req = self.client.get(url);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let (status, headers, text) = self.send(req).await?;
        let code = status.as_u16();
        if matches!(code, 404 | 405 | 501) {
            return Err(Failure {
                kind: NOT_IMPLEMENTED,
                message: format!("HTTP {code}"),
                retryable: false,
                retry_after: None,
            });
        }
        if !status.is_success() {
            return Err(self.http_failure(status, &headers, &text));
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(Failure {
                kind: "invalid_body",
                message: format!("HTTP {code} but not a JSON object: {text}"),
                retryable: true,
                retry_after: None,
            }),
        }
    }

    /// The preflight's error line: short, on one line, the key removed, with what to check.
    fn preflight_failure(&self, tried: &str, f: Failure, attempts: u32) -> String {
        let hint = match f.kind {
            "connection" | "timeout" => {
                "is a server listening there? check --base-url / `base_url`".to_string()
            }
            "invalid_body" => "is this the API's base URL (usually ending in /v1)?".to_string(),
            _ if f.message.starts_with("HTTP 401") || f.message.starts_with("HTTP 403") => {
                match &self.api_key {
                    Some(_) => format!(
                        "check the API key in ${} (--api-key-env / `api_key_env`)",
                        self.spec.api_key_env
                    ),
                    None => format!(
                        "no API key was sent: ${} is not set (--api-key-env / `api_key_env`)",
                        self.spec.api_key_env
                    ),
                }
            }
            _ => "check the endpoint settings".to_string(),
        };
        let message: String = f.message.split_whitespace().collect::<Vec<_>>().join(" ");
        let message = if message.chars().count() > 200 {
            format!("{}…", message.chars().take(200).collect::<String>())
        } else {
            message
        };
        let line = format!("{tried} → {message} ({attempts} attempt(s)); {hint}");
        self.redactor.redact(&line).into_owned()
    }

    /// Turn a (validated) response into an assistant turn.
    fn turn(&self, value: &Value, turn_no: usize) -> AssistantTurn {
        let message = &value["choices"][0]["message"];
        let content = message["content"].as_str().map(String::from);
        let mut tool_calls: Vec<ToolCall> = message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: c["id"]
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .unwrap_or_else(|| format!("call_{turn_no}_{i}")),
                name: c["function"]["name"].as_str().unwrap_or_default().to_string(),
                arguments: match &c["function"]["arguments"] {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                },
            })
            .collect();
        let reason = value["choices"][0]["finish_reason"].as_str();
        let u = &value["usage"];
        let usage = Usage {
            prompt_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
            completion_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            cached_tokens: u["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0),
        };
        // The provider says the model's call could not be parsed (Gemini's `MALFORMED_FUNCTION_CALL`):
        // whatever else the message holds is not the call the model meant.
        if let Some((entry, reason)) =
            reason.and_then(|r| Some((serving_errors::classify_finish(r)?, r)))
        {
            return AssistantTurn {
                unparsed: Some(serving_errors::describe_finish(entry, reason)),
                usage,
                ..Default::default()
            };
        }
        let finish = reason.map(Finish::from_wire).unwrap_or_default();
        let mut truncated_call_ids = Vec::new();
        // Cut off by the token limit: the last call is the one being written when the limit hit; it is
        // cut when its arguments are not a whole JSON value (or it has no name yet).
        if finish == Finish::Length
            && let Some(last) = tool_calls.last()
            && (last.name.is_empty() || !complete_json(&last.arguments))
        {
            truncated_call_ids.push(last.id.clone());
        }
        let mut text_call_ids = Vec::new();
        if tool_calls.is_empty()
            && self.spec.parse_text_calls
            && let Some(text) = &content
        {
            let cut = if finish == Finish::Length { cut_call(text) } else { None };
            let was_cut = cut.is_some();
            for (i, c) in parse_text_calls(text).into_iter().chain(cut).enumerate() {
                let id = format!("text_call_{turn_no}_{i}");
                text_call_ids.push(id.clone());
                tool_calls.push(ToolCall { id, name: c.name, arguments: c.arguments });
            }
            // The cut call comes last, after every complete one.
            if was_cut && let Some(last) = tool_calls.last() {
                truncated_call_ids.push(last.id.clone());
            }
        }
        AssistantTurn {
            content,
            tool_calls,
            usage,
            text_call_ids,
            timing: None,
            finish,
            truncated_call_ids,
            unparsed: None,
        }
    }
}

impl Backend for OpenAiBackend {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn concurrency(&self) -> usize {
        self.spec.concurrency
    }

    fn respond<'a>(&'a self, ctx: &'a TurnContext<'a>) -> BoxFuture<'a, Result<AssistantTurn>> {
        Box::pin(self.request(ctx))
    }

    fn stats(&self) -> Option<Value> {
        serde_json::to_value(self.stats.snapshot()).ok().map(|mut v| {
            v["endpoint"] = json!(crate::redact::url::display(&self.endpoint));
            v
        })
    }

    fn price(&self) -> Option<crate::agent::spec::Price> {
        self.spec.price
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_and_reset_headers_parse() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        h.insert("x-ratelimit-reset-requests", "1m30s".parse().unwrap());
        h.insert("x-ratelimit-reset-tokens", "250ms".parse().unwrap());
        assert_eq!(header_secs(&h, "retry-after"), Some(2.0));
        assert_eq!(header_secs(&h, "x-ratelimit-reset-requests"), Some(90.0));
        assert_eq!(header_secs(&h, "x-ratelimit-reset-tokens"), Some(0.25));
        assert_eq!(header_secs(&h, "missing"), None);
    }

    #[test]
    fn backoff_is_bounded_and_jittered() {
        let spec = ModelSpec { backoff_base_s: 0.5, ..ModelSpec::baseline("openai") };
        let b = OpenAiBackend::new(spec, None).unwrap();
        for attempt in 1..12 {
            let ceiling = (0.5 * 2f64.powi(attempt as i32 - 1)).min(30.0);
            let d = b.backoff(attempt, 42).as_secs_f64();
            assert!((0.0..=ceiling).contains(&d), "attempt {attempt}: {d}");
        }
        assert_ne!(b.backoff(3, 1), b.backoff(3, 2), "different episodes back off differently");
    }
}
