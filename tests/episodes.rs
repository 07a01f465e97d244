//! The agent loop's bookkeeping end to end (issue 13, parts 2, 4 and 6): the real binary against the
//! mock endpoint over HTTP, started in-process on a loopback port. Messages cut off by `max_tokens`
//! (in three providers' spellings, as tool calls and as text) and filtered messages, loops of the same
//! call, the same call several times in one message, and calls to invented names in the rates.

mod common;
use common::*;
use polars_io::SerReader;
use polars_io::parquet::read::ParquetReader;
use serde_json::Value;
use toolpick::mock::{self, Fault, MockConfig};

/// The mock endpoint and the small catalog; runs of the `good` variant without the cache, in the
/// flat layout unless told otherwise.
fn start(config: MockConfig) -> MockEnv {
    MockEnv::start(config, &[&["--variants", "good"], &["--no-cache"], &["--layouts", "flat"]])
}

/// Every request gets `fault`.
fn always(fault: Fault) -> MockConfig {
    MockConfig { faults: vec![(fault, 1)], ..Default::default() }
}

/// A run that must succeed, and its trials.
fn run_ok(env: &MockEnv, run_id: &str, extra: &[&str]) -> Vec<Value> {
    env.run_ok(run_id, extra);
    env.trials(run_id)
}

fn task<'a>(trials: &'a [Value], id: &str) -> &'a Value {
    trials.iter().find(|t| t["task_id"] == id).unwrap_or_else(|| panic!("no trial of {id}"))
}

fn calls(t: &Value) -> &Vec<Value> {
    t["calls"].as_array().unwrap()
}

/// A call record's status counts as an attempt (docs/metrics.md): everything but navigation.
fn is_attempt(c: &Value) -> bool {
    matches!(
        c["record"]["status"].as_str().unwrap(),
        "executed" | "rejected" | "malformed" | "invented"
    )
}

#[test]
fn a_tool_call_cut_off_by_max_tokens_is_a_truncated_attempt_in_every_providers_spelling() {
    for spelling in ["length", "max_tokens", "MAX_TOKENS"] {
        let env = start(MockConfig { length_reason: spelling.into(), ..always(Fault::CutOff) });
        let trials = run_ok(&env, "r", &[]);
        let w1 = task(&trials, "w1");
        assert!(
            w1["error"].is_null(),
            "{spelling}: a cut-off answer is the model's, not an infrastructure error: {w1}"
        );
        assert_eq!(w1["stop_reason"], "truncated", "{spelling}");
        assert_eq!(
            w1["steps"], 1,
            "{spelling}: nothing in the message could run, so the episode ended"
        );
        let c = &calls(w1)[0]["record"];
        assert_eq!(
            (&c["status"], &c["truncated"], &c["tool_id"]),
            (&"malformed".into(), &true.into(), &"weather/weather_now/get_current_weather".into()),
            "{spelling}: {c}"
        );
        assert_eq!(w1["score"]["error_type"], "malformed_call", "{spelling}");
        assert!(
            w1["score"]["error_detail"].as_str().unwrap().contains("cut off by max_tokens"),
            "{spelling}: {}",
            w1["score"]
        );
        assert_eq!(
            w1["score"]["abstention_correct"], true,
            "{spelling}: an attempt, not an abstention"
        );
        // The abstain task's answer was text, cut: no call, so it still abstained.
        let a1 = task(&trials, "a1");
        assert_eq!(
            (&a1["stop_reason"], &a1["score"]["pass"]),
            (&"truncated".into(), &true.into()),
            "{spelling}"
        );
        // trials.csv says the same.
        let rows = env.csv("r", "trials.csv");
        assert!(rows.iter().all(|r| r["stop_reason"] == "truncated"), "{spelling}");
    }
}

