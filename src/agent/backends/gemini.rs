//! The `gemini` backend: Google's Gemini API, `POST {root}/v1beta/models/{model}:generateContent`,
//! over real HTTP — Google's own API and the servers that speak it (toolpick's mock endpoint).
//!
//! Hand-written over the runner's HTTP stack ([`super::http`], shared with `openai`, `anthropic` and
//! `openai-responses`): the runner owns retries, rate limits, the cache, redaction, the preflight and
//! the breaker whatever the protocol. The key goes in the `x-goog-api-key` header, never in the URL.
//!
//! What differs from the others: camelCase JSON; the system prompt is `systemInstruction`; the
//! conversation is `contents[{role: user|model, parts[]}]`; tools are `functionDeclarations` with a
//! JSON Schema (`parametersJsonSchema`); the model's calls are `functionCall{id?, name, args}` parts
//! whose `args` is an object and whose `id` may be absent (toolpick then makes one, deterministic:
//! [`response`]); their results go back as `functionResponse{id?, name, response}` parts of one `user`
//! turn, one per call; the model's parts carrying a `thoughtSignature` go back unchanged ([`memory`]);
//! `finishReason` has its own values and `usageMetadata` its own counts (docs/models.md,
//! "Normalisation across protocols").
//!
//! Split by job: this file builds requests and answers a turn; [`wire`] is the conversation and tools
//! as a request carries them, [`response`] one attempt and its answer read into a turn, [`memory`]
//! the model's own parts kept to be echoed.

mod memory;
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

/// Where Google's Gemini API is when neither the model nor `GOOGLE_GEMINI_BASE_URL` says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// The environment variable holding the key when the model names none.
pub const DEFAULT_KEY_ENV: &str = "GEMINI_API_KEY";

/// The API version path every request goes under.
pub const API_VERSION: &str = "v1beta";

pub struct GeminiBackend {
    /// `{root}/v1beta/models/{model}:generateContent`.
    url: String,
    /// `{root}/v1beta/models/{model}`: the model's description (its `inputTokenLimit`).
    model_url: String,
    /// The API root (`https://generativelanguage.googleapis.com`), without the version.
    root: String,
    http: HttpEndpoint,
    cache: Option<Arc<Cache>>,
    memory: memory::Memory,
    pub stats: Arc<EndpointStats>,
}

impl GeminiBackend {
    /// The backend for `spec`. Its base URL is the API root (`https://generativelanguage.googleapis.com`);
    /// one ending in `/v1beta` or `/v1` names the same root. Without one: `GOOGLE_GEMINI_BASE_URL`,
    /// else Google's API. The model may be written `models/<name>`.
    pub fn new(spec: ModelSpec, cache: Option<Arc<Cache>>) -> Result<Self> {
        let base = base_url(&spec, "GOOGLE_GEMINI_BASE_URL", DEFAULT_BASE_URL)?;
        let root = api_root(&base);
        let model = spec.model.clone().unwrap_or_default();
        let model = model.strip_prefix("models/").unwrap_or(&model).to_string();
        let model_url = format!("{root}/{API_VERSION}/models/{model}");
        let http = HttpEndpoint::new(spec, Auth::Google)?;
        Ok(GeminiBackend {
            url: format!("{model_url}:generateContent"),
            model_url,
            root,
            stats: http.stats.clone(),
            http,
            cache,
            memory: Default::default(),
        })
    }

    /// The API root requests go under.
    pub fn endpoint(&self) -> &str {
        &self.root
    }

    fn spec(&self) -> &ModelSpec {
        &self.http.spec
    }

