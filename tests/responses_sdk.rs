//! The `openai-responses` backend against an independent implementation of its protocol: OpenAI's
//! official Python SDK (the `openai-sdk` tier, `scripts/install-venv.sh openai-sdk`). A test server
//! (`scripts/provider_sdk_server.py --sdk openai`, run by the tier's Python) captures every request
//! toolpick sends and validates it against the SDK's request type (`ResponseCreateParamsNonStreaming`),
//! and every answer it passes on against the SDK's `Response` model (strict): answers of toolpick's
//! mock endpoint (forwarded), or answers it builds from the SDK's own objects (scripted), which must
//! score every task. The validator is shown to refuse what is not the protocol, both ways.

mod common;
use common::sdk::{SdkServer, assert_all_valid, files_under, scripted};
use common::tiers::{self, Tier};
use common::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use toolpick::mock::MockConfig;

/// The SDK test server validating with `openai`; its base URL as the backend takes it is
/// `{root}/v1`.
fn start(venv: &Path, log: PathBuf, mode: &[&str]) -> SdkServer {
    let sdk = SdkServer::start(venv, "openai", log, mode);
    assert!(sdk.banner.contains("openai 3.51.0"), "the pinned SDK: {:?}", sdk.banner);
    sdk
}

/// The mock endpoint's folder and server, and the SDK test server forwarding to it.
fn forwarding_to_the_mock(venv: &Path) -> (MockEnv, SdkServer) {
    let env = MockEnv::start(MockConfig::default(), &[]);
    let upstream = format!("http://{}", env.server.addr);
    let sdk = start(venv, env.path("sdk.jsonl"), &["--upstream", &upstream]);
    (env, sdk)
}

/// Every logged request and answer the SDK accepted, each on the Responses route.
fn assert_valid_responses(requests: &[Value]) {
    assert_all_valid(requests);
    for r in requests {
        assert_eq!(r["path"], "/v1/responses");
        assert_eq!(r["headers"]["content-type"], "application/json");
        assert_eq!(r["request"]["store"], false);
    }
}

/// The protocol's history rules in every request: the system prompt a `developer` message first;
/// each run of `function_call` items answered right after by one `function_call_output` per call, in
/// order, with its `call_id`. Returns the most calls one answered turn held.
fn assert_paired_history(requests: &[Value]) -> usize {
    let mut most = 0;
    for r in requests {
        let body = &r["request"];
        let items = body["input"].as_array().unwrap();
        assert_eq!(items[0]["role"], "developer", "{body}");
        let mut i = 0;
        while i < items.len() {
            if items[i]["type"] != "function_call" {
                assert!(items[i]["type"] != "function_call_output", "an output before its call");
                i += 1;
                continue;
            }
            let calls: Vec<&str> = items[i..]
                .iter()
                .take_while(|it| it["type"] == "function_call")
                .map(|c| {
                    assert!(c["arguments"].is_string(), "{c}");
                    c["call_id"].as_str().unwrap()
                })
                .collect();
            i += calls.len();
            let outputs: Vec<&str> = items[i..]
                .iter()
                .take_while(|it| it["type"] == "function_call_output")
                .map(|o| {
                    assert!(o["output"].is_string(), "{o}");
                    o["call_id"].as_str().unwrap()
                })
                .collect();
            assert_eq!(outputs, calls, "one output per call, in order: {body}");
            i += outputs.len();
            most = most.max(calls.len());
        }
    }
    most
}

