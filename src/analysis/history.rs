//! Run history: one JSON line per run (`--history <file>`), so the HTML report can draw the trend of the
//! headline metrics over nights.
//!
//! An entry holds the run id and start time, the UTC date, the git commit, the matrix hash (which settings produced
//! it), free `--tag key=value` labels, and per cell n, pass@1 and selection accuracy with their
//! intervals. Re-recording a run replaces its entry, so re-rendering a report does not add points.
//! A copy of the history is kept in the run directory (`history.jsonl`): reports stay a pure function
//! of the run directory. It is the one report input with dates in it, by design.

use super::cells::CellSummary;
use crate::error::InputError;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryCell {
    pub key: String,
    pub n: u64,
    pub pass: f64,
    pub pass_low: f64,
    pub pass_high: f64,
    pub selection: f64,
    pub selection_low: f64,
    pub selection_high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub run_id: String,
    /// When the run started (from `run.json`): with the run id, what identifies a run, so a nightly
    /// that reuses its run id each night still adds a point.
    #[serde(default)]
    pub started_utc: String,
    /// When it was recorded, UTC `YYYYMMDD-hhmmss`.
    pub date_utc: String,
    pub git_sha: Option<String>,
    /// The run's matrix hash: entries with the same hash ran the same settings.
    pub config_hash: String,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    pub cells: Vec<HistoryCell>,
}

/// NaN (undefined) is not JSON; store it as -1 and draw nothing for it.
fn finite(x: f64) -> f64 {
    if x.is_nan() { -1.0 } else { x }
}

impl HistoryEntry {
    #[allow(clippy::too_many_arguments)]
    pub fn new(run_id: &str, started_utc: &str, date_utc: &str, git_sha: Option<String>, config_hash: &str, tags: BTreeMap<String, String>, cells: &[CellSummary]) -> Self {
        HistoryEntry {
            run_id: run_id.into(),
            started_utc: started_utc.into(),
            date_utc: date_utc.into(),
            git_sha,
            config_hash: config_hash.into(),
            tags,
            cells: cells
                .iter()
                .map(|c| HistoryCell {
                    key: c.key(),
                    n: c.pass.n,
                    pass: finite(c.pass.rate),
                    pass_low: finite(c.pass.low),
                    pass_high: finite(c.pass.high),
                    selection: finite(c.selection.rate),
                    selection_low: finite(c.selection.low),
                    selection_high: finite(c.selection.high),
                })
                .collect(),
        }
    }
}

/// Read a history file; a missing file is an empty history, a bad line an error naming file and line.
pub fn read(path: &Path) -> Result<Vec<HistoryEntry>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(InputError::new(path, format!("cannot open the history file: {e}")).into()),
    };
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| InputError::new(path, format!("cannot read: {e}")).at_line(i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| InputError::new(path, format!("not a history entry: {e}")).at_line(i + 1))?);
    }
    Ok(out)
}

/// Add `entry` to the history in `path` (replacing the entry of the same run: same run id and start
/// time), atomically.
pub fn record(path: &Path, entry: HistoryEntry) -> Result<Vec<HistoryEntry>> {
    let mut all = read(path)?;
    match all.iter_mut().find(|e| e.run_id == entry.run_id && e.started_utc == entry.started_utc) {
        Some(e) => *e = entry,
        None => all.push(entry),
    }
    let mut bytes = Vec::new();
    for e in &all {
        bytes.extend(serde_json::to_vec(e)?);
        bytes.push(b'\n');
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    crate::files::write_atomic(path, &bytes)?;
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> HistoryEntry {
        HistoryEntry::new(id, "20261130-000000", "20261130-010203", Some("abc".into()), "h", BTreeMap::new(), &[])
    }

    #[test]
    fn recording_a_run_again_replaces_its_entry() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        record(&p, entry("a")).unwrap();
        record(&p, entry("b")).unwrap();
        let mut again = entry("a");
        again.git_sha = Some("def".into());
        let all = record(&p, again).unwrap();
        assert_eq!(all.iter().map(|e| e.run_id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(read(&p).unwrap()[0].git_sha.as_deref(), Some("def"));
    }

    #[test]
    fn a_bad_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        std::fs::write(&p, format!("{}\n{{oops\n", serde_json::to_string(&entry("a")).unwrap())).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("h.jsonl:2"), "{e}");
    }
}
