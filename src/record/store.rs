//! The trials file of a run directory: append-only while running, compacted when done.
//!
//! One writer appends each finished trial as one line and flushes it, so a crash loses at most the
//! line being written. On resume, a torn last line (no trailing newline) is cut off and that trial is
//! simply run again; every complete line is a finished trial and is skipped. When the run completes,
//! the file is compacted ([`compact`]: temporary file + rename) into the matrix's job order with one
//! record per trial id, so an interrupted-and-resumed run ends byte-identical to an uninterrupted one.
//! A kill during compaction leaves the file uncompacted; `report` (or the resumed run) compacts it
//! again, so whatever the moment of the kill, the outputs are an uninterrupted run's.

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
    let discarded = cut_torn_tail(path)?;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    for (i, line) in BufReader::new(&file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let head: Head = serde_json::from_str(&line).map_err(|e| {
            InputError::new(
                path,
                format!("not a trial record ({e}); the file is damaged beyond its last line"),
            )
            .at_line(i + 1)
        })?;
        done.insert(head.trial_id, head.error.is_some());
    }
    Ok(Existing { done, discarded })
}

/// Cut an incomplete last line (no trailing newline: a kill while appending it) off `path`, so the
/// next append starts a line of its own; returns the bytes cut. A missing file has nothing to cut.
pub fn cut_torn_tail(path: &Path) -> Result<usize> {
    if !path.exists() {
        return Ok(0);
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
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
    if keep < len {
        file.set_len(keep)?;
    }
    Ok((len - keep) as usize)
}

/// Compact a run directory's trial records and transcripts into one order: `position(trial_id,
/// matrix_index)` places a record (`None` drops it), the last record of a trial wins, and a transcript
/// is kept only for a trial that has a record (a kill between the two appends leaves one without). The
/// transcripts go first: a kill between the two compactions leaves compacted transcripts and trials
/// still out of order, which the next compaction (a resume, or `report`) finishes; so compacted trials
/// always mean compacted transcripts. The compacted transcripts are then indexed
/// ([`super::transcripts::write_index`]) so a report reads only the transcripts it shows.
pub fn compact_run(
    dir: &Path,
    position: impl Fn(&str, usize) -> Option<usize>,
) -> Result<Compacted> {
    let trials = dir.join("trials.jsonl");
    let transcripts = dir.join(super::transcripts::FILE);
    if transcripts.exists() {
        let recorded = trial_ids(&trials)?;
        let (_, offsets) = compact_with_offsets(&transcripts, |id, matrix_index| {
            if recorded.contains(&crate::record::stable_hash(id.as_bytes())) {
                position(id, matrix_index)
            } else {
                None
            }
        })?;
        super::transcripts::write_index(dir, &offsets)?;
    }
    compact(&trials, position)
}

/// Hashes of the trial ids recorded in a trial file.
fn trial_ids(path: &Path) -> Result<rustc_hash::FxHashSet<u64>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let (mut ids, mut line, mut no) = (rustc_hash::FxHashSet::default(), Vec::new(), 0usize);
    loop {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("{}:{}: cannot read", path.display(), no + 1))?
            == 0
        {
            return Ok(ids);
        }
        no += 1;
        if line.last() != Some(&b'\n') || line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let place: Place = serde_json::from_slice(&line)
            .map_err(|e| InputError::new(path, format!("not a trial record ({e})")).at_line(no))?;
        ids.insert(crate::record::stable_hash(place.trial_id.as_bytes()));
    }
}

/// Append-only writer: one line per record, flushed per record.
pub struct Appender {
    file: std::fs::File,
    /// A crash point reached after each append, with the count so far (tests only; see
    /// [`crate::crashpoint`]).
    crash_point: Option<&'static str>,
    appended: u64,
}

impl Appender {
    pub fn open(path: &Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Appender { file, crash_point: None, appended: 0 })
    }

    /// Reach the crash point `name` after each append (`name:<n>` after the n-th).
    pub fn with_crash_point(mut self, name: &'static str) -> Self {
        self.crash_point = Some(name);
        self
    }

    pub fn append(&mut self, line: &[u8]) -> Result<()> {
        // One write call per record: the line and its newline land together or the line is torn.
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        self.file.write_all(&buf)?;
        self.file.flush()?;
        self.appended += 1;
        if let Some(point) = self.crash_point {
            crate::crashpoint::reached(point, self.appended);
        }
        Ok(())
    }
}

/// What [`compact`] found and did.
#[derive(Debug, PartialEq)]
pub struct Compacted {
    /// Records in the compacted file.
    pub trials: usize,
    /// Whether the file had to be rewritten (it was not in order yet).
    pub rewritten: bool,
}

/// Where a trial record sits in its file and where it goes.
#[derive(Clone, Copy)]
struct Entry {
    position: usize,
    /// Hash of the trial id (records of one id are one trial).
    id: u64,
    start: u64,
    len: u64,
}

