//! Reports: pure functions of a run directory's trial records.
//!
//! [`render_run`] streams `trials.jsonl` once (parsed in parallel batches, transcripts skipped),
//! scores every trial whose recorded score is not of the current scorer version
//! ([`crate::score::score_if_stale`]; a run's own trials are scored once, by the run), keeps one compact
//! row per trial ([`crate::analysis::rows::ScoreRows`]) and a bounded drill-down sample, analyzes the
//! rows once ([`crate::analysis::analyze`]) and hands one [`ReportData`] to each [`Exporter`]: one file
//! per format, plus the terminal table ([`terminal`]). Formats with one entry per trial ([`TrialSink`]: `trials.csv`, `trials.parquet`,
//! `junit.xml`) are written while the trials stream past, so memory does not grow with transcripts.
//! Exporters never compute statistics; they only render the [`RunAnalysis`] (`tests/module_deps.rs`
//! lets them name `crate::analysis` types, never call its functions). Every file is written
//! to a temporary name (unique per process and call) and renamed only when all succeeded, so a failed
//! render leaves the previous report intact; a report holds the run directory's lock while it writes,
//! so a second report of the run waits for the first ([`crate::record::guard`]). Trials a kill left
//! uncompacted (not in matrix order, or a trial recorded twice) are compacted before they are read,
//! so rows, samples and bootstrap intervals always see the matrix order and a report after a kill at
//! any point equals an uninterrupted run's.

pub mod ablation;
pub mod confusion;
pub mod csv;
pub mod curve;
pub mod export;
pub mod history;
pub mod html;
pub mod inspect;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod otel;
pub mod parquet;
pub mod phases;
mod scan;
pub mod terminal;
pub mod tools;

use scan::{Judgements, OutOfOrder, scan, with_transcripts};

use crate::analysis::RunAnalysis;
use crate::protocol::FunctionDef;
use crate::record::Trial;
use crate::record::guard::DirLock;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The HTML drill-down holds every trial of runs up to this size, and a deterministic sample of this
/// many (the smallest hashes of the trial ids) beyond; the CSV and Parquet files hold all of them.
pub const DRILLDOWN_MAX: usize = 10_000;

/// Everything an exporter may render: the run's analysis, and the raw context a page shows as it is.
pub struct ReportData {
    /// Every figure, computed once.
    pub analysis: RunAnalysis,
    /// Trials with their transcripts for the drill-down, in matrix order: all of them, or a sample of
    /// [`DRILLDOWN_MAX`] when the run is larger.
    pub sample: Vec<Trial>,
    /// Per trial of `sample` (same positions): its expected calls compared with its calls, argument by
    /// argument ([`crate::analysis::arguments`]).
    pub arguments: Vec<Vec<crate::analysis::arguments::Compared>>,
    /// Offered functions per `dataset/variant/layout`.
    pub offered: BTreeMap<String, Vec<FunctionDef>>,
    /// Records importers skipped or repaired (`defects.json`).
    pub defects: Vec<serde_json::Value>,
    /// Earlier runs' headline numbers (`history.jsonl`, written by `--history`); empty without.
    pub history: Vec<crate::analysis::history::HistoryEntry>,
    /// The file holding the full messages: `transcripts.jsonl`, or `trials.jsonl` for a format-1 run.
    pub transcripts_in: &'static str,
}

impl ReportData {
    pub fn trial_count(&self) -> usize {
        self.analysis.trial_count()
    }
}

/// One output format rendered from the aggregates (its size does not grow with the number of trials).
pub trait Exporter: Sync {
    /// File name inside the run directory.
    fn file_name(&self) -> &'static str;
    fn render(&self, data: &ReportData) -> Result<Vec<u8>>;
}

/// Encodes one trial's entry of a format; a plain function, so it runs in parallel, in any order.
pub type Encoder = fn(&Trial) -> Result<Vec<u8>>;

/// One output format with an entry per trial, written to its temporary file as the trials stream past.
pub trait TrialSink: Send {
    /// How to encode a trial's entry (formatting is spread over the cores); the default encodes
    /// nothing and leaves the work to [`TrialSink::write`].
    fn encoder(&self) -> Encoder {
        |_| Ok(Vec::new())
    }
    /// Take each trial with its encoding, in file order.
    fn write(&mut self, t: &Trial, encoded: &[u8]) -> Result<()>;
    /// Complete the file once every trial is written (it runs beside the analysis: a file of entries
    /// per trial needs nothing the analysis computes).
    fn finish(self: Box<Self>) -> Result<()>;
}

