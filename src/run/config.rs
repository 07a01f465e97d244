//! Experiment configuration: a TOML file describing the matrix, overridden by command-line flags.
//!
//! Precedence (highest first): command-line flags, the `--config` file, built-in defaults. Unknown keys
//! are errors that name the key and its line, so a typo never silently falls back to a default.

use crate::agent::backends::LexicalConfig;
use crate::error::InputError;
use crate::layout::DiscoveryRule;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Price of a model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Price of prompt tokens served from the provider's cache (defaults to the input price).
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

/// One model (a column of the matrix): a baseline, or an OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Label used in cells and reports; defaults to `model` (or the backend name).
    #[serde(default)]
    pub name: String,
    /// `openai`, `lexical`, `oracle`, `random` or `replay`.
    #[serde(default = "openai")]
    pub backend: String,
    /// `replay`: the JSONL file of recorded answers (see [`crate::agent::backends::replay`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_file: Option<PathBuf>,
    /// `replay`: digest of the file's bytes, set when the run is prepared, so resuming a run with other
    /// recorded answers is refused like any other change of the matrix. Never read from a file.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub replay_digest: Option<String>,
    /// e.g. `http://127.0.0.1:8080/v1`; default `OPENAI_BASE_URL`, then `https://api.openai.com/v1`.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable holding the API key (the key itself never goes in a file).
    #[serde(default = "default_api_key_env")]
    pub api_key_env: String,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub seed: Option<i64>,
    pub max_tokens: Option<u32>,
    /// `auto`, `none`, `required`.
    pub tool_choice: Option<String>,
    pub parallel_tool_calls: Option<bool>,
    /// Also accept tool calls written in the message text (Hermes `<tool_call>` tags, fenced or bare
    /// JSON). Off by default: a call outside `tool_calls` is not a tool call to a strict client.
    #[serde(default)]
    pub parse_text_calls: bool,
    /// Episodes in flight at once against this endpoint.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    pub requests_per_minute: Option<f64>,
    pub tokens_per_minute: Option<f64>,
    #[serde(default = "default_request_timeout")]
    pub request_timeout_s: f64,
    #[serde(default = "default_episode_timeout")]
    pub episode_timeout_s: f64,
    /// Attempts per request, the first included.
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// First back-off delay in seconds (doubles per attempt, full jitter, capped at 30 s).
    #[serde(default = "default_backoff_base")]
    pub backoff_base_s: f64,
    /// Longest `Retry-After` honoured, in seconds.
    #[serde(default = "default_retry_after_cap")]
    pub max_retry_after_s: f64,
    pub price: Option<Price>,
}

fn openai() -> String {
    "openai".into()
}

impl ModelSpec {
    /// A baseline by name.
    pub fn baseline(name: &str) -> ModelSpec {
        let mut m: ModelSpec = toml::from_str(&format!("backend = \"{name}\"")).expect("defaults parse");
        m.name = name.to_string();
        m
    }

    pub fn is_openai(&self) -> bool {
        self.backend == "openai"
    }

    /// A backend as `--backends` names it: a baseline, `openai`, or `replay:<FILE>`.
    pub fn from_flag(flag: &str) -> Result<ModelSpec, InputError> {
        if let Some(file) = flag.strip_prefix("replay:") {
            if file.is_empty() {
                return Err(InputError::new("--backends", "`replay:` needs the file of recorded answers: replay:<FILE>"));
            }
            return Ok(ModelSpec::replay(PathBuf::from(file)));
        }
        if flag == "replay" {
            return Err(InputError::new("--backends", "the replay backend needs the file of recorded answers: replay:<FILE>"));
        }
        if !["openai", "lexical", "oracle", "random"].contains(&flag) {
            return Err(InputError::new("--backends", format!("unknown backend `{flag}`; choose from {}", crate::agent::backends::names_help())));
        }
        Ok(ModelSpec::baseline(flag))
    }

    /// The replay backend on `file`, labelled `replay:<file stem>`.
    pub fn replay(file: PathBuf) -> ModelSpec {
        let mut m = ModelSpec::baseline("replay");
        m.name = replay_label(&file);
        m.replay_file = Some(file);
        m
    }
}

