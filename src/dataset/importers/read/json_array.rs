//! Reading a JSON array of records element by element with a scanner that tracks only strings and
//! bracket depth, so one bad element (too deep, malformed, cut off, a missing `,`) costs only itself.
//! Its own file because the scanner is the one piece of hand-written parsing in the importers.

use super::{Ledger, Raw, Reader, count, line_of, parse_reason};
use serde_json::Value;
use std::path::Path;

impl Reader<'_> {
    /// Read a file holding one JSON array of records, element by element.
    pub fn json_array(&self, path: &Path, ledger: &mut Ledger) -> Vec<Raw> {
        let first_row = ledger.rows();
        let Some(decoded) = self.load(path, ledger) else { return vec![] };
        let text = decoded.text.as_str();
        let b = text.as_bytes();
        let newlines: Vec<usize> = memchr::memchr_iter(b'\n', b).collect();
        let line_at = |pos: usize| line_of(&newlines, pos);
        let column_at = |pos: usize| {
            pos - newlines.get(line_of(&newlines, pos).wrapping_sub(2)).map(|n| n + 1).unwrap_or(0)
                + 1
        };
        let mut pos = skip_ws(b, 0);
        if b.get(pos) != Some(&b'[') {
            // Not an array: say what it is and count its records, as far as it can be read.
            self.wrong_shape(
                ledger,
                Some(line_at(pos)),
                "the file",
                count(text),
                "a JSON array of records",
            );
            self.report_lossy(ledger, first_row, &decoded, &[]);
            return vec![];
        }
        pos += 1;
        let mut out = Vec::new();
        let mut spans = Vec::new();
        let mut record = 0;
        loop {
            pos = skip_ws(b, pos);
            match b.get(pos) {
                None => {
                    ledger.file_row(
                        self.at(None, Some(line_at(b.len()))),
                        "repaired",
                        Some(0),
                        format!("the array is not closed (the file ends without `]`; truncated?); its {record} complete record(s) are read"),
                    );
                    break;
                }
                Some(b']') => {
                    let after = skip_ws(b, pos + 1);
                    if after < b.len() {
                        let what = format!(
                            "the text after the closing `]` (line {}, {} bytes)",
                            line_at(after),
                            b.len() - after
                        );
                        self.wrong_shape(
                            ledger,
                            Some(line_at(after)),
                            &what,
                            count(&text[after..]),
                            "nothing after the array",
                        );
                    }
                    break;
                }
                Some(_) => {}
            }
            let start = pos;
            let (end, complete) = scan_value(b, start);
            if end == start {
                // A stray `,` or `}` where a record should start: nothing to read there.
                ledger.file_row(
                    self.at(None, Some(line_at(start))),
                    "repaired",
                    Some(0),
                    format!(
                        "unexpected `{}` at line {}, column {} between records; skipped over",
                        b[start] as char,
                        line_at(start),
                        column_at(start)
                    ),
                );
                pos += 1;
                continue;
            }
            record += 1;
            let at = self.at(Some(record), Some(line_at(start)));
            spans.push((record, start..end));
            if !complete {
                self.skip(ledger, at, format!("record is cut off: the file ends inside it (truncated?); it starts at line {}", line_at(start)));
                break;
            }
            match serde_json::from_str::<Value>(&text[start..end]) {
                Ok(value) => {
                    let lossy = decoded.replaced.iter().any(|o| (start..end).contains(o));
                    out.push(Raw { at, value, lossy });
                }
                Err(e) => self.skip(ledger, at, parse_reason(&e, line_at(start), column_at(start))),
            }
            pos = skip_ws(b, end);
            match b.get(pos) {
                Some(b',') => pos += 1,
                Some(b']') | None => {}
                Some(_) => ledger.file_row(
                    self.at(Some(record + 1), Some(line_at(pos))),
                    "repaired",
                    Some(0),
                    format!(
                        "no `,` between records {record} and {} (line {}); read as two records",
                        record + 1,
                        line_at(pos)
                    ),
                ),
            }
        }
        if record == 0 && out.is_empty() {
            ledger.file_row(
                self.at(None, None),
                "skipped",
                Some(0),
                "the file holds an empty array: no records".to_string(),
            );
        }
        let lossy: Vec<usize> = spans
            .iter()
            .filter(|(_, s)| decoded.replaced.iter().any(|o| s.contains(o)))
            .map(|(r, _)| *r)
            .collect();
        self.report_lossy(ledger, first_row, &decoded, &lossy);
        out
    }
}

fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    while pos < b.len() && b[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

/// The end of the JSON value starting at `start` (exclusive) and whether it is complete. Only strings
/// and bracket depth are tracked — validity is serde_json's job — so any nesting depth is fine.
pub(super) fn scan_value(b: &[u8], start: usize) -> (usize, bool) {
    let mut pos = start;
    let mut depth = 0usize;
    while pos < b.len() {
        match b[pos] {
            b'"' => {
                pos += 1;
                while pos < b.len() && b[pos] != b'"' {
                    pos += if b[pos] == b'\\' { 2 } else { 1 };
                }
                if pos >= b.len() {
                    return (b.len(), false);
                }
                pos += 1;
                if depth == 0 {
                    return (pos, true);
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                if depth == 0 {
                    // A scalar ended by its container's close.
                    return (pos, pos > start);
                }
                depth -= 1;
                if depth == 0 {
                    return (pos + 1, true);
                }
            }
            b',' if depth == 0 => return (pos, pos > start),
            c if depth == 0 && c.is_ascii_whitespace() => return (pos, true),
            _ => {}
        }
        pos += 1;
    }
    (b.len(), depth == 0 && pos > start)
}