/// All aggregate exporters, in the order they are written.
pub fn exporters() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(csv::SummaryCsv),
        Box::new(parquet::SummaryParquet),
        Box::new(ablation::AblationCsv),
        Box::new(tools::ToolsCsv),
        Box::new(confusion::ConfusionCsv),
        Box::new(parquet::ToolsParquet),
        Box::new(curve::CurveCsv),
        Box::new(markdown::MarkdownSummary),
        Box::new(json::SummaryJson),
        Box::new(html::HtmlReport),
    ]
}

/// A file being written under a temporary name, unique per process and call
/// ([`crate::files::temp_path`]): two reports of one run never write the same intermediate file.
struct Staged {
    tmp: PathBuf,
    dest: PathBuf,
}

fn staged(dir: &Path, name: &str) -> Staged {
    let dest = dir.join(name);
    Staged { tmp: crate::files::temp_path(&dest), dest }
}

/// Remove the temporary files of a render that did not finish (some may not exist yet).
fn discard(files: &[Staged]) {
    for f in files {
        let _ = std::fs::remove_file(&f.tmp);
    }
}

/// Streaming formats and the files they write.
type Sinks = (Vec<Box<dyn TrialSink>>, Vec<Staged>);

/// The streaming formats' files, in the order of [`sinks`].
const SINK_FILES: [&str; 3] = ["trials.csv", "trials.parquet", "junit.xml"];

/// The phases of each streaming format ([`phases`]): encoding its entries (parsing threads), writing
/// them (writer thread), completing the file.
const SINK_ENCODE: [&str; 3] =
    ["scan: encode trials.csv", "scan: encode trials.parquet", "scan: encode junit.xml"];
const SINK_WRITE: [&str; 3] = [
    "scan: write trials.csv (writer thread)",
    "scan: write trials.parquet (writer thread)",
    "scan: write junit.xml (writer thread)",
];
const SINK_FINISH: [&str; 3] = ["finish trials.csv", "finish trials.parquet", "finish junit.xml"];

/// The streaming formats, each opened on its temporary file (none is left if one cannot be opened).
fn sinks(dir: &Path) -> Result<Sinks> {
    let files = SINK_FILES.map(|name| staged(dir, name));
    let opened = (|| -> Result<Vec<Box<dyn TrialSink>>> {
        Ok(vec![
            Box::new(csv::TrialsCsv::create(&files[0].tmp)?),
            Box::new(parquet::TrialsParquet::create(&files[1].tmp)?),
            Box::new(junit::JunitXml::create(&files[2].tmp)?),
        ])
    })();
    match opened {
        Ok(sinks) => Ok((sinks, files.into())),
        Err(e) => {
            discard(&files);
            Err(e)
        }
    }
}

/// `dir/trials.jsonl`, or an error telling the user what to pass.
fn trials_file(dir: &Path) -> Result<PathBuf> {
    let trials_path = dir.join("trials.jsonl");
    if !trials_path.is_file() {
        return Err(crate::error::InputError::new(
            &trials_path,
            "no trials.jsonl here; pass a run directory such as reports/latest",
        )
        .into());
    }
    Ok(trials_path)
}

