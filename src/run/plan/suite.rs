//! A suite (dataset × catalog) with its cells built: the dataset checked against the catalog (task
//! ids unique, the subset applied), the tool facts scoring needs (read-only, destructive, declared
//! parameters), one cell per variant × distractor level × layout with its presentation and upfront
//! token count, the live-execution spec when the catalog runs on its MCP server, and every poisoned
//! scenario built once so a bad poison fails before anything runs.
//!
//! Its own file because building one suite is self-contained; the parent module assembles suites
//! and backends into the run's matrix.

use crate::agent::{Address, Addressing};
use crate::catalog::Catalog;
use crate::catalog::variant::Variant;
use crate::dataset::{Dataset, check_against};
use crate::error::InputError;
use crate::exec::Executor;
use crate::layout::{DiscoveryRule, FlatLayout, Layout};
use crate::protocol::FunctionDef;
use crate::run::live;
use crate::run::matrix::RunConfig;
use crate::run::scenario::{DistractorDraw, poisoned, restricted};
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
    let search_terms = crate::layout::search::SearchTerms::default();
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
                let layout: Box<dyn Layout> = crate::layout::build(
                    kind,
                    shown.clone(),
                    executor.clone(),
                    config.discovery,
                    &search_terms,
                );
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
        search_terms,
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