#[test]
fn requests_and_the_mock_endpoints_answers_validate_against_the_official_sdk() {
    let Some(venv) = tiers::require(Tier::OpenAiSdk) else { return };
    let (env, sdk) = forwarding_to_the_mock(&venv);
    let url = format!("{}/v1", sdk.root());
    let o = toolpick(
        &[
            "run",
            "--catalog",
            "cat",
            "--dataset",
            "ds.jsonl",
            "--backends",
            "lexical,openai-responses",
            "--model",
            "mock",
            "--base-url",
            &url,
            "--layouts",
            "flat,progressive,search",
            "--parallel-tool-calls",
            "true",
            "--temperature",
            "0.5",
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
    assert!(requests.len() > 24, "{} requests", requests.len());
    assert_valid_responses(&requests);
    assert!(assert_paired_history(&requests) >= 1, "multi-step episodes carried calls back");
    for r in &requests {
        assert_eq!(r["request"]["parallel_tool_calls"], true);
        assert_eq!(r["request"]["temperature"], 0.5);
        for t in r["request"]["tools"].as_array().unwrap() {
            assert_eq!(
                (&t["type"], &t["parameters"]["type"]),
                (&json!("function"), &json!("object"))
            );
        }
    }
    // Over the protocol, the mock's lexical answers score as the in-process baseline does (in the
    // layouts the mock tells apart: it answers `search` as a flat list of tools).
    let rows: Vec<Row> =
        summary_rows(&env.path("out/r")).into_iter().filter(|r| r["layout"] != "search").collect();
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
    let Some(venv) = tiers::require(Tier::OpenAiSdk) else { return };
    let (env, sdk) = forwarding_to_the_mock(&venv);
    let url = format!("{}/v1", sdk.root());
    let o = toolpick(
        &argv_with(
            "run --catalog cat --dataset ds.jsonl --backends openai-responses --model mock \
             --base-url {} --layouts native-search,native-search-client --out out --run-id n -q \
             --no-cache",
            &[&url],
        ),
        env.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = sdk.requests();
    assert_valid_responses(&requests);
    // Every request defers every function and carries one `tool_search` tool, executed by the server
    // or, with its description and parameters, by the client.
    let mut executions = std::collections::BTreeSet::new();
    for r in &requests {
        let tools = r["request"]["tools"].as_array().unwrap();
        let functions: Vec<&Value> = tools.iter().filter(|t| t["type"] == "function").collect();
        assert!(functions.len() >= 2 && functions.iter().all(|f| f["defer_loading"] == true));
        let search: Vec<&Value> = tools.iter().filter(|t| t["type"] == "tool_search").collect();
        assert_eq!(search.len(), 1, "{}", r["request"]);
        if search[0]["execution"] == "client" {
            assert!(search[0]["parameters"]["properties"]["query"].is_object());
        }
        executions.insert(search[0]["execution"].as_str().unwrap().to_string());
    }
    assert_eq!(executions.into_iter().collect::<Vec<_>>(), ["client", "server"]);
    // The history carried each search back as the protocol's own pair of items, for both executions.
    let items: Vec<&Value> =
        requests.iter().flat_map(|r| r["request"]["input"].as_array().unwrap()).collect();
    for execution in ["server", "client"] {
        for kind in ["tool_search_call", "tool_search_output"] {
            assert!(
                items.iter().any(|i| i["type"] == kind && i["execution"] == execution),
                "{kind} ({execution})"
            );
        }
    }
    let trials = trials_with_transcripts(&env.path("out/n"));
    for layout in ["native-search", "native-search-client"] {
        assert!(
            trials.iter().any(|t| t["layout"] == layout && t["score"]["pass"] == true),
            "{layout}: a loaded tool was called and passed"
        );
    }
}

#[test]
fn namespaced_requests_and_answers_validate_against_the_official_sdk() {
    let Some(venv) = tiers::require(Tier::OpenAiSdk) else { return };
    let (env, sdk) = forwarding_to_the_mock(&venv);
    let url = format!("{}/v1", sdk.root());
    // The `good` variant only: the tool names below are the catalog files' (the `bad` variant's
    // degrade operators rename tools).
    let o = toolpick(
        &argv_with(
            "run --catalog cat --dataset ds.jsonl --backends openai-responses --model mock \
             --base-url {} --layouts flat,native-search,native-search-client --namespaces --variants good \
             --out out --run-id g -q --no-cache",
            &[&url],
        ),
        env.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = sdk.requests();
    assert_valid_responses(&requests);
    assert_paired_history(&requests);
    // The small catalog's servers, one file each: (name, description, tool names).
    let servers: Vec<(String, String, Vec<String>)> = std::fs::read_dir(env.dir.path().join("cat"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            let tools = v["categories"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|c| c["tools"].as_array().unwrap());
            let names = tools.map(|t| t["name"].as_str().unwrap().to_string()).collect();
            (
                v["name"].as_str().unwrap().to_string(),
                v["description"].as_str().unwrap().to_string(),
                names,
            )
        })
        .collect();
    assert!(servers.len() >= 2);
    let mut layouts_seen = std::collections::BTreeSet::new();
    for r in &requests {
        let tools = r["request"]["tools"].as_array().unwrap();
        // Only the layouts' meta-tools stay top level; every function is in a namespace.
        assert!(tools.iter().all(|t| t["type"] != "function"), "{}", r["request"]);
        let groups: Vec<&Value> = tools.iter().filter(|t| t["type"] == "namespace").collect();
        assert!(!groups.is_empty(), "{}", r["request"]);
        let mut names = std::collections::HashSet::new();
        for g in &groups {
            assert!(names.insert(g["name"].as_str().unwrap()), "one namespace per server");
            assert!(g["description"].as_str().is_some_and(|d| !d.is_empty()));
            let functions = g["tools"].as_array().unwrap();
            assert!(!functions.is_empty() && functions.iter().all(|f| f["type"] == "function"));
        }
        // Every server is one namespace named after it, with its description and its tools.
        assert_eq!(groups.len(), servers.len(), "{}", r["request"]);
        for (name, description, tools) in &servers {
            let g =
                groups.iter().find(|g| g["name"] == name.as_str()).expect("a namespace per server");
            assert_eq!(g["description"], description.as_str());
            let mut inside: Vec<String> = g["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["name"].as_str().unwrap().to_string())
                .collect();
            let mut expected = tools.clone();
            inside.sort();
            expected.sort();
            assert_eq!(inside, expected, "{name}");
        }
        let deferred = groups
            .iter()
            .flat_map(|g| g["tools"].as_array().unwrap())
            .all(|f| f["defer_loading"] == true);
        let search = tools.iter().find(|t| t["type"] == "tool_search");
        layouts_seen.insert(match search.map(|s| s["execution"].as_str().unwrap()) {
            None => {
                assert!(
                    groups
                        .iter()
                        .flat_map(|g| g["tools"].as_array().unwrap())
                        .all(|f| f.get("defer_loading").is_none())
                );
                "flat"
            }
            Some(e) => {
                assert!(deferred, "{}", r["request"]);
                if e == "server" { "native-search" } else { "native-search-client" }
            }
        });
    }
    assert_eq!(layouts_seen.len(), 3);
    // The answers called grouped functions in their namespace, and the history carried it back.
    let items: Vec<&Value> =
        requests.iter().flat_map(|r| r["request"]["input"].as_array().unwrap()).collect();
    let calls: Vec<&&Value> = items.iter().filter(|i| i["type"] == "function_call").collect();
    assert!(!calls.is_empty() && calls.iter().all(|c| c["namespace"].is_string()));
    let trials = trials_with_transcripts(&env.path("out/g"));
    for layout in ["flat", "native-search", "native-search-client"] {
        assert!(
            trials.iter().any(|t| t["layout"] == layout && t["score"]["pass"] == true),
            "{layout}: a grouped tool was called and passed"
        );
    }
}

#[test]
fn scripted_sdk_answers_score_every_task_with_multi_call_history_and_the_protocols_usage() {
    let Some(venv) = tiers::require(Tier::OpenAiSdk) else { return };
    let dir = tempfile::tempdir().unwrap();
    let usage = json!({"input_tokens": 150, "input_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 20},
                  "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 157});
    let sdk = scripted(dir.path(), usage, |log, mode| start(&venv, log, mode));
    let url = format!("{}/v1", sdk.root());
    let secret = "sk-toolpick-responses-test-7c1e";
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends"])
        .args(["openai-responses", "--model", "gpt-scripted", "--base-url", &url])
        .args(["--layouts", "flat", "--variants", "good", "--tool-choice", "required"])
        .args(["--max-tokens", "512", "--out", "out", "--run-id", "s", "-q", "--no-cache"])
        .env("OPENAI_API_KEY", secret)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = sdk.requests();
    assert_valid_responses(&requests);
    assert!(requests.iter().all(|r| r["has_key"] == true), "the key goes in Authorization");
    for r in &requests {
        assert_eq!(r["request"]["tool_choice"], "required");
        assert_eq!(r["request"]["max_output_tokens"], 512);
    }
    // Two calls in one answer went back as two function_call items, each answered.
    assert_eq!(assert_paired_history(&requests), 2);
    let trials = trials_with_transcripts(&dir.path().join("out/s"));
    assert_eq!(trials.len(), 4);
    for t in &trials {
        assert_eq!(t["score"]["pass"], true, "{}: {}", t["task_id"], t["score"]);
        // Per request: input_tokens (cache reads and writes included), as the script says.
        let steps = t["steps"].as_u64().unwrap();
        assert_eq!(
            t["usage"],
            json!({"prompt_tokens": 150 * steps, "completion_tokens": 7 * steps,
                   "cached_tokens": 30 * steps, "cache_write_tokens": 20 * steps,
                   "reasoning_tokens": 3 * steps}),
            "{}",
            t["task_id"]
        );
    }
    let steps: u64 = trials.iter().map(|t| t["steps"].as_u64().unwrap()).sum();
    assert_eq!(steps, requests.len() as u64);
    for entry in files_under(&dir.path().join("out")) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        assert!(!text.contains(secret), "{} holds the key", entry.display());
    }
}

#[test]
fn the_validator_refuses_what_is_not_the_protocol_both_ways() {
    let Some(venv) = tiers::require(Tier::OpenAiSdk) else { return };
    let (_mock, sdk) = forwarding_to_the_mock(&venv);
    let good = json!({"model": "mock", "store": false, "input": [
        {"type": "message", "role": "user", "content": "How warm is it in Pune?"},
        {"type": "function_call", "call_id": "c1", "name": "get_current_weather", "arguments": "{\"city\": \"Pune\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "31"}],
        "tools": [{"type": "function", "name": "get_current_weather", "description": "d",
                   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false}]});
    // Wrong the ways a hand-written client goes wrong: arguments as an object (Messages' `input`),
    // chat completions' nested tool, Messages' tool_result block.
    let mut object_arguments = good.clone();
    object_arguments["input"][1]["arguments"] = json!({"city": "Pune"});
    let mut chat_tool = good.clone();
    chat_tool["tools"][0] =
        json!({"type": "function", "function": {"name": "get_current_weather"}});
    let mut tool_result = good.clone();
    tool_result["input"][2] = json!({"type": "tool_result", "tool_use_id": "c1", "content": "31"});
    for body in [&good, &object_arguments, &chat_tool, &tool_result] {
        assert_eq!(sdk.post("/v1/responses", body), 200);
    }
    // A chat completion forwarded as if it answered the Responses route.
    let chat = json!({"model": "mock", "messages": [{"role": "user", "content": "Pune?"}]});
    sdk.post("/v1/chat/completions", &chat);
    let log = sdk.requests();
    assert_eq!(log.len(), 5);
    assert!(log[0]["request_error"].is_null(), "{}", log[0]["request_error"]);
    assert!(log[0]["response_error"].is_null(), "{}", log[0]["response_error"]);
    for (r, why) in log[1..4].iter().zip(["object arguments", "chat tool", "tool_result"]) {
        assert!(r["request_error"].is_string(), "{why} was accepted: {}", r["request"]);
    }
    assert!(log[4]["response_error"].is_string(), "a chat completion passed as a Response");
}
