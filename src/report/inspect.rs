//! `--export inspect`: one inspect_ai EvalLog (`.json`, log format version 2) per cell, so `inspect
//! view` and `inspect_ai.log.read_eval_log` open a toolpick run beside a team's other evals.
//!
//! The shape is inspect_ai's own (`inspect_ai/log/_log.py`, `model/_chat_message.py`,
//! `model/_model_output.py`, `scorer/_metric.py` of the pinned `inspect-ai`, which
//! `tests/export_inspect.rs` reads every log back with). A cell (dataset × catalog × variant × layout
//! × backend) is an eval of task `toolpick/<dataset>` on model `<provider>/<model>`; each trial is a
//! sample (id: the task id; epoch: the repetition, from 1) with its messages, tool calls, four scores
//! (`pass`, `selection`, `abstain`, `safety`: `C`/`I`, inspect's correct and incorrect) and token
//! usage. The header's metrics are the analysis's rates ([`crate::analysis::cells::CellSummary`]),
//! never recomputed here.
//!
//! Memory: the samples are written as the trials stream past, each to its cell's part file (one open
//! file per cell); the header, which inspect reads first and alone (`header_only`), needs the counts,
//! so each log is assembled at the end: header, then the part file copied in. Field by field, where
//! each value comes from: `docs/formats.md`, "inspect_ai EvalLog".

use super::ReportData;
use super::export::{RunInfo, Staging, iso_utc, json_bytes};
use crate::analysis::cells::CellSummary;
use crate::protocol::{Message, ToolCall, Usage};
use crate::record::meta::cell_key;
use crate::record::{StopReason, Trial};
use anyhow::{Context, Result};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One cell's log while the trials stream past.
struct CellLog {
    dataset: String,
    catalog: String,
    variant: String,
    layout: String,
    backend: String,
    /// The samples written so far (a JSON array's items, comma-separated), under a temporary name.
    part: PathBuf,
    writer: std::io::BufWriter<std::fs::File>,
    samples: usize,
    /// The most repetitions of one task (inspect's epochs).
    epochs: usize,
    usage: Usage,
}

/// Write the logs of the run in `dir` into the folder `out`; returns their paths.
pub fn write(dir: &Path, data: &ReportData, info: &RunInfo, out: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut cells: BTreeMap<String, CellLog> = BTreeMap::new();
    let mut parts = Staging::default();
    super::export::each_episode(dir, |t| {
        let key = cell_key(&t.dataset, &t.catalog, &t.variant, t.layout.as_str(), &t.backend);
        if !cells.contains_key(&key) {
            let part = parts.stage(&out.join(format!("samples-{}", cells.len())));
            let file = std::fs::File::create(&part)
                .with_context(|| format!("cannot write {}", part.display()))?;
            cells.insert(
                key.clone(),
                CellLog {
                    dataset: t.dataset.clone(),
                    catalog: t.catalog.clone(),
                    variant: t.variant.clone(),
                    layout: t.layout.as_str().to_string(),
                    backend: t.backend.clone(),
                    part,
                    writer: std::io::BufWriter::new(file),
                    samples: 0,
                    epochs: 0,
                    usage: Usage::default(),
                },
            );
        }
        let cell = cells.get_mut(&key).expect("inserted above");
        let bytes = json_bytes(&sample(&t, info))?;
        if cell.samples > 0 {
            cell.writer.write_all(b",")?;
        }
        cell.writer.write_all(&bytes)?;
        cell.samples += 1;
        cell.epochs = cell.epochs.max(t.trial + 1);
        cell.usage.add(&t.usage);
        Ok(())
    })?;
    let mut logs = Staging::default();
    for (key, mut cell) in cells {
        cell.writer.flush()?;
        let summary =
            data.analysis.cells.iter().find(|c| {
                cell_key(&c.dataset, &c.catalog, &c.variant, &c.layout, &c.backend) == key
            });
        let id = super::export::hex_id(&["toolpick-inspect", &info.run_id, &key], 11);
        let header = header(&cell, summary, info, &id);
        let created = header["eval"]["created"].as_str().unwrap_or_default().to_string();
        let task = header["eval"]["task"].as_str().unwrap_or_default().to_string();
        let dest = out.join(file_name(&created, &task, &id));
        let tmp = logs.stage(&dest);
        assemble(&tmp, &header, &cell.part)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
    }
    // The part files are removed when `parts` is dropped (never committed).
    logs.commit()
}

/// The log at `tmp`: the header's fields, then `"samples": [` the part file `]`.
fn assemble(tmp: &Path, header: &Value, part: &Path) -> Result<()> {
    let head = json_bytes(header)?;
    let mut file = std::io::BufWriter::new(std::fs::File::create(tmp)?);
    // The header is an object: its closing brace is dropped so the samples follow its fields.
    file.write_all(&head[..head.len() - 1])?;
    file.write_all(b",\"samples\":[")?;
    std::io::copy(&mut std::fs::File::open(part)?, &mut file)?;
    file.write_all(b"]}")?;
    file.flush()?;
    Ok(())
}

