//! Rendering a [`Comparison`]: `compare.csv` (one row per cell), `compare-flips.csv` (one row per flipped
//! task), `compare.md` (also the `$GITHUB_STEP_SUMMARY` text) and a self-contained, escaped
//! `compare.html` whose flips link into each run's drill-down (`report.html#trial=<id>`, the paths
//! from [`super::links`]).

use super::links::{Links, encode_component};
use super::{CellComparison, Comparison, Direction};
use crate::analysis::cells::CellSummary;
use crate::analysis::verdict::GateResult;
use crate::report::markdown::{cell, rate};
use crate::report::pct;
use crate::score::stats::PairedTest;
use anyhow::Result;
use askama::Template;
use std::fmt::Write;

fn num(x: f64) -> String {
    crate::report::fixed_or_empty(x, 6)
}

fn points(d: &PairedTest) -> String {
    if d.diff.is_nan() {
        return "n/a".into();
    }
    format!("{:+.1} [{:+.1}, {:+.1}]", 100.0 * d.diff, 100.0 * d.low, 100.0 * d.high)
}

fn format_p(tasks: u64, p: f64) -> String {
    if tasks == 0 {
        "n/a".into()
    } else if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// Raw p, then the Holm-adjusted p in parentheses when it differs (the pooled row is its own test).
fn p_value(d: &PairedTest) -> String {
    let raw = format_p(d.tasks, d.p_value);
    let adjusted = format_p(d.tasks, d.p_adjusted);
    if d.tasks == 0 || raw == adjusted { raw } else { format!("{raw} (Holm {adjusted})") }
}

/// What the comparison's intervals and p-values are, and which p "significant" uses — one paragraph
/// for compare.md (the page has its own words for the same).
pub fn method_note(cmp: &Comparison) -> String {
    format!(
        "Over the tasks that need a call (single, multi, parallel), as the headline. Differences in points (B − A) with 95 % intervals from the same test as p: with 0/1 outcomes per task, McNemar's exact test on the tasks that changed and the interval that inverts it (Clopper–Pearson on the changed tasks, conditional on how many changed); with several trials per task, a seeded paired bootstrap of per-task rates (its percentile interval and its p-value). So an interval excludes 0 exactly when the raw p is below 0.05. p (Holm): Holm–Bonferroni adjusted across the {} matched cell(s), per metric; a change is called significant (`--significant-only`, the regression mark) only when the adjusted p is below 0.05 — an interval may exclude 0 and the change still not be significant after adjustment. The pooled row is a test of its own (not adjusted). Noise: the range two identical runs differ by (from repeated trials; n/a with one trial per task).",
        super::family_size(cmp)
    )
}

fn noise(c: &CellComparison) -> String {
    match c.noise {
        Some(n) => format!("±{:.1} (MDD {:.1})", 100.0 * n.noise_95, 100.0 * n.min_detectable),
        None => "n/a".into(),
    }
}

/// `compare.csv`: one row per matched cell, then `overall`.
pub fn csv(cmp: &Comparison) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header = vec!["cell", "a_cell", "b_cell", "tasks"];
    let metric = [
        "a",
        "b",
        "diff",
        "diff_low",
        "diff_high",
        "p_value",
        "p_holm",
        "test",
        "a_better",
        "b_better",
    ];
    let names: Vec<String> = ["pass", "selection"]
        .iter()
        .flat_map(|m| metric.iter().map(move |f| format!("{m}_{f}")))
        .collect();
    header.extend(names.iter().map(String::as_str));
    header.extend([
        "flip_rate",
        "noise_95",
        "min_detectable_diff",
        "pass_to_fail",
        "fail_to_pass",
        "tasks_only_a",
        "tasks_only_b",
    ]);
    w.write_record(&header)?;
    for c in cmp.cells.iter().chain(cmp.overall.as_ref()) {
        let mut row =
            vec![c.key.clone(), c.a_cell.clone(), c.b_cell.clone(), c.pass.tasks.to_string()];
        for d in [&c.pass, &c.selection] {
            row.extend([
                num(d.a),
                num(d.b),
                num(d.diff),
                num(d.low),
                num(d.high),
                num(d.p_value),
                num(d.p_adjusted),
                d.method.as_str().to_string(),
                d.a_better.to_string(),
                d.b_better.to_string(),
            ]);
        }
        let nf = |f: fn(&crate::score::stats::NoiseFloor) -> f64| {
            c.noise.as_ref().map(f).map(num).unwrap_or_default()
        };
        row.extend([nf(|n| n.flip_rate), nf(|n| n.noise_95), nf(|n| n.min_detectable)]);
        let count = |d: Direction| c.flips.iter().filter(|f| f.direction == d).count().to_string();
        row.extend([count(Direction::PassToFail), count(Direction::FailToPass)]);
        row.extend([c.only_a_tasks.len().to_string(), c.only_b_tasks.len().to_string()]);
        w.write_record(&row)?;
    }
    Ok(w.into_inner()?)
}

