//! The terminal table `run`, `report` and `merge` print: one line per cell with the headline figures
//! (columns as wide as their longest value, so long model names keep the table aligned), and next to
//! each cell's `n` the trials left out of its rates and why ([`excluded`]), so a rate over fewer trials
//! than were run never passes unnoticed.

use super::{fixed, pct};
use crate::analysis::cells::CellSummary;
use crate::analysis::judged::JudgedMean;
use std::fmt::Write;

/// A cell's excluded trials as the table and the HTML headline show them: `0`, or the count, its share
/// of the cell's trials and the reasons, e.g. `3 (11.1%: 2 infra, 1 limit)`.
pub fn excluded(c: &CellSummary) -> String {
    if c.infra_errors == 0 {
        return "0".into();
    }
    let reasons: Vec<String> =
        [(c.excluded_infrastructure, "infra"), (c.excluded_provider_limit, "limit")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, why)| format!("{n} {why}"))
            .collect();
    format!("{} ({}%: {})", c.infra_errors, pct(c.excluded_share()), reasons.join(", "))
}

/// What the reasons of [`excluded`] mean, printed under a table that has excluded trials.
pub const EXCLUDED_LEGEND: &str = "excluded: trials in no rate and not in n (the share is of the cell's trials) — infra: the endpoint or harness failed; limit: a provider's limit refused the request (rate, quota, size, context). Rerun them with --retry-errors; --max-excluded PCT gates the share.";

pub fn cells_table(cells: &[CellSummary]) -> String {
    let mut out = String::new();
    // Columns as wide as their longest value, so long model names keep the table aligned.
    let width = |head: &str, f: fn(&CellSummary) -> &str| {
        cells.iter().map(|c| f(c).chars().count()).chain([head.len()]).max().unwrap_or(0)
    };
    let (wd, wv, wl, wb) = (
        width("dataset", |c| &c.dataset),
        width("variant", |c| &c.variant),
        width("layout", |c| &c.layout),
        width("backend", |c| &c.backend),
    );
    let shown: Vec<String> = cells.iter().map(excluded).collect();
    let wx = shown.iter().map(|e| e.chars().count()).chain(["excluded".len()]).max().unwrap_or(0);
    // Judged runs: the judged pass rate (SoPR) and claim coverage next to selection.
    let judged = cells.iter().any(|c| c.judge.is_some());
    let judge_head = if judged {
        format!(" {:>6} {:>9} {:>7}", "SoPR%", "coverage%", "judged")
    } else {
        String::new()
    };
    // The headline (selection, pass@1) is over tasks that need a call (`n`); abstention and refusal are
    // over their own tasks.
    let _ = writeln!(
        out,
        "{:<wd$} {:<wv$} {:<wl$} {:<wb$} {:>5} {:<wx$} {:>10} {:>8} {:>9} {:>8} {:>6} {:>8}{judge_head}",
        "dataset",
        "variant",
        "layout",
        "backend",
        "n",
        "excluded",
        "selection%",
        "pass@1%",
        "abstain%",
        "refused%",
        "steps",
        "tokens"
    );
    for (c, excluded) in cells.iter().zip(&shown) {
        let judge = match (&c.judge, judged) {
            (Some(j), _) => {
                let mean = |m: &Option<JudgedMean>| {
                    m.as_ref().map(|m| pct(m.mean)).unwrap_or_else(|| "n/a".into())
                };
                format!(" {:>6} {:>9} {:>7}", mean(&j.sopr), mean(&j.coverage), j.judged)
            }
            (None, true) => format!(" {:>6} {:>9} {:>7}", "n/a", "n/a", 0),
            (None, false) => String::new(),
        };
        let _ = writeln!(
            out,
            "{:<wd$} {:<wv$} {:<wl$} {:<wb$} {:>5} {:<wx$} {:>10} {:>8} {:>9} {:>8} {:>6} {:>8}{judge}",
            c.dataset,
            c.variant,
            c.layout,
            c.backend,
            c.pass.n,
            excluded,
            pct(c.selection.rate),
            pct(c.pass.rate),
            pct(c.abstention.rate),
            pct(c.refused.rate),
            fixed(c.mean_steps, 2),
            fixed(c.mean_tokens_total, 0)
        );
    }
    if cells.iter().any(|c| c.infra_errors > 0) {
        let _ = writeln!(out, "{EXCLUDED_LEGEND}");
    }
    out
}
