//! Parquet exporters for pandas, polars and DuckDB users, each writing the declared columns of its
//! table ([`crate::analysis::columns`]) with real types — text `String`, counts `UInt64`, numbers
//! `Float64`, flags `Boolean` — and every undefined value (interval bounds included) a null, where the
//! CSV twin has an empty field: `trials.parquet` ([`TRIALS`], streamed in row groups of 65 536),
//! `summary.parquet` ([`SUMMARY`]) and `tools.parquet` ([`TOOLS`]). Written with polars' Parquet
//! writer, zstd-compressed; the file holds no timestamps, so the same trials give the same bytes.

use super::{Exporter, ReportData};
use crate::analysis::columns::{Column as Declared, ColumnType, SUMMARY, TOOLS, TRIALS, Value};
use anyhow::Result;
use polars::prelude::*;
use polars_io::parquet::write::{ParquetCompression, ParquetWriter};

fn write(mut df: DataFrame) -> Result<Vec<u8>> {
    let mut buf = std::io::Cursor::new(Vec::new());
    ParquetWriter::new(&mut buf)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(&mut df)?;
    Ok(buf.into_inner())
}

/// Rows per Parquet row group (and per batch held in memory while streaming).
const ROW_GROUP: usize = 65_536;

/// One column's values while a frame is filled, typed by its declaration. Text is kept end to end in
/// one buffer (one allocation per row group, not per value: a million trials stream through these).
enum Values {
    Text { bytes: String, ends: Vec<usize>, valid: Vec<bool> },
    Count(Vec<Option<u64>>),
    Number(Vec<Option<f64>>),
    Flag(Vec<Option<bool>>),
}

impl Values {
    fn new(ty: ColumnType) -> Values {
        match ty {
            ColumnType::Text => {
                Values::Text { bytes: String::new(), ends: Vec::new(), valid: Vec::new() }
            }
            ColumnType::Count => Values::Count(Vec::new()),
            ColumnType::Number => Values::Number(Vec::new()),
            ColumnType::Flag => Values::Flag(Vec::new()),
        }
    }

    /// Append a value; a null (or a value of another type than declared, which the declarations'
    /// tests rule out) is a null.
    fn push(&mut self, v: Value<'_>) {
        match (self, v) {
            (Values::Text { bytes, ends, valid }, v) => {
                if let Value::Text(s) = &v {
                    bytes.push_str(s);
                }
                ends.push(bytes.len());
                valid.push(matches!(v, Value::Text(_)));
            }
            (Values::Count(c), v) => c.push(if let Value::Count(n) = v { Some(n) } else { None }),
            (Values::Number(c), v) => c.push(if let Value::Number(x) = v { Some(x) } else { None }),
            (Values::Flag(c), v) => c.push(if let Value::Flag(b) = v { Some(b) } else { None }),
        }
    }

    fn len(&self) -> usize {
        match self {
            Values::Text { ends, .. } => ends.len(),
            Values::Count(c) => c.len(),
            Values::Number(c) => c.len(),
            Values::Flag(c) => c.len(),
        }
    }

    /// The values as a polars column named `name`, emptying the buffers.
    fn take(&mut self, name: &str) -> Column {
        let name = name.into();
        match self {
            Values::Text { bytes, ends, valid } => {
                let mut start = 0;
                let values: Vec<Option<&str>> = ends
                    .iter()
                    .zip(valid.iter())
                    .map(|(&end, &ok)| {
                        let v = &bytes[start..end];
                        start = end;
                        ok.then_some(v)
                    })
                    .collect();
                let column = Column::new(name, values);
                bytes.clear();
                ends.clear();
                valid.clear();
                column
            }
            Values::Count(c) => Column::new(name, std::mem::take(c)),
            Values::Number(c) => Column::new(name, std::mem::take(c)),
            Values::Flag(c) => Column::new(name, std::mem::take(c)),
        }
    }
}

/// A frame being filled row by row with the declared `columns`.
struct Frame {
    values: Vec<Values>,
}

impl Frame {
    fn new<R, C>(columns: &[Declared<R, C>]) -> Frame {
        Frame { values: columns.iter().map(|c| Values::new(c.ty)).collect() }
    }

    fn push<R, C>(&mut self, columns: &[Declared<R, C>], row: &R, context: &C) {
        for (values, col) in self.values.iter_mut().zip(columns) {
            values.push((col.read)(row, context));
        }
    }

    fn len(&self) -> usize {
        self.values.first().map_or(0, Values::len)
    }

    /// The rows so far as a frame, emptying the buffers.
    fn take<R, C>(&mut self, columns: &[Declared<R, C>]) -> Result<DataFrame> {
        let height = self.len();
        let cols = self.values.iter_mut().zip(columns).map(|(v, col)| v.take(&col.name)).collect();
        Ok(DataFrame::new(height, cols)?)
    }
}

/// A whole table as one frame.
fn table<'r, R: 'r, C>(
    columns: &[Declared<R, C>],
    rows: impl IntoIterator<Item = &'r R>,
    context: &C,
) -> Result<DataFrame> {
    let mut frame = Frame::new(columns);
    for row in rows {
        frame.push(columns, row, context);
    }
    frame.take(columns)
}

/// `trials.parquet`, written in row groups as the trials stream past (each row group's columns are
/// filled straight from the trials, nothing else of a trial is kept).
pub struct TrialsParquet {
    writer: Option<polars_io::parquet::write::BatchedWriter<std::io::BufWriter<std::fs::File>>>,
    file: Option<std::io::BufWriter<std::fs::File>>,
    frame: Frame,
}

impl TrialsParquet {
    pub fn create(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::create(path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        Ok(TrialsParquet {
            writer: None,
            file: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
            frame: Frame::new(&TRIALS),
        })
    }

    fn flush_group(&mut self) -> Result<()> {
        let df = self.frame.take(&TRIALS)?;
        if self.writer.is_none() {
            let file = self.file.take().expect("the file is open until the writer exists");
            self.writer = Some(
                ParquetWriter::new(file)
                    .with_compression(ParquetCompression::Zstd(None))
                    .batched(df.schema())?,
            );
        }
        if df.height() > 0 {
            self.writer.as_mut().expect("writer").write_batch(&df)?;
        }
        Ok(())
    }
}

impl super::TrialSink for TrialsParquet {
    fn write(&mut self, t: &crate::record::Trial, _encoded: &[u8]) -> Result<()> {
        self.frame.push(&TRIALS, t, &());
        if self.frame.len() >= ROW_GROUP {
            self.flush_group()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, _data: &ReportData) -> Result<()> {
        if self.frame.len() > 0 || self.writer.is_none() {
            self.flush_group()?;
        }
        self.writer.as_mut().expect("writer").finish()?;
        Ok(())
    }
}

pub struct SummaryParquet;

impl Exporter for SummaryParquet {
    fn file_name(&self) -> &'static str {
        "summary.parquet"
    }

    /// The declared columns ([`SUMMARY`]), one row per cell.
    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        write(table(&SUMMARY, &data.analysis.cells, &())?)
    }
}

/// `tools.parquet`: the rows of `tools.csv` (lint findings, selection, precision, recall and F1 per
/// cell and tool) in the declared columns ([`TOOLS`]).
pub struct ToolsParquet;

impl Exporter for ToolsParquet {
    fn file_name(&self) -> &'static str {
        "tools.parquet"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        write(table(&TOOLS, &data.analysis.tools, &())?)
    }
}
