//! The one way importers read a benchmark file, so every importer survives the same damage the same way.
//!
//! - **Undecodable bytes** (invalid UTF-8) are replaced by U+FFFD; the file gets one `repaired` row
//!   with the number of bytes and of records affected, and each affected record is returned marked
//!   [`Raw::lossy`] (the importer counts it as repaired). The import goes on.
//! - **An empty file** (nothing but whitespace) gets one `skipped` row; it has no records to lose.
//! - **A JSON array** is read element by element with a small scanner that only tracks strings and
//!   bracket depth (no recursion), so one bad element costs that element alone: a record nested deeper
//!   than serde_json's recursion limit, a malformed record, a missing `,` between records, a file cut off
//!   inside its last record — each is reported at its record number and file line, and the other records
//!   are still imported.
//! - **JSON Lines**: one record per non-blank line, each parsed on its own.
//!
//! Rows are about task records only when the file holds tasks ([`Reader::tasks`]); for an answer or a
//! tool file a bad record loses no task by itself (the task that needed it is reported where it fails).

use super::{At, Ledger};
use serde_json::Value;
use std::path::Path;

/// serde_json's nesting limit: deeper values fail with "recursion limit exceeded".
pub const SERDE_DEPTH_LIMIT: usize = 128;

/// One record as read: where it is, its value, and whether undecodable bytes were replaced in it.
#[derive(Debug, Clone)]
pub struct Raw {
    pub at: At,
    pub value: Value,
    pub lossy: bool,
}

/// How to read one file and where to report what goes wrong.
pub struct Reader<'a> {
    /// The file name shown in defect rows (relative to the import root).
    pub name: &'a str,
    /// `true` when each record of the file is one task record (a skipped record then counts as one
    /// record lost); `false` for answer, API or tool files.
    pub tasks: bool,
}

/// A file's text after decoding, with the byte offsets (in the text) where bytes were replaced.
struct Decoded {
    text: String,
    replaced: Vec<usize>,
    bad_bytes: usize,
}

fn decode(bytes: Vec<u8>) -> Decoded {
    let (mut text, mut replaced, bad_bytes) = match String::from_utf8(bytes) {
        Ok(s) => (s, vec![], 0),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut text = String::with_capacity(bytes.len());
            let mut replaced = Vec::new();
            let mut bad = 0;
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    replaced.push(text.len());
                    bad += chunk.invalid().len();
                    text.push(char::REPLACEMENT_CHARACTER);
                }
            }
            (text, replaced, bad)
        }
    };
    // A byte-order mark is not part of the JSON; dropping it loses nothing.
    if text.starts_with('\u{feff}') {
        text.drain(..3);
        replaced.retain(|&o| o >= 3);
        replaced.iter_mut().for_each(|o| *o -= 3);
    }
    Decoded { text, replaced, bad_bytes }
}

/// 1-based line of byte offset `pos`, given the offsets of every `\n`.
fn line_of(newlines: &[usize], pos: usize) -> usize {
    newlines.partition_point(|&n| n < pos) + 1
}

/// A serde_json error as a reason, with the position moved from the record's own text to the file.
fn parse_reason(e: &serde_json::Error, first_line: usize, first_column: usize) -> String {
    let msg = e.to_string();
    if msg.starts_with("recursion limit exceeded") {
        return format!("record is nested more than {SERDE_DEPTH_LIMIT} levels deep, beyond serde_json's recursion limit; it cannot be read");
    }
    let bare = msg.split(" at line ").next().unwrap_or(&msg);
    let line = first_line + e.line().saturating_sub(1);
    let column = if e.line() <= 1 { first_column + e.column().saturating_sub(1) } else { e.column() };
    format!("not valid JSON: {bare} (line {line}, column {column})")
}

