//! The judge's flags (`run`, `report`, `judge-check`) and `toolpick judge-check`.

use super::runtime;
use crate::judge::config::{JudgeFile, JudgeFlags, resolve};
use crate::judge::{JudgeConfig, MethodChoice};
use crate::rules;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Judge final answers (flags over the experiment file's `[judge]`).
#[derive(Args, Debug, Default)]
pub struct JudgeArgs {
    /// Judge every trial's final answer with this model: MODEL or MODEL@BASE_URL (any OpenAI-compatible
    /// endpoint, e.g. gpt-4o-mini@https://api.openai.com/v1). Verdicts go to judgements.jsonl.
    #[arg(long, value_name = "MODEL[@URL]")]
    pub judge: Option<String>,
    /// Environment variable holding the judge's API key (default OPENAI_API_KEY).
    #[arg(long, value_parser = rules::key_env::FLAG, value_name = "VAR")]
    pub judge_api_key_env: Option<String>,
    /// The judge's method, for every dataset or one: [DATASET=]auto|pass-rate|claims (repeatable).
    /// auto: claims when the task has claims, else pass-rate.
    #[arg(long, value_parser = crate::judge::parse_method_flag, value_name = "[DATASET=]METHOD")]
    pub judge_method: Vec<(String, MethodChoice)>,
    /// Pass-rate rounds per answer (1 to 100; default 3).
    #[arg(long, value_parser = rules::rounds::parse, value_name = "N")]
    pub judge_rounds: Option<usize>,
    /// Claim coverage at which a task counts as done (more than 0, at most 1; default 0.75).
    #[arg(long, allow_negative_numbers = true, value_parser = rules::claim_threshold::parse, value_name = "X")]
    pub claim_threshold: Option<f64>,
    /// Directory of prompt templates replacing the built-in ones file by file (answer_status.txt,
    /// task_solved.txt, claim.txt, give_up.txt).
    #[arg(long, value_name = "DIR")]
    pub judge_prompts: Option<PathBuf>,
    /// Judge requests in flight at once (default 8).
    #[arg(long, value_parser = rules::concurrency::parse, value_name = "N")]
    pub judge_concurrency: Option<usize>,
    /// Attempts per judge request, the first included (default 5).
    #[arg(long, value_parser = rules::attempts::parse, value_name = "N")]
    pub judge_max_attempts: Option<u32>,
    /// The judge's sampling temperature (default: the endpoint's).
    #[arg(long, allow_negative_numbers = true, value_parser = rules::temperature::parse)]
    pub judge_temperature: Option<f64>,
    /// Skip the check of the judge's endpoint before judging.
    #[arg(long)]
    pub judge_no_preflight: bool,
}

impl JudgeArgs {
    fn flags(&self) -> JudgeFlags {
        JudgeFlags {
            judge: self.judge.clone(),
            api_key_env: self.judge_api_key_env.clone(),
            methods: self.judge_method.clone(),
            rounds: self.judge_rounds,
            claim_threshold: self.claim_threshold,
            prompts: self.judge_prompts.clone(),
            concurrency: self.judge_concurrency,
            max_attempts: self.judge_max_attempts,
            temperature: self.judge_temperature,
            no_preflight: self.judge_no_preflight,
        }
    }

    /// The judge the flags and the file's `[judge]` describe (`None`: no judge).
    pub fn config(&self, file: Option<&JudgeFile>, base: &Path) -> Result<Option<JudgeConfig>> {
        Ok(resolve(file, &self.flags(), base)?)
    }
}

/// Judge the run in `dir` (the caller holds its lock) and say what was done.
pub fn judge_run(
    dir: &Path,
    config: &JudgeConfig,
    cache: Option<PathBuf>,
    retry_errors: bool,
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    let cache = cache.map(|c| Arc::new(crate::agent::cache::Cache::new(c)));
    let started = std::time::Instant::now();
    let o = rt.block_on(crate::judge::pass::judge_run(dir, config, cache, retry_errors))?;
    outln!(
        "judged {} trials with {} ({} kept from before, {} not asked: empty or given-up answers), {} judge errors, judge tokens {} prompt / {} completion{}, {:.2} s",
        o.judged,
        config.spec.name,
        o.kept,
        o.short_circuited,
        o.errors,
        o.usage.prompt_tokens,
        o.usage.completion_tokens,
        if o.cost_usd > 0.0 { format!(", ${:.4}", o.cost_usd) } else { String::new() },
        started.elapsed().as_secs_f64()
    );
    if o.errors > 0 {
        crate::messages::note(format_args!(
            "{} judgements failed (see judge_error in trials.csv); judge them again with --retry-errors",
            o.errors
        ));
    }
    Ok(())
}

/// `toolpick judge-check`: a labelled set of answers judged, agreement reported.
#[derive(Args)]
pub struct JudgeCheckArgs {
    /// Labels (JSONL): {"id", "task", "answer", "human": "solved"|"unsolved"}, e.g. datasets/judge/labels.jsonl.
    labels: PathBuf,
    /// The dataset the labels' task ids refer to. Default: the bundled datasets/starter.jsonl.
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// Experiment file whose `[judge]` table configures the judge (flags override it).
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    judge: JudgeArgs,
    /// A second judge (MODEL[@URL], otherwise the same settings): both are scored against the labels
    /// and against each other.
    #[arg(long, value_name = "MODEL[@URL]")]
    judge_b: Option<String>,
    /// Response cache directory (default reports/.cache).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Do not read or write the response cache.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
    /// Write every verdict and the agreement figures here (JSON).
    #[arg(long, short)]
    out: Option<PathBuf>,
}

fn kappa_text(a: &crate::judge::check::Agreement) -> String {
    match a.kappa {
        Some((k, lo, hi)) => format!("{k:.3} [{lo:.3}, {hi:.3}]"),
        None => "undefined (one verdict throughout)".into(),
    }
}

fn print_agreement(title: &str, a: &crate::judge::check::Agreement, first: &str, second: &str) {
    outln!(
        "{title}: n {}, accuracy {}, Cohen's κ {}",
        a.n,
        crate::report::pct(a.accuracy),
        kappa_text(a)
    );
    outln!("  {:<22} {:>14} {:>14}", format!("{first} \\ {second}"), "done", "not done");
    outln!("  {:<22} {:>14} {:>14}", "solved/done", a.confusion[0][0], a.confusion[0][1]);
    outln!("  {:<22} {:>14} {:>14}", "unsolved/not done", a.confusion[1][0], a.confusion[1][1]);
}

pub fn cmd_judge_check(args: JudgeCheckArgs) -> Result<()> {
    let file = match &args.config {
        Some(p) => crate::run::config::load_experiment(p)?,
        None => Default::default(),
    };
    let base = args.config.as_deref().and_then(Path::parent).unwrap_or(Path::new("."));
    let config = args.judge.config(file.judge.as_ref(), base)?.ok_or_else(|| {
        crate::error::InputError::new(
            "--judge",
            "judge-check needs a judge: --judge MODEL[@BASE_URL] (or a [judge] table in --config)",
        )
    })?;
    // The second judge is checked before the first is asked anything.
    let judge_b = args
        .judge_b
        .as_deref()
        .map(|b| crate::judge::config::model_and_url(b, "--judge-b"))
        .transpose()?;
    if let Some(p) = &args.out {
        super::preflight::output_file("--out", p)?;
    }
    if let (Some(dir), false) = (&args.cache_dir, args.no_cache) {
        super::preflight::output_dir("--cache-dir", dir)?;
    }
    let dataset_path =
        args.dataset.clone().unwrap_or_else(|| super::bundled("datasets/starter.jsonl"));
    let dataset = crate::dataset::load_dataset(&dataset_path)?;
    crate::judge::config::check_method_datasets(
        file.judge.as_ref(),
        args.config.as_deref(),
        args.judge.judge_method.iter().map(|(d, _)| d.as_str()),
        std::slice::from_ref(&dataset.name),
    )?;
    let labels = crate::judge::check::load_labels(&args.labels, &dataset)?;
    let cache = if args.no_cache {
        None
    } else {
        Some(Arc::new(crate::agent::cache::Cache::new(
            args.cache_dir.clone().unwrap_or_else(|| PathBuf::from(super::DEFAULT_CACHE)),
        )))
    };
    let rt = runtime(None)?;
    let solved = labels.iter().filter(|l| l.human == crate::judge::check::Human::Solved).count();
    outln!(
        "{} labelled answers ({} solved, {} unsolved) on {}",
        labels.len(),
        solved,
        labels.len() - solved,
        dataset_path.display()
    );
    let a =
        rt.block_on(crate::judge::check::judge_labels(&labels, &dataset, &config, cache.clone()))?;
    print_agreement(
        &format!("judge {} (prompts {}) vs humans", a.judge, a.prompts),
        &a.agreement,
        "humans",
        "judge",
    );
    if a.errors > 0 {
        outln!("  {} judgements failed (left out of the figures)", a.errors);
    }
    let mut out =
        serde_json::json!({"labels": args.labels, "dataset": dataset_path, "judges": [&a]});
    if let Some((model, url)) = judge_b {
        let mut second = config.clone();
        second.spec.name = model.clone();
        second.spec.model = Some(model);
        if url.is_some() {
            second.spec.base_url = url;
        }
        let bv =
            rt.block_on(crate::judge::check::judge_labels(&labels, &dataset, &second, cache))?;
        print_agreement(
            &format!("judge {} vs humans", bv.judge),
            &bv.agreement,
            "humans",
            "judge B",
        );
        let first: Vec<Option<bool>> = a.judgements.iter().map(|j| j.done).collect();
        let other: Vec<Option<bool>> = bv.judgements.iter().map(|j| j.done).collect();
        let between = crate::judge::check::agreement(&first, &other);
        print_agreement(
            &format!("judge {} vs judge {}", a.judge, bv.judge),
            &between,
            "judge A",
            "judge B",
        );
        out["judges"] = serde_json::json!([&a, &bv]);
        out["between_judges"] = serde_json::json!(between);
    }
    if let Some(path) = &args.out {
        let mut bytes = serde_json::to_vec_pretty(&out)?;
        bytes.push(b'\n');
        crate::files::write_atomic(path, &bytes)?;
        outln!("verdicts written to {}", path.display());
    }
    Ok(())
}