/// Score a run directory, feeding every trial to the sinks on the way. With `check_order`, fails with
/// [`OutOfOrder`] unless the trials are compacted.
fn load_with(
    dir: &Path,
    sinks: &mut Vec<Box<dyn TrialSink>>,
    check_order: bool,
    transcripts: bool,
) -> Result<ReportData> {
    let trials_path = trials_file(dir)?;
    // The run's settings, read first so a damaged run.json is refused before the trials are touched;
    // without the machine-local cache path, so runs on different machines (shards) render the same.
    let config = crate::record::meta::RunMeta::read_if_present(dir)?
        .map_or(serde_json::Value::Null, |m| m.report_config());
    let judgements = phases::time("judgements.jsonl", || Judgements::read(dir))?;
    let (rows, mut sample) =
        phases::time("scan (wall)", || scan(&trials_path, sinks, check_order, &judgements))?;
    // The sinks' files are completed while the rest is read and analysed: neither needs the other.
    let finish = || -> Result<()> {
        for (s, name) in std::mem::take(sinks).into_iter().zip(SINK_FINISH) {
            phases::time(name, || s.finish())?;
        }
        Ok(())
    };
    let (finished, data) = rayon::join(finish, || -> Result<ReportData> {
        if transcripts {
            phases::time("drill-down sample: transcripts", || {
                with_transcripts(dir, &mut sample, rows.len())
            })?;
        }
        let sample = sample.trials;
        let span = phases::start();
        let offered = match std::fs::read(dir.join("tools.json")) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
                format!("{}: not a tools file", dir.join("tools.json").display())
            })?,
            Err(_) => BTreeMap::new(),
        };
        let lint: crate::analysis::Lint = std::fs::read(dir.join("lint.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let defects = std::fs::read(dir.join("defects.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let history = crate::analysis::history::read(&dir.join("history.jsonl"))?;
        let transcripts_in = if dir.join(crate::record::transcripts::FILE).exists() {
            crate::record::transcripts::FILE
        } else {
            "trials.jsonl"
        };
        span.end("run files (tools, run, lint, defects, history)");
        let analysis =
            phases::time("analyze (cells, effects, confusion, tools, first look)", || {
                crate::analysis::analyze(rows, config, &lint)
            })?;
        let arguments = phases::time("drill-down sample: arguments compared", || {
            sample.iter().map(crate::analysis::arguments::compare).collect()
        });
        Ok(ReportData { analysis, sample, arguments, offered, defects, history, transcripts_in })
    });
    finished?;
    data
}

/// Run `read` (a scan of the trials checking their order, when `lock` is held); if the trials are not
/// in matrix order, compact them and run it once more. Without the lock another process writes the
/// directory (a run in progress): the trials are read as they are and nothing is rewritten.
fn in_matrix_order<T>(
    dir: &Path,
    lock: &DirLock,
    mut read: impl FnMut(bool) -> Result<T>,
) -> Result<T> {
    match read(lock.held()) {
        Err(e) if e.downcast_ref::<OutOfOrder>().is_some() => {
            let trials_path = dir.join("trials.jsonl");
            let done =
                crate::record::store::compact_run(dir, |_, matrix_index| Some(matrix_index))?;
            crate::messages::note(format_args!(
                "{} was left uncompacted by an interrupted run; compacted it into matrix order ({} trials)",
                trials_path.display(),
                done.trials
            ));
            read(true)
        }
        other => other,
    }
}

/// Lock `dir` for a report ([`DirLock::for_report`]: waits for another report or merge of it, not for
/// a run in progress); says so when a writer holds it and the trials are read as they are. Refuses a
/// directory without a trial file first, naming what to pass.
pub fn lock_for_report(dir: &Path) -> Result<DirLock> {
    trials_file(dir)?;
    let lock = DirLock::for_report(dir)?;
    if !lock.held() {
        crate::messages::note(format_args!(
            "another toolpick process is writing {} (a run in progress?); reading its trials as they are, without compacting them or removing leftovers",
            dir.display()
        ));
    }
    Ok(lock)
}

/// Lock `dir` for a report that also writes the run's records first (`report --judge` writes
/// `judgements.jsonl`): refused while another process writes the run, waiting (as a report does) for
/// another report of it; leftovers of killed processes are removed.
pub fn lock_for_rewrite(dir: &Path) -> Result<DirLock> {
    trials_file(dir)?;
    let lock = DirLock::for_report(dir)?;
    if !lock.held() {
        return Err(crate::error::InputError::new(
            dir,
            "another toolpick process is writing this run; try again when it is done",
        )
        .into());
    }
    crate::record::guard::remove_stale(dir)?;
    Ok(lock)
}

/// Load and score a run directory. It writes nothing, except that trials a kill left uncompacted are
/// compacted first (as `report` does), so every reader sees them in matrix order. The drill-down
/// sample has no transcripts (only [`render_locked`] reads `transcripts.jsonl`, for the HTML page).
pub fn load_run(dir: &Path) -> Result<ReportData> {
    let lock = lock_for_report(dir)?;
    let data = in_matrix_order(dir, &lock, |check| load_with(dir, &mut Vec::new(), check, false));
    phases::report();
    data
}