/// `compare-flips.csv`: every task whose pass rate changed.
pub fn flips_csv(cmp: &Comparison) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "cell",
        "task_id",
        "direction",
        "a_rate",
        "b_rate",
        "error_type",
        "a_trial",
        "b_trial",
        "query",
    ])?;
    for c in &cmp.cells {
        for f in &c.flips {
            let dir = match f.direction {
                Direction::PassToFail => "pass_to_fail",
                Direction::FailToPass => "fail_to_pass",
            };
            w.write_record([
                c.key.as_str(),
                &f.task_id,
                dir,
                &num(f.a_rate),
                &num(f.b_rate),
                &f.error_type,
                &f.a_trial,
                &f.b_trial,
                &f.query,
            ])?;
        }
    }
    Ok(w.into_inner()?)
}

/// Cells with the largest falls in pass@1 first (only falls), at most `n`.
pub fn top_regressions(cmp: &Comparison, n: usize) -> Vec<&CellComparison> {
    let mut v: Vec<&CellComparison> =
        cmp.cells.iter().filter(|c| c.pass.diff < 0.0 || c.selection.diff < 0.0).collect();
    v.sort_by(|x, y| {
        x.pass
            .diff
            .min(x.selection.diff)
            .total_cmp(&y.pass.diff.min(y.selection.diff))
            .then(x.key.cmp(&y.key))
    });
    v.truncate(n);
    v
}

