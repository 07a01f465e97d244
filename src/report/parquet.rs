//! Parquet exporters for pandas, polars and DuckDB users: `trials.parquet` (one row per trial, the
//! columns of `trials.csv` with real types, streamed in row groups of 65 536) and `summary.parquet` (one
//! row per cell, the declared columns of `summary.csv`, [`crate::analysis::columns::SUMMARY`]; every
//! undefined value, interval bounds included, is a null). Written with polars' Parquet
//! writer, zstd-compressed; the file holds no timestamps, so the same trials give the same bytes.

use super::{Exporter, ReportData};
use crate::analysis::columns::{ColumnType, SUMMARY, Value};
use anyhow::Result;
use polars::prelude::*;
use polars_io::parquet::write::{ParquetCompression, ParquetWriter};

fn write(mut df: DataFrame) -> Result<Vec<u8>> {
    let mut buf = std::io::Cursor::new(Vec::new());
    ParquetWriter::new(&mut buf).with_compression(ParquetCompression::Zstd(None)).finish(&mut df)?;
    Ok(buf.into_inner())
}

/// NaN (undefined) as null.
fn defined(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

/// Rows per Parquet row group (and per batch held in memory while streaming).
const ROW_GROUP: usize = 65_536;

/// `trials.parquet`, written in row groups as the trials stream past (each row group's columns are
/// filled straight from the trials, nothing else of a trial is kept).
pub struct TrialsParquet {
    writer: Option<polars_io::parquet::write::BatchedWriter<std::io::BufWriter<std::fs::File>>>,
    file: Option<std::io::BufWriter<std::fs::File>>,
    columns: Columns,
}

/// The columns of `trials.csv`, typed: 14 strings, 8 counts, 4 flags and the optional ones, in the
/// order [`Columns::take`] names them.
#[derive(Default)]
struct Columns {
    s: [Strings; 14],
    u: [Vec<u64>; 8],
    b: [Vec<bool>; 4],
    attack_success: Vec<Option<bool>>,
    error_type: Vec<Option<&'static str>>,
    selection_f1: Vec<Option<f64>>,
    cost_usd: Vec<Option<f64>>,
    infra_error: Vec<Option<String>>,
    /// The judge's verdict and its own tokens and cost (nulls for a trial not judged).
    judge_method: Vec<Option<&'static str>>,
    judge_score: Vec<Option<f64>>,
    judge_done: Vec<Option<bool>>,
    judge_error: Vec<Option<String>>,
    judge_prompt_tokens: Vec<Option<u64>>,
    judge_completion_tokens: Vec<Option<u64>>,
    judge_cost_usd: Vec<Option<f64>>,
}

/// A text column of a row group: its values end to end in one buffer (one allocation per row group,
/// not per value: the writer thread streams a million trials through these).
#[derive(Default)]
struct Strings {
    bytes: String,
    ends: Vec<usize>,
}

impl Strings {
    fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.end();
    }

    /// The pieces joined by `sep`, as one value.
    fn push_joined<'a>(&mut self, pieces: impl IntoIterator<Item = &'a str>, sep: &str) {
        for (i, p) in pieces.into_iter().enumerate() {
            if i > 0 {
                self.bytes.push_str(sep);
            }
            self.bytes.push_str(p);
        }
        self.end();
    }

    fn end(&mut self) {
        self.ends.push(self.bytes.len());
    }

    fn column(&self, name: &str) -> Column {
        let mut start = 0;
        let values: Vec<&str> = self
            .ends
            .iter()
            .map(|&end| {
                let v = &self.bytes[start..end];
                start = end;
                v
            })
            .collect();
        Column::new(name.into(), values)
    }
}

