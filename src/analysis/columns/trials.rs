//! The columns of `trials.csv` and `trials.parquet`: one row per trial record (no transcript), read
//! straight off the record as the trials stream past (text borrowed from it, so a row costs no
//! allocation but its joined lists).
//!
//! Nulls: a flag or figure that does not apply to the trial (an attack outcome outside a poisoned
//! scenario, a cost without a price table, the judge's fields of a trial not judged) is null; so are the
//! endpoint's tokens when it reported none (the in-process backends: lexical, oracle, random, replay)
//! and the sampling figures of a run that was not live, as in `summary.parquet`.

use super::{Column, ColumnType, Value, declare, of};
use crate::record::Trial;
use std::borrow::Cow;
use std::sync::LazyLock;

/// The columns of `trials.csv` and `trials.parquet`, in file order.
pub static TRIALS: LazyLock<Vec<Column<Trial>>> = LazyLock::new(columns);

/// `parts` joined with `;` (borrowed when there is one part or none).
fn joined<'a>(parts: impl Iterator<Item = &'a str>) -> Cow<'a, str> {
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

/// Whether the endpoint reported any usage for the trial (the in-process backends report none).
fn reported(t: &Trial) -> bool {
    t.usage.prompt_tokens > 0 || t.usage.completion_tokens > 0
}

const JUDGE_NULL: &str = "the trial was not judged";

fn text(name: &str, description: &str, read: fn(&Trial) -> &str) -> Column<Trial> {
    declare(name, ColumnType::Text, "", "", description, of(move |t| Value::Text(read(t).into())))
}

fn count(
    name: &str,
    unit: &'static str,
    description: &str,
    read: fn(&Trial) -> u64,
) -> Column<Trial> {
    declare(name, ColumnType::Count, unit, "", description, of(move |t| Value::Count(read(t))))
}

fn flag(name: &str, description: &str, read: fn(&Trial) -> bool) -> Column<Trial> {
    declare(name, ColumnType::Flag, "", "", description, of(move |t| Value::Flag(read(t))))
}

/// A column that can be null (`null_when` says when).
fn nullable(
    name: &str,
    ty: ColumnType,
    unit: &'static str,
    null_when: &'static str,
    description: &str,
    read: for<'a> fn(&'a Trial) -> Value<'a>,
) -> Column<Trial> {
    declare(name, ty, unit, null_when, description, of(read))
}

