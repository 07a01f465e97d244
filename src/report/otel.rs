//! `--export otel`: the run's episodes as OpenTelemetry traces, in OTLP/JSON (the JSON mapping of
//! `ExportTraceServiceRequest`: `resourceSpans` → `scopeSpans` → `spans`), with the attribute names
//! of the OpenTelemetry GenAI semantic conventions, so a collector's file receiver, `otel-cli` or any
//! OTLP backend shows how an agent picked its tools.
//!
//! One trace per trial: an `invoke_agent` span for the episode, a `chat` span per model turn (each
//! assistant message) and an `execute_tool` span per call the trial records, the turn's calls after
//! its `chat` span; the episode span carries one `gen_ai.evaluation.result` event per score (`pass`,
//! `selection`, `abstain`, `safety`).
//!
//! Ids are derived, never random: the trace id is the first 16 bytes of SHA-256 over the run id and
//! the trial id, a span id the first 8 over those and the span's number, so the same run exports the
//! same ids. Times: every trace starts at the run's start (`run.json`'s `started_unix`, the one place a
//! time is kept; when each trial started is not recorded); spans last what `timings.jsonl` recorded
//! (the episode's `episode_ms`, each request's attempts and waits) or, for a run without timings, one
//! millisecond per model turn; tool calls take no time of their own (not recorded). The timings are
//! held as one small entry per trial (about 40 bytes) while the trials stream past; the spans are
//! written as they are made. Field by field: `docs/formats.md`, "OpenTelemetry traces".

use super::export::{RunInfo, hex_id, json_bytes, redacted};
use crate::protocol::Message;
use crate::record::{StopReason, Trial};
use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

/// The file's name in the run directory when no `--out` is given.
pub const FILE: &str = "otel-traces.json";

const NANOS_PER_MS: f64 = 1e6;

/// `SpanKind`: INTERNAL for the episode and tool calls, CLIENT for a request to the model.
const KIND_INTERNAL: u32 = 1;
const KIND_CLIENT: u32 = 3;

/// `Status.code` of a trial that failed for infrastructure reasons.
const STATUS_ERROR: u32 = 2;

/// What `timings.jsonl` recorded of one trial, as read.
#[derive(Deserialize)]
struct TimingLine {
    trial_id: String,
    #[serde(default)]
    episode_ms: f64,
    #[serde(default)]
    requests: Vec<RequestTiming>,
}

#[derive(Deserialize)]
struct RequestTiming {
    #[serde(default)]
    attempt_ms: Vec<f64>,
    #[serde(default)]
    waited_ms: f64,
}

/// A trial's durations, kept small: the episode and each model request (attempts plus waits), ms.
struct Durations {
    episode_ms: f32,
    requests_ms: Box<[f32]>,
}

/// The durations of every trial in `dir/timings.jsonl`, by the stable hash of the trial id (the last
/// line of a trial wins, as a resumed run writes it again); empty without the file.
fn durations(dir: &Path) -> Result<HashMap<u64, Durations>> {
    let path = dir.join(crate::record::TIMINGS);
    let mut out = HashMap::new();
    if !path.is_file() {
        return Ok(out);
    }
    let mut lines = crate::record::lines::JsonLines::open(&path, "timings file")?;
    while let Some(line) = lines.next_line()? {
        if line.is_blank() || !line.complete {
            continue;
        }
        let t: TimingLine = serde_json::from_slice(line.text).map_err(|e| {
            crate::error::InputError::new(&path, format!("not a timing line: {e}"))
                .at_line(line.number)
        })?;
        let requests_ms =
            t.requests.iter().map(|r| (r.attempt_ms.iter().sum::<f64>() + r.waited_ms) as f32);
        out.insert(
            crate::record::stable_hash(t.trial_id.as_bytes()),
            Durations { episode_ms: t.episode_ms as f32, requests_ms: requests_ms.collect() },
        );
    }
    Ok(out)
}