#[derive(Deserialize)]
struct Place<'a> {
    #[serde(borrow)]
    trial_id: std::borrow::Cow<'a, str>,
    #[serde(default)]
    matrix_index: usize,
}

/// Rewrite `path` with one record per trial, in matrix order. `position(trial_id, matrix_index)` gives
/// a record's place (`None` drops it). Of several records of one trial id the last one written wins
/// (an infrastructure error re-run by `--retry-errors`, or a record appended twice around a crash);
/// records of different ids at one position (files from before trials carried their matrix index)
/// keep the order in which they first appear.
///
/// Streaming, so memory holds 32 bytes per record, not the records: one pass reads each record's id
/// and position; a file already in order (positions increasing, no repeated trial) is left as it is,
/// so compacting is idempotent and a compacted file costs one read. Otherwise the records are copied
/// in order to `<file>.compact-<pid>-<n>` (unique per process and call), which is synced and renamed
/// over the file. A kill before the
/// rename leaves the file as it was (and the temporary file, which [`super::guard::remove_stale`]
/// removes later), a kill after it the compacted file: either way compacting again gives the same
/// bytes.
pub fn compact(path: &Path, position: impl Fn(&str, usize) -> Option<usize>) -> Result<Compacted> {
    compact_with_offsets(path, position).map(|(done, _)| done)
}

