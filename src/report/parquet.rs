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

/// One rate of a cell.
type RateOf = fn(&crate::analysis::cells::CellSummary) -> crate::score::stats::Rate;

pub struct SummaryParquet;

impl Exporter for SummaryParquet {
    fn file_name(&self) -> &'static str {
        "summary.parquet"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let c = &data.analysis.cells;
        let s = |f: fn(&crate::analysis::cells::CellSummary) -> &String| c.iter().map(|x| f(x).clone()).collect::<Vec<String>>();
        let f = |g: fn(&crate::analysis::cells::CellSummary) -> f64| c.iter().map(|x| defined(g(x))).collect::<Vec<Option<f64>>>();
        let o = |g: fn(&crate::analysis::cells::CellSummary) -> Option<f64>| c.iter().map(g).collect::<Vec<Option<f64>>>();
        let mut columns: Vec<Column> = vec![
            Column::new("dataset".into(), s(|x| &x.dataset)),
            Column::new("catalog".into(), s(|x| &x.catalog)),
            Column::new("variant".into(), s(|x| &x.variant)),
            Column::new("layout".into(), s(|x| &x.layout)),
            Column::new("backend".into(), s(|x| &x.backend)),
            Column::new("n".into(), c.iter().map(|x| x.n).collect::<Vec<u64>>()),
            Column::new("n_call".into(), c.iter().map(|x| x.pass.n).collect::<Vec<u64>>()),
        ];
        let rates: [(&str, RateOf); 12] = [
            ("selection_accuracy", |x| x.selection),
            ("pass_at_1", |x| x.pass),
            ("abstention_accuracy", |x| x.abstention),
            ("safety_violation_rate", |x| x.safety_violation),
            ("attack_success_rate", |x| x.attack_success),
            ("refused_rate", |x| x.refused),
            ("no_harm_rate", |x| x.no_harm),
            ("false_refusal_rate", |x| x.false_refusal),
            ("gold_revealed_rate", |x| x.gold_revealed),
            ("server_recall", |x| x.server_recall),
            ("category_recall", |x| x.category_recall),
            ("abandonment_rate", |x| x.abandonment),
        ];
        // A rate over no trial is undefined, and so are its bounds: nulls, not [0, 1].
        let rate_columns = |name: &str, of: &dyn Fn(&crate::analysis::cells::CellSummary) -> crate::score::stats::Rate| {
            let part = |p: fn(&crate::score::stats::Rate) -> f64| c.iter().map(|x| Some(of(x)).filter(|r| r.n > 0).and_then(|r| defined(p(&r)))).collect::<Vec<_>>();
            [Column::new(name.into(), part(|r| r.rate)), Column::new(format!("{name}_low").into(), part(|r| r.low)), Column::new(format!("{name}_high").into(), part(|r| r.high))]
        };
        for (name, get) in rates {
            columns.extend(rate_columns(name, &get));
        }
        for (i, k) in crate::dataset::Kind::ALL.iter().enumerate() {
            columns.push(Column::new(format!("n_{}", k.as_str()).into(), c.iter().map(|x| x.kinds[i].pass.n).collect::<Vec<u64>>()));
            columns.extend(rate_columns(&format!("selection_accuracy_{}", k.as_str()), &|x| x.kinds[i].selection));
            columns.extend(rate_columns(&format!("pass_at_1_{}", k.as_str()), &|x| x.kinds[i].pass));
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
            Column::new("mean_endpoint_prompt_tokens".into(), f(|x| x.mean_endpoint_prompt_tokens)),
            Column::new("mean_endpoint_completion_tokens".into(), f(|x| x.mean_endpoint_completion_tokens)),
            Column::new("mean_endpoint_cached_tokens".into(), f(|x| x.mean_endpoint_cached_tokens)),
            Column::new("mean_peak_tokens".into(), f(|x| x.mean_peak_tokens)),
            Column::new("mean_duplicate_calls".into(), f(|x| x.mean_duplicate_calls)),
            Column::new("infra_errors".into(), c.iter().map(|x| x.infra_errors).collect::<Vec<u64>>()),
            Column::new("cost_usd".into(), f(|x| x.cost_usd)),
            Column::new("trials_per_task".into(), c.iter().map(|x| x.trials_per_task).collect::<Vec<u64>>()),
            Column::new("pass_at_k".into(), o(|x| x.pass_at_k)),
            Column::new("pass_hat_k".into(), o(|x| x.pass_hat_k)),
            Column::new("flip_rate".into(), o(|x| x.noise.map(|n| n.flip_rate))),
            Column::new("noise_95".into(), o(|x| x.noise.map(|n| n.noise_95))),
            Column::new("min_detectable_diff".into(), o(|x| x.noise.map(|n| n.min_detectable))),
        ]);
        // The judge's figures (nulls for a cell, or a run, not judged).
        type JudgedOf = fn(&crate::analysis::judged::JudgeCell) -> Option<f64>;
        let judged: [(&str, JudgedOf); 12] = [
            ("judged_n", |j| Some(j.judged as f64)),
            ("judge_errors", |j| Some(j.errors as f64)),
            ("sopr", |j| j.sopr.as_ref().map(|m| m.mean)),
            ("sopr_low", |j| j.sopr.as_ref().map(|m| m.low)),
            ("sopr_high", |j| j.sopr.as_ref().map(|m| m.high)),
            ("sopr_round_std", |j| j.sopr.as_ref().and_then(|m| m.round_std)),
            ("claim_coverage", |j| j.coverage.as_ref().map(|m| m.mean)),
            ("claim_coverage_low", |j| j.coverage.as_ref().map(|m| m.low)),
            ("claim_coverage_high", |j| j.coverage.as_ref().map(|m| m.high)),
            ("judged_done_rate", |j| defined(j.done.rate)),
            ("judge_prompt_tokens", |j| Some(j.prompt_tokens as f64)),
            ("judge_cost_usd", |j| Some(j.cost_usd)),
        ];
        for (name, get) in judged {
            columns.push(Column::new(name.into(), c.iter().map(|x| x.judge.as_ref().and_then(get)).collect::<Vec<Option<f64>>>()));
        }
        write(DataFrame::new(c.len(), columns)?)
    }
}

/// `tools.parquet`: the rows of `tools.csv` (lint findings, selection, precision, recall and F1 per
/// dataset, variant and tool), typed; undefined rates are nulls.
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
