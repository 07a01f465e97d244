//! Flags shared by `run`, `report`, `merge` and `compare`, and the steps they name, which the
//! pipeline ([`super::pipeline`]) and `compare` call after a run is scored: record it in the
//! history, write the comparison, judge and print the gates, append the CI summary.
//!
//! Every one of these flags is checked by `precheck` ([`super::preflight`]) before the command does any
//! work, and the gates are judged before the history, the comparison or the step summary is written: a
//! `--gate-cells` pattern that selects no cell is an input error (exit 2), never a report that checked
//! nothing.

use super::preflight;
use crate::analysis::cells::CellSummary;
use crate::analysis::verdict::GateResult;
use crate::compare::links::Links;
use crate::compare::{Comparison, MatchOn};
use crate::error::InputError;
use crate::gate::{GateSpec, Scope};
use crate::report::{ReportData, write_atomic};
use anyhow::{Context, Result};
use clap::Args;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Clone)]
pub struct GateArgs {
    /// Gate: fail (exit 100) when pass@1 of a gated cell — over its tasks that need a call (single,
    /// multi, parallel), the headline figure — is below this percentage (0–100).
    #[arg(long, value_name = "PCT")]
    pub min_pass_rate: Option<f64>,
    /// Gate: fail (exit 100) when selection accuracy of a gated cell — over its tasks that need a call,
    /// the headline figure — is below this percentage.
    #[arg(long, value_name = "PCT")]
    pub min_selection_accuracy: Option<f64>,
    /// Gate: fail (exit 100) when pass@1 or selection accuracy fell by more than this many points
    /// against the baseline run.
    #[arg(long, value_name = "POINTS")]
    pub max_drop: Option<f64>,
    /// Gate: fail (exit 100) when more than this percentage of a gated cell's trials are in no rate
    /// (infrastructure errors, provider limits). Default: 10 when another gate is checked, else off;
    /// 100 turns it off.
    #[arg(long, value_name = "PCT")]
    pub max_excluded: Option<f64>,
    /// With --max-drop: fail only when the drop is also significant (p < 0.05, Holm-adjusted across the matched cells).
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

/// No gate flag given (as clap fills them: the scope is `cell`), for a command that has none
/// (`mcp collect`) and still ends through the pipeline.
impl Default for GateArgs {
    fn default() -> GateArgs {
        GateArgs {
            min_pass_rate: None,
            min_selection_accuracy: None,
            max_drop: None,
            max_excluded: None,
            significant_only: false,
            gate_scope: "cell".into(),
            gate_cells: None,
            match_on: None,
            step_summary: None,
        }
    }
}

#[derive(Args, Debug, Clone, Default)]
pub struct HistoryArgs {
    /// Record this run's headline numbers (with git commit, date, config hash and tags) in this JSONL
    /// history file; the HTML report then draws each cell's trend over the recorded runs.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Label the history entry, e.g. --tag model=gpt-4o-mini --tag branch=main (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
}

/// What `run`, `report` and `merge` do once the run is scored: compare with a baseline, check the
/// gates, record the history.
#[derive(Args, Debug, Clone, Default)]
pub struct FollowUp {
    /// Baseline run to compare with (writes compare.* into the run directory; needed by --max-drop).
    #[arg(long, value_name = "RUN_DIR")]
    pub baseline: Option<PathBuf>,
    #[command(flatten)]
    pub gates: GateArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
    #[command(flatten)]
    pub export: super::export::ExportArgs,
}

/// What [`FollowUp::precheck`] read ahead: the baseline run, scored, so that a damaged baseline is
/// refused before the run or report is made, and is not read twice.
pub struct Prechecked {
    baseline: Option<ReportData>,
}

impl Prechecked {
    /// The baseline run, scored (with `--baseline`).
    pub fn baseline(&self) -> Option<&ReportData> {
        self.baseline.as_ref()
    }
}

impl FollowUp {
    /// Check every flag before any work is done (a bad gate, a mistyped path must not cost a run):
    /// the gates, the baseline (a run directory whose every trial reads: it is loaded here, once),
    /// the history (a writable file whose entries, if any, read) and the step summary (a writable
    /// file).
    pub fn precheck(&self) -> Result<Prechecked> {
        self.gates.precheck()?;
        self.history.tags()?;
        if self.gates.max_drop.is_some() && self.baseline.is_none() {
            return Err(InputError::new(
                "--max-drop",
                "needs a baseline run to measure the drop against: pass --baseline <run-dir>",
            )
            .into());
        }
        match &self.history.history {
            Some(h) => {
                preflight::output_file("--history", h)?;
                crate::analysis::history::read(h)?;
            }
            None if !self.history.tags.is_empty() => {
                return Err(
                    InputError::new("--tag", "labels a history entry: add --history FILE").into()
                );
            }
            None => {}
        }
        let baseline = match &self.baseline {
            Some(b) => {
                preflight::run_dir("--baseline", b)?;
                Some(
                    crate::report::load_run(b)
                        .with_context(|| format!("cannot read the baseline run {}", b.display()))?,
                )
            }
            None => None,
        };
        Ok(Prechecked { baseline })
    }
}

/// A trial's cell, as its record names it (the other fields of the record are skipped unread).
#[derive(serde::Deserialize, PartialEq, Eq, PartialOrd, Ord)]
struct CellOf {
    dataset: String,
    catalog: String,
    variant: String,
    layout: String,
    backend: String,
}

impl CellOf {
    fn key(&self) -> String {
        format!(
            "{}/{}/{}/{}/{}",
            self.dataset, self.catalog, self.variant, self.layout, self.backend
        )
    }

