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
//! This file holds the reader, the loading and decoding of a file and JSON Lines; the array scanner is
//! in [`json_array`] and the counting of records in a file of the wrong shape in [`count`].
//!
//! Rows are about task records only when the file holds tasks ([`Reader::tasks`]); for an answer or a
//! tool file a bad record loses no task by itself (the task that needed it is reported where it fails).

mod count;
mod json_array;

use super::decode::{Decoded, Encoding};
use super::{At, Ledger};
use serde_json::Value;
use std::path::Path;

use count::{Count, count, records_in};

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

/// `"s"` for a count other than one.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
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
}

#[cfg(test)]
mod tests;
