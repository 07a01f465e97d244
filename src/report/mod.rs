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
pub mod history;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod parquet;
pub mod phases;
pub mod terminal;
pub mod tools;

use crate::analysis::RunAnalysis;
use crate::analysis::rows;
use crate::protocol::FunctionDef;
use crate::record::Trial;
use crate::record::guard::DirLock;
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BinaryHeap};
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
pub trait Exporter {
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
    /// Complete the file (the aggregates are known by then).
    fn finish(self: Box<Self>, data: &ReportData) -> Result<()>;
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

/// Bytes of the trial file read per batch (a batch is the whole lines in it).
const CHUNK: usize = 8 << 20;

/// A batch read from the trial file: a buffer of whole lines and, per non-blank line, its line number
/// and byte range. Lines are parsed straight from the buffer (no copy per line), and buffers go back to
/// the reader to be filled again, so a large file is read through a few reused buffers.
struct Lines {
    data: Vec<u8>,
    lines: Vec<(usize, std::ops::Range<usize>)>,
    /// Number of the last line in the buffer (blank ones included).
    last_line: usize,
}

/// Fill `data` with whole lines (the tail of an incomplete last line is moved to `carry`).
fn read_chunk(
    file: &mut impl std::io::Read,
    mut data: Vec<u8>,
    carry: &mut Vec<u8>,
    first_line: usize,
    size: usize,
) -> std::io::Result<Lines> {
    data.clear();
    data.append(carry);
    loop {
        let start = data.len();
        let want = start.max(size).max(start + size / 8 + 1) - start;
        // Read into the spare capacity: not zeroing the buffer first saves a pass over every byte.
        data.reserve(want);
        let got = std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut *file, want as u64),
            &mut data,
        )?;
        let eof = got < want;
        // Cut after the last newline; keep reading if the chunk holds no whole line yet.
        match memchr_last(&data) {
            Some(cut) if !eof => {
                carry.extend_from_slice(&data[cut + 1..]);
                data.truncate(cut + 1);
                break;
            }
            None if !eof => continue,
            _ => break,
        }
    }
    let mut lines = Vec::new();
    let (mut at, mut no) = (0usize, first_line);
    while at < data.len() {
        let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |i| at + i);
        no += 1;
        if data[at..end].iter().any(|b| !b.is_ascii_whitespace()) {
            lines.push((no, at..end));
        }
        at = end + 1;
    }
    Ok(Lines { data, lines, last_line: no })
}

fn memchr_last(data: &[u8]) -> Option<usize> {
    memchr::memrchr(b'\n', data)
}

/// What the writer stage keeps: the rows, and the drill-down sample candidates — the
/// [`DRILLDOWN_MAX`] smallest `(hash of trial id, position)` with their lines.
struct Kept {
    rows: rows::ScoreRows,
    heap: BinaryHeap<(u64, usize)>,
    lines: rustc_hash::FxHashMap<usize, Vec<u8>>,
}

