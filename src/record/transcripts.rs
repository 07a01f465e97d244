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
                return serde_json::from_slice(&line[b"{\"trial_id\":".len()..b"{\"trial_id\":\"".len() + i + 1]).ok();
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
pub fn read(dir: &Path, wanted: impl Fn(&str) -> bool, mut found: impl FnMut(String, Vec<Message>)) -> Result<()> {
    let path = dir.join(FILE);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(crate::error::InputError::new(&path, format!("cannot open the transcripts file: {e}")).into());
        }
    };
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    let mut no = 0usize;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).with_context(|| format!("{}:{}: cannot read", path.display(), no + 1))?;
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
        let parsed: TranscriptLine =
            serde_json::from_slice(&line).map_err(|e| crate::error::InputError::new(&path, format!("not a transcript line: {e}")).at_line(no))?;
        if wanted(&parsed.trial_id) {
            found(parsed.trial_id.into_owned(), parsed.transcript.into_owned());
        }
    }
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
}
