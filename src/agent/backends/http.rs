//! The protocol-neutral part of the runner's HTTP stack, shared by every backend that talks to a
//! model endpoint (`openai`, `anthropic`, `openai-responses`, `gemini`): one client per endpoint with its key, the response read
//! and redacted before anything looks at it, HTTP errors classified as retryable or not,
//! `Retry-After` and `x-ratelimit-reset-*` read, full-jitter back-off, the requests/min and
//! tokens/min limiter, and the endpoint's counters.
//!
//! Its own file because the runner, not a client library, owns retries, and that policy is the same
//! whatever the request holds: each protocol's backend builds its body, checks the answer against its
//! own schema ([`HttpEndpoint::retrying`] takes that attempt as a closure) and turns it into a turn.
//! How the key is sent is the one thing the protocols differ in here ([`Auth`]). The steps around
//! each protocol's request and answer — cache, retried attempt, preflight, the turn built from what
//! was read — are [`answer`].

mod answer;

pub(crate) use answer::ReadAnswer;

use crate::agent::spec::ModelSpec;
use crate::protocol::TurnTiming;
use crate::redact::{self, Redactor};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Failure kind of a preflight `GET` the server does not implement (try a one-token request).
pub(crate) const NOT_IMPLEMENTED: &str = "not_implemented";

/// Failure kind of an answer in which the server could not parse the model's call
/// ([`super::serving_errors`]): never retried, and turned into the turn's answer, not an error.
pub(crate) const UNPARSED: &str = "unparsed";

/// Counters of one endpoint, reported in `run.json`.
#[derive(Debug, Default)]
pub struct EndpointStats {
    pub requests: AtomicU64,
    pub retries: AtomicU64,
    pub cache_hits: AtomicU64,
    pub failures: AtomicU64,
    pub rate_limited: AtomicU64,
    /// Answers in which the server could not parse the model's call ([`super::serving_errors`]): the
    /// model's malformed calls, not failures.
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

/// How a protocol sends the API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Auth {
    /// `Authorization: Bearer <key>` (OpenAI and the servers that copy it).
    Bearer,
    /// `x-api-key: <key>` plus `anthropic-version` (Anthropic Messages).
    Anthropic,
    /// `x-goog-api-key: <key>` (Gemini `generateContent`; never in the URL's `?key=`, which would
    /// reach logs and error messages with the URL).
    Google,
}

/// The `anthropic-version` header every Messages request carries.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The base URL of `spec`'s endpoint: its own (`--base-url` / `base_url`, checked where it was read),
/// else the environment variable `env_var` (checked here, by the same rule), else `default`.
pub(crate) fn base_url(spec: &ModelSpec, env_var: &str, default: &str) -> anyhow::Result<String> {
    let from_env = std::env::var(env_var).ok().filter(|v| !v.trim().is_empty());
    Ok(match (spec.base_url.clone(), from_env) {
        (Some(b), _) => b,
        (None, Some(env)) => crate::rules::base_url::check(env).map_err(|m| {
            crate::error::InputError::new(env_var, format!("environment variable: {m}"))
        })?,
        (None, None) => default.into(),
    })
}

/// One endpoint's client, key, limiter, counters and redactor.
pub(crate) struct HttpEndpoint {
    pub(crate) spec: ModelSpec,
    pub(crate) client: reqwest::Client,
    pub(crate) api_key: Option<String>,
    auth: Auth,
    limiter: RateLimiter,
    pub(crate) stats: Arc<EndpointStats>,
    /// Removes the key from everything the endpoint says before it is parsed, cached or kept.
    pub(crate) redactor: Redactor,
}

