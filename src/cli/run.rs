//! `toolpick run`: its flags (the experiment file's values, overridden by flags) and the command,
//! which ends through the pipeline ([`super::pipeline`]) once the runner has written the last record.

use super::{InputArgs, gates, print_cells, runtime};
use crate::layout::LayoutKind;
use crate::rules;
use crate::run::config::{ExperimentFile, ModelSpec, load_experiment};
use crate::run::subset::Subset;
use crate::run::{ExecOptions, RunConfig, execute, point_latest, prepare, utc_stamp};
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Args)]
pub struct RunArgs {
    /// Experiment file (TOML). Flags given on the command line override its values.
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    input: InputArgs,
    /// Description variants: good, bad (every operator), ablate (one variant per operator), op:<operator>
    /// (vague_description, drop_guidance, cryptic_names, args_in_name, drop_parameter_descriptions,
    /// enums_to_strings, drop_patterns, overlong_description, merge_siblings, drop_annotations) or
    /// file:<dir> (a hand-written variant, e.g. file:registries/workspace-realistic-bad). Default: good,bad.
    #[arg(long, alias = "variant", value_delimiter = ',')]
    variants: Option<Vec<String>>,
    /// Layouts: flat, progressive, progressive-oss, search, native-search, native-search-client.
    /// Default: flat,progressive.
    #[arg(long, value_delimiter = ',')]
    layouts: Option<Vec<String>>,
    /// Backends: lexical (BM25 baseline), oracle (plays the answer key), random (chance), openai (the
    /// endpoint given by --base-url/--model), anthropic (an Anthropic Messages endpoint, same flags),
    /// openai-responses (an OpenAI Responses endpoint), gemini (a Gemini generateContent endpoint),
    /// replay:<FILE> (plays recorded answers, one JSONL line per
    /// task; flat layout only), mcp-agent:<COMMAND> (an MCP agent started per episode, see
    /// docs/mcp.md), mcp-oracle (the oracle as an MCP client). Replaces the config file's models.
    /// Default: lexical,oracle.
    #[arg(long, value_delimiter = ',')]
    backends: Option<Vec<String>>,
    /// Trials per task and cell (1 to 1000). Default 1.
    #[arg(long, value_parser = rules::trials::parse)]
    trials: Option<usize>,
    /// Seed for every random choice; same inputs + seed give byte-identical trials and reports. Default 0.
    #[arg(long)]
    seed: Option<u64>,
    /// Maximum assistant turns per episode (at least 1). Default 8.
    #[arg(long, value_parser = rules::at_least_one::parse)]
    max_steps: Option<usize>,
    /// Stop an episode when the model makes the same calls (names and arguments) in this many turns in a
    /// row: 0 (never) or at least 2. Default 3.
    #[arg(long, value_parser = rules::repeat_limit::parse)]
    repeat_limit: Option<usize>,
    /// Progressive discovery shows full details for servers with at most this many actions
    /// (default 3).
    #[arg(long)]
    discovery_full_max: Option<usize>,
    /// Progressive discovery lists actions for servers with at most this many actions, else
    /// categories only (default 12).
    #[arg(long)]
    discovery_actions_max: Option<usize>,
    /// Lexical baseline abstains when the best tool shares fewer distinct terms with the query
    /// (default 2).
    #[arg(long)]
    lexical_min_overlap: Option<usize>,
    /// Tool-count curve: run every variant at these distractor levels (e.g. 0,10,20,50,100,200,500): each
    /// task sees its gold tools plus N seeded distractors from its catalog.
    #[arg(long, value_delimiter = ',')]
    distractors: Option<Vec<usize>>,
    /// Run only the tasks whose id matches one of these globs (`*` any characters, `?` one), e.g.
    /// dev-*,safe-00?. Comma-separated or repeated. Applied first.
    #[arg(long, value_delimiter = ',', value_parser = rules::task_patterns::parse, value_name = "ID,…")]
    tasks: Option<Vec<String>>,
    /// Keep tasks with this kind, category or tag (key=value, exact). Repeatable: filters on different
    /// keys must all hold, values of the same key are alternatives. Applied after --tasks.
    #[arg(long, value_parser = crate::run::subset::filters::parse, value_name = "KEY=VALUE")]
    filter: Option<Vec<String>>,
    /// Keep N tasks per dataset, drawn with the run seed and stratified by kind (proportional). Applied
    /// after --filter.
    #[arg(long, value_parser = rules::at_least_one::parse, value_name = "N")]
    sample: Option<usize>,
    /// Keep the first N tasks per dataset (dataset order) after every other selection.
    #[arg(long, value_parser = rules::at_least_one::parse, value_name = "N")]
    limit: Option<usize>,
    /// Where executed calls run: simulated (default), live (each catalog's real MCP server, a fresh
    /// sandbox and server per trial; catalogs imported with `toolpick mcp import`), or per catalog:
    /// <catalog>=live. Comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "MODE")]
    execute: Option<Vec<String>>,
    #[command(flatten)]
    live_policy: LivePolicyArgs,
    /// Live runs: servers started ahead of their trials, each in a fresh sandbox of its own and used by
    /// one trial; 0 turns the pool off. Default: the cores available or [live] sandboxes, whichever is
    /// more.
    #[arg(long, value_name = "N")]
    live_pool: Option<usize>,
    /// Output root; the run goes to <out>/<run-id>. Default: reports.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run id (directory name). Default: <dataset>-<UTC timestamp>. Reuse an id to resume that run.
    #[arg(long)]
    run_id: Option<String>,
    /// Re-run trials that ended in an infrastructure error when resuming.
    #[arg(long)]
    retry_errors: bool,
    /// Run cells a provider's limit would refuse (too many tools, a tool name it does not accept, a
    /// prompt over the context window) instead of stopping before the run: each refusal is recorded
    /// as a `provider_limit` trial, in no rate.
    #[arg(long)]
    allow_provider_errors: bool,
    /// Do not read or write the response cache.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
    /// Response cache directory. Default: <out>/.cache.
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
    /// Run only shard I of N (a stable round-robin split of the sorted trial ids); put the shards back
    /// together with `toolpick merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Worker threads (1 to 256; default: all cores).
    #[arg(long, value_parser = rules::jobs::parse)]
    jobs: Option<usize>,
    #[command(flatten)]
    endpoint: EndpointArgs,
    #[command(flatten)]
    judge: super::judge::JudgeArgs,
    #[command(flatten)]
    follow: gates::FollowUp,
}

