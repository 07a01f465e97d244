//! The settings of a run ([`RunConfig`]) and the part of them that decides its trials
//! ([`MatrixSettings`], hashed into `run.json`'s `matrix_hash`).
//!
//! A run resumes, and shards merge, only with the same matrix hash. The hash is of a struct built by
//! destructuring every field of [`RunConfig`] and [`ModelSpec`] with no `..`: a new setting does not
//! compile until it is placed on one side (it changes the trials, or it is a runtime knob such as
//! concurrency, limits or the cache), so no knob can enter or leave the hash by omission. The struct
//! serialises exactly as the runner's earlier hash input did (fields in the same order, left out at
//! the same defaults), so runs started by earlier versions keep their hash.

use super::{live, subset};
use crate::agent::backends::LexicalConfig;
use crate::error::InputError;
use crate::layout::flat::stable_hash;
use crate::layout::{DiscoveryRule, LayoutKind};
use anyhow::Result;
use serde::Serialize;
use std::path::PathBuf;

pub use super::config::ModelSpec;

/// The bundled suite by its relative name wherever it was read from (`run.json`, the matrix hash), so a
/// run from an empty directory records, and resumes under, what a run from a checkout does.
fn logical_paths<S: serde::Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(paths.iter().map(|p| crate::bundle::logical(p)))
}

/// Everything that defines a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    #[serde(serialize_with = "logical_paths")]
    pub catalogs: Vec<PathBuf>,
    #[serde(serialize_with = "logical_paths")]
    pub datasets: Vec<PathBuf>,
    pub variants: Vec<String>,
    pub layouts: Vec<LayoutKind>,
    pub models: Vec<ModelSpec>,
    pub trials: usize,
    pub seed: u64,
    pub max_steps: usize,
    /// Stop an episode when the model makes the same calls in this many turns in a row (0: never).
    /// Left out of the record at its default, so runs started before it existed keep their matrix hash.
    #[serde(skip_serializing_if = "is_default_repeat_limit")]
    pub repeat_limit: usize,
    pub discovery: DiscoveryRule,
    pub lexical: LexicalConfig,
    /// On-disk response cache for endpoints (`None`: no cache).
    pub cache_dir: Option<PathBuf>,
    /// Tool-count curve: for each level N, every task sees its gold tools plus N distractors drawn
    /// (seeded, nested: a level's distractors include the smaller levels') from the rest of its catalog.
    /// The level is part of the variant label (`good@50`). Empty: tasks see the whole catalog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distractors: Vec<usize>,
    /// The tasks run of each dataset ([`subset`]); left out of the matrix hash when empty, so full runs
    /// keep the hash they had before subsets existed.
    #[serde(default, skip_serializing_if = "subset::Subset::is_empty")]
    pub subset: subset::Subset,
    /// Where executed calls run, per catalog ([`ExecuteMode`]); empty: all simulated. Left out of the
    /// record when empty, so simulated runs keep their matrix hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub execute: Vec<String>,
    /// Live-run policy and limits; left out at their defaults.
    #[serde(default, skip_serializing_if = "live::LiveOptions::is_default")]
    pub live: live::LiveOptions,
}

/// Whether a catalog's calls run on its real server: `execute` entries are `live`, `simulated` (for
/// every catalog) or `<catalog>=live|simulated`; a catalog's own entry wins.
pub fn executes_live(execute: &[String], catalog: &str) -> Result<bool> {
    let mut all = false;
    let mut own = None;
    for entry in execute {
        let (name, mode) = match entry.split_once('=') {
            Some((n, m)) => (Some(n), m),
            None => (None, entry.as_str()),
        };
        let live = match mode {
            "live" => true,
            "simulated" => false,
            other => {
                return Err(InputError::new(
                    "--execute",
                    format!("unknown execution `{other}`; use simulated, live or <catalog>=live"),
                )
                .into());
            }
        };
        match name {
            Some(n) if n == catalog => own = Some(live),
            Some(_) => {}
            None => all = live,
        }
    }
    Ok(own.unwrap_or(all))
}

