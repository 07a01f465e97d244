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

use crate::agent::backends::http::{Auth, HttpEndpoint, UNPARSED};
use crate::agent::backends::limits;
use crate::agent::backends::serving_errors;
use crate::agent::cache::{self, Cache};
use crate::agent::spec::ModelSpec;
use crate::agent::{Backend, BoxFuture, TurnContext};
use crate::protocol::{AssistantTurn, Message, TurnTiming};
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

/// The cache entry of an answer in which the server could not parse the model's call
/// ([`serving_errors`]): the model's answer to that request, cached like any other (a rerun served
/// from the cache scores it the same way). No chat completion (and no Messages answer) has this key.
pub(crate) const UNPARSED_ENTRY: &str = "toolpick_unparsed_call";

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
        let estimate = (body.len() / 4) as u64 + self.spec().max_tokens.unwrap_or(256) as u64;
        let mut timing = TurnTiming::default();
        match self
            .http
            .retrying(ctx.seed, estimate, true, &mut timing, || self.attempt(&body))
            .await
        {
            Ok(value) => {
                if let Some(c) = &self.cache {
                    c.put(&key, &value)?;
                }
                let mut turn = self.turn(&value, ctx.turn() + 1);
                turn.timing = Some(timing);
                Ok(turn)
            }
            Err((f, _)) if f.kind == UNPARSED => {
                let message = self.http.redactor.redact(&f.message).into_owned();
                if let Some(c) = &self.cache {
                    c.put(&key, &json!({ UNPARSED_ENTRY: message }))?;
                }
                Ok(AssistantTurn {
                    unparsed: Some(message),
                    timing: Some(timing),
                    ..Default::default()
                })
            }
            // A provider's limit: the trial records it as `provider_limit`, not as a failure.
            Err((f, _)) if let Some(hit) = limits::into_error(&self.http, &f) => Err(hit),
            Err((f, attempts)) => Err(anyhow!(
                "{} after {attempts} attempt(s): {}",
                f.kind,
                self.http.redactor.redact(&f.message)
            )),
        }
    }
}

impl Backend for OpenAiBackend {
    fn name(&self) -> &str {
        &self.spec().name
    }

    fn concurrency(&self) -> usize {
        self.spec().concurrency
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
        self.spec().price
    }
}
