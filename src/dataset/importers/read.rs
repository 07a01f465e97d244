//! The one way importers read a benchmark file, so every importer survives the same damage the same way.
//!
//! - **Encodings** ([`super::decode`]): UTF-8 with or without a byte-order mark, UTF-16 and UTF-32 in
//!   either byte order (with a mark or recognised without one) are decoded; a file that is not UTF-8
//!   gets one `repaired` row naming its encoding, and its records are read as any others.
//! - **Undecodable bytes** are replaced by U+FFFD; the file gets one `repaired` row with the number of
//!   bytes, the lines they are on and the records affected, and each affected record is returned
//!   marked [`Raw::lossy`] (the importer counts it as repaired). The import goes on.
//! - **A file that is not text** (binary, a raw zero byte), **cannot be read** or **is a directory**:
//!   one `skipped` row; the number of records it held is unknown (a directory holds none).
//! - **An empty file** (nothing but whitespace) gets one `skipped` row; it has no records to lose.
//! - **Not the expected top-level shape** (an object or JSON Lines where an array belongs, an array or
//!   a pretty-printed object where JSON Lines belong): one `skipped` row with the number of records it
//!   held, counted where it can be ([`count`]: an array's elements, an object's one array of records,
//!   an object of records, one record, JSON lines), "unknown" otherwise. The summary's skipped count
//!   includes them.
//! - **A JSON array** is read element by element with a small scanner that only tracks strings and
//!   bracket depth (no recursion), so one bad element costs that element alone: a record nested deeper
//!   than serde_json's recursion limit, a malformed record, a missing `,` between records, a file cut off
//!   inside its last record — each is reported at its record number and file line, and the other records
//!   are still imported. Text after the closing `]` is counted the same way as a wrong shape.
//! - **JSON Lines**: one record per non-blank line, each parsed on its own.
//!
//! Rows are about task records only when the file holds tasks ([`Reader::tasks`]); for an answer or a
//! tool file a bad record loses no task by itself (the task that needed it is reported where it fails).

use super::decode::{Decoded, Encoding};
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

/// 1-based line of byte offset `pos`, given the offsets of every `\n`.
fn line_of(newlines: &[usize], pos: usize) -> usize {
    newlines.partition_point(|&n| n < pos) + 1
}

/// A serde_json error as a reason, with the position moved from the record's own text to the file.
fn parse_reason(e: &serde_json::Error, first_line: usize, first_column: usize) -> String {
    let msg = e.to_string();
    if msg.starts_with("recursion limit exceeded") {
        return format!(
            "record is nested more than {SERDE_DEPTH_LIMIT} levels deep, beyond serde_json's recursion limit; it cannot be read"
        );
    }
    let bare = msg.split(" at line ").next().unwrap_or(&msg);
    let line = first_line + e.line().saturating_sub(1);
    let column =
        if e.line() <= 1 { first_column + e.column().saturating_sub(1) } else { e.column() };
    format!("not valid JSON: {bare} (line {line}, column {column})")
}

/// How many records a text that is not in the expected shape holds, and what it is.
#[derive(Debug, PartialEq)]
pub struct Count {
    /// `None` when they cannot be counted.
    pub records: Option<usize>,
    /// What the text holds, e.g. "an object with 40 records in its `data` array".
    pub holds: String,
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The records a parsed value holds when it is not the array expected: an array's elements; an
/// object with exactly one array, of objects, inside (`{"data": [...]}`), that array's; an object of
/// two or more objects (records by id), its members; any other object, one record; a scalar, none.
pub fn records_in(v: &Value) -> Count {
    match v {
        Value::Array(a) => Count {
            records: Some(a.len()),
            holds: format!("an array of {} record{}", a.len(), plural(a.len())),
        },
        Value::Object(m) => {
            let arrays: Vec<(&String, &Vec<Value>)> =
                m.iter().filter_map(|(k, v)| v.as_array().map(|a| (k, a))).collect();
            match arrays.as_slice() {
                [(key, a)] if !a.is_empty() && a.iter().all(Value::is_object) => Count {
                    records: Some(a.len()),
                    holds: format!(
                        "an object with {} record{} in its `{key}` array",
                        a.len(),
                        plural(a.len())
                    ),
                },
                _ if m.len() >= 2 && m.values().all(Value::is_object) => Count {
                    records: Some(m.len()),
                    holds: format!("an object of {} records, one per key", m.len()),
                },
                _ => Count { records: Some(1), holds: "one object (a single record)".into() },
            }
        }
        other => Count {
            records: Some(0),
            holds: format!("{}, no record", crate::error::json_kind(other)),
        },
    }
}

/// Count the records in `text` (a whole file, or what follows its array): as one JSON value
/// ([`records_in`]), else as JSON Lines when every non-blank line is JSON, else unknown.
pub fn count(text: &str) -> Count {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => records_in(&v),
        Err(e) => {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            if lines.len() > 1 && lines.iter().all(|l| serde_json::from_str::<Value>(l).is_ok()) {
                return Count {
                    records: Some(lines.len()),
                    holds: format!("JSON Lines, {} record{}", lines.len(), plural(lines.len())),
                };
            }
            Count {
                records: None,
                holds: format!(
                    "nothing readable as JSON: {}",
                    parse_reason(&e, 1, 1).trim_start_matches("not valid JSON: ")
                ),
            }
        }
    }
}

