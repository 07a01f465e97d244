//! CSV exporters: `summary.csv` (one row per cell) and `trials.csv` (one row per trial, no transcript).
//! Rates are fractions in [0, 1] with their 95 % Wilson bounds; empty cells are written empty.

use super::{Exporter, ReportData};
use anyhow::Result;

fn num(x: f64) -> String {
    super::fixed_or_empty(x, 6)
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

pub struct SummaryCsv;

impl Exporter for SummaryCsv {
    fn file_name(&self) -> &'static str {
        "summary.csv"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = ["dataset", "catalog", "variant", "layout", "backend", "n", "n_call"].map(String::from).to_vec();
        for m in [
            "selection_accuracy",
            "pass_at_1",
            "abstention_accuracy",
            "safety_violation_rate",
            "attack_success_rate",
            "refused_rate",
            "no_harm_rate",
            "false_refusal_rate",
            "gold_revealed_rate",
            "server_recall",
            "category_recall",
            "abandonment_rate",
        ] {
            header.extend([m.to_string(), format!("{m}_low"), format!("{m}_high")]);
        }
        header.extend(
            [
                "mean_selection_f1",
                "mean_steps",
                "mean_steps_low",
                "mean_steps_high",
                "mean_tokens_upfront",
                "mean_tokens_total",
                "mean_tokens_total_low",
                "mean_tokens_total_high",
                "mean_endpoint_prompt_tokens",
                "mean_endpoint_completion_tokens",
                "mean_endpoint_cached_tokens",
                "mean_peak_tokens",
                "mean_wrong_servers",
                "mean_wrong_categories",
                "mean_dead_ends",
                "mean_invented",
                "mean_duplicate_calls",
                "infra_errors",
                "cost_usd",
                "trials_per_task",
                "pass_at_k",
                "pass_hat_k",
                "flip_rate",
                "noise_95",
                "min_detectable_diff",
            ]
            .map(String::from),
        );
        for k in crate::dataset::Kind::ALL.map(|k| k.as_str()) {
            header.push(format!("n_{k}"));
            for m in ["selection_accuracy", "pass_at_1"] {
                header.extend([format!("{m}_{k}"), format!("{m}_{k}_low"), format!("{m}_{k}_high")]);
            }
        }
        header.extend(crate::score::ErrorType::ALL.iter().map(|e| format!("errors_{}", e.as_str())));
        header.extend(JUDGE_COLUMNS.map(String::from));
        w.write_record(&header)?;
        for c in &data.analysis.cells {
            let mut row = vec![c.dataset.clone(), c.catalog.clone(), c.variant.clone(), c.layout.clone(), c.backend.clone(), c.n.to_string(), c.pass.n.to_string()];
            for r in [
                &c.selection,
                &c.pass,
                &c.abstention,
                &c.safety_violation,
                &c.attack_success,
                &c.refused,
                &c.no_harm,
                &c.false_refusal,
                &c.gold_revealed,
                &c.server_recall,
                &c.category_recall,
                &c.abandonment,
            ] {
                row.extend([num(r.rate), num(r.low), num(r.high)]);
            }
            row.extend([
                num(c.mean_selection_f1),
                num(c.mean_steps),
                num(c.mean_steps_ci.0),
                num(c.mean_steps_ci.1),
                num(c.mean_tokens_upfront),
                num(c.mean_tokens_total),
                num(c.mean_tokens_total_ci.0),
                num(c.mean_tokens_total_ci.1),
                num(c.mean_endpoint_prompt_tokens),
                num(c.mean_endpoint_completion_tokens),
                num(c.mean_endpoint_cached_tokens),
                num(c.mean_peak_tokens),
                num(c.mean_wrong_servers),
                num(c.mean_wrong_categories),
                num(c.mean_dead_ends),
                num(c.mean_invented),
                num(c.mean_duplicate_calls),
                c.infra_errors.to_string(),
                num(c.cost_usd),
                c.trials_per_task.to_string(),
                opt(c.pass_at_k),
                opt(c.pass_hat_k),
                opt(c.noise.map(|n| n.flip_rate)),
                opt(c.noise.map(|n| n.noise_95)),
                opt(c.noise.map(|n| n.min_detectable)),
            ]);
            for k in &c.kinds {
                row.push(k.pass.n.to_string());
                for r in [&k.selection, &k.pass] {
                    row.extend([num(r.rate), num(r.low), num(r.high)]);
                }
            }
            row.extend(crate::score::ErrorType::ALL.iter().map(|e| c.errors.get(e.as_str()).copied().unwrap_or(0).to_string()));
            row.extend(judge_fields(c.judge.as_ref()));
            w.write_record(&row)?;
        }
        Ok(w.into_inner()?)
    }
}

/// The judge's columns of `summary.csv`, empty for a cell (or run) without judgements.
const JUDGE_COLUMNS: [&str; 23] = [
    "judge",
    "judge_prompts",
    "judged_n",
    "judge_errors",
    "judge_short_circuited",
    "sopr",
    "sopr_low",
    "sopr_high",
    "sopr_round_std",
    "claim_coverage",
    "claim_coverage_low",
    "claim_coverage_high",
    "claims_pass_rate",
    "judged_done_rate",
    "judged_done_rate_low",
    "judged_done_rate_high",
    "right_tools_done",
    "right_tools_not_done",
    "wrong_tools_done",
    "wrong_tools_not_done",
    "judge_prompt_tokens",
    "judge_completion_tokens",
    "judge_cost_usd",
];

fn judge_fields(j: Option<&crate::analysis::judged::JudgeCell>) -> Vec<String> {
    let Some(j) = j else { return vec![String::new(); JUDGE_COLUMNS.len()] };
    let mean = |m: &Option<crate::analysis::judged::JudgedMean>| match m {
        Some(m) => [num(m.mean), num(m.low), num(m.high)],
        None => Default::default(),
    };
    let [sopr, sopr_low, sopr_high] = mean(&j.sopr);
    let [cov, cov_low, cov_high] = mean(&j.coverage);
    vec![
        j.judges.join(";"),
        j.prompts.join(";"),
        j.judged.to_string(),
        j.errors.to_string(),
        j.short_circuited.to_string(),
        sopr,
        sopr_low,
        sopr_high,
        opt(j.sopr.as_ref().and_then(|m| m.round_std)),
        cov,
        cov_low,
        cov_high,
        opt(j.claims_pass.map(|r| r.rate)),
        num(j.done.rate),
        num(j.done.low),
        num(j.done.high),
        j.joint.tools_done.to_string(),
        j.joint.tools_not_done.to_string(),
        j.joint.wrong_tools_done.to_string(),
        j.joint.wrong_tools_not_done.to_string(),
        j.prompt_tokens.to_string(),
        j.completion_tokens.to_string(),
        num(j.cost_usd),
    ]
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
