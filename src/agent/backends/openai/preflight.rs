//! The `openai` backend's preflight: one cheap request before a run (`GET /models`, else a
//! one-token chat completion) and, when it fails, one line saying what was tried, what came back and
//! what to check (the steps are the shared [`HttpEndpoint::preflight`](crate::agent::backends::http)).
//!
//! Its own file because it runs once per run, outside any trial, and its messages are for the person
//! starting the run rather than for the trial record.

use super::OpenAiBackend;
use serde_json::json;

impl OpenAiBackend {
    /// One cheap request before a run: `GET {base}/models`, or — when the server does not implement it
    /// (404, 405, 501) — a one-token chat completion, with the normal retries and timeouts. Never
    /// cached and not counted in the endpoint's stats. `Ok`: what answered; `Err`: one line saying what
    /// was tried, what came back and what to check, with the API key removed.
    pub async fn preflight(&self) -> Result<String, String> {
        let models = format!("{}/models", self.endpoint);
        let ping = json!({"model": self.http.spec.model.clone().unwrap_or_default(), "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1});
        let body = serde_json::to_vec(&ping).map_err(|e| e.to_string())?;
        self.http.preflight(&models, &self.url, || self.attempt(&body)).await
    }

    /// The model's context window for the run's check of each cell: `context_window` when
    /// configured, else an OpenAI-compatible llama.cpp server's `n_ctx` (`GET /props`); `None` when
    /// neither is known (a server without `/props`).
    pub async fn context_window(&self) -> Option<(u64, String)> {
        crate::agent::backends::limits::openai_context_window(&self.http, &self.endpoint).await
    }
}