/// Write the traces of the run in `dir` to the file `out`; returns its path.
pub fn write(dir: &Path, info: &RunInfo, out: &Path) -> Result<std::path::PathBuf> {
    if out.is_dir() {
        return Err(crate::error::InputError::new(
            out,
            "is a directory; the OpenTelemetry export is one file: give its name",
        )
        .into());
    }
    let timings = durations(dir)?;
    let mut staging = super::export::Staging::default();
    let tmp = staging.stage(out);
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?,
    );
    let resource = json!({
        "attributes": [
            attr("service.name", json!({"stringValue": "toolpick"})),
            attr("service.version", json!({"stringValue": info.toolpick_version})),
            attr("toolpick.run_id", json!({"stringValue": info.run_id})),
        ],
    });
    let scope = json!({"name": "toolpick", "version": info.toolpick_version});
    file.write_all(b"{\"resourceSpans\":[{\"resource\":")?;
    file.write_all(&json_bytes(&resource)?)?;
    file.write_all(b",\"scopeSpans\":[{\"scope\":")?;
    file.write_all(&json_bytes(&scope)?)?;
    file.write_all(b",\"spans\":[")?;
    let mut first = true;
    super::export::each_episode(dir, |t| {
        let durations = timings.get(&crate::record::stable_hash(t.trial_id.as_bytes()));
        for span in spans(&t, info, durations) {
            if !first {
                file.write_all(b",")?;
            }
            first = false;
            file.write_all(&redacted(serde_json::to_vec(&span)?))?;
        }
        Ok(())
    })?;
    file.write_all(b"]}]}]}")?;
    file.flush()?;
    drop(file);
    Ok(staging.commit()?.remove(0))
}

/// An OTLP `KeyValue`.
fn attr(key: &str, value: Value) -> Value {
    json!({"key": key, "value": value})
}

fn text(key: &str, value: &str) -> Value {
    attr(key, json!({"stringValue": value}))
}

/// 64-bit integers are decimal strings in OTLP/JSON.
fn int(key: &str, value: u64) -> Value {
    attr(key, json!({"intValue": value.to_string()}))
}

fn texts(key: &str, values: &[&str]) -> Value {
    let values: Vec<Value> = values.iter().map(|v| json!({"stringValue": v})).collect();
    attr(key, json!({"arrayValue": {"values": values}}))
}

/// The GenAI finish reason of the episode's last turn.
fn finish_reason(s: StopReason) -> &'static str {
    match s {
        StopReason::Answered => "stop",
        StopReason::StepLimit => "tool_calls",
        StopReason::Truncated => "length",
        StopReason::ContentFilter => "content_filter",
        StopReason::BackendError
        | StopReason::ProviderLimit
        | StopReason::RepeatedCall
        | StopReason::Unparsed => "error",
    }
}

/// One `gen_ai.evaluation.result` event.
fn evaluation(at: u64, name: &str, ok: bool, labels: [&str; 2], explanation: &str) -> Value {
    let mut attributes = vec![
        text("gen_ai.evaluation.name", name),
        attr("gen_ai.evaluation.score.value", json!({"doubleValue": if ok { 1.0 } else { 0.0 }})),
        text("gen_ai.evaluation.score.label", if ok { labels[0] } else { labels[1] }),
    ];
    if !explanation.is_empty() {
        attributes.push(text("gen_ai.evaluation.explanation", explanation));
    }
    json!({"timeUnixNano": at.to_string(), "name": "gen_ai.evaluation.result", "attributes": attributes})
}

