//! `toolpick mcp import` against the real reference servers (pinned npm packages, installed by
//! `scripts/install-test-deps.sh` into target/mcp-servers: the `mcp-npm` tier), over stdio.

mod common;
use common::tiers::{self, Tier};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The folder holding the installed servers (the `mcp-npm` tier, installed before the tests).
fn servers() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| tiers::installed(Tier::McpNpm))
}

fn entry(server: &str) -> String {
    servers()
        .join(format!("node_modules/@modelcontextprotocol/server-{server}/dist/index.js"))
        .display()
        .to_string()
}

fn toolpick(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolpick")).args(args).output().expect("run toolpick")
}

fn import(out: &Path, extra: &[&str], server: &[&str]) -> std::process::Output {
    let mut args = vec!["mcp", "import", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(server);
    toolpick(&args)
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect();
    out.sort();
    out
}

fn tool_count(dir: &Path) -> usize {
    toolpick::catalog::load_catalog(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .tool_count()
}

#[test]
fn server_everything_imports_the_same_files_twice_and_lists_more_tools_to_a_client_declaring_more()
{
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let everything = entry("everything");
    let (a, b, c) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
    for dir in [&a, &b] {
        let out = import(dir, &[], &["node", &everything]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(files(&a), files(&b), "two imports of the same server differ");
    // The counts measured with this pinned version (../shared/notes/mcp-live.md §0): 13 tools to a
    // client declaring nothing, 16 with sampling and elicitation.
    assert_eq!(tool_count(&a), 13);
    let out = import(&c, &["--capabilities", "sampling,elicitation"], &["node", &everything]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tool_count(&c), 16);
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(c.join("catalog.json")).unwrap()).unwrap();
    assert_eq!(meta["mcp"]["serverInfo"]["name"], "mcp-servers/everything");
    assert_eq!(
        meta["mcp"]["clientCapabilities"],
        serde_json::json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}})
    );
    assert_eq!(meta["mcp"]["protocolVersion"], "2025-11-25");
    // Wire names with hyphens are valid function names: kept as they are.
    let catalog = toolpick::catalog::load_catalog(&c).unwrap();
    assert!(catalog.tools().any(|t| t.tool.name == "trigger-sampling-request"));
    // The linter reads it like any catalog.
    let lint = toolpick(&["lint", a.to_str().unwrap(), "--format", "json"]);
    assert!(
        serde_json::from_slice::<serde_json::Value>(&lint.stdout).is_ok(),
        "lint: {}",
        String::from_utf8_lossy(&lint.stderr)
    );
}

#[test]
fn server_filesystem_keeps_annotations_as_sent_and_makes_missing_hints_the_unsafe_defaults() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let allowed = tmp.path().join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let out_dir = tmp.path().join("catalog");
    let out = import(
        &out_dir,
        &["--name", "files"],
        &["node", &entry("filesystem"), allowed.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tool_count(&out_dir), 14);
    let catalog = toolpick::catalog::load_catalog(&out_dir).unwrap();
    let read = catalog.tools().find(|t| t.tool.name == "read_text_file").expect("read_text_file");
    // It sends readOnlyHint and openWorldHint only: the other two take the specification's defaults,
    // destructiveHint's being meaningful only when readOnlyHint is false (so not destructive here).
    let a = &read.tool.annotations;
    assert!(
        a.read_only_hint && !a.open_world_hint && !a.destructive_hint && !a.idempotent_hint,
        "{a:?}"
    );
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("files.json")).unwrap()).unwrap();
    let sent = written["categories"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["tools"].as_array().unwrap())
        .find(|t| t["name"] == "read_text_file")
        .unwrap();
    // Only what the server sent is written; the catalog applies the defaults when it reads it.
    assert_eq!(
        sent["annotations"],
        serde_json::json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(read.category.name, "files_read");
    let write = catalog.tools().find(|t| t.tool.name == "write_file").expect("write_file");
    assert!(write.tool.annotations.destructive_hint && !write.tool.annotations.read_only_hint);
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("catalog.json")).unwrap()).unwrap();
    assert_eq!(
        meta["mcp"]["tools"]["files/files_read/read_text_file"]["annotations"],
        serde_json::json!({"readOnlyHint": true, "openWorldHint": false})
    );
}

#[test]
fn server_memory_imports_with_its_store_where_it_is_told() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("memory.jsonl");
    let out_dir = tmp.path().join("catalog");
    let env = format!("MEMORY_FILE_PATH={}", store.display());
    let out = import(&out_dir, &["--env", &env], &["node", &entry("memory")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tool_count(&out_dir), 9);
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("catalog.json")).unwrap()).unwrap();
    // The variable's name is recorded, never its value.
    assert_eq!(meta["mcp"]["env"], serde_json::json!(["MEMORY_FILE_PATH"]));
    assert!(
        !String::from_utf8_lossy(&std::fs::read(out_dir.join("catalog.json")).unwrap())
            .contains(store.to_str().unwrap())
    );
}

