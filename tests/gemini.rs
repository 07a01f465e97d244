//! The `gemini` backend end to end, offline: the real binary speaks Gemini's `generateContent` to the
//! mock endpoint (`POST /v1beta/models/{model}:generateContent`, started in-process on a loopback
//! port) — the same answers as over chat completions in every layout, multi-turn histories whose
//! signed parts go back unchanged (the mock refuses them otherwise, as Gemini 3 does), the runner's
//! retries, the stop reasons, the preflight, the key and the context window over this protocol, and
//! byte-identical reruns; and against a scripted server that answers every task with calls that carry
//! no id, which must score every task.

mod common;
use common::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use toolpick::mock::{Fault, MockConfig};

/// `toolpick run` of the small catalog by `--backends <backends>` against the mock's Gemini route
/// (the API root as base URL), into `out/<run_id>`, quiet, no cache.
fn command(env: &MockEnv, backends: &str, run_id: &str, extra: &[&str]) -> Command {
    let url = format!("http://{}", env.server.addr);
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    c.args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", backends])
        .args(["--model", "gemini-mock", "--base-url", &url, "--out", "out", "--run-id", run_id])
        .args(["-q", "--no-cache", "--request-timeout", "5"])
        .args(extra)
        .env_remove("GEMINI_API_KEY")
        .env_remove("GOOGLE_GEMINI_BASE_URL")
        .current_dir(env.dir.path());
    c
}

fn run_ok(env: &MockEnv, backends: &str, run_id: &str, extra: &[&str]) -> Output {
    let o = command(env, backends, run_id, extra).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

const METRICS: [&str; 5] =
    ["n", "selection_accuracy", "pass_at_1", "abstention_accuracy", "mean_steps"];

#[test]
fn over_the_gemini_protocol_the_mock_answers_as_over_chat_completions_in_every_layout() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    let layouts = "flat,progressive,progressive-oss,search";
    run_ok(&env, "lexical,gemini", "g", &["--layouts", layouts]);
    env.run_ok("o", &["--layouts", layouts, "--no-cache"]);
    let key = |r: &Row| (r["variant"].clone(), r["layout"].clone());
    let chat: HashMap<_, _> =
        summary_rows(&env.path("out/o")).into_iter().map(|r| (key(&r), r)).collect();
    let rows = summary_rows(&env.path("out/g"));
    let lexical: HashMap<_, _> =
        rows.iter().filter(|r| r["backend"] == "lexical").map(|r| (key(r), r)).collect();
    let gemini: Vec<&Row> = rows.iter().filter(|r| r["backend"] == "gemini-mock").collect();
    assert_eq!(gemini.len(), 8, "two variants × four layouts");
    for r in gemini {
        for col in METRICS {
            assert_eq!(r[col], chat[&key(r)][col], "{col} of {:?}", key(r));
            if ["flat", "progressive"].contains(&r["layout"].as_str()) {
                assert_eq!(r[col], lexical[&key(r)][col], "{col} of {:?}", key(r));
            }
        }
        assert_eq!(r["infra_errors"], "0");
    }
    // Multi-step episodes: the mock refuses a history whose calls lost their signature, so every
    // later request carried the model's parts back unchanged.
    let trials = env.trials("g");
    let multi: Vec<&Value> = trials
        .iter()
        .filter(|t| t["backend"] == "gemini-mock" && t["steps"].as_u64() > Some(2))
        .collect();
    assert!(!multi.is_empty(), "a walk of several requests");
    for t in &multi {
        assert!(t["error"].is_null(), "{}", t["error"]);
        // The mock sends no ids: toolpick's are made, stable, and pair the results.
        let messages = t["transcript"].as_array().unwrap();
        let ids: Vec<&str> = messages
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert!(ids.len() >= 2, "{messages:?}");
        assert!(ids.iter().all(|id| id.starts_with("gemini_call_")), "{ids:?}");
        let answered: Vec<&str> =
            messages.iter().filter_map(|m| m["tool_call_id"].as_str()).collect();
        assert_eq!(answered, ids, "each result paired with its call");
        // The tool definitions count as cached content after the first request.
        let u = &t["usage"];
        assert!(u["cached_tokens"].as_u64().unwrap() > 0, "{u}");
        assert!(u.get("cache_write_tokens").is_none(), "{u}");
    }
}

