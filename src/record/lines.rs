//! Reading a run directory's JSON Lines files (`trials.jsonl`, `transcripts.jsonl`) one line at a
//! time, each with its number and byte offset, so a reader can name the line that is wrong and a
//! copier can copy a line's bytes without parsing them.
//!
//! `toolpick merge` and `trial::read_trials` (the judge's reader) read through it. Compaction
//! (`store`) and the report's scan still read with their own loops, tuned for speed; they are meant
//! to move onto this reader (issue 33).

use crate::error::InputError;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// One line of a JSON Lines file.
pub struct Line<'a> {
    /// 1-based.
    pub number: usize,
    /// Where the line starts in the file, in bytes.
    pub offset: u64,
    /// The line without its line ending (`\n` or `\r\n`).
    pub text: &'a [u8],
    /// Bytes the line takes in the file, its line ending included.
    pub len_in_file: usize,
    /// Whether the line ends with a newline: a line without one is the torn tail of a writer killed
    /// while appending it.
    pub complete: bool,
}

impl Line<'_> {
    /// Nothing but whitespace (skipped by every reader).
    pub fn is_blank(&self) -> bool {
        self.text.iter().all(u8::is_ascii_whitespace)
    }
}

/// A JSON Lines file read line by line ([`JsonLines::next_line`]).
pub struct JsonLines {
    path: PathBuf,
    reader: BufReader<std::fs::File>,
    buf: Vec<u8>,
    number: usize,
    offset: u64,
}

impl JsonLines {
    /// Open `path`; `what` names the file in the error ("trial file").
    pub fn open(path: &Path, what: &str) -> Result<JsonLines, InputError> {
        let file = std::fs::File::open(path)
            .map_err(|e| InputError::new(path, format!("cannot open {what}: {e}")))?;
        Ok(JsonLines {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(1 << 20, file),
            buf: Vec::new(),
            number: 0,
            offset: 0,
        })
    }

    /// The next line, blank or not; `None` at the end of the file.
    pub fn next_line(&mut self) -> anyhow::Result<Option<Line<'_>>> {
        self.buf.clear();
        let n = self.reader.read_until(b'\n', &mut self.buf).map_err(|e| {
            InputError::new(&self.path, format!("cannot read: {e}")).at_line(self.number + 1)
        })?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        let offset = self.offset;
        self.offset += n as u64;
        let complete = self.buf.last() == Some(&b'\n');
        let mut text = self.buf.as_slice();
        if complete {
            text = &text[..text.len() - 1];
            text = text.strip_suffix(b"\r").unwrap_or(text);
        }
        Ok(Some(Line { number: self.number, offset, text, len_in_file: n, complete }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_with_their_number_offset_and_ending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, b"{\"a\":1}\n\n{\"b\":2}\r\n{\"c\"").unwrap();
        let mut lines = JsonLines::open(&path, "test file").unwrap();
        let mut seen = vec![];
        while let Some(l) = lines.next_line().unwrap() {
            seen.push((
                l.number,
                l.offset,
                String::from_utf8(l.text.to_vec()).unwrap(),
                l.len_in_file,
                l.complete,
                l.is_blank(),
            ));
        }
        assert_eq!(
            seen,
            [
                (1, 0, "{\"a\":1}".to_string(), 8, true, false),
                (2, 8, String::new(), 1, true, true),
                (3, 9, "{\"b\":2}".to_string(), 9, true, false),
                (4, 18, "{\"c\"".to_string(), 4, false, false),
            ]
        );
        let e = JsonLines::open(&dir.path().join("none.jsonl"), "trial file").err().unwrap();
        assert!(e.message.starts_with("cannot open trial file"), "{e}");
    }
}
