//! Run history: one JSON line per run (`--history <file>`), so the HTML report can draw the trend of the
//! headline metrics over nights.
//!
//! An entry holds the run id and start time, the UTC date and time it was recorded (ISO 8601,
//! `2026-11-30T01:02:03Z`; entries written before hold `20261130-010203` and are still read), the git commit, the matrix hash (which settings produced
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
    /// When it was recorded, UTC ISO 8601 `YYYY-MM-DDThh:mm:ssZ` (older entries: `YYYYMMDD-hhmmss`).
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

/// A compact UTC stamp `YYYYMMDD-hhmmss` (`run.json`'s spelling) in ISO 8601, `YYYY-MM-DDThh:mm:ssZ`;
/// anything else is returned as it is.
pub fn iso_8601(stamp: &str) -> String {
    let b = stamp.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() == 15 && digits(0..8) && b[8] == b'-' && digits(9..15) {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &stamp[0..4],
            &stamp[4..6],
            &stamp[6..8],
            &stamp[9..11],
            &stamp[11..13],
            &stamp[13..15]
        )
    } else {
        stamp.to_string()
    }
}

impl HistoryEntry {
    /// The recorded date `YYYY-MM-DD` and time `hh:mm:ss` (UTC), from either spelling of `date_utc`.
    pub fn day_and_time(&self) -> Option<(&str, &str)> {
        let iso = self.date_utc.as_str();
        let ok = iso.len() == 20 && iso.as_bytes()[10] == b'T' && iso.ends_with('Z');
        // Older entries are converted on the fly by the caller's `iso_8601`; here only the ISO form.
        ok.then(|| (&iso[0..10], &iso[11..19]))
    }

    #[allow(clippy::too_many_arguments)]
    pub fn new(
        run_id: &str,
        started_utc: &str,
        date_utc: &str,
        git_sha: Option<String>,
        config_hash: &str,
        tags: BTreeMap<String, String>,
        cells: &[CellSummary],
    ) -> Self {
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
/// Dates of older entries are read into ISO 8601.
pub fn read(path: &Path) -> Result<Vec<HistoryEntry>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(InputError::new(path, format!("cannot open the history file: {e}")).into());
        }
    };
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line =
            line.map_err(|e| InputError::new(path, format!("cannot read: {e}")).at_line(i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let mut entry: HistoryEntry = crate::error::json_line(path, i + 1, &line).map_err(|e| {
            InputError { message: format!("not a history entry: {}", e.message), ..e }
        })?;
        entry.date_utc = iso_8601(&entry.date_utc);
        out.push(entry);
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
    // The directory exists: `--history` is checked before the run (a typo in it is not created).
    crate::files::write_atomic(path, &bytes)?;
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> HistoryEntry {
        HistoryEntry::new(
            id,
            "20261130-000000",
            "2026-11-30T01:02:03Z",
            Some("abc".into()),
            "h",
            BTreeMap::new(),
            &[],
        )
    }

    #[test]
    fn older_compact_dates_are_read_as_iso_8601() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let mut old = entry("a");
        old.date_utc = "20261130-010203".into();
        std::fs::write(&p, format!("{}\n", serde_json::to_string(&old).unwrap())).unwrap();
        let read = read(&p).unwrap();
        assert_eq!(read[0].date_utc, "2026-11-30T01:02:03Z");
        assert_eq!(read[0].day_and_time(), Some(("2026-11-30", "01:02:03")));
        // Every second of a day round-trips from the compact stamp.
        for secs in (0..86_400).step_by(7) {
            let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
            assert_eq!(
                iso_8601(&format!("20240229-{h:02}{m:02}{s:02}")),
                format!("2024-02-29T{h:02}:{m:02}:{s:02}Z")
            );
        }
        for other in ["", "2026-11-30T01:02:03Z", "20261130_010203", "2026113-0102030"] {
            assert_eq!(iso_8601(other), other);
        }
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
        std::fs::write(&p, format!("{}\n{{oops\n", serde_json::to_string(&entry("a")).unwrap()))
            .unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("h.jsonl:2"), "{e}");
    }
}
