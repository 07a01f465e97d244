//! Running an experiment: the matrix of variants × layouts × backends × tasks × trials.
//!
//! Generation writes trial records; everything after that (scores, summary, reports) is a pure function
//! of those records ([`crate::report::render_run`]), so `toolpick report` re-renders a run without
//! re-running it. A run is written into a hidden temporary directory and renamed into place only when
//! complete, so an interrupted or failed run never leaves a half-written report behind.

pub mod trial;

use crate::agent::backends::{self, LexicalConfig};
use crate::agent::{Address, Addressing, run_episode};
use crate::catalog::variant::Variant;
use crate::catalog::{Catalog, load_catalog};
use crate::dataset::{check_against, load_dataset};
use crate::error::InputError;
use crate::exec::Executor;
use crate::layout::flat::stable_hash;
use crate::layout::{DiscoveryRule, FlatLayout, Layout, LayoutKind, ProgressiveLayout};
use crate::protocol::FunctionDef;
use crate::score::metrics::ScoredCall;
use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
pub use trial::{Tokens, Trial};

/// Everything that defines a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    pub catalog: PathBuf,
    pub dataset: PathBuf,
    pub variants: Vec<String>,
    pub layouts: Vec<LayoutKind>,
    pub backends: Vec<String>,
    pub trials: usize,
    pub seed: u64,
    pub max_steps: usize,
    pub discovery: DiscoveryRule,
    pub lexical: LexicalConfig,
}

/// One cell's presentation: what the model is offered.
struct Cell {
    variant: String,
    layout: Box<dyn Layout>,
    addressing: Addressing,
    tokens_upfront: usize,
}

fn addressing(catalog: &Catalog, flat: &FlatLayout) -> Addressing {
    catalog
        .tools()
        .map(|t| {
            let address = Address {
                function: flat.function_name(&t.tool.id).unwrap_or_default().to_string(),
                server: t.server.name.clone(),
                category: t.category.name.clone(),
                action: t.tool.name.clone(),
            };
            (t.tool.id.clone(), address)
        })
        .collect()
}

/// The seed of one episode: stable across runs, machines and thread schedules.
pub fn episode_seed(seed: u64, cell: &str, task: &str, trial: usize) -> u64 {
    stable_hash(format!("{seed}|{cell}|{task}|{trial}").as_bytes())
}

/// What generation produced, before reporting.
pub struct Generated {
    pub trials: Vec<Trial>,
    /// Offered functions per `variant/layout`.
    pub offered: BTreeMap<String, Vec<FunctionDef>>,
    pub catalog_name: String,
    pub dataset_name: String,
    pub tasks: usize,
    pub tools: usize,
    pub seconds: f64,
}

