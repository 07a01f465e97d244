//! `--export inspect` and `toolpick export inspect` (issue 37 item 5), read back by inspect_ai itself
//! (the `inspect` tier: the pinned `inspect-ai` in `target/inspect-venv`): every log of the bundled run
//! reads with `read_eval_log`, whole and header-only; it has one sample per trial of its cell, counted
//! here from `trials.jsonl`; each sample's `pass` score is the record's; model and task are named as
//! documented; `list_eval_logs` (what `inspect view` lists a folder with) finds every file. Also: the
//! export is deterministic, bad input is refused (exit 2) with nothing written, and a secret in a tool
//! result reaches neither export in any encoding.

mod common;

use common::tiers::{self, Tier};
use common::{stderr, stdout, toolpick};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The bundled suite, run once for this binary with `--export inspect` (offline, no key).
fn bundled_run() -> &'static Path {
    static RUN: OnceLock<tempfile::TempDir> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let o = toolpick(
            &["run", "--out", "out", "--run-id", "r", "-q", "--export", "inspect"],
            dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        dir
    })
    .path()
}

/// Reads every log of a folder with inspect_ai and prints what the test compares, as JSON.
const READ_LOGS: &str = r#"
import json, sys, os
from inspect_ai.log import read_eval_log, list_eval_logs
folder = sys.argv[1]
out = {"logs": [], "listed": []}
for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    log = read_eval_log(path)
    head = read_eval_log(path, header_only=True)
    assert head.samples is None, "a header-only read has no samples"
    out["logs"].append({
        "file": name,
        "status": log.status,
        "task": log.eval.task,
        "model": log.eval.model,
        "metadata": log.eval.metadata,
        "header_task": head.eval.task,
        "header_samples": head.eval.dataset.samples,
        "header_scores": [s.name for s in head.results.scores],
        "samples": [
            {
                "trial_id": s.metadata["trial_id"],
                "id": s.id,
                "epoch": s.epoch,
                "input": s.input,
                "pass": s.scores["pass"].value,
                "messages": [m.role for m in s.messages],
                "tool_calls": sum(len(m.tool_calls or []) for m in s.messages if m.role == "assistant"),
            }
            for s in log.samples
        ],
    })
for info in list_eval_logs(folder):
    out["listed"].append({"name": os.path.basename(info.name), "task": info.task, "task_id": info.task_id})
print(json.dumps(out))
"#;

