//! The oracle playing through the served MCP interface (`--backends mcp-oracle`: an MCP client over
//! loopback HTTP, seeing tools and results only as the wire carries them) scores what the in-process
//! oracle scores on the bundled suite, in every variant and layout — trial for trial the same calls,
//! the same results, the same scores.
//!
//! Steps are the one thing allowed to differ: MCP has no turns, so a turn of three calls is three steps
//! when served (the step limit is raised to fit the suite's longest progressive episode that way).

use serde_json::Value;
use std::collections::HashMap;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_toolpick");

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A call record without its step number.
fn stepless(calls: &Value) -> Vec<Value> {
    calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c["record"].as_object_mut().unwrap().remove("step");
            c
        })
        .collect()
}

/// The tool results of a transcript, in order.
fn results(transcript: &Value) -> Vec<String> {
    transcript
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_oracle_served_over_mcp_scores_what_the_in_process_oracle_scores_trial_for_trial() {
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(BIN)
        .args([
            "run",
            "--backends",
            "oracle,mcp-oracle",
            "--variants",
            "good,bad",
            "--layouts",
            "flat,progressive,progressive-oss,search",
            "--max-steps",
            "12",
            "--quiet",
        ])
        .arg("--out")
        .arg(out.path())
        .args(["--run-id", "r"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let dir = out.path().join("r");
    let trials = lines(&dir.join("trials.jsonl"));
    let transcripts: HashMap<String, Value> = lines(&dir.join("transcripts.jsonl"))
        .into_iter()
        .map(|t| (t["trial_id"].as_str().unwrap().to_string(), t["transcript"].clone()))
        .collect();
    let key = |t: &Value| {
        (
            t["variant"].to_string(),
            t["layout"].to_string(),
            t["task_id"].to_string(),
            t["trial"].to_string(),
        )
    };
    let served: HashMap<_, &Value> =
        trials.iter().filter(|t| t["backend"] == "mcp-oracle").map(|t| (key(t), t)).collect();
    let local: Vec<&Value> = trials.iter().filter(|t| t["backend"] == "oracle").collect();
    assert_eq!(local.len(), served.len());
    assert!(local.len() >= 8 * 300, "the bundled suite shrank: {} trials per backend", local.len());
    let mut layouts = std::collections::BTreeSet::new();
    for l in &local {
        let s =
            served.get(&key(l)).unwrap_or_else(|| panic!("no served trial for {}", l["trial_id"]));
        let id = l["trial_id"].as_str().unwrap();
        assert_eq!(
            s["score"]["pass"], true,
            "{}: the served oracle failed: {}",
            s["trial_id"], s["score"]
        );
        assert_eq!(s["score"], l["score"], "{id}");
        assert_eq!(stepless(&s["calls"]), stepless(&l["calls"]), "{id}");
        assert_eq!(s["stop_reason"], l["stop_reason"], "{id}");
        assert_eq!(s["final_answer"], l["final_answer"], "{id}");
        let (ls, ss) = (&transcripts[id], &transcripts[s["trial_id"].as_str().unwrap()]);
        assert_eq!(results(ss), results(ls), "{id}: the served results differ");
        assert!(s["steps"].as_u64() >= l["steps"].as_u64(), "{id}");
        layouts.insert(l["layout"].as_str().unwrap().to_string());
    }
    assert_eq!(layouts.len(), 4);
}
