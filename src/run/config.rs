//! Experiment configuration: a TOML file describing the matrix, overridden by command-line flags.
//!
//! Precedence (highest first): command-line flags, the `--config` file, built-in defaults. Unknown keys
//! are errors that name the key and its line, so a typo never silently falls back to a default.

use crate::agent::backends::LexicalConfig;
pub use crate::agent::spec::{DEFAULT_BREAKER, ModelSpec, Price};
use crate::error::InputError;
use crate::layout::DiscoveryRule;
use crate::rules;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `--config` file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    pub datasets: Option<Vec<PathBuf>>,
    pub catalogs: Option<Vec<PathBuf>>,
    pub variants: Option<Vec<String>>,
    pub layouts: Option<Vec<String>>,
    #[serde(default, deserialize_with = "rules::trials::de_opt")]
    pub trials: Option<usize>,
    pub seed: Option<u64>,
    #[serde(default, deserialize_with = "rules::at_least_one::de_opt")]
    pub max_steps: Option<usize>,
    /// See `--repeat-limit`.
    #[serde(default, deserialize_with = "rules::repeat_limit::de_opt")]
    pub repeat_limit: Option<usize>,
    pub out: Option<PathBuf>,
    pub run_id: Option<String>,
    pub cache_dir: Option<PathBuf>,
    pub discovery: Option<DiscoveryRule>,
    pub lexical: Option<LexicalConfig>,
    /// Tool-count curve levels (see `--distractors`).
    #[serde(default, deserialize_with = "rules::levels::de_opt")]
    pub distractors: Option<Vec<usize>>,
    /// Task subset (see `--tasks`, `--filter`, `--sample`, `--limit` and [`super::subset`]).
    #[serde(default, deserialize_with = "rules::task_patterns::de_opt")]
    pub tasks: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::run::subset::filters::de_opt")]
    pub filter: Option<Vec<String>>,
    #[serde(default, deserialize_with = "rules::at_least_one::de_opt")]
    pub sample: Option<usize>,
    #[serde(default, deserialize_with = "rules::at_least_one::de_opt")]
    pub limit: Option<usize>,
    /// Where executed calls run: `["simulated"]` (the default), `["live"]` (every catalog's real
    /// server), or per catalog (`["files=live"]`). See `--execute`.
    pub execute: Option<Vec<String>>,
    /// Live-run settings (policy, limits); see `--allow-destructive` and docs/mcp.md.
    pub live: Option<super::live::LiveOptions>,
    /// The judge of final answers (see `--judge` and docs/judge.md).
    pub judge: Option<crate::judge::config::JudgeFile>,
    #[serde(default)]
    pub models: Vec<ModelSpec>,
}

