//! Running an experiment: the matrix of suites (dataset × catalog) × variants × layouts × models ×
//! tasks × trials.
//!
//! Generation appends trial records to `trials.jsonl` as episodes finish (one writer, flushed per
//! record); everything after that — scores, summary, reports — is a pure function of those records
//! (`report::render_run`, called by the command layer). Rerunning into the same run directory resumes: finished trials are
//! skipped, infrastructure errors are kept unless `--retry-errors`, and the file is compacted into
//! matrix order at the end, so a resumed run ends byte-identical to an uninterrupted one. The run holds
//! the directory lock throughout and first removes what killed processes left ([`guard`]).

pub mod config;
pub mod failfast;
pub mod live;
pub mod matrix;
pub mod merge;
pub mod meta;
pub mod progress;
pub mod scenario;
pub mod serving;
pub mod shard;
pub mod subset;
pub mod trial;

use crate::agent::backends::openai::OpenAiBackend;
use crate::agent::backends;
use crate::agent::{Address, Addressing, Backend, Episode, Limits, StopReason, run_episode};
use crate::catalog::variant::Variant;
use crate::catalog::{Catalog, load_catalog};
use crate::dataset::{Dataset, check_against, load_dataset};
use crate::error::InputError;
use crate::exec::Executor;
use crate::layout::flat::stable_hash;
use crate::layout::{DiscoveryRule, FlatLayout, Layout, LayoutKind, ProgressiveLayout};
use crate::protocol::FunctionDef;
pub use crate::record::{Tokens, Trial};
use crate::record::meta::RunMeta;
use crate::record::{RUN_JSON, guard, store, transcripts};
use crate::score::declared::{Declared, ToolParams, tool_params};
use crate::score::metrics::ScoredCall;
use anyhow::{Context, Result};
pub use meta::{point_latest, process_cpu_seconds, utc_stamp};
pub use matrix::{RunConfig, executes_live};
pub use scenario::with_distractors;
use scenario::{DistractorDraw, poisoned, restricted};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use crate::tokens::FunctionTokens;
use std::time::{Duration, Instant};

/// One cell's presentation: what the model is offered.
struct Cell {
    variant: String,
    layout: Box<dyn Layout>,
    addressing: Addressing,
    tokens_upfront: usize,
    /// The variant catalog, to derive per-scenario (poisoned) presentations from.
    shown: Arc<Catalog>,
    /// Distractor level of a tool-count-curve cell.
    distractors: Option<usize>,
}

/// A presentation built for one poisoned scenario.
struct Scenario {
    layout: Box<dyn Layout>,
    addressing: Addressing,
    tokens_upfront: usize,
    added: Option<(String, bool, bool)>,
}

/// A validated dataset on a catalog, with its cells built.
struct Suite {
    dataset: Dataset,
    catalog: String,
    cells: Vec<Cell>,
    read_only: HashMap<String, bool>,
    destructive: HashMap<String, bool>,
    /// Declared parameters of every catalog tool (the matcher's type and required checks).
    params: HashMap<String, ToolParams>,
    /// Every written tool id, in catalog order (the distractor pool).
    all_tools: Vec<String>,
    executor: Arc<Executor>,
    /// Set when this suite's calls run on its real MCP server (`--execute live`).
    live: Option<Arc<live::LiveSuite>>,
    discovery: DiscoveryRule,
    offered: BTreeMap<String, Vec<FunctionDef>>,
    /// Every task id of the dataset, selected or not (recorded answers may cover the whole dataset).
    all_ids: Vec<String>,
    /// Per selected task, its distractor draw up to the largest level, drawn when first needed and
    /// shared by every cell, backend and trial of the task.
    draws: Vec<OnceLock<DistractorDraw>>,
    max_level: usize,
    /// Per-function token counts: a curve counts a new `tools` array for each task and level.
    tokens: FunctionTokens,
    search_terms: crate::layout::search::SearchTerms,
}

impl Suite {
    /// The tools task `t` sees in `cell` when that is narrower than the cell's catalog: its own
    /// candidates, or its gold tools plus the cell's distractor level. Empty: the whole catalog.
    fn candidates(&self, cell: &Cell, t: usize, seed: u64) -> &[String] {
        let task = &self.dataset.tasks[t];
        match cell.distractors {
            Some(n) => self.draws[t].get_or_init(|| DistractorDraw::new(&self.all_tools, task, self.max_level, seed)).level(n),
            None => &task.candidates,
        }
    }
}

fn addressing(catalog: &Catalog, flat: &FlatLayout) -> Addressing {
    let mut out = Addressing::new();
    for t in catalog.tools() {
        let address = |dispatch| Address {
            function: flat.function_name(&t.tool.id).unwrap_or_default().to_string(),
            server: t.server.name.clone(),
            category: t.category.name.clone(),
            action: t.tool.name.clone(),
            dispatch,
        };
        match &t.tool.dispatch {
            // A merged tool answers for every original tool it dispatches to.
            Some(d) => {
                for (value, original) in &d.targets {
                    out.insert(original.clone(), address(Some((d.param.clone(), value.clone()))));
                }
            }
            None => {
                out.insert(t.tool.id.clone(), address(None));
            }
        }
    }
    out
}

