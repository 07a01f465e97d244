//! The judge's settings: the experiment file's `[judge]` table, overridden by the `--judge*` flags
//! (a flag given wins, key by key), turned into a [`JudgeConfig`].

use super::prompts::PromptSet;
use super::{DEFAULT_CLAIM_THRESHOLD, DEFAULT_ROUNDS, JudgeConfig, MethodChoice};
use crate::agent::spec::{ModelSpec, Price};
use crate::error::InputError;
use crate::rules;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `[judge]` in the experiment file: the judge's endpoint (the keys of a model) and how it judges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeFile {
    /// Label of the judge's verdicts (default: the model name).
    pub name: Option<String>,
    #[serde(default, deserialize_with = "rules::name::de_opt")]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "rules::base_url::de_opt")]
    pub base_url: Option<String>,
    #[serde(default, deserialize_with = "rules::key_env::de_opt")]
    pub api_key_env: Option<String>,
    #[serde(default, deserialize_with = "rules::temperature::de_opt")]
    pub temperature: Option<f64>,
    #[serde(default, deserialize_with = "rules::max_tokens::de_opt")]
    pub max_tokens: Option<u32>,
    pub seed: Option<i64>,
    #[serde(default, deserialize_with = "rules::concurrency::de_opt")]
    pub concurrency: Option<usize>,
    #[serde(default, deserialize_with = "rules::per_minute::de_opt")]
    pub requests_per_minute: Option<f64>,
    #[serde(default, deserialize_with = "rules::timeout::de_opt")]
    pub request_timeout_s: Option<f64>,
    #[serde(default, deserialize_with = "rules::attempts::de_opt")]
    pub max_attempts: Option<u32>,
    #[serde(default, deserialize_with = "rules::delay::de_opt")]
    pub backoff_base_s: Option<f64>,
    pub price: Option<Price>,
    pub preflight: Option<bool>,
    /// Pass-rate rounds (default 3).
    #[serde(default, deserialize_with = "rules::rounds::de_opt")]
    pub rounds: Option<usize>,
    /// Coverage at which the claims method counts a task as done (default 0.75).
    #[serde(default, deserialize_with = "rules::claim_threshold::de_opt")]
    pub claim_threshold: Option<f64>,
    /// A directory of prompt templates replacing the built-in ones file by file.
    pub prompts: Option<PathBuf>,
    /// The method for every dataset: auto, pass-rate or claims.
    pub method: Option<String>,
    /// The method per dataset name (over `method`).
    #[serde(default)]
    pub methods: BTreeMap<String, String>,
}

/// The `--judge*` flags, as given (`None`: not given).
#[derive(Debug, Clone, Default)]
pub struct JudgeFlags {
    /// `MODEL` or `MODEL@BASE_URL`.
    pub judge: Option<String>,
    pub api_key_env: Option<String>,
    pub methods: Vec<(String, MethodChoice)>,
    pub rounds: Option<usize>,
    pub claim_threshold: Option<f64>,
    pub prompts: Option<PathBuf>,
    pub concurrency: Option<usize>,
    pub max_attempts: Option<u32>,
    pub temperature: Option<f64>,
    pub no_preflight: bool,
}

/// `MODEL[@BASE_URL]` split and checked (`flag` names the flag in errors). A URL alone is refused: it
/// would otherwise become a model named after the URL, asked on the default endpoint.
pub fn model_and_url(s: &str, flag: &str) -> Result<(String, Option<String>), InputError> {
    let (model, url) = match s.split_once('@') {
        Some((m, u)) => (m, Some(u)),
        None => (s, None),
    };
    if model.contains("://") {
        let example = if url.is_none() { s } else { "https://api.openai.com/v1" };
        return Err(InputError::new(
            flag,
            format!(
                "`{s}` names an endpoint but no model; write MODEL@BASE_URL, e.g. gpt-4o-mini@{example}"
            ),
        ));
    }
    let model =
        rules::name::parse(model).map_err(|m| InputError::new(flag, format!("model name: {m}")))?;
    let url = url
        .map(|u| {
            rules::base_url::parse(u).map_err(|m| InputError::new(flag, format!("base URL: {m}")))
        })
        .transpose()?;
    Ok((model, url))
}