/// Parse an experiment file; errors name the file, line and key. Relative paths in the file are
/// resolved against the file's directory.
pub fn load_experiment(path: &Path) -> Result<ExperimentFile, InputError> {
    let text = crate::error::read_text(path, "config")?;
    let mut file: ExperimentFile = toml::from_str(&text).map_err(|e| {
        let start = e.span().map(|s| s.start.min(text.len()));
        let line = start.map(|s| text[..s].matches('\n').count() + 1);
        // A bad value names its key (`models[0].concurrency`); an unknown key is named by the message.
        let key = start
            .and_then(|s| key_path_at(&text, s))
            .or_else(|| e.message().split('`').nth(1).map(String::from));
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
    // Which models name their key variable (the default depends on the backend).
    let raw: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Boolean(false));
    for (i, m) in file.models.iter_mut().enumerate() {
        if !crate::agent::backends::NAMES.contains(&m.backend.as_str()) {
            return Err(InputError::new(
                path,
                format!(
                    "unknown backend `{}`; choose from {}",
                    m.backend,
                    crate::agent::backends::names_help()
                ),
            )
            .field(format!("models[{i}].backend")));
        }
        m.settle_key_env(raw.get("models").and_then(|v| v.get(i)?.get("api_key_env")).is_some());
        match (m.backend == "replay", m.replay_file.as_mut()) {
            (true, None) => {
                return Err(InputError::new(
                    path,
                    "a replay model needs `replay_file` (the JSONL file of recorded answers)",
                )
                .field(format!("models[{i}].replay_file")));
            }
            (true, Some(p)) => {
                rebase(p);
                if m.name.is_empty() {
                    m.name = crate::agent::spec::replay_label(p);
                }
            }
            (false, Some(_)) => {
                return Err(InputError::new(
                    path,
                    format!(
                        "`replay_file` is only for `backend = \"replay\"`, not `{}`",
                        m.backend
                    ),
                )
                .field(format!("models[{i}].replay_file")));
            }
            (false, None) => {}
        }
        if m.is_endpoint() && m.model.is_none() {
            return Err(InputError::new(
                path,
                format!("an {} model needs `model` (the name the endpoint serves)", m.backend),
            )
            .field(format!("models[{i}].model")));
        }
        if m.name.is_empty() {
            m.name = m.model.clone().unwrap_or_else(|| m.backend.clone());
        }
    }
    Ok(file)
}

/// The dotted path of the key whose value starts at byte `at` (`models[1].price.input_per_mtok`), or
/// `None` when `at` is not right after `key =`. A light reading of the TOML text: table headers,
/// `[[models]]` counted for the index, inline tables on the value's line.
fn key_path_at(text: &str, at: usize) -> Option<String> {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let assignment =
        regex::Regex::new(r#"([A-Za-z0-9_-]+|"[^"]*")\s*=\s*(\{\s*)?"#).expect("regex");
    let on_line = &before[line_start..];
    // Inline tables opened on the line, then the key right before the value.
    let mut keys: Vec<String> = Vec::new();
    let mut last: Option<(String, usize, bool)> = None;
    for c in assignment.captures_iter(on_line) {
        let key = c[1].trim_matches('"').to_string();
        let opens = c.get(2).is_some();
        if opens {
            keys.push(key.clone());
        }
        last = Some((key, c.get(0).map_or(0, |m| m.end()), opens));
    }
    match last {
        // Right after `key =`: a value of that key (right after `key = {` is a key, not a value).
        Some((key, end, false)) if end == on_line.len() => keys.push(key),
        _ => return None,
    }
    let mut table = String::new();
    let mut models = 0usize;
    for l in before[..line_start].lines() {
        let l = l.trim();
        if let Some(h) = l.strip_prefix("[[").and_then(|h| h.split("]]").next()) {
            let h = h.trim();
            if h == "models" {
                models += 1;
            }
            table = if h == "models" {
                format!("models[{}]", models.saturating_sub(1))
            } else {
                h.to_string()
            };
        } else if let Some(h) = l.strip_prefix('[').and_then(|h| h.split(']').next()) {
            let h = h.trim();
            table = match h.strip_prefix("models.") {
                Some(rest) => format!("models[{}].{rest}", models.saturating_sub(1)),
                None => h.to_string(),
            };
        }
    }
    let tail = keys.join(".");
    Some(if table.is_empty() { tail } else { format!("{table}.{tail}") })
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
        let e = parse("trials = 2\n\n[[models]]\nname = \"x\"\nmodel = \"m\"\ntemprature = 0.2\n")
            .unwrap_err();
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
        let f =
            parse("[[models]]\nbackend = \"replay\"\nreplay_file = \"rec/gpt.jsonl\"\n").unwrap();
        assert_eq!(f.models[0].name, "replay:gpt");
        let file = f.models[0].replay_file.clone().unwrap();
        assert!(
            file.is_absolute() && file.ends_with("rec/gpt.jsonl"),
            "relative to the config file: {}",
            file.display()
        );
        let e =
            parse("[[models]]\nbackend = \"lexical\"\nreplay_file = \"x.jsonl\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("models[0].replay_file"));
        let m = ModelSpec::from_flag("replay:answers/run1.jsonl").unwrap();
        assert_eq!((m.backend.as_str(), m.name.as_str()), ("replay", "replay:run1"));
        assert_eq!(m.replay_file.as_deref(), Some(Path::new("answers/run1.jsonl")));
        for bad in ["replay:", "replay", "gpt"] {
            assert_eq!(
                ModelSpec::from_flag(bad).unwrap_err().file,
                Path::new("--backends"),
                "{bad}"
            );
        }
    }

    #[test]
    fn out_of_range_values_name_their_key_and_line() {
        let base = "trials = 2\n\n[[models]]\nbackend = \"lexical\"\n\n[[models]]\nmodel = \"m\"\n";
        for (extra, key, line) in [
            ("concurrency = 0", "models[1].concurrency", 8),
            ("max_attempts = 0", "models[1].max_attempts", 8),
            ("request_timeout_s = 0", "models[1].request_timeout_s", 8),
            ("episode_timeout_s = -1.5", "models[1].episode_timeout_s", 8),
            ("tool_choice = \"sometimes\"", "models[1].tool_choice", 8),
            ("base_url = \"notaurl\"", "models[1].base_url", 8),
            ("temperature = 2.5", "models[1].temperature", 8),
            ("max_tokens = 0", "models[1].max_tokens", 8),
            ("requests_per_minute = 0", "models[1].requests_per_minute", 8),
            ("backoff_base_s = -1", "models[1].backoff_base_s", 8),
            (
                "price = { input_per_mtok = 1, output_per_mtok = -2 }",
                "models[1].price.output_per_mtok",
                8,
            ),
            (
                "[models.price]\ninput_per_mtok = -1\noutput_per_mtok = 0",
                "models[1].price.input_per_mtok",
                9,
            ),
        ] {
            let e = parse(&format!("{base}{extra}\n")).unwrap_err();
            assert_eq!((e.field.as_deref(), e.line), (Some(key), Some(line)), "{extra}: {e}");
        }
        for (text, key, line) in [
            ("seed = 1\ntrials = 0\n", "trials", 2),
            // Upper bounds (rules::MAX_TRIALS, MAX_DISTRACTORS): a limit above them is refused, never clamped.
            ("seed = 1\ntrials = 1001\n", "trials", 2),
            ("distractors = [0, 1000001]\n", "distractors", 1),
            ("max_steps = 0\n", "max_steps", 1),
            ("seed = 1\nrepeat_limit = 1\n", "repeat_limit", 2),
            ("distractors = [0, 10, 10]\n", "distractors", 1),
            ("[lexical]\nservers_to_discover = 0\n", "lexical.servers_to_discover", 2),
            ("seed = 3\nsample = 0\n", "sample", 2),
            ("limit = 0\n", "limit", 1),
            ("tasks = []\n", "tasks", 1),
            ("tasks = [\"dev-*\", \"\"]\n", "tasks", 1),
            ("trials = 1\nfilter = [\"kind=single\", \"colour=red\"]\n", "filter", 2),
            ("filter = [\"kind=singel\"]\n", "filter", 1),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!((e.field.as_deref(), e.line), (Some(key), Some(line)), "{text}: {e}");
        }
        // Unknown keys in the nested tables are errors too, and partial tables keep the other defaults.
        assert_eq!(
            parse("[lexical]\nmin_overlp = 3\n").unwrap_err().field.as_deref(),
            Some("min_overlp")
        );
        let f = parse("[discovery]\nactions_max = 5\n").unwrap();
        assert_eq!(f.discovery.unwrap(), DiscoveryRule { full_details_max: 3, actions_max: 5 });
    }

    #[test]
    fn subset_keys_are_read_and_normalized() {
        let f = parse("tasks = [\"dev-*\", \"safe-00?\"]\nfilter = [\"kind = single\", \"tag=enum\"]\nsample = 24\nlimit = 10\n").unwrap();
        assert_eq!(f.tasks.unwrap(), ["dev-*", "safe-00?"]);
        assert_eq!(f.filter.unwrap(), ["kind=single", "tag=enum"]);
        assert_eq!((f.sample, f.limit), (Some(24), Some(10)));
        let e = parse("filter = [\"colour=red\"]\n").unwrap_err();
        assert!(e.message.contains("kind, category, tag"), "{e}");
    }

    #[test]
    fn price_counts_cached_tokens_at_their_rate() {
        let p =
            Price { input_per_mtok: 2.0, output_per_mtok: 8.0, cached_input_per_mtok: Some(0.5) };
        let u = crate::protocol::Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
            cached_tokens: 200_000,
            ..Default::default()
        };
        assert!((p.cost(&u) - (0.8 * 2.0 + 0.2 * 0.5 + 0.5 * 8.0)).abs() < 1e-9);
    }
}