/// inspect's log file name, `<created>_<task>_<id>.json`, each part cleaned as inspect cleans it
/// (`_`, `/`, `:`, `+` become `-`): `inspect view` lists a `.json` file only when its name starts with
/// the ISO time, and reads the task and id from the rest.
fn file_name(created: &str, task: &str, id: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '-' })
            .collect()
    };
    format!("{}_{}_{}.json", clean(created), clean(task), clean(id))
}

/// Everything of a log but its samples, in inspect's field order (`version` first: inspect's
/// header-only reader looks for it before anything else).
fn header(cell: &CellLog, summary: Option<&CellSummary>, info: &RunInfo, id: &str) -> Value {
    let created = iso_utc(info.started_unix);
    let completed = iso_utc(info.started_unix + info.seconds.map_or(0, |s| s.ceil() as u64));
    let model = info.model_id(&cell.backend);
    // The analysis's rates, left out where undefined (no trial of the kind): inspect needs numbers.
    let metric = |rate: Option<f64>, name: &str| {
        let mut metrics = Map::new();
        if let Some(r) = rate.filter(|r| !r.is_nan()) {
            metrics.insert(name.into(), json!({"name": name, "value": r}));
        }
        Value::Object(metrics)
    };
    let score = |name: &str, rate: Option<f64>, scored: Option<u64>, metric_name: &str| {
        json!({
            "name": name,
            "scorer": name,
            "scored_samples": scored,
            "metrics": metric(rate, metric_name),
        })
    };
    let scores = vec![
        score("pass", summary.map(|s| s.pass.rate), summary.map(|s| s.pass.n), "accuracy"),
        score(
            "selection",
            summary.map(|s| s.selection.rate),
            summary.map(|s| s.selection.n),
            "accuracy",
        ),
        score(
            "abstain",
            summary.map(|s| s.abstention.rate),
            summary.map(|s| s.abstention.n),
            "accuracy",
        ),
        score(
            "safety",
            summary.map(|s| s.safety_violation.rate),
            summary.map(|s| s.safety_violation.n),
            "violation_rate",
        ),
    ];
    json!({
        "version": 2,
        "status": "success",
        "eval": {
            "eval_id": id,
            "run_id": info.run_id,
            "created": created,
            "task": format!("toolpick/{}", cell.dataset),
            "task_id": id,
            "task_version": 0,
            "dataset": {"name": cell.dataset, "samples": cell.samples},
            "model": model,
            "config": {"epochs": cell.epochs},
            "packages": {"toolpick": info.toolpick_version},
            "metadata": {
                "dataset": cell.dataset,
                "catalog": cell.catalog,
                "variant": cell.variant,
                "layout": cell.layout,
                "backend": cell.backend,
                "toolpick_version": info.toolpick_version,
                "seed": info.seed,
            },
        },
        "plan": {
            "name": "plan",
            "steps": [{
                "solver": format!("toolpick/{}", cell.layout),
                "params": {"variant": cell.variant, "layout": cell.layout},
            }],
            "config": {},
        },
        "results": {
            "total_samples": cell.samples,
            "completed_samples": cell.samples,
            "scores": scores,
        },
        "stats": {
            "started_at": created,
            "completed_at": completed,
            "model_usage": {model: usage(&cell.usage)},
        },
    })
}

/// inspect's `ModelUsage` of an endpoint's reported tokens.
/// inspect's `ModelUsage`: its `input_tokens` are those charged at the full rate, cache reads and
/// writes excluded (they are counted apart), where toolpick's `prompt_tokens` include them.
fn usage(u: &Usage) -> Value {
    let mut v = json!({
        "input_tokens": u.prompt_tokens.saturating_sub(u.cached_tokens + u.cache_write_tokens),
        "output_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
    });
    if u.cached_tokens > 0 {
        v["input_tokens_cache_read"] = json!(u.cached_tokens);
    }
    if u.cache_write_tokens > 0 {
        v["input_tokens_cache_write"] = json!(u.cache_write_tokens);
    }
    if u.reasoning_tokens > 0 {
        v["reasoning_tokens"] = json!(u.reasoning_tokens);
    }
    v
}

/// Why the episode's last message ended, in inspect's words.
fn stop_reason(s: StopReason) -> &'static str {
    match s {
        StopReason::Answered => "stop",
        StopReason::StepLimit => "tool_calls",
        StopReason::Truncated => "max_tokens",
        StopReason::ContentFilter => "content_filter",
        StopReason::BackendError
        | StopReason::ProviderLimit
        | StopReason::RepeatedCall
        | StopReason::Unparsed => "unknown",
    }
}

/// inspect's `ToolCall`: arguments must be an object; text that is not one is kept as the parse
/// error (it is the model's, and placed by serde_json like any other text).
fn tool_call(c: &ToolCall) -> Value {
    match serde_json::from_str::<Value>(&c.arguments) {
        Ok(Value::Object(args)) => {
            json!({"id": c.id, "function": c.name, "arguments": args, "type": "function"})
        }
        _ => json!({
            "id": c.id,
            "function": c.name,
            "arguments": {},
            "parse_error": format!("the arguments are not a JSON object: {}", c.arguments),
            "type": "function",
        }),
    }
}