/// The live policy's flags (`run`, `mcp serve`, `mcp proxy`): over the experiment file's `[live]`.
#[derive(Args)]
pub(super) struct LivePolicyArgs {
    /// Live runs: send tools whose annotations say they may destroy data (destructiveHint; missing
    /// hints count as set). They still run only inside the trial's sandbox.
    #[arg(long)]
    allow_destructive: bool,
    /// Live runs: send tools whose annotations say they may reach outside (openWorldHint).
    #[arg(long)]
    allow_open_world: bool,
    /// Live runs: tools (wire names or ids, globs) always sent, whatever their annotations.
    #[arg(long, value_delimiter = ',', value_name = "TOOL,…")]
    live_allow: Option<Vec<String>>,
    /// Live runs: tools (wire names or ids, globs) never sent.
    #[arg(long, value_delimiter = ',', value_name = "TOOL,…")]
    live_deny: Option<Vec<String>>,
}

impl LivePolicyArgs {
    /// `live` with these flags applied (a flag given wins; the opt-ins add to the file's).
    pub(super) fn over(
        &self,
        mut live: crate::run::live::LiveOptions,
    ) -> crate::run::live::LiveOptions {
        live.allow_destructive |= self.allow_destructive;
        live.allow_open_world |= self.allow_open_world;
        if let Some(a) = &self.live_allow {
            live.allow = a.clone();
        }
        if let Some(d) = &self.live_deny {
            live.deny = d.clone();
        }
        live
    }
}