impl Columns {
    fn push(&mut self, t: &crate::record::Trial) {
        let [trial_id, dataset, catalog, variant, layout, backend, task_id, kind, category, tags, error_detail, stop_reason, tools_called, query] = &mut self.s;
        trial_id.push(&t.trial_id);
        dataset.push(&t.dataset);
        catalog.push(&t.catalog);
        variant.push(&t.variant);
        layout.push(t.layout.as_str());
        backend.push(&t.backend);
        task_id.push(&t.task_id);
        kind.push(t.kind.as_str());
        category.push(&t.category);
        tags.push_joined(t.tags.iter().map(String::as_str), ";");
        error_detail.push(&t.score.error_detail);
        stop_reason.push(t.stop_reason.as_str());
        tools_called.push_joined(t.calls.iter().filter_map(|c| c.record.tool_id.as_deref()), ";");
        query.push(&t.query);
        let numbers = [
            t.trial as u64,
            t.steps as u64,
            t.tokens.definitions_upfront as u64,
            t.tokens.tool_context_total as u64,
            t.tokens.peak_context as u64,
            t.usage.prompt_tokens,
            t.usage.completion_tokens,
            t.duplicate_calls as u64,
        ];
        for (col, v) in self.u.iter_mut().zip(numbers) {
            col.push(v);
        }
        for (col, v) in self.b.iter_mut().zip([t.score.pass, t.score.selection_correct, t.score.abstention_correct, t.score.safety_violation]) {
            col.push(v);
        }
        self.attack_success.push(t.score.attack_success);
        self.error_type.push(t.score.error_type.map(|e| e.as_str()));
        self.selection_f1.push(t.score.selection_f1);
        self.cost_usd.push(t.cost_usd);
        self.infra_error.push(t.error.clone());
        let j = t.judgement.as_deref();
        self.judge_method.push(j.map(|j| j.method.as_str()));
        self.judge_score.push(j.and_then(|j| j.score));
        self.judge_done.push(j.and_then(|j| j.done));
        self.judge_error.push(j.and_then(|j| j.error.clone()));
        self.judge_prompt_tokens.push(j.map(|j| j.usage.prompt_tokens));
        self.judge_completion_tokens.push(j.map(|j| j.usage.completion_tokens));
        self.judge_cost_usd.push(j.and_then(|j| j.cost_usd));
    }

    fn len(&self) -> usize {
        self.b[0].len()
    }

    /// The row group as a frame (in the column order of `trials.csv`), emptying the buffers.
    fn take(&mut self) -> Result<DataFrame> {
        let c = std::mem::take(self);
        let height = c.len();
        let [trial_id, dataset, catalog, variant, layout, backend, task_id, kind, category, tags, error_detail, stop_reason, tools_called, query] = &c.s;
        let [trial, steps, tokens_upfront, tokens_total, peak_tokens, prompt_tokens, completion_tokens, duplicate_calls] = c.u;
        let [pass, selection_correct, abstention_correct, safety_violation] = c.b;
        let columns = vec![
            trial_id.column("trial_id"),
            dataset.column("dataset"),
            catalog.column("catalog"),
            variant.column("variant"),
            layout.column("layout"),
            backend.column("backend"),
            task_id.column("task_id"),
            Column::new("trial".into(), trial),
            kind.column("kind"),
            category.column("category"),
            tags.column("tags"),
            Column::new("pass".into(), pass),
            Column::new("selection_correct".into(), selection_correct),
            Column::new("abstention_correct".into(), abstention_correct),
            Column::new("safety_violation".into(), safety_violation),
            Column::new("attack_success".into(), c.attack_success),
            Column::new("error_type".into(), c.error_type),
            error_detail.column("error_detail"),
            Column::new("selection_f1".into(), c.selection_f1),
            Column::new("steps".into(), steps),
            stop_reason.column("stop_reason"),
            Column::new("duplicate_calls".into(), duplicate_calls),
            tools_called.column("tools_called"),
            Column::new("tokens_upfront".into(), tokens_upfront),
            Column::new("tokens_total".into(), tokens_total),
            Column::new("peak_tokens".into(), peak_tokens),
            Column::new("prompt_tokens".into(), prompt_tokens),
            Column::new("completion_tokens".into(), completion_tokens),
            Column::new("cost_usd".into(), c.cost_usd),
            Column::new("infra_error".into(), c.infra_error),
            Column::new("judge_method".into(), c.judge_method),
            Column::new("judge_score".into(), c.judge_score),
            Column::new("judge_done".into(), c.judge_done),
            Column::new("judge_error".into(), c.judge_error),
            Column::new("judge_prompt_tokens".into(), c.judge_prompt_tokens),
            Column::new("judge_completion_tokens".into(), c.judge_completion_tokens),
            Column::new("judge_cost_usd".into(), c.judge_cost_usd),
            query.column("query"),
        ];
        Ok(DataFrame::new(height, columns)?)
    }
}

impl TrialsParquet {
    pub fn create(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::create(path).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        Ok(TrialsParquet { writer: None, file: Some(std::io::BufWriter::with_capacity(1 << 20, file)), columns: Columns::default() })
    }