    /// The values of `on`'s fields, the cell's identity in a comparison.
    fn on(&self, on: &MatchOn) -> Vec<String> {
        let parts = [&self.dataset, &self.catalog, &self.variant, &self.layout, &self.backend];
        on.0.iter()
            .filter_map(|f| MatchOn::FIELDS.iter().position(|k| k == f).map(|i| parts[i].clone()))
            .collect()
    }
}

/// The cells of the trials in the run directories `dirs`. A line that does not read as a trial is
/// not judged here: the report that follows reads every line and names the damaged one (a torn last
/// line left by a killed run is one it repairs).
fn cells_of(dirs: &[&Path]) -> Result<BTreeSet<CellOf>> {
    use std::io::BufRead;
    let mut cells = BTreeSet::new();
    for dir in dirs {
        let path = dir.join("trials.jsonl");
        let file = std::fs::File::open(&path)
            .map_err(|e| InputError::new(&path, format!("cannot open trial file: {e}")))?;
        let mut reader = std::io::BufReader::new(file);
        let mut line = Vec::new();
        while reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("cannot read {}", path.display()))?
            > 0
        {
            if let Ok(cell) = serde_json::from_slice::<CellOf>(&line) {
                cells.insert(cell);
            }
            line.clear();
        }
    }
    Ok(cells)
}

impl FollowUp {
    /// Check that `--gate-cells` selects a cell of the runs in `dirs` (the run a report re-scores,
    /// the shards a merge joins) before anything is rendered: a gate that would check nothing is an
    /// input error (exit 2) with nothing written. A drop gate needs a cell the run shares with the
    /// baseline (on the `--match` fields), as [`crate::gate::evaluate`] judges it afterwards.
    pub fn check_gate_cells(&self, checked: &Prechecked, dirs: &[&Path]) -> Result<()> {
        let spec = self.gates.spec()?;
        if spec.cells.is_none() || spec.is_empty() {
            return Ok(());
        }
        self.check_cells_of(checked, &spec, &cells_of(dirs)?)
    }

    /// [`FollowUp::check_gate_cells`] for the cells a run is about to make (each cell's dataset,
    /// catalog, variant, layout and backend), before it makes them.
    pub fn check_planned_cells(&self, checked: &Prechecked, planned: &[[String; 5]]) -> Result<()> {
        let spec = self.gates.spec()?;
        if spec.cells.is_none() || spec.is_empty() {
            return Ok(());
        }
        let cells = planned
            .iter()
            .map(|[dataset, catalog, variant, layout, backend]| CellOf {
                dataset: dataset.clone(),
                catalog: catalog.clone(),
                variant: variant.clone(),
                layout: layout.clone(),
                backend: backend.clone(),
            })
            .collect();
        self.check_cells_of(checked, &spec, &cells)
    }

