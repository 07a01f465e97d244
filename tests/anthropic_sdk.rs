//! The `anthropic` backend against an independent implementation of its protocol: Anthropic's official
//! Python SDK (the `anthropic-sdk` tier, `scripts/install-anthropic-sdk.sh`). A test server
//! (`scripts/provider_sdk_server.py --sdk anthropic`, run by the tier's Python) captures every request toolpick sends
//! and validates it against the SDK's request type, and validates every answer it passes on against
//! the SDK's `Message` model: answers of toolpick's mock endpoint (forwarded), or answers it builds
//! from the SDK's own objects (scripted), which must score every task.

mod common;
use common::sdk::{SdkServer, assert_all_valid, files_under, scripted};
use common::tiers::{self, Tier};
use common::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::Command;
use toolpick::mock::MockConfig;

/// Every logged request and answer the SDK accepted, each on the Messages route.
fn assert_valid_messages(requests: &[Value]) {
    assert_all_valid(requests);
    for r in requests {
        assert_eq!(r["path"], "/v1/messages");
        assert_eq!(r["headers"]["anthropic-version"], "2023-06-01");
        assert_eq!(r["headers"]["content-type"], "application/json");
    }
}

/// The protocol's history rules in every request: the system prompt top-level and no `system` role;
/// each assistant turn's `tool_use` blocks answered by the next message, a user turn holding exactly
/// one `tool_result` per call, in order, with its id. Returns the most calls one answered turn held.
fn assert_paired_history(requests: &[Value]) -> usize {
    let mut most = 0;
    for r in requests {
        let body = &r["request"];
        assert!(body["system"].is_string(), "system prompt top-level: {body}");
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "user", "{body}");
        for (i, m) in messages.iter().enumerate() {
            assert!(m["role"] == "user" || m["role"] == "assistant", "{m}");
            if m["role"] != "assistant" {
                continue;
            }
            let uses: Vec<&str> = m["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap())
                .collect();
            if uses.is_empty() {
                continue;
            }
            let next = &messages[i + 1];
            assert_eq!(next["role"], "user", "results go back in a user turn: {body}");
            let results: Vec<&str> = next["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    assert_eq!(b["type"], "tool_result", "{next}");
                    assert!(b["content"].is_string(), "{b}");
                    b["tool_use_id"].as_str().unwrap()
                })
                .collect();
            assert_eq!(results, uses, "one result per call, in order: {body}");
            most = most.max(uses.len());
        }
    }
    most
}