fn replay_label(file: &Path) -> String {
    format!("replay:{}", file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

/// The `--config` file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    pub datasets: Option<Vec<PathBuf>>,
    pub catalogs: Option<Vec<PathBuf>>,
    pub variants: Option<Vec<String>>,
    pub layouts: Option<Vec<String>>,
    pub trials: Option<usize>,
    pub seed: Option<u64>,
    pub max_steps: Option<usize>,
    pub out: Option<PathBuf>,
    pub run_id: Option<String>,
    pub cache_dir: Option<PathBuf>,
    pub discovery: Option<DiscoveryRule>,
    pub lexical: Option<LexicalConfig>,
    /// Tool-count curve levels (see `--distractors`).
    pub distractors: Option<Vec<usize>>,
    #[serde(default)]
    pub models: Vec<ModelSpec>,
}

/// Parse an experiment file; errors name the file, line and key. Relative paths in the file are
/// resolved against the file's directory.
pub fn load_experiment(path: &Path) -> Result<ExperimentFile, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| InputError::new(path, format!("cannot read config: {e}")))?;
    let mut file: ExperimentFile = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let key = e.message().split('`').nth(1).map(String::from);
        let mut err = InputError::new(path, e.message().trim().to_string());
        err.line = line;
        err.field = key;
        err
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let rebase = |p: &mut PathBuf| {
        if p.is_relative() {
            *p = base.join(&*p);
        }
    };
    for p in file.datasets.iter_mut().flatten().chain(file.catalogs.iter_mut().flatten()) {
        rebase(p);
    }
    if let Some(p) = file.out.as_mut() {
        rebase(p);
    }
    if let Some(p) = file.cache_dir.as_mut() {
        rebase(p);
    }
    for (i, m) in file.models.iter_mut().enumerate() {
        if !crate::agent::backends::NAMES.contains(&m.backend.as_str()) {
            return Err(InputError::new(path, format!("unknown backend `{}`; use openai, lexical, oracle, random or replay", m.backend))
                .field(format!("models[{i}].backend")));
        }
        match (m.backend == "replay", m.replay_file.as_mut()) {
            (true, None) => {
                return Err(InputError::new(path, "a replay model needs `replay_file` (the JSONL file of recorded answers)")
                    .field(format!("models[{i}].replay_file")));
            }
            (true, Some(p)) => {
                rebase(p);
                if m.name.is_empty() {
                    m.name = replay_label(p);
                }
            }
            (false, Some(_)) => {
                return Err(InputError::new(path, format!("`replay_file` is only for `backend = \"replay\"`, not `{}`", m.backend))
                    .field(format!("models[{i}].replay_file")));
            }
            (false, None) => {}
        }
        if m.is_openai() && m.model.is_none() {
            return Err(InputError::new(path, "an openai model needs `model` (the name the endpoint serves)").field(format!("models[{i}].model")));
        }
        if m.name.is_empty() {
            m.name = m.model.clone().unwrap_or_else(|| m.backend.clone());
        }
        if m.concurrency == 0 || m.max_attempts == 0 {
            return Err(InputError::new(path, "concurrency and max_attempts must be at least 1").field(format!("models[{i}]")));
        }
    }
    Ok(file)
}

/// Resolved defaults for what the file and flags leave open.
pub fn default_discovery() -> DiscoveryRule {
    DiscoveryRule::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ExperimentFile, InputError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("exp.toml");
        std::fs::write(&p, text).unwrap();
        load_experiment(&p)
    }

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let e = parse("trials = 2\n\n[[models]]\nname = \"x\"\nmodel = \"m\"\ntemprature = 0.2\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("temprature"));
        assert_eq!(e.line, Some(6));
    }

    #[test]
    fn wrong_types_are_errors() {
        let e = parse("trials = \"two\"\n").unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn models_get_defaults_and_labels() {
        let f = parse("[[models]]\nmodel = \"qwen\"\nbase_url = \"http://127.0.0.1:1/v1\"\n\n[[models]]\nbackend = \"lexical\"\n").unwrap();
        assert_eq!(f.models[0].name, "qwen");
        assert_eq!(f.models[0].api_key_env, "OPENAI_API_KEY");
        assert_eq!(f.models[0].concurrency, 8);
        assert!(!f.models[0].parse_text_calls);
        assert_eq!(f.models[1].name, "lexical");
        let e = parse("[[models]]\nbackend = \"gpt\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("models[0].backend"));
        let e = parse("[[models]]\nbase_url = \"http://x\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("models[0].model"));
    }

    #[test]
    fn replay_models_name_their_file_and_are_labelled_by_it() {
        let f = parse("[[models]]\nbackend = \"replay\"\nreplay_file = \"rec/gpt.jsonl\"\n").unwrap();
        assert_eq!(f.models[0].name, "replay:gpt");
        let file = f.models[0].replay_file.clone().unwrap();
        assert!(file.is_absolute() && file.ends_with("rec/gpt.jsonl"), "relative to the config file: {}", file.display());
        let e = parse("[[models]]\nbackend = \"lexical\"\nreplay_file = \"x.jsonl\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("models[0].replay_file"));
        let m = ModelSpec::from_flag("replay:answers/run1.jsonl").unwrap();
        assert_eq!((m.backend.as_str(), m.name.as_str()), ("replay", "replay:run1"));
        assert_eq!(m.replay_file.as_deref(), Some(Path::new("answers/run1.jsonl")));
        for bad in ["replay:", "replay", "gpt"] {
            assert_eq!(ModelSpec::from_flag(bad).unwrap_err().file, Path::new("--backends"), "{bad}");
        }
    }

    #[test]
    fn price_counts_cached_tokens_at_their_rate() {
        let p = Price { input_per_mtok: 2.0, output_per_mtok: 8.0, cached_input_per_mtok: Some(0.5) };
        let u = crate::protocol::Usage { prompt_tokens: 1_000_000, completion_tokens: 500_000, cached_tokens: 200_000 };
        assert!((p.cost(&u) - (0.8 * 2.0 + 0.2 * 0.5 + 0.5 * 8.0)).abs() < 1e-9);
    }
}