/// Lock a run directory for this process and remove what killed processes left in it.
fn lock_run_dir(dir: &Path) -> Result<guard::DirLock> {
    let lock = guard::DirLock::acquire(dir)?;
    if !lock.held() {
        anyhow::bail!("{} is in use by another toolpick process (a run, merge or report of it); wait for it to end or choose another --run-id", dir.display());
    }
    guard::remove_stale(dir)?;
    Ok(lock)
}

/// The seed of one episode: stable across runs, machines and thread schedules.
pub fn episode_seed(seed: u64, cell: &str, task: &str, trial: usize) -> u64 {
    stable_hash(format!("{seed}|{cell}|{task}|{trial}").as_bytes())
}

/// A validated, ready-to-run experiment. Building it touches no output file.
pub struct Prepared {
    config: RunConfig,
    suites: Vec<Suite>,
    backends: Vec<Arc<dyn Backend>>,
    /// The same backends where they are endpoints (for the preflight), by backend index.
    endpoints: Vec<Option<Arc<OpenAiBackend>>>,
    /// Records importers skipped or repaired.
    pub defects: Vec<crate::dataset::importers::Defect>,
    /// Per imported dataset: format, what happened to its records, number of defect rows.
    pub imports: Vec<(String, crate::dataset::importers::Summary, usize)>,
    /// Per suite (dataset × catalog): its tasks and how many the subset kept.
    pub kept: Vec<subset::Kept>,
    /// Per-task presentations being shared: every backend and trial of a (suite, cell, task) runs on one
    /// built presentation, dropped after its last pending job took it.
    scenarios: std::sync::Mutex<HashMap<(usize, usize, usize), SharedScenario>>,
}

/// A per-task presentation, built once by whichever of its jobs comes first.
struct SharedScenario {
    built: Arc<OnceLock<Scenario>>,
    /// Pending jobs that have not taken it yet.
    left: usize,
}

fn build_suite(config: &RunConfig, catalog: Catalog, mut dataset: Dataset, live_spec: Option<crate::mcp::live::LiveSpec>) -> Result<Suite> {
    check_against(&dataset, &catalog)?;
    // Trials are keyed by task id: a second task with the same id would silently replace the first.
    let mut first_line = HashMap::new();
    for t in &dataset.tasks {
        if let Some(first) = first_line.insert(t.id.as_str(), t.line) {
            return Err(InputError::new(&dataset.path, format!("duplicate task id `{}` (first on line {first}); task ids must be unique", t.id))
                .at_line(t.line)
                .field("id")
                .into());
        }
    }
    let all_ids = dataset.tasks.iter().map(|t| t.id.clone()).collect();
    // The whole dataset was checked above; only the selected tasks are built and run.
    config.subset.apply(&mut dataset, config.seed)?;
    let executor = Arc::new(Executor::new(&catalog)?);
    let read_only = catalog.tools().map(|t| (t.tool.id.clone(), t.tool.annotations.read_only_hint)).collect();
    // A destructive hint means something only on a tool that is not read-only (the MCP specification).
    let destructive = catalog.tools().map(|t| (t.tool.id.clone(), t.tool.annotations.destructive_hint && !t.tool.annotations.read_only_hint)).collect();
    let params = catalog.tools().map(|t| (t.tool.id.clone(), tool_params(&t.tool.input_schema))).collect();
    let mut cells = Vec::new();
    let mut offered = BTreeMap::new();
    for vname in &crate::catalog::variant::expand(&config.variants) {
        let variant = Variant::parse(vname)
            .ok_or_else(|| InputError::new("--variants", format!("unknown variant `{vname}`; use good, bad, ablate, op:<operator> or file:<dir>")))?;
        let shown = variant.apply(&catalog)?;
        let flat = FlatLayout::new(&shown, executor.clone());
        let addressing = addressing(&shown, &flat);
        let shown_arc = Arc::new(shown.clone());
        let levels: Vec<Option<usize>> = if config.distractors.is_empty() { vec![None] } else { config.distractors.iter().map(|n| Some(*n)).collect() };
        for level in levels {
            let vname = match level {
                Some(n) => format!("{}@{n}", variant.label()),
                None => variant.label(),
            };
            for &kind in &config.layouts {
                let layout: Box<dyn Layout> = match kind {
                    LayoutKind::Flat => Box::new(FlatLayout::new(&shown, executor.clone())),
                    LayoutKind::Progressive => Box::new(ProgressiveLayout::new(shown.clone(), executor.clone(), config.discovery)),
                    LayoutKind::Search => Box::new(crate::layout::SearchLayout::new(&shown, executor.clone())),
                    LayoutKind::ProgressiveOss => Box::new(ProgressiveLayout::new_oss(shown.clone(), executor.clone())),
                };
                let tokens_upfront = crate::tokens::count_functions(layout.functions());
                if level.is_none() {
                    offered.insert(format!("{}/{vname}/{}", dataset.name, kind.as_str()), layout.functions().to_vec());
                }
                cells.push(Cell {
                    variant: vname.clone(),
                    layout,
                    addressing: addressing.clone(),
                    tokens_upfront,
                    shown: shown_arc.clone(),
                    distractors: level,
                });
            }
        }
    }
    let all_tools: Vec<String> = catalog.tools().map(|t| t.tool.id.clone()).collect();
    let live = live_spec.map(|spec| {
        let mut secrets: Vec<String> = config.models.iter().map(|m| m.api_key_env.clone()).collect();
        secrets.push("OPENAI_API_KEY".into());
        Arc::new(live::LiveSuite::new(spec, config.live.clone(), &catalog, &dataset.path, secrets))
    });
    if let Some(l) = &live {
        for task in &dataset.tasks {
            if let Some(dir) = l.fixture(task)
                && !dir.is_dir()
            {
                return Err(InputError::new(&dataset.path, format!("the fixture directory {} does not exist", dir.display())).at_line(task.line).field("live.fixture").into());
            }
        }
    }
    let suite = Suite {
        live,
        draws: dataset.tasks.iter().map(|_| OnceLock::new()).collect(),
        max_level: config.distractors.iter().copied().max().unwrap_or(0),
        tokens: FunctionTokens::default(),
        search_terms: Default::default(),
        dataset,
        catalog: catalog.name.clone(),
        cells,
        read_only,
        destructive,
        params,
        all_tools,
        executor,
        discovery: config.discovery,
        offered,
        all_ids,
    };
    // Poisoned scenarios must build in every cell (variant, distractor level) before anything runs.
    for (t, task) in suite.dataset.tasks.iter().enumerate().filter(|(_, t)| t.poison.is_some()) {
        for cell in &suite.cells {
            let candidates = suite.candidates(cell, t, config.seed);
            let base = if candidates.is_empty() { (*cell.shown).clone() } else { restricted(&cell.shown, candidates) };
            poisoned(&base, task.poison.as_ref().expect("filtered"))
                .map_err(|e| InputError::new(&suite.dataset.path, format!("{e:#}")).at_line(task.line).field("poison"))?;
        }
    }
    Ok(suite)
}

