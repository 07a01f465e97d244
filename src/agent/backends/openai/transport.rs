//! The `openai` backend's transport and retries: one attempt (send, redact, validate against the
//! client library's response type), HTTP errors classified as retryable or not, `Retry-After` and
//! `x-ratelimit-reset-*` read, full-jitter back-off, and the requests/min and tokens/min limiter.
//!
//! Its own file because the runner, not the client library, owns retries (see the parent module):
//! this is that policy, apart from what a request holds and how an answer becomes a turn.

use super::wire::openai_finish_reasons;
use super::{OpenAiBackend, UNPARSED, serving_errors};
use crate::protocol::TurnTiming;
use async_openai::types::chat::CreateChatCompletionResponse;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Requests/min and tokens/min as a virtual schedule: each request reserves its slot, so concurrent
/// callers are spaced out fairly without a background task.
pub(super) struct RateLimiter {
    pub(super) rpm: Option<f64>,
    pub(super) tpm: Option<f64>,
    pub(super) next_free: Mutex<Instant>,
}

impl RateLimiter {
    pub(super) async fn acquire(&self, tokens: u64) -> Duration {
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
pub(super) fn describe(e: &reqwest::Error, timeout_s: f64) -> String {
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
pub(super) struct Failure {
    pub(super) kind: &'static str,
    pub(super) message: String,
    pub(super) retryable: bool,
    pub(super) retry_after: Option<Duration>,
}

pub(super) fn header_secs(headers: &reqwest::header::HeaderMap, name: &str) -> Option<f64> {
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
    pub(super) async fn attempt(&self, body: &[u8]) -> Result<Value, Failure> {
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
    pub(super) async fn send(
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
    pub(super) fn http_failure(
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
    pub(super) async fn retrying<T, F, Fut>(
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
    pub(super) fn backoff(&self, attempt: u32, salt: u64) -> Duration {
        let ceiling = (self.spec.backoff_base_s * 2f64.powi(attempt as i32 - 1)).min(30.0);
        let mut x =
            salt ^ 0x9E37_79B9_7F4A_7C15 ^ (attempt as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
        Duration::from_secs_f64(ceiling * unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::spec::ModelSpec;

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