    /// The checks of [`FollowUp::check_gate_cells`] on a set of cells.
    fn check_cells_of(
        &self,
        checked: &Prechecked,
        spec: &GateSpec,
        cells: &BTreeSet<CellOf>,
    ) -> Result<()> {
        let unmatched = |u: crate::gate::Unmatched| {
            anyhow::Error::new(InputError::new("--gate-cells", u.to_string()))
        };
        if spec.min_pass_rate.is_some() || spec.min_selection_accuracy.is_some() {
            let keys: Vec<String> = cells.iter().map(CellOf::key).collect();
            crate::gate::check_cells(spec, keys.iter().map(String::as_str), "cell of this run")
                .map_err(unmatched)?;
        }
        if let (Some(_), Some(a)) = (spec.max_drop, &checked.baseline) {
            let on = self.gates.match_on()?;
            let a_cells: BTreeSet<Vec<String>> = a
                .analysis
                .cells
                .iter()
                .map(|c| {
                    CellOf {
                        dataset: c.dataset.clone(),
                        catalog: c.catalog.clone(),
                        variant: c.variant.clone(),
                        layout: c.layout.clone(),
                        backend: c.backend.clone(),
                    }
                    .on(&on)
                })
                .collect();
            let shared: Vec<String> =
                cells.iter().filter(|c| a_cells.contains(&c.on(&on))).map(CellOf::key).collect();
            if !shared.is_empty() {
                crate::gate::check_cells(
                    spec,
                    shared.iter().map(String::as_str),
                    "cell this run shares with the baseline",
                )
                .map_err(unmatched)?;
            }
        }
        Ok(())
    }
}

impl HistoryArgs {
    pub fn tags(&self) -> Result<std::collections::BTreeMap<String, String>> {
        self.tags
            .iter()
            .map(|t| match t.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                _ => Err(InputError::new("--tag", format!("`{t}` is not key=value")).into()),
            })
            .collect()
    }
}