/// The judge the file and flags describe, or `None` when neither names one. `base` is the directory
/// the file's relative paths are read from.
pub fn resolve(
    file: Option<&JudgeFile>,
    flags: &JudgeFlags,
    base: &std::path::Path,
) -> Result<Option<JudgeConfig>, InputError> {
    if file.is_none() && flags.judge.is_none() {
        // Every judge setting counts: one given without a judge would be silently ignored.
        let given = [
            ("--judge-method", !flags.methods.is_empty()),
            ("--judge-rounds", flags.rounds.is_some()),
            ("--claim-threshold", flags.claim_threshold.is_some()),
            ("--judge-prompts", flags.prompts.is_some()),
            ("--judge-api-key-env", flags.api_key_env.is_some()),
            ("--judge-concurrency", flags.concurrency.is_some()),
            ("--judge-max-attempts", flags.max_attempts.is_some()),
            ("--judge-temperature", flags.temperature.is_some()),
            ("--judge-no-preflight", flags.no_preflight),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, set)| *set) {
            return Err(InputError::new(
                *flag,
                "is a judge setting, but no judge is given: add --judge MODEL[@BASE_URL] (or a [judge] table)",
            ));
        }
        return Ok(None);
    }
    let f = file.cloned().unwrap_or_default();
    let mut spec = ModelSpec::baseline("openai");
    let (mut model, mut url) = (f.model.clone(), f.base_url.clone());
    if let Some(s) = &flags.judge {
        let (m, u) = model_and_url(s, "--judge")?;
        model = Some(m);
        if u.is_some() {
            url = u;
        }
    }
    let model = model.ok_or_else(|| {
        InputError::new(
            "[judge]",
            "the judge needs a model: `model = \"…\"` or --judge MODEL[@BASE_URL]",
        )
        .field("judge.model")
    })?;
    spec.name = f.name.clone().unwrap_or_else(|| model.clone());
    spec.model = Some(model);
    spec.base_url = url;
    if let Some(k) = flags.api_key_env.clone().or(f.api_key_env.clone()) {
        spec.api_key_env = k;
    }
    spec.temperature = flags.temperature.or(f.temperature);
    spec.max_tokens = f.max_tokens;
    spec.seed = f.seed;
    if let Some(c) = flags.concurrency.or(f.concurrency) {
        spec.concurrency = c;
    }
    spec.requests_per_minute = f.requests_per_minute;
    if let Some(t) = f.request_timeout_s {
        spec.request_timeout_s = t;
    }
    if let Some(a) = flags.max_attempts.or(f.max_attempts) {
        spec.max_attempts = a;
    }
    if let Some(b) = f.backoff_base_s {
        spec.backoff_base_s = b;
    }
    spec.price = f.price;
    spec.preflight = !flags.no_preflight && f.preflight.unwrap_or(true);
    let mut methods = BTreeMap::new();
    if let Some(m) = &f.method {
        methods.insert(
            "*".to_string(),
            MethodChoice::parse(m).ok_or_else(|| {
                InputError::new(
                    "[judge]",
                    format!("unknown method `{m}`; use auto, pass-rate or claims"),
                )
                .field("judge.method")
            })?,
        );
    }
    for (dataset, m) in &f.methods {
        let choice = MethodChoice::parse(m).ok_or_else(|| {
            InputError::new(
                "[judge]",
                format!("unknown method `{m}`; use auto, pass-rate or claims"),
            )
            .field(format!("judge.methods.{dataset}"))
        })?;
        methods.insert(dataset.clone(), choice);
    }
    for (dataset, choice) in &flags.methods {
        methods.insert(dataset.clone(), *choice);
    }
    let prompts_dir = flags.prompts.clone().or_else(|| {
        f.prompts.as_ref().map(|p| if p.is_relative() { base.join(p) } else { p.clone() })
    });
    Ok(Some(JudgeConfig {
        spec,
        rounds: flags.rounds.or(f.rounds).unwrap_or(DEFAULT_ROUNDS),
        claim_threshold: flags
            .claim_threshold
            .or(f.claim_threshold)
            .unwrap_or(DEFAULT_CLAIM_THRESHOLD),
        prompts: PromptSet::load(prompts_dir.as_deref())?,
        methods,
    }))
}

