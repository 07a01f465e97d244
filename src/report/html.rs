//! `report.html`: one self-contained page (no network) for people.
//!
//! Static parts are rendered by an auto-escaping askama template. Trial details travel as a JSON island
//! (`<script type="application/json">`) with `<`, `>`, `&`, U+2028 and U+2029 escaped, read with
//! `JSON.parse` and put on the page with `textContent` only — dataset, catalog and model text can never
//! become markup.

mod all_cells;
mod charts;
mod island;
mod matrix;

use super::{Exporter, ReportData, fixed, pct};
use crate::score::stats::Rate;
use all_cells::{AllCells, all_cells};
use anyhow::Result;
use askama::Template;
use charts::charts;
pub use charts::{Bar, Chart, GroupLabel};
use island::island;
use serde_json::Value;

pub struct HtmlReport;

/// One cell's figures for the page's tables other than "All cells" (which [`AllCells`] makes from
/// the column declarations).
pub struct CellRow {
    pub dataset: String,
    pub variant: String,
    pub layout: String,
    pub backend: String,
    pub pass: String,
    pub server_recall: String,
    pub category_recall: String,
    pub gold_revealed: String,
    pub wrong: String,
    pub dead_ends: String,
    pub abandonment: String,
    pub peak_tokens: String,
    pub violation: String,
    pub attack: String,
    pub refused: String,
    pub no_harm: String,
    pub false_refusal: String,
    /// Selection and pass@1 of each task kind the cell has trials of.
    pub kinds: Vec<KindCell>,
    pub k: u64,
    pub pass_at_k: String,
    pub pass_hat_k: String,
    pub flip_rate: String,
    pub noise: String,
    pub min_detectable: String,
}

/// One task kind of one cell, as the page shows it.
pub struct KindCell {
    pub kind: &'static str,
    pub n: u64,
    pub selection: String,
    pub pass: String,
}

/// One cell's judged outcomes, as the page shows them.
pub struct JudgedRow {
    pub dataset: String,
    pub variant: String,
    pub layout: String,
    pub backend: String,
    pub judged: u64,
    pub sopr: String,
    pub round_std: String,
    pub coverage: String,
    pub done: String,
    pub tools_done: u64,
    pub tools_not_done: u64,
    pub wrong_tools_done: u64,
    pub wrong_tools_not_done: u64,
    pub errors: u64,
    pub tokens: String,
    pub judge: String,
}

fn judged_rows(data: &ReportData) -> Vec<JudgedRow> {
    let mean = |m: &Option<crate::analysis::judged::JudgedMean>| match m {
        Some(m) => format!("{} [{}–{}] (n {})", pct(m.mean), pct(m.low), pct(m.high), m.n),
        None => "n/a".into(),
    };
    data.analysis
        .cells
        .iter()
        .filter_map(|c| {
            let j = c.judge.as_ref()?;
            Some(JudgedRow {
                dataset: c.dataset.clone(),
                variant: c.variant.clone(),
                layout: c.layout.clone(),
                backend: c.backend.clone(),
                judged: j.judged,
                sopr: mean(&j.sopr),
                round_std: j
                    .sopr
                    .as_ref()
                    .and_then(|m| m.round_std)
                    .map(pct)
                    .unwrap_or_else(|| "n/a".into()),
                coverage: mean(&j.coverage),
                done: rate(&j.done),
                tools_done: j.joint.tools_done,
                tools_not_done: j.joint.tools_not_done,
                wrong_tools_done: j.joint.wrong_tools_done,
                wrong_tools_not_done: j.joint.wrong_tools_not_done,
                errors: j.errors,
                tokens: format!("{} / {}", j.prompt_tokens, j.completion_tokens),
                judge: format!("{} (prompts {})", j.judges.join(", "), j.prompts.join(", ")),
            })
        })
        .collect()
}

pub struct CategoryRow {
    pub variant: String,
    pub layout: String,
    pub backend: String,
    pub category: String,
    pub n: u64,
    pub selection: String,
    pub pass: String,
}

pub struct EffectRow {
    pub group: String,
    pub rank: usize,
    pub variant: String,
    pub rule: String,
    pub selection: String,
    pub selection_delta: String,
    pub pass_delta: String,
}

/// A percentage, or "n/a" when undefined.
fn opt_pct(x: Option<f64>) -> String {
    x.map(pct).unwrap_or_else(|| "n/a".into())
}

