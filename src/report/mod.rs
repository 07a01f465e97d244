//! Reports: pure functions of a run directory's trial records.
//!
//! [`render_run`] reads `trials.jsonl` (and `tools.json`, `run.json`), re-scores every trial, aggregates
//! with polars ([`summary`]) and hands one [`ReportData`] to each [`Exporter`] — one file per format.
//! Exporters never compute statistics; they only render what `summary` produced. Every file is written
//! to a temporary name and renamed, so a failed render leaves the previous report intact.

pub mod ablation;
pub mod csv;
pub mod curve;
pub mod history;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod parquet;
pub mod summary;
pub mod tools;

use crate::protocol::FunctionDef;
use crate::run::Trial;
use crate::run::trial::read_trials;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
pub use summary::{CategorySummary, CellSummary};

/// Everything an exporter may render.
pub struct ReportData {
    /// Run parameters (from `run.json`'s `config`), without timestamps.
    pub config: serde_json::Value,
    pub cells: Vec<CellSummary>,
    pub categories: Vec<CategorySummary>,
    pub trials: Vec<Trial>,
    /// Offered functions per `dataset/variant/layout`.
    pub offered: BTreeMap<String, Vec<FunctionDef>>,
    /// Lint findings per `dataset/variant`, by tool id (`lint.json`).
    pub lint: BTreeMap<String, BTreeMap<String, serde_json::Value>>,
    /// Records importers skipped or repaired (`defects.json`).
    pub defects: Vec<serde_json::Value>,
    /// Earlier runs' headline numbers (`history.jsonl`, written by `--history`); empty without.
    pub history: Vec<history::HistoryEntry>,
}

/// One output format.
pub trait Exporter {
    /// File name inside the run directory.
    fn file_name(&self) -> &'static str;
    fn render(&self, data: &ReportData) -> Result<Vec<u8>>;
}

/// All exporters, in the order they are written.
pub fn exporters() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(csv::SummaryCsv),
        Box::new(csv::TrialsCsv),
        Box::new(parquet::TrialsParquet),
        Box::new(parquet::SummaryParquet),
        Box::new(ablation::AblationCsv),
        Box::new(tools::ToolsCsv),
        Box::new(curve::CurveCsv),
        Box::new(markdown::MarkdownSummary),
        Box::new(json::SummaryJson),
        Box::new(html::HtmlReport),
        Box::new(junit::JunitXml),
    ]
}

/// Load and score a run directory.
pub fn load_run(dir: &Path) -> Result<ReportData> {
    let trials_path = dir.join("trials.jsonl");
    if !trials_path.is_file() {
        return Err(crate::error::InputError::new(&trials_path, "no trials.jsonl here; pass a run directory such as reports/latest").into());
    }
    let mut rows = summary::ScoreRows::default();
    let mut trials = Vec::new();
    read_trials(&trials_path, |mut t| {
        t.rescore();
        rows.push(&t);
        trials.push(t);
        Ok(())
    })?;
    let (cells, categories) = summary::summarize(&rows)?;
    let offered = match std::fs::read(dir.join("tools.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("{}: not a tools file", dir.join("tools.json").display()))?,
        Err(_) => BTreeMap::new(),
    };
    let config = std::fs::read(dir.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .map(|v| v["config"].clone())
        .unwrap_or(serde_json::Value::Null);
    // Where the response cache lives is a machine-local path, not an experiment parameter: leave it out
    // of reports so runs on different machines (shards) render the same.
    let mut config = config;
    if let Some(o) = config.as_object_mut() {
        o.remove("cache_dir");
    }
    let lint = std::fs::read(dir.join("lint.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let defects = std::fs::read(dir.join("defects.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let history = history::read(&dir.join("history.jsonl"))?;
    Ok(ReportData { config, cells, categories, trials, offered, lint, defects, history })
}

/// Write `bytes` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot move {} into place", path.display()))
}

/// Score a run directory and (re)write every report file in it.
pub fn render_run(dir: &Path) -> Result<ReportData> {
    let data = load_run(dir)?;
    // Render everything first, then write: a failing exporter leaves no file changed.
    let rendered: Vec<(&'static str, Vec<u8>)> =
        exporters().iter().map(|e| e.render(&data).map(|b| (e.file_name(), b))).collect::<Result<_>>()?;
    for (name, bytes) in rendered {
        write_atomic(&dir.join(name), &bytes)?;
    }
    Ok(data)
}

/// A rate as a percentage with one decimal, or "n/a" when undefined.
pub fn pct(x: f64) -> String {
    if x.is_nan() { "n/a".into() } else { format!("{:.1}", x * 100.0) }
}