impl HttpEndpoint {
    /// The client for `spec`: its key read from `spec.api_key_env`, and registered process-wide for
    /// redaction, so the CLI's messages and the trial writer remove it too.
    pub(crate) fn new(spec: ModelSpec, auth: Auth) -> anyhow::Result<HttpEndpoint> {
        let api_key = std::env::var(&spec.api_key_env).ok().filter(|k| !k.is_empty());
        let redactor = Redactor::new(redact::keys_from_env([spec.api_key_env.as_str()]));
        redact::install(&redactor);
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs_f64(spec.request_timeout_s))
            .pool_max_idle_per_host(spec.concurrency.max(1))
            .build()?;
        Ok(HttpEndpoint {
            client,
            api_key,
            auth,
            limiter: RateLimiter {
                rpm: spec.requests_per_minute,
                tpm: spec.tokens_per_minute,
                next_free: Mutex::new(Instant::now()),
            },
            stats: Arc::new(EndpointStats::default()),
            redactor,
            spec,
        })
    }

    /// `req` with the key (when there is one) and the protocol's fixed headers.
    pub(crate) fn authorized(&self, mut req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self.auth {
            Auth::Bearer => {
                if let Some(key) = &self.api_key {
                    req = req.bearer_auth(key);
                }
            }
            Auth::Anthropic => {
                req = req.header("anthropic-version", ANTHROPIC_VERSION);
                if let Some(key) = &self.api_key {
                    req = req.header("x-api-key", key);
                }
            }
            Auth::Google => {
                if let Some(key) = &self.api_key {
                    req = req.header("x-goog-api-key", key);
                }
            }
        }
        req
    }

    /// `POST url` with a JSON body, authorized.
    pub(crate) fn post_json(&self, url: &str, body: &[u8]) -> reqwest::RequestBuilder {
        self.authorized(
            self.client
                .post(url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_vec()),
        )
    }

    /// Send a request and read its whole body; transport failures are retryable.
    pub(crate) async fn send(
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

    /// The body of a successful answer as JSON, redacted once parsed too (a key written with JSON
    /// escapes, `\u002d`, is only visible then).
    pub(crate) fn json_body(&self, text: &str) -> Result<Value, Failure> {
        let mut value: Value = serde_json::from_str(text).map_err(|e| Failure {
            kind: "invalid_body",
            message: format!("response is not JSON (truncated?): {e}"),
            retryable: true,
            retry_after: None,
        })?;
        self.redactor.redact_json(&mut value);
        Ok(value)
    }

    /// An HTTP error status as a failure: 429, 408 and 5xx are retryable (after `Retry-After` or the
    /// rate-limit reset headers, capped), other statuses are not.
    pub(crate) fn http_failure(
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

    /// `GET url` as JSON (an object); 404, 405 and 501 are [`NOT_IMPLEMENTED`].
    pub(crate) async fn get_json(&self, url: &str) -> Result<Value, Failure> {
        let (status, headers, text) = self.send(self.authorized(self.client.get(url))).await?;
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

    /// Run `attempt` until it succeeds, fails for good, or `max_attempts` are used: back-off with full
    /// jitter (salted by `salt`) or the server's `Retry-After`, rate limits before every attempt. Each
    /// attempt's latency goes to `timing`; `counted` attempts go to the endpoint's stats.
    pub(crate) async fn retrying<T, F, Fut>(
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
    pub(crate) fn backoff(&self, attempt: u32, salt: u64) -> Duration {
        let ceiling = (self.spec.backoff_base_s * 2f64.powi(attempt as i32 - 1)).min(30.0);
        let mut x =
            salt ^ 0x9E37_79B9_7F4A_7C15 ^ (attempt as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
        Duration::from_secs_f64(ceiling * unit)
    }

    /// The preflight's error line: short, on one line, the key removed, with what to check.
    pub(crate) fn preflight_failure(&self, tried: &str, f: Failure, attempts: u32) -> String {
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
}

/// `Backend` for an HTTP backend `$ty`: a struct with `http: HttpEndpoint`, `stats`, the URL field
/// `$endpoint` its stats name (redacted for display), and `async fn request(&self, ctx)` answering a
/// turn. One definition for every protocol, so the backends differ only where their protocols do.
macro_rules! http_backend {
    ($ty:ty, $endpoint:ident) => {
        impl crate::agent::Backend for $ty {
            fn name(&self) -> &str {
                &self.http.spec.name
            }

            fn concurrency(&self) -> usize {
                self.http.spec.concurrency
            }

            fn respond<'a>(
                &'a self,
                ctx: &'a crate::agent::TurnContext<'a>,
            ) -> crate::agent::BoxFuture<'a, anyhow::Result<crate::protocol::AssistantTurn>> {
                Box::pin(self.request(ctx))
            }

            fn stats(&self) -> Option<serde_json::Value> {
                serde_json::to_value(self.stats.snapshot()).ok().map(|mut v| {
                    v["endpoint"] = serde_json::json!(crate::redact::url::display(&self.$endpoint));
                    v
                })
            }

            fn price(&self) -> Option<crate::agent::spec::Price> {
                self.http.spec.price
            }
        }
    };
}
pub(crate) use http_backend;

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
pub(crate) struct Failure {
    pub(crate) kind: &'static str,
    pub(crate) message: String,
    pub(crate) retryable: bool,
    pub(crate) retry_after: Option<Duration>,
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
        let b = HttpEndpoint::new(spec, Auth::Bearer).unwrap();
        for attempt in 1..12 {
            let ceiling = (0.5 * 2f64.powi(attempt as i32 - 1)).min(30.0);
            let d = b.backoff(attempt, 42).as_secs_f64();
            assert!((0.0..=ceiling).contains(&d), "attempt {attempt}: {d}");
        }
        assert_ne!(b.backoff(3, 1), b.backoff(3, 2), "different episodes back off differently");
    }
}
