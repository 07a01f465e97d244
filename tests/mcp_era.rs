//! Both MCP protocol eras, end to end, against real servers of each:
//!
//! - **2026-07-28** (stateless, `server/discover`, multi round-trip requests): a small server on the
//!   Python MCP SDK 2.3.0 (`tests/fixtures/era_server.py`, no toolpick code; the `mcp-pypi` tier),
//!   imported, then run live with an elicitation answered through an `input_required` round;
//! - **2025-11-25** (the `initialize` handshake, server-initiated requests): server-everything (the
//!   `mcp-npm` tier), run live with a form elicitation and the `-32042` "URL elicitation required"
//!   error;
//! - toolpick's own `mcp serve` over stdio, answering `server/discover`, stateless requests and a
//!   legacy session, read by this test as raw JSON lines.

mod common;
use common::tiers::{self, Tier};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_toolpick");

fn toolpick(args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(REPO).output().expect("run toolpick")
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "toolpick failed ({:?}):\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn catalog_meta(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("catalog.json")).unwrap()).unwrap()
}

/// The catalog id of the tool sent as `wire` (the importer chooses the category).
fn tool_id(meta: &Value, wire: &str) -> String {
    let tools = meta["mcp"]["tools"].as_object().unwrap();
    tools.iter().find(|(_, t)| t["name"] == wire).map(|(id, _)| id.clone()).unwrap()
}

