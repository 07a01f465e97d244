//! The `openai-responses` backend: OpenAI's Responses API (`POST {base}/responses`) over real HTTP —
//! OpenAI's API and the servers that serve the same route (toolpick's mock endpoint).
//!
//! Hand-written over the runner's HTTP stack ([`super::http`], shared with `openai` and `anthropic`):
//! the runner owns retries, rate limits, the cache, redaction, the preflight and the breaker whatever
//! the protocol, and async-openai's chat types do not describe this protocol.
//!
//! What differs from chat completions: `store: false`; the system prompt goes as a `developer`
//! message; tools are flat `{type: "function", name, description, parameters, strict}`; the history is
//! the protocol's own items — the model's calls as `function_call{call_id, name, arguments}` items,
//! each answered by one `function_call_output{call_id, output}`; there is no finish reason: `status`
//! and `incomplete_details.reason` say why an answer ended ([`response`]). The normalisation is
//! documented in docs/models.md.
//!
//! Split by job: this file builds requests and answers a turn; [`wire`] is the conversation and tools
//! as a request carries them, [`response`] one attempt and its answer read into a turn.

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

pub struct ResponsesBackend {
    /// `{endpoint}/responses`.
    url: String,
    /// The base URL (`https://api.openai.com/v1`), without a trailing `/`.
    endpoint: String,
    http: HttpEndpoint,
    cache: Option<Arc<Cache>>,
    pub stats: Arc<EndpointStats>,
}

impl ResponsesBackend {
    /// The backend for `spec`: its base URL as the `openai` backend takes it (ending in `/v1`), else
    /// `OPENAI_BASE_URL`, else OpenAI's API; the key `Authorization: Bearer`.
    pub fn new(spec: ModelSpec, cache: Option<Arc<Cache>>) -> Result<Self> {
        let base = base_url(&spec, "OPENAI_BASE_URL", "https://api.openai.com/v1")?;
        let endpoint = base.trim_end_matches('/').to_string();
        let http = HttpEndpoint::new(spec, Auth::Bearer)?;
        Ok(ResponsesBackend {
            url: format!("{endpoint}/responses"),
            endpoint,
            stats: http.stats.clone(),
            http,
            cache,
        })
    }

    /// The base URL requests go under.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn spec(&self) -> &ModelSpec {
        &self.http.spec
    }

    /// The groups the model's tools go out in: the layout's, when the model's `namespaces` is on.
    fn groups<'a>(&self, ctx: &TurnContext<'a>) -> Option<&'a [crate::protocol::ToolGroup]> {
        self.spec().namespaces.then_some(ctx.groups)
    }

    /// The Responses request for this turn.
    fn body(&self, ctx: &TurnContext<'_>) -> Value {
        let s = self.spec();
        let mut body = json!({
            "model": s.model.clone().unwrap_or_default(),
            "input": wire::input(ctx.messages, ctx.layout, ctx.deferred, self.groups(ctx)),
            "store": false,
        });
        if !ctx.functions.is_empty() || !ctx.deferred.is_empty() {
            body["tools"] = wire::tools(ctx.functions, ctx.deferred, ctx.layout, self.groups(ctx));
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
        if let Some(m) = s.max_tokens {
            body["max_output_tokens"] = json!(m);
        }
        // `seed` has no place in the protocol: not sent.
        body
    }

    async fn request(&self, ctx: &TurnContext<'_>) -> Result<AssistantTurn> {
        let body = serde_json::to_vec(&self.body(ctx))?;
        self.http
            .answer_turn(
                self.cache.as_deref(),
                &self.url,
                &body,
                ctx,
                || self.attempt(&body),
                |value, turn_no| self.turn(value, turn_no, self.groups(ctx)),
            )
            .await
    }

    /// `GET {base}/models`, or — when the server does not implement it — a Responses request of 16
    /// output tokens (the API's smallest `max_output_tokens`). `Ok`: what answered; `Err`: one line,
    /// the key removed.
    pub async fn preflight(&self) -> Result<String, String> {
        let models = format!("{}/models", self.endpoint);
        let ping = json!({"model": self.spec().model.clone().unwrap_or_default(), "store": false,
            "input": [{"role": "user", "content": "ping"}], "max_output_tokens": 16});
        let body = serde_json::to_vec(&ping).map_err(|e| e.to_string())?;
        self.http.preflight(&models, &self.url, || self.attempt(&body)).await
    }

    /// The model's context window for the run's check of each cell, found as the `openai` backend
    /// finds it ([`limits::openai_context_window`](crate::agent::backends::limits)).
    pub async fn context_window(&self) -> Option<(u64, String)> {
        crate::agent::backends::limits::openai_context_window(&self.http, &self.endpoint).await
    }
}

crate::agent::backends::http::http_backend!(ResponsesBackend, endpoint);
