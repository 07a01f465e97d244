//! No MCP server outlives toolpick, and no server holds it up: `mcp import`, `mcp proxy`, a live run and
//! a SIGTERM to toolpick, each against `tests/fixtures/misbehaving_mcp_server.py` — a server that
//! ignores SIGTERM and its stdin's end, starts a child of its own, and hangs in (or misanswers) the
//! request it is told to. After each: every process the server and its child were is gone (or a zombie
//! left to init: not running), nothing runs in the server's process group, and toolpick's temporary
//! directory (a fresh TMPDIR per test) is empty. Needs `python3` and `sleep`, as the other fixture
//! servers do.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// `mcp::process`'s grace periods (stdin, then SIGTERM) and a margin for a loaded machine.
const STOP_BOUND: Duration = Duration::from_secs(3 + 12);

/// One test's scratch: the TMPDIR toolpick gets, where the fixture writes its pids, and output room.
struct Scratch {
    _root: tempfile::TempDir,
    tmp: PathBuf,
    pids: PathBuf,
    work: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let root = tempfile::tempdir().unwrap();
        let (tmp, pids, work) =
            (root.path().join("tmp"), root.path().join("pids"), root.path().join("work"));
        for d in [&tmp, &pids, &work] {
            std::fs::create_dir_all(d).unwrap();
        }
        Scratch { _root: root, tmp, pids, work }
    }

    fn server(&self, mode: &str) -> Vec<String> {
        vec![
            "python3".into(),
            format!("{REPO}/tests/fixtures/misbehaving_mcp_server.py"),
            mode.into(),
            self.pids.display().to_string(),
        ]
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolpick"));
        cmd.args(args).env("TMPDIR", &self.tmp).current_dir(&self.work).stdin(Stdio::null());
        cmd
    }

    fn toolpick(&self, args: &[&str]) -> (Output, Duration) {
        let started = Instant::now();
        let out = self.command(args).output().expect("run toolpick");
        (out, started.elapsed())
    }

    /// The pids the fixture wrote (`server-…` and `child-…`).
    fn pids(&self) -> Vec<(String, i32)> {
        let mut out: Vec<(String, i32)> = std::fs::read_dir(&self.pids)
            .unwrap()
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let (kind, pid) = name.split_once('-').unwrap();
                (kind.to_string(), pid.parse().unwrap())
            })
            .collect();
        out.sort();
        out
    }

    /// Every server started has stopped, with its child and anything else in its group, and the
    /// temporary directory is empty. `servers`: how many servers the command started.
    fn assert_nothing_left(&self, servers: usize) {
        let pids = self.pids();
        let started = pids.iter().filter(|(k, _)| k == "server").count();
        assert_eq!(started, servers, "servers started: {pids:?}");
        // Stopping is toolpick's job before it exits; a moment for the kernel to finish a SIGKILL.
        let deadline = Instant::now() + Duration::from_secs(2);
        let running = || -> Vec<String> {
            let mut out: Vec<String> =
                pids.iter().filter(|(_, p)| running(*p)).map(|(k, p)| format!("{k} {p}")).collect();
            for (_, group) in pids.iter().filter(|(k, _)| k == "server") {
                out.extend(
                    in_group(*group).into_iter().map(|p| format!("pid {p} in group {group}")),
                );
            }
            out
        };
        while !running().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(running(), Vec::<String>::new(), "processes outlived toolpick");
        let left: Vec<_> =
            std::fs::read_dir(&self.tmp).unwrap().flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "temporary folders left: {left:?}");
    }
}

/// The process is running: it exists and is not a zombie (a zombie whose parent is gone is init's to
/// reap; it runs nothing).
fn running(pid: i32) -> bool {
    state(pid).is_some_and(|s| s != 'Z')
}

fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// Running processes whose process group is `group`.
fn in_group(group: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // Fields after the command: state ppid pgrp …
            let fields: Vec<&str> =
                stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
            fields.len() > 2 && fields[0] != "Z" && fields[2] == group.to_string()
        })
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn import_args<'a>(out: &'a str, limit: &'a str, server: &'a [String]) -> Vec<&'a str> {
    let mut args = vec!["mcp", "import", "--out", out, "--request-timeout-ms", limit, "--"];
    args.extend(server.iter().map(String::as_str));
    args
}