fn write_dataset(path: &Path, tasks: &[Value]) {
    let text: String = tasks.iter().map(|t| format!("{t}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// A live run of the oracle in the flat layout; its trials.
fn live_run(catalog: &Path, dataset: &Path, out: &Path, allow: &str) -> Vec<Value> {
    let args = [
        "run",
        "--catalog",
        catalog.to_str().unwrap(),
        "--dataset",
        dataset.to_str().unwrap(),
        "--execute",
        "live",
        "--backends",
        "oracle",
        "--layouts",
        "flat",
        "--variants",
        "good",
        "--allow-destructive",
        "--live-allow",
        allow,
        "--out",
        out.to_str().unwrap(),
        "--run-id",
        "era",
        "--quiet",
    ];
    ok(&toolpick(&args));
    std::fs::read_to_string(out.join("era/trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn trial<'a>(trials: &'a [Value], task: &str) -> &'a Value {
    trials.iter().find(|t| t["task_id"] == task).unwrap_or_else(|| panic!("no trial of {task}"))
}

/// The live record of the trial's first call.
fn first_call(t: &Value) -> &Value {
    &t["calls"][0]["record"]["live"]
}

/// Every tool result the model read in the run.
fn tool_results(out: &Path) -> String {
    let text = std::fs::read_to_string(out.join("era/transcripts.jsonl")).unwrap();
    let mut all = String::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for m in v["transcript"].as_array().unwrap().iter().filter(|m| m["role"] == "tool") {
            all += m["content"].as_str().unwrap_or_default();
            all.push('\n');
        }
    }
    all
}

fn python() -> PathBuf {
    tiers::installed(Tier::McpPypi).join("venv/bin/python")
}

#[test]
fn a_stateless_server_is_imported_and_run_live_in_its_era_with_an_input_required_round() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("era");
    let python = python();
    let server = format!("{REPO}/tests/fixtures/era_server.py");
    let import = [
        "mcp",
        "import",
        "--out",
        catalog.to_str().unwrap(),
        "--name",
        "era",
        "--capabilities",
        "elicitation",
        "--",
        python.to_str().unwrap(),
        &server,
    ];
    ok(&toolpick(&import));
    let meta = catalog_meta(&catalog);
    // The SDK's server speaks 2026-07-28: reached by `server/discover`, not the handshake.
    assert_eq!(meta["mcp"]["protocolVersion"], "2026-07-28", "{}", meta["mcp"]);
    let (add, book) = (tool_id(&meta, "add"), tool_id(&meta, "book_table"));
    let dataset = tmp.path().join("era.jsonl");
    write_dataset(
        &dataset,
        &[
            json!({"id": "era-add", "query": "What is 2 plus 3?", "kind": "single", "category": "math",
                "expected": [{"tool": add, "arguments": {"a": [2], "b": [3]}}]}),
            json!({"id": "era-book-yes", "query": "Book a table for 2, I'll confirm.", "kind": "single", "category": "booking",
                "expected": [{"tool": book, "arguments": {"party": [2]}}],
                "live": {"elicitation": [{"action": "accept", "content": {"confirm": true}}],
                         "interactions": [{"kind": "elicitation"}]}}),
            json!({"id": "era-book-no", "query": "Book a table for 4, but I may say no.", "kind": "single", "category": "booking",
                "expected": [{"tool": book, "arguments": {"party": [4]}}],
                "live": {"elicitation": [{"action": "decline"}], "interactions": [{"kind": "elicitation"}]}}),
        ],
    );
    let out = tmp.path().join("runs");
    let trials = live_run(&catalog, &dataset, &out, "add,book_table");
    assert_eq!(trials.len(), 3);
    for t in &trials {
        assert_eq!(t["score"]["pass"], true, "{}: {} {}", t["task_id"], t["score"], t["error"]);
        assert_eq!(t["live"]["protocol"], "2026-07-28", "{}", t["live"]);
    }
    // The question came back as an `input_required` result; the scripted answer went back with the
    // retried call, once per call, and the server acted on it.
    let yes = first_call(trial(&trials, "era-book-yes"));
    assert_eq!(yes["elicitations"], json!([{"mode": "form", "action": "accept"}]), "{yes}");
    let no = first_call(trial(&trials, "era-book-no"));
    assert_eq!(no["elicitations"], json!([{"mode": "form", "action": "decline"}]), "{no}");
    assert!(first_call(trial(&trials, "era-add")).get("elicitations").is_none());
    let results = tool_results(&out);
    assert!(results.contains("booked a table for 2"), "{results}");
    assert!(results.contains("not booked (decline)"), "{results}");
    assert!(results.contains('5'), "{results}");
}

#[test]
fn server_everything_runs_in_the_handshake_era_and_url_elicitation_required_is_the_calls_error() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let servers = tiers::installed(Tier::McpNpm);
    let entry = servers.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("everything");
    let import = [
        "mcp",
        "import",
        "--out",
        catalog.to_str().unwrap(),
        "--name",
        "everything",
        "--capabilities",
        "sampling,elicitation",
        "--",
        "node",
        entry.to_str().unwrap(),
    ];
    ok(&toolpick(&import));
    let meta = catalog_meta(&catalog);
    // It answers `server/discover` with -32601: a legacy server, reached by `initialize`.
    assert_eq!(meta["mcp"]["protocolVersion"], "2025-11-25");
    let (form, url) =
        (tool_id(&meta, "trigger-elicitation-request"), tool_id(&meta, "trigger-url-elicitation"));
    let dataset = tmp.path().join("everything.jsonl");
    write_dataset(
        &dataset,
        &[
            json!({"id": "ev-form", "query": "Fill in my profile through the form.", "kind": "single", "category": "elicitation",
                "expected": [{"tool": form, "arguments": {}}],
                "live": {"elicitation": [{"action": "accept", "content": {"name": "Ada Lovelace", "check": true, "email": "ada@example.com", "integer": 7}}],
                         "interactions": [{"kind": "elicitation"}]}}),
            // server-everything answers this call with JSON-RPC error -32042 (URL elicitation
            // required, 2025-11-25) instead of asking: toolpick opens no URL and retries nothing.
            json!({"id": "ev-url-required", "query": "Approve access at https://example.com/consent.", "kind": "single", "category": "elicitation",
                "expected": [{"tool": url, "arguments": {"url": ["https://example.com/consent"], "errorPath": [true]}}]}),
        ],
    );
    let out = tmp.path().join("runs");
    let trials = live_run(&catalog, &dataset, &out, "trigger-*");
    for t in &trials {
        assert_eq!(t["live"]["protocol"], "2025-11-25", "{}", t["live"]);
    }
    let form = trial(&trials, "ev-form");
    assert_eq!(form["score"]["pass"], true, "{}", form["score"]);
    assert_eq!(first_call(form)["elicitations"], json!([{"mode": "form", "action": "accept"}]));
    let required = first_call(trial(&trials, "ev-url-required"));
    assert_eq!(required["is_error"], true, "{required}");
    assert!(required["detail"].as_str().unwrap().contains("-32042"), "{required}");
    assert!(required.get("elicitations").is_none(), "no URL was asked of the user: {required}");
    assert!(tool_results(&out).contains("Ada Lovelace"));
}

/// `toolpick mcp serve --layout flat` over stdio: send each line, read one answer per request.
fn serve_stdio(lines: &[Value]) -> Vec<Value> {
    let mut child = Command::new(BIN)
        .args(["mcp", "serve", "--layout", "flat"])
        .current_dir(REPO)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        if line.get("id").is_none() {
            continue;
        }
        let mut text = String::new();
        stdout.read_line(&mut text).unwrap();
        answers.push(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: `{text}`")));
    }
    drop(stdin);
    let _ = child.wait();
    answers
}

fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "era-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

#[test]
fn mcp_serve_over_stdio_answers_discover_and_stateless_requests_and_a_legacy_session() {
    let meta = stateless_meta();
    let arguments = json!({"repository": "payments-service"});
    let answers = serve_stdio(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "get_repository", "arguments": arguments, "_meta": meta}}),
    ]);
    let discover = &answers[0]["result"];
    let versions =
        discover["supportedVersions"].as_array().unwrap_or_else(|| panic!("{answers:?}"));
    assert!(versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2025-11-25")));
    assert!(discover["capabilities"]["tools"].is_object(), "{discover}");
    let tools = answers[1]["result"]["tools"].as_array().unwrap_or_else(|| panic!("{answers:?}"));
    assert!(tools.iter().any(|t| t["name"] == "get_repository"));
    let call = &answers[2]["result"];
    assert!(call["content"][0]["text"].as_str().unwrap().contains("payments-service"), "{call}");
    // The listing is the same each time it is asked (the 2026-07-28 revision asks for a
    // deterministic order).
    let again = serve_stdio(&[
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
    ]);
    assert_eq!(again[0]["result"]["tools"], answers[1]["result"]["tools"]);

    // The 2025-11-25 era: a handshake, then requests without `_meta`.
    let legacy = serve_stdio(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "era-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "get_repository", "arguments": arguments}}),
    ]);
    assert_eq!(legacy[0]["result"]["protocolVersion"], "2025-11-25", "{legacy:?}");
    let text = legacy[1]["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("payments-service"), "{legacy:?}");
    // A stateless request missing its client information is refused, not served.
    let partial = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let refused = serve_stdio(&[
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": partial}}),
    ]);
    assert!(refused[0]["error"]["code"].is_i64(), "{refused:?}");
}
