//! Gate and comparison flags shared by `run`, `report` and `compare`, and what they do after a run is
//! scored: compare against a baseline, write the comparison, check the gates, append the CI summary.

use crate::compare::render::Links;
use crate::compare::{Comparison, MatchOn};
use crate::error::{GateFailed, InputError};
use crate::gate::{GateResult, GateSpec, Scope};
use crate::report::{ReportData, write_atomic};
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Clone, Default)]
pub struct GateArgs {
    /// Gate: fail (exit 100) when pass@1 of a gated cell is below this percentage (0–100).
    #[arg(long, value_name = "PCT")]
    pub min_pass_rate: Option<f64>,
    /// Gate: fail (exit 100) when selection accuracy of a gated cell is below this percentage.
    #[arg(long, value_name = "PCT")]
    pub min_selection_accuracy: Option<f64>,
    /// Gate: fail (exit 100) when pass@1 or selection accuracy fell by more than this many points
    /// against the baseline run.
    #[arg(long, value_name = "POINTS")]
    pub max_drop: Option<f64>,
    /// With --max-drop: fail only when the drop is also significant (McNemar exact p < 0.05).
    #[arg(long)]
    pub significant_only: bool,
    /// Apply gates to each cell (`cell`) or to the gated cells pooled (`overall`).
    #[arg(long, value_name = "SCOPE", default_value = "cell")]
    pub gate_scope: String,
    /// Gate only cells whose key `dataset/catalog/variant/layout/backend` matches this glob
    /// (`*` = anything), e.g. `*/gpt-4o-mini`. Default: every cell.
    #[arg(long, value_name = "GLOB")]
    pub gate_cells: Option<String>,
    /// Cell fields two runs must agree on to be compared. Default: dataset,variant,layout,backend
    /// (the catalog may differ: compare two versions of a catalog).
    #[arg(long = "match", value_name = "FIELDS")]
    pub match_on: Option<String>,
    /// Append the CI summary (headline, gates, top regressions) in Markdown to this file, e.g.
    /// "$GITHUB_STEP_SUMMARY".
    #[arg(long, value_name = "FILE")]
    pub step_summary: Option<PathBuf>,
}

impl GateArgs {
    pub fn spec(&self) -> Result<GateSpec> {
        let scope = match self.gate_scope.as_str() {
            "cell" => Scope::Cell,
            "overall" => Scope::Overall,
            other => return Err(InputError::new("--gate-scope", format!("`{other}` is not a scope; use cell or overall")).into()),
        };
        let spec = GateSpec {
            min_pass_rate: self.min_pass_rate,
            min_selection_accuracy: self.min_selection_accuracy,
            max_drop: self.max_drop,
            significant_only: self.significant_only,
            scope,
            cells: self.gate_cells.clone(),
        };
        spec.validate().map_err(|(flag, msg)| InputError::new(flag, msg))?;
        Ok(spec)
    }

    pub fn match_on(&self) -> Result<MatchOn> {
        match &self.match_on {
            None => Ok(MatchOn::default_fields()),
            Some(list) => MatchOn::parse(list).map_err(|m| InputError::new("--match", m).into()),
        }
    }
}

/// Write `compare.html`, `compare.csv`, `compare-flips.csv` and `compare.md` of run B (in `b_dir`)
/// against baseline A into `out` (all rendered before any is written).
pub fn write_comparison(out: &Path, a_dir: &Path, b_dir: &Path, b_cells: &[crate::report::CellSummary], cmp: &Comparison, gates: &[GateResult]) -> Result<Links> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let links = Links::new(out, a_dir, b_dir);
    let files = [
        ("compare.csv", crate::compare::render::csv(cmp)?),
        ("compare-flips.csv", crate::compare::render::flips_csv(cmp)?),
        ("compare.md", crate::compare::render::markdown(b_cells, Some((cmp, &links)), gates).into_bytes()),
        ("compare.html", crate::compare::render::html(cmp, &links, gates)?),
    ];
    for (name, bytes) in files {
        write_atomic(&out.join(name), &bytes)?;
    }
    Ok(links)
}

/// After a run is scored: compare with the baseline (if any), check gates, print them, append the step
/// summary; a failed gate becomes [`GateFailed`] (exit 100).
pub fn conclude(args: &GateArgs, run_dir: &Path, data: &ReportData, baseline: Option<&Path>) -> Result<()> {
    let spec = args.spec()?;
    if spec.max_drop.is_some() && baseline.is_none() {
        return Err(InputError::new("--max-drop", "needs a baseline run to measure the drop against: pass --baseline <run-dir>").into());
    }
    let on = args.match_on()?;
    let compared = match baseline {
        Some(a_dir) => {
            let a = crate::report::load_run(a_dir).with_context(|| format!("cannot read the baseline run {}", a_dir.display()))?;
            let cmp = crate::compare::compare(&a, data, &on);
            let gates = crate::gate::evaluate(&spec, &data.cells, Some(&cmp));
            let links = write_comparison(run_dir, a_dir, run_dir, &data.cells, &cmp, &gates)?;
            print_comparison(&cmp);
            Some((cmp, links, gates))
        }
        None => None,
    };
    let gates = match &compared {
        Some((_, _, g)) => g.clone(),
        None => crate::gate::evaluate(&spec, &data.cells, None),
    };
    finish(args, &data.cells, compared.as_ref().map(|(c, l, _)| (c, l)), &gates)
}

/// Print gates, append the step summary, and fail when a gate failed.
pub fn finish(args: &GateArgs, cells: &[crate::report::CellSummary], cmp: Option<(&Comparison, &Links)>, gates: &[GateResult]) -> Result<()> {
    for g in gates {
        let _ = writeln!(std::io::stdout(), "gate {} {}: {} — {}", g.gate, g.subject, if g.passed { "pass" } else { "FAIL" }, g.detail);
    }
    if let Some(path) = &args.step_summary {
        let text = crate::compare::render::markdown(cells, cmp, gates);
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("cannot open the step summary {}", path.display()))?;
        f.write_all(text.as_bytes()).with_context(|| format!("cannot write the step summary {}", path.display()))?;
    }
    match crate::gate::failures(gates) {
        Some(msg) => Err(anyhow::Error::new(GateFailed(msg))),
        None => Ok(()),
    }
}

/// One line per compared cell.
pub fn print_comparison(cmp: &Comparison) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{:<44} {:>6} {:>16} {:>9} {:>8} {:>10}", "cell (B vs baseline A)", "tasks", "pass@1 A→B %", "Δ pts", "p", "flips");
    for c in cmp.cells.iter().chain(cmp.overall.as_ref()) {
        let _ = writeln!(
            out,
            "{:<44} {:>6} {:>16} {:>+9.1} {:>8.3} {:>10}",
            c.key,
            c.pass.tasks,
            format!("{} → {}", crate::report::pct(c.pass.a), crate::report::pct(c.pass.b)),
            100.0 * c.pass.diff,
            c.pass.p_value,
            c.flips.len()
        );
    }
}
