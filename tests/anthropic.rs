//! The `anthropic` backend end to end, offline: the real binary speaks the Messages protocol to the mock
//! endpoint (`POST /v1/messages`, started in-process on a loopback port) — the same answers as the
//! in-process lexical baseline in every layout, the runner's retries, the preflight and the key over
//! this protocol, a message cut off by `max_tokens` or refused, and byte-identical reruns.
//! Validation against Anthropic's own SDK is `tests/anthropic_sdk.rs` (a tier of its own).

mod common;
use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::process::{Command, Output};
use toolpick::mock::{Fault, MockConfig};

/// `toolpick run` of the small catalog by `--backends <backends>` against the mock's Messages route
/// (the base URL without `/v1`, as Anthropic's SDKs take it), into `out/<run_id>`, quiet, no cache.
fn command(env: &MockEnv, backends: &str, run_id: &str, extra: &[&str]) -> Command {
    let url = format!("http://{}", env.server.addr);
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    c.args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", backends])
        .args(["--model", "claude-mock", "--base-url", &url, "--out", "out", "--run-id", run_id])
        .args(["-q", "--no-cache", "--request-timeout", "5"])
        .args(extra)
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(env.dir.path());
    c
}

fn run_ok(env: &MockEnv, backends: &str, run_id: &str, extra: &[&str]) -> Output {
    let o = command(env, backends, run_id, extra).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

fn start(config: MockConfig) -> MockEnv {
    MockEnv::start(config, &[])
}

#[test]
fn over_the_messages_protocol_the_mock_answers_as_over_chat_completions_in_every_layout() {
    let env = start(MockConfig::default());
    let layouts = "flat,progressive,progressive-oss,search";
    run_ok(&env, "lexical,anthropic", "r", &["--layouts", layouts]);
    // The same mock over chat completions (the `openai` backend, base URL with `/v1`).
    env.run_ok("o", &["--layouts", layouts, "--no-cache"]);
    let metrics = ["n", "selection_accuracy", "pass_at_1", "abstention_accuracy", "mean_steps"];
    let key = |r: &Row| (r["variant"].clone(), r["layout"].clone());
    let rows = summary_rows(&env.path("out/r"));
    let chat: HashMap<_, _> =
        summary_rows(&env.path("out/o")).into_iter().map(|r| (key(&r), r)).collect();
    let lexical: HashMap<_, _> =
        rows.iter().filter(|r| r["backend"] == "lexical").map(|r| (key(r), r)).collect();
    let messages: Vec<&Row> = rows.iter().filter(|r| r["backend"] == "claude-mock").collect();
    assert_eq!(messages.len(), 8, "two variants × four layouts");
    for r in messages {
        for col in metrics {
            assert_eq!(r[col], chat[&key(r)][col], "{col} of {:?}", key(r));
            // Where the mock knows the layout it decides as the in-process baseline does.
            if ["flat", "progressive"].contains(&r["layout"].as_str()) {
                assert_eq!(r[col], lexical[&key(r)][col], "{col} of {:?}", key(r));
            }
        }
        assert_eq!(r["infra_errors"], "0");
    }
    // Usage as the protocol reports it, normalised: the mock counts the tool definitions as a cache
    // write on an episode's first request and a read after, and `input_tokens` without them.
    let trials = env.trials("r");
    let multi = trials
        .iter()
        .find(|t| t["backend"] == "claude-mock" && t["steps"].as_u64() > Some(1))
        .expect("a multi-step episode");
    let u = &multi["usage"];
    assert!(u["cache_write_tokens"].as_u64().unwrap() > 0, "{u}");
    assert!(u["cached_tokens"].as_u64().unwrap() > 0, "{u}");
    assert!(
        u["prompt_tokens"].as_u64().unwrap()
            > u["cached_tokens"].as_u64().unwrap() + u["cache_write_tokens"].as_u64().unwrap(),
        "the reads and writes are part of the input: {u}"
    );
    // The baselines report no usage, and their records carry no cache field.
    let baseline = trials.iter().find(|t| t["backend"] == "lexical").unwrap();
    assert!(baseline["usage"].get("cache_write_tokens").is_none(), "{}", baseline["usage"]);
}

#[test]
fn transient_faults_of_the_messages_route_are_retried_and_never_reach_the_scores() {
    let config = MockConfig {
        faults: vec![(Fault::RateLimit, 3), (Fault::ServerError, 5), (Fault::Truncated, 7)],
        retry_after_s: 0,
        ..Default::default()
    };
    let env = start(config);
    // One request at a time: a retry lands on the next request number, and no five consecutive
    // numbers are all multiples of 3, 5 or 7, so no request can exhaust its five attempts (with
    // several requests in flight one could, and the test failed under load on a clean clone).
    run_ok(&env, "lexical,anthropic", "f", &["--layouts", "flat", "--concurrency", "1"]);
    let rows = summary_rows(&env.path("out/f"));
    for r in rows.iter().filter(|r| r["backend"] == "claude-mock") {
        let l = rows
            .iter()
            .find(|l| {
                l["backend"] == "lexical"
                    && l["variant"] == r["variant"]
                    && l["layout"] == r["layout"]
            })
            .unwrap();
        assert_eq!(r["pass_at_1"], l["pass_at_1"]);
        assert_eq!(r["infra_errors"], "0");
    }
    let run: Value =
        serde_json::from_slice(&std::fs::read(env.path("out/f/run.json")).unwrap()).unwrap();
    let stats = &run["endpoints"]["claude-mock"];
    assert!(stats["retries"].as_u64().unwrap() >= 3, "{stats}");
    assert!(stats["rate_limited"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["failures"], 0, "{stats}");
}

#[test]
fn a_message_cut_off_by_max_tokens_or_refused_stops_the_episode_as_such() {
    let env = start(MockConfig { faults: vec![(Fault::CutOff, 1)], ..Default::default() });
    run_ok(&env, "anthropic", "cut", &["--layouts", "flat", "--variants", "good"]);
    let trials = env.trials("cut");
    let w1 = trials.iter().find(|t| t["task_id"] == "w1").unwrap();
    assert_eq!(w1["stop_reason"], "truncated", "{w1}");
    assert_eq!(w1["calls"][0]["record"]["truncated"], true, "{}", w1["calls"]);

    let env = start(MockConfig { faults: vec![(Fault::ContentFilter, 1)], ..Default::default() });
    run_ok(&env, "anthropic", "refused", &["--layouts", "flat", "--variants", "good"]);
    for t in env.trials("refused") {
        assert_eq!(t["stop_reason"], "content_filter", "{}", t["task_id"]);
    }
}

#[test]
fn the_preflight_names_the_anthropic_key_variable_and_the_key_goes_in_x_api_key() {
    let env = start(MockConfig { require_key: Some("sk-ant-right".into()), ..Default::default() });
    let o = command(&env, "anthropic", "nokey", &["--layouts", "flat"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("/v1/models"), "{err}");
    assert!(err.contains("$ANTHROPIC_API_KEY is not set"), "{err}");
    assert!(!env.path("out/nokey/trials.jsonl").exists());
    let o = command(&env, "anthropic", "key", &["--layouts", "flat"])
        .env("ANTHROPIC_API_KEY", "sk-ant-right")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(env.trials("key").len(), 8);
}

#[test]
fn the_same_inputs_give_byte_identical_trial_records() {
    let env = start(MockConfig::default());
    run_ok(&env, "anthropic", "a", &["--layouts", "flat,progressive"]);
    run_ok(&env, "anthropic", "b", &["--layouts", "flat,progressive"]);
    for file in ["trials.jsonl", "transcripts.jsonl"] {
        let a = std::fs::read(env.path(&format!("out/a/{file}"))).unwrap();
        let b = std::fs::read(env.path(&format!("out/b/{file}"))).unwrap();
        assert!(!a.is_empty());
        assert!(a == b, "{file} differs between two identical runs");
    }
}

#[test]
fn the_example_experiment_runs_and_reads_its_key_from_anthropic_api_key_by_default() {
    // The example names no `api_key_env`: the key must come from ANTHROPIC_API_KEY, which the mock
    // requires (OPENAI_API_KEY, the field's default for `openai`, holds a wrong one).
    let env =
        start(MockConfig { require_key: Some("sk-ant-example".into()), ..Default::default() });
    let url = format!("http://{}", env.server.addr);
    let config = repo().join("examples/anthropic.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--config", config.to_str().unwrap(), "--base-url", &url, "--limit", "3"])
        .args(["--out", "out", "--run-id", "ex", "-q", "--no-cache", "--trials", "1"])
        .env("ANTHROPIC_API_KEY", "sk-ant-example")
        .env("OPENAI_API_KEY", "sk-wrong")
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = env.trials("ex");
    assert_eq!(trials.len(), 3 * 2 * 2, "3 tasks × 2 variants × 2 layouts");
    assert!(trials.iter().all(|t| t["backend"] == "claude-sonnet-4-5" && t["error"].is_null()));
}

#[test]
fn the_breaker_stops_an_anthropic_endpoint_that_goes_down() {
    // Two requests answer, then every Messages request is a 503: after three episodes in a row failed
    // the same way the endpoint is stopped, as an `openai` one is.
    let env = start(MockConfig { down_after: Some(2), ..Default::default() });
    let o = command(&env, "anthropic", "down", &["--layouts", "flat,progressive"])
        .args(["--max-attempts", "1", "--breaker", "3", "--concurrency", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("endpoint `claude-mock`") && err.contains("stopped"), "{err}");
    assert!(err.contains("server_error"), "{err}");
}

/// llama.cpp's answer when the model's tool call arguments are not JSON (its Messages route answers as
/// its chat route does).
const LLAMA_PARSE_ERROR: &str = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 23: syntax error while parsing object - unexpected end of input; expected '}'","type":"server_error"}}"#;

#[test]
fn a_servers_parse_failure_on_the_messages_route_is_the_models_malformed_call_never_retried() {
    use axum::routing::{get, post};
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let posts = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = posts.clone();
    let app = axum::Router::new()
        .route("/v1/models", get(|| async { axum::Json(serde_json::json!({"data": []})) }))
        .route(
            "/v1/messages",
            post(move || {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async {
                    (
                        axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                        [("content-type", "application/json")],
                        LLAMA_PARSE_ERROR,
                    )
                }
            }),
        );
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("cat"));
    std::fs::write(dir.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    let url = format!("http://{addr}");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", "anthropic"])
        .args(["--model", "local", "--base-url", &url, "--layouts", "flat", "--variants", "good"])
        .args(["--out", "out", "--run-id", "p", "-q", "--no-cache"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = trials_with_transcripts(&dir.path().join("out/p"));
    assert_eq!(trials.len(), 4);
    for t in &trials {
        assert!(t["error"].is_null(), "not an infrastructure error: {t}");
        assert_eq!(t["stop_reason"], "unparsed", "{t}");
        assert_eq!(t["score"]["error_type"], "malformed_call", "{t}");
        let call = &t["calls"][0]["record"];
        assert!(call["server_parse_error"].as_str().unwrap().contains("Failed to parse"), "{call}");
    }
    assert_eq!(
        posts.load(std::sync::atomic::Ordering::SeqCst),
        4,
        "one request per trial, no retry"
    );
}

#[test]
fn a_temperature_above_the_protocols_range_is_refused_before_anything_runs() {
    let env = start(MockConfig::default());
    let o = command(&env, "anthropic", "hot", &["--temperature", "1.5"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--temperature"), "{}", stderr(&o));
    assert!(stderr(&o).contains("0 to 1"), "{}", stderr(&o));
    assert_eq!(env.server.requests(), 0);
    assert!(!env.path("out/hot").exists());
}
