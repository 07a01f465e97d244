//! `transcripts.jsonl`: the full message transcript of every trial, beside `trials.jsonl`.
//!
//! Scoring and every report but the HTML drill-down need the calls, not the messages, and the messages
//! are most of a trial's bytes; so since trial format 2 ([`FORMAT`]) they live in their own file and
//! `trials.jsonl` stays small enough to re-score a million trials in seconds. One line per trial:
//! `{"trial_id": …, "matrix_index": …, "transcript": [messages]}`, trial id first so a reader can pick
//! the lines it wants without parsing the others.
//!
//! The runner appends a trial's transcript line *before* its trial record, so a record on disk always
//! has its transcript; a kill between the two leaves a transcript without a record, which the resumed
//! run writes again (the last line of an id wins) and compaction drops. Both files are compacted into
//! the same order ([`super::store::compact_run`]). Runs written before format 2 keep each transcript
//! inside its trial record and have no transcripts file; readers take the transcript from wherever it
//! is ([`read`] finds nothing then), so such a run still reports as it did.

use crate::protocol::Message;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The trial file format this version writes (recorded in `run.json` as `trial_format`): 1 kept
/// transcripts inside trial records; 2 keeps them in `transcripts.jsonl`.
pub const FORMAT: u32 = 2;

/// The transcripts file's name in a run directory.
pub const FILE: &str = "transcripts.jsonl";

/// One line of `transcripts.jsonl` (field order is the line's key order: the id first).
#[derive(Debug, Serialize, Deserialize)]
pub struct TranscriptLine<'a> {
    pub trial_id: std::borrow::Cow<'a, str>,
    #[serde(default)]
    pub matrix_index: usize,
    pub transcript: std::borrow::Cow<'a, [Message]>,
}

/// The trial id of a transcript line, read from its first key without parsing the rest (the
/// transcript is most of the line). `None` when the line does not start the way this version writes
/// it (a hand-edited file): the caller then parses the whole line.
pub fn leading_id(line: &[u8]) -> Option<String> {
    let rest = line.strip_prefix(b"{\"trial_id\":\"")?;
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 2,
            b'"' => {
                return serde_json::from_slice(
                    &line[b"{\"trial_id\":".len()..b"{\"trial_id\":\"".len() + i + 1],
                )
                .ok();
            }
            _ => i += 1,
        }
    }
    None
}

/// Read the transcripts of the trials `wanted` asks for from `dir`'s transcripts file, calling `found`
/// with each trial id and its transcript (the last line of an id wins, as in compaction). Lines of
/// other trials are skipped by their leading id, without parsing them. A run without a transcripts file
/// (trial format 1) finds nothing: its transcripts are inside the trial records.
pub fn read(
    dir: &Path,
    wanted: impl Fn(&str) -> bool,
    mut found: impl FnMut(String, Vec<Message>),
) -> Result<()> {
    let path = dir.join(FILE);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(crate::error::InputError::new(
                &path,
                format!("cannot open the transcripts file: {e}"),
            )
            .into());
        }
    };
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    let mut no = 0usize;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("{}:{}: cannot read", path.display(), no + 1))?;
        if n == 0 {
            return Ok(());
        }
        no += 1;
        if line.last() != Some(&b'\n') {
            // A torn last line (a kill while appending it): its trial has no record yet.
            return Ok(());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(id) = leading_id(&line)
            && !wanted(&id)
        {
            continue;
        }
        let parsed: TranscriptLine = serde_json::from_slice(&line).map_err(|e| {
            crate::error::InputError::new(&path, format!("not a transcript line: {e}")).at_line(no)
        })?;
        if wanted(&parsed.trial_id) {
            found(parsed.trial_id.into_owned(), parsed.transcript.into_owned());
        }
    }
}

/// The index of a compacted transcripts file, beside it: the byte offset of every line, so a report
/// reads the few transcripts its drill-down shows instead of scanning gigabytes. It is a hint, never the
/// truth: [`read_indexed`] uses it only when it describes the transcripts file as it is (same length,
/// one line per trial) and every line it points at carries the expected trial id; otherwise the reader
/// scans the file ([`read`]). Written after each compaction, so a missing or stale index (a kill
/// between the two, an older run) costs time, not correctness.
pub const INDEX_FILE: &str = "transcripts.idx";

/// Binary layout: this magic, the transcripts file's length and the number of lines (u64, little
/// endian), then each line's offset (u64, little endian).
const INDEX_MAGIC: &[u8; 8] = b"TPTXIDX1";

/// Write the index of `dir`'s transcripts file, whose lines start at `offsets`.
pub fn write_index(dir: &Path, offsets: &[u64]) -> Result<()> {
    let len = std::fs::metadata(dir.join(FILE))
        .with_context(|| format!("cannot read {}", dir.join(FILE).display()))?
        .len();
    let mut bytes = Vec::with_capacity(24 + offsets.len() * 8);
    bytes.extend_from_slice(INDEX_MAGIC);
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(&(offsets.len() as u64).to_le_bytes());
    for o in offsets {
        bytes.extend_from_slice(&o.to_le_bytes());
    }
    crate::files::write_atomic(&dir.join(INDEX_FILE), &bytes)
}