#[test]
fn an_import_from_a_server_that_hangs_or_misanswers_ends_within_the_limit_with_its_stderr() {
    for (mode, request) in [
        ("hang-initialize", "initialize"),
        ("hang-list", "tools/list"),
        ("malformed-list", "tools/list"),
        ("garbage-list", "tools/list"),
    ] {
        let s = Scratch::new();
        let out = s.work.join("catalog");
        let server = s.server(mode);
        let (o, took) = s.toolpick(&import_args(out.to_str().unwrap(), "1500", &server));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{mode}: {err}");
        assert!(err.contains(request), "{mode}: the error names the request: {err}");
        assert!(err.contains(&format!("misbehaving ({mode})")), "{mode}: no server stderr: {err}");
        assert!(took < Duration::from_millis(1500) + STOP_BOUND, "{mode}: took {took:?}");
        assert!(!out.exists(), "{mode}: a catalog was written");
        s.assert_nothing_left(1);
    }
}

#[test]
fn an_import_stops_a_server_that_ignores_sigterm_and_its_stdin() {
    let s = Scratch::new();
    let out = s.work.join("catalog");
    let server = s.server("stubborn");
    let (o, took) = s.toolpick(&import_args(out.to_str().unwrap(), "10000", &server));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(took < STOP_BOUND + Duration::from_secs(5), "took {took:?}");
    assert_eq!(toolpick::catalog::load_catalog(&out).unwrap().tool_count(), 1);
    s.assert_nothing_left(1);
}

#[test]
fn a_proxy_ends_with_exit_1_on_a_hung_upstream_and_stops_a_stubborn_one_when_its_client_leaves() {
    for (mode, request) in [("hang-initialize", "initialize"), ("hang-list", "tools/list")] {
        let s = Scratch::new();
        let server = s.server(mode);
        let mut args = vec!["mcp", "proxy", "--request-timeout-ms", "1500", "--"];
        args.extend(server.iter().map(String::as_str));
        let (o, took) = s.toolpick(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{mode}: {err}");
        assert!(err.contains(request) && err.contains(&format!("misbehaving ({mode})")), "{err}");
        assert!(took < Duration::from_millis(1500) + STOP_BOUND, "{mode}: took {took:?}");
        s.assert_nothing_left(1);
    }
    // A client that initializes and leaves (stdin closed): the proxy's upstream session stops.
    let s = Scratch::new();
    let server = s.server("stubborn");
    let mut args = vec!["mcp", "proxy", "--"];
    args.extend(server.iter().map(String::as_str));
    let mut child = s.command(&args).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let hello = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for m in hello {
        std::io::Write::write_all(&mut stdin, format!("{m}\n").as_bytes()).unwrap();
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // One server for the import, one for the served session.
    s.assert_nothing_left(2);
}

/// A catalog imported from the stubborn server, its command switched to `mode`, and a dataset of one
/// task calling its tool.
fn live_suite(s: &Scratch, mode: &str) -> (PathBuf, PathBuf) {
    let catalog = s.work.join("catalog");
    let server = s.server("stubborn");
    let (o, _) = s.toolpick(&import_args(catalog.to_str().unwrap(), "10000", &server));
    assert!(o.status.success(), "{}", stderr(&o));
    let meta = catalog.join("catalog.json");
    let text =
        std::fs::read_to_string(&meta).unwrap().replace("\"stubborn\"", &format!("\"{mode}\""));
    std::fs::write(&meta, text).unwrap();
    let id =
        toolpick::catalog::load_catalog(&catalog).unwrap().tools().next().unwrap().tool.id.clone();
    let dataset = s.work.join("tasks.jsonl");
    let task = serde_json::json!({"id": "ok", "query": "say ok", "kind": "single", "expected": [{"tool": id}]});
    std::fs::write(&dataset, format!("{task}\n")).unwrap();
    for f in std::fs::read_dir(&s.pids).unwrap().flatten() {
        std::fs::remove_file(f.path()).unwrap();
    }
    (catalog, dataset)
}

fn run_args<'a>(catalog: &'a Path, dataset: &'a Path, config: &'a Path) -> Vec<&'a str> {
    vec![
        "run",
        "--catalog",
        catalog.to_str().unwrap(),
        "--dataset",
        dataset.to_str().unwrap(),
        "--execute",
        "live",
        "--config",
        config.to_str().unwrap(),
        "--backends",
        "oracle",
        "--layouts",
        "flat",
        "--variants",
        "good",
        "--trials",
        "2",
        "--out",
        "reports",
        "--run-id",
        "live",
        "--quiet",
    ]
}

