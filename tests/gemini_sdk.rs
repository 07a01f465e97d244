//! The `gemini` backend against an independent implementation of its protocol: Google's official Gen
//! AI Python SDK (the `gemini-sdk` tier, `scripts/install-venv.sh gemini-sdk`). A test server
//! (`scripts/provider_sdk_server.py --sdk gemini`, run by the tier's Python) captures every request
//! toolpick sends and validates each of its fields as the SDK's type for it (`Content`, `Tool`,
//! `ToolConfig`, `GenerationConfig`, and together as `GenerateContentConfig`; the SDK's models forbid
//! unknown fields), and every answer it passes on as `GenerateContentResponse`: answers of toolpick's
//! mock endpoint (forwarded), or answers it builds from the SDK's own objects (scripted, calls
//! without ids, signed), which must score every task. The validator is shown to refuse what is not
//! the protocol, both ways.

mod common;
use common::sdk::{SdkServer, assert_all_valid, files_under, scripted};
use common::tiers::{self, Tier};
use common::*;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use toolpick::mock::MockConfig;

/// The SDK test server validating with `google-genai`; its root is the backend's base URL.
fn start(venv: &Path, log: PathBuf, mode: &[&str]) -> SdkServer {
    let sdk = SdkServer::start(venv, "gemini", log, mode);
    assert!(sdk.banner.contains("gemini 3.3.0"), "the pinned SDK: {:?}", sdk.banner);
    sdk
}

/// Every logged request and answer the SDK accepted, each on the model's `generateContent` route.
fn assert_valid_gemini(requests: &[Value], model: &str) {
    assert_all_valid(requests);
    for r in requests {
        assert_eq!(r["path"], format!("/v1beta/models/{model}:generateContent"));
        assert_eq!(r["headers"]["content-type"], "application/json");
    }
}

/// The protocol's history rules in every request: no `system` role (the system prompt is
/// `systemInstruction`); each `model` turn's `functionCall` parts answered by the next content, a
/// `user` one holding exactly one `functionResponse` per call, in order, by name. Returns the most
/// calls one answered turn held.
fn assert_paired_history(requests: &[Value]) -> usize {
    let mut most = 0;
    for r in requests {
        let body = &r["request"];
        assert!(body["systemInstruction"]["parts"][0]["text"].is_string(), "{body}");
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents[0]["role"], "user", "{body}");
        for (i, c) in contents.iter().enumerate() {
            assert!(c["role"] == "user" || c["role"] == "model", "{c}");
            if c["role"] != "model" {
                continue;
            }
            let parts = c["parts"].as_array().unwrap();
            let calls: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionCall")).collect();
            if calls.is_empty() {
                continue;
            }
            let next = &contents[i + 1];
            assert_eq!(next["role"], "user", "results go back in a user turn: {body}");
            let answers: Vec<&Value> = next["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.get("functionResponse").expect("only results"))
                .collect();
            assert_eq!(answers.len(), calls.len(), "one result per call: {body}");
            for (a, c) in answers.iter().zip(&calls) {
                assert_eq!(a["name"], c["name"], "in order, by name: {body}");
                assert!(a["response"].is_object(), "{a}");
            }
            most = most.max(calls.len());
        }
    }
    most
}

