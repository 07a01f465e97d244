//! Planning a run: every input loaded and checked, the suites (dataset × catalog) with their cells
//! (variant × layout × distractor level) built, the backends built from the registry, and the matrix
//! laid out as jobs (suite × cell × backend × task × trial). Building a plan writes nothing; the
//! per-task presentations are built when their first job runs and dropped after their last.
//!
//! Split by job: [`suite`] builds one suite with its cells, [`per_task`] the per-task presentations
//! shared while the run executes; this file holds the prepared run, its jobs and what callers ask
//! of it.

mod per_task;
mod suite;

use super::matrix::{RunConfig, executes_live};
use super::{serving, subset};
use crate::agent::Backend;
use crate::agent::backends;
use crate::agent::backends::Endpoint;
use crate::catalog::load_catalog;
use crate::dataset::load_dataset;
use crate::error::InputError;
use crate::layout::flat::stable_hash;
use crate::record::meta::{cell_key, trial_id};
use anyhow::Result;
pub(in crate::run) use per_task::Scenario;
use per_task::SharedScenario;
use std::collections::HashMap;
use std::sync::Arc;
use suite::{Suite, build_suite};

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
    pub(in crate::run) endpoints: Vec<Option<Arc<dyn Endpoint>>>,
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