/// The commit being measured: `$GITHUB_SHA` in GitHub Actions, else `git rev-parse HEAD` here.
fn git_sha() -> Option<String> {
    if let Ok(s) = std::env::var("GITHUB_SHA")
        && !s.trim().is_empty()
    {
        return Some(s.trim().to_string());
    }
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

/// Record the run (its cells' headline numbers) in the history file `path` and keep a copy in the
/// run directory; returns every entry, this run's included, for the report's trend.
pub fn record_history(
    args: &HistoryArgs,
    path: &Path,
    run_dir: &Path,
    cells: &[CellSummary],
) -> Result<Vec<crate::analysis::history::HistoryEntry>> {
    let tags = args.tags()?;
    let meta = crate::run::RunMeta::read_if_present(run_dir)?.unwrap_or_default();
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let run_id = match meta.run_id.as_str() {
        "" => run_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        id => id.to_string(),
    };
    let date = crate::analysis::history::iso_8601(&crate::run::utc_stamp(unix));
    let entry = crate::analysis::history::HistoryEntry::new(
        &run_id,
        &meta.started_utc,
        &date,
        git_sha(),
        &meta.matrix_hash,
        tags,
        cells,
    );
    let all = crate::analysis::history::record(path, entry)?;
    let copy = run_dir.join("history.jsonl");
    if std::fs::canonicalize(path).ok() != std::fs::canonicalize(&copy).ok() {
        write_atomic(
            &copy,
            &std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
        )?;
    }
    Ok(all)
}

impl GateArgs {
    /// Check the gate flags and the step summary's path before any work is done.
    pub fn precheck(&self) -> Result<()> {
        let spec = self.spec()?;
        self.match_on()?;
        if spec.is_empty() && spec.cells.is_some() {
            return Err(InputError::new("--gate-cells", "picks the cells a gate checks, but no gate is given: add --min-pass-rate, --min-selection-accuracy or --max-drop").into());
        }
        if spec.significant_only && spec.max_drop.is_none() {
            return Err(InputError::new(
                "--significant-only",
                "applies to --max-drop, which is not given",
            )
            .into());
        }
        if let Some(p) = &self.step_summary {
            preflight::output_file("--step-summary", p)?;
        }
        Ok(())
    }

    pub fn spec(&self) -> Result<GateSpec> {
        let scope = match self.gate_scope.as_str() {
            "cell" => Scope::Cell,
            "overall" => Scope::Overall,
            other => {
                return Err(InputError::new(
                    "--gate-scope",
                    format!("`{other}` is not a scope; use cell or overall"),
                )
                .into());
            }
        };
        let spec = GateSpec {
            min_pass_rate: self.min_pass_rate,
            min_selection_accuracy: self.min_selection_accuracy,
            max_drop: self.max_drop,
            significant_only: self.significant_only,
            scope,
            cells: self.gate_cells.clone(),
            max_excluded: self.max_excluded,
            max_excluded_by_default: false,
        };
        // Rates gated on what is left of a cell: by default, no more than a tenth of it may be gone.
        let others = spec.min_pass_rate.is_some()
            || spec.min_selection_accuracy.is_some()
            || spec.max_drop.is_some();
        let spec = match spec.max_excluded {
            None if others => GateSpec {
                max_excluded: Some(crate::gate::DEFAULT_MAX_EXCLUDED),
                max_excluded_by_default: true,
                ..spec
            },
            _ => spec,
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
pub fn write_comparison(
    out: &Path,
    a_dir: &Path,
    b_dir: &Path,
    b_cells: &[CellSummary],
    cmp: &Comparison,
    gates: &[GateResult],
) -> Result<Links> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let links = Links::new(out, a_dir, b_dir);
    let files = [
        ("compare.csv", crate::compare::render::csv(cmp)?),
        ("compare-flips.csv", crate::compare::render::flips_csv(cmp)?),
        ("compare-confusion.csv", crate::compare::render::confusion_csv(cmp)?),
        (
            "compare.md",
            crate::compare::render::markdown(b_cells, Some((cmp, &links)), gates).into_bytes(),
        ),
        ("compare.html", crate::compare::render::html(cmp, &links, gates)?),
    ];
    for (name, bytes) in files {
        write_atomic(&out.join(name), &bytes)?;
    }
    Ok(links)
}

/// Judge the gates ([`crate::gate::evaluate`]); a `--gate-cells` pattern selecting none of the cells
/// judged is an input error naming the flag and listing the cells.
pub fn evaluate(
    spec: &GateSpec,
    cells: &[CellSummary],
    cmp: Option<&Comparison>,
) -> Result<Vec<GateResult>> {
    crate::gate::evaluate(spec, cells, cmp)
        .map_err(|u| InputError::new("--gate-cells", u.to_string()).into())
}

/// Print one line per gate judged.
pub fn print_gates(gates: &[GateResult]) {
    for g in gates {
        outln!(
            "gate {} {}: {} — {}",
            g.gate,
            g.subject,
            if g.passed { "pass" } else { "FAIL" },
            g.detail
        );
    }
}

/// Append the CI summary (headline, gates, top regressions) to `--step-summary`, when given.
pub fn append_step_summary(
    args: &GateArgs,
    cells: &[CellSummary],
    cmp: Option<(&Comparison, &Links)>,
    gates: &[GateResult],
) -> Result<()> {
    let Some(path) = &args.step_summary else { return Ok(()) };
    let text = crate::compare::render::markdown(cells, cmp, gates);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open the step summary {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write the step summary {}", path.display()))
}

/// One line per compared cell.
pub fn print_comparison(cmp: &Comparison) {
    // A partial pairing (other task subsets, unpaired tasks) is said before the numbers it qualifies.
    for w in cmp.warnings() {
        crate::messages::warning(w);
    }
    outln!(
        "{:<44} {:>6} {:>16} {:>9} {:>8} {:>10}",
        "cell (B vs baseline A)",
        "tasks",
        "pass@1 A→B %",
        "Δ pts",
        "p",
        "flips"
    );
    for c in cmp.cells.iter().chain(cmp.overall.as_ref()) {
        outln!(
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The gate flags alone, as a command line.
    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        follow: FollowUp,
    }

    #[test]
    fn the_default_follow_up_is_a_command_line_without_gate_flags() {
        // `mcp collect` ends through the pipeline with `FollowUp::default()`: it must mean what no
        // flag means, and pass the checks the flags pass.
        let parsed = Flags::parse_from(["toolpick"]).follow;
        let default = FollowUp::default();
        assert_eq!(format!("{default:?}"), format!("{parsed:?}"));
        default.precheck().expect("no flag given is a valid follow-up");
    }
}
