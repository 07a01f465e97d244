//! `toolpick mcp serve --http` as the MCP transport specification (2025-06-18, 2025-11-25) asks of a
//! server: `Origin` validated (loopback or `--allow-origin`), `Host` validated against the names the
//! server answers to (loopback, the bound address, `--allow-host`, which `--allow-remote` needs), a
//! session for every 2025-11-25 request but `initialize`, none for a stateless 2026-07-28 one,
//! `localhost:PORT` accepted, idle sessions ended. The server is the real binary serving the bundled
//! catalog on the simulator; the client is a plain HTTP/1.1 one (`http_client`), so each test chooses
//! every header.

mod http_client;
use http_client::{Session, initialize_body, request};
use serde_json::{Value, json};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_toolpick");
const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// `toolpick mcp serve <args>` (an `--http` among them); `addr` is where to connect (the announced
/// port on 127.0.0.1).
struct Served {
    child: Child,
    addr: String,
    announced: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(args: &[&str]) -> Served {
    let mut child = Command::new(BIN)
        .args(["mcp", "serve", "--layout", "flat"])
        .args(args)
        .current_dir(REPO)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let announced = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in `{line}`"))
        .to_string();
    let port = announced.trim_end_matches("/mcp").rsplit(':').next().unwrap().to_string();
    Served { child, addr: format!("127.0.0.1:{port}"), announced }
}

fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> http_client::Reply {
    request(addr, "POST", headers, Some(body))
}

/// A refusal is a JSON-RPC error and opens no session.
fn assert_refused(r: &http_client::Reply, status: u16, says: &str) {
    assert_eq!(r.status, status, "{r:?}");
    let m: Value = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    assert_eq!(m["jsonrpc"], "2.0", "{m}");
    assert_eq!(m["error"]["code"], -32000, "{m}");
    let message = m["error"]["message"].as_str().unwrap();
    assert!(message.contains(says), "{message}");
    assert!(r.header("mcp-session-id").is_none(), "{r:?}");
}

#[test]
fn an_evil_origin_is_refused_and_a_loopback_or_absent_origin_gets_a_session() {
    let s = serve(&["--http", "127.0.0.1:0"]);
    let r = post(&s.addr, &[("Origin", "http://evil.example")], &initialize_body());
    assert_refused(&r, 403, "Origin `http://evil.example` is not allowed");
    // A page on another site resolving to this machine names itself in Origin, not in Host.
    let r = post(&s.addr, &[("Origin", "null")], &initialize_body());
    assert_refused(&r, 403, "--allow-origin");
    Session::open(&s.addr, &[("Origin", "http://localhost:5173")]);
    Session::open(&s.addr, &[("Origin", "http://127.0.0.1:8080")]);
    let mut plain = Session::open(&s.addr, &[]);
    // And a refused origin cannot use an existing session either.
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string();
    let r =
        post(&s.addr, &[("Mcp-Session-Id", &plain.id), ("Origin", "http://evil.example")], &call);
    assert_refused(&r, 403, "Origin");
    assert!(
        plain.call("tools/list", json!({}))["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
}

#[test]
fn allow_origin_admits_exactly_the_origins_listed() {
    let s = serve(&[
        "--http",
        "127.0.0.1:0",
        "--allow-origin",
        "https://app.example.com",
        "--allow-origin",
        "http://tools.example.lan:3000",
    ]);
    Session::open(&s.addr, &[("Origin", "https://app.example.com")]);
    Session::open(&s.addr, &[("Origin", "http://tools.example.lan:3000")]);
    for refused in ["https://app.example.com:8443", "http://app.example.com", "http://evil.example"]
    {
        let r = post(&s.addr, &[("Origin", refused)], &initialize_body());
        assert_refused(&r, 403, refused);
    }
    // A malformed value is a usage error, before anything listens.
    let out = Command::new(BIN)
        .args(["mcp", "serve", "--http", "127.0.0.1:0", "--allow-origin", "https://x.example/app"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-origin"));
}

#[test]
fn allow_remote_with_allow_host_serves_a_client_naming_that_host_and_no_other() {
    let s = serve(&["--http", "0.0.0.0:0", "--allow-remote", "--allow-host", "mcp.example.lan"]);
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    let named = format!("mcp.example.lan:{port}");
    let mut remote = Session::open(&s.addr, &[("Host", &named)]);
    let tools = remote.call("tools/list", json!({}));
    assert!(tools["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{tools}");
    for other in [format!("evil.example:{port}"), format!("0.0.0.0:{port}")] {
        let r = post(&s.addr, &[("Host", &other)], &initialize_body());
        assert_refused(&r, 403, "Host");
    }
    // Every address without the name clients use would refuse every remote client: a usage error.
    let out = Command::new(BIN)
        .args(["mcp", "serve", "--http", "0.0.0.0:0", "--allow-remote"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-host"));
}

#[test]
fn http_localhost_port_binds_loopback_and_serves() {
    let s = serve(&["--http", "localhost:0"]);
    assert!(s.announced.starts_with("http://127.0.0.1:"), "{}", s.announced);
    let mut session = Session::open(&s.addr, &[("Host", "localhost")]);
    assert!(session.call("tools/list", json!({}))["result"]["tools"].is_array());
    let out =
        Command::new(BIN).args(["mcp", "serve", "--http", "example.com:80"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--http"));
}

#[test]
fn a_legacy_request_needs_a_session_and_a_stateless_one_is_served_without() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls.jsonl");
    let s = serve(&["--http", "127.0.0.1:0", "--record", record.to_str().unwrap()]);
    let arguments = json!({"repository": "payments-service"});
    let plain = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "get_repository", "arguments": arguments}});
    let r = post(&s.addr, &[], &plain.to_string());
    assert_refused(&r, 400, "Mcp-Session-Id");
    assert_eq!(serde_json::from_str::<Value>(&r.body).unwrap()["id"], 5);
    assert_eq!(std::fs::read_to_string(&record).unwrap_or_default(), "", "a refused call ran");
    // The stateless header alone does not make a legacy request stateless.
    let r = post(&s.addr, &[("MCP-Protocol-Version", "2026-07-28")], &plain.to_string());
    assert_refused(&r, 400, "_meta");
    // The stateless revision's request: its version in `_meta` and the header, no session.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"},
    });
    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}});
    let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "server/discover")];
    let r = post(&s.addr, &headers, &discover.to_string());
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.header("mcp-session-id").is_none(), "a stateless request opened a session: {r:?}");
    assert!(r.message()["result"]["supportedVersions"].to_string().contains("2026-07-28"), "{r:?}");
    let stateless = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "get_repository", "arguments": arguments, "_meta": meta}});
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "get_repository"),
    ];
    let r = post(&s.addr, &headers, &stateless.to_string());
    assert_eq!(r.status, 200, "{r:?}");
    let text = r.message()["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
    assert!(text.contains("payments-service"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&record).unwrap().lines().count(), 1);
    // In a session, the legacy call runs (and is recorded).
    let mut session = Session::open(&s.addr, &[]);
    let (text, is_error) = session.call_tool("get_repository", arguments);
    assert!(!is_error && text.contains("payments-service"), "{text}");
    assert_eq!(std::fs::read_to_string(&record).unwrap().lines().count(), 2);
}

#[test]
fn an_idle_session_ends_after_session_idle_ms() {
    let s = serve(&["--http", "127.0.0.1:0", "--session-idle-ms", "1500"]);
    let mut kept = Session::open(&s.addr, &[]);
    let idle = Session::open(&s.addr, &[]);
    // `kept` speaks every 100 ms (well within its idle time, even on a busy machine); `idle` says
    // nothing for three seconds, twice its idle time.
    for _ in 0..30 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(kept.call("tools/list", json!({}))["result"].is_object());
    }
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
    let r = idle.post(&list);
    assert_eq!(r.status, 404, "the idle session is gone: {r:?}");
}
