//! A model of the matrix as the experiment file and `--backends` name it: a baseline, the replay
//! backend, or an OpenAI-compatible endpoint with its sampling, retry, rate and price settings.
//!
//! Owned by `agent` because the backends are built from it (the OpenAI backend reads its endpoint
//! settings here); the runner only passes it through, so no backend imports the runner.

use crate::error::InputError;
use crate::rules;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Price of a model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    #[serde(deserialize_with = "rules::price::de")]
    pub input_per_mtok: f64,
    #[serde(deserialize_with = "rules::price::de")]
    pub output_per_mtok: f64,
    /// Price of prompt tokens served from the provider's cache (defaults to the input price).
    #[serde(default, deserialize_with = "rules::price::de_opt")]
    pub cached_input_per_mtok: Option<f64>,
}

impl Price {
    pub fn cost(&self, u: &crate::protocol::Usage) -> f64 {
        let cached = u.cached_tokens.min(u.prompt_tokens) as f64;
        let fresh = u.prompt_tokens as f64 - cached;
        (fresh * self.input_per_mtok
            + cached * self.cached_input_per_mtok.unwrap_or(self.input_per_mtok)
            + u.completion_tokens as f64 * self.output_per_mtok)
            / 1e6
    }
}

fn default_api_key_env() -> String {
    "OPENAI_API_KEY".into()
}
fn default_concurrency() -> usize {
    8
}
fn default_request_timeout() -> f64 {
    60.0
}
fn default_episode_timeout() -> f64 {
    600.0
}
fn default_attempts() -> u32 {
    5
}
fn default_retry_after_cap() -> f64 {
    60.0
}
fn default_backoff_base() -> f64 {
    0.5
}
fn default_true() -> bool {
    true
}
/// Consecutive episodes of one endpoint failing with the same infrastructure error that stop it.
pub const DEFAULT_BREAKER: usize = 20;
fn default_breaker() -> usize {
    DEFAULT_BREAKER
}

/// One model (a column of the matrix): a baseline, or an OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Label used in cells and reports; defaults to `model` (or the backend name).
    #[serde(default)]
    pub name: String,
    /// `openai`, `anthropic`, `lexical`, `oracle`, `random`, `replay`, `mcp-agent` or `mcp-oracle`.
    #[serde(default = "openai")]
    pub backend: String,
    /// `mcp-agent`: the agent's command line (words split at spaces), started per episode with the
    /// served layout's URL in `TOOLPICK_MCP_URL` and the query on standard input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_command: Option<String>,
    /// `replay`: the JSONL file of recorded answers (see [`crate::agent::backends::replay`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_file: Option<PathBuf>,
    /// `replay`: digest of the file's bytes, set when the run is prepared, so resuming a run with other
    /// recorded answers is refused like any other change of the matrix. Never read from a file.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub replay_digest: Option<String>,
    /// e.g. `http://127.0.0.1:8080/v1`; default `OPENAI_BASE_URL`, then `https://api.openai.com/v1`.
    #[serde(
        default,
        deserialize_with = "rules::base_url::de_opt",
        serialize_with = "rules::base_url::display"
    )]
    pub base_url: Option<String>,
    #[serde(default, deserialize_with = "rules::name::de_opt")]
    pub model: Option<String>,
    /// Name of the environment variable holding the API key (the key itself never goes in a file);
    /// `OPENAI_API_KEY` unless set, `ANTHROPIC_API_KEY` for the `anthropic` backend.
    #[serde(default = "default_api_key_env", deserialize_with = "rules::key_env::de")]
    pub api_key_env: String,
    #[serde(default, deserialize_with = "rules::temperature::de_opt")]
    pub temperature: Option<f64>,
    #[serde(default, deserialize_with = "rules::top_p::de_opt")]
    pub top_p: Option<f64>,
    pub seed: Option<i64>,
    #[serde(default, deserialize_with = "rules::max_tokens::de_opt")]
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens: every cell whose estimated prompt exceeds it is reported
    /// before the first request (`crate::run::provider_limits`). Unset, an OpenAI-compatible llama.cpp
    /// server's `n_ctx` is read from its `/props`.
    #[serde(
        default,
        deserialize_with = "rules::context_window::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_window: Option<u32>,
    /// Whose limits (tool count, tool names) the requests are checked against before the run:
    /// `openai`, `anthropic`, `gemini` or `none`. Unset: the backend's provider when the base URL is
    /// that provider's own API, else none (OpenAI-compatible servers such as llama.cpp accept more).
    #[serde(
        default,
        deserialize_with = "rules::provider_limits::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_limits: Option<String>,
    /// `auto`, `none`, `required`.
    #[serde(default, deserialize_with = "rules::tool_choice::de_opt")]
    pub tool_choice: Option<String>,
    pub parallel_tool_calls: Option<bool>,
    /// `native-search` on the `anthropic` backend: which of the API's search tools is sent, `bm25`
    /// (the default) or `regex`.
    #[serde(
        default,
        deserialize_with = "rules::tool_search::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_search: Option<String>,
    /// Also accept tool calls written in the message text (Hermes `<tool_call>` tags, fenced or bare
    /// JSON). Off by default: a call outside `tool_calls` is not a tool call to a strict client.
    #[serde(default)]
    pub parse_text_calls: bool,
    /// `openai-responses` only: send the catalog's function tools grouped in one `namespace` tool
    /// per server (docs/models.md, "Namespaces"). Off by default; any other backend refuses it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub namespaces: bool,
    /// Episodes in flight at once against this endpoint.
    #[serde(default = "default_concurrency", deserialize_with = "rules::concurrency::de")]
    pub concurrency: usize,
    #[serde(default, deserialize_with = "rules::per_minute::de_opt")]
    pub requests_per_minute: Option<f64>,
    #[serde(default, deserialize_with = "rules::per_minute::de_opt")]
    pub tokens_per_minute: Option<f64>,
    #[serde(default = "default_request_timeout", deserialize_with = "rules::timeout::de")]
    pub request_timeout_s: f64,
    #[serde(default = "default_episode_timeout", deserialize_with = "rules::timeout::de")]
    pub episode_timeout_s: f64,
    /// Attempts per request, the first included.
    #[serde(default = "default_attempts", deserialize_with = "rules::attempts::de")]
    pub max_attempts: u32,
    /// First back-off delay in seconds (doubles per attempt, full jitter, capped at 30 s).
    #[serde(default = "default_backoff_base", deserialize_with = "rules::delay::de")]
    pub backoff_base_s: f64,
    /// Longest `Retry-After` honoured, in seconds.
    #[serde(default = "default_retry_after_cap", deserialize_with = "rules::delay::de")]
    pub max_retry_after_s: f64,
    pub price: Option<Price>,
    /// Check the endpoint with one cheap request before the first episode (see [`crate::run::failfast`]).
    #[serde(default = "default_true")]
    pub preflight: bool,
    /// Stop scheduling this endpoint after this many consecutive episodes failed with the same
    /// infrastructure error class (0: never).
    #[serde(default = "default_breaker")]
    pub breaker: usize,
}

