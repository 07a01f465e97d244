//! Quality gates: thresholds a run must meet for CI to pass (exit code 100 otherwise).
//!
//! Minimum rates (`--min-pass-rate`, `--min-selection-accuracy`) apply to each gated cell, or to the
//! gated cells pooled (`--gate-scope overall`). `--max-drop` applies to a comparison against a baseline
//! run: a cell fails when its pass@1 or selection accuracy fell by more than the given points, and with
//! `--significant-only` only when that fall is also significant (p < 0.05 after Holm adjustment across the
//! matched cells; see [`crate::compare`]). Both rates are the headline figures: over the trials of tasks
//! that need a call (single, multi, parallel). `--max-excluded` fails a gated cell (or the pooled cells)
//! when more than the given percentage of its trials are in no rate (infrastructure errors, provider
//! limits: `crate::score::exclusion`): a rate that meets its threshold on what is left of a cell is not
//! the rate that was asked for. It defaults to [`DEFAULT_MAX_EXCLUDED`] when another gate is checked,
//! and is off otherwise. Gates only judge; the CLI turns a failed gate into the exit code.
//!
//! A gate never passes by checking nothing: a `--gate-cells` pattern that matches no cell it would
//! judge is [`Unmatched`] (an input error, exit 2, listing the cells there are), and every verdict names
//! its cell by the full key `dataset/catalog/variant/layout/backend` the pattern is matched against, so
//! a key copied from a gate line selects that cell.

use crate::analysis::cells::CellSummary;
use crate::analysis::verdict::GateResult;
use crate::compare::ALPHA;
use crate::compare::{CellComparison, Comparison};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every gated cell on its own.
    #[default]
    Cell,
    /// The gated cells pooled.
    Overall,
}

/// What the user asked for. Thresholds are in percent (0–100) and points.
#[derive(Debug, Clone, Default)]
pub struct GateSpec {
    pub min_pass_rate: Option<f64>,
    pub min_selection_accuracy: Option<f64>,
    pub max_drop: Option<f64>,
    pub significant_only: bool,
    pub scope: Scope,
    /// Glob over cell keys `dataset/catalog/variant/layout/backend` (`*` matches anything); `None`: every cell.
    pub cells: Option<String>,
    /// Most trials of a gated cell that may be in no rate, in percent of its trials.
    pub max_excluded: Option<f64>,
    /// `max_excluded` is [`DEFAULT_MAX_EXCLUDED`], applied because another gate was asked for.
    pub max_excluded_by_default: bool,
}

/// `--max-excluded` when another gate is checked and the flag is not given: a rate gate passed by a
/// cell that lost more than a tenth of its trials says little about the rate that was meant. Alone,
/// the gate is off (`run` and `report` without gates never fail for it).
pub const DEFAULT_MAX_EXCLUDED: f64 = 10.0;

impl GateSpec {
    pub fn is_empty(&self) -> bool {
        self.min_pass_rate.is_none()
            && self.min_selection_accuracy.is_none()
            && self.max_drop.is_none()
    }

    /// Check the thresholds are in range; the error names the flag.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let thresholds = [
            ("--min-pass-rate", self.min_pass_rate),
            ("--min-selection-accuracy", self.min_selection_accuracy),
            ("--max-drop", self.max_drop),
            ("--max-excluded", self.max_excluded),
        ];
        for (flag, v) in thresholds {
            if let Some(v) = v
                && !(0.0..=100.0).contains(&v)
            {
                return Err((
                    flag,
                    format!("{v} is not a percentage between 0 and 100 (write 80 for 80 %)"),
                ));
            }
        }
        Ok(())
    }

    fn gated(&self, key: &str) -> bool {
        self.cells.as_deref().is_none_or(|p| glob(p, key))
    }
}

/// `*` matches any run of characters; everything else literally.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

fn min_rate(
    gate: &str,
    metric: &str,
    subject: String,
    successes: u64,
    n: u64,
    threshold: f64,
) -> GateResult {
    let value = if n == 0 { f64::NAN } else { 100.0 * successes as f64 / n as f64 };
    let passed = n > 0 && value >= threshold;
    let detail = if n == 0 {
        format!(
            "no scored trial of a task that needs a call, so {metric} cannot meet {threshold:.1} %"
        )
    } else {
        format!(
            "{metric} {value:.1} % ({successes}/{n}) {} {threshold:.1} %",
            if passed { "≥" } else { "<" }
        )
    };
    GateResult { gate: gate.into(), subject, value, threshold, passed, detail }
}

/// A `--gate-cells` pattern that selects none of the cells a gate would judge.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmatched {
    pub pattern: String,
    /// What the pattern was matched against, e.g. "cell of this run".
    pub what: &'static str,
    /// The keys it could have matched, sorted.
    pub cells: Vec<String>,
}