impl Reader<'_> {
    fn at(&self, record: Option<usize>, line: Option<usize>) -> At {
        At { file: self.name.to_string(), record, line }
    }

    /// Task records a file-level row is about: the count for a task file, 0 for any other.
    fn affected(&self, records: Option<usize>) -> Option<usize> {
        if self.tasks { records } else { Some(0) }
    }

    /// A file-level `skipped` row for a file (or the part of it at `line`) not in the expected shape.
    fn wrong_shape(
        &self,
        ledger: &mut Ledger,
        line: Option<usize>,
        what: &str,
        counted: Count,
        expected: &str,
    ) {
        let records = match counted.records {
            Some(n) => format!("{n} record{} not imported", plural(n)),
            None => "none is imported, and how many records it held is unknown".into(),
        };
        let reason = format!("{what} holds {}, expected {expected}; {records}", counted.holds);
        ledger.file_row(self.at(None, line), "skipped", self.affected(counted.records), reason);
    }

    /// Read and decode; `None` (with a row) when the file cannot be read, is not text or is empty.
    fn load(&self, path: &Path, ledger: &mut Ledger) -> Option<Decoded> {
        if path.is_dir() {
            ledger.file_row(
                self.at(None, None),
                "skipped",
                Some(0),
                "is a directory, not a file: it holds no records and nothing in it is read"
                    .to_string(),
            );
            return None;
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                let reason = format!(
                    "cannot read the file ({e}); none of its records are imported, how many it held is unknown"
                );
                ledger.file_row(self.at(None, None), "skipped", self.affected(None), reason);
                return None;
            }
        };
        let size = bytes.len();
        let decoded = super::decode::decode(bytes);
        if decoded.binary {
            let reason = format!(
                "the file is not text ({} of {size} bytes are not {}{}); none of its records can be read, how many it held is unknown",
                decoded.bad_bytes,
                decoded.encoding.describe(),
                if decoded.text.contains('\0') { ", and it holds zero bytes" } else { "" }
            );
            ledger.file_row(self.at(None, None), "skipped", self.affected(None), reason);
            return None;
        }
        if !matches!(decoded.encoding, Encoding::Utf8 { .. }) {
            let reason = format!(
                "the file is {}, not UTF-8; it is decoded as such and its records are read",
                decoded.encoding.describe()
            );
            ledger.file_row(self.at(None, None), "repaired", Some(0), reason);
        }
        if decoded.text.trim().is_empty() {
            ledger.file_row(
                self.at(None, None),
                "skipped",
                Some(0),
                "the file is empty: it holds no records".to_string(),
            );
            return None;
        }
        Some(decoded)
    }

    /// The file-level row for replaced bytes (at the first line holding one), inserted before the
    /// file's other rows.
    fn report_lossy(
        &self,
        ledger: &mut Ledger,
        first_row: usize,
        decoded: &Decoded,
        records: &[usize],
    ) {
        if decoded.bad_bytes == 0 {
            return;
        }
        let list = |items: &[usize]| {
            let mut s = items.iter().take(10).map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
            if items.len() > 10 {
                s.push_str(", …");
            }
            s
        };
        let lines = decoded.bad_lines();
        let which =
            if records.is_empty() { String::new() } else { format!(" (record {})", list(records)) };
        let reason = format!(
            "{} bytes of invalid {} in {} place(s) (line {}) replaced by U+FFFD; {} record(s) affected{which}",
            decoded.bad_bytes,
            match decoded.encoding {
                Encoding::Utf8 { .. } => "UTF-8".to_string(),
                other => other.describe(),
            },
            decoded.replaced.len(),
            list(&lines),
            records.len()
        );
        let affected = if self.tasks { records.len() } else { 0 };
        // A file already reported for its encoding keeps that row first.
        let first_row = if ledger.defects.get(first_row).is_some_and(|d| {
            d.file == self.name && d.record.is_none() && d.reason.starts_with("the file is ")
        }) {
            first_row + 1
        } else {
            first_row
        };
        ledger.insert_file_row(
            first_row,
            self.at(None, lines.first().copied()),
            "repaired",
            Some(affected),
            reason,
        );
    }

    fn skip(&self, ledger: &mut Ledger, at: At, reason: String) {
        ledger.file_row(at, "skipped", Some(usize::from(self.tasks)), reason);
    }

    /// Read a JSON Lines file: one record per non-blank line.
    pub fn jsonl(&self, path: &Path, ledger: &mut Ledger) -> Vec<Raw> {
        let first_row = ledger.rows();
        let Some(decoded) = self.load(path, ledger) else { return vec![] };
        let text = decoded.text.as_str();
        // The whole file as one JSON value where lines belong: an array of records, or one object
        // written over several lines (a line-by-line read would report each of its lines).
        let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let several_lines = text.trim().contains('\n');
        let suspect = text.trim_start().starts_with('[')
            || (several_lines && serde_json::from_str::<Value>(first_line).is_err());
        if suspect
            && let Some(v) =
                serde_json::from_str::<Value>(text).ok().filter(|v| v.is_array() || several_lines)
        {
            let what =
                if v.is_array() { "the file" } else { "the file, written over several lines," };
            self.wrong_shape(
                ledger,
                Some(1),
                what,
                records_in(&v),
                "JSON Lines (one record per line)",
            );
            self.report_lossy(ledger, first_row, &decoded, &[]);
            return vec![];
        }
        let mut out = Vec::new();
        let mut lossy_records = Vec::new();
        let mut record = 0;
        let mut start = 0;
        for (i, raw_line) in text.split('\n').enumerate() {
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
        let p = write(
            tmp.path(),
            "a.json",
            format!("[\n{{\"id\": \"a\"}},\n{deep},\n{{\"id\": \"c\"}}\n]\n").as_bytes(),
        );
        let mut ledger = Ledger::default();
        let raws = Reader { name: "a.json", tasks: true }.json_array(&p, &mut ledger);
        let ids: Vec<&str> = raws.iter().map(|r| r.value["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!((raws[1].at.record, raws[1].at.line), (Some(3), Some(4)));
        let d = &ledger.defects;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].record, d[0].line, d[0].action, d[0].affected),
            (Some(2), Some(3), "skipped", Some(1))
        );
        assert!(d[0].reason.contains("nested more than 128 levels"), "{}", d[0].reason);
    }

    #[test]
    fn invalid_utf8_is_replaced_and_counted_per_record() {
        let tmp = tempfile::tempdir().unwrap();
        let p = write(
            tmp.path(),
            "q.jsonl",
            b"{\"q\": \"ok\"}\n\n{\"q\": \"caf\xe9 \xff\"}\n{\"q\": \"fine\"}\n",
        );
        let mut ledger = Ledger::default();
        let raws = Reader { name: "q.jsonl", tasks: true }.jsonl(&p, &mut ledger);
        assert_eq!(raws.len(), 3, "no record is lost to bad bytes");
        assert_eq!(raws.iter().map(|r| r.lossy).collect::<Vec<_>>(), [false, true, false]);
        assert_eq!((raws[1].at.record, raws[1].at.line), (Some(2), Some(3)));
        assert_eq!(raws[1].value["q"], "caf\u{fffd} \u{fffd}");
        assert_eq!(ledger.defects.len(), 1);
        let d = &ledger.defects[0];
        assert_eq!((d.action, d.affected, d.record, d.line), ("repaired", Some(1), None, Some(3)));
        assert!(
            d.reason.starts_with("2 bytes of invalid UTF-8 in 2 place(s) (line 3)")
                && d.reason.contains("1 record(s) affected (record 2)"),
            "{}",
            d.reason
        );
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
        assert_eq!(
            reasons,
            [
                "the file is empty: it holds no records",
                "the file holds one object (a single record), expected a JSON array of records; 1 record not imported",
                "the file is empty: it holds no records"
            ]
        );
    }

    /// Every shape a file can have instead of the expected one, and how many records it is counted as.
    #[test]
    fn wrong_shapes_are_counted_where_they_can_be() {
        let rec = r#"{"id": 1, "q": "x", "tags": [1]}"#;
        let cases = [
            (
                format!(r#"{{"data": [{rec}, {rec}, {rec}]}}"#),
                Some(3),
                "an object with 3 records in its `data` array",
            ),
            (
                format!(r#"{{"a": {rec}, "b": {rec}}}"#),
                Some(2),
                "an object of 2 records, one per key",
            ),
            (rec.to_string(), Some(1), "one object (a single record)"),
            (format!("{rec}\n{rec}\n\n{rec}\n"), Some(3), "JSON Lines, 3 records"),
            ("\"text\"".to_string(), Some(0), "a string, no record"),
            (format!(r#"{{"data": [{rec}, {rec}"#), None, "nothing readable as JSON"),
        ];
        for (text, records, holds) in cases {
            let c = count(&text);
            assert_eq!(c.records, records, "{text}");
            assert!(c.holds.starts_with(holds), "{text}: {}", c.holds);
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::default();
        let arr = format!("[{rec}, {rec}]\n");
        let r = Reader { name: "q.jsonl", tasks: true };
        assert!(r.jsonl(&write(tmp.path(), "a.jsonl", arr.as_bytes()), &mut ledger).is_empty());
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<Value>(rec).unwrap()).unwrap();
        assert!(r.jsonl(&write(tmp.path(), "p.jsonl", pretty.as_bytes()), &mut ledger).is_empty());
        assert!(
            Reader { name: "x.json", tasks: false }
                .json_array(
                    &write(tmp.path(), "o.json", format!(r#"{{"d": [{rec}]}}"#).as_bytes()),
                    &mut ledger
                )
                .is_empty()
        );
        assert_eq!(
            r.json_array(
                &write(tmp.path(), "t.json", format!("{arr}{arr}").as_bytes()),
                &mut ledger
            )
            .len(),
            2
        );
        let rows: Vec<(Option<usize>, Option<usize>)> =
            ledger.defects.iter().map(|d| (d.line, d.affected)).collect();
        assert_eq!(
            rows,
            [(Some(1), Some(2)), (Some(1), Some(1)), (Some(1), Some(0)), (Some(2), Some(2))],
            "{:#?}",
            ledger.defects
        );
        assert!(
            ledger.defects[3].reason.starts_with("the text after the closing `]` (line 2"),
            "{}",
            ledger.defects[3].reason
        );
    }

    #[test]
    fn other_encodings_are_read_and_unreadable_files_are_uncounted() {
        let tmp = tempfile::tempdir().unwrap();
        let text = "[{\"id\": \"a\"}, {\"id\": \"é\"}]";
        let mut le = vec![0xFF, 0xFE];
        text.encode_utf16().for_each(|u| le.extend(u.to_le_bytes()));
        let mut bom8 = vec![0xEF, 0xBB, 0xBF];
        bom8.extend_from_slice(text.as_bytes());
        let r = Reader { name: "f.json", tasks: true };
        let mut ledger = Ledger::default();
        assert_eq!(r.json_array(&write(tmp.path(), "le.json", &le), &mut ledger).len(), 2);
        assert_eq!(r.json_array(&write(tmp.path(), "b8.json", &bom8), &mut ledger).len(), 2);
        assert_eq!(
            ledger.defects.len(),
            1,
            "a UTF-8 byte-order mark needs no row: {:?}",
            ledger.defects
        );
        assert!(
            ledger.defects[0]
                .reason
                .starts_with("the file is UTF-16 LE with a byte-order mark, not UTF-8")
        );
        let mut ledger = Ledger::default();
        assert!(
            r.json_array(&write(tmp.path(), "z.json", b"\x1f\x8b\x08\x00\x00\x00"), &mut ledger)
                .is_empty()
        );
        std::fs::create_dir(tmp.path().join("d.json")).unwrap();
        assert!(r.json_array(&tmp.path().join("d.json"), &mut ledger).is_empty());
        let rows: Vec<(&str, Option<usize>)> =
            ledger.defects.iter().map(|d| (d.action, d.affected)).collect();
        assert_eq!(rows, [("skipped", None), ("skipped", Some(0))]);
        assert!(ledger.defects[1].reason.starts_with("is a directory"));
    }

    #[test]
    fn broken_array_structure_loses_only_what_is_broken() {
        let tmp = tempfile::tempdir().unwrap();
        // missing comma between records 1 and 2, a malformed record 3, a truncated record 4
        let p =
            write(tmp.path(), "b.json", b"[{\"id\": 1}\n{\"id\": 2},\n{\"id\": 3,,},\n{\"id\": 4");
        let mut ledger = Ledger::default();
        let raws = Reader { name: "b.json", tasks: true }.json_array(&p, &mut ledger);
        assert_eq!(
            raws.iter().map(|r| r.value["id"].as_i64().unwrap()).collect::<Vec<_>>(),
            [1, 2]
        );
        let rows: Vec<(Option<usize>, &str, Option<usize>)> =
            ledger.defects.iter().map(|d| (d.record, d.action, d.affected)).collect();
        assert_eq!(
            rows,
            [
                (Some(2), "repaired", Some(0)),
                (Some(3), "skipped", Some(1)),
                (Some(4), "skipped", Some(1))
            ]
        );
        assert!(
            ledger.defects[1].reason.starts_with("not valid JSON")
                && ledger.defects[1].reason.contains("line 3"),
            "{}",
            ledger.defects[1].reason
        );
        assert!(ledger.defects[2].reason.contains("cut off"));
    }
}
