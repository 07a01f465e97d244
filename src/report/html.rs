//! `report.html`: one self-contained page (no network) for people.
//!
//! Static parts are rendered by an auto-escaping askama template. Trial details travel as a JSON island
//! (`<script type="application/json">`) with `<`, `>`, `&`, U+2028 and U+2029 escaped, read with
//! `JSON.parse` and put on the page with `textContent` only — dataset, catalog and model text can never
//! become markup.

mod all_cells;

use super::{Exporter, ReportData, fixed, pct};
use crate::score::stats::Rate;
use all_cells::{AllCells, all_cells};
use anyhow::Result;
use askama::Template;
use serde_json::{Value, json};
use std::collections::BTreeSet;

pub struct HtmlReport;

/// One bar with its interval, in SVG coordinates.
pub struct Bar {
    pub label: String,
    pub metric: &'static str,
    pub x: f64,
    pub y: f64,
    pub height: f64,
    pub whisker_low: f64,
    pub whisker_high: f64,
    pub value: String,
    pub class: &'static str,
    /// Centre line of the bar: the whisker and the value label (written vertically, upwards from
    /// `value_y`, so labels of adjacent bars never touch whatever their values).
    pub centre: f64,
    pub value_y: f64,
}

/// The two-line label under a group of bars: `variant` and `layout` as shown (cut to
/// [`GROUP_LABEL_MAX_CHARS`] with "…"), `title` the full text.
pub struct GroupLabel {
    pub x: f64,
    pub variant: String,
    pub layout: String,
    pub title: String,
}

/// One headline chart, in SVG coordinates: the plot spans `plot_top` (100 %) to `plot_bottom` (0 %)
/// right of the axis at `axis_x`; the group labels sit on `label_y` and `label_y + LABEL_LINE`.
pub struct Chart {
    pub backend: String,
    pub dataset: String,
    pub width: f64,
    pub height: f64,
    pub axis_x: f64,
    pub plot_top: f64,
    pub plot_bottom: f64,
    pub label_y: f64,
    pub label_line: f64,
    pub bars: Vec<Bar>,
    pub groups: Vec<GroupLabel>,
}

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

/// Serialise JSON for embedding in a `<script>` element.
pub fn json_island(v: &Value) -> String {
    let mut out = String::new();
    escape_into(&serde_json::to_string(v).unwrap_or_else(|_| "null".into()), &mut out);
    out
}

/// Append serialized JSON to `out` with the characters that could end a `<script>` element (or a line
/// in old parsers) escaped as JSON `\u` escapes, which parse back to the same value.
fn escape_into(s: &str, out: &mut String) {
    out.reserve(s.len() + s.len() / 16);
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

/// Height of the 0–100 % plot area of a headline chart.
const PLOT_H: f64 = 160.0;
/// Space above the plot: a value label of a 100 % bar is written vertically above its whisker.
const TOP: f64 = 40.0;
/// x of the value axis; the axis labels (100, 50, 0) sit left of it.
const AXIS_X: f64 = 34.0;
/// Bars: width, and the step from one bar to the next in a group (two bars per group).
const BAR_W: f64 = 22.0;
const BAR_STEP: f64 = 26.0;
/// Narrowest distance between the centres of two groups.
const GROUP_PITCH_MIN: f64 = 96.0;
/// Free space between the group labels of two neighbouring groups.
const GROUP_LABEL_GAP: f64 = 6.0;
/// Group labels longer than this are cut ("…") and carry their full text as a tooltip.
const GROUP_LABEL_MAX_CHARS: usize = 20;
/// Upper bound of the width of one character of the 11 px label font (most are ~6 px, digits 7 px), and
/// of one wide (non-ASCII) character.
const LABEL_CHAR_W: f64 = 7.5;
const LABEL_WIDE_CHAR_W: f64 = 11.0;
/// Baseline distance between the two lines of a group label (the font's boxes are 13 px high).
const LABEL_LINE: f64 = 15.0;

/// `s` cut to [`GROUP_LABEL_MAX_CHARS`] characters, the last one "…".
fn short_label(s: &str) -> String {
    if s.chars().count() <= GROUP_LABEL_MAX_CHARS {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(GROUP_LABEL_MAX_CHARS - 1).collect::<String>())
    }
}

/// A generous estimate of a label's rendered width in px.
fn label_width(s: &str) -> f64 {
    s.chars().map(|c| if c.is_ascii() { LABEL_CHAR_W } else { LABEL_WIDE_CHAR_W }).sum()
}

