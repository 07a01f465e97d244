//! The `openai` backend's preflight: one cheap request before a run (`GET /models`, else a
//! one-token chat completion) and, when it fails, one line saying what was tried, what came back and
//! what to check.
//!
//! Its own file because it runs once per run, outside any trial, and its messages are for the person
//! starting the run rather than for the trial record.

use super::OpenAiBackend;
use crate::agent::backends::http::NOT_IMPLEMENTED;
use crate::protocol::TurnTiming;
use serde_json::json;

impl OpenAiBackend {
    /// One cheap request before a run: `GET {base}/models`, or — when the server does not implement it
    /// (404, 405, 501) — a one-token chat completion, with the normal retries and timeouts. Never
    /// cached and not counted in the endpoint's stats. `Ok`: what answered; `Err`: one line saying what
    /// was tried, what came back and what to check, with the API key removed.
    pub async fn preflight(&self) -> Result<String, String> {
        let mut timing = TurnTiming::default();
        let models = format!("{}/models", self.endpoint);
        let tried = match self
            .http
            .retrying(0, 1, false, &mut timing, || self.http.get_json(&models))
            .await
        {
            Ok(_) => return Ok(format!("GET {models}")),
            Err((f, _)) if f.kind == NOT_IMPLEMENTED => {
                format!("GET {models} → {}, then ", f.message)
            }
            Err((f, n)) => return Err(self.http.preflight_failure(&format!("GET {models}"), f, n)),
        };
        let ping = json!({"model": self.http.spec.model.clone().unwrap_or_default(), "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1});
        let body = serde_json::to_vec(&ping).map_err(|e| e.to_string())?;
        let tried = format!("{tried}POST {} (one token)", self.url);
        match self.http.retrying(0, 16, false, &mut timing, || self.attempt(&body)).await {
            Ok(_) => Ok(tried),
            Err((f, n)) => Err(self.http.preflight_failure(&tried, f, n)),
        }
    }

    /// The model's context window for the run's check of each cell: `context_window` when
    /// configured, else an OpenAI-compatible llama.cpp server's `n_ctx` (`GET /props`); `None` when
    /// neither is known (a server without `/props`).
    pub async fn context_window(&self) -> Option<(u64, String)> {
        if let Some(n) = self.http.spec.context_window {
            return Some((n as u64, "context_window".into()));
        }
        // OpenAI's own API has no /props (and publishes its windows elsewhere): not asked.
        let limits = crate::agent::backends::limits::applying(
            Some(&crate::agent::backends::limits::OPENAI),
            None,
            &self.endpoint,
        );
        if limits.is_some() {
            return None;
        }
        let n = crate::agent::backends::limits::llama_cpp_n_ctx(&self.http, &self.endpoint).await?;
        Some((n, "the server's /props n_ctx".into()))
    }
}