#[test]
fn the_bundled_suite_runs_offline_over_gemini_as_over_chat_completions() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    let url = format!("http://{}", env.server.addr);
    // Tasks whose progressive walks the mock's baseline decides from its earlier calls' ids (which
    // come back only in the echoed signatures, the calls going out without ids), and a few others.
    let tasks = "biz-036,destr-017,destr-032,dev-066,safe-030,dev-00?,safe-01?";
    let common = ["--layouts", "flat,progressive,search", "--tasks", tasks, "-q", "--no-cache"];
    let run = |backend: &str, base: &str, id: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
            .args(["run", "--backends", backend, "--model", "mock", "--base-url", base])
            .args(["--out", "out", "--run-id", id])
            .args(common)
            .current_dir(env.dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        summary_rows(&env.path(&format!("out/{id}")))
    };
    let gemini = run("gemini", &url, "bg");
    let chat = run("openai", &env.url(), "bo");
    assert_eq!(gemini.len(), chat.len());
    assert!(gemini.len() >= 6, "{} rows", gemini.len());
    for (g, c) in gemini.iter().zip(&chat) {
        assert_eq!((&g["variant"], &g["layout"]), (&c["variant"], &c["layout"]));
        for col in METRICS {
            assert_eq!(g[col], c[col], "{col} of {} {}", g["variant"], g["layout"]);
        }
        assert_eq!(g["infra_errors"], "0");
    }
}

#[test]
fn transient_faults_of_the_gemini_route_are_retried_and_never_reach_the_scores() {
    let config = MockConfig {
        faults: vec![(Fault::RateLimit, 3), (Fault::Unavailable, 5), (Fault::Truncated, 7)],
        retry_after_s: 0,
        ..Default::default()
    };
    let env = MockEnv::start(config, &[]);
    run_ok(&env, "lexical,gemini", "f", &["--layouts", "flat", "--concurrency", "1"]);
    let rows = summary_rows(&env.path("out/f"));
    for r in rows.iter().filter(|r| r["backend"] == "gemini-mock") {
        let l = rows
            .iter()
            .find(|l| l["backend"] == "lexical" && l["variant"] == r["variant"])
            .unwrap();
        assert_eq!(r["pass_at_1"], l["pass_at_1"]);
        assert_eq!(r["infra_errors"], "0");
    }
    let run: Value =
        serde_json::from_slice(&std::fs::read(env.path("out/f/run.json")).unwrap()).unwrap();
    let stats = &run["endpoints"]["gemini-mock"];
    assert!(stats["retries"].as_u64().unwrap() >= 3, "{stats}");
    assert!(stats["rate_limited"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["failures"], 0, "{stats}");
}

#[test]
fn max_tokens_safety_and_malformed_function_call_stop_the_episode_as_such() {
    for (fault, stop, run_id) in [
        (Fault::CutOff, "truncated", "cut"),
        (Fault::ContentFilter, "content_filter", "safety"),
        (Fault::MalformedArgs, "unparsed", "malformed"),
    ] {
        let env =
            MockEnv::start(MockConfig { faults: vec![(fault, 1)], ..Default::default() }, &[]);
        run_ok(&env, "gemini", run_id, &["--layouts", "flat", "--variants", "good"]);
        let trials = env.trials(run_id);
        let w1 = trials.iter().find(|t| t["task_id"] == "w1").unwrap();
        assert_eq!(w1["stop_reason"], stop, "{fault:?}: {w1}");
        assert!(w1["error"].is_null(), "{fault:?}: not an infrastructure error: {w1}");
        match fault {
            Fault::CutOff => assert_eq!(w1["calls"][0]["record"]["truncated"], true, "{w1}"),
            Fault::MalformedArgs => {
                let words = w1["calls"][0]["record"]["server_parse_error"].as_str().unwrap();
                assert!(words.contains("MALFORMED_FUNCTION_CALL"), "{words}");
                assert_eq!(env.server.requests(), 4, "one request per trial, never retried");
            }
            _ => {}
        }
    }
}

#[test]
fn the_key_goes_in_x_goog_api_key_from_gemini_api_key_and_never_reaches_an_output() {
    let secret = "AIza-toolpick-gemini-test-5d2b";
    let env = MockEnv::start(
        MockConfig { require_key: Some(secret.into()), echo_key: true, ..Default::default() },
        &[],
    );
    let o = command(&env, "gemini", "nokey", &["--layouts", "flat"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("/v1beta/models/gemini-mock"), "{err}");
    assert!(err.contains("$GEMINI_API_KEY is not set"), "{err}");
    // The right key in OPENAI_API_KEY is not read: the protocol's own variable is.
    let o = command(&env, "gemini", "other", &["--layouts", "flat"])
        .env("OPENAI_API_KEY", secret)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = command(&env, "gemini", "key", &["--layouts", "flat,progressive"])
        .env("GEMINI_API_KEY", secret)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(env.trials("key").len(), 16);
    assert!(!stderr(&o).contains(secret) && !stdout(&o).contains(secret));
    for entry in walk(&env.path("out/key")) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        assert!(!text.contains(secret), "{} holds the key", entry.display());
    }
}

#[test]
fn the_models_input_token_limit_is_the_context_window_the_run_checks() {
    // The mock describes its model with `inputTokenLimit`: a window the flat prompt overflows.
    let env = MockEnv::start(MockConfig { context_size: Some(300), ..Default::default() }, &[]);
    let o = command(&env, "gemini", "ctx", &["--layouts", "flat"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("[context]") && err.contains("300-token"), "{err}");
    assert!(!env.path("out/ctx/trials.jsonl").exists());
    // Let through, each refusal (Google's 400) is a provider limit, not an error.
    run_ok(&env, "gemini", "ctx2", &["--layouts", "flat", "--allow-provider-errors"]);
    for t in env.trials("ctx2") {
        assert_eq!(t["stop_reason"], "provider_limit", "{t}");
        assert_eq!(t["provider_limit"]["kind"], "context", "{t}");
    }
}

#[test]
fn the_same_inputs_give_byte_identical_trial_records() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    run_ok(&env, "gemini", "a", &["--layouts", "flat,progressive"]);
    run_ok(&env, "gemini", "b", &["--layouts", "flat,progressive"]);
    for file in ["trials.jsonl", "transcripts.jsonl"] {
        let a = std::fs::read(env.path(&format!("out/a/{file}"))).unwrap();
        let b = std::fs::read(env.path(&format!("out/b/{file}"))).unwrap();
        assert!(!a.is_empty());
        assert!(a == b, "{file} differs between two identical runs");
    }
}

#[test]
fn a_gemini_model_without_a_model_name_is_refused_naming_the_field() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", "gemini"])
        .args(["--out", "out", "--run-id", "nomodel", "-q"])
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--model"), "{}", stderr(&o));
    assert_eq!(env.server.requests(), 0);
}

