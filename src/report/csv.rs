//! CSV exporters, each writing the declared columns of its table ([`crate::analysis::columns`]):
//! `summary.csv` (one row per cell, [`SUMMARY`]) and `trials.csv` (one row per trial, no transcript,
//! [`TRIALS`]); `tools.csv` and `confusion.csv` go through [`table`] too. Rates are fractions in [0, 1]
//! with their 95 % Wilson bounds; numbers have six decimals; a null is an empty field.

use super::{Exporter, ReportData};
use crate::analysis::columns::{Column, SUMMARY, TRIALS, Value};
use anyhow::Result;

/// One declared value as a CSV field: a null empty, a number with six decimals, a flag `true`/`false`.
fn write_value<W: std::io::Write>(w: &mut ::csv::Writer<W>, v: Value<'_>) -> ::csv::Result<()> {
    match v {
        Value::Text(s) => w.write_field(s.as_bytes()),
        Value::Count(n) => w.write_field(itoa::Buffer::new().format(n)),
        Value::Number(x) => w.write_field(super::fixed_or_empty(x, 6)),
        Value::Flag(b) => w.write_field(if b { "true" } else { "false" }),
        Value::Null => w.write_field(""),
    }
}

/// A whole table: the header of `columns`, then one record per row.
pub(super) fn table<'r, R: 'r, C>(
    columns: &[Column<R, C>],
    rows: impl IntoIterator<Item = &'r R>,
    context: &C,
) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(columns.iter().map(|col| col.name.as_str()))?;
    for row in rows {
        for col in columns {
            write_value(&mut w, (col.read)(row, context))?;
        }
        w.write_record(None::<&[u8]>)?;
    }
    Ok(w.into_inner()?)
}

pub struct SummaryCsv;

impl Exporter for SummaryCsv {
    fn file_name(&self) -> &'static str {
        "summary.csv"
    }

    /// The declared columns ([`SUMMARY`]), one row per cell.
    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        table(&SUMMARY, &data.analysis.cells, &())
    }
}

/// `trials.csv`, written row by row as the trials stream past.
pub struct TrialsCsv {
    w: std::io::BufWriter<std::fs::File>,
}

impl TrialsCsv {
    pub fn create(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::create(path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        let mut w = ::csv::Writer::from_writer(std::io::BufWriter::with_capacity(1 << 20, file));
        w.write_record(TRIALS.iter().map(|col| col.name.as_str()))?;
        let w = w
            .into_inner()
            .map_err(|e| anyhow::anyhow!("cannot write {}: {}", path.display(), e.error()))?;
        Ok(TrialsCsv { w })
    }
}

impl super::TrialSink for TrialsCsv {
    fn encoder(&self) -> super::Encoder {
        encode_row
    }

    fn write(&mut self, _t: &crate::record::Trial, encoded: &[u8]) -> Result<()> {
        use std::io::Write as _;
        self.w.write_all(encoded)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        use std::io::Write as _;
        self.w.flush()?;
        Ok(())
    }
}

/// One `trials.csv` row: the declared columns ([`TRIALS`]) of the trial, field by field (text borrowed
/// from the record: it runs for every trial of a report). Written straight into one buffer, quoted
/// as the `csv` crate's writer quotes (a writer per row cost more than the row's values).
fn encode_row(t: &crate::record::Trial) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(512);
    for (i, col) in TRIALS.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match (col.read)(t, &()) {
            Value::Text(s) => push_field(&mut out, s.as_bytes()),
            Value::Count(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            // Digits, a sign and a point, or `inf`: nothing a CSV field quotes (NaN, empty).
            Value::Number(x) => out.extend_from_slice(super::fixed_or_empty(x, 6).as_bytes()),
            Value::Flag(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Value::Null => {}
        }
    }
    out.push(b'\n');
    Ok(out)
}

/// One field as the `csv` crate writes it by default (`QuoteStyle::Necessary`, `\n` records):
/// quoted, with its quotes doubled, when it holds a comma, a quote, `\r` or `\n`.
fn push_field(out: &mut Vec<u8>, field: &[u8]) {
    if !field.iter().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n')) {
        out.extend_from_slice(field);
        return;
    }
    out.push(b'"');
    for &b in field {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_written_as_the_csv_crate_writes_it() {
        let fields = [
            "",
            "plain",
            "a,b",
            "say \"hi\"",
            "\"",
            "line\nbreak",
            "cr\rhere",
            " spaced ",
            "#hash",
            "é ✓ 只",
            "tab\there",
            "'single'",
            "\r\n",
            ",",
            "\"\"",
            "trailing,",
        ];
        for f in fields {
            let mut ours = Vec::new();
            push_field(&mut ours, f.as_bytes());
            ours.extend_from_slice(b",x\n");
            let mut w = ::csv::Writer::from_writer(Vec::new());
            w.write_record([f, "x"]).unwrap();
            let theirs = w.into_inner().unwrap();
            let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
            assert_eq!(text(ours), text(theirs), "{f:?}");
        }
    }
}