/// Overrides for model endpoints (apply to every `openai` and `anthropic` model).
#[derive(Args)]
struct EndpointArgs {
    /// Endpoint base URL, http(s)://host[:port]/path, e.g. http://127.0.0.1:8080/v1 (else
    /// OPENAI_BASE_URL, else OpenAI; for `anthropic`, ANTHROPIC_BASE_URL, else Anthropic; for
    /// `gemini`, GOOGLE_GEMINI_BASE_URL, else Google's API).
    #[arg(long, value_parser = rules::base_url::FLAG)]
    base_url: Option<String>,
    /// Model name the endpoint serves.
    #[arg(long, value_parser = rules::name::parse)]
    model: Option<String>,
    /// Name of the environment variable holding the API key (default OPENAI_API_KEY;
    /// ANTHROPIC_API_KEY for `anthropic`, GEMINI_API_KEY for `gemini`).
    #[arg(long, value_parser = rules::key_env::FLAG)]
    api_key_env: Option<String>,
    /// Sampling temperature, 0 to 2.
    #[arg(long, allow_negative_numbers = true, value_parser = rules::temperature::parse)]
    temperature: Option<f64>,
    /// Nucleus sampling mass, 0 to 1.
    #[arg(long, allow_negative_numbers = true, value_parser = rules::top_p::parse)]
    top_p: Option<f64>,
    /// Sampling seed sent to the endpoint.
    #[arg(long)]
    model_seed: Option<i64>,
    /// Completion token limit per request (at least 1).
    #[arg(long, value_parser = rules::max_tokens::parse)]
    max_tokens: Option<u32>,
    /// The model's context window in tokens: cells whose estimated prompt exceeds it are reported
    /// before the run (unset: a llama.cpp server's `/props`).
    #[arg(long, value_name = "TOKENS", value_parser = rules::context_window::parse)]
    context_window: Option<u32>,
    /// Whose tool limits (count, names) to check requests against before the run: openai, anthropic,
    /// gemini or none. Default: the backend's provider when the base URL is its own API, else none.
    #[arg(long, value_name = "PROVIDER", value_parser = clap::builder::PossibleValuesParser::new(rules::PROVIDER_LIMITS))]
    provider_limits: Option<String>,
    /// auto, none or required.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(rules::TOOL_CHOICES))]
    tool_choice: Option<String>,
    /// Sent to the endpoint as `parallel_tool_calls` (true or false); unset, the field is not sent.
    #[arg(long)]
    parallel_tool_calls: Option<bool>,
    /// The anthropic backend's search tool in the native-search layout: bm25 (default) or regex.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(rules::TOOL_SEARCHES))]
    tool_search: Option<String>,
    /// Also accept tool calls written in the message text (see docs/models.md, "Local models").
    #[arg(long)]
    parse_text_calls: bool,
    /// openai-responses only: send the catalog's tools grouped in one `namespace` per server (see
    /// docs/models.md, "Namespaces").
    #[arg(long)]
    namespaces: bool,
    /// Episodes in flight per endpoint (1 to 4096).
    #[arg(long, value_parser = rules::concurrency::parse)]
    concurrency: Option<usize>,
    /// Requests per minute per endpoint (more than 0).
    #[arg(long, allow_negative_numbers = true, value_parser = rules::per_minute::parse)]
    rpm: Option<f64>,
    /// Tokens per minute per endpoint (more than 0).
    #[arg(long, allow_negative_numbers = true, value_parser = rules::per_minute::parse)]
    tpm: Option<f64>,
    /// Per-request timeout in seconds (more than 0, at most a day).
    #[arg(long, allow_negative_numbers = true, value_parser = rules::timeout::parse)]
    request_timeout: Option<f64>,
    /// Per-episode timeout in seconds (more than 0, at most a day).
    #[arg(long, allow_negative_numbers = true, value_parser = rules::timeout::parse)]
    episode_timeout: Option<f64>,
    /// Attempts per request, the first included (at least 1).
    #[arg(long, value_parser = rules::attempts::parse)]
    max_attempts: Option<u32>,
    /// Skip the check of each endpoint (one cheap request) before the first episode.
    #[arg(long)]
    no_preflight: bool,
    /// Stop an endpoint after this many consecutive episodes failed with the same infrastructure
    /// error (0: never). Default 20.
    #[arg(long, value_name = "N")]
    breaker: Option<usize>,
}