/// Load and validate every input and build every backend; fails before anything is written.
pub fn prepare(mut config: RunConfig) -> Result<Prepared> {
    if config.models.is_empty() {
        return Err(InputError::new("--backends", "no models or backends to run").into());
    }
    let mut names = std::collections::HashSet::new();
    for m in &config.models {
        if !names.insert(m.name.clone()) {
            return Err(InputError::new("models", format!("two models are labelled `{}`; give each a distinct `name`", m.name)).into());
        }
    }
    let mut inputs = Vec::new();
    let mut defects = Vec::new();
    let mut imports = Vec::new();
    for dataset in &config.datasets {
        // `format:path` imports a benchmark with its own catalog; plain paths pair with every catalog.
        if let Some((format, path)) = crate::dataset::importers::split_spec(dataset)? {
            let imported = crate::dataset::importers::import(&format, &path)?;
            if executes_live(&config.execute, &imported.catalog.name)? {
                return Err(InputError::new("--execute", format!("the `{format}` import has no MCP server to run live; run it simulated or name only live catalogs (<catalog>=live)")).into());
            }
            imports.push((format, imported.summary, imported.defects.len()));
            defects.extend(imported.defects);
            inputs.push((imported.catalog, imported.dataset, None));
            continue;
        }
        for catalog in &config.catalogs {
            let loaded = load_catalog(catalog)?;
            let live = if executes_live(&config.execute, &loaded.name)? {
                Some(crate::mcp::live::LiveSpec::from_catalog_dir(catalog)?.ok_or_else(|| {
                    InputError::new(catalog, "this catalog was not imported from an MCP server (its catalog.json has no `mcp` object), so it cannot run live; import it with `toolpick mcp import` or run it simulated")
                })?)
            } else {
                None
            };
            inputs.push((loaded, load_dataset(dataset)?, live));
        }
    }
    // A pattern or filter that matches nothing anywhere is a typo: say so before any dataset is narrowed.
    config.subset.check_matches(inputs.iter().map(|(_, d, _)| d))?;
    let mut kept = Vec::new();
    let mut suites = Vec::new();
    for (catalog, dataset, live) in inputs {
        let available = dataset.tasks.len();
        let suite = build_suite(&config, catalog, dataset, live)?;
        kept.push(subset::Kept { dataset: suite.dataset.name.clone(), catalog: suite.catalog.clone(), available, kept: suite.dataset.tasks.len() });
        suites.push(suite);
    }
    let cache = config.cache_dir.clone().map(|d| Arc::new(crate::agent::cache::Cache::new(d)));
    // Answers recorded on the whole dataset also replay a subset of it.
    let task_ids: std::collections::HashSet<&str> = suites.iter().flat_map(|s| s.all_ids.iter().map(String::as_str)).collect();
    // Every variant's names and titles, so recorded names resolve whatever the variant called a tool.
    let tools: Vec<backends::replay::ToolNames> = suites
        .iter()
        .flat_map(|s| s.cells.iter())
        .flat_map(|c| c.shown.tools().map(|t| (t.tool.id.as_str(), t.tool.name.as_str(), t.tool.title.as_deref())))
        .collect();
    let context = backends::BuildContext { lexical: config.lexical, cache, layouts: &config.layouts, task_ids: &task_ids, tools: &tools };
    let mut built: Vec<Arc<dyn Backend>> = Vec::new();
    let mut endpoints = Vec::new();
    let mut models = config.models.clone();
    for m in models.iter_mut() {
        let b = backends::build(m, &context, serving::BACKENDS)?;
        built.push(b.backend);
        endpoints.push(b.endpoint);
    }
    drop(context);
    config.models = models;
    Ok(Prepared { config, suites, backends: built, endpoints, defects, imports, kept, scenarios: Default::default() })
}

