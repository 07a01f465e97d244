//! CSV exporters: `summary.csv` (one row per cell, the declared columns of
//! [`crate::analysis::columns::SUMMARY`]) and `trials.csv` (one row per trial, no transcript). Rates are
//! fractions in [0, 1] with their 95 % Wilson bounds; undefined values are written empty.

use super::{Exporter, ReportData};
use crate::analysis::columns::{SUMMARY, Value};
use anyhow::Result;

fn num(x: f64) -> String {
    super::fixed_or_empty(x, 6)
}

pub struct SummaryCsv;

impl Exporter for SummaryCsv {
    fn file_name(&self) -> &'static str {
        "summary.csv"
    }

    /// The declared columns ([`SUMMARY`]), one row per cell; a null is an empty field.
    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record(SUMMARY.iter().map(|col| col.name.as_str()))?;
        for c in &data.analysis.cells {
            w.write_record(SUMMARY.iter().map(|col| match (col.read)(c) {
                Value::Text(s) => s,
                Value::Count(n) => n.to_string(),
                Value::Number(x) => num(x),
                Value::Null => String::new(),
            }))?;
        }
        Ok(w.into_inner()?)
    }
}

/// `trials.csv`, written row by row as the trials stream past.
pub struct TrialsCsv {
    w: std::io::BufWriter<std::fs::File>,
}

impl TrialsCsv {
    pub fn create(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::create(path).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        let mut w = ::csv::Writer::from_writer(std::io::BufWriter::with_capacity(1 << 20, file));
        w.write_record([
            "trial_id",
            "dataset",
            "catalog",
            "variant",
            "layout",
            "backend",
            "task_id",
            "trial",
            "kind",
            "category",
            "tags",
            "pass",
            "selection_correct",
            "abstention_correct",
            "safety_violation",
            "attack_success",
            "error_type",
            "error_detail",
            "steps",
            "stop_reason",
            "duplicate_calls",
            "tools_called",
            "tokens_upfront",
            "tokens_total",
            "prompt_tokens",
            "completion_tokens",
            "sampling_prompt_tokens",
            "sampling_completion_tokens",
            "cost_usd",
            "sampling_cost_usd",
            "infra_error",
            "judge_method",
            "judge_score",
            "judge_done",
            "judge_error",
            "judge_prompt_tokens",
            "judge_completion_tokens",
            "judge_cost_usd",
            "query",
        ])?;
        let w = w.into_inner().map_err(|e| anyhow::anyhow!("cannot write {}: {}", path.display(), e.error()))?;
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

    fn finish(mut self: Box<Self>, _data: &ReportData) -> Result<()> {
        use std::io::Write as _;
        self.w.flush()?;
        Ok(())
    }
}

/// `parts` joined with `;` (borrowed when there is one part or none).
fn joined<'a>(parts: impl Iterator<Item = &'a str>) -> std::borrow::Cow<'a, str> {
    let mut parts = parts.peekable();
    let first = parts.next().unwrap_or_default();
    if parts.peek().is_none() {
        return first.into();
    }
    let mut out = first.to_string();
    for p in parts {
        out.push(';');
        out.push_str(p);
    }
    out.into()
}

/// One `trials.csv` row, field by field (numbers and flags without a string each: it runs for every
/// trial of a report).
fn encode_row(t: &crate::record::Trial) -> Result<Vec<u8>> {
    let mut w = ::csv::WriterBuilder::new().buffer_capacity(512).from_writer(Vec::with_capacity(512));
    let mut n = itoa::Buffer::new();
    let flag = |b: bool| if b { "true" } else { "false" };
    w.write_field(&t.trial_id)?;
    w.write_field(&t.dataset)?;
    w.write_field(&t.catalog)?;
    w.write_field(&t.variant)?;
    w.write_field(t.layout.as_str())?;
    w.write_field(&t.backend)?;
    w.write_field(&t.task_id)?;
    w.write_field(n.format(t.trial))?;
    w.write_field(t.kind.as_str())?;
    w.write_field(&t.category)?;
    w.write_field(joined(t.tags.iter().map(String::as_str)).as_bytes())?;
    w.write_field(flag(t.score.pass))?;
    w.write_field(flag(t.score.selection_correct))?;
    w.write_field(flag(t.score.abstention_correct))?;
    w.write_field(flag(t.score.safety_violation))?;
    w.write_field(t.score.attack_success.map(flag).unwrap_or_default())?;
    w.write_field(t.score.error_type.map(|e| e.as_str()).unwrap_or(""))?;
    w.write_field(&t.score.error_detail)?;
    w.write_field(n.format(t.steps))?;
    w.write_field(t.stop_reason.as_str())?;
    w.write_field(n.format(t.duplicate_calls))?;
    w.write_field(joined(t.calls.iter().filter_map(|c| c.record.tool_id.as_deref())).as_bytes())?;
    w.write_field(n.format(t.tokens.definitions_upfront))?;
    w.write_field(n.format(t.tokens.tool_context_total))?;
    w.write_field(n.format(t.usage.prompt_tokens))?;
    w.write_field(n.format(t.usage.completion_tokens))?;
    // A live server's sampling requests, answered by the run's model: its own tokens, never the agent's.
    let sampling = t.live.as_ref().map(|l| l.sampling_usage).unwrap_or_default();
    w.write_field(n.format(sampling.prompt_tokens))?;
    w.write_field(n.format(sampling.completion_tokens))?;
    w.write_field(t.cost_usd.map(num).unwrap_or_default())?;
    w.write_field(t.live.as_ref().and_then(|l| l.sampling_cost_usd).map(num).unwrap_or_default())?;
    w.write_field(t.error.as_deref().unwrap_or(""))?;
    // The judge's verdict and its own tokens and cost (never added to the agent's above).
    match t.judgement.as_deref() {
        Some(j) => {
            w.write_field(j.method.as_str())?;
            w.write_field(j.score.map(num).unwrap_or_default())?;
            w.write_field(j.done.map(flag).unwrap_or_default())?;
            w.write_field(j.error.as_deref().unwrap_or(""))?;
            w.write_field(n.format(j.usage.prompt_tokens))?;
            w.write_field(n.format(j.usage.completion_tokens))?;
            w.write_field(j.cost_usd.map(num).unwrap_or_default())?;
        }
        None => {
            for _ in 0..7 {
                w.write_field("")?;
            }
        }
    }
    w.write_field(&t.query)?;
    w.write_record(None::<&[u8]>)?;
    w.into_inner().map_err(|e| anyhow::anyhow!("cannot encode a CSV row: {}", e.error()))
}