/// [`compact`], also returning the byte offset of each line of the compacted file (for the
/// transcripts index, [`super::transcripts::write_index`]).
pub fn compact_with_offsets(
    path: &Path,
    position: impl Fn(&str, usize) -> Option<usize>,
) -> Result<(Compacted, Vec<u64>)> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let (mut entries, mut in_order, mut check) = (Vec::new(), true, OrderCheck::default());
    let (mut line, mut start, mut no) = (Vec::new(), 0u64, 0usize);
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("{}:{}: cannot read", path.display(), no + 1))?;
        if n == 0 {
            break;
        }
        no += 1;
        if line.last() != Some(&b'\n') {
            return Err(InputError::new(path, "the last record is incomplete (the run was killed while writing it); resume the run with the same --run-id, which discards it and runs that trial again")
                .at_line(no)
                .into());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            in_order = false;
            start += n as u64;
            continue;
        }
        let place: Place = serde_json::from_slice(&line)
            .map_err(|e| InputError::new(path, format!("not a trial record ({e})")).at_line(no))?;
        match position(&place.trial_id, place.matrix_index) {
            Some(p) => {
                let e = Entry {
                    position: p,
                    id: crate::record::stable_hash(place.trial_id.as_bytes()),
                    start,
                    len: n as u64,
                };
                in_order &= check.push(e.position, e.id);
                entries.push(e);
            }
            None => in_order = false,
        }
        start += n as u64;
    }
    if in_order {
        // In order means no blank line either: the entries are the file's lines.
        return Ok((
            Compacted { trials: entries.len(), rewritten: false },
            entries.iter().map(|e| e.start).collect(),
        ));
    }
    // One record per (position, id): the last written, placed where that trial first appeared.
    entries.sort_unstable_by_key(|e| (e.position, e.id, e.start));
    let mut kept: Vec<(u64, Entry)> = Vec::new();
    for e in entries {
        match kept.last_mut() {
            Some((_, last)) if last.position == e.position && last.id == e.id => *last = e,
            _ => kept.push((e.start, e)),
        }
    }
    kept.sort_unstable_by_key(|(first, e)| (e.position, *first));

    let tmp = crate::files::temp_path_tagged(path, "compact");
    let written = (|| -> Result<Vec<u64>> {
        let mut source = BufReader::with_capacity(1 << 16, reader.into_inner());
        let mut out = std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(&tmp)
                .with_context(|| format!("cannot create {}", tmp.display()))?,
        );
        let mut at = u64::MAX;
        let mut offsets = Vec::with_capacity(kept.len());
        let mut written = 0u64;
        for (n, (_, e)) in kept.iter().enumerate() {
            offsets.push(written);
            written += e.len;
            if e.start != at {
                source.seek(SeekFrom::Start(e.start))?;
            }
            line.resize(e.len as usize, 0);
            source
                .read_exact(&mut line)
                .with_context(|| format!("cannot read {}", path.display()))?;
            at = e.start + e.len;
            out.write_all(&line).with_context(|| format!("cannot write {}", tmp.display()))?;
            crate::crashpoint::reached("compact-write", n as u64 + 1);
        }
        // The compacted file replaces the only copy of the trials: on disk before the rename.
        let out = out
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        out.sync_all().with_context(|| format!("cannot write {}", tmp.display()))?;
        crate::crashpoint::reached("compact-rename", 1);
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot move {} into place", path.display()))?;
        Ok(offsets)
    })();
    let offsets = match written {
        Ok(offsets) => offsets,
        Err(e) => {
            // The trials file is as it was; no half-written copy stays beside it.
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    crate::crashpoint::reached("compact-done", 1);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // The rename itself, on disk (best effort: not every platform can sync a directory).
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok((Compacted { trials: kept.len(), rewritten: true }, offsets))
}

/// Checks, record by record, that a trial file is compacted: positions never decrease, and no trial
/// repeats among the records of one position (in files from this version each position holds one
/// trial; files from before trials carried their matrix index have them all at 0).
#[derive(Default)]
pub struct OrderCheck {
    position: Option<usize>,
    /// Hashes of the trial ids seen at the current position.
    ids: rustc_hash::FxHashSet<u64>,
}

impl OrderCheck {
    /// Take the next record (its position and the hash of its trial id); false if it is out of order.
    pub fn push(&mut self, position: usize, id: u64) -> bool {
        match self.position {
            Some(p) if position < p => false,
            Some(p) if position == p => self.ids.insert(id),
            _ => {
                self.position = Some(position);
                self.ids.clear();
                self.ids.insert(id);
                true
            }
        }
    }
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
        let order: HashMap<String, usize> =
            [("a".to_string(), 0), ("b".to_string(), 1)].into_iter().collect();
        assert_eq!(
            compact(&p, |id, _| order.get(id).copied()).unwrap(),
            Compacted { trials: 2, rewritten: true }
        );
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"trial_id\":\"a\"}\n{\"trial_id\":\"b\",\"v\":2}\n"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    }

    /// Records of a run: `(id, matrix index, note)`.
    fn write(p: &Path, records: &[(&str, usize, &str)]) {
        let text: String = records
            .iter()
            .map(|(id, i, note)| {
                format!("{{\"trial_id\":\"{id}\",\"matrix_index\":{i},\"note\":\"{note}\"}}\n")
            })
            .collect();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn compact_by_matrix_index_keeps_the_last_record_of_a_trial_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trials.jsonl");
        // Completion order, an error re-run later, and a record appended twice.
        write(
            &p,
            &[
                ("c", 2, "error"),
                ("a", 0, "ok"),
                ("d", 3, "ok"),
                ("c", 2, "ok"),
                ("b", 1, "ok"),
                ("b", 1, "ok"),
            ],
        );
        assert_eq!(compact(&p, |_, i| Some(i)).unwrap(), Compacted { trials: 4, rewritten: true });
        let want = "{\"trial_id\":\"a\",\"matrix_index\":0,\"note\":\"ok\"}\n{\"trial_id\":\"b\",\"matrix_index\":1,\"note\":\"ok\"}\n{\"trial_id\":\"c\",\"matrix_index\":2,\"note\":\"ok\"}\n{\"trial_id\":\"d\",\"matrix_index\":3,\"note\":\"ok\"}\n";
        assert_eq!(std::fs::read_to_string(&p).unwrap(), want);
        let modified = std::fs::metadata(&p).unwrap().modified().unwrap();
        assert_eq!(compact(&p, |_, i| Some(i)).unwrap(), Compacted { trials: 4, rewritten: false });
        assert_eq!(std::fs::read_to_string(&p).unwrap(), want);
        assert_eq!(
            std::fs::metadata(&p).unwrap().modified().unwrap(),
            modified,
            "a compacted file is not rewritten"
        );
    }

    #[test]
    fn records_without_matrix_positions_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trials.jsonl");
        std::fs::write(
            &p,
            "{\"trial_id\":\"y\"}\n{\"trial_id\":\"x\"}\n{\"trial_id\":\"y\",\"v\":2}\n",
        )
        .unwrap();
        assert_eq!(compact(&p, |_, i| Some(i)).unwrap(), Compacted { trials: 2, rewritten: true });
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"trial_id\":\"y\",\"v\":2}\n{\"trial_id\":\"x\"}\n"
        );
        assert!(!compact(&p, |_, i| Some(i)).unwrap().rewritten);
    }

    #[test]
    fn compact_refuses_a_torn_or_damaged_record_and_leaves_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trials.jsonl");
        let text = "{\"trial_id\":\"b\",\"matrix_index\":1}\n{\"trial_id\":\"a\",\"matrix_index\":0}\n{\"trial_id\":\"c\",\"ma";
        std::fs::write(&p, text).unwrap();
        let err = format!("{:#}", compact(&p, |_, i| Some(i)).unwrap_err());
        assert!(err.contains(":3:") && err.contains("incomplete"), "{err}");
        std::fs::write(&p, "{\"trial_id\":\"b\",\"matrix_index\":1}\nnot json\n{\"trial_id\":\"a\",\"matrix_index\":0}\n").unwrap();
        let err = format!("{:#}", compact(&p, |_, i| Some(i)).unwrap_err());
        assert!(err.contains(":2:") && err.contains("not a trial record"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
