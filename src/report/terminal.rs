//! The terminal table `run`, `report` and `merge` print: one line per cell with the headline figures
//! (columns as wide as their longest value, so long model names keep the table aligned).

use super::{fixed, pct};
use crate::analysis::cells::CellSummary;
use crate::analysis::judged::JudgedMean;
use std::fmt::Write;

pub fn cells_table(cells: &[CellSummary]) -> String {
    let mut out = String::new();
    // Columns as wide as their longest value, so long model names keep the table aligned.
    let width = |head: &str, f: fn(&CellSummary) -> &str| cells.iter().map(|c| f(c).chars().count()).chain([head.len()]).max().unwrap_or(0);
    let (wd, wv, wl, wb) =
        (width("dataset", |c| &c.dataset), width("variant", |c| &c.variant), width("layout", |c| &c.layout), width("backend", |c| &c.backend));
    // Judged runs: the judged pass rate (SoPR) and claim coverage next to selection.
    let judged = cells.iter().any(|c| c.judge.is_some());
    let judge_head = if judged { format!(" {:>6} {:>9} {:>7}", "SoPR%", "coverage%", "judged") } else { String::new() };
    // The headline (selection, pass@1) is over tasks that need a call (`n`); abstention and refusal are
    // over their own tasks.
    let _ = writeln!(
        out,
        "{:<wd$} {:<wv$} {:<wl$} {:<wb$} {:>5} {:>10} {:>8} {:>9} {:>8} {:>6} {:>8} {:>7}{judge_head}",
        "dataset",
        "variant",
        "layout",
        "backend",
        "n",
        "selection%",
        "pass@1%",
        "abstain%",
        "refused%",
        "steps",
        "tokens",
        "errors"
    );
    for c in cells {
        let judge = match (&c.judge, judged) {
            (Some(j), _) => {
                let mean = |m: &Option<JudgedMean>| m.as_ref().map(|m| pct(m.mean)).unwrap_or_else(|| "n/a".into());
                format!(" {:>6} {:>9} {:>7}", mean(&j.sopr), mean(&j.coverage), j.judged)
            }
            (None, true) => format!(" {:>6} {:>9} {:>7}", "n/a", "n/a", 0),
            (None, false) => String::new(),
        };
        let _ = writeln!(
            out,
            "{:<wd$} {:<wv$} {:<wl$} {:<wb$} {:>5} {:>10} {:>8} {:>9} {:>8} {:>6} {:>8} {:>7}{judge}",
            c.dataset,
            c.variant,
            c.layout,
            c.backend,
            c.pass.n,
            pct(c.selection.rate),
            pct(c.pass.rate),
            pct(c.abstention.rate),
            pct(c.refused.rate),
            fixed(c.mean_steps, 2),
            fixed(c.mean_tokens_total, 0),
            c.infra_errors
        );
    }
    out
}