/// Read the transcripts of `wanted` — `(line, trial id)` pairs, the line counted from 0 in the
/// compacted transcripts file, which holds `lines` lines (one per trial record) — through the index.
/// `None` when there is no index or it does not fit the file (the caller scans instead).
pub fn read_indexed(
    dir: &Path,
    wanted: &[(usize, &str)],
    lines: usize,
) -> Result<Option<Vec<Vec<Message>>>> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(index) = std::fs::read(dir.join(INDEX_FILE)) else { return Ok(None) };
    let Ok(mut file) = std::fs::File::open(dir.join(FILE)) else { return Ok(None) };
    let len = file.metadata()?.len();
    let word = |i: usize| {
        index.get(i * 8..i * 8 + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    if index.len() != 24 + lines * 8
        || &index[..8] != INDEX_MAGIC
        || word(1) != Some(len)
        || word(2) != Some(lines as u64)
    {
        return Ok(None);
    }
    let offset = |line: usize| word(3 + line).filter(|&o| o <= len);
    let mut out = Vec::with_capacity(wanted.len());
    let mut buf = Vec::new();
    for &(line, id) in wanted {
        let (Some(start), Some(end)) =
            (offset(line), if line + 1 < lines { offset(line + 1) } else { Some(len) })
        else {
            return Ok(None);
        };
        if end <= start {
            return Ok(None);
        }
        buf.resize((end - start) as usize, 0);
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)
            .with_context(|| format!("cannot read {}", dir.join(FILE).display()))?;
        match serde_json::from_slice::<TranscriptLine>(&buf) {
            Ok(parsed) if parsed.trial_id == id => out.push(parsed.transcript.into_owned()),
            _ => return Ok(None),
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leading_id_is_read_without_the_rest_and_escapes_are_decoded() {
        let line = serde_json::to_vec(&TranscriptLine {
            trial_id: "d/v/flat/b/t \"q\" \\ é#0".into(),
            matrix_index: 3,
            transcript: vec![Message::User { content: "hi".into() }].into(),
        })
        .unwrap();
        assert_eq!(leading_id(&line).as_deref(), Some("d/v/flat/b/t \"q\" \\ é#0"));
        // A line in another key order is not guessed at: the caller parses it whole.
        assert_eq!(leading_id(br#"{"matrix_index":0,"trial_id":"x","transcript":[]}"#), None);
        assert_eq!(leading_id(br#"{"trial_id":"unterminated"#), None);
    }

    #[test]
    fn compaction_indexes_the_transcripts_and_the_index_reads_the_lines_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let line = |id: &str, i: usize, text: &str| {
            let mut l = serde_json::to_vec(&TranscriptLine {
                trial_id: id.into(),
                matrix_index: i,
                transcript: vec![Message::User { content: text.into() }].into(),
            })
            .unwrap();
            l.push(b'\n');
            l
        };
        // Out of order, one trial written twice (the last wins) and one transcript without a record.
        let transcripts = [
            line("c", 2, "third"),
            line("a", 0, "old"),
            line("orphan", 3, "x"),
            line("b", 1, "second \"quoted\""),
            line("a", 0, "first"),
        ]
        .concat();
        std::fs::write(dir.path().join(FILE), transcripts).unwrap();
        let trials: String = ["b", "a", "c"]
            .iter()
            .enumerate()
            .map(|(n, id)| format!("{{\"trial_id\":\"{id}\",\"matrix_index\":{}}}\n", [1, 0, 2][n]))
            .collect();
        std::fs::write(dir.path().join("trials.jsonl"), trials).unwrap();
        crate::record::store::compact_run(dir.path(), |_, i| Some(i)).unwrap();
        let text = |m: &Vec<Message>| match &m[0] {
            Message::User { content } => content.clone(),
            other => panic!("{other:?}"),
        };
        let got = read_indexed(dir.path(), &[(2, "c"), (0, "a"), (1, "b")], 3)
            .unwrap()
            .expect("a fresh index is used");
        assert_eq!(
            got.iter().map(text).collect::<Vec<_>>(),
            ["third", "first", "second \"quoted\""]
        );
        // Another line count, another id at a line, or a file that changed since: not trusted.
        assert!(read_indexed(dir.path(), &[(0, "a")], 4).unwrap().is_none());
        assert!(read_indexed(dir.path(), &[(0, "b")], 3).unwrap().is_none());
        let mut f = std::fs::OpenOptions::new().append(true).open(dir.path().join(FILE)).unwrap();
        std::io::Write::write_all(&mut f, &line("d", 3, "new")).unwrap();
        assert!(read_indexed(dir.path(), &[(0, "a")], 3).unwrap().is_none());
    }
}