#[test]
fn the_example_experiment_runs_and_reads_its_key_from_gemini_api_key_by_default() {
    let env = MockEnv::start(
        MockConfig { require_key: Some("AIza-example".into()), ..Default::default() },
        &[],
    );
    let url = format!("http://{}", env.server.addr);
    let config = repo().join("examples/gemini.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--config", config.to_str().unwrap(), "--base-url", &url, "--limit", "3"])
        .args(["--out", "out", "--run-id", "ex", "-q", "--no-cache", "--trials", "1"])
        .env("GEMINI_API_KEY", "AIza-example")
        .env("OPENAI_API_KEY", "sk-wrong")
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = env.trials("ex");
    assert_eq!(trials.len(), 3 * 2 * 2, "3 tasks × 2 variants × 2 layouts");
    assert!(trials.iter().all(|t| t["backend"] == "gemini-2.5-flash" && t["error"].is_null()));
}

/// What the scripted server received: each request's body, and whether the key came in the header
/// (and not in the URL).
type Seen = Arc<Mutex<Vec<(Value, bool, String)>>>;

/// The calls that answer each query of the small dataset (`SMALL_DATASET`), by flat name.
fn script(query: &str) -> Vec<Value> {
    match query {
        "How warm is it in Pune right now?" => {
            vec![json!({"name": "get_current_weather", "args": {"city": "Pune"}})]
        }
        "Forecast for Oslo and Lima for 3 days" => vec![
            json!({"name": "get_forecast", "args": {"city": "Oslo", "days": 3}}),
            json!({"name": "get_forecast", "args": {"city": "Lima", "days": 3}}),
        ],
        "Mail ana@example.com with subject \"Hi\" and tell me the weather in Rome" => vec![
            json!({"name": "send_email", "args": {"to": "ana@example.com", "subject": "Hi"}}),
            json!({"name": "get_current_weather", "args": {"city": "Rome"}}),
        ],
        _ => vec![],
    }
}