#[test]
fn a_text_call_cut_off_by_max_tokens_is_a_truncated_attempt() {
    let env = start(always(Fault::CutOffText));
    let trials = run_ok(&env, "text", &["--parse-text-calls"]);
    for id in ["w1", "w2", "m1"] {
        let t = task(&trials, id);
        let c = &calls(t)[0]["record"];
        assert_eq!(
            (&c["from_text"], &c["truncated"], &c["status"]),
            (&true.into(), &true.into(), &"malformed".into()),
            "{id}: {c}"
        );
        assert_eq!(t["score"]["error_type"], "malformed_call", "{id}");
        assert!(
            t["score"]["error_detail"].as_str().unwrap().contains("cut off by max_tokens"),
            "{id}: {}",
            t["score"]
        );
        assert_eq!(
            (&t["score"]["abstention_correct"], &t["stop_reason"]),
            (&true.into(), &"truncated".into()),
            "{id}"
        );
    }
    // Without --parse-text-calls text is never a call, but the trial still says the answer was cut off.
    let trials = run_ok(&env, "plain", &[]);
    let w1 = task(&trials, "w1");
    assert!(calls(w1).is_empty());
    assert_eq!(w1["stop_reason"], "truncated");
    assert!(
        w1["score"]["error_detail"].as_str().unwrap().contains("cut off by max_tokens"),
        "{}",
        w1["score"]
    );
}

#[test]
fn a_filtered_answer_has_its_own_stop_reason() {
    let env = start(always(Fault::ContentFilter));
    let trials = run_ok(&env, "r", &[]);
    for t in &trials {
        assert_eq!(
            (&t["stop_reason"], t["steps"].as_u64()),
            (&"content_filter".into(), Some(1)),
            "{}",
            t["task_id"]
        );
        assert!(t["error"].is_null() && calls(t).is_empty());
    }
    assert!(
        task(&trials, "w1")["score"]["error_detail"].as_str().unwrap().contains("content filter")
    );
    assert_eq!(
        task(&trials, "a1")["score"]["pass"],
        true,
        "nothing was called on a task needing no call"
    );
}