#[test]
fn requests_and_the_mock_endpoints_answers_validate_against_the_official_sdk() {
    let Some(venv) = tiers::require(Tier::AnthropicSdk) else { return };
    let env = MockEnv::start(MockConfig::default(), &[]);
    let upstream = format!("http://{}", env.server.addr);
    let sdk =
        SdkServer::start(&venv, "anthropic", env.path("sdk.jsonl"), &["--upstream", &upstream]);
    let url = sdk.root();
    let o = toolpick(
        &[
            "run",
            "--catalog",
            "cat",
            "--dataset",
            "ds.jsonl",
            "--backends",
            "lexical,anthropic",
            "--model",
            "mock",
            "--base-url",
            &url,
            "--layouts",
            "flat,progressive",
            "--parallel-tool-calls",
            "true",
            "--out",
            "out",
            "--run-id",
            "r",
            "-q",
            "--no-cache",
        ],
        env.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = sdk.requests();
    assert!(requests.len() > 16, "{} requests", requests.len());
    assert_valid_messages(&requests);
    // Multi-step episodes carried their calls and results back, paired (several calls in one turn:
    // the scripted test below).
    assert!(assert_paired_history(&requests) >= 1);
    for r in &requests {
        assert_eq!(
            r["request"]["tool_choice"],
            json!({"type": "auto", "disable_parallel_tool_use": false})
        );
        for t in r["request"]["tools"].as_array().unwrap() {
            assert_eq!(t["input_schema"]["type"], "object", "{t}");
        }
    }
    // Over the protocol, the mock's lexical answers score as the in-process baseline does.
    let rows = summary_rows(&env.path("out/r"));
    let key = |r: &Row| (r["variant"].clone(), r["layout"].clone());
    let lexical: HashMap<_, _> =
        rows.iter().filter(|r| r["backend"] == "lexical").map(|r| (key(r), r)).collect();
    let over_http: Vec<&Row> = rows.iter().filter(|r| r["backend"] == "mock").collect();
    assert_eq!(over_http.len(), lexical.len());
    for r in over_http {
        for col in ["n", "selection_accuracy", "pass_at_1", "abstention_accuracy", "mean_steps"] {
            assert_eq!(r[col], lexical[&key(r)][col], "{col} of {:?}", key(r));
        }
        assert_eq!(r["infra_errors"], "0");
    }
}

#[test]
fn the_native_layouts_requests_and_answers_validate_against_the_official_sdk() {
    let Some(venv) = tiers::require(Tier::AnthropicSdk) else { return };
    let env = MockEnv::start(MockConfig::default(), &[]);
    let upstream = format!("http://{}", env.server.addr);
    let sdk =
        SdkServer::start(&venv, "anthropic", env.path("sdk.jsonl"), &["--upstream", &upstream]);
    let url = sdk.root();
    let o = toolpick(
        &argv_with(
            "run --catalog cat --dataset ds.jsonl --backends anthropic --model mock --base-url {} \
             --layouts native-search,native-search-client --out out --run-id n -q --no-cache",
            &[&url],
        ),
        env.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = sdk.requests();
    assert_valid_messages(&requests);
    // Every request defers every catalog tool; the server search sends the API's BM25 tool, the
    // client search toolpick's `search_tools`, not deferred.
    let (mut server, mut client) = (0, 0);
    for r in &requests {
        let tools = r["request"]["tools"].as_array().unwrap();
        let deferred = tools.iter().filter(|t| t["defer_loading"] == true).count();
        let shown: Vec<&Value> = tools.iter().filter(|t| t["defer_loading"] != true).collect();
        assert!(deferred >= 2, "{deferred} deferred: {}", r["request"]);
        assert_eq!(shown.len(), 1, "{shown:?}");
        match shown[0]["name"].as_str().unwrap() {
            "tool_search_tool_bm25" => {
                assert_eq!(shown[0]["type"], "tool_search_tool_bm25_20251119");
                server += 1;
            }
            "search_tools" => client += 1,
            other => panic!("{other}"),
        }
    }
    assert!(server > 0 && client > 0, "{server} / {client}");
    // The history carried the API's own search blocks back, and toolpick's answers as references.
    let blocks: Vec<&Value> = requests
        .iter()
        .flat_map(|r| r["request"]["messages"].as_array().unwrap())
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .collect();
    let has = |kind: &str| blocks.iter().any(|b| b["type"] == kind);
    assert!(has("server_tool_use") && has("tool_search_tool_result"));
    assert!(blocks.iter().any(|b| {
        b["type"] == "tool_result"
            && b["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|x| x["type"] == "tool_reference"))
    }));
    let trials = trials_with_transcripts(&env.path("out/n"));
    for layout in ["native-search", "native-search-client"] {
        assert!(
            trials.iter().any(|t| t["layout"] == layout && t["score"]["pass"] == true),
            "{layout}: a loaded tool was called and passed"
        );
    }
}

#[test]
fn scripted_sdk_answers_score_every_task_and_usage_counts_the_cache_as_input() {
    let Some(venv) = tiers::require(Tier::AnthropicSdk) else { return };
    let dir = tempfile::tempdir().unwrap();
    let usage = json!({"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 30, "output_tokens": 7});
    let sdk =
        scripted(dir.path(), usage, |log, mode| SdkServer::start(&venv, "anthropic", log, mode));
    let url = sdk.root();
    let secret = "sk-ant-toolpick-test-3f9a";
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", "anthropic"])
        .args(["--model", "claude-scripted", "--base-url", &url, "--layouts", "flat"])
        .args(["--variants", "good", "--tool-choice", "required", "--parallel-tool-calls", "false"])
        .args(["--out", "out", "--run-id", "s", "-q", "--no-cache"])
        .env("ANTHROPIC_API_KEY", secret)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = sdk.requests();
    assert_valid_messages(&requests);
    assert!(requests.iter().all(|r| r["has_key"] == true), "the key goes in x-api-key");
    assert!(requests.iter().all(|r| r["request"]["tool_choice"]
        == json!({"type": "any", "disable_parallel_tool_use": true})));
    assert_eq!(assert_paired_history(&requests), 2);
    let trials = trials_with_transcripts(&dir.path().join("out/s"));
    assert_eq!(trials.len(), 4);
    for t in &trials {
        assert_eq!(t["score"]["pass"], true, "{}: {}", t["task_id"], t["score"]);
        // Per request: input 100 + cache writes 20 + cache reads 30; the script's numbers.
        let steps = t["steps"].as_u64().unwrap();
        assert_eq!(
            t["usage"],
            json!({"prompt_tokens": 150 * steps, "completion_tokens": 7 * steps,
                   "cached_tokens": 30 * steps, "cache_write_tokens": 20 * steps}),
            "{}",
            t["task_id"]
        );
    }
    // Calls then "Done." for the three tasks with calls; the abstention answers at once.
    let steps: Vec<u64> = trials.iter().map(|t| t["steps"].as_u64().unwrap()).collect();
    assert_eq!(steps.iter().sum::<u64>(), requests.len() as u64);
    for entry in files_under(&dir.path().join("out")) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        assert!(!text.contains(secret), "{} holds the key", entry.display());
    }
}