/// Cells listed in full in an [`Unmatched`] message before "and N more".
const LISTED: usize = 20;

impl std::fmt::Display for Unmatched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` matches no {}, so the gate would check nothing", self.pattern, self.what)?;
        if self.cells.is_empty() {
            return f.write_str(" (there are none)");
        }
        let shown: Vec<&str> = self.cells.iter().take(LISTED).map(String::as_str).collect();
        write!(
            f,
            "; the cells (dataset/catalog/variant/layout/backend) are: {}",
            shown.join(", ")
        )?;
        if self.cells.len() > LISTED {
            write!(f, " and {} more", self.cells.len() - LISTED)?;
        }
        Ok(())
    }
}

impl std::error::Error for Unmatched {}

/// Check that the spec's `--gate-cells` pattern selects at least one of `keys` (the full cell keys a
/// gate would judge). Without a pattern, or without a gate to apply, there is nothing to check.
pub fn check_cells<'a>(
    spec: &GateSpec,
    keys: impl IntoIterator<Item = &'a str>,
    what: &'static str,
) -> Result<(), Unmatched> {
    let Some(pattern) = spec.cells.as_deref() else { return Ok(()) };
    if spec.is_empty() {
        return Ok(());
    }
    let mut cells: Vec<String> = Vec::new();
    for k in keys {
        if glob(pattern, k) {
            return Ok(());
        }
        cells.push(k.to_string());
    }
    cells.sort();
    cells.dedup();
    Err(Unmatched { pattern: pattern.to_string(), what, cells })
}

fn drop_gate(c: &CellComparison, spec: &GateSpec, limit: f64) -> Vec<GateResult> {
    [("pass@1", &c.pass), ("selection accuracy", &c.selection)]
        .into_iter()
        .map(|(metric, d)| {
            let drop = -100.0 * d.diff;
            let too_big = d.tasks > 0 && drop > limit;
            let significant = d.significant(ALPHA);
            let passed = !too_big || (spec.significant_only && !significant);
            let detail = if d.tasks == 0 {
                format!("{metric}: no task scored in both runs")
            } else {
                format!(
                    "{metric} {:.1} → {:.1} % ({:+.1} pts, 95 % CI [{:+.1}, {:+.1}], p = {:.3}, Holm-adjusted p = {:.3}, {} tasks){}",
                    100.0 * d.a,
                    100.0 * d.b,
                    100.0 * d.diff,
                    100.0 * d.low,
                    100.0 * d.high,
                    d.p_value,
                    d.p_adjusted,
                    d.tasks,
                    if too_big && passed { "; not significant after Holm adjustment (adjusted p ≥ 0.05), so allowed by --significant-only" } else { "" }
                )
            };
            // The full key (with the catalog, which `--match` leaves out by default): what --gate-cells matches.
            GateResult { gate: "--max-drop".into(), subject: format!("{} ({metric})", c.b_cell), value: drop, threshold: limit, passed, detail }
        })
        .collect()
}

/// `--max-excluded` over the trials of `cells` (one cell, or the gated cells pooled).
fn excluded_gate(
    spec: &GateSpec,
    limit: f64,
    subject: String,
    cells: &[&CellSummary],
) -> GateResult {
    let sum = |f: fn(&CellSummary) -> u64| cells.iter().map(|c| f(c)).sum::<u64>();
    let (excluded, all) = (sum(|c| c.infra_errors), sum(|c| c.n + c.infra_errors));
    let value = if all == 0 { 0.0 } else { 100.0 * excluded as f64 / all as f64 };
    let passed = value <= limit;
    let why = format!(
        "{} infrastructure, {} provider limit",
        sum(|c| c.excluded_infrastructure),
        sum(|c| c.excluded_provider_limit)
    );
    let default = if spec.max_excluded_by_default {
        " (the default when another gate is checked; --max-excluded 100 turns it off)"
    } else {
        ""
    };
    let detail = format!(
        "{excluded} of {all} trials in no rate ({why}): {value:.1} % {} {limit:.1} %{default}",
        if passed { "≤" } else { ">" }
    );
    GateResult { gate: "--max-excluded".into(), subject, value, threshold: limit, passed, detail }
}

/// Successes and trials of one rate of a cell.
type Counts = fn(&CellSummary) -> (u64, u64);

/// Apply every requested gate. `comparison` is the run against its baseline (for `--max-drop`). A
/// `--gate-cells` pattern that selects none of the cells a requested gate judges is [`Unmatched`].
pub fn evaluate(
    spec: &GateSpec,
    cells: &[CellSummary],
    comparison: Option<&Comparison>,
) -> Result<Vec<GateResult>, Unmatched> {
    if spec.min_pass_rate.is_some() || spec.min_selection_accuracy.is_some() {
        let keys: Vec<String> = cells.iter().map(CellSummary::key).collect();
        check_cells(spec, keys.iter().map(String::as_str), "cell of this run")?;
    }
    if let (Some(_), Some(cmp)) = (spec.max_drop, comparison)
        && !cmp.cells.is_empty()
    {
        check_cells(
            spec,
            cmp.cells.iter().map(|c| c.b_cell.as_str()),
            "cell this run shares with the baseline",
        )?;
    }
    let gated: Vec<&CellSummary> = cells.iter().filter(|c| spec.gated(&c.key())).collect();
    let mut out = Vec::new();
    let rates: [(&str, &str, Option<f64>, Counts); 2] = [
        ("--min-pass-rate", "pass@1", spec.min_pass_rate, |c| (c.pass.successes, c.pass.n)),
        ("--min-selection-accuracy", "selection accuracy", spec.min_selection_accuracy, |c| {
            (c.selection.successes, c.selection.n)
        }),
    ];
    for (gate, metric, threshold, get) in rates {
        let Some(threshold) = threshold else { continue };
        match spec.scope {
            Scope::Cell => {
                for c in &gated {
                    let (k, n) = get(c);
                    out.push(min_rate(gate, metric, c.key(), k, n, threshold));
                }
            }
            Scope::Overall => {
                let (k, n) =
                    gated.iter().map(|c| get(c)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
                out.push(min_rate(gate, metric, "overall".into(), k, n, threshold));
            }
        }
    }
    if let Some(limit) = spec.max_excluded
        && !gated.is_empty()
    {
        match spec.scope {
            Scope::Cell => {
                out.extend(gated.iter().map(|c| excluded_gate(spec, limit, c.key(), &[c])))
            }
            Scope::Overall => out.push(excluded_gate(spec, limit, "overall".into(), &gated)),
        }
    }
    if let (Some(_), Some(cmp)) = (spec.max_drop, comparison)
        && cmp.cells.is_empty()
    {
        out.push(GateResult {
            gate: "--max-drop".into(),
            subject: "baseline".into(),
            value: 0.0,
            threshold: 0.0,
            passed: false,
            detail: "no cell of this run matches a cell of the baseline, so no drop could be measured; check --match".into(),
        });
    }
    if let (Some(limit), Some(cmp)) = (spec.max_drop, comparison) {
        match spec.scope {
            Scope::Cell => {
                for c in cmp.cells.iter().filter(|c| spec.gated(&c.b_cell)) {
                    out.extend(drop_gate(c, spec, limit));
                }
            }
            Scope::Overall => {
                // The gated cells pooled, as the rate gates pool them (not every matched cell).
                let pooled = if spec.cells.is_some() {
                    cmp.pooled(|c| spec.gated(&c.b_cell))
                } else {
                    cmp.overall.clone()
                };
                if let Some(o) = &pooled {
                    out.extend(drop_gate(o, spec, limit));
                }
            }
        }
    }
    Ok(out)
}

/// The failed gates, as one message.
pub fn failures(results: &[GateResult]) -> Option<String> {
    let failed: Vec<String> = results
        .iter()
        .filter(|r| !r.passed)
        .map(|r| format!("{} {}: {}", r.gate, r.subject, r.detail))
        .collect();
    (!failed.is_empty())
        .then(|| format!("{} gate(s) failed:\n  {}", failed.len(), failed.join("\n  ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_cell_keys() {
        assert!(glob("*/lexical", "starter/workspace/good/flat/lexical"));
        assert!(!glob("*/lexical", "starter/workspace/good/flat/oracle"));
        assert!(glob("starter/*/good/*", "starter/workspace/good/flat/lexical"));
        assert!(!glob("starter/*/bad/*", "starter/workspace/good/flat/lexical"));
        assert!(glob("exact", "exact") && !glob("exact", "exactly"));
        assert!(!glob("a*a", "a"));
    }

    #[test]
    fn min_rate_fails_below_threshold_and_on_empty_cells() {
        assert!(min_rate("g", "pass@1", "c".into(), 8, 10, 80.0).passed);
        assert!(!min_rate("g", "pass@1", "c".into(), 7, 10, 80.0).passed);
        assert!(!min_rate("g", "pass@1", "c".into(), 0, 0, 0.0).passed);
    }

    #[test]
    fn thresholds_out_of_range_name_the_flag() {
        let spec = GateSpec { max_drop: Some(150.0), ..Default::default() };
        assert_eq!(spec.validate().unwrap_err().0, "--max-drop");
    }
}
