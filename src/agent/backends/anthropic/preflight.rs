//! The `anthropic` backend's preflight: one cheap request before a run (`GET {root}/v1/models`, which
//! Anthropic's API serves, else a one-token Messages request for servers that only serve
//! `/v1/messages`) and, when it fails, one line saying what was tried, what came back and what to
//! check (the steps are the shared [`HttpEndpoint::preflight`](crate::agent::backends::http)).
//!
//! Its own file because it runs once per run, outside any trial, and its messages are for the person
//! starting the run rather than for the trial record.

use super::AnthropicBackend;
use serde_json::json;

impl AnthropicBackend {
    /// `GET {root}/v1/models`, or — when the server does not implement it (404, 405, 501) — a
    /// one-token Messages request, with the normal retries and timeouts. Never cached and not counted
    /// in the endpoint's stats. `Ok`: what answered; `Err`: one line, the key removed.
    pub async fn preflight(&self) -> Result<String, String> {
        let models = format!("{}/v1/models", self.root);
        let ping = json!({"model": self.spec().model.clone().unwrap_or_default(), "max_tokens": 1,
            "messages": [{"role": "user", "content": "ping"}]});
        let body = serde_json::to_vec(&ping).map_err(|e| e.to_string())?;
        self.http.preflight(&models, &self.url, || self.attempt(&body)).await
    }

    /// The model's context window for the run's check of each cell: `context_window` when
    /// configured (Anthropic's API says nothing about it before a request).
    pub async fn context_window(&self) -> Option<(u64, String)> {
        self.spec().context_window.map(|n| (n as u64, "context_window".into()))
    }
}
