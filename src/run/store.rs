//! The trials file of a run directory: append-only while running, compacted when done.
//!
//! One writer appends each finished trial as one line and flushes it, so a crash loses at most the
//! line being written. On resume, a torn last line (no trailing newline) is cut off and that trial is
//! simply run again; every complete line is a finished trial and is skipped. When the run completes,
//! the file is rewritten (temporary file + rename) in the matrix's job order with one record per trial
//! id, so an interrupted-and-resumed run ends byte-identical to an uninterrupted one.

use crate::error::InputError;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

#[derive(Deserialize)]
struct Head {
    trial_id: String,
    #[serde(default)]
    error: Option<String>,
}

/// What a trials file already holds: trial id → whether it is an infrastructure error.
#[derive(Debug)]
pub struct Existing {
    pub done: HashMap<String, bool>,
    /// Bytes of a torn last line that were discarded.
    pub discarded: usize,
}

/// Cut a torn last line off `path` (if any) and list the trials it holds.
pub fn scan(path: &Path) -> Result<Existing> {
    let mut done = HashMap::new();
    if !path.exists() {
        return Ok(Existing { done, discarded: 0 });
    }
    let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata()?.len();
    // Find the end of the last complete line.
    let mut keep = len;
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            let mut all = Vec::new();
            file.seek(SeekFrom::Start(0))?;
            file.read_to_end(&mut all)?;
            keep = all.iter().rposition(|b| *b == b'\n').map(|p| p as u64 + 1).unwrap_or(0);
        }
    }
    let discarded = (len - keep) as usize;
    if discarded > 0 {
        file.set_len(keep)?;
    }
    file.seek(SeekFrom::Start(0))?;
    for (i, line) in BufReader::new(&file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let head: Head = serde_json::from_str(&line)
            .map_err(|e| InputError::new(path, format!("not a trial record ({e}); the file is damaged beyond its last line")).at_line(i + 1))?;
        done.insert(head.trial_id, head.error.is_some());
    }
    Ok(Existing { done, discarded })
}

/// Append-only writer: one line per trial, flushed per record.
pub struct Appender {
    file: std::fs::File,
}

impl Appender {
    pub fn open(path: &Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Appender { file })
    }

    pub fn append(&mut self, line: &[u8]) -> Result<()> {
        // One write call per record: the line and its newline land together or the line is torn.
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        self.file.write_all(&buf)?;
        self.file.flush()?;
        Ok(())
    }
}

/// Rewrite `path` with one record per trial id (the last one written wins), ordered by `order`
/// (trial id → position in the matrix). Records whose id is not in `order` are dropped.
pub fn compact(path: &Path, order: &HashMap<String, usize>) -> Result<usize> {
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut latest: HashMap<usize, (usize, usize)> = HashMap::new();
    let mut start = 0;
    for (i, b) in text.iter().enumerate() {
        if *b != b'\n' {
            continue;
        }
        let line = &text[start..i];
        if let Ok(head) = serde_json::from_slice::<Head>(line)
            && let Some(&pos) = order.get(&head.trial_id) {
                latest.insert(pos, (start, i + 1));
            }
        start = i + 1;
    }
    let mut positions: Vec<usize> = latest.keys().copied().collect();
    positions.sort_unstable();
    let tmp = path.with_extension("jsonl.compact");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        for (n, p) in positions.iter().enumerate() {
            let (a, b) = latest[p];
            w.write_all(&text[a..b])?;
            crate::crashpoint::reached("compact-write", n as u64 + 1);
        }
        w.flush()?;
    }
    crate::crashpoint::reached("compact-rename", 1);
    std::fs::rename(&tmp, path)?;
    crate::crashpoint::reached("compact-done", 1);
    Ok(positions.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_last_line_is_discarded_and_complete_lines_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trials.jsonl");
        std::fs::write(&p, "{\"trial_id\":\"a\"}\n{\"trial_id\":\"b\",\"error\":\"timeout\"}\n{\"trial_id\":\"c\",\"sco").unwrap();
        let e = scan(&p).unwrap();
        assert_eq!(e.discarded, "{\"trial_id\":\"c\",\"sco".len());
        assert_eq!(e.done.len(), 2);
        assert!(e.done["b"]);
        assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 2);
    }

    #[test]
    fn damaged_middle_line_is_an_error_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trials.jsonl");
        std::fs::write(&p, "{\"trial_id\":\"a\"}\ngarbage\n").unwrap();
        let err = scan(&p).unwrap_err().to_string();
        assert!(err.contains(":2:"), "{err}");
    }

    #[test]
    fn compact_orders_and_deduplicates() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trials.jsonl");
        std::fs::write(&p, "{\"trial_id\":\"b\",\"v\":1}\n{\"trial_id\":\"a\"}\n{\"trial_id\":\"b\",\"v\":2}\n{\"trial_id\":\"zz\"}\n").unwrap();
        let order: HashMap<String, usize> = [("a".to_string(), 0), ("b".to_string(), 1)].into_iter().collect();
        assert_eq!(compact(&p, &order).unwrap(), 2);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"trial_id\":\"a\"}\n{\"trial_id\":\"b\",\"v\":2}\n");
    }
}