fn is_default_repeat_limit(n: &usize) -> bool {
    *n == crate::agent::DEFAULT_REPEAT_LIMIT
}

impl RunConfig {
    /// Hash of what decides the trials ([`MatrixSettings`]), so a run can be resumed with other
    /// limits but not with another matrix.
    pub fn matrix_hash(&self) -> String {
        let mut settings = match serde_json::to_value(MatrixSettings::of(self)) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        // Earlier versions hashed the whole config less `cache_dir` (right after `lexical`), removed
        // with a swap that moved the last field into its place; the same order keeps their hashes, so
        // their runs still resume.
        let after_lexical =
            settings.keys().position(|k| k == "lexical").map_or(settings.len(), |p| p + 1);
        if settings.len() > after_lexical + 1
            && let Some(last) = settings.keys().next_back().cloned()
            && let Some(value) = settings.shift_remove(&last)
        {
            settings.shift_insert(after_lexical, last, value);
        }
        let json = serde_json::Value::Object(settings).to_string();
        format!("{:016x}", stable_hash(json.as_bytes()))
    }
}

/// The settings that decide which trials a run has and what each does.
#[derive(Debug, Serialize)]
pub struct MatrixSettings {
    catalogs: Vec<PathBuf>,
    datasets: Vec<PathBuf>,
    variants: Vec<String>,
    layouts: Vec<LayoutKind>,
    models: Vec<ModelSettings>,
    trials: usize,
    seed: u64,
    max_steps: usize,
    #[serde(skip_serializing_if = "is_default_repeat_limit")]
    repeat_limit: usize,
    discovery: DiscoveryRule,
    lexical: LexicalConfig,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    distractors: Vec<usize>,
    #[serde(skip_serializing_if = "subset::Subset::is_empty")]
    subset: subset::Subset,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    execute: Vec<String>,
    #[serde(skip_serializing_if = "live::LiveOptions::is_default")]
    live: live::LiveOptions,
}

impl MatrixSettings {
    pub fn of(config: &RunConfig) -> MatrixSettings {
        let RunConfig {
            catalogs,
            datasets,
            variants,
            layouts,
            models,
            trials,
            seed,
            max_steps,
            repeat_limit,
            discovery,
            lexical,
            // Where responses are cached changes how fast a run is, not what it computes.
            cache_dir: _,
            distractors,
            subset,
            execute,
            live,
        } = config;
        let named = |paths: &[PathBuf]| paths.iter().map(|p| crate::bundle::logical(p)).collect();
        MatrixSettings {
            catalogs: named(catalogs),
            datasets: named(datasets),
            variants: variants.clone(),
            layouts: layouts.clone(),
            models: models.iter().map(ModelSettings::of).collect(),
            trials: *trials,
            seed: *seed,
            max_steps: *max_steps,
            repeat_limit: *repeat_limit,
            discovery: *discovery,
            lexical: *lexical,
            distractors: distractors.clone(),
            subset: subset.clone(),
            execute: execute.clone(),
            live: live.clone(),
        }
    }
}

/// What of a model decides its trials: which model, how it is asked and sampled.
#[derive(Debug, Serialize)]
struct ModelSettings {
    name: String,
    backend: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay_digest: Option<String>,
    #[serde(serialize_with = "crate::rules::base_url::display")]
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: String,
    temperature: Option<f64>,
    top_p: Option<f64>,
    seed: Option<i64>,
    max_tokens: Option<u32>,
    tool_choice: Option<String>,
    parallel_tool_calls: Option<bool>,
    parse_text_calls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_search: Option<String>,
    /// Left out when off, so the hashes of runs written before the option stay as they were.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    namespaces: bool,
}