fn read_logs(venv: &Path, folder: &Path) -> Value {
    let o = Command::new(venv.join("bin/python"))
        .arg("-c")
        .arg(READ_LOGS)
        .arg(folder)
        .output()
        .unwrap();
    assert!(o.status.success(), "inspect_ai could not read the logs:\n{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `<kind>/<model>` per backend name, from the run's settings (the model's name for the baselines,
/// which have none).
fn model_names(run: &Path) -> BTreeMap<String, String> {
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    meta["config"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let name = m["name"].as_str().unwrap().to_string();
            let model = m["model"].as_str().unwrap_or(&name).to_string();
            (name, format!("{}/{model}", m["backend"].as_str().unwrap()))
        })
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    out.sort();
    out
}

#[test]
fn inspect_ai_reads_every_log_with_a_sample_per_trial_and_the_records_pass() {
    let Some(venv) = tiers::require(Tier::Inspect) else { return };
    let run = bundled_run().join("out/r");
    // The cells and their trials, from the records.
    let trials = common::trials_with_transcripts(&run);
    let mut cells: BTreeMap<(String, String, String, String), Vec<&Value>> = BTreeMap::new();
    for t in &trials {
        let s = |k: &str| t[k].as_str().unwrap().to_string();
        cells.entry((s("dataset"), s("variant"), s("layout"), s("backend"))).or_default().push(t);
    }
    assert!(cells.len() >= 8, "the bundled run has {} cells", cells.len());
    let models = model_names(&run);
    let read = read_logs(&venv, &run.join("inspect"));
    let logs = read["logs"].as_array().unwrap();
    assert_eq!(logs.len(), cells.len(), "one log per cell");
    let mut seen = BTreeMap::new();
    for log in logs {
        let m = &log["metadata"];
        let cell = [&m["dataset"], &m["variant"], &m["layout"], &m["backend"]]
            .map(|v| v.as_str().unwrap().to_string());
        let key = (cell[0].clone(), cell[1].clone(), cell[2].clone(), cell[3].clone());
        let records = &cells[&key];
        assert_eq!(log["status"], "success");
        assert_eq!(log["task"], format!("toolpick/{}", key.0));
        assert_eq!(log["header_task"], log["task"], "the header-only read agrees");
        assert_eq!(log["model"], models[&key.3].as_str(), "{key:?}");
        assert_eq!(
            log["header_scores"],
            serde_json::json!(["pass", "selection", "abstain", "safety"])
        );
        let samples = log["samples"].as_array().unwrap();
        assert_eq!(samples.len(), records.len(), "{key:?}: a sample per trial");
        assert_eq!(log["header_samples"], records.len(), "{key:?}: the dataset's sample count");
        let by_id: BTreeMap<&str, &Value> =
            samples.iter().map(|s| (s["trial_id"].as_str().unwrap(), s)).collect();
        for r in records {
            let s = by_id[r["trial_id"].as_str().unwrap()];
            let pass = r["score"]["pass"].as_bool().unwrap();
            assert_eq!(s["pass"], if pass { "C" } else { "I" }, "{}", r["trial_id"]);
            assert_eq!(s["id"], r["task_id"]);
            assert_eq!(s["epoch"], r["trial"].as_u64().unwrap() + 1);
            assert_eq!(s["input"], r["query"]);
            // Every message and tool call of the transcript is there, in order.
            let roles: Vec<&str> = r["transcript"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .collect();
            assert_eq!(s["messages"], serde_json::json!(roles), "{}", r["trial_id"]);
            let calls: usize = r["transcript"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["tool_calls"].as_array().map_or(0, Vec::len))
                .sum();
            assert_eq!(s["tool_calls"], calls, "{}", r["trial_id"]);
        }
        seen.insert(key, log["file"].as_str().unwrap().to_string());
    }
    assert_eq!(seen.len(), cells.len(), "every cell has its own log");
    // What `inspect view` lists: every file, its task and id read from the name.
    let listed = read["listed"].as_array().unwrap();
    assert_eq!(listed.len(), logs.len(), "list_eval_logs finds every log: {listed:?}");
    for l in listed {
        assert_eq!(l["task"], "toolpick-starter", "{l}");
        assert!(!l["task_id"].as_str().unwrap().is_empty(), "{l}");
    }
}

#[test]
fn the_export_command_writes_the_same_bytes_as_the_flag_and_again_the_same() {
    let run = bundled_run().join("out/r");
    let cwd = bundled_run();
    let flag = files(&run.join("inspect"));
    assert!(!flag.is_empty());
    for out in ["again1", "again2"] {
        let o = toolpick(&["export", "inspect", "out/r", "--out", out], cwd);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!("wrote {} inspect file(s)", flag.len())),
            "{}",
            stdout(&o)
        );
        let again = files(&cwd.join(out));
        assert_eq!(again.len(), flag.len(), "no temporary file is left: {again:?}");
        for (a, b) in flag.iter().zip(&again) {
            assert_eq!(a.file_name(), b.file_name());
            assert!(
                std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
                "{} differs",
                b.display()
            );
        }
    }
}