impl EndpointArgs {
    fn apply(&self, m: &mut ModelSpec) {
        macro_rules! set {
            ($($flag:ident => $field:ident),*) => {$( if let Some(v) = &self.$flag { m.$field = Some(v.clone()); } )*};
        }
        set!(base_url => base_url, model => model, temperature => temperature, top_p => top_p, model_seed => seed,
             max_tokens => max_tokens, context_window => context_window,
             provider_limits => provider_limits, tool_choice => tool_choice, parallel_tool_calls => parallel_tool_calls,
             tool_search => tool_search, rpm => requests_per_minute, tpm => tokens_per_minute);
        if let Some(v) = &self.api_key_env {
            m.api_key_env = v.clone();
        }
        if self.parse_text_calls {
            m.parse_text_calls = true;
        }
        if self.namespaces {
            m.namespaces = true;
        }
        if let Some(v) = self.concurrency {
            m.concurrency = v;
        }
        if let Some(v) = self.request_timeout {
            m.request_timeout_s = v;
        }
        if let Some(v) = self.episode_timeout {
            m.episode_timeout_s = v;
        }
        if let Some(v) = self.max_attempts {
            m.max_attempts = v;
        }
        if self.no_preflight {
            m.preflight = false;
        }
        if let Some(v) = self.breaker {
            m.breaker = v;
        }
    }
}

/// The settings the experiment file gave (its flag was not given), so that an error raised further
/// on under the flag's name (`--layouts: unknown layout`, `--tasks: … matches no task`) or under
/// the `[judge]` table's is reported as the file's: its path, the key and the key's line.
struct FromFile<'a> {
    path: Option<&'a Path>,
    /// (flag, key) of every setting taken from the file.
    keys: Vec<(&'static str, &'static str)>,
}

impl<'a> FromFile<'a> {
    fn new(args: &RunArgs, file: &ExperimentFile) -> FromFile<'a> {
        let (i, f) = (&args.input, file);
        let candidates = [
            ("--catalog", "catalogs", i.catalog.is_none() && f.catalogs.is_some()),
            ("--dataset", "datasets", i.dataset.is_none() && f.datasets.is_some()),
            ("--variants", "variants", args.variants.is_none() && f.variants.is_some()),
            ("--layouts", "layouts", args.layouts.is_none() && f.layouts.is_some()),
            ("--distractors", "distractors", args.distractors.is_none() && f.distractors.is_some()),
            ("--tasks", "tasks", args.tasks.is_none() && f.tasks.is_some()),
            ("--filter", "filter", args.filter.is_none() && f.filter.is_some()),
            ("--sample", "sample", args.sample.is_none() && f.sample.is_some()),
            ("--limit", "limit", args.limit.is_none() && f.limit.is_some()),
            ("--execute", "execute", args.execute.is_none() && f.execute.is_some()),
            ("--out", "out", args.out.is_none() && f.out.is_some()),
            ("--run-id", "run_id", args.run_id.is_none() && f.run_id.is_some()),
            ("--cache-dir", "cache_dir", args.cache_dir.is_none() && f.cache_dir.is_some()),
        ];
        FromFile {
            path: None,
            keys: candidates
                .into_iter()
                .filter(|c| c.2)
                .map(|(flag, key, _)| (flag, key))
                .collect(),
        }
    }

    /// `e` as the experiment file's error when it is about a setting the file gave; else unchanged.
    fn attribute(&self, e: anyhow::Error) -> anyhow::Error {
        let Some(path) = self.path else { return e };
        let Some(err) = e.downcast_ref::<crate::error::InputError>() else { return e };
        let named = err.file.to_string_lossy();
        let key = if named == "[judge]" {
            err.field.clone().unwrap_or_else(|| "judge".into())
        } else {
            match self.keys.iter().find(|(flag, _)| *flag == named) {
                Some((_, key)) => key.to_string(),
                None => return e,
            }
        };
        let line =
            crate::error::read_text(path, "config").ok().and_then(|text| key_line(&text, &key));
        anyhow::Error::new(crate::error::InputError {
            file: path.to_path_buf(),
            line,
            field: Some(key),
            message: err.message.clone(),
        })
    }
}

