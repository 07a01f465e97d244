//! The analysis of a run: everything the reports say about it, computed once from its scored rows.
//!
//! [`analyze`] takes the compact rows of a run's trials ([`rows::ScoreRows`], one per trial, filled by
//! the report's single pass over `trials.jsonl`) and the run's context (parameters, lint findings) and
//! returns a [`RunAnalysis`]: cells and categories with their intervals and per-kind figures
//! ([`cells`]), the judge's figures ([`judged`], inside the cells), the paired ablation effects
//! ([`ablation`]), the confusion matrix ([`confusion`]), the per-tool join ([`tools`]), the tool-count
//! curve ([`curve`]) and the first-look findings ([`first_look`]). Renderers (`crate::report`),
//! comparisons (`crate::compare`) and gates (`crate::gate`) read it and compute nothing again; this
//! module never imports them. [`columns`] declares each summary column once, for every format.
//! [`history`] holds the history points (`--history`), [`verdict`] the gates' verdicts.

pub mod ablation;
pub mod arguments;
pub mod cells;
pub mod columns;
pub mod confusion;
pub mod curve;
pub mod first_look;
pub mod history;
pub mod judged;
pub mod rows;
pub mod tools;
pub mod verdict;

use anyhow::Result;
use std::collections::BTreeMap;

/// Resamples of the bootstrap intervals of means.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;

/// Lint findings per `dataset/variant`, by tool id (`lint.json`).
pub type Lint = BTreeMap<String, BTreeMap<String, serde_json::Value>>;

/// Everything computed about one run, once.
pub struct RunAnalysis {
    /// Run parameters (from `run.json`'s `config`), without timestamps or machine-local paths.
    pub config: serde_json::Value,
    pub cells: Vec<cells::CellSummary>,
    pub categories: Vec<cells::CategorySummary>,
    /// One compact, scored row per trial, in matrix order (the order of the compacted file).
    pub rows: rows::ScoreRows,
    /// Every variant against `good`, paired task by task, ranked per group.
    pub effects: Vec<ablation::Effect>,
    /// Every cell's confusion matrix, in the order of [`confusion::matrix`].
    pub confusion: Vec<confusion::Entry>,
    /// The per-tool join of lint findings, selection, precision and recall.
    pub tools: Vec<tools::ToolRow>,
    /// The confusions between tools outside the oracle's cells, in [`confusion::top_between_tools`]'s
    /// order — models before baselines, the user's own variants before derived ones, then by count
    /// (positions in `confusion`).
    pub top_confusions: Vec<usize>,
    /// The tool-count curve's lines (runs with `--distractors`).
    pub curve: Vec<curve::Line>,
    /// "What to look at first", in reading order.
    pub first_look: Vec<first_look::Finding>,
}

impl RunAnalysis {
    pub fn trial_count(&self) -> usize {
        self.rows.len()
    }
}

/// Analyze a run's scored rows: every figure any report, comparison or gate shows, each computed once.
pub fn analyze(
    rows: rows::ScoreRows,
    config: serde_json::Value,
    lint: &Lint,
) -> Result<RunAnalysis> {
    // The four passes over the rows depend on nothing but the rows (and the lint findings), so they
    // run side by side; each is a pure function, so the analysis is the same in any order.
    // `outcomes` are per cell and task, which the ablation's effects and the first look's layout
    // effects both pair (built once: at a million trials it is a map of a million tasks).
    let ((summary, outcomes), (confusion, tools)) = rayon::join(
        || rayon::join(|| cells::summarize(&rows), || ablation::outcomes(&rows)),
        || rayon::join(|| confusion::matrix(&rows), || tools::rows(&rows, lint)),
    );
    let (cells, categories) = summary?;
    let effects = ablation::effects(&cells, &outcomes);
    let top_confusions = confusion::top_between_tools(&confusion);
    let curve = curve::lines(&cells);
    let first_look =
        first_look::findings(&cells, &outcomes, &effects, &confusion, &top_confusions, lint);
    drop(outcomes);
    Ok(RunAnalysis {
        config,
        cells,
        categories,
        rows,
        effects,
        confusion,
        top_confusions,
        tools,
        curve,
        first_look,
    })
}