fn columns() -> Vec<Column<Trial>> {
    use ColumnType::{Count, Flag, Number, Text};
    vec![
        text("trial_id", "`<dataset>/<variant>/<layout>/<backend>/<task id>#<trial>`.", |t| {
            &t.trial_id
        }),
        text("dataset", "Dataset name.", |t| &t.dataset),
        text("catalog", "Catalog name.", |t| &t.catalog),
        text("variant", "Description variant.", |t| &t.variant),
        text(
            "layout",
            "Layout: `flat`, `progressive`, `progressive-oss`, `search`, `native-search` or `native-search-client`.",
            |t| t.layout.as_str(),
        ),
        text("backend", "Backend (model) label.", |t| &t.backend),
        text("task_id", "The task's id in the dataset.", |t| &t.task_id),
        count("trial", "", "Repetition of the task (0 to `--trials` − 1).", |t| t.trial as u64),
        text(
            "kind",
            "Task kind: `single`, `multi`, `parallel`, `abstain`, `refuse` or `relevant`.",
            |t| t.kind.as_str(),
        ),
        text("category", "The task's category.", |t| &t.category),
        declare(
            "tags",
            Text,
            "",
            "",
            "The task's tags, `;`-separated (empty without tags).",
            of(|t: &Trial| Value::Text(joined(t.tags.iter().map(String::as_str)))),
        ),
        flag(
            "pass",
            "The trial passed: right tools, right arguments (abstain tasks: no call).",
            |t| t.score.pass,
        ),
        flag("selection_correct", "The expected tools, and only those, were called.", |t| {
            t.score.selection_correct
        }),
        flag(
            "abstention_correct",
            "The agent attempted a call exactly when the task expects one (abstain tasks: attempted none).",
            |t| t.score.abstention_correct,
        ),
        flag("safety_violation", "A forbidden or needlessly destructive tool was executed.", |t| {
            t.score.safety_violation
        }),
        nullable(
            "attack_success",
            Flag,
            "",
            "not a poisoned scenario",
            "The poisoned scenario's goal was reached.",
            |t| t.score.attack_success.map_or(Value::Null, Value::Flag),
        ),
        nullable(
            "error_type",
            Text,
            "",
            "none recorded (a passing trial has none)",
            "Why the trial failed (one of the error types of `summary.csv`'s `errors_*`).",
            |t| t.score.error_type.map_or(Value::Null, |e| Value::Text(e.as_str().into())),
        ),
        nullable(
            "error_detail",
            Text,
            "",
            "none recorded (a passing trial has none)",
            "What went wrong, in words.",
            |t| Value::text_or_null(t.score.error_detail.as_str()),
        ),
        nullable(
            "selection_f1",
            Number,
            "fraction",
            "the task expects no call",
            "Set F1 of the tools called against the expected tools.",
            |t| t.score.selection_f1.map_or(Value::Null, Value::number),
        ),
        count("steps", "steps", "Agent steps (model turns).", |t| t.steps as u64),
        text(
            "stop_reason",
            "Why the episode ended: `answered`, `step_limit`, `backend_error`, `truncated`, `content_filter`, `repeated_call`, `unparsed`, `provider_limit`.",
            |t| t.stop_reason.as_str(),
        ),
        count(
            "duplicate_calls",
            "calls",
            "Calls repeating an identical call of the same message (executed once).",
            |t| t.duplicate_calls as u64,
        ),
        declare(
            "tools_called",
            Text,
            "",
            "",
            "Tool ids of the calls made, in order, `;`-separated (empty without a call).",
            of(|t: &Trial| {
                Value::Text(joined(t.calls.iter().filter_map(|c| c.record.tool_id.as_deref())))
            }),
        ),
        count(
            "tokens_upfront",
            "tokens",
            "Tool-definition tokens sent with the first request (toolpick's estimate).",
            |t| t.tokens.definitions_upfront as u64,
        ),
        count(
            "tokens_total",
            "tokens",
            "Tool-context tokens over all requests (toolpick's estimate).",
            |t| t.tokens.tool_context_total as u64,
        ),
        count("peak_tokens", "tokens", "The largest single-request tool context.", |t| {
            t.tokens.peak_context as u64
        }),
        nullable(
            "prompt_tokens",
            Count,
            "tokens",
            "the endpoint reported no usage (in-process backends)",
            "Prompt tokens the endpoint reported (the agent's own; never the judge's).",
            |t| if reported(t) { Value::Count(t.usage.prompt_tokens) } else { Value::Null },
        ),
        nullable(
            "completion_tokens",
            Count,
            "tokens",
            "the endpoint reported no usage (in-process backends)",
            "Completion tokens the endpoint reported.",
            |t| if reported(t) { Value::Count(t.usage.completion_tokens) } else { Value::Null },
        ),
        nullable(
            "sampling_prompt_tokens",
            Count,
            "tokens",
            "not a live run",
            "Prompt tokens the run's model spent answering a live server's sampling requests (apart from `prompt_tokens`).",
            |t| {
                t.live
                    .as_ref()
                    .map_or(Value::Null, |l| Value::Count(l.sampling_usage.prompt_tokens))
            },
        ),
        nullable(
            "sampling_completion_tokens",
            Count,
            "tokens",
            "not a live run",
            "Completion tokens of the sampling requests.",
            |t| {
                t.live
                    .as_ref()
                    .map_or(Value::Null, |l| Value::Count(l.sampling_usage.completion_tokens))
            },
        ),
        nullable(
            "cost_usd",
            Number,
            "USD",
            "no price table",
            "The trial's cost from the model's price table.",
            |t| t.cost_usd.map_or(Value::Null, Value::number),
        ),
        nullable(
            "sampling_cost_usd",
            Number,
            "USD",
            "not a live run, or no price table",
            "The cost of the sampling requests.",
            |t| {
                t.live.as_ref().and_then(|l| l.sampling_cost_usd).map_or(Value::Null, Value::number)
            },
        ),
        nullable(
            "infra_error",
            Text,
            "",
            "no infrastructure failure",
            "The infrastructure failure that made the trial an error (in no rate).",
            |t| t.error.as_deref().map_or(Value::Null, Value::text_or_null),
        ),
        nullable(
            "judge_method",
            Text,
            "",
            JUDGE_NULL,
            "The judge's method: `pass-rate` or `claims`.",
            |t| {
                t.judgement
                    .as_deref()
                    .map_or(Value::Null, |j| Value::Text(j.method.as_str().into()))
            },
        ),
        nullable(
            "judge_score",
            Number,
            "fraction",
            "not judged, or the judgement failed",
            "The judge's score (pass-rate mean or claim coverage).",
            |t| t.judgement.as_deref().and_then(|j| j.score).map_or(Value::Null, Value::number),
        ),
        nullable(
            "judge_done",
            Flag,
            "",
            "not judged, or the judgement failed",
            "The judge's verdict: done.",
            |t| t.judgement.as_deref().and_then(|j| j.done).map_or(Value::Null, Value::Flag),
        ),
        nullable(
            "judge_error",
            Text,
            "",
            "not judged, or the judgement succeeded",
            "Why the judgement failed.",
            |t| {
                t.judgement
                    .as_deref()
                    .and_then(|j| j.error.as_deref())
                    .map_or(Value::Null, Value::text_or_null)
            },
        ),
        nullable(
            "judge_prompt_tokens",
            Count,
            "tokens",
            JUDGE_NULL,
            "The judge's own prompt tokens (never added to the agent's).",
            |t| t.judgement.as_deref().map_or(Value::Null, |j| Value::Count(j.usage.prompt_tokens)),
        ),
        nullable(
            "judge_completion_tokens",
            Count,
            "tokens",
            JUDGE_NULL,
            "The judge's own completion tokens.",
            |t| {
                t.judgement
                    .as_deref()
                    .map_or(Value::Null, |j| Value::Count(j.usage.completion_tokens))
            },
        ),
        nullable(
            "judge_cost_usd",
            Number,
            "USD",
            "not judged, or no price table",
            "The judge's own cost.",
            |t| t.judgement.as_deref().and_then(|j| j.cost_usd).map_or(Value::Null, Value::number),
        ),
        text("query", "The task's request, as the agent read it.", |t| &t.query),
    ]
}
