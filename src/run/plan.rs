//! Planning a run: every input loaded and checked, the suites (dataset × catalog) with their cells
//! (variant × layout × distractor level) built, the backends built from the registry, and the matrix
//! laid out as jobs (suite × cell × backend × task × trial). Building a plan writes nothing; the
//! per-task presentations are built when their first job runs and dropped after their last.

use super::matrix::{RunConfig, executes_live};
use super::scenario::{DistractorDraw, poisoned, restricted};
use super::{live, serving, subset};
use crate::agent::backends;
use crate::agent::backends::openai::OpenAiBackend;
use crate::agent::{Address, Addressing, Backend};
use crate::catalog::variant::Variant;
use crate::catalog::{Catalog, load_catalog};
use crate::dataset::{Dataset, check_against, load_dataset};
use crate::error::InputError;
use crate::exec::Executor;
use crate::layout::flat::stable_hash;
use crate::layout::{DiscoveryRule, FlatLayout, Layout, LayoutKind, ProgressiveLayout};
use crate::protocol::FunctionDef;
use crate::record::meta::{cell_key, trial_id};
use crate::score::declared::{ToolParams, tool_params};
use crate::tokens::FunctionTokens;
use anyhow::Result;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

/// One cell's presentation: what the model is offered.
pub(in crate::run) struct Cell {
    pub(in crate::run) variant: String,
    pub(in crate::run) layout: Box<dyn Layout>,
    pub(in crate::run) addressing: Addressing,
    pub(in crate::run) tokens_upfront: usize,
    /// The variant catalog, to derive per-scenario (poisoned) presentations from.
    pub(in crate::run) shown: Arc<Catalog>,
    /// Distractor level of a tool-count-curve cell.
    pub(in crate::run) distractors: Option<usize>,
}

/// A presentation built for one poisoned scenario.
pub(in crate::run) struct Scenario {
    pub(in crate::run) layout: Box<dyn Layout>,
    pub(in crate::run) addressing: Addressing,
    pub(in crate::run) tokens_upfront: usize,
    pub(in crate::run) added: Option<(String, bool, bool)>,
}

/// A validated dataset on a catalog, with its cells built.
pub(in crate::run) struct Suite {
    pub(in crate::run) dataset: Dataset,
    pub(in crate::run) catalog: String,
    pub(in crate::run) cells: Vec<Cell>,
    pub(in crate::run) read_only: HashMap<String, bool>,
    pub(in crate::run) destructive: HashMap<String, bool>,
    /// Declared parameters of every catalog tool (the matcher's type and required checks).
    pub(in crate::run) params: HashMap<String, ToolParams>,
    /// Every written tool id, in catalog order (the distractor pool).
    pub(in crate::run) all_tools: Vec<String>,
    pub(in crate::run) executor: Arc<Executor>,
    /// Set when this suite's calls run on its real MCP server (`--execute live`).
    pub(in crate::run) live: Option<Arc<live::LiveSuite>>,
    pub(in crate::run) discovery: DiscoveryRule,
    pub(in crate::run) offered: BTreeMap<String, Vec<FunctionDef>>,
    /// Every task id of the dataset, selected or not (recorded answers may cover the whole dataset).
    pub(in crate::run) all_ids: Vec<String>,
    /// Per selected task, its distractor draw up to the largest level, drawn when first needed and
    /// shared by every cell, backend and trial of the task.
    pub(in crate::run) draws: Vec<OnceLock<DistractorDraw>>,
    pub(in crate::run) max_level: usize,
    /// Per-function token counts: a curve counts a new `tools` array for each task and level.
    pub(in crate::run) tokens: FunctionTokens,
    pub(in crate::run) search_terms: crate::layout::search::SearchTerms,
}

impl Suite {
    /// The tools task `t` sees in `cell` when that is narrower than the cell's catalog: its own
    /// candidates, or its gold tools plus the cell's distractor level. Empty: the whole catalog.
    pub(in crate::run) fn candidates(&self, cell: &Cell, t: usize, seed: u64) -> &[String] {
        let task = &self.dataset.tasks[t];
        match cell.distractors {
            Some(n) => self.draws[t]
                .get_or_init(|| DistractorDraw::new(&self.all_tools, task, self.max_level, seed))
                .level(n),
            None => &task.candidates,
        }
    }
}