/// One unit of work.
#[derive(Clone, Copy)]
struct Job {
    /// Position in the matrix.
    index: usize,
    suite: usize,
    cell: usize,
    backend: usize,
    task: usize,
    trial: usize,
}

impl Prepared {
    fn jobs(&self) -> Vec<Job> {
        let mut jobs = Vec::new();
        for (suite, s) in self.suites.iter().enumerate() {
            for cell in 0..s.cells.len() {
                for backend in 0..self.backends.len() {
                    for task in 0..s.dataset.tasks.len() {
                        for trial in 0..self.config.trials {
                            jobs.push(Job { index: jobs.len(), suite, cell, backend, task, trial });
                        }
                    }
                }
            }
        }
        jobs
    }

    fn trial_id(&self, j: &Job) -> String {
        let s = &self.suites[j.suite];
        let c = &s.cells[j.cell];
        format!("{}/{}/{}/{}/{}#{}", s.dataset.name, c.variant, c.layout.kind().as_str(), self.backends[j.backend].name(), s.dataset.tasks[j.task].id, j.trial)
    }

    fn cell_label(&self, j: &Job) -> String {
        let s = &self.suites[j.suite];
        let c = &s.cells[j.cell];
        format!("{}/{}/{}/{}", s.dataset.name, c.variant, c.layout.kind().as_str(), self.backends[j.backend].name())
    }

    pub fn task_count(&self) -> usize {
        self.suites.iter().map(|s| s.dataset.tasks.len()).sum()
    }

    /// The index of task `id` in the first dataset (an error naming `--task` if it has none).
    pub fn task_index(&self, id: &str) -> Result<usize> {
        let s = &self.suites[0];
        s.dataset.tasks.iter().position(|t| t.id == id).ok_or_else(|| InputError::new(&s.dataset.path, format!("no task `{id}` in this dataset")).field("--task").into())
    }

    /// The first suite's first selected task as one text (its history, then its query), for an MCP
    /// session's `instructions`.
    pub fn first_task_instructions(&self) -> Option<String> {
        self.suites.first().and_then(|s| s.dataset.tasks.first()).map(crate::agent::instructions_text)
    }

    /// Put `backend` in the place of backend `index` (same label): a client that connects by itself.
    pub fn set_backend(&mut self, index: usize, backend: Arc<dyn Backend>) {
        self.backends[index] = backend;
    }

    /// The run's task selection.
    pub fn config_subset(&self) -> &subset::Subset {
        &self.config.subset
    }

