//! The `anthropic` backend: the Anthropic Messages API (`POST {base}/v1/messages`) over real HTTP —
//! Anthropic's own API, and the servers that speak it (llama.cpp's `llama-server`, toolpick's mock
//! endpoint).
//!
//! Hand-written over the runner's HTTP stack ([`super::http`], shared with the `openai` backend) rather
//! than a client crate: no official Rust SDK exists, and the runner owns retries, rate limits, the cache,
//! redaction, the preflight and the breaker whatever the protocol. The wire format is checked against
//! the official Python SDK's types in the tests (`tests/anthropic_sdk.rs`).
//!
//! The protocol differs from chat completions in every place a scorer depends on: the system prompt is
//! top-level, `max_tokens` is required, tools are `{name, description, input_schema}`, the model's calls
//! are `tool_use` content blocks whose `input` is an object (not JSON text), their results go back as
//! `tool_result` blocks of one **user** turn, `stop_reason` has its own values, and `usage.input_tokens`
//! excludes the prompt-cache reads and writes. The normalisation to toolpick's turn is documented in
//! docs/models.md ("Normalisation across protocols").
//!
//! Split by job: this file builds requests and answers a turn (cache, then the retried request);
//! [`wire`] is the conversation and tools as a request carries them, [`response`] is one attempt and
//! its answer read into a turn, [`preflight`] checks the endpoint before a run.

mod preflight;
mod response;
mod wire;

use crate::agent::TurnContext;
use crate::agent::backends::http::{Auth, HttpEndpoint, base_url};
use crate::agent::cache::Cache;
use crate::agent::spec::ModelSpec;
use crate::protocol::AssistantTurn;
use anyhow::Result;
use serde_json::{Value, json};
use std::sync::Arc;

pub use crate::agent::backends::http::EndpointStats;

/// Where Anthropic's API is when neither the model nor `ANTHROPIC_BASE_URL` says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The environment variable holding the key when the model names none.
pub const DEFAULT_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// `max_tokens` when the model sets none: the protocol requires one.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

pub struct AnthropicBackend {
    /// `{root}/v1/messages`.
    url: String,
    /// The API root (`https://api.anthropic.com`), without `/v1`.
    root: String,
    http: HttpEndpoint,
    cache: Option<Arc<Cache>>,
    pub stats: Arc<EndpointStats>,
}

impl AnthropicBackend {
    /// The backend for `spec`. Its base URL is the API root as Anthropic's SDKs take it
    /// (`https://api.anthropic.com`, `http://127.0.0.1:8080`); one ending in `/v1` (an OpenAI habit)
    /// names the same root. Without one: `ANTHROPIC_BASE_URL`, else Anthropic's API.
    pub fn new(spec: ModelSpec, cache: Option<Arc<Cache>>) -> Result<Self> {
        let base = base_url(&spec, "ANTHROPIC_BASE_URL", DEFAULT_BASE_URL)?;
        // The protocol's range is narrower than chat completions' (0–2): refused here rather than
        // sent to be rejected by every request.
        if let Some(t) = spec.temperature.filter(|t| *t > 1.0) {
            return Err(crate::error::InputError::new(
                "--temperature",
                format!("the anthropic backend takes a temperature from 0 to 1 (got {t})"),
            )
            .into());
        }
        let root = api_root(&base);
        let http = HttpEndpoint::new(spec, Auth::Anthropic)?;
        Ok(AnthropicBackend {
            url: format!("{root}/v1/messages"),
            root,
            stats: http.stats.clone(),
            http,
            cache,
        })
    }

    /// The API root requests go under.
    pub fn endpoint(&self) -> &str {
        &self.root
    }

    fn spec(&self) -> &ModelSpec {
        &self.http.spec
    }

    /// The Messages request for this turn.
    fn body(&self, ctx: &TurnContext<'_>) -> Result<Value> {
        let s = self.spec();
        let (system, messages) = wire::messages(ctx.messages, ctx.layout);
        let mut body = json!({
            "model": s.model.clone().unwrap_or_default(),
            "max_tokens": s.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
        });
        if let Some(system) = system {
            body["system"] = json!(system);
        }
        if !ctx.functions.is_empty() || !ctx.deferred.is_empty() {
            body["tools"] =
                wire::tools(ctx.functions, ctx.deferred, ctx.layout, s.tool_search.as_deref())?;
            if let Some(choice) = wire::tool_choice(s.tool_choice.as_deref(), s.parallel_tool_calls)
            {
                body["tool_choice"] = choice;
            }
        }
        if let Some(t) = s.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(t) = s.top_p {
            body["top_p"] = json!(t);
        }
        // `seed` has no place in the protocol: not sent.
        Ok(body)
    }

    async fn request(&self, ctx: &TurnContext<'_>) -> Result<AssistantTurn> {
        let body = serde_json::to_vec(&self.body(ctx)?)?;
        self.http
            .answer_turn(
                self.cache.as_deref(),
                &self.url,
                &body,
                ctx,
                || self.attempt(&body),
                |value, turn_no| self.turn(value, turn_no),
            )
            .await
    }
}

/// The API root of a base URL: without a trailing `/` and without a final `/v1`.
fn api_root(base: &str) -> String {
    let trimmed = base.trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_string()
}

crate::agent::backends::http::http_backend!(AnthropicBackend, root);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_root_drops_a_final_v1_and_slashes_only() {
        assert_eq!(api_root("https://api.anthropic.com"), "https://api.anthropic.com");
        assert_eq!(api_root("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080");
        assert_eq!(api_root("http://h/proxy/v1"), "http://h/proxy");
        assert_eq!(api_root("http://h/v1beta"), "http://h/v1beta");
    }
}
