//! The `openai` backend: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp's
//! server, Ollama, …) over real HTTP.
//!
//! Requests are built as async-openai's `CreateChatCompletionRequest` and responses read as its
//! `CreateChatCompletionResponse`, so the wire format is the library's, not ours. The transport is the
//! runner's own HTTP stack ([`crate::agent::backends::http`], shared with the `anthropic` backend)
//! because the runner — not the client library — owns retries: every attempt is bounded, counted,
//! timed on its own, and honours `Retry-After` / `x-ratelimit-reset-*` up to a cap.
//! Rate limits (requests/min, tokens/min) are enforced before each attempt; the on-disk [`Cache`] is
//! consulted before any of that. [`OpenAiBackend::preflight`] checks the endpoint with one cheap request
//! (same retries) before a run starts. An answer in which the server could not parse the model's call
//! ([`serving_errors`]) is the model's, not a failure: it is never retried and becomes the turn's
//! `unparsed`. [`wire`] holds the conversation as the next request carries it.
//!
//! Split by job: this file builds requests and answers a turn (cache, then the retried request);
//! [`transport`] is one chat-completions attempt, [`response`] reads an answer into a turn,
//! [`preflight`] checks the endpoint before a run.

mod preflight;
mod response;
mod transport;
mod wire;

use crate::agent::TurnContext;
use crate::agent::backends::http::{Auth, HttpEndpoint, base_url};
use crate::agent::backends::serving_errors;
use crate::agent::cache::Cache;
use crate::agent::spec::ModelSpec;
use crate::protocol::{AssistantTurn, Message};
use anyhow::{Result, anyhow};
use async_openai::types::chat::CreateChatCompletionRequest;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use wire::wire_messages;

pub use crate::agent::backends::http::{EndpointStats, EndpointStatsSnapshot};

pub struct OpenAiBackend {
    url: String,
    endpoint: String,
    /// The shared HTTP stack: client, key, limiter, counters, redactor, retries.
    http: HttpEndpoint,
    cache: Option<Arc<Cache>>,
    pub stats: Arc<EndpointStats>,
    /// The request shape is checked against the library's schema once per backend, not per request.
    schema_checked: std::sync::atomic::AtomicBool,
}

impl OpenAiBackend {
    pub fn new(spec: ModelSpec, cache: Option<Arc<Cache>>) -> Result<Self> {
        // `base_url` was checked where it was read (flag or config key); the environment variable is
        // checked here, with the same rule.
        let base = base_url(&spec, "OPENAI_BASE_URL", "https://api.openai.com/v1")?;
        let endpoint = base.trim_end_matches('/').to_string();
        let http = HttpEndpoint::new(spec, Auth::Bearer)?;
        Ok(OpenAiBackend {
            url: format!("{endpoint}/chat/completions"),
            endpoint,
            stats: http.stats.clone(),
            http,
            cache,
            schema_checked: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn spec(&self) -> &ModelSpec {
        &self.http.spec
    }

    fn body(&self, ctx: &TurnContext<'_>) -> Result<Value> {
        let s = self.spec();
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

    async fn request(&self, ctx: &TurnContext<'_>) -> Result<AssistantTurn> {
        let body = serde_json::to_vec(&self.body(ctx)?)?;
        self.http
            .answer_turn(
                self.cache.as_deref(),
                &self.endpoint,
                &body,
                ctx,
                || self.attempt(&body),
                |value, turn_no| self.turn(value, turn_no),
            )
            .await
    }
}

crate::agent::backends::http::http_backend!(OpenAiBackend, endpoint);