/// Check that every dataset named by a per-dataset method (`--judge-method DATASET=…`, the datasets in
/// `flags`; `[judge.methods]` in `file`, read from `file_path`) is one of the run's `datasets`: a
/// method for a dataset the run does not have would be silently ignored. The error names the flag or
/// the key and lists the datasets.
pub fn check_method_datasets<'a>(
    file: Option<&JudgeFile>,
    file_path: Option<&std::path::Path>,
    flags: impl IntoIterator<Item = &'a str>,
    datasets: &[String],
) -> Result<(), InputError> {
    let listed = || if datasets.is_empty() { "(none)".to_string() } else { datasets.join(", ") };
    let unknown = |d: &str| d != "*" && !datasets.iter().any(|n| n == d);
    for dataset in flags {
        if unknown(dataset) {
            return Err(InputError::new(
                "--judge-method",
                format!("`{dataset}` is not a dataset of this run; its datasets are: {}", listed()),
            ));
        }
    }
    for dataset in file.map(|f| f.methods.keys()).into_iter().flatten() {
        if unknown(dataset) {
            let at =
                file_path.map(std::path::Path::to_path_buf).unwrap_or_else(|| "[judge]".into());
            return Err(InputError::new(
                at,
                format!("`{dataset}` is not a dataset of this run; its datasets are: {}", listed()),
            )
            .field(format!("judge.methods.{dataset}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_the_model_spec_splits() {
        let file: JudgeFile = toml::from_str(
            "model = \"judge-a\"\nrounds = 5\nmethod = \"claims\"\n[methods]\nstb = \"pass-rate\"",
        )
        .unwrap();
        let flags = JudgeFlags {
            judge: Some("judge-b@http://127.0.0.1:9/v1".into()),
            rounds: Some(2),
            ..Default::default()
        };
        let c = resolve(Some(&file), &flags, std::path::Path::new(".")).unwrap().unwrap();
        assert_eq!(c.spec.model.as_deref(), Some("judge-b"));
        assert_eq!(c.spec.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(c.rounds, 2);
        assert_eq!(
            c.methods.get("*"),
            Some(&MethodChoice::Fixed(crate::record::judgement::Method::Claims))
        );
        assert_eq!(
            c.methods.get("stb"),
            Some(&MethodChoice::Fixed(crate::record::judgement::Method::PassRate))
        );
        assert!(
            resolve(None, &JudgeFlags::default(), std::path::Path::new(".")).unwrap().is_none()
        );
        let orphan = JudgeFlags { rounds: Some(2), ..Default::default() };
        assert!(
            resolve(None, &orphan, std::path::Path::new(".")).is_err(),
            "settings without a judge are a mistake"
        );
        assert!(toml::from_str::<JudgeFile>("claim_threshold = 1.5").is_err());
        assert!(toml::from_str::<JudgeFile>("modle = \"x\"").is_err(), "unknown keys are errors");
        assert!(
            toml::from_str::<JudgeFile>("rounds = 101").is_err(),
            "rounds are bounded (rules::MAX_ROUNDS)"
        );
    }

    #[test]
    fn every_judge_setting_without_a_judge_is_refused_naming_its_flag() {
        let base = std::path::Path::new(".");
        assert!(matches!(resolve(None, &JudgeFlags::default(), base), Ok(None)));
        let settings: Vec<(&str, JudgeFlags)> = vec![
            ("--judge-rounds", JudgeFlags { rounds: Some(2), ..Default::default() }),
            (
                "--judge-api-key-env",
                JudgeFlags { api_key_env: Some("JUDGE_KEY".into()), ..Default::default() },
            ),
            ("--judge-concurrency", JudgeFlags { concurrency: Some(2), ..Default::default() }),
            ("--judge-max-attempts", JudgeFlags { max_attempts: Some(2), ..Default::default() }),
            ("--judge-temperature", JudgeFlags { temperature: Some(0.5), ..Default::default() }),
            ("--judge-no-preflight", JudgeFlags { no_preflight: true, ..Default::default() }),
        ];
        for (flag, flags) in settings {
            let e = resolve(None, &flags, base).unwrap_err();
            assert_eq!(e.file, std::path::PathBuf::from(flag), "{e}");
        }
    }

    #[test]
    fn an_endpoint_without_a_model_is_refused_in_every_spelling() {
        for url in [
            "http://host/v1",
            "https://api.openai.com/v1",
            "http://127.0.0.1:8080/v1",
            "HTTP://host/v1",
        ] {
            let e = model_and_url(url, "--judge").unwrap_err();
            assert!(e.message.contains("MODEL@BASE_URL"), "{url}: {e}");
            let e = model_and_url(&format!("{url}@{url}"), "--judge").unwrap_err();
            assert!(e.message.contains("no model"), "{url}: {e}");
        }
        assert_eq!(
            model_and_url("gpt-4o@http://h/v1", "--judge").unwrap(),
            ("gpt-4o".to_string(), Some("http://h/v1".to_string()))
        );
        // Model names with a slash (as vLLM serves them) stay models.
        assert_eq!(
            model_and_url("Qwen/Qwen2.5-7B-Instruct", "--judge").unwrap().0,
            "Qwen/Qwen2.5-7B-Instruct"
        );
    }

    #[test]
    fn methods_for_datasets_the_run_does_not_have_are_refused() {
        let runs = vec!["starter".to_string(), "bfcl".to_string()];
        let file: JudgeFile = toml::from_str(
            "model = \"j\"\n[methods]\nstarter = \"claims\"\nstartr = \"pass-rate\"",
        )
        .unwrap();
        let e =
            check_method_datasets(Some(&file), Some(std::path::Path::new("exp.toml")), [], &runs)
                .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("judge.methods.startr"));
        assert!(e.message.contains("starter, bfcl"), "{e}");
        let e = check_method_datasets(None, None, ["nosuch", "*"], &runs).unwrap_err();
        assert_eq!(e.file, std::path::Path::new("--judge-method"));
        check_method_datasets(None, None, ["bfcl", "*"], &runs).unwrap();
    }
}