#[test]
fn bad_input_is_refused_with_exit_2_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let o = toolpick(&["export", "inspect", "no-such-run", "--out", "x"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no-such-run"), "names the path: {}", stderr(&o));
    assert!(!dir.path().join("x").exists());
    // A format that does not exist, on the flag.
    let o = toolpick(&["report", "no-such-run", "--export", "promptfoo"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--export"), "names the flag: {}", stderr(&o));
    // A run whose transcripts are not in the trials' order cannot be exported half-way.
    let run = bundled_run().join("out/r");
    let broken = dir.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    for f in ["run.json", "trials.jsonl", "tools.json"] {
        std::fs::copy(run.join(f), broken.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(run.join("transcripts.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(0, 1);
    std::fs::write(broken.join("transcripts.jsonl"), lines.join("\n") + "\n").unwrap();
    let o = toolpick(&["export", "otel", "broken", "--out", "traces.json"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("transcripts.jsonl") && stderr(&o).contains(":1"),
        "names file and line: {}",
        stderr(&o)
    );
    assert!(!dir.path().join("traces.json").exists(), "nothing written");
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
}

const SECRET: &str = "sk-live-ab/cd/ef/0123456789xyz";

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// A secret a tool result leaked (planted into a finished run's transcript and final answer, in
/// several encodings) reaches neither export, in any encoding, when the run's models read it from the
/// variable their settings name.
#[test]
fn a_secret_in_a_tool_result_reaches_neither_export_in_any_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let run = bundled_run().join("out/r");
    let leaky = dir.path().join("leaky");
    std::fs::create_dir_all(&leaky).unwrap();
    std::fs::copy(run.join("tools.json"), leaky.join("tools.json")).unwrap();
    // The models read their key from a variable of another name than OPENAI_API_KEY.
    let mut meta: Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    for m in meta["config"]["models"].as_array_mut().unwrap() {
        m["api_key_env"] = "EXPORT_TEST_KEY".into();
    }
    std::fs::write(leaky.join("run.json"), serde_json::to_vec_pretty(&meta).unwrap()).unwrap();
    let percent: String = SECRET.bytes().map(|b| format!("%{b:02X}")).collect();
    let hex: String = SECRET.bytes().map(|b| format!("{b:02x}")).collect();
    let leak = format!(
        "token={SECRET}; url=https://x/?k={percent}; basic={}; hex={hex}",
        base64(format!("user:{SECRET}").as_bytes())
    );
    let text = std::fs::read_to_string(run.join("transcripts.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut first: Value = serde_json::from_str(&lines[0]).unwrap();
    first["transcript"].as_array_mut().unwrap().push(serde_json::json!({
        "role": "tool", "tool_call_id": "leak", "name": "leak", "content": leak,
    }));
    lines[0] = serde_json::to_string(&first).unwrap();
    std::fs::write(leaky.join("transcripts.jsonl"), lines.join("\n") + "\n").unwrap();
    // And in the query of the same trial (the traces carry queries, not tool output).
    let text = std::fs::read_to_string(run.join("trials.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut record: Value = serde_json::from_str(&lines[0]).unwrap();
    record["query"] = format!("{} {leak}", record["query"].as_str().unwrap()).into();
    lines[0] = serde_json::to_string(&record).unwrap();
    std::fs::write(leaky.join("trials.jsonl"), lines.join("\n") + "\n").unwrap();
    let run_export = |format: &str, out: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
            .args(["export", format, "leaky", "--out", out])
            .env("EXPORT_TEST_KEY", SECRET)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    let outputs = [run_export("inspect", "inspect"), run_export("otel", "traces.json")];
    let mut written: Vec<PathBuf> = files(&dir.path().join("inspect"));
    written.push(dir.path().join("traces.json"));
    let needles = [
        SECRET.to_string(),
        SECRET.replace('/', "\\/"),
        percent.clone(),
        percent.to_lowercase(),
        hex.clone(),
        hex.to_uppercase(),
        base64(format!("user:{SECRET}").as_bytes())[8..20].to_string(),
        SECRET.chars().map(|c| format!("\\u{:04x}", c as u32)).collect(),
    ];
    let mut marked = Vec::new();
    for f in &written {
        let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
        for n in &needles {
            assert!(!text.contains(n.as_str()), "`{n}` (a form of the secret) in {}", f.display());
        }
        if text.contains("[REDACTED]") {
            marked.push(f.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    for o in &outputs {
        for n in &needles {
            assert!(!stdout(o).contains(n.as_str()) && !stderr(o).contains(n.as_str()));
        }
    }
    // The planted text was exported, redacted: in the log of the first trial's cell and the traces.
    assert_eq!(marked.len(), 2, "the redaction mark shows where the secret was: {marked:?}");
    assert!(marked.contains(&"traces.json".to_string()), "{marked:?}");
}
