//! The provider-SDK test server (`scripts/provider_sdk_server.py`), run by a tier's Python: it
//! captures every request toolpick sends and validates it, and every answer it gives, against the
//! provider's official SDK (`--sdk anthropic|openai|gemini`), logging one JSON line per request.

use super::{SMALL_DATASET, repo, write_small_catalog};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The SDK test server, stopped (and its standard input closed, which ends it too) when dropped.
pub struct SdkServer {
    child: Child,
    pub port: u16,
    log: PathBuf,
    /// What it printed when it started: `PORT <n> <sdk> <version>`.
    pub banner: String,
}

impl SdkServer {
    /// The server validating with `sdk` (the tier's venv at `venv`), logging to `log`, in `mode`
    /// (`--upstream URL` or `--script FILE`).
    pub fn start(venv: &Path, sdk: &str, log: PathBuf, mode: &[&str]) -> SdkServer {
        let mut child = Command::new(venv.join("bin/python"))
            .arg(repo().join("scripts/provider_sdk_server.py"))
            .args(["--sdk", sdk, "--log"])
            .arg(&log)
            .args(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the SDK test server starts");
        let mut banner = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut banner).unwrap();
        let port = banner
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the SDK test server said {banner:?}"));
        SdkServer { child, port, log, banner }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn root(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request it received, as logged.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// `POST path` with `body`, over a plain socket; the answer's status.
    pub fn post(&self, path: &str, body: &Value) -> u16 {
        let body = body.to_string();
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap()
    }
}

impl Drop for SdkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every logged request and answer the SDK accepted; panics with the first failures otherwise.
pub fn assert_all_valid(requests: &[Value]) {
    let bad: Vec<String> = requests
        .iter()
        .filter(|r| !r["request_error"].is_null() || !r["response_error"].is_null())
        .take(3)
        .map(|r| {
            format!(
                "request {}: request error {}; response error {}\nrequest: {}",
                r["n"],
                r["request_error"],
                r["response_error"],
                r["request"].to_string().chars().take(1500).collect::<String>()
            )
        })
        .collect();
    assert!(bad.is_empty(), "the SDK rejected:\n{}", bad.join("\n\n"));
    assert!(!requests.is_empty(), "no request reached the SDK test server");
}

/// Every file under `dir`.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(files_under(&p)) } else { out.push(p) }
    }
    out
}

/// The tool calls that answer each query of the small dataset (`SMALL_DATASET`), by flat name, with
/// `usage` (in the protocol's own shape) on every answer: the server's `--script`.
pub fn script(usage: Value) -> Value {
    json!({
        "usage": usage,
        "answers": {
            "How warm is it in Pune right now?": [
                {"name": "get_current_weather", "input": {"city": "Pune"}}],
            "Forecast for Oslo and Lima for 3 days": [
                {"name": "get_forecast", "input": {"city": "Oslo", "days": 3}},
                {"name": "get_forecast", "input": {"city": "Lima", "days": 3}}],
            "Mail ana@example.com with subject \"Hi\" and tell me the weather in Rome": [
                {"name": "send_email", "input": {"to": "ana@example.com", "subject": "Hi"}},
                {"name": "get_current_weather", "input": {"city": "Rome"}}]
        }
    })
}

/// In `dir`: the small catalog (`cat`), the small dataset (`ds.jsonl`) and [`script`]`(usage)`; then
/// `start` runs the SDK test server answering from that script and logging to `sdk.jsonl`.
pub fn scripted(
    dir: &Path,
    usage: Value,
    start: impl FnOnce(PathBuf, &[&str]) -> SdkServer,
) -> SdkServer {
    write_small_catalog(&dir.join("cat"));
    std::fs::write(dir.join("ds.jsonl"), SMALL_DATASET).unwrap();
    let script_file = dir.join("script.json");
    std::fs::write(&script_file, script(usage).to_string()).unwrap();
    start(dir.join("sdk.jsonl"), &["--script", script_file.to_str().unwrap()])
}
