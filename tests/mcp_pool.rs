//! The warm pool of live runs (`--live-pool`, `run::live_pool`): servers started ahead of their trials
//! change nothing a run records, a pooled server that dies while it waits is replaced, and nothing the
//! pool started outlives toolpick — at a normal end, when the run stops on an error, and on SIGTERM.
//!
//! The pool's own tests use a probe server (Python, standard library, written here) that records its
//! pid when it starts and again when a tool is called, so a test can tell the servers waiting in the
//! pool from the one a trial is using; trials are made slow by the mock endpoint's latency (a model
//! that takes its time), so the pool has servers waiting. The identical-records test runs the real
//! filesystem server (the `mcp-npm` tier).

mod common;
use common::tiers::{self, Tier};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A server for the pool's tests: one read-only tool, `say_ok`; writes `server-<pid>` in PIDDIR when
/// it starts and `called-<pid>` when its tool is called; ends when its stdin does.
const PROBE: &str = r#"
import json, os, sys
piddir = sys.argv[1]
open(os.path.join(piddir, f"server-{os.getpid()}"), "w").close()
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        version = message.get("params", {}).get("protocolVersion", "2025-11-25")
        result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "say_ok", "description": "Answers ok.", "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True, "openWorldHint": False}}]}
    elif method == "tools/call":
        open(os.path.join(piddir, f"called-{os.getpid()}"), "w").close()
        result = {"content": [{"type": "text", "text": "ok"}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no such method"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), flush=True)
"#;

/// One test's scratch: the TMPDIR toolpick gets, the probe's pid files, the catalog and dataset, and
/// a mock endpoint answering each request after `latency`.
struct Scratch {
    _root: tempfile::TempDir,
    tmp: PathBuf,
    pids: PathBuf,
    work: PathBuf,
    _rt: tokio::runtime::Runtime,
    endpoint: toolpick::mock::MockServer,
}

impl Scratch {
    fn new(latency_ms: u64, down_after: Option<u64>) -> Scratch {
        let root = tempfile::tempdir().unwrap();
        let (tmp, pids, work) =
            (root.path().join("tmp"), root.path().join("pids"), root.path().join("work"));
        for d in [&tmp, &pids, &work] {
            std::fs::create_dir_all(d).unwrap();
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let config = toolpick::mock::MockConfig {
            latency: Duration::from_millis(latency_ms),
            down_after,
            ..Default::default()
        };
        let endpoint =
            rt.block_on(toolpick::mock::spawn("127.0.0.1:0".parse().unwrap(), config)).unwrap();
        let s = Scratch { _root: root, tmp, pids, work, _rt: rt, endpoint };
        let probe = s.work.join("probe.py");
        std::fs::write(&probe, PROBE).unwrap();
        let (o, _) = s.run(&[
            "mcp",
            "import",
            "--out",
            "catalog",
            "--",
            "python3",
            probe.to_str().unwrap(),
            s.pids.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let id = toolpick::catalog::load_catalog(&s.work.join("catalog"))
            .unwrap()
            .tools()
            .next()
            .unwrap()
            .tool
            .id
            .clone();
        let task = serde_json::json!({"id": "ok", "query": "say ok", "kind": "single", "expected": [{"tool": id}]});
        std::fs::write(s.work.join("tasks.jsonl"), format!("{task}\n")).unwrap();
        for f in std::fs::read_dir(&s.pids).unwrap().flatten() {
            std::fs::remove_file(f.path()).unwrap();
        }
        s
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolpick"));
        cmd.args(args).env("TMPDIR", &self.tmp).current_dir(&self.work).stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> (Output, Duration) {
        let started = Instant::now();
        let out = self.command(args).output().expect("run toolpick");
        (out, started.elapsed())
    }

    /// A live run of the one task, `trials` times, one trial at a time, with a pool of `pool`.
    fn run_args(&self, trials: &str, pool: &str) -> Vec<String> {
        let url = self.endpoint.base_url();
        let line = format!(
            "run --catalog catalog --dataset tasks.jsonl --execute live --backends openai --model mock \
             --base-url {url} --max-attempts 1 --breaker 1 --layouts flat --variants good --config live.toml \
             --trials {trials} --live-pool {pool} --out reports --run-id live --quiet"
        );
        std::fs::write(self.work.join("live.toml"), "[live]\nsandboxes = 1\n").unwrap();
        line.split_whitespace().map(String::from).collect()
    }

    /// The pids the probes wrote, by kind (`server`, `called`).
    fn pids(&self, kind: &str) -> Vec<i32> {
        let mut out: Vec<i32> = std::fs::read_dir(&self.pids)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let (k, pid) = name.split_once('-')?;
                (k == kind).then(|| pid.parse().unwrap())
            })
            .collect();
        out.sort();
        out
    }

    /// Wait (60 s at most) until `ready` holds, while toolpick runs.
    fn wait_for(&self, child: &mut std::process::Child, what: &str, ready: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready() {
            assert!(Instant::now() < deadline, "waited in vain for {what}");
            assert!(child.try_wait().unwrap().is_none(), "toolpick ended before {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every probe started has stopped and the temporary directory is empty.
    fn assert_nothing_left(&self) {
        let servers = self.pids("server");
        assert!(!servers.is_empty(), "no server started");
        let deadline = Instant::now() + Duration::from_secs(2);
        let alive = || servers.iter().copied().filter(|p| running(*p)).collect::<Vec<_>>();
        while !alive().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(alive(), Vec::<i32>::new(), "servers outlived toolpick");
        let left: Vec<_> =
            std::fs::read_dir(&self.tmp).unwrap().flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "temporary folders left: {left:?}");
    }

    fn trials(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.work.join("reports/live/trials.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The process is running: it exists and is not a zombie.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next()?.trim_start().chars().next())
        .is_some_and(|state| state != 'Z')
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) on a pid this test's processes started.
    unsafe {
        libc::kill(pid, signal);
    }
}

#[test]
fn a_pooled_server_that_dies_before_its_trial_is_replaced_and_nothing_is_left() {
    let s = Scratch::new(1500, None);
    let args = s.run_args("3", "2");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = s.command(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    // The first trial's server, plus two waiting for trials 2 and 3; the first is called once the
    // model's first turn (1.5 s) is over, and the trial's second turn takes 1.5 s more.
    s.wait_for(&mut child, "three servers, one called", || {
        s.pids("server").len() >= 3 && !s.pids("called").is_empty()
    });
    let called = s.pids("called");
    let waiting: Vec<i32> = s.pids("server").into_iter().filter(|p| !called.contains(p)).collect();
    assert_eq!(waiting.len(), 2, "servers {:?}, called {called:?}", s.pids("server"));
    for &pid in &waiting {
        kill(pid, libc::SIGKILL);
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let trials = s.trials();
    assert_eq!(trials.len(), 3, "{trials:?}");
    for t in &trials {
        assert!(t["error"].is_null(), "a trial failed: {t}");
        assert_eq!(t["score"]["pass"], true, "{t}");
    }
    // The killed servers were never called; each was replaced by a fresh one that was.
    let called = s.pids("called");
    assert!(waiting.iter().all(|p| !called.contains(p)), "a killed server was called");
    assert_eq!(called.len(), 3, "called: {called:?}");
    assert!(stderr(&out).contains("exited before its trial"), "{}", stderr(&out));
    s.assert_nothing_left();
}

#[test]
fn sigterm_mid_run_stops_the_servers_waiting_in_the_pool_and_removes_their_sandboxes() {
    let s = Scratch::new(1500, None);
    let args = s.run_args("4", "2");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = s.command(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    s.wait_for(&mut child, "three servers", || s.pids("server").len() >= 3);
    kill(child.id() as i32, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    s.assert_nothing_left();
}

#[test]
fn a_run_that_stops_on_an_error_drains_its_pool() {
    // The endpoint answers the preflight and the first trial's first turn, then is down: the breaker
    // (1) stops the run with exit 1 while the pool holds the next trials' servers.
    let s = Scratch::new(300, Some(2));
    let args = s.run_args("4", "2");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = s.run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        s.pids("server").len() >= 2,
        "the pool started no server ahead: {:?}",
        s.pids("server")
    );
    s.assert_nothing_left();
}

/// Three tasks on the filesystem server, each moving a file whose text names the task: a trial that
/// got another task's sandbox, or a sandbox a trial before it had used, fails its final-state checks.
fn moving_tasks(path: &Path) {
    let lines: Vec<String> = ["move-a", "move-b", "move-c"]
        .iter()
        .map(|id| {
            serde_json::json!({
                "id": id, "query": "Move in/which.txt to out/which.txt.", "kind": "single",
                "expected": [{"tool": "files/files_write/move_file", "arguments": {
                    "source": ["in/which.txt", "/sandbox/in/which.txt"],
                    "destination": ["out/which.txt", "/sandbox/out/which.txt"]}}],
                "live": {"files": {"in/which.txt": id, "out/.keep": ""}, "expect_state": [
                    {"path": "in/which.txt", "absent": true},
                    {"path": "out/which.txt", "equals": id}]}
            })
            .to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// One live run of the moving tasks, twice each, by the oracle with a pool of `pool`: its trial file.
fn moving_run(catalog: &Path, dataset: &Path, out: &Path, tmp: &Path, pool: &str) -> Vec<u8> {
    let id = format!("pool-{pool}");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--catalog", catalog.to_str().unwrap()])
        .args(["--dataset", dataset.to_str().unwrap()])
        .args(["--execute", "live", "--backends", "oracle", "--allow-destructive", "--trials", "2"])
        .args(["--layouts", "flat", "--variants", "good", "--quiet", "--live-pool", pool])
        .args(["--out", out.to_str().unwrap(), "--run-id", &id])
        .env("TOOLPICK_MCP_SERVERS", tiers::installed(Tier::McpNpm))
        .env("TMPDIR", tmp)
        .output()
        .expect("run toolpick");
    assert!(o.status.success(), "{id}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out.join(id).join("trials.jsonl")).unwrap()
}

#[test]
fn pool_on_and_off_give_byte_identical_trial_records() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let (tmp, out) = (root.path().join("tmp"), root.path().join("out"));
    std::fs::create_dir_all(&tmp).unwrap();
    let catalog = root.path().join("files");
    let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["mcp", "import", "--out", catalog.to_str().unwrap(), "--name", "files", "--"])
        .args([
            "node",
            "{servers}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
        ])
        .arg("{sandbox}")
        .env("TOOLPICK_MCP_SERVERS", tiers::installed(Tier::McpNpm))
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dataset = root.path().join("moves.jsonl");
    moving_tasks(&dataset);
    let off = moving_run(&catalog, &dataset, &out, &tmp, "0");
    let text = String::from_utf8_lossy(&off);
    assert_eq!(text.lines().count(), 6, "{text}");
    assert_eq!(text.matches("\"pass\":true").count(), 6, "{text}");
    for pool in ["1", "4"] {
        let on = moving_run(&catalog, &dataset, &out, &tmp, pool);
        assert!(
            on == off,
            "the trial records with --live-pool {pool} differ from the pool off:\n{}",
            String::from_utf8_lossy(&on)
        );
    }
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "temporary folders left: {left:?}");
}
