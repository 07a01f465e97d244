//! Secrets never reach an output (issue 12, part 3): endpoints started by the test echo the API key
//! they were sent — in error bodies, headers, a `Basic` credential, the assistant's text, JSON-escaped
//! — and no file the run writes (trials, reports, the response cache, run.json), nor stdout/stderr,
//! may contain the key or a recognisable base64 form of it.

mod common;
use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use toolpick::mock::{self, Fault, MockConfig};

const SECRET: &str = "sk-proj-R3dact1on-T3st-5e1f0a9b7c";

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// What must never be found: the key, and 12-character windows of its base64 forms at every alignment
/// (a fragment that long identifies the key).
fn needles() -> Vec<String> {
    let mut out = vec![SECRET.to_string()];
    for prefix in ["", "u", "us", "user:", "Bearer "] {
        let enc = base64(format!("{prefix}{SECRET}").as_bytes());
        // Skip the group mixing prefix and key, keep a window from the middle.
        let mid = &enc[8..20];
        out.push(mid.to_string());
    }
    out
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Every file under `dir` and both output streams are free of every needle; returns how many files
/// were checked and how many mention `[REDACTED]`.
fn assert_clean(dir: &Path, outputs: &[&Output]) -> (usize, usize) {
    let needles = needles();
    let (mut checked, mut marked) = (0, 0);
    for f in files(dir) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        for n in &needles {
            assert!(!text.contains(n.as_str()), "`{n}` (a form of the key) found in {}", f.display());
        }
        checked += 1;
        marked += usize::from(text.contains("[REDACTED]"));
    }
    for o in outputs {
        for n in &needles {
            assert!(!stdout(o).contains(n.as_str()) && !stderr(o).contains(n.as_str()), "`{n}` printed:\n{}\n{}", stdout(o), stderr(o));
        }
    }
    (checked, marked)
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("cat"));
    std::fs::write(dir.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    dir
}

fn run(dir: &Path, url: &str, run_id: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "run", "--catalog", "cat", "--dataset", "ds.jsonl", "--backends", "openai", "--model", "mock", "--base-url", url, "--out", "out", "--run-id", run_id,
        "--api-key-env", "REDACTION_TEST_KEY", "--max-attempts", "1", "--breaker", "0", "--cache-dir", "cache",
    ];
    args.extend_from_slice(extra);
    std::process::Command::new(env!("CARGO_BIN_EXE_toolpick")).args(&args).env("REDACTION_TEST_KEY", SECRET).current_dir(dir).output().unwrap()
}

#[test]
fn a_key_echoed_in_bodies_headers_and_answers_reaches_no_output_file_cache_or_stream() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // Every third chat request is a 401 whose body quotes the key; every response carries the key in
    // two headers, and every answer without a tool call quotes it in its text.
    let config = MockConfig { require_key: Some(SECRET.into()), echo_key: true, faults: vec![(Fault::Unauthorized, 3)], ..Default::default() };
    let server = rt.block_on(mock::spawn("127.0.0.1:0".parse().unwrap(), config)).unwrap();
    let dir = scratch();
    let o = run(dir.path(), &server.base_url(), "r", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(server.injected(Fault::Unauthorized) > 0, "the echoing 401s were served");

    // The echo happened and was caught: the 401s are recorded as errors with the key marked out.
    let trials = std::fs::read_to_string(dir.path().join("out/r/trials.jsonl")).unwrap();
    assert!(trials.contains("Incorrect API key provided: [REDACTED]"), "the 401 body is kept, redacted");
    // A second run is served from the cache, and `report` re-renders: still nothing.
    let again = run(dir.path(), &server.base_url(), "r2", &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    let report = toolpick(&["report", "out/r"], dir.path());
    assert!(report.status.success(), "{}", stderr(&report));
    let (checked, marked) = assert_clean(dir.path(), &[&o, &again, &report]);
    assert!(checked > 15, "only {checked} files checked");
    assert!(marked >= 3, "the redaction mark should show in trials, reports and the cache ({marked} files)");
}

#[test]
fn a_key_written_with_json_escapes_or_percent_encoded_is_removed_too() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // A hand-written endpoint: a valid chat completion whose text holds the key as `\u`-escaped JSON,
    // percent-encoded in a URL and in a Basic credential; `/models` answers so the preflight passes.
    let app = Router::new().fallback(|uri: axum::http::Uri, headers: HeaderMap| async move {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        let key = auth.trim_start_matches("Bearer ").to_string();
        if uri.path().ends_with("/models") {
            return (StatusCode::OK, r#"{"object":"list","data":[]}"#.to_string()).into_response();
        }
        let escaped: String = key.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
        let encoded: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
        let basic = base64(format!("me:{key}").as_bytes());
        let text = format!("key {escaped}; see https://x.test/?k={encoded}; Basic {basic}");
        let body = format!(
            r#"{{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{{"index":0,"message":{{"role":"assistant","content":"{text}"}},"finish_reason":"stop","logprobs":null}}],"usage":{{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}}}"#
        );
        (StatusCode::OK, [("content-type", "application/json")], body).into_response()
    });
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
    let dir = scratch();
    let o = run(dir.path(), &url, "r", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = std::fs::read_to_string(dir.path().join("out/r/trials.jsonl")).unwrap();
    assert!(trials.contains("key [REDACTED]; see https://x.test/?k=[REDACTED]; Basic "), "{}", &trials[..trials.len().min(2000)]);
    let (checked, _) = assert_clean(dir.path(), &[&o]);
    assert!(checked > 10);
    // The percent-encoded form must not survive either (it is not a needle of `assert_clean`).
    let encoded: String = SECRET.bytes().map(|b| format!("%{b:02X}")).collect();
    for f in files(dir.path()) {
        assert!(!String::from_utf8_lossy(&std::fs::read(&f).unwrap()).contains(&encoded), "{}", f.display());
    }
}
