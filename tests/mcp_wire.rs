//! What toolpick reads off a live server's stdout, against a server that does one exact thing per tool
//! (`tests/fixtures/scripted_mcp_server.py`, started by each test): progress written right before a
//! result is always recorded with that call; a line that is not JSON-RPC, an answer over 16 MiB and a
//! malformed answer each end the call at once with an error saying what it was (never a time-out); a
//! model's API key named for a server is refused; a server that keeps asking for sampling is cut off
//! at the per-trial limit. Needs `python3`.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolpick::mcp::client::{
    BoxFuture, Capabilities, ElicitReply, Launch, Progress, Responder, SampleReply, ServerCommand,
    Session,
};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn script() -> String {
    format!("{REPO}/tests/fixtures/scripted_mcp_server.py")
}

fn command() -> ServerCommand {
    ServerCommand { program: "python3".into(), args: vec![script()], env: vec![] }
}

/// A responder that takes its time over each progress notification, as a progress display might: with
/// progress logged on a task of its own (rmcp's handler), that delay let the call's result overtake it.
struct SlowProgress;

impl Responder for SlowProgress {
    fn elicit(&self, _mode: &str, _request: &Value) -> ElicitReply {
        ElicitReply { action: "decline".into(), content: None }
    }
    fn sample(&self, _request: Value) -> BoxFuture<Result<SampleReply, String>> {
        Box::pin(std::future::ready(Err("no model here".to_string())))
    }
    fn on_progress(&self, _progress: &Progress) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A multi-threaded runtime, as live runs use (a woken caller may run before other spawned tasks).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

async fn connect(responder: Option<Arc<dyn Responder>>) -> Session {
    let launch = Launch { responder, ..Default::default() };
    Session::launch(&command(), Capabilities::default(), &launch).await.unwrap()
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn progress_written_right_before_a_result_is_recorded_with_that_call_every_time() {
    runtime().block_on(async {
        let session = connect(Some(Arc::new(SlowProgress))).await;
        for round in 0..30 {
            let steps = 3 + round % 3;
            let result = session
                .call_tool(
                    "progress_then_result",
                    args(json!({"steps": steps})),
                    Duration::from_secs(20),
                )
                .await
                .unwrap();
            assert_eq!(result["content"][0]["text"], format!("done in {steps} steps"));
            let got: Vec<f64> = session.take_progress().iter().map(|p| p.progress).collect();
            let want: Vec<f64> = (1..=steps).map(|i| i as f64).collect();
            assert_eq!(got, want, "round {round}: the progress sent before the result");
            let events = session.take_events();
            assert_eq!(events.len(), steps as usize, "round {round}: {events:?}");
        }
        session.close().await.unwrap();
    });
}

/// Call `tool` on a fresh session with a 20 s limit: the error, and how long it took.
fn failed_call(tool: &str) -> (String, Duration) {
    runtime().block_on(async {
        let session = connect(None).await;
        let started = Instant::now();
        let err = session
            .call_tool(tool, Default::default(), Duration::from_secs(20))
            .await
            .expect_err("a broken answer passed as a result");
        let took = started.elapsed();
        // The session is over: the next call fails at once too, with the same reason.
        let again =
            session.call_tool("echo", args(json!({"text": "hi"})), Duration::from_secs(20)).await;
        assert!(again.is_err(), "a broken session still answered: {again:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let _ = session.close().await;
        (format!("{err:#}"), took)
    })
}

#[test]
fn a_line_that_is_not_json_rpc_ends_the_call_at_once_quoting_it() {
    let (err, took) = failed_call("garbage");
    assert!(err.contains("not JSON-RPC") && err.contains("`Server ready on stdio`"), "{err}");
    assert!(!err.contains("did not finish"), "reported as a time-out: {err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn an_answer_over_16_mib_ends_the_call_at_once_saying_so() {
    let (err, took) = failed_call("oversize");
    assert!(err.contains("over 16777216 bytes"), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn a_malformed_answer_ends_the_call_at_once_saying_so() {
    let (err, took) = failed_call("malformed");
    assert!(err.contains("malformed JSON-RPC message") && err.contains("outcome"), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

fn toolpick(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolpick")).args(args).output().expect("run toolpick")
}

#[test]
fn a_model_key_or_an_empty_secret_named_for_a_server_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("catalog");
    let py = script();
    for env in ["OPENAI_API_KEY=", "ANTHROPIC_API_KEY=sk-ant-x", "GITHUB_TOKEN="] {
        let o = toolpick(&[
            "mcp",
            "import",
            "--out",
            out.to_str().unwrap(),
            "--env",
            env,
            "--",
            "python3",
            &py,
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let name = env.split('=').next().unwrap();
        assert_eq!(o.status.code(), Some(2), "{env}: {stderr}");
        assert!(stderr.contains("--env") && stderr.contains(&format!("`{name}`")), "{stderr}");
        assert!(!out.exists(), "a refused import wrote {}", out.display());
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "toolpick failed ({:?}):\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The scripted server imported (with sampling declared) and a dataset with one task per tool named.
fn imported(dir: &Path, tools: &[&str]) -> (PathBuf, PathBuf) {
    let catalog = dir.join("catalogs/scripted");
    ok(&toolpick(&[
        "mcp",
        "import",
        "--out",
        catalog.to_str().unwrap(),
        "--capabilities",
        "sampling",
        "--",
        "python3",
        &script(),
    ]));
    let ids: Vec<String> = toolpick::catalog::load_catalog(&catalog)
        .unwrap()
        .tools()
        .map(|t| t.tool.id.clone())
        .collect();
    let id = |name: &str| ids.iter().find(|t| t.ends_with(&format!("/{name}"))).unwrap().clone();
    let lines: Vec<String> = tools
        .iter()
        .map(|name| json!({"id": name, "query": format!("please run {name}"), "kind": "single", "expected": [{"tool": id(name)}]}).to_string())
        .collect();
    let dataset = dir.join("scripted.jsonl");
    std::fs::write(&dataset, lines.join("\n") + "\n").unwrap();
    (catalog, dataset)
}

#[test]
fn a_server_that_keeps_asking_for_sampling_is_cut_off_at_the_trial_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let (catalog, dataset) = imported(tmp.path(), &["sample_forever"]);
    let out = tmp.path().join("runs");
    ok(&toolpick(&[
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
        "--out",
        out.to_str().unwrap(),
        "--run-id",
        "cap",
        "--quiet",
    ]));
    let text = std::fs::read_to_string(out.join("cap/trials.jsonl")).unwrap();
    let trial: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(trial["stop_reason"], "backend_error", "{trial}");
    let error = trial["error"].as_str().unwrap();
    assert!(error.starts_with("mcp_server:") && error.contains("limit of 16"), "{error}");
    let call = &trial["calls"][0];
    assert_eq!(call["record"]["live"]["samplings"], 16, "{call}");
}

/// `toolpick mcp proxy` in front of the scripted server, spoken to line by line over its stdio.
struct Proxy {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    fn start() -> Proxy {
        Proxy::start_with(&[])
    }

    fn start_with(flags: &[&str]) -> Proxy {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolpick"))
            .args(["mcp", "proxy"])
            .args(flags)
            .args(["--", "python3", &script()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        // A proxy that never answers must fail the test, not hang it: killed after a minute.
        let (pid, done) =
            (child.id().to_string(), Arc::new(std::sync::atomic::AtomicBool::new(false)));
        let finished = done.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(60));
            if !finished.load(std::sync::atomic::Ordering::SeqCst) {
                let _ = Command::new("kill").args(["-9", &pid]).status();
            }
        });
        Proxy { child, stdin, stdout: std::io::BufReader::new(stdout), done }
    }

    fn write(&mut self, line: &str) {
        use std::io::Write;
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that is not a notification.
    fn answer(&mut self) -> Value {
        use std::io::BufRead;
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the proxy closed its stdout");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("method").is_none() {
                return v;
            }
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.write(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let answer = self.answer();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_proxy_passes_whole_results_through_and_answers_bad_requests_with_the_specs_codes() {
    let mut proxy = Proxy::start();
    // Not JSON at all: a parse error, and the session goes on.
    proxy.write("{this is not json");
    let parse = proxy.answer();
    assert_eq!(
        (parse["id"].clone(), parse["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{parse}"
    );
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire-test", "version": "1"}});
    assert!(proxy.request(1, "initialize", init)["result"].is_object());
    proxy.write(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let listed = proxy.request(2, "tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let rich = tools.iter().find(|t| t["name"] == "rich").unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(
        rich["outputSchema"],
        json!({"type": "object", "properties": {"celsius": {"type": "number"}, "city": {"type": "string"}}, "required": ["celsius", "city"]})
    );
    // The upstream's result, every block and the structured content, as it sent them.
    let called = proxy.request(3, "tools/call", json!({"name": "rich", "arguments": {}}));
    let want = json!({
        "content": [
            {"type": "text", "text": "21.5 C in Paris"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///reports/paris.csv", "name": "paris.csv", "mimeType": "text/csv"},
            {"type": "resource", "resource": {"uri": "memo://today", "mimeType": "text/plain", "text": "mild"}},
        ],
        "structuredContent": {"celsius": 21.5, "city": "Paris"},
    });
    assert_eq!(called["result"], want, "{called}");
    // An unknown tool is invalid params, and a 5 MB argument does not come back whole.
    let huge = "A".repeat(5 << 20);
    let unknown = proxy.request(
        4,
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {"text": huge}}),
    );
    assert_eq!(
        unknown["error"]["code"],
        -32602,
        "{}",
        &unknown.to_string()[..300.min(unknown.to_string().len())]
    );
    let message = unknown["error"]["message"].as_str().unwrap();
    assert!(message.len() < 4000, "the error echoed {} bytes", message.len());
    // A tools/call without a name is invalid params too, not an unknown method.
    let malformed = proxy.request(5, "tools/call", json!({"arguments": {}}));
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");
    let not_an_object = proxy.request(7, "tools/call", json!({"name": "echo", "arguments": "hi"}));
    assert_eq!(not_an_object["error"]["code"], -32602, "{not_an_object}");
    // And the session still works.
    let echo = proxy.request(
        6,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "still here", "{echo}");
}

#[test]
fn the_proxy_gives_its_upstream_the_values_its_env_flags_name() {
    // The value given on the command line, not toolpick's own variable of that name (here unset).
    let mut proxy = Proxy::start_with(&["--env", "TOOLPICK_TEST_GREETING=hello there"]);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire-test", "version": "1"}});
    assert!(proxy.request(1, "initialize", init)["result"].is_object());
    proxy.write(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let called = proxy.request(
        2,
        "tools/call",
        json!({"name": "env_var", "arguments": {"name": "TOOLPICK_TEST_GREETING"}}),
    );
    assert_eq!(called["result"]["content"][0]["text"], "hello there", "{called}");
}