#[test]
fn a_server_that_does_not_start_is_an_error_naming_it_and_writes_nothing() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("catalog");
    let missing = tmp.path().join("no-such-server.js");
    let out = import(&out_dir, &[], &["node", missing.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`node`") && err.contains("stderr"), "{err}");
    assert!(!out_dir.exists(), "a failed import left files behind");
    let out = import(&out_dir, &[], &["no-such-program-toolpick"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("cannot start the MCP server `no-such-program-toolpick`")
    );
}

/// A session with a server started by the library, for the client-side checks below.
fn session(
    server: &str,
    args: &[&str],
    capabilities: &str,
) -> (tokio::runtime::Runtime, toolpick::mcp::client::Session) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut words = vec![entry(server)];
    words.extend(args.iter().map(|a| a.to_string()));
    let command =
        toolpick::mcp::client::ServerCommand { program: "node".into(), args: words, env: vec![] };
    let caps = toolpick::mcp::client::Capabilities::parse(capabilities).unwrap();
    let session =
        runtime.block_on(toolpick::mcp::client::Session::connect(&command, caps, None)).unwrap();
    (runtime, session)
}

fn text_of(result: &serde_json::Value) -> String {
    result["content"]
        .as_array()
        .map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

#[test]
fn declaring_roots_never_widens_what_a_filesystem_server_may_touch() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (sandbox, outside) = (tmp.path().join("sandbox"), tmp.path().join("outside"));
    std::fs::create_dir_all(&sandbox).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "not for the server").unwrap();
    std::fs::write(sandbox.join("note.txt"), "inside").unwrap();
    // server-filesystem replaces its allowed directories with the roots a client names (mcp-live.md
    // §4.2): toolpick declares roots and answers with none, so the command line's sandbox stays the limit.
    let (rt, s) = session("filesystem", &[sandbox.to_str().unwrap()], "roots");
    let timeout = std::time::Duration::from_secs(20);
    let call = |name: &str, args: serde_json::Value| {
        rt.block_on(s.call_tool(name, args.as_object().unwrap().clone(), timeout)).unwrap()
    };
    let allowed = text_of(&call("list_allowed_directories", serde_json::json!({})));
    let sandbox_real = std::fs::canonicalize(&sandbox).unwrap();
    assert!(allowed.contains(sandbox_real.to_str().unwrap()), "{allowed}");
    assert!(!allowed.contains(outside.to_str().unwrap()), "{allowed}");
    let inside = call("read_text_file", serde_json::json!({"path": sandbox.join("note.txt")}));
    assert_eq!(text_of(&inside), "inside");
    let escape = call("read_text_file", serde_json::json!({"path": outside.join("secret.txt")}));
    assert_eq!(escape["isError"], true, "{escape}");
    assert!(!text_of(&escape).contains("not for the server"));
    rt.block_on(s.close()).unwrap();
}

