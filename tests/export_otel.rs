//! `--export otel` and `toolpick export otel` (issue 37 item 5): the bundled run's traces parse as an
//! OTLP `ExportTraceServiceRequest` with protobuf's own JSON parser, strictly (an unknown field fails),
//! in the `inspect` tier's venv (pinned `opentelemetry-proto` and `protobuf`); each trial is one trace
//! whose spans are counted here from the records (an `invoke_agent` span, a `chat` span per assistant
//! message, an `execute_tool` span per recorded call), with the GenAI attribute names and a
//! `gen_ai.evaluation.result` event per score that says what the record says. The ids and times are
//! deterministic: the command writes the flag's bytes again.

mod common;

use common::tiers::{self, Tier};
use common::{stderr, toolpick};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

fn bundled_run() -> &'static Path {
    static RUN: OnceLock<tempfile::TempDir> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let o = toolpick(
            &["run", "--out", "out", "--run-id", "r", "-q", "--export", "otel"],
            dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        dir
    })
    .path()
}

/// Parses the file with protobuf's JSON parser into the collector's request (OTLP/JSON writes ids as
/// hex, where protobuf's JSON mapping of `bytes` is base64: the ids are converted first, as OTLP/JSON
/// readers do), then prints per trace what the test compares, as JSON.
const PARSE: &str = r#"
import json, sys, base64
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
doc = json.load(open(sys.argv[1]))
for rs in doc["resourceSpans"]:
    for ss in rs["scopeSpans"]:
        for span in ss["spans"]:
            for k in ("traceId", "spanId", "parentSpanId"):
                if k in span:
                    span[k] = base64.b64encode(bytes.fromhex(span[k])).decode()
request = json_format.Parse(json.dumps(doc), ExportTraceServiceRequest(), ignore_unknown_fields=False)
def value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, kind)
traces = {}
for rs in request.resource_spans:
    resource = {a.key: value(a.value) for a in rs.resource.attributes}
    for ss in rs.scope_spans:
        for span in ss.spans:
            assert len(span.trace_id) == 16 and len(span.span_id) == 8, span.name
            assert span.end_time_unix_nano >= span.start_time_unix_nano, span.name
            t = traces.setdefault(span.trace_id.hex(), {"ops": {}, "root": None, "parents": set()})
            attrs = {a.key: value(a.value) for a in span.attributes}
            op = attrs["gen_ai.operation.name"]
            t["ops"][op] = t["ops"].get(op, 0) + 1
            if op == "invoke_agent":
                assert not span.parent_span_id
                t["root"] = {
                    "span_id": span.span_id.hex(),
                    "attrs": attrs,
                    "events": [
                        {a.key: value(a.value) for a in e.attributes}
                        for e in span.events if e.name == "gen_ai.evaluation.result"
                    ],
                    "start": span.start_time_unix_nano,
                }
            else:
                t["parents"].add(span.parent_span_id.hex())
                if op == "execute_tool":
                    assert attrs["gen_ai.tool.name"], attrs
for t in traces.values():
    t["parents"] = sorted(t["parents"])
print(json.dumps({"resource": resource, "traces": traces}))
"#;

#[test]
fn the_traces_parse_strictly_as_otlp_with_a_span_per_turn_and_call_of_each_trial() {
    let Some(venv) = tiers::require(Tier::Inspect) else { return };
    let run = bundled_run().join("out/r");
    let o = Command::new(venv.join("bin/python"))
        .arg("-c")
        .arg(PARSE)
        .arg(run.join("otel-traces.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "protobuf could not parse the traces:\n{}", stderr(&o));
    let parsed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(parsed["resource"]["service.name"], "toolpick");
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(parsed["resource"]["toolpick.run_id"], meta["run_id"]);
    let start_ns = meta["started_unix"].as_u64().unwrap() * 1_000_000_000;
    let traces: BTreeMap<String, &Value> = parsed["traces"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| (t["root"]["attrs"]["toolpick.trial_id"].as_str().unwrap().to_string(), t))
        .collect();
    let trials = common::trials_with_transcripts(&run);
    assert_eq!(traces.len(), trials.len(), "a trace per trial");
    let mut tool_spans = 0;
    for r in &trials {
        let id = r["trial_id"].as_str().unwrap();
        let t = traces[id];
        let turns =
            r["transcript"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        let calls = r["calls"].as_array().unwrap().len();
        tool_spans += calls;
        let ops = &t["ops"];
        assert_eq!(ops["invoke_agent"], 1, "{id}");
        assert_eq!(
            ops.get("chat").map_or(0, |n| n.as_u64().unwrap() as usize),
            turns,
            "{id}: chat spans"
        );
        assert_eq!(
            ops.get("execute_tool").map_or(0, |n| n.as_u64().unwrap() as usize),
            calls,
            "{id}: execute_tool spans"
        );
        if turns + calls > 0 {
            assert_eq!(
                t["parents"],
                serde_json::json!([t["root"]["span_id"]]),
                "{id}: children of the episode"
            );
        }
        let root = &t["root"];
        assert_eq!(root["start"], start_ns, "{id}: a trace starts at the run's start");
        let attrs = &root["attrs"];
        assert_eq!(
            attrs["gen_ai.request.model"], r["backend"],
            "{id}: a baseline's model is its name"
        );
        assert_eq!(attrs["gen_ai.usage.input_tokens"], r["usage"]["prompt_tokens"], "{id}");
        assert_eq!(attrs["gen_ai.usage.output_tokens"], r["usage"]["completion_tokens"], "{id}");
        let events: BTreeMap<&str, &Value> = root["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["gen_ai.evaluation.name"].as_str().unwrap(), e))
            .collect();
        let score = &r["score"];
        for (name, ok) in [
            ("pass", score["pass"].as_bool().unwrap()),
            ("selection", score["selection_correct"].as_bool().unwrap()),
            ("abstain", score["abstention_correct"].as_bool().unwrap()),
            ("safety", !score["safety_violation"].as_bool().unwrap_or(false)),
        ] {
            assert_eq!(
                events[name]["gen_ai.evaluation.score.value"],
                if ok { 1.0 } else { 0.0 },
                "{id}: {name}"
            );
        }
        assert_eq!(
            events["pass"]["gen_ai.evaluation.score.label"],
            if score["pass"] == true { "pass" } else { "fail" }
        );
    }
    assert!(tool_spans > trials.len(), "the run made calls ({tool_spans})");
}

#[test]
fn the_export_command_writes_the_flags_bytes_again() {
    let cwd = bundled_run();
    let flag = std::fs::read(cwd.join("out/r/otel-traces.json")).unwrap();
    let o = toolpick(&["export", "otel", "out/r", "--out", "again.json"], cwd);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        flag == std::fs::read(cwd.join("again.json")).unwrap(),
        "same ids, same times, same bytes"
    );
    // A folder is not a file name.
    std::fs::create_dir_all(cwd.join("folder")).unwrap();
    let o = toolpick(&["export", "otel", "out/r", "--out", "folder"], cwd);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("folder"), "{}", stderr(&o));
}