pub(in crate::run) fn addressing(catalog: &Catalog, flat: &FlatLayout) -> Addressing {
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

/// The seed of one episode: stable across runs, machines and thread schedules.
pub fn episode_seed(seed: u64, cell: &str, task: &str, trial: usize) -> u64 {
    stable_hash(format!("{seed}|{cell}|{task}|{trial}").as_bytes())
}

/// A validated, ready-to-run experiment. Building it touches no output file.
pub struct Prepared {
    pub(in crate::run) config: RunConfig,
    pub(in crate::run) suites: Vec<Suite>,
    pub(in crate::run) backends: Vec<Arc<dyn Backend>>,
    /// The same backends where they are endpoints (for the preflight), by backend index.
    pub(in crate::run) endpoints: Vec<Option<Arc<OpenAiBackend>>>,
    /// Records importers skipped or repaired.
    pub defects: Vec<crate::dataset::importers::Defect>,
    /// Per imported dataset: format, what happened to its records, number of defect rows.
    pub imports: Vec<(String, crate::dataset::importers::Summary, usize)>,
    /// Per suite (dataset × catalog): its tasks and how many the subset kept.
    pub kept: Vec<subset::Kept>,
    /// Per-task presentations being shared: every backend and trial of a (suite, cell, task) runs on one
    /// built presentation, dropped after its last pending job took it.
    pub(in crate::run) scenarios: std::sync::Mutex<HashMap<(usize, usize, usize), SharedScenario>>,
}

/// A per-task presentation, built once by whichever of its jobs comes first.
pub(in crate::run) struct SharedScenario {
    pub(in crate::run) built: Arc<OnceLock<Scenario>>,
    /// Pending jobs that have not taken it yet.
    pub(in crate::run) left: usize,
}

pub(in crate::run) fn build_suite(
    config: &RunConfig,
    catalog: Catalog,
    mut dataset: Dataset,
    live_spec: Option<crate::mcp::live::LiveSpec>,
) -> Result<Suite> {
    check_against(&dataset, &catalog)?;
    // Trials are keyed by task id: a second task with the same id would silently replace the first.
    let mut first_line = HashMap::new();
    for t in &dataset.tasks {
        if let Some(first) = first_line.insert(t.id.as_str(), t.line) {
            return Err(InputError::new(
                &dataset.path,
                format!(
                    "duplicate task id `{}` (first on line {first}); task ids must be unique",
                    t.id
                ),
            )
            .at_line(t.line)
            .field("id")
            .into());
        }
    }
    let all_ids = dataset.tasks.iter().map(|t| t.id.clone()).collect();
    // The whole dataset was checked above; only the selected tasks are built and run.
    config.subset.apply(&mut dataset, config.seed)?;
    let executor = Arc::new(Executor::new(&catalog)?);
    let read_only =
        catalog.tools().map(|t| (t.tool.id.clone(), t.tool.annotations.read_only_hint)).collect();
    // A destructive hint means something only on a tool that is not read-only (the MCP specification).
    let destructive = catalog
        .tools()
        .map(|t| {
            (
                t.tool.id.clone(),
                t.tool.annotations.destructive_hint && !t.tool.annotations.read_only_hint,
            )
        })
        .collect();
    let params =
        catalog.tools().map(|t| (t.tool.id.clone(), tool_params(&t.tool.input_schema))).collect();
    let mut cells = Vec::new();
    let mut offered = BTreeMap::new();
    for vname in &crate::catalog::variant::expand(&config.variants) {
        let variant = Variant::parse(vname).ok_or_else(|| {
            InputError::new(
                "--variants",
                format!(
                    "unknown variant `{vname}`; use good, bad, ablate, op:<operator> or file:<dir>"
                ),
            )
        })?;
        let shown = variant.apply(&catalog)?;
        let flat = FlatLayout::new(&shown, executor.clone());
        let addressing = addressing(&shown, &flat);
        let shown_arc = Arc::new(shown.clone());
        let levels: Vec<Option<usize>> = if config.distractors.is_empty() {
            vec![None]
        } else {
            config.distractors.iter().map(|n| Some(*n)).collect()
        };
        for level in levels {
            let vname = match level {
                Some(n) => format!("{}@{n}", variant.label()),
                None => variant.label(),
            };
            for &kind in &config.layouts {
                let layout: Box<dyn Layout> = match kind {
                    LayoutKind::Flat => Box::new(FlatLayout::new(&shown, executor.clone())),
                    LayoutKind::Progressive => Box::new(ProgressiveLayout::new(
                        shown.clone(),
                        executor.clone(),
                        config.discovery,
                    )),
                    LayoutKind::Search => {
                        Box::new(crate::layout::SearchLayout::new(&shown, executor.clone()))
                    }
                    LayoutKind::ProgressiveOss => {
                        Box::new(ProgressiveLayout::new_oss(shown.clone(), executor.clone()))
                    }
                };
                let tokens_upfront = crate::tokens::count_functions(layout.functions());
                if level.is_none() {
                    offered.insert(
                        format!("{}/{vname}/{}", dataset.name, kind.as_str()),
                        layout.functions().to_vec(),
                    );
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
        let mut secrets: Vec<String> =
            config.models.iter().map(|m| m.api_key_env.clone()).collect();
        secrets.push("OPENAI_API_KEY".into());
        Arc::new(live::LiveSuite::new(spec, config.live.clone(), &catalog, &dataset.path, secrets))
    });
    if let Some(l) = &live {
        for task in &dataset.tasks {
            if let Some(dir) = l.fixture(task)
                && !dir.is_dir()
            {
                return Err(InputError::new(
                    &dataset.path,
                    format!("the fixture directory {} does not exist", dir.display()),
                )
                .at_line(task.line)
                .field("live.fixture")
                .into());
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
            let base = if candidates.is_empty() {
                (*cell.shown).clone()
            } else {
                restricted(&cell.shown, candidates)
            };
            poisoned(&base, task.poison.as_ref().expect("filtered")).map_err(|e| {
                InputError::new(&suite.dataset.path, format!("{e:#}"))
                    .at_line(task.line)
                    .field("poison")
            })?;
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
            return Err(InputError::new(
                "models",
                format!("two models are labelled `{}`; give each a distinct `name`", m.name),
            )
            .into());
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
        kept.push(subset::Kept {
            dataset: suite.dataset.name.clone(),
            catalog: suite.catalog.clone(),
            available,
            kept: suite.dataset.tasks.len(),
        });
        suites.push(suite);
    }
    let cache = config.cache_dir.clone().map(|d| Arc::new(crate::agent::cache::Cache::new(d)));
    // Answers recorded on the whole dataset also replay a subset of it.
    let task_ids: std::collections::HashSet<&str> =
        suites.iter().flat_map(|s| s.all_ids.iter().map(String::as_str)).collect();
    // Every variant's names and titles, so recorded names resolve whatever the variant called a tool.
    let tools: Vec<backends::replay::ToolNames> = suites
        .iter()
        .flat_map(|s| s.cells.iter())
        .flat_map(|c| {
            c.shown
                .tools()
                .map(|t| (t.tool.id.as_str(), t.tool.name.as_str(), t.tool.title.as_deref()))
        })
        .collect();
    let context = backends::BuildContext {
        lexical: config.lexical,
        cache,
        layouts: &config.layouts,
        task_ids: &task_ids,
        tools: &tools,
    };
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
    Ok(Prepared {
        config,
        suites,
        backends: built,
        endpoints,
        defects,
        imports,
        kept,
        scenarios: Default::default(),
    })
}

/// One unit of work.
#[derive(Clone, Copy)]
pub(in crate::run) struct Job {
    /// Position in the matrix.
    pub(in crate::run) index: usize,
    pub(in crate::run) suite: usize,
    pub(in crate::run) cell: usize,
    pub(in crate::run) backend: usize,
    pub(in crate::run) task: usize,
    pub(in crate::run) trial: usize,
}

impl Prepared {
    pub(in crate::run) fn jobs(&self) -> Vec<Job> {
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

    pub(in crate::run) fn trial_id(&self, j: &Job) -> String {
        let s = &self.suites[j.suite];
        let c = &s.cells[j.cell];
        trial_id(
            &s.dataset.name,
            &c.variant,
            c.layout.kind().as_str(),
            self.backends[j.backend].name(),
            &s.dataset.tasks[j.task].id,
            j.trial,
        )
    }

    pub(in crate::run) fn cell_label(&self, j: &Job) -> String {
        let s = &self.suites[j.suite];
        let c = &s.cells[j.cell];
        format!(
            "{}/{}/{}/{}",
            s.dataset.name,
            c.variant,
            c.layout.kind().as_str(),
            self.backends[j.backend].name()
        )
    }

    pub fn task_count(&self) -> usize {
        self.suites.iter().map(|s| s.dataset.tasks.len()).sum()
    }

    /// The index of task `id` in the first dataset (an error naming `--task` if it has none).
    pub fn task_index(&self, id: &str) -> Result<usize> {
        let s = &self.suites[0];
        s.dataset.tasks.iter().position(|t| t.id == id).ok_or_else(|| {
            InputError::new(&s.dataset.path, format!("no task `{id}` in this dataset"))
                .field("--task")
                .into()
        })
    }

    /// The first suite's first selected task as one text (its history, then its query), for an MCP
    /// session's `instructions`.
    pub fn first_task_instructions(&self) -> Option<String> {
        self.suites
            .first()
            .and_then(|s| s.dataset.tasks.first())
            .map(crate::agent::instructions_text)
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
        self.cell_fields().iter().map(|[d, c, v, l, b]| cell_key(d, c, v, l, b)).collect()
    }

    /// Each cell's key fields: dataset, catalog, variant, layout, backend.
    pub fn cell_fields(&self) -> Vec<[String; 5]> {
        let mut cells = Vec::new();
        for s in &self.suites {
            for c in &s.cells {
                for b in &self.backends {
                    let layout = c.layout.kind().as_str().to_string();
                    cells.push([
                        s.dataset.name.clone(),
                        s.catalog.clone(),
                        c.variant.clone(),
                        layout,
                        b.name().to_string(),
                    ]);
                }
            }
        }
        cells
    }

    pub fn first_dataset(&self) -> &str {
        self.suites.first().map(|s| s.dataset.name.as_str()).unwrap_or("run")
    }

    /// The presentation for a task with its own candidate set and/or a poison, in a cell.
    pub(in crate::run) fn scenario(&self, s: &Suite, cell: &Cell, t: usize) -> Result<Scenario> {
        let task = &s.dataset.tasks[t];
        let candidates = s.candidates(cell, t, self.config.seed);
        let base = if candidates.is_empty() {
            (*cell.shown).clone()
        } else {
            restricted(&cell.shown, candidates)
        };
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
            LayoutKind::Search => Box::new(crate::layout::SearchLayout::with_terms(
                &catalog,
                executor,
                &s.search_terms,
            )),
            LayoutKind::ProgressiveOss => Box::new(ProgressiveLayout::new_oss(catalog, executor)),
            LayoutKind::Progressive => {
                Box::new(ProgressiveLayout::new(catalog, executor, s.discovery))
            }
        };
        let tokens_upfront = s.tokens.count(layout.functions());
        let added = added
            .map(|t| (t.id.clone(), t.annotations.read_only_hint, t.annotations.destructive_hint));
        Ok(Scenario { layout, addressing, tokens_upfront, added })
    }

    /// Whether a task gets its own presentation in a cell (its candidates, a poison, a distractor level).
    pub(in crate::run) fn per_task(s: &Suite, cell: &Cell, t: usize) -> bool {
        let task = &s.dataset.tasks[t];
        task.poison.is_some() || !task.candidates.is_empty() || cell.distractors.is_some()
    }

    /// Count the pending jobs of each per-task presentation, so it is built once and dropped after its
    /// last job.
    pub(in crate::run) fn plan_scenarios(&self, pending: &[Job]) {
        let mut plan = self.scenarios.lock().expect("scenario lock");
        for j in pending {
            let s = &self.suites[j.suite];
            if Self::per_task(s, &s.cells[j.cell], j.task) {
                plan.entry((j.suite, j.cell, j.task))
                    .or_insert_with(|| SharedScenario { built: Arc::new(OnceLock::new()), left: 0 })
                    .left += 1;
            }
        }
    }

    /// A job's per-task presentation: built by the first of its jobs to ask (the others wait for it).
    pub(in crate::run) fn shared_scenario(&self, j: &Job) -> Arc<OnceLock<Scenario>> {
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
        built.get_or_init(|| {
            self.scenario(s, &s.cells[j.cell], j.task)
                .expect("task scenario was checked when the suite was built")
        });
        built
    }
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
