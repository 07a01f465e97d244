//! The `openai` backend's preflight: one cheap request before a run (`GET /models`, else a
//! one-token chat completion) and, when it fails, one line saying what was tried, what came back and
//! what to check.
//!
//! Its own file because it runs once per run, outside any trial, and its messages are for the person
//! starting the run rather than for the trial record.

use super::transport::Failure;
use super::{NOT_IMPLEMENTED, OpenAiBackend};
use crate::protocol::TurnTiming;
use serde_json::{Value, json};

impl OpenAiBackend {
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
    pub(super) async fn get_json(&self, url: &str) -> Result<Value, Failure> {
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
    pub(super) fn preflight_failure(&self, tried: &str, f: Failure, attempts: u32) -> String {
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