/// Load, validate and run the whole matrix in memory.
pub fn generate(config: &RunConfig) -> Result<Generated> {
    let started = Instant::now();
    let catalog = load_catalog(&config.catalog)?;
    let dataset = load_dataset(&config.dataset)?;
    check_against(&dataset, &catalog)?;
    let executor = Arc::new(Executor::new(&catalog)?);
    let read_only: BTreeMap<String, bool> =
        catalog.tools().map(|t| (t.tool.id.clone(), t.tool.annotations.read_only_hint)).collect();

    let mut backends_list = Vec::new();
    for name in &config.backends {
        let b = backends::by_name(name, config.lexical).ok_or_else(|| {
            InputError::new("--backends", format!("unknown backend `{name}`; choose from {}", backends::NAMES.join(", ")))
        })?;
        backends_list.push(b);
    }
    let mut cells = Vec::new();
    let mut offered = BTreeMap::new();
    for vname in &config.variants {
        let variant = Variant::parse(vname).ok_or_else(|| {
            InputError::new("--variants", format!("unknown variant `{vname}`; use good, bad or op:<operator>"))
        })?;
        let shown = variant.apply(&catalog);
        let flat = FlatLayout::new(&shown, executor.clone());
        let addressing = addressing(&shown, &flat);
        for &kind in &config.layouts {
            let layout: Box<dyn Layout> = match kind {
                LayoutKind::Flat => Box::new(FlatLayout::new(&shown, executor.clone())),
                LayoutKind::Progressive => Box::new(ProgressiveLayout::new(shown.clone(), executor.clone(), config.discovery)),
            };
            let tokens_upfront = crate::tokens::count_functions(layout.functions());
            offered.insert(format!("{vname}/{}", kind.as_str()), layout.functions().to_vec());
            cells.push(Cell { variant: vname.clone(), layout, addressing: addressing.clone(), tokens_upfront });
        }
    }

    let mut jobs = Vec::new();
    for (ci, _) in cells.iter().enumerate() {
        for (bi, _) in backends_list.iter().enumerate() {
            for (ti, _) in dataset.tasks.iter().enumerate() {
                for trial in 0..config.trials {
                    jobs.push((ci, bi, ti, trial));
                }
            }
        }
    }
    let trials: Vec<Trial> = jobs
        .par_iter()
        .map(|&(ci, bi, ti, trial_index)| {
            let cell = &cells[ci];
            let backend = &backends_list[bi];
            let task = &dataset.tasks[ti];
            let cell_key = format!("{}/{}/{}", cell.variant, cell.layout.kind().as_str(), backend.name());
            let seed = episode_seed(config.seed, &cell_key, &task.id, trial_index);
            let episode = run_episode(backend.as_ref(), cell.layout.as_ref(), task, &cell.addressing, config.max_steps, seed);
            let calls: Vec<ScoredCall> = episode
                .calls
                .iter()
                .map(|r| ScoredCall {
                    read_only: r.tool_id.as_ref().and_then(|id| read_only.get(id)).copied().unwrap_or(false),
                    record: r.clone(),
                })
                .collect();
            Trial::new(
                &dataset.name,
                &catalog.name,
                &cell.variant,
                cell.layout.kind(),
                backend.name(),
                task,
                trial_index,
                seed,
                calls,
                episode,
                cell.tokens_upfront,
            )
        })
        .collect();
    Ok(Generated {
        trials,
        offered,
        catalog_name: catalog.name.clone(),
        dataset_name: dataset.name.clone(),
        tasks: dataset.tasks.len(),
        tools: catalog.tool_count(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `YYYYMMDD-HHMMSS` (UTC) for a unix time.
pub fn utc_stamp(unix: u64) -> String {
    let (days, secs) = ((unix / 86_400) as i64, unix % 86_400);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Write a run: trials, offered tools, reports and `run.json`, atomically into `out_root/<run_id>`,
/// then point `out_root/latest` at it. Returns the run directory.
pub fn write_run(config: &RunConfig, generated: &Generated, out_root: &Path, run_id: &str, meta: serde_json::Value) -> Result<PathBuf> {
    std::fs::create_dir_all(out_root).with_context(|| format!("cannot create output directory {}", out_root.display()))?;
    let final_dir = out_root.join(run_id);
    if final_dir.exists() {
        return Err(InputError::new(&final_dir, "run directory already exists; choose another --run-id or remove it").into());
    }
    let tmp = out_root.join(format!(".{run_id}.partial-{}", std::process::id()));
    let result = (|| -> Result<()> {
        std::fs::create_dir_all(&tmp)?;
        trial::write_trials(&tmp.join("trials.jsonl"), &generated.trials)?;
        std::fs::write(tmp.join("tools.json"), serde_json::to_vec_pretty(&generated.offered)?)?;
        let mut meta = meta;
        meta["config"] = serde_json::to_value(config)?;
        meta["generation_seconds"] = serde_json::json!(generated.seconds);
        meta["tasks"] = serde_json::json!(generated.tasks);
        meta["tools"] = serde_json::json!(generated.tools);
        meta["trials"] = serde_json::json!(generated.trials.len());
        std::fs::write(tmp.join("run.json"), serde_json::to_vec_pretty(&meta)?)?;
        crate::report::render_run(&tmp)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &final_dir).with_context(|| format!("cannot move the finished run to {}", final_dir.display()))?;
    point_latest(out_root, run_id)?;
    Ok(final_dir)
}

/// Atomically replace `out_root/latest` with a symlink to `run_id` (a copy where symlinks don't exist).
fn point_latest(out_root: &Path, run_id: &str) -> Result<()> {
    let latest = out_root.join("latest");
    #[cfg(unix)]
    {
        let tmp = out_root.join(format!(".latest-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(run_id, &tmp)?;
        if latest.is_dir() && !latest.is_symlink() {
            std::fs::remove_dir_all(&latest)?;
        }
        std::fs::rename(&tmp, &latest)?;
    }
    #[cfg(not(unix))]
    {
        let _ = std::fs::remove_dir_all(&latest);
        std::fs::create_dir_all(&latest)?;
        for entry in std::fs::read_dir(out_root.join(run_id))? {
            let entry = entry?;
            std::fs::copy(entry.path(), latest.join(entry.file_name()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamp_known_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_795_996_800 + 3_723), "20261130-010203");
    }

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