pub use crate::files::write_atomic;

/// Score a run directory and (re)write every report file in it, with nothing added between the
/// analysis and the files (the command line's pipeline, `cli::pipeline`, adds the history point).
/// Takes the directory lock ([`lock_for_report`]), removes temporary files of killed processes and
/// compacts trials a kill left uncompacted, so a report after a kill at any point writes what an
/// uninterrupted run would have.
pub fn render_run(dir: &Path) -> Result<ReportData> {
    let lock = lock_for_report(dir)?;
    if lock.held() {
        crate::record::guard::remove_stale(dir)?;
    }
    render_locked(dir, &lock, &mut |_| Ok(()))
}

/// Score the run in `dir` and (re)write every report file, for a caller holding the directory's
/// lock (`lock`, from [`lock_for_report`], a run or a merge) who has removed the leftovers. The trials
/// are read and analysed once; `before_render` then sees the data before any aggregate is rendered
/// (the pipeline evaluates the gates and adds this run's history point there, so the page's trend
/// includes it without a second pass); an error from it leaves the previous reports in place. The
/// holder stops being a writer of records here: reports of the run now wait for these reports
/// instead of reading beside them.
pub fn render_locked(
    dir: &Path,
    lock: &DirLock,
    before_render: &mut dyn FnMut(&mut ReportData) -> Result<()>,
) -> Result<ReportData> {
    lock.writing_done();
    let data = in_matrix_order(dir, lock, |check| render_once(dir, check, before_render));
    phases::report();
    data
}

/// Render every report file under a temporary name, then rename them all into place. On failure no
/// temporary file is left.
fn render_once(
    dir: &Path,
    check_order: bool,
    before_render: &mut dyn FnMut(&mut ReportData) -> Result<()>,
) -> Result<ReportData> {
    let (mut sinks, mut files) = sinks(dir)?;
    let result = (|| -> Result<ReportData> {
        let mut data = load_with(dir, &mut sinks, check_order, true)?;
        before_render(&mut data)?;
        // Render the aggregates (each on its own, on every core) before anything is moved into place.
        use rayon::prelude::*;
        let exporters = exporters();
        let rendered: Vec<Result<Vec<u8>>> = exporters
            .par_iter()
            .map(|e| phases::time(&format!("render {}", e.file_name()), || e.render(&data)))
            .collect();
        let span = phases::start();
        for (n, (e, bytes)) in exporters.iter().zip(rendered).enumerate() {
            files.push(staged(dir, e.file_name()));
            let f = files.last().expect("just pushed");
            std::fs::write(&f.tmp, bytes?)
                .with_context(|| format!("cannot write {}", f.tmp.display()))?;
            crate::crashpoint::reached("stage", n as u64 + 1);
        }
        span.end("write the aggregate files");
        Ok(data)
    })();
    match result {
        Ok(data) => {
            let span = phases::start();
            for (n, f) in files.iter().enumerate() {
                if let Err(e) = std::fs::rename(&f.tmp, &f.dest) {
                    discard(&files[n..]);
                    return Err(e)
                        .with_context(|| format!("cannot move {} into place", f.dest.display()));
                }
                crate::crashpoint::reached("rename", n as u64 + 1);
            }
            span.end("rename into place");
            Ok(data)
        }
        Err(e) => {
            // The sinks first: their files are open until dropped.
            drop(sinks);
            discard(&files);
            Err(e)
        }
    }
}

/// A mean with `decimals` decimals, or "n/a" when undefined (no scored trial): for people's pages.
pub fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() { "n/a".into() } else { format!("{x:.decimals$}") }
}

/// A mean with `decimals` decimals, or "" when undefined: for CSV cells (an empty cell is a missing
/// value to every CSV reader; `NaN` is not).
pub fn fixed_or_empty(x: f64, decimals: usize) -> String {
    if x.is_nan() { String::new() } else { format!("{x:.decimals$}") }
}

/// A rate as a percentage with one decimal, or "n/a" when undefined.
pub fn pct(x: f64) -> String {
    if x.is_nan() { "n/a".into() } else { format!("{:.1}", x * 100.0) }
}