impl ModelSettings {
    fn of(m: &ModelSpec) -> ModelSettings {
        let ModelSpec {
            name,
            backend,
            agent_command,
            replay_file,
            replay_digest,
            base_url,
            model,
            api_key_env,
            temperature,
            top_p,
            seed,
            max_tokens,
            tool_choice,
            parallel_tool_calls,
            parse_text_calls,
            tool_search,
            namespaces,
            // Runtime knobs: how fast and how patiently the endpoint is asked, what it costs, when the
            // run gives up on it. A run may resume with other values.
            concurrency: _,
            requests_per_minute: _,
            tokens_per_minute: _,
            request_timeout_s: _,
            episode_timeout_s: _,
            max_attempts: _,
            backoff_base_s: _,
            max_retry_after_s: _,
            price: _,
            preflight: _,
            breaker: _,
            // Read only by the check before the run: it never changes what a trial sends.
            context_window: _,
            provider_limits: _,
        } = m;
        ModelSettings {
            name: name.clone(),
            backend: backend.clone(),
            agent_command: agent_command.clone(),
            replay_file: replay_file.clone(),
            replay_digest: replay_digest.clone(),
            base_url: base_url.clone(),
            model: model.clone(),
            api_key_env: api_key_env.clone(),
            temperature: *temperature,
            top_p: *top_p,
            seed: *seed,
            max_tokens: *max_tokens,
            tool_choice: tool_choice.clone(),
            parallel_tool_calls: *parallel_tool_calls,
            parse_text_calls: *parse_text_calls,
            tool_search: tool_search.clone(),
            namespaces: *namespaces,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> RunConfig {
        RunConfig {
            catalogs: vec!["registries/workspace".into()],
            datasets: vec!["datasets/starter.jsonl".into()],
            variants: vec!["good".into()],
            layouts: vec![LayoutKind::Flat],
            models: vec![ModelSpec::baseline("lexical"), ModelSpec::baseline("random")],
            trials: 1,
            seed: 0,
            max_steps: 8,
            repeat_limit: crate::agent::DEFAULT_REPEAT_LIMIT,
            discovery: DiscoveryRule::default(),
            lexical: LexicalConfig::default(),
            cache_dir: None,
            distractors: vec![],
            subset: Default::default(),
            execute: vec![],
            live: Default::default(),
        }
    }

    #[test]
    fn runs_of_the_previous_version_keep_their_hash() {
        // Hashes the previous toolpick (before `MatrixSettings`) wrote into run.json for
        // `run --variants good --layouts flat --backends lexical,random [--distractors 0,5 --sample 5]`.
        let mut c = config();
        c.cache_dir = Some("/tmp/meta-ref/g/.cache".into());
        c.distractors = vec![0, 5];
        c.subset.sample = Some(5);
        assert_eq!(c.matrix_hash(), "b37c2d038332981d");
    }

    #[test]
    fn runtime_knobs_leave_the_hash_and_matrix_settings_change_it() {
        let base = config().matrix_hash();
        let mut c = config();
        c.cache_dir = Some("/elsewhere".into());
        c.models[1].concurrency = 64;
        c.models[1].request_timeout_s = 5.0;
        c.models[1].breaker = 0;
        c.models[1].preflight = false;
        c.models[1].price = Some(crate::agent::spec::Price {
            input_per_mtok: 1.0,
            output_per_mtok: 2.0,
            cached_input_per_mtok: None,
        });
        assert_eq!(c.matrix_hash(), base, "runtime knobs");
        let changes: [fn(&mut RunConfig); 6] = [
            |c| c.seed = 1,
            |c| c.trials = 2,
            |c| c.models[1].temperature = Some(0.5),
            |c| c.models[1].model = Some("other".into()),
            |c| c.distractors = vec![5],
            |c| c.repeat_limit = 0,
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut c = config();
            change(&mut c);
            assert_ne!(c.matrix_hash(), base, "change {i}");
        }
    }
}