    /// The `generateContent` request for this turn.
    fn body(&self, ctx: &TurnContext<'_>) -> Value {
        let s = self.spec();
        let (system, contents) = wire::contents(ctx.messages, &self.memory);
        let mut body = json!({"contents": contents});
        if let Some(system) = system {
            body["systemInstruction"] = json!({"parts": [{"text": system}]});
        }
        if !ctx.functions.is_empty() {
            body["tools"] = json!([{"functionDeclarations": wire::declarations(ctx.functions)}]);
            body["toolConfig"] =
                json!({"functionCallingConfig": {"mode": wire::mode(s.tool_choice.as_deref())}});
        }
        // `parallel_tool_calls` has no place in the protocol: not sent.
        let mut config = serde_json::Map::new();
        if let Some(t) = s.temperature {
            config.insert("temperature".into(), json!(t));
        }
        if let Some(t) = s.top_p {
            config.insert("topP".into(), json!(t));
        }
        if let Some(m) = s.max_tokens {
            config.insert("maxOutputTokens".into(), json!(m));
        }
        if let Some(seed) = s.seed {
            config.insert("seed".into(), json!(seed));
        }
        if !config.is_empty() {
            body["generationConfig"] = Value::Object(config);
        }
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
                |value, turn_no| self.turn(value, turn_no),
            )
            .await
    }

    /// `GET {root}/v1beta/models/{model}` (the model's description), or — when the server does not
    /// implement it — a `generateContent` request of one output token. `Ok`: what answered; `Err`:
    /// one line, the key removed.
    pub async fn preflight(&self) -> Result<String, String> {
        let ping = json!({"contents": [{"role": "user", "parts": [{"text": "ping"}]}],
            "generationConfig": {"maxOutputTokens": 1}});
        let body = serde_json::to_vec(&ping).map_err(|e| e.to_string())?;
        self.http.preflight(&self.model_url, &self.url, || self.attempt(&body)).await
    }

    /// The model's context window for the run's check of each cell: `context_window` when
    /// configured, else the `inputTokenLimit` of the model's description (`GET
    /// {root}/v1beta/models/{model}`, which Google's API serves); `None` when neither is known.
    pub async fn context_window(&self) -> Option<(u64, String)> {
        if let Some(n) = self.spec().context_window {
            return Some((n as u64, "context_window".into()));
        }
        let mut timing = crate::protocol::TurnTiming::default();
        let model = self
            .http
            .retrying(0, 1, false, &mut timing, || self.http.get_json(&self.model_url))
            .await
            .ok()?;
        let n = model["inputTokenLimit"].as_u64().filter(|n| *n > 0)?;
        Some((
            n,
            format!("inputTokenLimit of GET {}", crate::redact::url::display(&self.model_url)),
        ))
    }
}

/// The API root of a base URL: without a trailing `/` and without a final `/v1beta` or `/v1`.
fn api_root(base: &str) -> String {
    let trimmed = base.trim_end_matches('/');
    let root = trimmed.strip_suffix(&format!("/{API_VERSION}")).unwrap_or(trimmed);
    root.strip_suffix("/v1").unwrap_or(root).to_string()
}

crate::agent::backends::http::http_backend!(GeminiBackend, root);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_root_drops_a_final_version_and_slashes_only() {
        assert_eq!(api_root(DEFAULT_BASE_URL), DEFAULT_BASE_URL);
        assert_eq!(api_root("https://generativelanguage.googleapis.com/v1beta/"), DEFAULT_BASE_URL);
        assert_eq!(api_root("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080");
        assert_eq!(api_root("http://h/proxy/v1beta"), "http://h/proxy");
        assert_eq!(api_root("http://h/v2"), "http://h/v2");
    }

    #[test]
    fn the_request_carries_the_protocols_fields() {
        let mut spec = ModelSpec::baseline("gemini");
        spec.model = Some("models/gemini-2.5-flash".into());
        spec.base_url = Some("http://127.0.0.1:9/v1beta".into());
        spec.temperature = Some(0.0);
        spec.max_tokens = Some(256);
        spec.seed = Some(7);
        let b = GeminiBackend::new(spec, None).unwrap();
        assert_eq!(b.url, "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:generateContent");
        let task = crate::dataset::importers::task(
            "t".into(),
            "q".into(),
            crate::dataset::Kind::Single,
            vec![],
            String::new(),
            0,
        );
        let messages = vec![
            crate::protocol::Message::System { content: "Be brief.".into() },
            crate::protocol::Message::User { content: "Weather in Oslo?".into() },
        ];
        let functions = vec![crate::protocol::FunctionDef {
            name: "get_weather".into(),
            description: "d".into(),
            parameters: json!({"properties": {"city": {"type": "string"}}}),
        }];
        let addressing = crate::agent::Addressing::new();
        let ctx = TurnContext {
            task: &task,
            messages: &messages,
            functions: &functions,
            deferred: &[],
            groups: &[],
            layout: crate::layout::LayoutKind::Flat,
            addressing: &addressing,
            seed: 0,
            trial: 0,
        };
        let body = b.body(&ctx);
        assert_eq!(body["systemInstruction"], json!({"parts": [{"text": "Be brief."}]}));
        assert_eq!(
            body["contents"],
            json!([{"role": "user", "parts": [{"text": "Weather in Oslo?"}]}])
        );
        let f = &body["tools"][0]["functionDeclarations"][0];
        assert_eq!(f["name"], "get_weather");
        assert_eq!(f["parametersJsonSchema"]["type"], "object");
        assert_eq!(body["toolConfig"]["functionCallingConfig"]["mode"], "AUTO");
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0.0, "maxOutputTokens": 256, "seed": 7})
        );
    }
}