    /// The key `dataset/catalog/variant/layout/backend` of every cell the run will report (what
    /// `--gate-cells` is matched against), known before anything runs.
    pub fn cell_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for s in &self.suites {
            for c in &s.cells {
                for b in &self.backends {
                    keys.push(format!("{}/{}/{}/{}/{}", s.dataset.name, s.catalog, c.variant, c.layout.kind().as_str(), b.name()));
                }
            }
        }
        keys
    }

    pub fn first_dataset(&self) -> &str {
        self.suites.first().map(|s| s.dataset.name.as_str()).unwrap_or("run")
    }

    /// The presentation for a task with its own candidate set and/or a poison, in a cell.
    fn scenario(&self, s: &Suite, cell: &Cell, t: usize) -> Result<Scenario> {
        let task = &s.dataset.tasks[t];
        let candidates = s.candidates(cell, t, self.config.seed);
        let base = if candidates.is_empty() { (*cell.shown).clone() } else { restricted(&cell.shown, candidates) };
        let (catalog, added) = match &task.poison {
            Some(p) => poisoned(&base, p)?,
            None => (base, None),
        };
        let executor = Arc::new(match &added {
            Some(t) => s.executor.with_extra(t)?,
            None => Executor::clone_shared(&s.executor),
        });
        let flat = FlatLayout::new(&catalog, executor.clone());
        let addressing = addressing(&catalog, &flat);
        let layout: Box<dyn Layout> = match cell.layout.kind() {
            LayoutKind::Flat => Box::new(flat),
            LayoutKind::Search => Box::new(crate::layout::SearchLayout::with_terms(&catalog, executor, &s.search_terms)),
            LayoutKind::ProgressiveOss => Box::new(ProgressiveLayout::new_oss(catalog, executor)),
            LayoutKind::Progressive => Box::new(ProgressiveLayout::new(catalog, executor, s.discovery)),
        };
        let tokens_upfront = s.tokens.count(layout.functions());
        let added = added.map(|t| (t.id.clone(), t.annotations.read_only_hint, t.annotations.destructive_hint));
        Ok(Scenario { layout, addressing, tokens_upfront, added })
    }

    /// Whether a task gets its own presentation in a cell (its candidates, a poison, a distractor level).
    fn per_task(s: &Suite, cell: &Cell, t: usize) -> bool {
        let task = &s.dataset.tasks[t];
        task.poison.is_some() || !task.candidates.is_empty() || cell.distractors.is_some()
    }

    /// Count the pending jobs of each per-task presentation, so it is built once and dropped after its
    /// last job.
    fn plan_scenarios(&self, pending: &[Job]) {
        let mut plan = self.scenarios.lock().expect("scenario lock");
        for j in pending {
            let s = &self.suites[j.suite];
            if Self::per_task(s, &s.cells[j.cell], j.task) {
                plan.entry((j.suite, j.cell, j.task)).or_insert_with(|| SharedScenario { built: Arc::new(OnceLock::new()), left: 0 }).left += 1;
            }
        }
    }

    /// A job's per-task presentation: built by the first of its jobs to ask (the others wait for it).
    fn shared_scenario(&self, j: &Job) -> Arc<OnceLock<Scenario>> {
        let key = (j.suite, j.cell, j.task);
        let built = {
            let mut plan = self.scenarios.lock().expect("scenario lock");
            match plan.get_mut(&key) {
                Some(shared) => {
                    shared.left -= 1;
                    let built = shared.built.clone();
                    if shared.left == 0 {
                        plan.remove(&key);
                    }
                    built
                }
                // Not planned (a job run outside `execute`): built for this job alone.
                None => Arc::new(OnceLock::new()),
            }
        };
        let s = &self.suites[j.suite];
        // Checked in `build_suite`, so building the scenario cannot fail here.
        built.get_or_init(|| self.scenario(s, &s.cells[j.cell], j.task).expect("task scenario was checked when the suite was built"));
        built
    }

    async fn run_job(self: Arc<Self>, j: Job) -> (Trial, Value) {
        let s = &self.suites[j.suite];
        let cell = &s.cells[j.cell];
        let task = &s.dataset.tasks[j.task];
        let scenario = Self::per_task(s, cell, j.task).then(|| self.shared_scenario(&j));
        let scenario = scenario.as_ref().map(|sc| sc.get().expect("built by shared_scenario"));
        let (layout, addressing, tokens_upfront) = match scenario {
            Some(sc) => (sc.layout.as_ref(), &sc.addressing, sc.tokens_upfront),
            None => (cell.layout.as_ref(), &cell.addressing, cell.tokens_upfront),
        };
        let backend = &self.backends[j.backend];
        let cell_key = format!("{}/{}/{}", cell.variant, cell.layout.kind().as_str(), backend.name());
        let seed = episode_seed(self.config.seed, &cell_key, &task.id, j.trial);
        let timeout = self.config.models[j.backend].episode_timeout_s;
        let started = Instant::now();
        let limits = Limits { max_steps: self.config.max_steps, repeat_limit: self.config.repeat_limit };
        let timed_out = || Episode {
            messages: crate::agent::opening_messages(task),
            calls: vec![],
            steps: 0,
            stop_reason: StopReason::BackendError,
            backend_error: Some(format!("episode_timeout: the episode took longer than {timeout} s")),
            usage: Default::default(),
            timings: vec![],
        };
        let mut sandbox_ms = None;
        // Whatever happens below, the backend may release what the episode held (an agent process).
        struct EndEpisode<'a>(&'a dyn Backend, u64);
        impl Drop for EndEpisode<'_> {
            fn drop(&mut self) {
                self.0.end_episode(self.1);
            }
        }
        let _end = EndEpisode(backend.as_ref(), seed);
        let (episode, live_record) = match &s.live {
            None => {
                let episode = tokio::time::timeout(Duration::from_secs_f64(timeout), run_episode(backend.as_ref(), layout, task, addressing, limits, seed, j.trial)).await;
                (episode.unwrap_or_else(|_| timed_out()), None)
            }
            Some(suite) => match live::start(suite, task, backend.clone(), cell.layout.kind(), seed, j.trial).await {
                Err(e) => {
                    let failed = Episode { backend_error: Some(format!("mcp_server: the trial's server did not start: {e:#}")), ..timed_out() };
                    (failed, None)
                }
                Ok(run) => {
                    let executor: Arc<dyn crate::exec::LiveExecutor> = run.executor.clone();
                    let guarded = live::Guarded { inner: backend.as_ref(), executor: &run.executor };
                    let episode = crate::exec::LIVE
                        .scope(executor, tokio::time::timeout(Duration::from_secs_f64(timeout), run_episode(&guarded, layout, task, addressing, limits, seed, j.trial)))
                        .await;
                    let mut episode = episode.unwrap_or_else(|_| timed_out());
                    if let Some(why) = run.executor.broken.lock().expect("broken").clone()
                        && episode.stop_reason != StopReason::BackendError
                    {
                        episode.stop_reason = StopReason::BackendError;
                        episode.backend_error = Some(format!("mcp_server: {why}"));
                    }
                    let setup = run.setup_ms;
                    let (mut record, teardown) = run.finish(task).await;
                    if record.sampling_usage != Default::default() {
                        record.sampling_cost_usd = backend.price().map(|p| p.cost(&record.sampling_usage));
                    }
                    sandbox_ms = Some((setup, teardown));
                    (episode, Some(record))
                }
            },
        };
        let timing = json!({
            "trial_id": self.trial_id(&j),
            "episode_ms": started.elapsed().as_secs_f64() * 1000.0,
            "requests": episode.timings,
        });
        let mut timing = timing;
        if let Some((setup, teardown)) = sandbox_ms {
            timing["sandbox_ms"] = json!(setup + teardown);
            timing["sandbox_setup_ms"] = json!(setup);
            timing["sandbox_teardown_ms"] = json!(teardown);
        }
        let calls: Vec<ScoredCall> = episode
            .calls
            .iter()
            .map(|r| {
                let id = r.tool_id.as_deref().unwrap_or_default();
                let added = scenario.as_ref().and_then(|sc| sc.added.as_ref()).filter(|(a, _, _)| a == id);
                ScoredCall {
                    read_only: added.map(|a| a.1).or_else(|| s.read_only.get(id).copied()).unwrap_or(false),
                    destructive: added.map(|a| a.2).or_else(|| s.destructive.get(id).copied()).unwrap_or(false),
                    record: r.clone(),
                }
            })
            .collect();
        let expected_destructive = task.expected.iter().any(|e| s.destructive.get(&e.tool).copied().unwrap_or(false));
        let declared: Declared = task
            .expected
            .iter()
            .flat_map(|e| std::iter::once(&e.tool).chain(&e.alternatives))
            .filter_map(|t| s.params.get(t).map(|p| (t.clone(), p.clone())))
            .collect();
        let mut trial = trial::build(
            &s.dataset.name,
            &s.catalog,
            &cell.variant,
            cell.layout.kind(),
            backend.name(),
            task,
            j.trial,
            seed,
            calls,
            episode,
            tokens_upfront,
            backend.price(),
            expected_destructive,
            declared,
            live_record,
        );
        trial.matrix_index = j.index;
        (trial, timing)
    }
}