/// Stream a run's trials once, in three overlapping stages: a reader thread cuts the file into batches
/// of lines; the calling thread parses and re-scores each batch (in parallel, without transcripts) and
/// encodes each sink's entries; a writer thread takes the batches in file order, keeps the compact rows
/// and the drill-down sample, and feeds the sinks. Returns the rows and the sample (in file order).
fn scan(
    trials_path: &Path,
    sinks: &mut [Box<dyn TrialSink>],
    check_order: bool,
    judgements: &Judgements,
) -> Result<(rows::ScoreRows, Sample)> {
    use rayon::prelude::*;
    use std::sync::mpsc::sync_channel;
    let file = std::fs::File::open(trials_path).map_err(|e| {
        crate::error::InputError::new(trials_path, format!("cannot open trial file: {e}"))
    })?;
    let encoders: Vec<Encoder> = sinks.iter().map(|s| s.encoder()).collect();
    let kept = std::thread::scope(|scope| -> Result<Kept> {
        let (lines_tx, lines_rx) = sync_channel::<Lines>(2);
        let (spare_tx, spare_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let reader = scope.spawn(move || -> Result<()> {
            let mut file = file;
            let mut carry = Vec::new();
            let mut line_no = 0usize;
            loop {
                let buffer = spare_rx.try_recv().unwrap_or_default();
                let batch = phases::time("read", || {
                    read_chunk(&mut file, buffer, &mut carry, line_no, CHUNK)
                })
                .with_context(|| {
                    format!("{}:{}: cannot read", trials_path.display(), line_no + 1)
                })?;
                line_no = batch.last_line;
                if batch.data.is_empty() || lines_tx.send(batch).is_err() {
                    return Ok(());
                }
            }
        });
        let (parsed_tx, parsed_rx) =
            sync_channel::<(Lines, Vec<(Trial, rows::Derived, Vec<Vec<u8>>)>)>(2);
        let writer = scope.spawn(move || -> Result<Kept> {
            let mut kept = Kept {
                rows: rows::ScoreRows::default(),
                heap: BinaryHeap::new(),
                lines: Default::default(),
            };
            let mut seq = 0usize;
            let mut order = crate::record::store::OrderCheck::default();
            let mut timed = phases::Local::default();
            for (batch, parsed) in parsed_rx {
                let mut done = Vec::with_capacity(parsed.len());
                for ((no, range), (t, derived, encoded)) in batch.lines.iter().zip(parsed) {
                    let line = &batch.data[range.clone()];
                    let h = crate::record::stable_hash(t.trial_id.as_bytes());
                    if check_order && !order.push(t.matrix_index, h) {
                        return Err(OutOfOrder { line: *no }.into());
                    }
                    timed.time("scan: rows (writer thread)", || kept.rows.push_with(&t, &derived));
                    for ((sink, bytes), name) in sinks.iter_mut().zip(&encoded).zip(SINK_WRITE) {
                        timed.time(name, || sink.write(&t, bytes))?;
                    }
                    if kept.heap.len() < DRILLDOWN_MAX {
                        kept.heap.push((h, seq));
                        kept.lines.insert(seq, line.to_vec());
                    } else if let Some(&(top, top_seq)) = kept.heap.peek()
                        && (h, seq) < (top, top_seq)
                    {
                        kept.heap.pop();
                        kept.lines.remove(&top_seq);
                        kept.heap.push((h, seq));
                        kept.lines.insert(seq, line.to_vec());
                    }
                    seq += 1;
                    crate::crashpoint::reached("scan", seq as u64);
                    done.push((t, encoded));
                }
                // Freed by the parsing threads that allocated them: this thread is the pipeline's
                // narrowest stage, and a free from another thread costs mimalloc more than a local one.
                rayon::spawn(move || drop(done));
                // The buffer goes back to the reader (fails harmlessly once the reader is done).
                let _ = spare_tx.send(batch.data);
                timed.flush();
            }
            Ok(kept)
        });
        let mut failed = None;
        // Claims and answers are read only to join judgements (and the sample is re-read in full).
        let judged = !judgements.0.is_empty();
        for batch in lines_rx.iter() {
            let parsed = batch
                .lines
                .par_iter()
                .map_init(phases::Local::default, |timed, (no, range)| {
                    let line = &batch.data[range.clone()];
                    let not_a_trial = |e: serde_json::Error| {
                        let message = format!("not a trial record: {e}");
                        crate::error::InputError::new(trials_path, message).at_line(*no)
                    };
                    use crate::record::trial::{parse_for_report, parse_without_transcript};
                    let mut t: Trial = timed
                        .time("scan: parse", || parse_for_report(line, judged))
                        .map_err(not_a_trial)?;
                    if t.score.scorer != crate::score::VERSION {
                        // A stale score: scoring reads what the report's parse left out.
                        t = timed
                            .time("scan: parse again to score", || parse_without_transcript(line))
                            .map_err(not_a_trial)?;
                        timed.time("scan: score", || crate::score::score_if_stale(&mut t));
                    }
                    t.judgement = judgements.of(&t);
                    let encoded = encoders
                        .iter()
                        .zip(SINK_ENCODE)
                        .map(|(e, name)| timed.time(name, || e(&t)))
                        .collect::<Result<Vec<_>>>()?;
                    let derived =
                        timed.time("scan: derive (pairing, diagnostics)", || rows::Derived::of(&t));
                    Ok((t, derived, encoded))
                })
                .collect::<Result<Vec<_>>>();
            match parsed {
                Ok(p) => {
                    if parsed_tx.send((batch, p)).is_err() {
                        break; // the writer stopped on an error; it reports it
                    }
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        drop(lines_rx);
        drop(parsed_tx);
        let kept = writer.join().map_err(|_| anyhow::anyhow!("the report writer panicked"))?;
        reader.join().map_err(|_| anyhow::anyhow!("the trial reader panicked"))??;
        match failed {
            Some(e) => Err(e),
            None => kept,
        }
    })?;
    let span = phases::start();
    let mut order: Vec<usize> = kept.lines.keys().copied().collect();
    order.sort_unstable();
    let sample = order
        .iter()
        .map(|&i| {
            let mut t: Trial = serde_json::from_slice(&kept.lines[&i])
                .with_context(|| format!("{}: cannot re-read a trial", trials_path.display()))?;
            crate::score::score_if_stale(&mut t);
            t.judgement = judgements.of(&t);
            Ok(t)
        })
        .collect::<Result<Vec<Trial>>>()?;
    span.end("drill-down sample: re-read");
    Ok((kept.rows, Sample { trials: sample, lines: order }))
}

/// The run's judgements (`judgements.jsonl`) by trial id, joined to each trial as it is read.
struct Judgements(
    rustc_hash::FxHashMap<String, std::sync::Arc<crate::record::judgement::Judgement>>,
);

impl Judgements {
    fn read(dir: &Path) -> Result<Judgements> {
        Ok(Judgements(
            crate::record::judgement::read(dir)?
                .into_iter()
                .map(|j| (j.trial_id.clone(), std::sync::Arc::new(j)))
                .collect(),
        ))
    }

    /// The trial's judgement, unless it judged another answer (the trial was re-run since: stale).
    fn of(&self, t: &Trial) -> Option<std::sync::Arc<crate::record::judgement::Judgement>> {
        if self.0.is_empty() {
            return None;
        }
        let j = self.0.get(&t.trial_id)?;
        (j.answer_digest
            == crate::record::judgement::answer_digest(t.final_answer.as_deref(), &t.claims))
        .then(|| j.clone())
    }
}

/// The drill-down sample and, per trial, its line among the trial file's records (counted from 0).
struct Sample {
    trials: Vec<Trial>,
    lines: Vec<usize>,
}

/// Give the drill-down sample its transcripts from `transcripts.jsonl` (trial format 2); records of
/// format 1 carry theirs already. With a compacted run's index (`transcripts.idx`) only the sample's
/// lines are read; without one (or a stale one), the file is scanned and only the sample's lines are
/// parsed: the others are skipped by their leading trial id.
fn with_transcripts(dir: &Path, sample: &mut Sample, records: usize) -> Result<()> {
    let sample_lines = &sample.lines;
    let sample = &mut sample.trials;
    let wanted: Vec<(usize, &str)> = sample
        .iter()
        .zip(sample_lines)
        .filter(|(t, _)| t.transcript.is_empty())
        .map(|(t, &line)| (line, t.trial_id.as_str()))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    if let Some(found) = crate::record::transcripts::read_indexed(dir, &wanted, records)? {
        let mut found = found.into_iter();
        for t in sample.iter_mut().filter(|t| t.transcript.is_empty()) {
            t.transcript = found.next().unwrap_or_default();
        }
        return Ok(());
    }
    let index: rustc_hash::FxHashMap<&str, usize> = sample
        .iter()
        .enumerate()
        .filter(|(_, t)| t.transcript.is_empty())
        .map(|(i, t)| (t.trial_id.as_str(), i))
        .collect();
    let mut found: Vec<(usize, Vec<crate::protocol::Message>)> = Vec::new();
    crate::record::transcripts::read(
        dir,
        |id| index.contains_key(id),
        |id, messages| found.push((index[id.as_str()], messages)),
    )?;
    for (i, messages) in found {
        sample[i].transcript = messages;
    }
    Ok(())
}

/// The trial file is not in matrix order (a run was killed before it compacted it); the scan stops
/// at the first record out of place, and the caller compacts and scans again.
#[derive(Debug)]
struct OutOfOrder {
    line: usize,
}

impl std::fmt::Display for OutOfOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: the trials are not in matrix order (the run was interrupted before compacting them)",
            self.line
        )
    }
}

impl std::error::Error for OutOfOrder {}

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
    sinks: &mut [Box<dyn TrialSink>],
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
    if transcripts {
        phases::time("drill-down sample: transcripts", || {
            with_transcripts(dir, &mut sample, rows.len())
        })?;
    }
    let sample = sample.trials;
    let span = phases::start();
    let offered = match std::fs::read(dir.join("tools.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{}: not a tools file", dir.join("tools.json").display()))?,
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
    let analysis = phases::time("analyze (cells, effects, confusion, tools, first look)", || {
        crate::analysis::analyze(rows, config, &lint)
    })?;
    Ok(ReportData { analysis, sample, offered, defects, history, transcripts_in })
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
    let data = in_matrix_order(dir, &lock, |check| load_with(dir, &mut [], check, false));
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
        for (s, name) in sinks.drain(..).zip(SINK_FINISH) {
            phases::time(name, || s.finish(&data))?;
        }
        // Render the aggregates before anything is moved into place.
        for (n, e) in exporters().into_iter().enumerate() {
            files.push(staged(dir, e.file_name()));
            let f = files.last().expect("just pushed");
            let span = phases::start();
            std::fs::write(&f.tmp, e.render(&data)?)
                .with_context(|| format!("cannot write {}", f.tmp.display()))?;
            span.end(&format!("write {}", e.file_name()));
            crate::crashpoint::reached("stage", n as u64 + 1);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_whole_lines_with_their_numbers() {
        // Lines shorter and longer than the chunk, a blank line, and no newline at the end.
        let text = "a\nbb\n\n0123456789abcdefghij\nccc\n   \nlast";
        let mut file = std::io::Cursor::new(text.as_bytes().to_vec());
        let (mut carry, mut line_no, mut got) = (Vec::new(), 0, Vec::new());
        loop {
            let chunk = read_chunk(&mut file, Vec::new(), &mut carry, line_no, 8).unwrap();
            if chunk.data.is_empty() {
                break;
            }
            for (no, r) in &chunk.lines {
                got.push((*no, String::from_utf8(chunk.data[r.clone()].to_vec()).unwrap()));
            }
            line_no = chunk.last_line;
        }
        let want: Vec<(usize, String)> =
            [(1, "a"), (2, "bb"), (4, "0123456789abcdefghij"), (5, "ccc"), (7, "last")]
                .iter()
                .map(|(n, l)| (*n, l.to_string()))
                .collect();
        assert_eq!(got, want);
    }
}
