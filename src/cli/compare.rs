//! `toolpick compare`: a run (B) against a baseline run (A), cell by cell and task by task; the
//! compare.* files, the gates that need a baseline, the CI summary.

use super::{gates, preflight};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub fn cmd_compare(
    a_dir: &Path,
    b_dir: &Path,
    out: Option<PathBuf>,
    args: &gates::GateArgs,
) -> Result<()> {
    preflight::run_dir("<baseline-run>", a_dir)?;
    preflight::run_dir("<run>", b_dir)?;
    // The compare.* files go to --out, else into the run's own directory.
    preflight::output_dir("--out", out.as_deref().unwrap_or(b_dir))?;
    args.precheck()?;
    let spec = args.spec()?;
    let on = args.match_on()?;
    let a = crate::report::load_run(a_dir)
        .with_context(|| format!("cannot read the baseline run {}", a_dir.display()))?;
    let b = crate::report::load_run(b_dir)
        .with_context(|| format!("cannot read the run {}", b_dir.display()))?;
    let (a, b) = (a.analysis, b.analysis);
    let cmp = crate::compare::compare(&a, &b, &on);
    if cmp.cells.is_empty() {
        return Err(crate::error::InputError::new(
            b_dir,
            format!(
                "no cell of this run matches a cell of {} on {}; choose other fields with --match",
                a_dir.display(),
                on.0.join(",")
            ),
        )
        .into());
    }
    let results = gates::evaluate(&spec, &b.cells, Some(&cmp))?;
    let out = out.unwrap_or_else(|| b_dir.to_path_buf());
    let links = gates::write_comparison(&out, a_dir, b_dir, &b.cells, &cmp, &results)?;
    gates::print_comparison(&cmp);
    outln!(
        "wrote compare.html, compare.csv, compare-flips.csv, compare-confusion.csv and compare.md to {}",
        out.display()
    );
    gates::print_gates(&results);
    gates::append_step_summary(args, &b.cells, Some((&cmp, &links)), &results)?;
    match crate::gate::failures(&results) {
        Some(why) => Err(anyhow::Error::new(crate::error::GateFailed(why))),
        None => Ok(()),
    }
}
