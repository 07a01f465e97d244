//! The `openai-responses` backend end to end, offline: the real binary speaks OpenAI's Responses
//! protocol to the mock endpoint (`POST /v1/responses`, started in-process on a loopback port) — the
//! same answers as over chat completions in every layout, the runner's retries, an answer cut off by
//! `max_output_tokens` or filtered, the key over this protocol, and byte-identical reruns.

mod common;
use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::process::{Command, Output};
use toolpick::mock::{Fault, MockConfig};

/// `toolpick run` of the small catalog by `--backends <backends>` against the mock's Responses route,
/// into `out/<run_id>`, quiet, no cache.
fn command(env: &MockEnv, backends: &str, run_id: &str, extra: &[&str]) -> Command {
    let url = env.server.base_url();
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    c.args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", backends])
        .args(["--model", "resp-mock", "--base-url", &url, "--out", "out", "--run-id", run_id])
        .args(["-q", "--no-cache", "--request-timeout", "5"])
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .current_dir(env.dir.path());
    c
}

fn run_ok(env: &MockEnv, backends: &str, run_id: &str, extra: &[&str]) -> Output {
    let o = command(env, backends, run_id, extra).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

#[test]
fn over_the_responses_protocol_the_mock_answers_as_over_chat_completions_in_every_layout() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    let layouts = "flat,progressive,progressive-oss,search";
    run_ok(&env, "openai-responses", "r", &["--layouts", layouts]);
    env.run_ok("o", &["--layouts", layouts, "--no-cache"]);
    let metrics = ["n", "selection_accuracy", "pass_at_1", "abstention_accuracy", "mean_steps"];
    let key = |r: &Row| (r["variant"].clone(), r["layout"].clone());
    let chat: HashMap<_, _> =
        summary_rows(&env.path("out/o")).into_iter().map(|r| (key(&r), r)).collect();
    let rows = summary_rows(&env.path("out/r"));
    assert_eq!(rows.len(), 8, "two variants × four layouts");
    for r in &rows {
        for col in metrics {
            assert_eq!(r[col], chat[&key(r)][col], "{col} of {:?}", key(r));
        }
        assert_eq!(r["infra_errors"], "0");
    }
    // The mock counts the tool definitions as cached input after an episode's first request; the
    // protocol's input_tokens include them.
    let trials = env.trials("r");
    let multi =
        trials.iter().find(|t| t["steps"].as_u64() > Some(1)).expect("a multi-step episode");
    let u = &multi["usage"];
    assert!(u["cached_tokens"].as_u64().unwrap() > 0, "{u}");
    assert!(u["prompt_tokens"].as_u64().unwrap() > u["cached_tokens"].as_u64().unwrap(), "{u}");
    assert!(u.get("cache_write_tokens").is_none(), "{u}");
}

#[test]
fn transient_faults_of_the_responses_route_are_retried_and_never_reach_the_scores() {
    let config = MockConfig {
        faults: vec![(Fault::RateLimit, 3), (Fault::ServerError, 5), (Fault::Truncated, 7)],
        retry_after_s: 0,
        ..Default::default()
    };
    let env = MockEnv::start(config, &[]);
    // One request at a time, so no request can exhaust its five attempts (see tests/anthropic.rs).
    run_ok(&env, "lexical,openai-responses", "f", &["--layouts", "flat", "--concurrency", "1"]);
    let rows = summary_rows(&env.path("out/f"));
    for r in rows.iter().filter(|r| r["backend"] == "resp-mock") {
        let l = rows
            .iter()
            .find(|l| l["backend"] == "lexical" && l["variant"] == r["variant"])
            .unwrap();
        assert_eq!(r["pass_at_1"], l["pass_at_1"]);
        assert_eq!(r["infra_errors"], "0");
    }
    let run: Value =
        serde_json::from_slice(&std::fs::read(env.path("out/f/run.json")).unwrap()).unwrap();
    let stats = &run["endpoints"]["resp-mock"];
    assert!(stats["retries"].as_u64().unwrap() >= 3, "{stats}");
    assert_eq!(stats["failures"], 0, "{stats}");
}

#[test]
fn an_answer_incomplete_for_max_output_tokens_or_content_filter_stops_the_episode_as_such() {
    let env =
        MockEnv::start(MockConfig { faults: vec![(Fault::CutOff, 1)], ..Default::default() }, &[]);
    run_ok(&env, "openai-responses", "cut", &["--layouts", "flat", "--variants", "good"]);
    let trials = env.trials("cut");
    let w1 = trials.iter().find(|t| t["task_id"] == "w1").unwrap();
    assert_eq!(w1["stop_reason"], "truncated", "{w1}");
    assert_eq!(w1["calls"][0]["record"]["truncated"], true, "{}", w1["calls"]);

    let env = MockEnv::start(
        MockConfig { faults: vec![(Fault::ContentFilter, 1)], ..Default::default() },
        &[],
    );
    run_ok(&env, "openai-responses", "filtered", &["--layouts", "flat", "--variants", "good"]);
    for t in env.trials("filtered") {
        assert_eq!(t["stop_reason"], "content_filter", "{}", t["task_id"]);
    }
}

#[test]
fn the_key_is_read_from_openai_api_key_and_the_preflight_names_it() {
    let env = MockEnv::start(
        MockConfig { require_key: Some("sk-right".into()), ..Default::default() },
        &[],
    );
    let o = command(&env, "openai-responses", "nokey", &["--layouts", "flat"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("$OPENAI_API_KEY is not set"), "{}", stderr(&o));
    let o = command(&env, "openai-responses", "key", &["--layouts", "flat"])
        .env("OPENAI_API_KEY", "sk-right")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(env.trials("key").len(), 8);
}

#[test]
fn the_same_inputs_give_byte_identical_trial_records() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    run_ok(&env, "openai-responses", "a", &["--layouts", "flat,progressive"]);
    run_ok(&env, "openai-responses", "b", &["--layouts", "flat,progressive"]);
    for file in ["trials.jsonl", "transcripts.jsonl"] {
        let a = std::fs::read(env.path(&format!("out/a/{file}"))).unwrap();
        let b = std::fs::read(env.path(&format!("out/b/{file}"))).unwrap();
        assert!(!a.is_empty());
        assert!(a == b, "{file} differs between two identical runs");
    }
}

#[test]
fn the_example_experiment_runs_against_the_mock_with_the_key_from_openai_api_key() {
    let env = MockEnv::start(
        MockConfig { require_key: Some("sk-example".into()), ..Default::default() },
        &[],
    );
    let config = repo().join("examples/openai-responses.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--config", config.to_str().unwrap(), "--base-url", &env.server.base_url()])
        .args([
            "--limit",
            "3",
            "--out",
            "out",
            "--run-id",
            "ex",
            "-q",
            "--no-cache",
            "--trials",
            "1",
        ])
        .env("OPENAI_API_KEY", "sk-example")
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = env.trials("ex");
    assert_eq!(trials.len(), 3 * 2 * 2, "3 tasks × 2 variants × 2 layouts");
    assert!(trials.iter().all(|t| t["backend"] == "gpt-4.1-responses" && t["error"].is_null()));
}