/// Options that change how a run executes, not what it computes.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Re-run trials recorded as infrastructure errors.
    pub retry_errors: bool,
    /// No progress output.
    pub quiet: bool,
    /// Run only this shard of the matrix.
    pub shard: Option<shard::Shard>,
}

/// What a finished run reports.
pub struct RunOutcome {
    pub dir: PathBuf,
    pub executed: usize,
    pub skipped: usize,
    pub discarded_bytes: usize,
    pub seconds: f64,
    /// The run directory's lock, still held: the caller renders the reports under it, so nothing
    /// else can write the directory between the last trial and the reports.
    pub lock: guard::DirLock,
}

/// Execute (or resume) the run in `dir` and compact the trials into matrix order. The run ends with
/// its last record and `run.json`; the reports are the caller's (`report::render_locked` under the
/// returned lock).
pub async fn execute(prepared: Prepared, dir: &Path, meta: RunMeta, options: ExecOptions) -> Result<RunOutcome> {
    if let Some(s) = prepared.suites.iter().find(|s| s.live.as_ref().is_some_and(|l| l.spec.url.is_some())) {
        return Err(InputError::new(format!("--catalog {}", s.catalog), crate::mcp::live::URL_CATALOG_IN_RUN).field("mcp.command").into());
    }
    let started = Instant::now();
    let hash = prepared.config.matrix_hash();
    if dir.exists() {
        let run_json = dir.join(RUN_JSON);
        let existing = RunMeta::read_if_present(dir)?
            .ok_or_else(|| InputError::new(dir, "directory exists but is not a toolpick run (no run.json); choose another --run-id"))?;
        if existing.shard != options.shard {
            return Err(InputError::new(
                &run_json,
                format!(
                    "this run was started as {}; resume it with the same --shard or choose another --run-id",
                    existing.shard.map(|s| format!("shard {s}")).unwrap_or_else(|| "an unsharded run".into())
                ),
            )
            .field("shard")
            .into());
        }
        if existing.matrix_hash != hash {
            return Err(InputError::new(
                &run_json,
                "this run was started with a different matrix (datasets, catalogs, variants, layouts, models, trials, seed, steps or task subset); resume with the same settings or choose another --run-id",
            )
            .field("matrix_hash")
            .into());
        }
    }
    // What is left to run (a fresh run: everything), read before anything is written.
    // One process writes a run directory at a time; then leftovers of killed ones can go. A new
    // directory is locked once the preflight has passed and it is created (nothing is written before).
    let mut lock = if dir.exists() { Some(lock_run_dir(dir)?) } else { None };
    let trials_path = dir.join("trials.jsonl");
    let existing = store::scan(&trials_path)?;
    if existing.discarded > 0 {
        eprintln!("note: discarded a torn last record ({} bytes) in {}; that trial runs again", existing.discarded, trials_path.display());
    }
    // A torn transcript line belongs to a trial without a record, which runs again.
    let transcripts_path = dir.join(transcripts::FILE);
    store::cut_torn_tail(&transcripts_path)?;
    let mut all_jobs = prepared.jobs();
    if let Some(sh) = options.shard {
        let ids: Vec<String> = all_jobs.iter().map(|j| prepared.trial_id(j)).collect();
        let mine = sh.select(&ids);
        all_jobs = all_jobs.into_iter().zip(mine).filter(|(_, m)| *m).map(|(j, _)| j).collect();
    }
    let order: HashMap<String, usize> = all_jobs.iter().map(|j| (prepared.trial_id(j), j.index)).collect();
    let mut pending: Vec<Job> = all_jobs
        .iter()
        .filter(|j| match existing.done.get(&prepared.trial_id(j)) {
            None => true,
            Some(&is_error) => is_error && options.retry_errors,
        })
        .copied()
        .collect();
    let skipped = all_jobs.len() - pending.len();
    // Run a task's jobs in every backend and trial next to each other, so a per-task presentation (a
    // tool-count curve's) is built once and freed soon. Only the execution order changes: records are
    // compacted into matrix order.
    pending.sort_by_key(|j| (j.suite, j.cell, j.task, j.backend, j.trial));
    prepared.plan_scenarios(&pending);
    let mut pending_per_backend = vec![0usize; prepared.backends.len()];
    for j in &pending {
        pending_per_backend[j.backend] += 1;
    }
    // Every endpoint that has trials to run answers, or nothing is written (exit 1).
    failfast::check(&prepared.endpoints, &prepared.config.models, &pending_per_backend).await?;

    std::fs::create_dir_all(dir).with_context(|| format!("cannot create run directory {}", dir.display()))?;
    let lock = match lock.take() {
        Some(l) => l,
        None => lock_run_dir(dir)?,
    };
    let mut meta = meta;
    meta.matrix_hash = hash;
    meta.trial_format = transcripts::FORMAT;
    meta.config = match serde_json::to_value(&prepared.config)? {
        Value::Object(settings) => Some(settings),
        other => anyhow::bail!("the run's settings serialised as `{other}`, not an object"),
    };
    meta.discovery_rule = Some(serde_json::to_value(prepared.config.discovery)?);
    meta.shard = options.shard;
    if !prepared.config.subset.is_empty() {
        let mut subset = serde_json::to_value(&prepared.config.subset)?;
        subset["kept"] = serde_json::to_value(&prepared.kept)?;
        meta.subset = Some(subset);
    }
    meta.write(dir)?;
    let offered: BTreeMap<&String, &Vec<FunctionDef>> = prepared.suites.iter().flat_map(|s| s.offered.iter()).collect();
    crate::files::write_atomic(&dir.join("tools.json"), &serde_json::to_vec_pretty(&offered)?)?;
    crate::files::write_atomic(&dir.join("lint.json"), &serde_json::to_vec_pretty(&lint_variants(&prepared))?)?;
    crate::files::write_atomic(&dir.join("defects.json"), &serde_json::to_vec_pretty(&prepared.defects)?)?;

    // Progress per cell, counting only what runs now.
    let mut labels: Vec<String> = Vec::new();
    let mut label_index: HashMap<String, usize> = HashMap::new();
    let mut counts: Vec<u64> = Vec::new();
    let pending_cells: Vec<usize> = pending
        .iter()
        .map(|j| {
            let label = prepared.cell_label(j);
            let i = *label_index.entry(label.clone()).or_insert_with(|| {
                labels.push(label);
                counts.push(0);
                labels.len() - 1
            });
            counts[i] += 1;
            i
        })
        .collect();
    let bars: Vec<(String, u64)> = labels.into_iter().zip(counts).collect();
    let progress = Arc::new(progress::Progress::new(&bars, options.quiet));

    let prepared = Arc::new(prepared);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(Trial, Value)>(256);
    let writer_trials = trials_path.clone();
    let writer_transcripts = transcripts_path.clone();
    let writer_timings = dir.join("timings.jsonl");
    let writer = tokio::task::spawn_blocking(move || -> Result<()> {
        let mut trials = store::Appender::open(&writer_trials)?;
        let mut transcripts = store::Appender::open(&writer_transcripts)?;
        let mut timings = store::Appender::open(&writer_timings)?;
        // The last gate before disk: whatever a backend let through, no configured key is written.
        let redactor = crate::redact::global();
        while let Some((mut trial, timing)) = rx.blocking_recv() {
            // The transcript first: a record on disk always has its transcript (see `record::transcripts`).
            let messages = std::mem::take(&mut trial.transcript);
            let line = transcripts::TranscriptLine { trial_id: trial.trial_id.as_str().into(), matrix_index: trial.matrix_index, transcript: messages.into() };
            transcripts.append(&redactor.redact_bytes(&serde_json::to_vec(&line)?))?;
            trials.append(&redactor.redact_bytes(&serde_json::to_vec(&trial)?))?;
            timings.append(&redactor.redact_bytes(&serde_json::to_vec(&timing)?))?;
        }
        Ok(())
    });

    let semaphores: Vec<Arc<tokio::sync::Semaphore>> =
        prepared.backends.iter().map(|b| Arc::new(tokio::sync::Semaphore::new(b.concurrency().clamp(1, 4096)))).collect();
    // Enough tasks in flight to saturate every endpoint, never the whole matrix at once.
    let in_flight = prepared.backends.iter().map(|b| b.concurrency().clamp(1, 4096)).sum::<usize>().clamp(1, 8192);
    let retries = {
        let p = prepared.clone();
        move || p.backends.iter().filter_map(|b| b.stats()).map(|s| s["retries"].as_u64().unwrap_or(0)).sum::<u64>()
    };
    // The episode phase, timed apart from preparation and reporting (for benchmarks: trials/s and harness
    // CPU per trial against the endpoint's latency bound).
    let breakers = Arc::new(failfast::Breakers::new(prepared.config.models.iter().map(|m| if m.is_openai() { m.breaker } else { 0 }).collect()));
    let phase_started = Instant::now();
    let phase_cpu = process_cpu_seconds();
    // Plain progress lines come on time even while no trial finishes (a slow model).
    let ticker = {
        let (progress, retries) = (progress.clone(), retries.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(1).min(progress::Progress::interval()));
            loop {
                every.tick().await;
                progress.tick(retries());
            }
        })
    };
    let mut set = tokio::task::JoinSet::new();
    for (job, cell) in pending.iter().copied().zip(pending_cells) {
        if breakers.is_open(job.backend) {
            continue;
        }
        while set.len() >= in_flight {
            set.join_next().await.expect("non-empty").context("an episode task panicked")?;
        }
        let p = prepared.clone();
        let sem = semaphores[job.backend].clone();
        let tx = tx.clone();
        let progress = progress.clone();
        let retries = retries.clone();
        let breakers = breakers.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await.expect("semaphore open");
            // An open breaker drops the endpoint's queued and in-flight episodes: not written, they
            // run on resume.
            if breakers.is_open(job.backend) {
                return;
            }
            let (trial, timing) = tokio::select! {
                done = p.run_job(job) => done,
                _ = breakers.opened(job.backend) => return,
            };
            breakers.record(job.backend, trial.error.as_deref());
            progress.record(cell, trial.score.pass, trial.is_error(), retries());
            let _ = tx.send((trial, timing)).await;
        });
    }
    while let Some(r) = set.join_next().await {
        r.context("an episode task panicked")?;
    }
    ticker.abort();
    drop(tx);
    writer.await.context("the trial writer panicked")??;
    let phase_seconds = phase_started.elapsed().as_secs_f64();
    let phase_cpu = process_cpu_seconds().zip(phase_cpu).map(|(end, start)| end - start);
    progress.finish();
    // An open breaker ends the run as an interruption does: finished trials stay (uncompacted, which
    // a resume handles), no reports, exit 1 with the cause.
    if let Some(stopped) = failfast::tripped_error(&breakers, &prepared.endpoints, &prepared.config.models, &pending_per_backend, dir) {
        return Err(stopped);
    }

    store::compact_run(dir, |id, _| order.get(id).copied())?;
    let endpoint_stats: BTreeMap<String, Value> = prepared.backends.iter().filter_map(|b| b.stats().map(|s| (b.name().to_string(), s))).collect();
    meta.endpoints = Some(endpoint_stats);
    meta.executed_trials = Some(pending.len());
    meta.skipped_trials = Some(skipped);
    meta.seconds = Some(started.elapsed().as_secs_f64());
    meta.episode_phase_seconds = Some(phase_seconds);
    meta.episode_phase_cpu_seconds = phase_cpu;
    meta.tasks = Some(prepared.task_count());
    let live: Vec<Value> = prepared
        .suites
        .iter()
        .filter_map(|s| s.live.as_ref().map(|l| json!({"dataset": s.dataset.name, "catalog": s.catalog, "server": l.spec.server, "command": l.spec.command})))
        .collect();
    if !live.is_empty() {
        // What the platform gave: a network namespace per server, or none (then servers share the
        // machine's network; see the README's "Live MCP servers").
        let isolation = match crate::mcp::client::network_isolation() {
            Some(prefix) => format!("network namespace per server ({})", prefix.join(" ")),
            None => "none: `unshare` is not available to this user, servers share the machine's network".to_string(),
        };
        meta.live = Some(json!({"suites": live, "network_isolation": isolation, "options": prepared.config.live}));
    }
    meta.write(dir)?;
    Ok(RunOutcome {
        dir: dir.to_path_buf(),
        executed: pending.len(),
        skipped,
        discarded_bytes: existing.discarded,
        seconds: started.elapsed().as_secs_f64(),
        lock,
    })
}