#[derive(Template)]
#[template(path = "report.html")]
struct Page<'a> {
    title: String,
    parameters: Vec<(String, String)>,
    charts: Vec<Chart>,
    /// Under the headline: each cell with trials in no rate, and how many and why.
    excluded: Vec<String>,
    all_cells: AllCells,
    cells: Vec<CellRow>,
    /// Cells whose final answers were judged.
    judged: Vec<JudgedRow>,
    /// Some cell ran more than one trial per task.
    repeated: bool,
    /// `(trials in the drill-down, trials in the run)` when the drill-down is a sample.
    sampled: Option<(usize, usize)>,
    categories: Vec<CategoryRow>,
    effects: Vec<EffectRow>,
    tools: Vec<ToolLintRow>,
    /// "What to look at first".
    first_look: Vec<crate::analysis::first_look::Finding>,
    /// The most frequent confusions between tools (not the oracle's), and the whole matrix.
    confusions: Vec<ConfusionRow>,
    matrix: Vec<ConfusionRow>,
    /// Entries of the whole matrix (more than `matrix` holds when it was cut).
    matrix_total: usize,
    curves: Vec<super::curve::Chart>,
    /// Trend of the headline metrics over the run history (empty without `--history`).
    trends: Vec<super::curve::Chart>,
    /// (file, record, line, id, action, reason) of every defect row an importer reported.
    defects: Vec<(String, String, String, String, String, String)>,
    /// Task records the importers skipped (the `affected` counts of the `skipped` rows).
    skipped_records: u64,
    island: &'a str,
}

pub struct ToolLintRow {
    pub variant: String,
    pub layout: String,
    pub backend: String,
    pub tool: String,
    pub findings: String,
    pub rules: String,
    pub trials: u64,
    pub selection: String,
    pub precision: String,
    pub recall: String,
    pub f1: String,
    pub tp_fp_fn: String,
}

/// One entry of a confusion matrix, as the page shows it.
pub struct ConfusionRow {
    pub cell: String,
    pub expected: String,
    pub called: String,
    pub count: u64,
    pub share: String,
    /// `(trial id, link)` of the first trials with this pair.
    pub examples: Vec<String>,
}

/// Rows of the full matrix shown on the page at most (all are in `confusion.csv`).
const MATRIX_MAX: usize = 2000;

fn confusion_row(data: &ReportData, e: &crate::analysis::confusion::Entry) -> ConfusionRow {
    ConfusionRow {
        cell: format!("{} · {} · {} · {}", e.parts[4], e.parts[2], e.parts[3], e.parts[0]),
        expected: e.expected.clone(),
        called: e.called.clone(),
        count: e.count,
        share: pct(e.count as f64 / e.row_total as f64),
        examples: e.examples.iter().map(|&r| data.analysis.rows.trial_id(r)).collect(),
    }
}

fn rate(r: &Rate) -> String {
    if r.rate.is_nan() {
        "n/a".into()
    } else {
        format!("{} [{}–{}]", pct(r.rate), pct(r.low), pct(r.high))
    }
}

