//! The one way `run`, `report`, `merge` (and `mcp collect`) end: judge → analyse → history →
//! render → compare → gates, under the run directory's lock for the whole length.
//!
//! Why one function: each command used to chain these steps itself, handing the lock up to the
//! command line and back down, and `--history` re-rendered the aggregates a second time to put the
//! new point on the page. Here the lock is taken once (or handed over by the runner or the merge
//! that wrote the records), the trials are read and analysed once, the gates are judged and the
//! history point is recorded from that analysis before any report is rendered (so the page shows the
//! trend with this run in it), the reports are written once, then the comparison and the step
//! summary. Nothing is printed here but the judge's line: the command prints its own summary, then
//! [`Finished::conclude`] prints what followed and turns the gates into the exit code.

use super::gates::{self, FollowUp, Prechecked};
use crate::analysis::verdict::GateResult;
use crate::compare::Comparison;
use crate::compare::links::Links;
use crate::error::GateFailed;
use crate::judge::JudgeConfig;
use crate::record::guard::DirLock;
use crate::report::ReportData;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Who holds the run directory when the pipeline starts.
pub enum Holder {
    /// The runner or the merge that wrote the records, still holding the lock (leftovers removed).
    Writer(DirLock),
    /// Nobody yet: `report` takes the lock as a report does (waiting for another report of the run;
    /// beside a run in progress it reads the trials as they are — unless it judges, which writes).
    Report,
}

/// Judging the run's final answers first (`--judge`).
pub struct Judging<'a> {
    pub config: &'a JudgeConfig,
    /// The response cache directory; `None` with `--no-cache`.
    pub cache: Option<PathBuf>,
    pub retry_errors: bool,
    pub runtime: &'a tokio::runtime::Runtime,
}

/// What the pipeline made of a scored run, for the command to print and turn into an exit code.
pub struct Finished {
    /// The run's analysis and drill-down context, as the reports rendered it.
    pub data: ReportData,
    /// `--history`: the history file and how many runs it now holds.
    pub recorded: Option<(PathBuf, usize)>,
    /// `--baseline`: the comparison and where its pages link to (compare.* written in the run
    /// directory).
    pub compared: Option<(Comparison, Links)>,
    /// Every gate judged, passed or not.
    pub gates: Vec<GateResult>,
}

/// The gates' verdict, which the command line turns into its exit code (0, or 100 for a failure).
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// Which gates failed, one line each.
    Failed(String),
}

/// Judge (with `judge`), analyse, record the history, render the reports, write the comparison and
/// the step summary of the run in `dir`, holding its lock from the first step to the last; the
/// flags were checked by [`FollowUp::precheck`] (which read the baseline) before the command did any
/// work.
pub fn finish(
    dir: &Path,
    holder: Holder,
    judge: Option<Judging>,
    follow: &FollowUp,
    checked: Prechecked,
) -> Result<Finished> {
    let lock = match holder {
        Holder::Writer(lock) => lock,
        Holder::Report => lock_for_report(dir, judge.is_some())?,
    };
    if let Some(j) = judge {
        // While the judge writes judgements.jsonl, a report beside it reads the run as it is.
        lock.mark_writing()?;
        super::judge::judge_run(dir, j.config, j.cache, j.retry_errors, j.runtime)?;
    }
    let spec = follow.gates.spec()?;
    let on = follow.gates.match_on()?;
    let mut compared = None;
    let mut gates = Vec::new();
    let mut recorded = None;
    let baseline = checked.baseline();
    let data = crate::report::render_locked(dir, &lock, &mut |data| {
        // The gates are judged before anything is recorded: a `--gate-cells` pattern selecting no
        // cell is an input error with no history point, comparison or report written.
        let cmp = baseline.map(|a| crate::compare::compare(&a.analysis, &data.analysis, &on));
        gates = gates::evaluate(&spec, &data.analysis.cells, cmp.as_ref())?;
        compared = cmp;
        if let Some(path) = &follow.history.history {
            let all = gates::record_history(&follow.history, path, dir, &data.analysis.cells)?;
            recorded = Some((path.clone(), all.len()));
            data.history = all;
        }
        Ok(())
    })?;
    // Exports to other viewers (`--export`), only when asked: a second pass over the trials.
    follow.export.write(dir, &data)?;
    let cells = &data.analysis.cells;
    let compared = match (compared, follow.baseline.as_deref()) {
        (Some(cmp), Some(a_dir)) => {
            let links = gates::write_comparison(dir, a_dir, dir, cells, &cmp, &gates)?;
            Some((cmp, links))
        }
        _ => None,
    };
    gates::append_step_summary(
        &follow.gates,
        cells,
        compared.as_ref().map(|(c, l)| (c, l)),
        &gates,
    )?;
    drop(lock);
    Ok(Finished { data, recorded, compared, gates })
}

/// The lock of a run `report` renders: with a judge (which writes the run) only when no other
/// process writes it ([`crate::report::lock_for_rewrite`]); without, as any report
/// ([`crate::report::lock_for_report`]), removing leftovers of killed processes when it is held.
fn lock_for_report(dir: &Path, judges: bool) -> Result<DirLock> {
    if judges {
        return crate::report::lock_for_rewrite(dir);
    }
    let lock = crate::report::lock_for_report(dir)?;
    if lock.held() {
        crate::record::guard::remove_stale(dir)?;
    }
    Ok(lock)
}

impl Finished {
    /// The gates' verdict.
    pub fn verdict(&self) -> Verdict {
        match crate::gate::failures(&self.gates) {
            Some(why) => Verdict::Failed(why),
            None => Verdict::Passed,
        }
    }

    /// Print what followed the reports (the history line, the comparison, the gates), after the
    /// command's own summary, and end as the gates say: a failure is [`GateFailed`] (exit 100).
    pub fn conclude(self) -> Result<()> {
        if let Some((path, runs)) = &self.recorded {
            outln!("recorded in {} ({runs} runs)", path.display());
        }
        if let Some((cmp, _)) = &self.compared {
            gates::print_comparison(cmp);
        }
        gates::print_gates(&self.gates);
        match self.verdict() {
            Verdict::Passed => Ok(()),
            Verdict::Failed(why) => Err(anyhow::Error::new(GateFailed(why))),
        }
    }
}