/// The 1-based line where the dotted TOML key `key` (`layouts`, `judge.method`) is set: the key in
/// its table (`[judge]` then `method = …`), else its parent set inline (`methods = { … }` for
/// `judge.methods.nosuch`).
fn key_line(text: &str, key: &str) -> Option<usize> {
    let parts: Vec<&str> = key.split('.').collect();
    (1..=parts.len()).rev().find_map(|n| {
        let (table, name) = (parts[..n - 1].join("."), parts[n - 1]);
        let mut current = String::new();
        text.lines().enumerate().find_map(|(i, line)| {
            let line = line.trim();
            if line.starts_with('[') {
                current = line.trim_matches(['[', ']', ' ']).to_string();
                return None;
            }
            let set_here =
                line.strip_prefix(name).is_some_and(|rest| rest.trim_start().starts_with('='));
            (current == table && set_here).then_some(i + 1)
        })
    })
}

pub fn cmd_run(args: RunArgs) -> Result<()> {
    // Check gate flags before spending time on episodes.
    let checked = args.follow.precheck()?;
    let file = match &args.config {
        Some(p) => load_experiment(p)?,
        None => ExperimentFile::default(),
    };
    let from_file = FromFile { path: args.config.as_deref(), ..FromFile::new(&args, &file) };
    let strings =
        |flag: &Option<Vec<String>>, file: &Option<Vec<String>>, default: &[&str]| -> Vec<String> {
            flag.clone()
                .or_else(|| file.clone())
                .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
        };
    // A run id that would break the output layout is refused before anything is read or written.
    let refuse_run_id = |id: &str| -> anyhow::Error {
        let why = crate::run::check_run_id(id).err().unwrap_or_default();
        from_file.attribute(crate::error::InputError::new("--run-id", why).into())
    };
    if let Some(id) = args.run_id.as_ref().or(file.run_id.as_ref())
        && crate::run::check_run_id(id).is_err()
    {
        return Err(refuse_run_id(id));
    }
    // The judge is checked before any episode runs (a bad judge setting must not cost a run).
    let judge_base = args
        .config
        .as_deref()
        .and_then(std::path::Path::parent)
        .unwrap_or(std::path::Path::new("."));
    let judge =
        args.judge.config(file.judge.as_ref(), judge_base).map_err(|e| from_file.attribute(e))?;
    let layouts = strings(&args.layouts, &file.layouts, &["flat", "progressive"])
        .iter()
        .map(|l| {
            LayoutKind::parse(l).ok_or_else(|| {
                crate::error::InputError::new(
                    "--layouts",
                    format!(
                        "unknown layout `{l}`; use flat, progressive, progressive-oss, search, native-search or native-search-client"
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| from_file.attribute(e.into()))?;
    let mut models: Vec<ModelSpec> = match (&args.backends, file.models.is_empty()) {
        (Some(names), _) => {
            names.iter().map(|n| ModelSpec::from_flag(n)).collect::<Result<_, _>>()?
        }
        (None, false) => file.models.clone(),
        (None, true) => vec![ModelSpec::baseline("lexical"), ModelSpec::baseline("oracle")],
    };
    for m in models.iter_mut().filter(|m| m.is_endpoint()) {
        args.endpoint.apply(m);
        if m.model.is_none() {
            return Err(crate::error::InputError::new(
                "--model",
                format!("the {} backend needs --model (or `model` in the config file)", m.backend),
            )
            .into());
        }
        if m.name.is_empty() || m.name == m.backend {
            m.name = m.model.clone().unwrap_or_default();
        }
    }
    if let Some((i, l)) = layouts.iter().enumerate().find(|(i, l)| layouts[..*i].contains(l)) {
        let twice = crate::error::InputError::new(
            "--layouts",
            format!(
                "layout `{}` is given twice (position {}); list each layout once",
                l.as_str(),
                i + 1
            ),
        );
        return Err(from_file.attribute(twice.into()));
    }
    // Ranges of both were checked where they were read (flag parser, config file).
    let trials = args.trials.or(file.trials).unwrap_or(1);
    let max_steps = args.max_steps.or(file.max_steps).unwrap_or(8);
    let mut discovery = file.discovery.unwrap_or_default();
    if let Some(v) = args.discovery_full_max {
        discovery.full_details_max = v;
    }
    if let Some(v) = args.discovery_actions_max {
        discovery.actions_max = v;
    }
    let mut lexical = file.lexical.unwrap_or_default();
    if let Some(v) = args.lexical_min_overlap {
        lexical.min_overlap = v;
    }
    let out = args.out.clone().or(file.out.clone()).unwrap_or_else(|| PathBuf::from("reports"));
    let cache_dir = if args.no_cache {
        None
    } else {
        Some(
            args.cache_dir.clone().or(file.cache_dir.clone()).unwrap_or_else(|| out.join(".cache")),
        )
    };
    let judge_cache = cache_dir.clone();
    let config = RunConfig {
        catalogs: match (&args.input.catalog, &file.catalogs) {
            (Some(c), _) => vec![c.clone()],
            (None, Some(c)) => c.clone(),
            (None, None) => vec![args.input.catalog()],
        },
        datasets: match (&args.input.dataset, &file.datasets) {
            (Some(d), _) => vec![d.clone()],
            (None, Some(d)) => d.clone(),
            (None, None) => vec![args.input.dataset()],
        },
        variants: strings(&args.variants, &file.variants, &["good", "bad"]),
        layouts,
        models,
        trials,
        seed: args.seed.or(file.seed).unwrap_or(0),
        max_steps,
        repeat_limit: args
            .repeat_limit
            .or(file.repeat_limit)
            .unwrap_or(crate::agent::DEFAULT_REPEAT_LIMIT),
        discovery,
        lexical,
        cache_dir,
        distractors: match &args.distractors {
            Some(levels) => rules::levels::check(levels.clone())
                .map_err(|m| crate::error::InputError::new("--distractors", m))?,
            None => file.distractors.clone().unwrap_or_default(),
        },
        // Each key: the flag if given, else the file's.
        subset: Subset {
            tasks: args.tasks.clone().or(file.tasks.clone()).unwrap_or_default(),
            filter: args.filter.clone().or(file.filter.clone()).unwrap_or_default(),
            sample: args.sample.or(file.sample),
            limit: args.limit.or(file.limit),
        },
        execute: args.execute.clone().or(file.execute.clone()).unwrap_or_default(),
        live: args.live_policy.over(file.live.clone().unwrap_or_default()),
    };
    let shard = args
        .shard
        .as_deref()
        .map(crate::run::shard::Shard::parse)
        .transpose()
        .map_err(|m| crate::error::InputError::new("--shard", m))?;
    super::preflight::run_paths(&config, &out).map_err(|e| from_file.attribute(e))?;
    let execute_modes = config.execute.clone();
    let prepared = prepare(config).map_err(|e| from_file.attribute(e))?;
    let judged = judge.as_ref().map(|_| (&args.judge, file.judge.as_ref(), args.config.as_deref()));
    super::preflight::run_names(&prepared, &execute_modes, &args.follow.gates.spec()?, judged)
        .map_err(|e| from_file.attribute(e))?;
    // A drop gate's cells are those the run shares with the baseline, known before it runs.
    args.follow.check_planned_cells(&checked, &prepared.cell_fields())?;
    let imports = prepared.imports.clone();
    let subset = (!prepared.config_subset().is_empty()).then(|| {
        (
            crate::compare::describe_subset(
                &serde_json::json!({ "subset": prepared.config_subset() }),
            ),
            prepared.kept.clone(),
        )
    });
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let run_id = args
        .run_id
        .clone()
        .or(file.run_id.clone())
        .unwrap_or_else(|| format!("{}-{}", prepared.first_dataset(), utc_stamp(unix)));
    if crate::run::check_run_id(&run_id).is_err() {
        return Err(refuse_run_id(&run_id));
    }
    let meta = crate::run::RunMeta::new(&run_id, unix, &utc_stamp(unix));
    let started = Instant::now();
    let dir = out.join(&run_id);
    let rt = runtime(args.jobs)?;
    // Cells a provider would refuse are named before the first trial (exit 2 unless allowed).
    let presented = rt.block_on(prepared.presented())?;
    for note in super::preflight::provider_limits(&presented, args.allow_provider_errors)? {
        crate::messages::note(format_args!("{note}"));
    }
    let outcome = rt.block_on(execute(
        prepared,
        &dir,
        meta,
        ExecOptions {
            retry_errors: args.retry_errors,
            quiet: args.quiet,
            shard,
            live_pool: args.live_pool,
        },
    ))?;
    // The runner is done with its last record; the rest is the pipeline's, under the same lock.
    let judging = judge.as_ref().map(|config| super::pipeline::Judging {
        config,
        cache: judge_cache,
        retry_errors: args.retry_errors,
        runtime: &rt,
    });
    let holder = super::pipeline::Holder::Writer(outcome.lock);
    let finished = super::pipeline::finish(&dir, holder, judging, &args.follow, checked)?;
    let data = &finished.data;
    point_latest(&out, &run_id)?;
    outln!(
        "{} trials run, {} already done, {} cells, {:.2} s → {}",
        outcome.executed,
        outcome.skipped,
        data.analysis.cells.len(),
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    if let Some((how, kept)) = &subset {
        let per: Vec<String> = kept
            .iter()
            .map(|k| format!("{}/{} {} of {}", k.dataset, k.catalog, k.kept, k.available))
            .collect();
        outln!("subset ({how}): {} tasks", per.join(", "));
    }
    for (format, summary, rows) in &imports {
        outln!("{format}: {summary}; {rows} defect rows in {}", dir.join("defects.json").display());
    }
    print_cells(&data.analysis.cells);
    outln!("open {} in a browser for the drill-down", dir.join("report.html").display());
    finished.conclude()
}

#[cfg(test)]
mod tests {
    use super::key_line;

    #[test]
    fn a_key_is_found_in_its_own_table_or_set_inline_in_its_parent() {
        let text = "layouts = [\"flat\"]\nout = \"runs\"\n\n[[models]]\nname = \"m\"\n\n[judge]\nmodel = \"j\"\nmethod = \"vibes\"\nmethods = { starter = \"claims\" }\n";
        assert_eq!(key_line(text, "layouts"), Some(1));
        assert_eq!(
            key_line(text, "judge.method"),
            Some(9),
            "`method` of [judge], not a top-level key"
        );
        assert_eq!(
            key_line(text, "judge.methods.nosuch"),
            Some(10),
            "the inline table that holds it"
        );
        assert_eq!(
            key_line(text, "name"),
            None,
            "`name` is a key of [[models]], not a top-level one"
        );
        assert_eq!(key_line(text, "execute"), None);
    }
}