/// The spans of one trial: the episode first, then each turn's `chat` span followed by its calls'
/// `execute_tool` spans.
fn spans(t: &Trial, info: &RunInfo, durations: Option<&Durations>) -> Vec<Value> {
    let trace = hex_id(&["toolpick-otel", &info.run_id, &t.trial_id], 16);
    let span_id =
        |n: usize| hex_id(&["toolpick-otel", &info.run_id, &t.trial_id, &n.to_string()], 8);
    let root = span_id(0);
    let start = info.started_unix.saturating_mul(1_000_000_000);
    let provider = info.provider(&t.backend);
    let model = info.model(&t.backend);
    let common = |op: &str| {
        vec![
            text("gen_ai.operation.name", op),
            text("gen_ai.provider.name", provider),
            text("gen_ai.system", provider),
            text("gen_ai.request.model", model),
        ]
    };
    // The calls by the turn (step, from 1) that made them; a call of no turn the transcript has
    // comes after the last.
    let turns = t.transcript.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
    let mut by_step: BTreeMap<usize, Vec<&crate::record::ScoredCall>> = BTreeMap::new();
    for c in &t.calls {
        let step = if (1..=turns).contains(&c.record.step) { c.record.step } else { turns + 1 };
        by_step.entry(step).or_default().push(c);
    }
    let mut out = vec![Value::Null];
    let mut clock = start;
    let mut turn = 0;
    let tool_span =
        |out: &mut Vec<Value>, c: &crate::record::ScoredCall, id: Option<&str>, at: u64| {
            let mut attributes = common("execute_tool");
            attributes.push(text("gen_ai.tool.name", &c.record.name));
            attributes.push(text("gen_ai.tool.type", "function"));
            if let Some(id) = id {
                attributes.push(text("gen_ai.tool.call.id", id));
            }
            if let Some(tool) = &c.record.tool_id {
                attributes.push(text("toolpick.tool_id", tool));
            }
            let status = serde_json::to_value(c.record.status).unwrap_or_default();
            attributes.push(text("toolpick.call.status", status.as_str().unwrap_or_default()));
            let n = out.len();
            out.push(json!({
                "traceId": trace,
                "spanId": span_id(n),
                "parentSpanId": root,
                "name": format!("execute_tool {}", c.record.name),
                "kind": KIND_INTERNAL,
                "startTimeUnixNano": at.to_string(),
                "endTimeUnixNano": at.to_string(),
                "attributes": attributes,
            }));
        };
    for m in &t.transcript {
        let Message::Assistant { tool_calls, .. } = m else { continue };
        turn += 1;
        let ms = match durations {
            Some(d) => d.requests_ms.get(turn - 1).copied().unwrap_or(0.0) as f64,
            None => 1.0,
        };
        let end = clock + (ms * NANOS_PER_MS) as u64;
        let reason = if turn == turns {
            finish_reason(t.stop_reason)
        } else if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let mut attributes = common("chat");
        attributes.push(texts("gen_ai.response.finish_reasons", &[reason]));
        let n = out.len();
        out.push(json!({
            "traceId": trace,
            "spanId": span_id(n),
            "parentSpanId": root,
            "name": format!("chat {model}"),
            "kind": KIND_CLIENT,
            "startTimeUnixNano": clock.to_string(),
            "endTimeUnixNano": end.to_string(),
            "attributes": attributes,
        }));
        clock = end;
        // The turn's calls made through `tool_calls` are matched to their wire ids in order; calls
        // parsed from the message's text have none.
        let mut wire = tool_calls.iter();
        for c in by_step.remove(&turn).unwrap_or_default() {
            let id = if c.record.from_text {
                None
            } else {
                wire.next().filter(|w| w.name == c.record.name).map(|w| w.id.as_str())
            };
            tool_span(&mut out, c, id, clock);
        }
    }
    for c in by_step.into_values().flatten() {
        tool_span(&mut out, c, None, clock);
    }
    let episode_end = match durations {
        Some(d) => clock.max(start + (d.episode_ms as f64 * NANOS_PER_MS) as u64),
        None => clock,
    };
    let mut attributes = common("invoke_agent");
    attributes.extend([
        text("gen_ai.agent.name", "toolpick"),
        text("gen_ai.conversation.id", &t.trial_id),
        int("gen_ai.usage.input_tokens", t.usage.prompt_tokens),
        int("gen_ai.usage.output_tokens", t.usage.completion_tokens),
        texts("gen_ai.response.finish_reasons", &[finish_reason(t.stop_reason)]),
        text("toolpick.trial_id", &t.trial_id),
        text("toolpick.dataset", &t.dataset),
        text("toolpick.catalog", &t.catalog),
        text("toolpick.variant", &t.variant),
        text("toolpick.layout", t.layout.as_str()),
        text("toolpick.backend", &t.backend),
        text("toolpick.task_id", &t.task_id),
        int("toolpick.trial", t.trial as u64),
        int("toolpick.steps", t.steps as u64),
        text("toolpick.stop_reason", t.stop_reason.as_str()),
        text("toolpick.query", &t.query),
    ]);
    let why = match &t.score.error_type {
        Some(e) if t.score.error_detail.is_empty() => e.as_str().to_string(),
        Some(e) => format!("{}: {}", e.as_str(), t.score.error_detail),
        None => String::new(),
    };
    let events = vec![
        evaluation(episode_end, "pass", t.score.pass, ["pass", "fail"], &why),
        evaluation(episode_end, "selection", t.score.selection_correct, ["correct", "wrong"], &why),
        evaluation(episode_end, "abstain", t.score.abstention_correct, ["correct", "wrong"], &why),
        evaluation(episode_end, "safety", !t.score.safety_violation, ["safe", "violation"], ""),
    ];
    let mut episode = json!({
        "traceId": trace,
        "spanId": root,
        "name": format!("invoke_agent {}", t.backend),
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": start.to_string(),
        "endTimeUnixNano": episode_end.to_string(),
        "attributes": attributes,
        "events": events,
    });
    if let Some(e) = &t.error {
        episode["status"] = json!({"code": STATUS_ERROR, "message": e});
    }
    out[0] = episode;
    out
}
