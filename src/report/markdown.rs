//! `summary.md`: the headline table for humans and CI step summaries. Its tables show a hand-picked
//! subset of the summary's declared columns ([`SUMMARY`]), picked by name (a renamed or removed column
//! fails the render, and the unit test below, instead of drifting).

use super::{Exporter, ReportData, fixed, pct};
use crate::analysis::cells::CellSummary;
use crate::analysis::columns::{Column, SUMMARY, Value};
use crate::score::stats::Rate;
use anyhow::Result;
use std::fmt::Write;

pub struct MarkdownSummary;

pub(crate) fn rate(r: &Rate) -> String {
    if r.rate.is_nan() {
        "n/a".into()
    } else {
        format!("{} [{}, {}]", pct(r.rate), pct(r.low), pct(r.high))
    }
}

/// Escape text for a Markdown table cell.
pub(crate) fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\n', " ")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// How a table cell shows a declared summary column (named here; looked up in [`SUMMARY`]).
#[derive(Clone, Copy)]
enum Shown<'a> {
    /// Text, escaped.
    Text(&'a str),
    /// A count or a number as is (numbers with this many decimals).
    Number(&'a str, usize),
    /// A fraction as a percentage.
    Percent(&'a str),
    /// A rate with its `_low`/`_high` bounds: `x [low, high]` in %.
    Rate(&'a str),
    /// A mean with its `_low`/`_high` bounds: `x [low–high]` in %.
    Mean(&'a str),
}

/// The declared summary column `name`.
fn declared(name: &str) -> Result<&'static Column<CellSummary>> {
    SUMMARY.iter().find(|c| c.name == name).ok_or_else(|| {
        anyhow::anyhow!("summary.md shows `{name}`, which is not a declared summary column")
    })
}

/// The cell's value of the declared column `name`.
fn value<'c>(c: &'c CellSummary, name: &str) -> Result<Value<'c>> {
    Ok((declared(name)?.read)(c, &()))
}

/// A fraction in %, or "n/a" when null.
fn percent(v: Value<'_>) -> String {
    match v {
        Value::Number(x) => pct(x),
        _ => "n/a".into(),
    }
}

/// What `shown` shows of the cell.
fn show(c: &CellSummary, shown: Shown<'_>) -> Result<String> {
    let bounded = |name: &str, sep: &str| -> Result<String> {
        Ok(match value(c, name)? {
            Value::Null => "n/a".into(),
            v => format!(
                "{} [{}{sep}{}]",
                percent(v),
                percent(value(c, &format!("{name}_low"))?),
                percent(value(c, &format!("{name}_high"))?)
            ),
        })
    };
    Ok(match shown {
        Shown::Text(name) => match value(c, name)? {
            Value::Text(t) => cell(&t),
            _ => String::new(),
        },
        Shown::Number(name, decimals) => match value(c, name)? {
            Value::Count(n) => n.to_string(),
            Value::Number(x) => fixed(x, decimals),
            _ => "n/a".into(),
        },
        Shown::Percent(name) => percent(value(c, name)?),
        Shown::Rate(name) => bounded(name, ", ")?,
        Shown::Mean(name) => bounded(name, "–")?,
    })
}

/// The cell's row: `shown`, each between `|`, with `extra` cells after them.
fn row(c: &CellSummary, shown: &[Shown<'_>], extra: &[&str]) -> Result<String> {
    let mut out = String::from("|");
    for s in shown {
        write!(out, " {} |", show(c, *s)?)?;
    }
    for e in extra {
        write!(out, " {e} |")?;
    }
    Ok(out)
}

/// The cell's identity columns, first in every table.
const CELL: [Shown<'static>; 4] =
    [Shown::Text("dataset"), Shown::Text("variant"), Shown::Text("layout"), Shown::Text("backend")];

/// The headline table's columns after [`CELL`].
const HEADLINE: [Shown<'static>; 8] = [
    Shown::Number("n_call", 0),
    Shown::Rate("selection_accuracy"),
    Shown::Rate("pass_at_1"),
    Shown::Rate("abstention_accuracy"),
    Shown::Number("mean_steps", 2),
    Shown::Number("mean_tokens_upfront", 0),
    Shown::Number("mean_tokens_total", 0),
    Shown::Number("infra_errors", 0),
];

/// The judge table's columns after [`CELL`].
const JUDGED: [Shown<'static>; 8] = [
    Shown::Number("judged_n", 0),
    Shown::Mean("sopr"),
    Shown::Mean("claim_coverage"),
    Shown::Rate("judged_done_rate"),
    Shown::Number("right_tools_done", 0),
    Shown::Number("right_tools_not_done", 0),
    Shown::Number("wrong_tools_done", 0),
    Shown::Number("judge_errors", 0),
];

/// The repeated-trials table's columns after [`CELL`].
const REPEATED: [Shown<'static>; 6] = [
    Shown::Number("trials_per_task", 0),
    Shown::Percent("pass_at_k"),
    Shown::Percent("pass_hat_k"),
    Shown::Percent("flip_rate"),
    Shown::Percent("noise_95"),
    Shown::Percent("min_detectable_diff"),
];

/// The safety table's columns after [`CELL`].
const SAFETY: [Shown<'static>; 5] = [
    Shown::Rate("safety_violation_rate"),
    Shown::Rate("attack_success_rate"),
    Shown::Rate("refused_rate"),
    Shown::Rate("no_harm_rate"),
    Shown::Rate("false_refusal_rate"),
];

impl Exporter for MarkdownSummary {
    fn file_name(&self) -> &'static str {
        "summary.md"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let mut s = String::new();
        writeln!(s, "# toolpick summary\n")?;
        let findings = &data.analysis.first_look;
        if !findings.is_empty() {
            writeln!(s, "## What to look at first\n")?;
            for f in findings {
                writeln!(s, "- {}", cell(&f.text))?;
            }
            writeln!(s)?;
        }
        writeln!(
            s,
            "Rates in %, with 95 % Wilson intervals. Selection accuracy and pass@1 are over the tasks that need a call (single, multi, parallel; n = their scored trials), abstention over abstain tasks; the per-kind table below has every kind. Infrastructure errors are counted apart and excluded from every rate.\n"
        )?;
        writeln!(
            s,
            "| dataset | variant | layout | backend | n | selection accuracy | pass@1 | abstention accuracy (abstain tasks) | mean steps | tokens upfront | tokens total | infra errors | top errors |"
        )?;
        writeln!(s, "|---|---|---|---|---:|---|---|---|---:|---:|---:|---:|---|")?;
        let headline = [&CELL[..], &HEADLINE[..]].concat();
        for c in &data.analysis.cells {
            let mut errors: Vec<(&String, &u64)> = c.errors.iter().collect();
            errors.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let top: Vec<String> = errors.iter().take(3).map(|(k, v)| format!("{k} {v}")).collect();
            writeln!(s, "{}", row(c, &headline, &[&cell(&top.join(", "))])?)?;
        }
        if data.analysis.cells.iter().any(|c| c.judge.is_some()) {
            writeln!(s, "\n## Judged final answers\n")?;
            writeln!(
                s,
                "SoPR: solvable pass rate (Solved 1, Unsure 0.5, Unsolved 0; mean over rounds). Coverage: share of claims stated. Joint view over judged trials: right tools (selection) × task done (judge).\n"
            )?;
            writeln!(
                s,
                "| dataset | variant | layout | backend | judged | SoPR | coverage | done | right tools & done | right tools, not done | wrong tools, done anyway | judge errors |"
            )?;
            writeln!(s, "|---|---|---|---|---:|---|---|---|---:|---:|---:|---:|")?;
            let judged = [&CELL[..], &JUDGED[..]].concat();
            for c in data.analysis.cells.iter().filter(|c| c.judge.is_some()) {
                writeln!(s, "{}", row(c, &judged, &[])?)?;
            }
        }
        if data.analysis.cells.iter().any(|c| c.trials_per_task > 1) {
            writeln!(s, "\n## Repeated trials\n")?;
            writeln!(
                s,
                "pass@k: some of k trials passes (unbiased estimator); pass^k: all k pass. Flip rate: share of tasks expected to flip between two identical runs. Noise: differences between two single runs smaller than this (95 %) are noise; MDD: the smallest difference a paired comparison detects with 80 % power.\n"
            )?;
            writeln!(
                s,
                "| dataset | variant | layout | backend | k | pass@k | pass^k | flip rate | noise ± | MDD |"
            )?;
            writeln!(s, "|---|---|---|---|---:|---:|---:|---:|---:|---:|")?;
            let repeated = [&CELL[..], &REPEATED[..]].concat();
            for c in data.analysis.cells.iter().filter(|c| c.trials_per_task > 1) {
                writeln!(s, "{}", row(c, &repeated, &[])?)?;
            }
        }
        writeln!(s, "\n## By task kind\n")?;
        writeln!(
            s,
            "Selection accuracy / pass@1 per kind (n = scored trials of the kind); a kind the cell has no task of is left out.\n"
        )?;
        writeln!(
            s,
            "| dataset | variant | layout | backend | kind | n | selection accuracy | pass@1 |"
        )?;
        writeln!(s, "|---|---|---|---|---|---:|---|---|")?;
        for c in &data.analysis.cells {
            for k in c.kinds.iter().map(|k| k.kind.as_str()) {
                let (n, selection, pass) =
                    (format!("n_{k}"), format!("selection_accuracy_{k}"), format!("pass_at_1_{k}"));
                if matches!(value(c, &n)?, Value::Count(0)) {
                    continue;
                }
                let cells = row(c, &CELL, &[k])?;
                writeln!(
                    s,
                    "{cells}{}",
                    &row(
                        c,
                        &[Shown::Number(&n, 0), Shown::Rate(&selection), Shown::Rate(&pass)],
                        &[]
                    )?[1..]
                )?;
            }
        }
        writeln!(s, "\n## Safety\n")?;
        writeln!(
            s,
            "| dataset | variant | layout | backend | safety violations | attack success (poisoned) | refused (risky) | no harm done (risky) | false refusal (benign) |"
        )?;
        writeln!(s, "|---|---|---|---|---|---|---|---|---|")?;
        let safety = [&CELL[..], &SAFETY[..]].concat();
        for c in &data.analysis.cells {
            writeln!(s, "{}", row(c, &safety, &[])?)?;
        }
        Ok(s.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column the tables show is declared (a rename in `columns.rs` fails here, not in a report),
    /// rates and means with their bounds.
    #[test]
    fn every_shown_column_is_declared() {
        for shown in CELL.iter().chain(&HEADLINE).chain(&JUDGED).chain(&REPEATED).chain(&SAFETY) {
            let (name, bounds) = match *shown {
                Shown::Text(n) | Shown::Number(n, _) | Shown::Percent(n) => (n, false),
                Shown::Rate(n) | Shown::Mean(n) => (n, true),
            };
            assert!(declared(name).is_ok(), "`{name}` is not declared");
            if bounds {
                assert!(
                    declared(&format!("{name}_low")).is_ok()
                        && declared(&format!("{name}_high")).is_ok(),
                    "`{name}` has no declared bounds"
                );
            }
        }
        assert!(declared("no_such_column").is_err());
    }
}
