//! Parquet exporters for pandas, polars and DuckDB users: `trials.parquet` (one row per trial, the
//! columns of `trials.csv` with real types, streamed in row groups of 65 536) and `summary.parquet` (one
//! row per cell, the columns of `summary.csv`; undefined rates are nulls). Written with polars' Parquet
//! writer, zstd-compressed; the file holds no timestamps, so the same trials give the same bytes.

use super::{Exporter, ReportData};
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

/// `trials.parquet`, written in row groups as the trials stream past.
pub struct TrialsParquet {
    writer: Option<polars_io::parquet::write::BatchedWriter<std::io::BufWriter<std::fs::File>>>,
    file: Option<std::io::BufWriter<std::fs::File>>,
    batch: Vec<crate::run::Trial>,
}

impl TrialsParquet {
    pub fn create(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::create(path).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        Ok(TrialsParquet { writer: None, file: Some(std::io::BufWriter::with_capacity(1 << 20, file)), batch: Vec::new() })
    }

    fn flush_batch(&mut self) -> Result<()> {
        let df = frame(&self.batch)?;
        self.batch.clear();
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
    fn trial(&mut self, t: &crate::run::Trial) -> Result<()> {
        // Only the fields the columns use are kept (no calls or transcript).
        let mut light = t.clone();
        light.transcript = Vec::new();
        light.expected = Vec::new();
        light.calls.retain(|c| c.record.tool_id.is_some());
        self.batch.push(light);
        if self.batch.len() >= ROW_GROUP {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, _data: &ReportData) -> Result<()> {
        if !self.batch.is_empty() || self.writer.is_none() {
            self.flush_batch()?;
        }
        self.writer.as_mut().expect("writer").finish()?;
        Ok(())
    }
}

/// The trials' columns (the columns of `trials.csv`, typed).
fn frame(t: &[crate::run::Trial]) -> Result<DataFrame> {
    let s = |f: fn(&crate::run::Trial) -> String| t.iter().map(f).collect::<Vec<String>>();
    let b = |f: fn(&crate::run::Trial) -> bool| t.iter().map(f).collect::<Vec<bool>>();
    let u = |f: fn(&crate::run::Trial) -> u64| t.iter().map(f).collect::<Vec<u64>>();
    Ok(df!(
        "trial_id" => s(|t| t.trial_id.clone()),
        "dataset" => s(|t| t.dataset.clone()),
        "catalog" => s(|t| t.catalog.clone()),
        "variant" => s(|t| t.variant.clone()),
        "layout" => s(|t| t.layout.as_str().to_string()),
        "backend" => s(|t| t.backend.clone()),
        "task_id" => s(|t| t.task_id.clone()),
        "trial" => u(|t| t.trial as u64),
        "kind" => s(|t| t.kind.as_str().to_string()),
        "category" => s(|t| t.category.clone()),
        "tags" => s(|t| t.tags.join(";")),
        "pass" => b(|t| t.score.pass),
        "selection_correct" => b(|t| t.score.selection_correct),
        "abstention_correct" => b(|t| t.score.abstention_correct),
        "safety_violation" => b(|t| t.score.safety_violation),
        "attack_success" => t.iter().map(|t| t.score.attack_success).collect::<Vec<Option<bool>>>(),
        "error_type" => t.iter().map(|t| t.score.error_type.map(|e| e.as_str().to_string())).collect::<Vec<Option<String>>>(),
        "error_detail" => s(|t| t.score.error_detail.clone()),
        "selection_f1" => t.iter().map(|t| t.score.selection_f1).collect::<Vec<Option<f64>>>(),
        "steps" => u(|t| t.steps as u64),
        "stop_reason" => s(|t| serde_json::to_value(t.stop_reason).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()),
        "tools_called" => s(|t| t.calls.iter().filter_map(|c| c.record.tool_id.as_deref()).collect::<Vec<_>>().join(";")),
        "tokens_upfront" => u(|t| t.tokens.definitions_upfront as u64),
        "tokens_total" => u(|t| t.tokens.tool_context_total as u64),
        "peak_tokens" => u(|t| t.tokens.peak_context as u64),
        "prompt_tokens" => u(|t| t.usage.prompt_tokens),
        "completion_tokens" => u(|t| t.usage.completion_tokens),
        "cost_usd" => t.iter().map(|t| t.cost_usd).collect::<Vec<Option<f64>>>(),
        "infra_error" => t.iter().map(|t| t.error.clone()).collect::<Vec<Option<String>>>(),
        "query" => s(|t| t.query.clone()),
    )?)
}

/// One rate of a cell.
type RateOf = fn(&super::CellSummary) -> crate::score::stats::Rate;

pub struct SummaryParquet;

impl Exporter for SummaryParquet {
    fn file_name(&self) -> &'static str {
        "summary.parquet"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let c = &data.cells;
        let s = |f: fn(&super::CellSummary) -> &String| c.iter().map(|x| f(x).clone()).collect::<Vec<String>>();
        let f = |g: fn(&super::CellSummary) -> f64| c.iter().map(|x| defined(g(x))).collect::<Vec<Option<f64>>>();
        let o = |g: fn(&super::CellSummary) -> Option<f64>| c.iter().map(g).collect::<Vec<Option<f64>>>();
        let mut columns: Vec<Column> = vec![
            Column::new("dataset".into(), s(|x| &x.dataset)),
            Column::new("catalog".into(), s(|x| &x.catalog)),
            Column::new("variant".into(), s(|x| &x.variant)),
            Column::new("layout".into(), s(|x| &x.layout)),
            Column::new("backend".into(), s(|x| &x.backend)),
            Column::new("n".into(), c.iter().map(|x| x.n).collect::<Vec<u64>>()),
        ];
        let rates: [(&str, RateOf); 11] = [
            ("selection_accuracy", |x| x.selection),
            ("pass_at_1", |x| x.pass),
            ("abstention_accuracy", |x| x.abstention),
            ("safety_violation_rate", |x| x.safety_violation),
            ("attack_success_rate", |x| x.attack_success),
            ("refusal_rate", |x| x.refusal),
            ("false_refusal_rate", |x| x.false_refusal),
            ("gold_revealed_rate", |x| x.gold_revealed),
            ("server_recall", |x| x.server_recall),
            ("category_recall", |x| x.category_recall),
            ("abandonment_rate", |x| x.abandonment),
        ];
        for (name, get) in rates {
            columns.push(Column::new(name.into(), c.iter().map(|x| defined(get(x).rate)).collect::<Vec<_>>()));
            columns.push(Column::new(format!("{name}_low").into(), c.iter().map(|x| defined(get(x).low)).collect::<Vec<_>>()));
            columns.push(Column::new(format!("{name}_high").into(), c.iter().map(|x| defined(get(x).high)).collect::<Vec<_>>()));
        }
        columns.extend([
            Column::new("mean_selection_f1".into(), f(|x| x.mean_selection_f1)),
            Column::new("mean_steps".into(), f(|x| x.mean_steps)),
            Column::new("mean_steps_low".into(), f(|x| x.mean_steps_ci.0)),
            Column::new("mean_steps_high".into(), f(|x| x.mean_steps_ci.1)),
            Column::new("mean_tokens_upfront".into(), f(|x| x.mean_tokens_upfront)),
            Column::new("mean_tokens_total".into(), f(|x| x.mean_tokens_total)),
            Column::new("mean_tokens_total_low".into(), f(|x| x.mean_tokens_total_ci.0)),
            Column::new("mean_tokens_total_high".into(), f(|x| x.mean_tokens_total_ci.1)),
            Column::new("mean_peak_tokens".into(), f(|x| x.mean_peak_tokens)),
            Column::new("infra_errors".into(), c.iter().map(|x| x.infra_errors).collect::<Vec<u64>>()),
            Column::new("cost_usd".into(), f(|x| x.cost_usd)),
            Column::new("trials_per_task".into(), c.iter().map(|x| x.trials_per_task).collect::<Vec<u64>>()),
            Column::new("pass_at_k".into(), o(|x| x.pass_at_k)),
            Column::new("pass_hat_k".into(), o(|x| x.pass_hat_k)),
            Column::new("flip_rate".into(), o(|x| x.noise.map(|n| n.flip_rate))),
            Column::new("noise_95".into(), o(|x| x.noise.map(|n| n.noise_95))),
            Column::new("min_detectable_diff".into(), o(|x| x.noise.map(|n| n.min_detectable))),
        ]);
        write(DataFrame::new(c.len(), columns)?)
    }
}
