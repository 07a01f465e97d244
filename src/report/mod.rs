//! Reports: pure functions of a run directory's trial records.
//!
//! [`render_run`] streams `trials.jsonl` once (parsed in parallel batches, transcripts skipped),
//! re-scores every trial, keeps one compact row per trial ([`summary::ScoreRows`]) and a bounded
//! drill-down sample, aggregates with polars ([`summary`]) and hands one [`ReportData`] to each
//! [`Exporter`]. Formats with one entry per trial ([`TrialSink`]: `trials.csv`, `trials.parquet`,
//! `junit.xml`) are written while the trials stream past, so memory does not grow with transcripts.
//! Exporters never compute statistics; they only render what `summary` produced. Every file is written
//! to a temporary name and renamed only when all succeeded, so a failed render leaves the previous
//! report intact.

pub mod ablation;
pub mod csv;
pub mod curve;
pub mod history;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod parquet;
pub mod summary;
pub mod tools;

use crate::protocol::FunctionDef;
use crate::run::Trial;
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BinaryHeap};
use std::io::BufRead;
use std::path::{Path, PathBuf};
pub use summary::{CategorySummary, CellSummary};

/// The HTML drill-down holds every trial of runs up to this size, and a deterministic sample of this
/// many (the smallest hashes of the trial ids) beyond; the CSV and Parquet files hold all of them.
pub const DRILLDOWN_MAX: usize = 10_000;

/// Everything an exporter may render.
pub struct ReportData {
    /// Run parameters (from `run.json`'s `config`), without timestamps.
    pub config: serde_json::Value,
    pub cells: Vec<CellSummary>,
    pub categories: Vec<CategorySummary>,
    /// One compact, scored row per trial, in file order.
    pub rows: summary::ScoreRows,
    /// Trials with their transcripts for the drill-down, in file order: all of them, or a sample of
    /// [`DRILLDOWN_MAX`] when the run is larger.
    pub sample: Vec<Trial>,
    /// Offered functions per `dataset/variant/layout`.
    pub offered: BTreeMap<String, Vec<FunctionDef>>,
    /// Lint findings per `dataset/variant`, by tool id (`lint.json`).
    pub lint: BTreeMap<String, BTreeMap<String, serde_json::Value>>,
    /// Records importers skipped or repaired (`defects.json`).
    pub defects: Vec<serde_json::Value>,
    /// Earlier runs' headline numbers (`history.jsonl`, written by `--history`); empty without.
    pub history: Vec<history::HistoryEntry>,
}

impl ReportData {
    pub fn trial_count(&self) -> usize {
        self.rows.len()
    }
}

/// One output format rendered from the aggregates (its size does not grow with the number of trials).
pub trait Exporter {
    /// File name inside the run directory.
    fn file_name(&self) -> &'static str;
    fn render(&self, data: &ReportData) -> Result<Vec<u8>>;
}

/// One output format with an entry per trial, written to its temporary file as the trials stream past.
pub trait TrialSink: Send + Sync {
    /// Encode one trial's entry. Called in parallel and in any order, so formatting is spread over the
    /// cores; the default encodes nothing.
    fn encode(&self, _t: &Trial) -> Result<Vec<u8>> {
        Ok(Vec::new())
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
        Box::new(curve::CurveCsv),
        Box::new(markdown::MarkdownSummary),
        Box::new(json::SummaryJson),
        Box::new(html::HtmlReport),
    ]
}

/// A file being written under a temporary name.
struct Staged {
    tmp: PathBuf,
    dest: PathBuf,
}

fn staged(dir: &Path, name: &str) -> Staged {
    Staged { tmp: dir.join(format!("{name}.tmp-{}", std::process::id())), dest: dir.join(name) }
}

/// Streaming formats and the files they write.
type Sinks = (Vec<Box<dyn TrialSink>>, Vec<Staged>);

/// The streaming formats, each opened on its temporary file.
fn sinks(dir: &Path) -> Result<Sinks> {
    let files = [staged(dir, "trials.csv"), staged(dir, "trials.parquet"), staged(dir, "junit.xml")];
    let sinks: Vec<Box<dyn TrialSink>> =
        vec![Box::new(csv::TrialsCsv::create(&files[0].tmp)?), Box::new(parquet::TrialsParquet::create(&files[1].tmp)?), Box::new(junit::JunitXml::create(&files[2].tmp)?)];
    Ok((sinks, files.into()))
}

/// Trial lines parsed per parallel batch.
const BATCH: usize = 4096;