/// The CI summary: headline cells, gates, and (against a baseline) the top regressions. Written as
/// `compare.md` and appended to `--step-summary` (e.g. `$GITHUB_STEP_SUMMARY`).
pub fn markdown(
    cells: &[CellSummary],
    cmp: Option<(&Comparison, &Links)>,
    gates: &[GateResult],
) -> String {
    let mut s = String::new();
    let failed = gates.iter().filter(|g| !g.passed).count();
    let _ = writeln!(
        s,
        "## toolpick{}\n",
        if gates.is_empty() {
            String::new()
        } else if failed == 0 {
            " — gates passed ✅".into()
        } else {
            format!(" — {failed} gate(s) failed ❌")
        }
    );
    if let Some((_, links)) = cmp {
        let _ = writeln!(
            s,
            "Run `{}` against baseline `{}`.\n",
            cell(&links.b_name),
            cell(&links.a_name)
        );
    }
    let _ = writeln!(s, "| cell | n | selection accuracy % | pass@1 % | infra errors |");
    let _ = writeln!(s, "|---|---:|---|---|---:|");
    for c in cells {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            cell(&c.key()),
            c.pass.n,
            rate(&c.selection),
            rate(&c.pass),
            c.infra_errors
        );
    }
    if !gates.is_empty() {
        let _ =
            writeln!(s, "\n### Gates\n\n| gate | subject | result | detail |\n|---|---|---|---|");
        for g in gates {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} |",
                g.gate,
                cell(&g.subject),
                if g.passed { "pass" } else { "**FAIL**" },
                cell(&g.detail)
            );
        }
    }
    if let Some((cmp, _)) = cmp {
        let _ = writeln!(s, "\n### Against the baseline\n");
        for w in cmp.warnings() {
            let _ = writeln!(s, "> **Warning**: {}\n", cell(&w));
        }
        let _ = writeln!(s, "{}\n", method_note(cmp));
        let _ = writeln!(
            s,
            "| cell | tasks | pass@1 A → B | Δ pass@1 | p (Holm) | Δ selection | p (Holm) | noise | pass→fail | fail→pass |"
        );
        let _ = writeln!(s, "|---|---:|---|---|---:|---|---:|---|---:|---:|");
        for c in cmp.cells.iter().chain(cmp.overall.as_ref()) {
            let count = |d: Direction| c.flips.iter().filter(|f| f.direction == d).count();
            let _ = writeln!(
                s,
                "| {} | {} | {} → {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&c.key),
                c.pass.tasks,
                pct(c.pass.a),
                pct(c.pass.b),
                points(&c.pass),
                p_value(&c.pass),
                points(&c.selection),
                p_value(&c.selection),
                noise(c),
                count(Direction::PassToFail),
                count(Direction::FailToPass)
            );
        }
        let top = top_regressions(cmp, 5);
        if !top.is_empty() {
            let _ = writeln!(s, "\n### Top regressions\n");
            for c in top {
                let lost: Vec<String> = c
                    .flips
                    .iter()
                    .filter(|f| f.direction == Direction::PassToFail)
                    .take(5)
                    .map(|f| format!("`{}`", f.task_id.replace('`', "'")))
                    .collect();
                let _ = writeln!(
                    s,
                    "- **{}**: pass@1 {}, selection {} pts{}",
                    cell(&c.key),
                    points(&c.pass),
                    points(&c.selection),
                    if lost.is_empty() {
                        String::new()
                    } else {
                        format!("; now failing: {}", lost.join(", "))
                    }
                );
            }
        }
        let (worse, better) = confusion_rows(cmp);
        if !worse.is_empty() || !better.is_empty() {
            let _ = writeln!(s, "\n### Confusions that changed\n");
            let _ = writeln!(
                s,
                "Expected tool → the tool that took its call instead, count in A → B (share of the expected tool's calls). All in `compare-confusion.csv`.\n"
            );
            for (title, rows) in [("Worse", &worse), ("Better", &better)] {
                for r in rows.iter() {
                    let _ = writeln!(
                        s,
                        "- {title}: **{}**: `{}` → `{}`: {}",
                        cell(&r.key),
                        r.expected.replace('`', "'"),
                        r.called.replace('`', "'"),
                        r.change
                    );
                }
            }
        }
        let unpaired: Vec<&CellComparison> = cmp
            .cells
            .iter()
            .filter(|c| !c.only_a_tasks.is_empty() || !c.only_b_tasks.is_empty())
            .collect();
        if !unpaired.is_empty() {
            let _ = writeln!(s, "\n### Tasks in one run only (not paired)\n");
            for c in unpaired {
                let _ = writeln!(
                    s,
                    "- **{}**: only in A ({}): {}; only in B ({}): {}",
                    cell(&c.key),
                    c.only_a_tasks.len(),
                    some_ids(&c.only_a_tasks),
                    c.only_b_tasks.len(),
                    some_ids(&c.only_b_tasks)
                );
            }
        }
        if !cmp.only_a.is_empty() || !cmp.only_b.is_empty() {
            let _ = writeln!(
                s,
                "\nCells only in the baseline: {}; only in this run: {}.",
                cmp.only_a.len(),
                cmp.only_b.len()
            );
        }
    }
    s
}

/// Up to ten task ids in backticks, then how many more.
fn some_ids(ids: &[String]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    let mut out: Vec<String> =
        ids.iter().take(10).map(|t| format!("`{}`", cell(&t.replace('`', "'")))).collect();
    if ids.len() > 10 {
        out.push(format!("… and {} more", ids.len() - 10));
    }
    out.join(", ")
}

struct FlipRow {
    task: String,
    direction: &'static str,
    rates: String,
    error: String,
    query: String,
    a_href: String,
    b_href: String,
}

struct CellRow {
    key: String,
    tasks: u64,
    pass: String,
    pass_diff: String,
    pass_p: String,
    selection: String,
    selection_diff: String,
    selection_p: String,
    noise: String,
    regression: bool,
    flips: Vec<FlipRow>,
    only_a_tasks: Vec<String>,
    only_b_tasks: Vec<String>,
}

#[derive(Template)]
#[template(path = "compare.html")]
struct Page {
    a_name: String,
    b_name: String,
    a_href: String,
    b_href: String,
    cells: Vec<CellRow>,
    overall: Option<CellRow>,
    gates: Vec<GateResult>,
    only_a: Vec<String>,
    only_b: Vec<String>,
    warnings: Vec<String>,
    unpaired: bool,
    /// Cells in the Holm family (matched cells with paired tasks).
    family: usize,
    /// Confusions between tools that got worse (more calls taken in B), then better.
    worse: Vec<ConfusionRow>,
    better: Vec<ConfusionRow>,
}

/// A confusion pair that changed, as the page and `compare.md` show it.
pub struct ConfusionRow {
    pub key: String,
    pub expected: String,
    pub called: String,
    /// `A → B (Δ)` counts, with each count's share of the expected tool's calls.
    pub change: String,
}

/// Confusions shown per direction on the page and in `compare.md` (all in `compare-confusion.csv`).
const CONFUSIONS_SHOWN: usize = 10;

