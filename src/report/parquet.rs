//! Parquet exporters for pandas, polars and DuckDB users, each writing the declared columns of its
//! table ([`crate::analysis::columns`]) with real types — text `String`, counts `UInt64`, numbers
//! `Float64`, flags `Boolean` — and every undefined value (interval bounds included) a null, where the
//! CSV twin has an empty field: `trials.parquet` ([`TRIALS`], streamed in row groups of 65 536),
//! `summary.parquet` ([`SUMMARY`]) and `tools.parquet` ([`TOOLS`]).
//!
//! Written with the Apache `parquet` crate's column writers (no Arrow, no data frame: the values are
//! typed by the declarations already), zstd-compressed; the file holds no timestamps, so the same
//! trials give the same bytes. The tests read the files back with polars, an implementation apart.

use super::{Exporter, ReportData};
use crate::analysis::columns::{Column as Declared, ColumnType, SUMMARY, TOOLS, TRIALS, Value};
use anyhow::{Context, Result};
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::sync::Arc;

/// Rows per Parquet row group (and per batch held in memory while streaming).
const ROW_GROUP: usize = 65_536;

/// One column's values while a row group is filled, typed by its declaration: the values present,
/// and a definition level per row (1 a value, 0 a null). Text is kept end to end in one buffer (one
/// allocation per row group, not per value: a million trials stream through these).
struct Values {
    data: Data,
    defined: Vec<i16>,
}

enum Data {
    Text { bytes: Vec<u8>, ends: Vec<usize> },
    Count(Vec<i64>),
    Number(Vec<f64>),
    Flag(Vec<bool>),
}

impl Values {
    fn new(ty: ColumnType) -> Values {
        let data = match ty {
            ColumnType::Text => Data::Text { bytes: Vec::new(), ends: Vec::new() },
            ColumnType::Count => Data::Count(Vec::new()),
            ColumnType::Number => Data::Number(Vec::new()),
            ColumnType::Flag => Data::Flag(Vec::new()),
        };
        Values { data, defined: Vec::new() }
    }

    /// Append a value; a null (or a value of another type than declared, which the declarations'
    /// tests rule out) is a null.
    fn push(&mut self, v: Value<'_>) {
        let defined = match (&mut self.data, v) {
            (Data::Text { bytes, ends }, Value::Text(s)) => {
                bytes.extend_from_slice(s.as_bytes());
                ends.push(bytes.len());
                true
            }
            // Stored as Parquet's INT64 annotated unsigned: the bits of the u64, as the format says.
            (Data::Count(c), Value::Count(n)) => {
                c.push(n as i64);
                true
            }
            (Data::Number(c), Value::Number(x)) => {
                c.push(x);
                true
            }
            (Data::Flag(c), Value::Flag(b)) => {
                c.push(b);
                true
            }
            _ => false,
        };
        self.defined.push(i16::from(defined));
    }

    fn len(&self) -> usize {
        self.defined.len()
    }

    /// The column's schema entry: optional, typed as declared.
    fn schema(&self, name: &str) -> Result<Arc<Type>> {
        let (physical, logical) = match self.data {
            Data::Text { .. } => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            Data::Count(_) => (Physical::INT64, Some(LogicalType::integer(64, false))),
            Data::Number(_) => (Physical::DOUBLE, None),
            Data::Flag(_) => (Physical::BOOLEAN, None),
        };
        let column = Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()?;
        Ok(Arc::new(column))
    }

    /// Write the values as the row group's next column, emptying the buffers.
    fn write(
        &mut self,
        column: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    ) -> Result<()> {
        let defined = Some(&self.defined[..]);
        match &mut self.data {
            Data::Text { bytes, ends } => {
                // One shared buffer, sliced per value (no copy per value).
                let shared = bytes::Bytes::from(std::mem::take(bytes));
                let mut start = 0;
                let values: Vec<ByteArray> = ends
                    .iter()
                    .map(|&end| {
                        let v = ByteArray::from(shared.slice(start..end));
                        start = end;
                        v
                    })
                    .collect();
                column.typed::<ByteArrayType>().write_batch(&values, defined, None)?;
                ends.clear();
            }
            Data::Count(c) => {
                column.typed::<Int64Type>().write_batch(c, defined, None)?;
                c.clear();
            }
            Data::Number(c) => {
                column.typed::<DoubleType>().write_batch(c, defined, None)?;
                c.clear();
            }
            Data::Flag(c) => {
                column.typed::<BoolType>().write_batch(c, defined, None)?;
                c.clear();
            }
        }
        self.defined.clear();
        Ok(())
    }
}

/// A table being filled row by row with the declared `columns`, written a row group at a time.
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

    /// A file writer of these columns' schema on `out`.
    fn writer<W: std::io::Write + Send, R, C>(
        &self,
        columns: &[Declared<R, C>],
        out: W,
    ) -> Result<SerializedFileWriter<W>> {
        let fields = self
            .values
            .iter()
            .zip(columns)
            .map(|(v, c)| v.schema(&c.name))
            .collect::<Result<_>>()?;
        let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build()?);
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        Ok(SerializedFileWriter::new(out, schema, Arc::new(properties))?)
    }

    /// The rows so far as the file's next row group, emptying the buffers.
    fn write_group<W: std::io::Write + Send>(
        &mut self,
        writer: &mut SerializedFileWriter<W>,
    ) -> Result<()> {
        let mut group = writer.next_row_group()?;
        let mut values = self.values.iter_mut();
        while let Some(mut column) = group.next_column()? {
            values.next().context("a Parquet column without values")?.write(&mut column)?;
            column.close()?;
        }
        group.close()?;
        Ok(())
    }
}

/// A whole table as the bytes of one Parquet file (one row group).
fn table<'r, R: 'r, C>(
    columns: &[Declared<R, C>],
    rows: impl IntoIterator<Item = &'r R>,
    context: &C,
) -> Result<Vec<u8>> {
    let mut frame = Frame::new(columns);
    for row in rows {
        frame.push(columns, row, context);
    }
    let mut writer = frame.writer(columns, Vec::new())?;
    frame.write_group(&mut writer)?;
    Ok(writer.into_inner()?)
}

/// `trials.parquet`, written in row groups as the trials stream past (each row group's columns are
/// filled straight from the trials, nothing else of a trial is kept).
pub struct TrialsParquet {
    writer: SerializedFileWriter<std::io::BufWriter<std::fs::File>>,
    frame: Frame,
}

impl TrialsParquet {
    pub fn create(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::create(path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        let frame = Frame::new(&TRIALS);
        let writer = frame.writer(&TRIALS, std::io::BufWriter::with_capacity(1 << 20, file))?;
        Ok(TrialsParquet { writer, frame })
    }
}

impl super::TrialSink for TrialsParquet {
    fn write(&mut self, t: &crate::record::Trial, _encoded: &[u8]) -> Result<()> {
        self.frame.push(&TRIALS, t, &());
        if self.frame.len() >= ROW_GROUP {
            self.frame.write_group(&mut self.writer)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        if self.frame.len() > 0 {
            self.frame.write_group(&mut self.writer)?;
        }
        use std::io::Write;
        self.writer.into_inner()?.flush()?;
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
        table(&SUMMARY, &data.analysis.cells, &())
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
        table(&TOOLS, &data.analysis.tools, &())
    }
}