impl Reader<'_> {
    fn at(&self, record: Option<usize>, line: Option<usize>) -> At {
        At { file: self.name.to_string(), record, line }
    }

    /// Read and decode; `None` (with a row) when the file cannot be read or is empty.
    fn load(&self, path: &Path, ledger: &mut Ledger) -> Option<Decoded> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                ledger.file_row(self.at(None, None), "skipped", 0, format!("cannot read the file ({e}); none of its records are imported"));
                return None;
            }
        };
        let decoded = decode(bytes);
        if decoded.text.trim().is_empty() {
            ledger.file_row(self.at(None, None), "skipped", 0, "the file is empty: it holds no records".to_string());
            return None;
        }
        Some(decoded)
    }

    /// The file-level row for replaced bytes, inserted before the file's other rows.
    fn report_lossy(&self, ledger: &mut Ledger, first_row: usize, decoded: &Decoded, records: &[usize]) {
        if decoded.bad_bytes == 0 {
            return;
        }
        let list = records.iter().take(10).map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
        let more = if records.len() > 10 { ", …" } else { "" };
        let which = if records.is_empty() { String::new() } else { format!(" (record {list}{more})") };
        let reason = format!(
            "{} bytes of invalid UTF-8 in {} place(s) replaced by U+FFFD; {} record(s) affected{which}",
            decoded.bad_bytes,
            decoded.replaced.len(),
            records.len()
        );
        let affected = if self.tasks { records.len() } else { 0 };
        ledger.insert_file_row(first_row, self.at(None, None), "repaired", affected, reason);
    }

    fn skip(&self, ledger: &mut Ledger, at: At, reason: String) {
        ledger.file_row(at, "skipped", usize::from(self.tasks), reason);
    }

    /// Read a JSON Lines file: one record per non-blank line.
    pub fn jsonl(&self, path: &Path, ledger: &mut Ledger) -> Vec<Raw> {
        let first_row = ledger.rows();
        let Some(decoded) = self.load(path, ledger) else { return vec![] };
        let mut out = Vec::new();
        let mut lossy_records = Vec::new();
        let mut record = 0;
        let mut start = 0;
        for (i, raw_line) in decoded.text.split('\n').enumerate() {
            let end = start + raw_line.len();
            let span = start..end;
            start = end + 1;
            let line = raw_line.strip_suffix('\r').unwrap_or(raw_line);
            if line.trim().is_empty() {
                continue;
            }
            record += 1;
            let at = self.at(Some(record), Some(i + 1));
            let lossy = decoded.replaced.iter().any(|o| span.contains(o));
            if lossy {
                lossy_records.push(record);
            }
            match serde_json::from_str::<Value>(line) {
                Ok(value) => out.push(Raw { at, value, lossy }),
                Err(e) => self.skip(ledger, at, parse_reason(&e, i + 1, 1)),
            }
        }
        self.report_lossy(ledger, first_row, &decoded, &lossy_records);
        out
    }

    /// Read a file holding one JSON array of records, element by element.
    pub fn json_array(&self, path: &Path, ledger: &mut Ledger) -> Vec<Raw> {
        let first_row = ledger.rows();
        let Some(decoded) = self.load(path, ledger) else { return vec![] };
        let text = decoded.text.as_str();
        let b = text.as_bytes();
        let newlines: Vec<usize> = memchr::memchr_iter(b'\n', b).collect();
        let line_at = |pos: usize| line_of(&newlines, pos);
        let column_at = |pos: usize| pos - newlines.get(line_of(&newlines, pos).wrapping_sub(2)).map(|n| n + 1).unwrap_or(0) + 1;
        let mut pos = skip_ws(b, 0);
        if b.get(pos) != Some(&b'[') {
            // Not an array: say what it is, as far as it can be read.
            let reason = match serde_json::from_str::<Value>(text) {
                Ok(v) => format!("the file holds {}, expected a JSON array of records", super::kind_of(&v)),
                Err(e) => format!("{}; expected a JSON array of records, so none is imported", parse_reason(&e, 1, 1)),
            };
            ledger.file_row(self.at(None, Some(line_at(pos))), "skipped", 0, reason);
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
                        0,
                        format!("the array is not closed (the file ends without `]`; truncated?); its {record} complete record(s) are read"),
                    );
                    break;
                }
                Some(b']') => {
                    let after = skip_ws(b, pos + 1);
                    if after < b.len() {
                        ledger.file_row(
                            self.at(None, Some(line_at(after))),
                            "skipped",
                            0,
                            format!("{} bytes after the closing `]` (line {}) are not read", b.len() - after, line_at(after)),
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
                    0,
                    format!("unexpected `{}` at line {}, column {} between records; skipped over", b[start] as char, line_at(start), column_at(start)),
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
                    0,
                    format!("no `,` between records {record} and {} (line {}); read as two records", record + 1, line_at(pos)),
                ),
            }
        }
        if record == 0 && out.is_empty() {
            ledger.file_row(self.at(None, None), "skipped", 0, "the file holds an empty array: no records".to_string());
        }
        let lossy: Vec<usize> = spans.iter().filter(|(_, s)| decoded.replaced.iter().any(|o| s.contains(o))).map(|(r, _)| *r).collect();
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
fn scan_value(b: &[u8], start: usize) -> (usize, bool) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn scanner_finds_value_ends_at_any_depth() {
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(scan_value(deep.as_bytes(), 0), (10000, true));
        assert_eq!(scan_value(br#"{"a": "x]}\"y"} , 2"#, 0), (15, true));
        assert_eq!(scan_value(b"12 ,", 0), (2, true));
        assert_eq!(scan_value(b"12]", 0), (2, true));
        assert!(!scan_value(br#"{"a": [1, 2"#, 0).1, "an unclosed record is incomplete");
    }

    #[test]
    fn a_deep_record_costs_only_itself_in_an_array() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let p = write(tmp.path(), "a.json", format!("[\n{{\"id\": \"a\"}},\n{deep},\n{{\"id\": \"c\"}}\n]\n").as_bytes());
        let mut ledger = Ledger::default();
        let raws = Reader { name: "a.json", tasks: true }.json_array(&p, &mut ledger);
        let ids: Vec<&str> = raws.iter().map(|r| r.value["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!((raws[1].at.record, raws[1].at.line), (Some(3), Some(4)));
        let d = &ledger.defects;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].record, d[0].line, d[0].action, d[0].affected), (Some(2), Some(3), "skipped", 1));
        assert!(d[0].reason.contains("nested more than 128 levels"), "{}", d[0].reason);
    }

    #[test]
    fn invalid_utf8_is_replaced_and_counted_per_record() {
        let tmp = tempfile::tempdir().unwrap();
        let p = write(tmp.path(), "q.jsonl", b"{\"q\": \"ok\"}\n\n{\"q\": \"caf\xe9 \xff\"}\n{\"q\": \"fine\"}\n");
        let mut ledger = Ledger::default();
        let raws = Reader { name: "q.jsonl", tasks: true }.jsonl(&p, &mut ledger);
        assert_eq!(raws.len(), 3, "no record is lost to bad bytes");
        assert_eq!(raws.iter().map(|r| r.lossy).collect::<Vec<_>>(), [false, true, false]);
        assert_eq!((raws[1].at.record, raws[1].at.line), (Some(2), Some(3)));
        assert_eq!(raws[1].value["q"], "caf\u{fffd} \u{fffd}");
        assert_eq!(ledger.defects.len(), 1);
        let d = &ledger.defects[0];
        assert_eq!((d.action, d.affected, d.record), ("repaired", 1, None));
        assert!(d.reason.starts_with("2 bytes of invalid UTF-8") && d.reason.contains("1 record(s) affected (record 2)"), "{}", d.reason);
    }

    #[test]
    fn empty_and_non_array_files_get_one_honest_row() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::default();
        let r = Reader { name: "x.json", tasks: true };
        assert!(r.json_array(&write(tmp.path(), "e.json", b" \n"), &mut ledger).is_empty());
        assert!(r.json_array(&write(tmp.path(), "o.json", b"{\"a\": 1}"), &mut ledger).is_empty());
        assert!(r.jsonl(&write(tmp.path(), "e.jsonl", b""), &mut ledger).is_empty());
        let reasons: Vec<&str> = ledger.defects.iter().map(|d| d.reason.as_str()).collect();
        assert_eq!(reasons, ["the file is empty: it holds no records", "the file holds an object, expected a JSON array of records", "the file is empty: it holds no records"]);
    }

    #[test]
    fn broken_array_structure_loses_only_what_is_broken() {
        let tmp = tempfile::tempdir().unwrap();
        // missing comma between records 1 and 2, a malformed record 3, a truncated record 4
        let p = write(tmp.path(), "b.json", b"[{\"id\": 1}\n{\"id\": 2},\n{\"id\": 3,,},\n{\"id\": 4");
        let mut ledger = Ledger::default();
        let raws = Reader { name: "b.json", tasks: true }.json_array(&p, &mut ledger);
        assert_eq!(raws.iter().map(|r| r.value["id"].as_i64().unwrap()).collect::<Vec<_>>(), [1, 2]);
        let rows: Vec<(Option<usize>, &str, usize)> = ledger.defects.iter().map(|d| (d.record, d.action, d.affected)).collect();
        assert_eq!(rows, [(Some(2), "repaired", 0), (Some(3), "skipped", 1), (Some(4), "skipped", 1)]);
        assert!(ledger.defects[1].reason.starts_with("not valid JSON") && ledger.defects[1].reason.contains("line 3"), "{}", ledger.defects[1].reason);
        assert!(ledger.defects[2].reason.contains("cut off"));
    }
}