fn charts(data: &ReportData) -> Vec<Chart> {
    // The models under test first, the baselines (references) after them; then by dataset and name.
    let groups: BTreeSet<(bool, String, String)> = data
        .analysis
        .cells
        .iter()
        .map(|c| (c.baseline, c.dataset.clone(), c.backend.clone()))
        .collect();
    let mut out = Vec::new();
    for (_, dataset, backend) in groups {
        let mut cells: Vec<_> = data
            .analysis
            .cells
            .iter()
            .filter(|c| c.dataset == dataset && c.backend == backend)
            .collect();
        // good before bad, flat before progressive: the 2×2 reads left to right.
        cells.sort_by_key(|c| {
            (c.variant != "good", c.variant.clone(), c.layout != "flat", c.layout.clone())
        });
        let labels: Vec<(String, String)> =
            cells.iter().map(|c| (short_label(&c.variant), short_label(&c.layout))).collect();
        // One pitch for the whole chart, wide enough that no two group labels touch.
        let widest =
            labels.iter().map(|(v, l)| label_width(v).max(label_width(l))).fold(0.0, f64::max);
        let pitch = GROUP_PITCH_MIN.max(widest + GROUP_LABEL_GAP);
        let mut bars = Vec::new();
        let mut groups = Vec::new();
        for (i, (c, (variant, layout))) in cells.iter().zip(labels).enumerate() {
            let centre = AXIS_X + pitch * (i as f64 + 0.5);
            let n = format!("n {}, excluded {}", c.pass.n, super::terminal::excluded(c));
            groups.push(GroupLabel {
                x: centre,
                variant,
                layout,
                title: format!("{} · {} ({n})", c.variant, c.layout),
            });
            let mut x = centre - (BAR_STEP + BAR_W) / 2.0;
            for (metric, r, class) in
                [("selection", &c.selection, "sel"), ("pass@1", &c.pass, "pass")]
            {
                let v = if r.rate.is_nan() { 0.0 } else { r.rate };
                let whisker_high = TOP + PLOT_H * (1.0 - r.high);
                bars.push(Bar {
                    label: format!("{} · {}", c.variant, c.layout),
                    metric,
                    x,
                    y: TOP + PLOT_H * (1.0 - v),
                    height: PLOT_H * v,
                    whisker_low: TOP + PLOT_H * (1.0 - r.low),
                    whisker_high,
                    value: pct(r.rate),
                    class,
                    centre: x + BAR_W / 2.0,
                    value_y: whisker_high - 4.0,
                });
                x += BAR_STEP;
            }
        }
        let plot_bottom = TOP + PLOT_H;
        out.push(Chart {
            backend,
            dataset,
            width: AXIS_X + pitch * cells.len() as f64 + 6.0,
            height: plot_bottom + 16.0 + LABEL_LINE + 9.0,
            axis_x: AXIS_X,
            plot_top: TOP,
            plot_bottom,
            label_y: plot_bottom + 16.0,
            label_line: LABEL_LINE,
            bars,
            groups,
        });
    }
    out
}

/// Longest message text kept in the page's drill-down.
const MESSAGE_LIMIT: usize = 1500;

fn compact_message(m: &crate::protocol::Message, full_text_in: &str) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if let Some(Value::String(c)) = v.get_mut("content")
        && c.chars().count() > MESSAGE_LIMIT
    {
        let cut: String = c.chars().take(MESSAGE_LIMIT).collect();
        *c = format!(
            "{cut} … [cut at {MESSAGE_LIMIT} characters; the full text is in {full_text_in}]"
        );
    }
    v
}

/// The page's data island, serialized one trial at a time (a drill-down of 10 000 trials with
/// transcripts never exists as one JSON tree in memory).
fn island(data: &ReportData) -> String {
    let mut out = String::from("{\"trials\":[");
    for (i, t) in data.sample.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut v = json!({
                "id": t.trial_id, "dataset": t.dataset, "task": t.task_id, "variant": t.variant, "layout": t.layout.as_str(), "backend": t.backend,
                "kind": t.kind.as_str(), "category": t.category, "tags": t.tags, "query": t.query,
                "pass": t.score.pass, "selection": t.score.selection_correct,
                "error": t.score.error_type.map(|e| e.as_str()).unwrap_or(""), "detail": t.error.clone().unwrap_or_else(|| t.score.error_detail.clone()),
                "steps": t.steps, "tokens": t.tokens.tool_context_total, "expected": t.expected,
                "calls": t.calls.iter().map(|c| &c.record).collect::<Vec<_>>(),
                // The system prompt is the same everywhere; skip it, and cut long tool results, to keep
                // the page small. transcripts.jsonl has every message in full.
                "transcript": t.transcript.iter().skip(1).map(|m| compact_message(m, data.transcripts_in)).collect::<Vec<_>>(),
        });
        // Live runs: the server, the sandbox's final-state checks and the sampling tokens (absent for
        // simulated trials, whose pages stay as they were).
        if let Some(live) = &t.live {
            v["live"] = json!(live);
        }
        // Judged runs: the final answer and the judge's verdicts with their reasons.
        if let Some(j) = &t.judgement {
            v["final_answer"] = json!(t.final_answer);
            v["judgement"] = json!(j);
        }
        escape_into(&serde_json::to_string(&v).unwrap_or_else(|_| "null".into()), &mut out);
    }
    out.push_str("],\"offered\":");
    let offered: serde_json::Map<String, Value> = data
        .offered
        .iter()
        .map(|(k, fs)| {
            (
                k.clone(),
                json!(
                    fs.iter()
                        .map(|f| json!({"name": f.name, "description": f.description}))
                        .collect::<Vec<_>>()
                ),
            )
        })
        .collect();
    escape_into(&serde_json::to_string(&offered).unwrap_or_else(|_| "null".into()), &mut out);
    out.push('}');
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn island_escapes_markup_and_line_separators() {
        let v = json!({"q": "</script><img src=x onerror=alert(1)> & \u{2028}\u{2029}"});
        let s = json_island(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}') && !s.contains('\u{2029}'));
        // and it still parses back to the same value
        assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v);
    }
}