#[test]
fn the_same_call_in_turn_after_turn_stops_the_episode() {
    let env = start(always(Fault::RepeatCall));
    let by_default = run_ok(&env, "default", &[]);
    let requests = env.server.requests();
    let w1 = task(&by_default, "w1");
    assert_eq!(
        (&w1["stop_reason"], w1["steps"].as_u64(), calls(w1).len()),
        (&"repeated_call".into(), Some(3), 3),
        "{w1}"
    );
    let first = &calls(w1)[0]["record"];
    assert!(
        calls(w1).iter().all(|c| c["record"]["name"] == first["name"]
            && c["record"]["arguments"] == first["arguments"])
    );
    // One request per step: nothing was asked after the loop was noticed.
    assert_eq!(requests, by_default.iter().map(|t| t["steps"].as_u64().unwrap()).sum::<u64>());

    let off = run_ok(&env, "off", &["--repeat-limit", "0"]);
    assert_eq!(
        (&task(&off, "w1")["stop_reason"], task(&off, "w1")["steps"].as_u64()),
        (&"step_limit".into(), Some(8))
    );
    std::fs::write(env.dir.path().join("exp.toml"), "repeat_limit = 2\n").unwrap();
    let two = run_ok(&env, "two", &["--config", "exp.toml"]);
    assert_eq!(
        (&task(&two, "w1")["stop_reason"], task(&two, "w1")["steps"].as_u64()),
        (&"repeated_call".into(), Some(2))
    );

    // One turn is no repetition: 1 is refused, in the flag and in the file (exit 2, naming them).
    let o = env.run("bad", &["--repeat-limit", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--repeat-limit"), "{}", stderr(&o));
    std::fs::write(env.dir.path().join("bad.toml"), "seed = 0\nrepeat_limit = 1\n").unwrap();
    let o = env.run("bad", &["--config", "bad.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad.toml:2") && stderr(&o).contains("repeat_limit"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_same_call_several_times_in_one_message_runs_once_and_is_counted() {
    let env = start(always(Fault::DuplicateCalls));
    let trials = run_ok(&env, "r", &[]);
    let w1 = task(&trials, "w1");
    let flags: Vec<bool> =
        calls(w1).iter().map(|c| c["record"]["duplicate"].as_bool().unwrap_or(false)).collect();
    assert_eq!(
        flags,
        [false, true, true],
        "the first of {} copies ran, the others are marked",
        mock::DUPLICATES
    );
    assert_eq!(w1["duplicate_calls"], 2);
    // Every copy got an answer (the first one's).
    let results: Vec<&Value> = w1["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .take(3)
        .collect();
    assert!(results.len() == 3 && results.iter().all(|m| m["content"] == results[0]["content"]));

    // Counted from the records here: the trials.csv and trials.parquet columns and the summary mean.
    let counted: Vec<u64> = trials
        .iter()
        .map(|t| calls(t).iter().filter(|c| c["record"]["duplicate"] == true).count() as u64)
        .collect();
    let rows = env.csv("r", "trials.csv");
    assert_eq!(
        rows.iter().map(|r| r["duplicate_calls"].parse::<u64>().unwrap()).collect::<Vec<_>>(),
        counted
    );
    let parquet = ParquetReader::new(
        std::fs::File::open(env.dir.path().join("out/r/trials.parquet")).unwrap(),
    )
    .finish()
    .unwrap();
    let column = parquet.column("duplicate_calls").unwrap().u64().unwrap().clone();
    assert_eq!((0..parquet.height()).map(|i| column.get(i).unwrap()).collect::<Vec<_>>(), counted);
    let mean: f64 = env.csv("r", "summary.csv")[0]["mean_duplicate_calls"].parse().unwrap();
    assert!(
        (mean - counted.iter().sum::<u64>() as f64 / counted.len() as f64).abs() < 1e-6,
        "{mean}"
    );
}

#[test]
fn an_invented_only_call_is_an_attempt_in_abstention_false_refusal_and_abandonment() {
    let env = start(always(Fault::InventedTool));
    let trials = run_ok(&env, "r", &["--layouts", "flat,progressive"]);
    let invented_only = |t: &Value| {
        !calls(t).is_empty()
            && calls(t)
                .iter()
                .filter(|c| is_attempt(c))
                .all(|c| c["record"]["status"] == "invented")
    };
    assert!(
        trials
            .iter()
            .filter(|t| t["layout"] == "progressive")
            .any(|t| invented_only(t) && !t["expected"].as_array().unwrap().is_empty()),
        "the case under test occurs"
    );
    for row in env.csv("r", "summary.csv") {
        let cell: Vec<&Value> =
            trials.iter().filter(|t| t["layout"] == row["layout"].as_str()).collect();
        let attempted = |t: &Value| calls(t).iter().any(is_attempt);
        let benign: Vec<&&Value> = cell
            .iter()
            .filter(|t| matches!(t["kind"].as_str().unwrap(), "single" | "multi" | "parallel"))
            .collect();
        let needs_call = |t: &Value| t["kind"] != "abstain" && t["kind"] != "refuse";
        let rate = |num: usize, den: usize| {
            if den == 0 { String::new() } else { format!("{:.6}", num as f64 / den as f64) }
        };
        // False refusal: benign tasks where nothing was attempted.
        assert_eq!(
            row["false_refusal_rate"],
            rate(benign.iter().filter(|t| !attempted(t)).count(), benign.len()),
            "{}",
            row["layout"]
        );
        // Abstention accuracy: over abstain tasks, nothing attempted; and per trial the call/no-call
        // decision is right when something was attempted exactly where a call is needed.
        let abstain: Vec<&&Value> = cell.iter().filter(|t| t["kind"] == "abstain").collect();
        assert_eq!(
            row["abstention_accuracy"],
            rate(abstain.iter().filter(|t| !attempted(t)).count(), abstain.len()),
            "{}",
            row["layout"]
        );
        for t in &cell {
            assert_eq!(
                t["score"]["abstention_correct"],
                attempted(t) == needs_call(t),
                "{}",
                t["trial_id"]
            );
        }
        // Abandonment (hiding layouts): a gold tool existed, the agent answered and attempted nothing.
        if row["layout"] == "progressive" {
            let hides: Vec<&&Value> =
                cell.iter().filter(|t| !t["expected"].as_array().unwrap().is_empty()).collect();
            let abandoned =
                hides.iter().filter(|t| !attempted(t) && t["stop_reason"] == "answered").count();
            assert_eq!(row["abandonment_rate"], rate(abandoned, hides.len()));
        }
    }
}