fn openai() -> String {
    "openai".into()
}

impl ModelSpec {
    /// A baseline by name.
    pub fn baseline(name: &str) -> ModelSpec {
        let mut m: ModelSpec =
            toml::from_str(&format!("backend = \"{name}\"")).expect("defaults parse");
        m.name = name.to_string();
        m
    }

    /// A backend that talks to a model endpoint over HTTP (`openai`, `anthropic`): it takes the
    /// endpoint settings, needs a model name, is checked before the run and has a breaker.
    pub fn is_endpoint(&self) -> bool {
        crate::agent::backends::HTTP_BACKENDS.contains(&self.backend.as_str())
    }

    /// The key variable of a backend whose protocol has its own (`anthropic`: `ANTHROPIC_API_KEY`,
    /// `gemini`: `GEMINI_API_KEY`),
    /// unless one was `given` (flag or file key); the field's default is OpenAI's.
    pub fn settle_key_env(&mut self, given: bool) {
        if given {
            return;
        }
        match self.backend.as_str() {
            "anthropic" => {
                self.api_key_env = crate::agent::backends::anthropic::DEFAULT_KEY_ENV.to_string()
            }
            "gemini" => {
                self.api_key_env = crate::agent::backends::gemini::DEFAULT_KEY_ENV.to_string()
            }
            _ => {}
        }
    }

    /// A backend as `--backends` names it: a baseline, `openai`, or `replay:<FILE>`.
    pub fn from_flag(flag: &str) -> Result<ModelSpec, InputError> {
        if let Some(file) = flag.strip_prefix("replay:") {
            if file.is_empty() {
                return Err(InputError::new(
                    "--backends",
                    "`replay:` needs the file of recorded answers: replay:<FILE>",
                ));
            }
            return Ok(ModelSpec::replay(PathBuf::from(file)));
        }
        if let Some(command) = flag.strip_prefix("mcp-agent:") {
            if command.trim().is_empty() {
                return Err(InputError::new(
                    "--backends",
                    "`mcp-agent:` needs the agent's command line: mcp-agent:<command>",
                ));
            }
            let mut m = ModelSpec::baseline("mcp-agent");
            m.agent_command = Some(command.to_string());
            return Ok(m);
        }
        if flag == "replay" {
            return Err(InputError::new(
                "--backends",
                "the replay backend needs the file of recorded answers: replay:<FILE>",
            ));
        }
        if ![
            "openai",
            "anthropic",
            "openai-responses",
            "gemini",
            "lexical",
            "oracle",
            "random",
            "mcp-oracle",
        ]
        .contains(&flag)
        {
            return Err(InputError::new(
                "--backends",
                format!(
                    "unknown backend `{flag}`; choose from {}",
                    crate::agent::backends::names_help()
                ),
            ));
        }
        let mut m = ModelSpec::baseline(flag);
        // `--api-key-env`, applied after this, names another.
        m.settle_key_env(false);
        Ok(m)
    }

    /// The replay backend on `file`, labelled `replay:<file stem>`.
    pub fn replay(file: PathBuf) -> ModelSpec {
        let mut m = ModelSpec::baseline("replay");
        m.name = replay_label(&file);
        m.replay_file = Some(file);
        m
    }
}

pub(crate) fn replay_label(file: &Path) -> String {
    format!(
        "replay:{}",
        file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    )
}
