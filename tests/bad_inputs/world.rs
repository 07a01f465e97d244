//! The valid inputs every case starts from, built once per test run in a temporary directory (the
//! "world") and copied into each case's own directory: a two-server catalog and its dataset, recorded
//! answers, judge labels, the judge's prompt templates, an experiment file, finished run directories
//! (two full runs and two shards of one), a history file and a sessions file. Everything that can be
//! made by the real binary is made by it, so a base is exactly what a user would have on disk.
//!
//! The experiment file holds `@MOCK@`, filled in with the case's endpoint URL when the case runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Stands for the case's endpoint (`http://127.0.0.1:PORT/v1`) in arguments and experiment files.
pub const MOCK: &str = "@MOCK@";
/// Stands for the case directory's absolute path in arguments.
pub const DIR: &str = "@DIR@";

/// The recorded answers of the small dataset (`--backends replay:answers.jsonl`), one line per task.
pub const ANSWERS: &str = r#"{"id": "w1", "calls": [{"name": "get_current_weather", "arguments": {"city": "Pune"}}], "content": "Pune: 21 degrees, clear sky."}
{"id": "w2", "calls": [{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 3}}, {"name": "get_forecast", "arguments": {"city": "Lima", "days": 3}}], "content": "Done."}
{"id": "m1", "calls": [{"name": "send_email", "arguments": {"to": "ana@example.com", "subject": "Hi"}}], "content": "Sent."}
{"id": "a1", "calls": [], "content": "I cannot book taxis."}
"#;

/// Answers labelled by people for `judge-check`, on the small dataset's task ids.
pub const LABELS: &str = r#"{"id": "l1", "task": "w1", "answer": "Pune is at 21 degrees and the sky is clear.", "human": "solved"}
{"id": "l2", "task": "w2", "answer": "I could not get a forecast.", "human": "unsolved"}
{"id": "l3", "task": "m1", "answer": "The mail to ana@example.com is sent and Rome is clear.", "human": "solved"}
{"id": "l4", "task": "w1", "answer": "Sorry, I cannot tell.", "human": "unsolved"}
"#;

/// The experiment file: the small matrix with the oracle and an endpoint model (the case's mock), so a
/// setting checked too late shows up as a request or a written file. One key per line: mutations
/// replace a line by its key.
pub const EXPERIMENT: &str = r#"datasets = ["tasks.jsonl"]
catalogs = ["smallcat"]
variants = ["good"]
layouts = ["flat"]
trials = 1
seed = 0
max_steps = 4
repeat_limit = 3
out = "runs"
run_id = "t1"
filter = ["kind=single"]

[[models]]
backend = "oracle"

[[models]]
name = "m"
backend = "openai"
model = "mock"
base_url = "@MOCK@"
api_key_env = "TP_BAD_INPUTS_KEY"
concurrency = 2
temperature = 0.0
top_p = 1.0
max_tokens = 256
tool_choice = "auto"
request_timeout_s = 30
max_attempts = 1

[judge]
model = "mock"
base_url = "@MOCK@"
rounds = 1
"#;

/// The MCP client's side of a stdio session for `mcp serve`: the handshake, the tool list and one call,
/// then end of input (the server ends with it).
pub const MCP_SESSION: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bad-inputs","version":"1.0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_current_weather","arguments":{"city":"Pune"}}}
"#;

/// The small matrix every `run` base uses: fast enough that a setting checked too late costs little.
pub const SMALL_RUN: [&str; 12] = [
    "run",
    "--catalog",
    "smallcat",
    "--dataset",
    "tasks.jsonl",
    "--variants",
    "good",
    "--layouts",
    "flat",
    "--out",
    "out",
    "-q",
];

pub struct World {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
}

fn toolpick(dir: &Path, args: &[&str], stdin: Option<&str>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir);
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("toolpick starts");
    if let Some(text) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "building the world: toolpick {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

impl World {
    pub fn build() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("world");
        std::fs::create_dir_all(&dir).unwrap();
        crate::common::write_small_catalog(&dir.join("smallcat"));
        std::fs::write(dir.join("tasks.jsonl"), crate::common::SMALL_DATASET).unwrap();
        std::fs::write(dir.join("answers.jsonl"), ANSWERS).unwrap();
        std::fs::write(dir.join("labels.jsonl"), LABELS).unwrap();
        std::fs::write(dir.join("exp.toml"), EXPERIMENT).unwrap();
        copy_tree(&crate::common::repo().join("prompts/judge"), &dir.join("judge-templates"));
        std::fs::create_dir_all(dir.join("respcache")).unwrap();
        let run = |id: &str, extra: &[&str]| {
            let mut args: Vec<&str> = SMALL_RUN.to_vec();
            args.extend(["--backends", "oracle,lexical", "--run-id", id]);
            args.extend(extra);
            toolpick(&dir, &args, None);
        };
        run("base", &[]);
        run("b", &[]);
        run("s1", &["--shard", "1/2"]);
        run("s2", &["--shard", "2/2"]);
        // A shard of another matrix (another seed).
        run("x2", &["--shard", "2/2", "--seed", "1"]);
        // Two history entries, so a damaged second line has a line number of its own.
        std::fs::create_dir_all(dir.join("trend")).expect("creating trend/");
        toolpick(&dir, &["report", "out/base", "--history", "trend/runs.jsonl"], None);
        toolpick(&dir, &["report", "out/b", "--history", "trend/runs.jsonl"], None);
        // A sessions file as `mcp serve` writes it (one session with one call), and a second session
        // without calls appended as a second server would.
        toolpick(
            &dir,
            &[
                "mcp",
                "serve",
                "--catalog",
                "smallcat",
                "--dataset",
                "tasks.jsonl",
                "--sessions",
                "sessions.jsonl",
            ],
            Some(MCP_SESSION),
        );
        let mut sessions = std::fs::read_to_string(dir.join("sessions.jsonl")).unwrap();
        if !sessions.ends_with('\n') {
            sessions.push('\n');
        }
        sessions.push_str("{\"session\":2,\"task\":\"a1\",\"client\":\"bad-inputs 1.0\"}\n");
        std::fs::write(dir.join("sessions.jsonl"), sessions).unwrap();
        World { _tmp: tmp, dir }
    }

    /// Copy the world into `to` (the case's endpoint is filled in when the case runs).
    pub fn copy_into(&self, to: &Path) {
        copy_tree(&self.dir, to);
    }
}

/// A recursive copy that keeps symbolic links as links (`out/latest`).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (p, dest) = (e.path(), to.join(e.file_name()));
        let ty = e.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p).unwrap(), &dest).unwrap();
        } else if ty.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}