#[test]
fn progress_is_recorded_and_a_call_past_its_time_limit_is_an_error_not_a_hang() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let (rt, s) = session("everything", &[], "");
    let args = |d: u64, steps: u64| {
        serde_json::json!({"duration": d, "steps": steps}).as_object().unwrap().clone()
    };
    let done = rt
        .block_on(s.call_tool(
            "trigger-long-running-operation",
            args(1, 4),
            std::time::Duration::from_secs(20),
        ))
        .unwrap();
    assert!(text_of(&done).contains("Steps: 4"), "{done}");
    let progress = s.take_progress();
    assert_eq!(progress.iter().map(|p| p.progress).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 4.0]);
    assert!(progress.iter().all(|p| p.total == Some(4.0)));
    let started = std::time::Instant::now();
    let slow = rt.block_on(s.call_tool(
        "trigger-long-running-operation",
        args(30, 2),
        std::time::Duration::from_millis(1500),
    ));
    let err = slow.unwrap_err().to_string();
    assert!(err.contains("did not finish within 1500 ms"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // The session still answers after a call it gave up on.
    let echo = rt
        .block_on(s.call_tool(
            "echo",
            serde_json::json!({"message": "still here"}).as_object().unwrap().clone(),
            std::time::Duration::from_secs(20),
        ))
        .unwrap();
    assert!(text_of(&echo).contains("still here"), "{echo}");
    rt.block_on(s.close()).unwrap();
}

/// server-everything over streamable HTTP, bound to loopback only: it listens on every interface by
/// itself (mcp-live.md §2.7), so a preloaded script pins its `listen` to 127.0.0.1. Killed on drop.
struct HttpServer {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn everything_over_http() -> HttpServer {
    let dir = tempfile::tempdir().unwrap();
    let preload = dir.path().join("loopback.cjs");
    std::fs::write(
        &preload,
        "const net = require('net');\nconst listen = net.Server.prototype.listen;\nnet.Server.prototype.listen = function (...args) {\n  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\\d+$/.test(args[0]))) args.splice(1, 0, '127.0.0.1');\n  return listen.apply(this, args);\n};\n",
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("node")
        .arg("--require")
        .arg(&preload)
        .arg(entry("everything"))
        .arg("streamableHttp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpServer { child, port, _dir: dir };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("server-everything did not listen on 127.0.0.1:{port} within 10 s");
}

#[test]
fn a_server_reached_by_url_imports_the_same_catalog_as_over_stdio() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let server = everything_over_http();
    let tmp = tempfile::tempdir().unwrap();
    let (http, stdio) = (tmp.path().join("http"), tmp.path().join("stdio"));
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let out = toolpick(&["mcp", "import", "--out", http.to_str().unwrap(), "--url", &url]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = import(&stdio, &[], &["node", &entry("everything")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let server_file = "mcp_servers_everything.json";
    assert_eq!(
        std::fs::read(http.join(server_file)).unwrap(),
        std::fs::read(stdio.join(server_file)).unwrap(),
        "the transports gave different catalogs"
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(http.join("catalog.json")).unwrap()).unwrap();
    assert_eq!(meta["mcp"]["command"], serde_json::json!([url]));
    // Nothing listens there any more: a clear error, no files.
    drop(server);
    let gone = tmp.path().join("gone");
    let out = toolpick(&["mcp", "import", "--out", gone.to_str().unwrap(), "--url", &url]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("failed its handshake"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!gone.exists());
}

/// A misbehaving stdio server written for the test: it completes the handshake, lists two tools, then
/// on `crash` exits mid-call and on `garble` answers with a line that is not JSON-RPC.
const MISBEHAVING: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'misbehaving', version: '0.0.1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [
    { name: 'crash', description: 'Exits mid-call.', inputSchema: { type: 'object' } },
    { name: 'garble', description: 'Answers with garbage.', inputSchema: { type: 'object' } } ] } });
  else if (m.method === 'tools/call' && m.params.name === 'crash') { process.stderr.write('crashing on purpose\n'); process.exit(3); }
  else if (m.method === 'tools/call' && m.params.name === 'garble') process.stdout.write('this is not JSON-RPC {\n');
});
"#;

#[test]
fn a_server_that_crashes_or_garbles_a_call_gives_an_error_for_that_call_and_no_hang() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    servers();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("misbehaving.cjs");
    std::fs::write(&script, MISBEHAVING).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let command = toolpick::mcp::client::ServerCommand {
        program: "node".into(),
        args: vec![script.display().to_string()],
        env: vec![],
    };
    let limit = std::time::Duration::from_secs(5);
    runtime.block_on(async {
        let s = toolpick::mcp::client::Session::connect(&command, Default::default(), None)
            .await
            .unwrap();
        assert_eq!(s.list_tools().await.unwrap().len(), 2);
        let started = std::time::Instant::now();
        let garbled = s.call_tool("garble", Default::default(), limit).await;
        let err = format!("{:#}", garbled.expect_err("a garbled answer passed as a result"));
        // Said for what it is, at once: not the call's time limit running out.
        assert!(err.contains("not JSON-RPC") && err.contains("this is not JSON-RPC {"), "{err}");
        assert!(started.elapsed() < limit, "the garbage was waited out: {err}");
        // The garbage ended that session; the crash is tried on a fresh one.
        let _ = s.close().await;
        let s = toolpick::mcp::client::Session::connect(&command, Default::default(), None)
            .await
            .unwrap();
        let crashed =
            s.call_tool("crash", Default::default(), limit).await.unwrap_err().to_string();
        assert!(
            crashed.contains("crashing on purpose"),
            "the server's last words are missing: {crashed}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(15));
    });
}

/// One live run of the progress task (server-everything's long-running operation, 1 s in 3 steps) by
/// the oracle: its trial file.
fn progress_run(catalog: &Path, out: &Path, id: &str) -> Vec<u8> {
    let dataset = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/live/everything.jsonl");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", catalog.to_str().unwrap(), "--dataset", dataset])
        .args(["--tasks", "ev-progress", "--execute", "live", "--backends", "oracle"])
        .args(["--layouts", "flat", "--variants", "good", "--quiet"])
        .args(["--out", out.to_str().unwrap(), "--run-id", id])
        .env("TOOLPICK_MCP_SERVERS", servers())
        .output()
        .expect("run toolpick");
    assert!(o.status.success(), "{id}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out.join(id).join("trials.jsonl")).unwrap()
}

#[test]
fn twenty_live_runs_of_the_progress_task_record_every_notification_and_are_byte_identical() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("everything");
    let out = import(
        &catalog,
        &["--name", "everything", "--capabilities", "sampling,elicitation"],
        &["node", &entry("everything")],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let first = progress_run(&catalog, tmp.path(), "run-0");
    let trial: serde_json::Value =
        serde_json::from_slice(first.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(trial["score"]["pass"], true, "{trial}");
    // The operation reports each of its 3 steps before its result.
    assert_eq!(trial["calls"][0]["record"]["live"]["progress"], 3, "{trial}");
    for i in 1..20 {
        let again = progress_run(&catalog, tmp.path(), &format!("run-{i}"));
        assert!(again == first, "run {i}'s trials.jsonl differs from the first run's");
    }
}