    fn flush_group(&mut self) -> Result<()> {
        let df = self.columns.take()?;
        if self.writer.is_none() {
            let file = self.file.take().expect("the file is open until the writer exists");
            self.writer = Some(ParquetWriter::new(file).with_compression(ParquetCompression::Zstd(None)).batched(df.schema())?);
        }
        if df.height() > 0 {
            self.writer.as_mut().expect("writer").write_batch(&df)?;
        }
        Ok(())
    }
}

impl super::TrialSink for TrialsParquet {
    fn write(&mut self, t: &crate::record::Trial, _encoded: &[u8]) -> Result<()> {
        self.columns.push(t);
        if self.columns.len() >= ROW_GROUP {
            self.flush_group()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, _data: &ReportData) -> Result<()> {
        if self.columns.len() > 0 || self.writer.is_none() {
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

    /// The declared columns ([`SUMMARY`]) with their types: text as strings, counts as `UInt64`, numbers
    /// as `Float64`, every undefined value a null (the empty fields of `summary.csv`).
    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let cells = &data.analysis.cells;
        let columns: Vec<Column> = SUMMARY
            .iter()
            .map(|col| {
                let values = cells.iter().map(|c| (col.read)(c));
                let name = col.name.as_str().into();
                match col.ty {
                    ColumnType::Text => Column::new(name, values.map(|v| if let Value::Text(s) = v { Some(s) } else { None }).collect::<Vec<Option<String>>>()),
                    ColumnType::Count => Column::new(name, values.map(|v| if let Value::Count(n) = v { Some(n) } else { None }).collect::<Vec<Option<u64>>>()),
                    ColumnType::Number => Column::new(name, values.map(|v| if let Value::Number(x) = v { Some(x) } else { None }).collect::<Vec<Option<f64>>>()),
                }
            })
            .collect();
        write(DataFrame::new(cells.len(), columns)?)
    }
}

/// `tools.parquet`: the rows of `tools.csv` (lint findings, selection, precision, recall and F1 per
/// cell and tool), typed; undefined rates are nulls.
pub struct ToolsParquet;

impl Exporter for ToolsParquet {
    fn file_name(&self) -> &'static str {
        "tools.parquet"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let rows = &data.analysis.tools;
        let text = |f: fn(&crate::analysis::tools::ToolRow) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
        let count = |f: fn(&crate::analysis::tools::ToolRow) -> u64| rows.iter().map(f).collect::<Vec<u64>>();
        let rate = |f: fn(&crate::analysis::tools::ToolRow) -> f64| rows.iter().map(|r| defined(f(r))).collect::<Vec<Option<f64>>>();
        let df = DataFrame::new(rows.len(), vec![
            Column::new("dataset".into(), text(|r| &r.dataset)),
            Column::new("variant".into(), text(|r| &r.variant)),
            Column::new("layout".into(), text(|r| &r.layout)),
            Column::new("backend".into(), text(|r| &r.backend)),
            Column::new("tool".into(), text(|r| &r.tool)),
            Column::new("lint_block".into(), count(|r| r.block)),
            Column::new("lint_warn".into(), count(|r| r.warn)),
            Column::new("lint_info".into(), count(|r| r.info)),
            Column::new("lint_rules".into(), text(|r| &r.rules)),
            Column::new("single_task_trials".into(), count(|r| r.trials)),
            Column::new("selected".into(), count(|r| r.selected)),
            Column::new("selection_accuracy".into(), rate(|r| r.selection())),
            Column::new("true_positives".into(), count(|r| r.counts.tp)),
            Column::new("false_positives".into(), count(|r| r.counts.fp)),
            Column::new("false_negatives".into(), count(|r| r.counts.fn_)),
            Column::new("precision".into(), rate(|r| r.counts.precision().rate)),
            Column::new("precision_low".into(), rate(|r| r.counts.precision().low)),
            Column::new("precision_high".into(), rate(|r| r.counts.precision().high)),
            Column::new("recall".into(), rate(|r| r.counts.recall().rate)),
            Column::new("recall_low".into(), rate(|r| r.counts.recall().low)),
            Column::new("recall_high".into(), rate(|r| r.counts.recall().high)),
            Column::new("f1".into(), rate(|r| r.counts.f1())),
        ])?;
        write(df)
    }
}