#[test]
fn a_live_run_stops_each_trials_stubborn_server_and_a_server_that_hangs_in_initialize_is_that_trials_error()
 {
    let s = Scratch::new();
    let (catalog, dataset) = live_suite(&s, "stubborn");
    let config = s.work.join("live.toml");
    std::fs::write(&config, "[live]\nstart_timeout_ms = 1500\ncall_timeout_ms = 1500\n").unwrap();
    let (o, _) = s.toolpick(&run_args(&catalog, &dataset, &config));
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = std::fs::read_to_string(s.work.join("reports/live/trials.jsonl")).unwrap();
    assert_eq!(trials.matches("\"pass\":true").count(), 2, "{trials}");
    s.assert_nothing_left(2);

    let s = Scratch::new();
    let (catalog, dataset) = live_suite(&s, "hang-initialize");
    std::fs::write(s.work.join("live.toml"), "[live]\nstart_timeout_ms = 1500\n").unwrap();
    let config = s.work.join("live.toml");
    let (o, took) = s.toolpick(&run_args(&catalog, &dataset, &config));
    let trials = std::fs::read_to_string(s.work.join("reports/live/trials.jsonl")).unwrap();
    assert!(trials.contains("initialize"), "the trials do not say why: {trials}\n{}", stderr(&o));
    assert!(took < 2 * (Duration::from_millis(1500) + STOP_BOUND), "took {took:?}");
    s.assert_nothing_left(2);
}

/// Start `args`, wait until `servers` servers have written their pids, send `signal`, and return how
/// toolpick ended.
fn signal_when_started(s: &Scratch, args: &[&str], servers: usize, signal: i32) -> Output {
    let mut child = s
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A client that stays: stdin open until toolpick has ended.
    let stdin = child.stdin.take();
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.pids().iter().filter(|(k, _)| k == "server").count() < servers {
        assert!(Instant::now() < deadline, "the servers did not start: {:?}", s.pids());
        assert!(child.try_wait().unwrap().is_none(), "toolpick ended before the signal");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A moment for the session to be under way (the server answering initialize).
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) on the pid of a child this test started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert!(started.elapsed() < STOP_BOUND, "toolpick took {:?} to stop", started.elapsed());
    out
}

#[test]
fn sigterm_or_sigint_to_toolpick_stops_its_servers_and_removes_its_temporary_folders() {
    // A proxy serving a stubborn upstream to a client that stays (stdin kept open).
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let s = Scratch::new();
        let server = s.server("stubborn");
        let mut args = vec!["mcp", "proxy", "--"];
        args.extend(server.iter().map(String::as_str));
        let o = signal_when_started(&s, &args, 2, signal);
        assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
        s.assert_nothing_left(2);
    }
    // A live run whose call hangs.
    let s = Scratch::new();
    let (catalog, dataset) = live_suite(&s, "hang-call");
    let config = s.work.join("live.toml");
    std::fs::write(&config, "[live]\ncall_timeout_ms = 600000\nsandboxes = 1\n").unwrap();
    // Two servers: the first trial's and the second's, started ahead by the warm pool
    // (`--live-pool`, on by default; tests/mcp_pool.rs).
    let o = signal_when_started(&s, &run_args(&catalog, &dataset, &config), 2, libc::SIGTERM);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    s.assert_nothing_left(2);
}