/// A `generateContent` answer from the script: the query's calls (no ids; the first signed), or
/// "Done." once results came back, or a refusal in text.
fn scripted(body: &Value, n: usize) -> Value {
    let contents = body["contents"].as_array().unwrap();
    let last = &contents[contents.len() - 1]["parts"];
    let results = last.as_array().unwrap().iter().any(|p| p.get("functionResponse").is_some());
    let query = last[0]["text"].as_str().unwrap_or_default();
    let calls = if results { vec![] } else { script(query) };
    let parts: Vec<Value> = if calls.is_empty() {
        let text = if results { "Done." } else { "None of my tools can do that." };
        vec![json!({"text": text})]
    } else {
        let mut parts = vec![json!({"text": "weighing the tools", "thought": true})];
        for (i, c) in calls.into_iter().enumerate() {
            let mut part = json!({ "functionCall": c });
            if i == 0 {
                part["thoughtSignature"] = json!(format!("c2lnLXtu-{n}"));
            }
            parts.push(part);
        }
        parts
    };
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 30,
            "toolUsePromptTokenCount": 5, "candidatesTokenCount": 7, "thoughtsTokenCount": 3,
            "totalTokenCount": 115}, "modelVersion": "scripted"})
}

#[test]
fn scripted_answers_without_ids_score_every_task_with_paired_results_and_normalised_usage() {
    use axum::extract::{Path, State};
    use axum::http::{HeaderMap, Uri};
    use axum::routing::post;
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let seen: Seen = Default::default();
    let app = axum::Router::new()
        .route(
            "/v1beta/models/{m}",
            post(
                |State(seen): State<Seen>,
                 Path(m): Path<String>,
                 uri: Uri,
                 headers: HeaderMap,
                 axum::Json(body): axum::Json<Value>| async move {
                    let mut seen = seen.lock().unwrap();
                    let keyed = headers.get("x-goog-api-key").is_some_and(|k| k == "AIza-s");
                    seen.push((body.clone(), keyed, format!("{m} {uri}")));
                    axum::Json(scripted(&body, seen.len()))
                },
            ),
        )
        .with_state(seen.clone());
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("cat"));
    std::fs::write(dir.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    let url = format!("http://{addr}/v1beta");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", "gemini"])
        .args(["--model", "models/gemini-scripted", "--base-url", &url, "--layouts", "flat"])
        .args(["--variants", "good", "--tool-choice", "required", "--no-preflight"])
        .args(["--temperature", "0", "--model-seed", "11", "--max-tokens", "300"])
        .args(["--out", "out", "--run-id", "s", "-q", "--no-cache"])
        .env("GEMINI_API_KEY", "AIza-s")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = trials_with_transcripts(&dir.path().join("out/s"));
    assert_eq!(trials.len(), 4);
    for t in &trials {
        assert_eq!(t["score"]["pass"], true, "{}: {}", t["task_id"], t["score"]);
        let steps = t["steps"].as_u64().unwrap();
        assert_eq!(
            t["usage"],
            json!({"prompt_tokens": 105 * steps, "completion_tokens": 10 * steps,
                   "cached_tokens": 30 * steps, "reasoning_tokens": 3 * steps}),
            "{}",
            t["task_id"]
        );
    }
    let seen = seen.lock().unwrap();
    let steps: u64 = trials.iter().map(|t| t["steps"].as_u64().unwrap()).sum();
    assert_eq!(seen.len() as u64, steps);
    let mut most = 0;
    for (body, keyed, path) in seen.iter() {
        assert!(keyed, "the key goes in x-goog-api-key");
        assert_eq!(
            path,
            "gemini-scripted:generateContent /v1beta/models/gemini-scripted:generateContent"
        );
        assert_eq!(body["toolConfig"]["functionCallingConfig"]["mode"], "ANY");
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0.0, "maxOutputTokens": 300, "seed": 11})
        );
        assert!(body["systemInstruction"]["parts"][0]["text"].is_string(), "{body}");
        let contents = body["contents"].as_array().unwrap();
        for (i, c) in contents.iter().enumerate().filter(|(_, c)| c["role"] == "model") {
            // The model's parts came back as sent: thought, signature and all.
            let parts = c["parts"].as_array().unwrap();
            assert_eq!(parts[0]["thought"], true, "{c}");
            assert!(parts[1]["thoughtSignature"].is_string(), "{c}");
            let calls: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionCall")).collect();
            assert!(calls.iter().all(|c| c.get("id").is_none()), "no made-up id is sent: {c}");
            // One functionResponse per call, in order, by name, in the next user turn.
            let next = &contents[i + 1];
            assert_eq!(next["role"], "user");
            let answers: Vec<&Value> =
                next["parts"].as_array().unwrap().iter().map(|p| &p["functionResponse"]).collect();
            assert_eq!(answers.len(), calls.len(), "{next}");
            for (a, c) in answers.iter().zip(&calls) {
                assert_eq!(a["name"], c["name"], "{next}");
                assert!(a["response"].is_object() && a.get("id").is_none(), "{a}");
            }
            most = most.max(calls.len());
        }
    }
    assert_eq!(most, 2, "two calls in one answer went back with two results");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}