#[test]
fn requests_and_the_mock_endpoints_answers_validate_against_the_official_sdk() {
    let Some(venv) = tiers::require(Tier::GeminiSdk) else { return };
    let env = MockEnv::start(MockConfig::default(), &[]);
    let upstream = format!("http://{}", env.server.addr);
    let sdk = start(&venv, env.path("sdk.jsonl"), &["--upstream", &upstream]);
    let url = sdk.root();
    let o = toolpick(
        &[
            "run",
            "--catalog",
            "cat",
            "--dataset",
            "ds.jsonl",
            "--backends",
            "lexical,gemini",
            "--model",
            "mock",
            "--base-url",
            &url,
            "--layouts",
            "flat,progressive,search",
            "--temperature",
            "0.5",
            "--top-p",
            "0.9",
            "--max-tokens",
            "400",
            "--model-seed",
            "3",
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
    assert_valid_gemini(&requests, "mock");
    assert!(assert_paired_history(&requests) >= 1, "multi-step episodes carried calls back");
    for r in &requests {
        let body = &r["request"];
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0.5, "topP": 0.9, "maxOutputTokens": 400, "seed": 3})
        );
        assert_eq!(body["toolConfig"], json!({"functionCallingConfig": {"mode": "AUTO"}}));
        for f in body["tools"][0]["functionDeclarations"].as_array().unwrap() {
            assert_eq!(f["parametersJsonSchema"]["type"], "object", "{f}");
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
fn scripted_sdk_answers_score_every_task_with_signatures_echoed_and_usage_normalised() {
    let Some(venv) = tiers::require(Tier::GeminiSdk) else { return };
    let dir = tempfile::tempdir().unwrap();
    let usage = json!({"promptTokenCount": 120, "cachedContentTokenCount": 40, "toolUsePromptTokenCount": 6,
                  "candidatesTokenCount": 9, "thoughtsTokenCount": 4, "totalTokenCount": 139});
    let sdk = scripted(dir.path(), usage, |log, mode| start(&venv, log, mode));
    let url = sdk.root();
    let secret = "AIza-toolpick-gemini-sdk-91c4";
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", "gemini"])
        .args(["--model", "gemini-scripted", "--base-url", &url, "--layouts", "flat"])
        .args(["--variants", "good", "--tool-choice", "required"])
        .args(["--out", "out", "--run-id", "s", "-q", "--no-cache"])
        .env("GEMINI_API_KEY", secret)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = sdk.requests();
    assert_valid_gemini(&requests, "gemini-scripted");
    assert!(requests.iter().all(|r| r["has_key"] == true), "the key goes in x-goog-api-key");
    assert!(
        requests
            .iter()
            .all(|r| r["request"]["toolConfig"]["functionCallingConfig"]["mode"] == "ANY")
    );
    assert_eq!(assert_paired_history(&requests), 2);
    // The signatures the SDK's answers carried came back, unchanged, on the calls they signed.
    let sent: HashSet<String> = requests
        .iter()
        .flat_map(|r| r["response"]["candidates"][0]["content"]["parts"].as_array().cloned())
        .flatten()
        .filter_map(|p| p["thoughtSignature"].as_str().map(String::from))
        .collect();
    let echoed: Vec<String> = requests
        .iter()
        .flat_map(|r| r["request"]["contents"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["role"] == "model")
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("functionCall").is_some())
        .map(|p| p["thoughtSignature"].as_str().map(String::from).unwrap_or_default())
        .filter(|s| !s.is_empty())
        .collect();
    assert!(!echoed.is_empty() && echoed.iter().all(|s| sent.contains(s)), "{echoed:?} ⊄ {sent:?}");
    let trials = trials_with_transcripts(&dir.path().join("out/s"));
    assert_eq!(trials.len(), 4);
    for t in &trials {
        assert_eq!(t["score"]["pass"], true, "{}: {}", t["task_id"], t["score"]);
        let steps = t["steps"].as_u64().unwrap();
        assert_eq!(
            t["usage"],
            json!({"prompt_tokens": 126 * steps, "completion_tokens": 13 * steps,
                   "cached_tokens": 40 * steps, "reasoning_tokens": 4 * steps}),
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
    let Some(venv) = tiers::require(Tier::GeminiSdk) else { return };
    let env = MockEnv::start(MockConfig::default(), &[]);
    let upstream = format!("http://{}", env.server.addr);
    let sdk = start(&venv, env.path("sdk.jsonl"), &["--upstream", &upstream]);
    let path = "/v1beta/models/mock:generateContent";
    let good = json!({"contents": [
            {"role": "user", "parts": [{"text": "How warm is it in Pune?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_current_weather", "args": {"city": "Pune"}},
                                         "thoughtSignature": "bW9jay10aG91Z2h0"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_current_weather", "response": {"output": 31}}}]}],
        "systemInstruction": {"parts": [{"text": "Use the tools."}]},
        "tools": [{"functionDeclarations": [{"name": "get_current_weather", "description": "d",
            "parametersJsonSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"temperature": 0.0, "maxOutputTokens": 64}});
    // Wrong the ways a client written for another protocol goes wrong: arguments as JSON text
    // (chat completions), a result as a string, Messages' `input_schema`, OpenAI's `max_tokens`,
    // a top-level `messages`.
    let mut wrong = Vec::new();
    let mut v = good.clone();
    v["contents"][1]["parts"][0]["functionCall"]["args"] = json!("{\"city\": \"Pune\"}");
    wrong.push(("args as text", v));
    let mut v = good.clone();
    v["contents"][2]["parts"][0]["functionResponse"]["response"] = json!("31");
    wrong.push(("response as text", v));
    let mut v = good.clone();
    v["tools"][0]["functionDeclarations"][0]["input_schema"] = json!({"type": "object"});
    wrong.push(("input_schema", v));
    let mut v = good.clone();
    v["generationConfig"]["max_tokens"] = json!(64);
    wrong.push(("max_tokens", v));
    let mut v = good.clone();
    v["messages"] = json!([]);
    wrong.push(("messages", v));
    assert_eq!(sdk.post(path, &good), 200);
    for (_, body) in &wrong {
        sdk.post(path, body);
    }
    // A chat completion forwarded as if it answered generateContent.
    sdk.post(
        "/v1/chat/completions",
        &json!({"model": "mock", "messages": [{"role": "user", "content": "Pune?"}]}),
    );
    let log = sdk.requests();
    assert_eq!(log.len(), 2 + wrong.len());
    assert!(log[0]["request_error"].is_null(), "{}", log[0]["request_error"]);
    assert!(log[0]["response_error"].is_null(), "{}", log[0]["response_error"]);
    for (r, (why, _)) in log[1..=wrong.len()].iter().zip(&wrong) {
        assert!(r["request_error"].is_string(), "{why} was accepted: {}", r["request"]);
    }
    assert!(log[wrong.len() + 1]["response_error"].is_string(), "a chat completion passed");
}