/// A message as inspect's `ChatMessage` (system, user, assistant with its tool calls, tool).
fn message(m: &Message, model: &str) -> Value {
    match m {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant { content, tool_calls } => {
            let mut v = json!({
                "role": "assistant",
                "content": content.as_deref().unwrap_or_default(),
                "source": "generate",
                "model": model,
            });
            if !tool_calls.is_empty() {
                v["tool_calls"] = tool_calls.iter().map(tool_call).collect();
            }
            v
        }
        Message::Tool { tool_call_id, name, content } => json!({
            "role": "tool",
            "content": content,
            "tool_call_id": tool_call_id,
            "function": name,
        }),
    }
}

/// inspect's correct / incorrect.
fn verdict(ok: bool) -> &'static str {
    if ok { "C" } else { "I" }
}

/// One trial as an inspect `EvalSample`.
fn sample(t: &Trial, info: &RunInfo) -> Value {
    let model = info.model_id(&t.backend);
    let messages: Vec<Value> = t.transcript.iter().map(|m| message(m, &model)).collect();
    let last_assistant = t
        .transcript
        .iter()
        .rev()
        .find(|m| matches!(m, Message::Assistant { .. }))
        .map(|m| message(m, &model))
        .unwrap_or_else(|| json!({"role": "assistant", "content": "", "model": model}));
    let called: Vec<&str> = t.calls.iter().map(|c| c.record.name.as_str()).collect();
    let answer = called.join(", ");
    let why = match &t.score.error_type {
        Some(e) if t.score.error_detail.is_empty() => e.as_str().to_string(),
        Some(e) => format!("{}: {}", e.as_str(), t.score.error_detail),
        None => String::new(),
    };
    let score = |ok: bool, explanation: &str| json!({"value": verdict(ok), "answer": answer, "explanation": explanation});
    let safety_note = if t.score.safety_violation {
        "a forbidden or needlessly destructive call was executed"
    } else {
        "no forbidden or needlessly destructive call was executed"
    };
    let calls: Vec<Value> = t
        .calls
        .iter()
        .map(|c| {
            json!({
                "step": c.record.step,
                "name": c.record.name,
                "status": c.record.status,
                "tool_id": c.record.tool_id,
            })
        })
        .collect();
    let mut v = json!({
        "id": t.task_id,
        "epoch": t.trial + 1,
        "input": t.query,
        "target": serde_json::to_string(&*t.expected).unwrap_or_default(),
        "messages": messages,
        "output": {
            "model": model,
            "choices": [{"message": last_assistant, "stop_reason": stop_reason(t.stop_reason)}],
            "completion": t.final_answer.as_deref().unwrap_or_default(),
            "usage": usage(&t.usage),
        },
        "scores": {
            "pass": score(t.score.pass, &why),
            "selection": score(t.score.selection_correct, &why),
            "abstain": score(t.score.abstention_correct, &why),
            "safety": score(!t.score.safety_violation, safety_note),
        },
        "metadata": {
            "trial_id": t.trial_id,
            "dataset": t.dataset,
            "catalog": t.catalog,
            "variant": t.variant,
            "layout": t.layout.as_str(),
            "backend": t.backend,
            "kind": t.kind.as_str(),
            "category": t.category,
            "tags": t.tags,
            "seed": t.seed,
            "steps": t.steps,
            "stop_reason": t.stop_reason.as_str(),
            "error_type": t.score.error_type.map(|e| e.as_str()),
            "calls": calls,
            "tool_context_tokens": t.tokens.tool_context_total,
            "definitions_tokens_upfront": t.tokens.definitions_upfront,
            "cost_usd": t.cost_usd,
        },
        "model_usage": {model: usage(&t.usage)},
    });
    if let Some(e) = &t.error {
        // inspect marks a sample with an error apart from the scored ones; toolpick leaves it out of
        // every rate for the same reason (infrastructure, not the model).
        v["error"] = json!({"message": e, "traceback": "", "traceback_ansi": ""});
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_names_each_reported_count_as_inspect_does_and_leaves_out_the_unreported() {
        // inspect_ai's ModelUsage (inspect_ai/model/_model_output.py, 0.3.285): "The true total input
        // token count is: input_tokens + (input_tokens_cache_read or 0) + (input_tokens_cache_write or 0)".
        let all = Usage {
            prompt_tokens: 100,
            completion_tokens: 40,
            cached_tokens: 30,
            cache_write_tokens: 20,
            reasoning_tokens: 25,
        };
        let v = usage(&all);
        assert_eq!(v["input_tokens"], 50);
        assert_eq!(v["output_tokens"], 40);
        assert_eq!(v["total_tokens"], 140);
        assert_eq!(v["input_tokens_cache_read"], 30);
        assert_eq!(v["input_tokens_cache_write"], 20);
        assert_eq!(v["reasoning_tokens"], 25);
        let plain = usage(&Usage { prompt_tokens: 7, completion_tokens: 3, ..Default::default() });
        let keys: Vec<&str> = plain.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["input_tokens", "output_tokens", "total_tokens"]);
    }
}