/// Lint findings of every variant catalog, by written tool id (a merged tool's findings count for every
/// tool it dispatches to): `{"<dataset>/<variant>": {"<tool id>": {"block": n, "warn": n, "info": n,
/// "rules": [...]}}}`. The report joins them with each tool's selection accuracy.
fn lint_variants(p: &Prepared) -> BTreeMap<String, BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for s in &p.suites {
        for cell in &s.cells {
            let key = format!("{}/{}", s.dataset.name, cell.variant);
            if out.contains_key(&key) {
                continue;
            }
            let mut per_tool: BTreeMap<String, (u64, u64, u64, std::collections::BTreeSet<&str>)> = BTreeMap::new();
            for f in crate::lint::lint(&cell.shown) {
                let ids: Vec<String> = match cell.shown.get(&f.tool).and_then(|t| t.tool.dispatch.clone()) {
                    Some(d) => d.targets.values().cloned().collect(),
                    None => vec![f.tool.clone()],
                };
                for id in ids {
                    let e = per_tool.entry(id).or_default();
                    match f.severity {
                        crate::lint::Severity::Block => e.0 += 1,
                        crate::lint::Severity::Warn => e.1 += 1,
                        crate::lint::Severity::Info => e.2 += 1,
                    }
                    e.3.insert(f.rule);
                }
            }
            let v = per_tool.into_iter().map(|(id, (b, w, i, r))| (id, json!({"block": b, "warn": w, "info": i, "rules": r}))).collect();
            out.insert(key, v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episode_seeds_differ_by_every_input() {
        let a = episode_seed(1, "good/flat/random", "t1", 0);
        assert_eq!(a, episode_seed(1, "good/flat/random", "t1", 0));
        assert_ne!(a, episode_seed(2, "good/flat/random", "t1", 0));
        assert_ne!(a, episode_seed(1, "bad/flat/random", "t1", 0));
        assert_ne!(a, episode_seed(1, "good/flat/random", "t2", 0));
        assert_ne!(a, episode_seed(1, "good/flat/random", "t1", 1));
    }
}