/// Stream a run's trials once: parse and re-score (in parallel, without transcripts), encode each
/// sink's entries (in parallel), write them in order, keep compact rows and the drill-down sample.
fn scan(trials_path: &Path, sinks: &mut [Box<dyn TrialSink>]) -> Result<(summary::ScoreRows, Vec<Trial>)> {
    use rayon::prelude::*;
    let file = std::fs::File::open(trials_path).map_err(|e| crate::error::InputError::new(trials_path, format!("cannot open trial file: {e}")))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut rows = summary::ScoreRows::default();
    // Drill-down sample: the DRILLDOWN_MAX smallest (hash of trial id, position), with their lines.
    let mut heap: BinaryHeap<(u64, usize)> = BinaryHeap::new();
    let mut kept: rustc_hash::FxHashMap<usize, String> = Default::default();
    let mut line_no = 0usize;
    let mut seq = 0usize;
    loop {
        let mut batch: Vec<(usize, String)> = Vec::with_capacity(BATCH);
        while batch.len() < BATCH {
            let mut line = String::new();
            let n = reader.read_line(&mut line).with_context(|| format!("{}:{}: cannot read", trials_path.display(), line_no + 1))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            if !line.trim().is_empty() {
                batch.push((line_no, line));
            }
        }
        if batch.is_empty() {
            break;
        }
        let shared: &[Box<dyn TrialSink>] = sinks;
        let parsed: Vec<(Trial, Vec<Vec<u8>>)> = batch
            .par_iter()
            .map(|(no, line)| {
                let mut t: Trial = crate::run::trial::without_transcripts(|| serde_json::from_str(line))
                    .map_err(|e| crate::error::InputError::new(trials_path, format!("not a trial record: {e}")).at_line(*no))?;
                t.rescore();
                let encoded = shared.iter().map(|s| s.encode(&t)).collect::<Result<Vec<_>>>()?;
                Ok((t, encoded))
            })
            .collect::<Result<_>>()?;
        for ((_, line), (t, encoded)) in batch.into_iter().zip(parsed) {
            rows.push(&t);
            for (sink, bytes) in sinks.iter_mut().zip(&encoded) {
                sink.write(&t, bytes)?;
            }
            let h = crate::layout::flat::stable_hash(t.trial_id.as_bytes());
            if heap.len() < DRILLDOWN_MAX {
                heap.push((h, seq));
                kept.insert(seq, line);
            } else if let Some(&(top, top_seq)) = heap.peek()
                && (h, seq) < (top, top_seq)
            {
                heap.pop();
                kept.remove(&top_seq);
                heap.push((h, seq));
                kept.insert(seq, line);
            }
            seq += 1;
        }
    }
    let mut order: Vec<usize> = kept.keys().copied().collect();
    order.sort_unstable();
    let sample = order
        .into_iter()
        .map(|i| {
            let mut t: Trial = serde_json::from_str(&kept[&i]).with_context(|| format!("{}: cannot re-read a trial", trials_path.display()))?;
            t.rescore();
            Ok(t)
        })
        .collect::<Result<Vec<Trial>>>()?;
    Ok((rows, sample))
}

/// Score a run directory, feeding every trial to the sinks on the way.
fn load_with(dir: &Path, sinks: &mut [Box<dyn TrialSink>]) -> Result<ReportData> {
    let trials_path = dir.join("trials.jsonl");
    if !trials_path.is_file() {
        return Err(crate::error::InputError::new(&trials_path, "no trials.jsonl here; pass a run directory such as reports/latest").into());
    }
    let (rows, sample) = scan(&trials_path, sinks)?;
    let (cells, categories) = summary::summarize(&rows)?;
    let offered = match std::fs::read(dir.join("tools.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("{}: not a tools file", dir.join("tools.json").display()))?,
        Err(_) => BTreeMap::new(),
    };
    let config = std::fs::read(dir.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .map(|v| v["config"].clone())
        .unwrap_or(serde_json::Value::Null);
    // Where the response cache lives is a machine-local path, not an experiment parameter: leave it out
    // of reports so runs on different machines (shards) render the same.
    let mut config = config;
    if let Some(o) = config.as_object_mut() {
        o.remove("cache_dir");
    }
    let lint = std::fs::read(dir.join("lint.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let defects = std::fs::read(dir.join("defects.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let history = history::read(&dir.join("history.jsonl"))?;
    Ok(ReportData { config, cells, categories, rows, sample, offered, lint, defects, history })
}

/// Load and score a run directory (writes nothing).
pub fn load_run(dir: &Path) -> Result<ReportData> {
    load_with(dir, &mut [])
}

/// Write `bytes` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot move {} into place", path.display()))
}

/// Score a run directory and (re)write every report file in it.
pub fn render_run(dir: &Path) -> Result<ReportData> {
    let (mut sinks, mut files) = sinks(dir)?;
    let result = (|| -> Result<ReportData> {
        let data = load_with(dir, &mut sinks)?;
        for s in sinks.drain(..) {
            s.finish(&data)?;
        }
        // Render the aggregates before anything is moved into place.
        for e in exporters() {
            let f = staged(dir, e.file_name());
            std::fs::write(&f.tmp, e.render(&data)?).with_context(|| format!("cannot write {}", f.tmp.display()))?;
            files.push(f);
        }
        Ok(data)
    })();
    match result {
        Ok(data) => {
            for f in &files {
                std::fs::rename(&f.tmp, &f.dest).with_context(|| format!("cannot move {} into place", f.dest.display()))?;
            }
            Ok(data)
        }
        Err(e) => {
            drop(sinks);
            for f in &files {
                let _ = std::fs::remove_file(&f.tmp);
            }
            Err(e)
        }
    }
}

/// A rate as a percentage with one decimal, or "n/a" when undefined.
pub fn pct(x: f64) -> String {
    if x.is_nan() { "n/a".into() } else { format!("{:.1}", x * 100.0) }
}