impl Exporter for HtmlReport {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let parameters: Vec<(String, String)> = match &data.analysis.config {
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| {
                    (k.clone(), if let Value::String(s) = v { s.clone() } else { v.to_string() })
                })
                .collect(),
            _ => vec![],
        };
        let cells = data
            .analysis
            .cells
            .iter()
            .map(|c| CellRow {
                dataset: c.dataset.clone(),
                variant: c.variant.clone(),
                layout: c.layout.clone(),
                backend: c.backend.clone(),
                pass: rate(&c.pass),
                server_recall: rate(&c.server_recall),
                category_recall: rate(&c.category_recall),
                gold_revealed: rate(&c.gold_revealed),
                wrong: format!(
                    "{} / {}",
                    fixed(c.mean_wrong_servers, 2),
                    fixed(c.mean_wrong_categories, 2)
                ),
                dead_ends: format!(
                    "{} / {}",
                    fixed(c.mean_dead_ends, 2),
                    fixed(c.mean_invented, 2)
                ),
                abandonment: rate(&c.abandonment),
                peak_tokens: fixed(c.mean_peak_tokens, 0),
                violation: rate(&c.safety_violation),
                attack: rate(&c.attack_success),
                refused: rate(&c.refused),
                no_harm: rate(&c.no_harm),
                kinds: c
                    .kinds
                    .iter()
                    .filter(|k| k.pass.n > 0)
                    .map(|k| KindCell {
                        kind: k.kind.as_str(),
                        n: k.pass.n,
                        selection: rate(&k.selection),
                        pass: rate(&k.pass),
                    })
                    .collect(),
                false_refusal: rate(&c.false_refusal),
                k: c.trials_per_task,
                pass_at_k: opt_pct(c.pass_at_k),
                pass_hat_k: opt_pct(c.pass_hat_k),
                flip_rate: opt_pct(c.noise.map(|n| n.flip_rate)),
                noise: opt_pct(c.noise.map(|n| n.noise_95)),
                min_detectable: opt_pct(c.noise.map(|n| n.min_detectable)),
            })
            .collect();
        let categories = data
            .analysis
            .categories
            .iter()
            .map(|c| CategoryRow {
                variant: c.variant.clone(),
                layout: c.layout.clone(),
                backend: c.backend.clone(),
                category: c.category.clone(),
                n: c.n,
                selection: rate(&c.selection),
                pass: rate(&c.pass),
            })
            .collect();
        let effects = data
            .analysis
            .effects
            .iter()
            .map(|e| EffectRow {
                group: format!("{} · {} · {}", e.dataset, e.layout, e.backend),
                rank: e.rank,
                variant: e.variant.clone(),
                rule: e.rule.clone(),
                selection: pct(e.selection),
                selection_delta: e.selection_effect.text(),
                pass_delta: e.pass_effect.text(),
            })
            .collect();
        let tools = data
            .analysis
            .tools
            .iter()
            .map(|r| ToolLintRow {
                findings: format!("{} block, {} warn, {} info", r.block, r.warn, r.info),
                selection: pct(r.selection()),
                precision: rate(&r.counts.precision()),
                recall: rate(&r.counts.recall()),
                f1: pct(r.counts.f1()),
                tp_fp_fn: format!("{} / {} / {}", r.counts.tp, r.counts.fp, r.counts.fn_),
                variant: r.variant.clone(),
                layout: r.layout.clone(),
                backend: r.backend.clone(),
                tool: r.tool.clone(),
                rules: r.rules.clone(),
                trials: r.trials,
            })
            .collect();
        let matrix = &data.analysis.confusion;
        let first_look = data.analysis.first_look.clone();
        let confusions = data
            .analysis
            .top_confusions
            .iter()
            .take(10)
            .map(|&i| confusion_row(data, &matrix[i]))
            .collect();
        let matrix_total = matrix.len();
        let matrix = matrix.iter().take(MATRIX_MAX).map(|e| confusion_row(data, e)).collect();
        let island = island(data);
        let curves = super::curve::charts(&data.analysis.curve);
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let defects = data
            .defects
            .iter()
            .map(|d| {
                (
                    text(&d["file"]),
                    text(&d["record"]),
                    text(&d["line"]),
                    text(&d["id"]),
                    text(&d["action"]),
                    text(&d["reason"]),
                )
            })
            .collect();
        // Runs written before `affected` existed had one skipped row per skipped record.
        let skipped_records = data
            .defects
            .iter()
            .filter(|d| d["action"] == "skipped")
            .map(|d| d["affected"].as_u64().unwrap_or(1))
            .sum();
        let repeated = data.analysis.cells.iter().any(|c| c.trials_per_task > 1);
        let sampled = (data.sample.len() < data.trial_count())
            .then(|| (data.sample.len(), data.trial_count()));
        let page = Page {
            title: "toolpick report".into(),
            parameters,
            charts: charts(data),
            excluded: data
                .analysis
                .cells
                .iter()
                .filter(|c| c.infra_errors > 0)
                .map(|c| {
                    format!(
                        "{} · {} · {} on {}: {}",
                        c.backend,
                        c.variant,
                        c.layout,
                        c.dataset,
                        super::terminal::excluded(c)
                    )
                })
                .collect(),
            all_cells: all_cells(&data.analysis.cells),
            cells,
            judged: judged_rows(data),
            repeated,
            sampled,
            trends: super::history::charts(&data.history, &data.analysis.cells),
            categories,
            effects,
            tools,
            first_look,
            confusions,
            matrix,
            matrix_total,
            curves,
            defects,
            skipped_records,
            island: &island,
        };
        Ok(page.render()?.into_bytes())
    }
}