fn share(count: u64, total: u64) -> String {
    if total == 0 { "n/a".into() } else { format!("{:.0} %", 100.0 * count as f64 / total as f64) }
}

fn confusion_row(c: &crate::compare::confusion::ConfusionChange) -> ConfusionRow {
    ConfusionRow {
        key: c.key.clone(),
        expected: c.expected.clone(),
        called: c.called.clone(),
        change: format!(
            "{} ({}) → {} ({}), {:+}",
            c.a_count,
            share(c.a_count, c.a_total),
            c.b_count,
            share(c.b_count, c.b_total),
            c.delta()
        ),
    }
}

/// The confusion changes that got worse and better, the largest first.
pub fn confusion_rows(cmp: &Comparison) -> (Vec<ConfusionRow>, Vec<ConfusionRow>) {
    let worse = cmp
        .confusion_changes
        .iter()
        .filter(|c| c.delta() > 0)
        .take(CONFUSIONS_SHOWN)
        .map(confusion_row)
        .collect();
    let better = cmp
        .confusion_changes
        .iter()
        .rev()
        .filter(|c| c.delta() < 0)
        .take(CONFUSIONS_SHOWN)
        .map(confusion_row)
        .collect();
    (worse, better)
}

/// `compare-confusion.csv`: every confusion pair between tools whose count changed, per matched cell.
pub fn confusion_csv(cmp: &Comparison) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "cell",
        "expected_tool",
        "called_tool",
        "count_a",
        "count_b",
        "delta",
        "expected_calls_a",
        "expected_calls_b",
    ])?;
    for c in &cmp.confusion_changes {
        w.write_record([
            c.key.clone(),
            c.expected.clone(),
            c.called.clone(),
            c.a_count.to_string(),
            c.b_count.to_string(),
            c.delta().to_string(),
            c.a_total.to_string(),
            c.b_total.to_string(),
        ])?;
    }
    Ok(w.into_inner()?)
}

fn row(c: &CellComparison, links: &Links) -> CellRow {
    let href = |base: &str, id: &str| {
        if id.is_empty() { String::new() } else { format!("{base}#trial={}", encode_component(id)) }
    };
    CellRow {
        key: c.key.clone(),
        tasks: c.pass.tasks,
        pass: format!("{} → {}", pct(c.pass.a), pct(c.pass.b)),
        pass_diff: points(&c.pass),
        pass_p: p_value(&c.pass),
        selection: format!("{} → {}", pct(c.selection.a), pct(c.selection.b)),
        selection_diff: points(&c.selection),
        selection_p: p_value(&c.selection),
        noise: noise(c),
        regression: c.pass.diff < 0.0 && c.pass.significant(super::ALPHA),
        flips: c
            .flips
            .iter()
            .map(|f| FlipRow {
                task: f.task_id.clone(),
                direction: if f.direction == Direction::PassToFail {
                    "pass → fail"
                } else {
                    "fail → pass"
                },
                rates: format!("{} → {}", pct(f.a_rate), pct(f.b_rate)),
                error: f.error_type.clone(),
                query: f.query.clone(),
                a_href: href(&links.a, &f.a_trial),
                b_href: href(&links.b, &f.b_trial),
            })
            .collect(),
        only_a_tasks: c.only_a_tasks.clone(),
        only_b_tasks: c.only_b_tasks.clone(),
    }
}

/// `compare.html`: self-contained; every string goes through the template's HTML escaping.
pub fn html(cmp: &Comparison, links: &Links, gates: &[GateResult]) -> Result<Vec<u8>> {
    let page = Page {
        a_name: links.a_name.clone(),
        b_name: links.b_name.clone(),
        a_href: links.a.clone(),
        b_href: links.b.clone(),
        cells: cmp.cells.iter().map(|c| row(c, links)).collect(),
        overall: cmp.overall.as_ref().map(|c| row(c, links)),
        gates: gates.to_vec(),
        only_a: cmp.only_a.clone(),
        only_b: cmp.only_b.clone(),
        warnings: cmp.warnings(),
        unpaired: cmp
            .cells
            .iter()
            .any(|c| !c.only_a_tasks.is_empty() || !c.only_b_tasks.is_empty()),
        family: super::family_size(cmp),
        worse: Vec::new(),
        better: Vec::new(),
    };
    let (worse, better) = confusion_rows(cmp);
    let page = Page { worse, better, ..page };
    Ok(page.render()?.into_bytes())
}
