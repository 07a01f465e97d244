//! toolpick as an MCP server: `toolpick mcp serve` seen by the official Python MCP client (PyPI `mcp`,
//! pinned, installed by `scripts/install-test-deps.sh`: the `mcp-pypi` tier), and
//! `--backends mcp-agent:<command>` running the example agent (`examples/mcp_agent.py`) through the served layouts against the mock
//! endpoint — trial for trial the same calls as the in-process loop on the same mock model.

mod common;
mod http_client;
use common::tiers::{self, Tier};
use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_toolpick");

/// The venv's python, with the pinned `mcp` SDK (the `mcp-pypi` tier, installed before the tests).
fn python() -> &'static Path {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| tiers::installed(Tier::McpPypi).join("venv/bin/python"))
}

fn client(args: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(format!("{REPO}/tests/fixtures/mcp_client.py"))
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("run the python client");
    assert!(
        out.status.success(),
        "the MCP client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn names(seen: &Value) -> Vec<String> {
    let mut n: Vec<String> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    n.sort();
    n
}

#[test]
fn a_python_mcp_client_sees_exactly_the_strata_meta_tools_of_the_progressive_layout() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let seen = client(&["stdio", "--", BIN, "mcp", "serve", "--layout", "progressive"]);
    assert_eq!(seen["server"], "toolpick");
    assert_eq!(
        names(&seen),
        [
            "discover_server_categories_or_actions",
            "execute_action",
            "get_action_details",
            "get_category_actions",
            "handle_auth_failure",
            "search_documentation"
        ]
    );
    let discover = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "discover_server_categories_or_actions")
        .unwrap();
    assert!(
        discover["inputSchema"]["properties"].as_object().is_some_and(|p| !p.is_empty()),
        "{discover}"
    );
}

#[test]
fn a_task_session_carries_the_query_and_a_served_call_runs_through_the_layout() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let task = "dev-001";
    let first = std::fs::read_to_string(format!("{REPO}/datasets/starter.jsonl")).unwrap();
    let query = first
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|t| t["id"] == task)
        .map(|t| t["query"].as_str().unwrap().to_string());
    let Some(query) = query else { panic!("the starter suite has no task {task}") };
    let record = tempfile::NamedTempFile::new().unwrap();
    let seen = client(&[
        "stdio",
        "--",
        BIN,
        "mcp",
        "serve",
        "--task",
        task,
        "--layout",
        "flat",
        "--record",
        record.path().to_str().unwrap(),
        "--call",
        "no_such_tool",
        "{}",
    ]);
    assert_eq!(seen["instructions"].as_str(), Some(query.as_str()));
    // A tool not on offer is JSON-RPC's invalid params (the MCP specification), with the layout's
    // teaching text; the call is still recorded as the layout saw it.
    assert_eq!(seen["call"]["error"]["code"], -32602, "{}", seen["call"]);
    assert!(
        seen["call"]["error"]["message"].as_str().unwrap().contains("Unknown tool 'no_such_tool'")
    );
    let recorded: Value = serde_json::from_str(
        std::fs::read_to_string(record.path()).unwrap().lines().next().unwrap(),
    )
    .unwrap();
    assert_eq!(recorded["status"], "invented");
}

/// `toolpick mcp serve --http` on a free loopback port; the URL from its first line on stderr.
struct HttpServe {
    child: std::process::Child,
    url: String,
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_http(args: &[&str]) -> HttpServe {
    let mut child = Command::new(BIN)
        .args(["mcp", "serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    stderr.read_line(&mut line).unwrap();
    // Keep reading what it says, so it never writes into a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in `{line}`"))
        .to_string();
    HttpServe { child, url }
}

#[test]
fn over_http_the_flat_catalog_is_served_and_a_call_executes_on_the_simulator() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let server = serve_http(&["--layout", "flat"]);
    let catalog =
        toolpick::catalog::load_catalog(Path::new(&format!("{REPO}/registries/workspace")))
            .unwrap();
    // The first single-call task of the starter suite, called the way the oracle would.
    let task: Value = std::fs::read_to_string(format!("{REPO}/datasets/starter.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|t| t["kind"] == "single")
        .unwrap();
    let expected = &task["expected"][0];
    let tool = catalog.get(expected["tool"].as_str().unwrap()).unwrap();
    let args: serde_json::Map<String, Value> = expected["arguments"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(k, v)| {
            v.as_array()
                .unwrap()
                .iter()
                .find(|x| x.as_str() != Some(""))
                .map(|x| (k.clone(), x.clone()))
        })
        .collect();
    let seen =
        client(&["http", &server.url, "--call", &tool.tool.name, &Value::Object(args).to_string()]);
    assert_eq!(seen["tools"].as_array().unwrap().len(), catalog.tool_count());
    // Annotations are served as the catalog has them.
    let served: std::collections::HashMap<&str, &Value> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), &t["annotations"]))
        .collect();
    for t in catalog.tools() {
        let a = served[t.tool.name.as_str()];
        if !t.tool.origin.annotations_given {
            assert!(a.is_null(), "{}: {a}", t.tool.id);
            continue;
        }
        let hints =
            (&a["readOnlyHint"], &a["destructiveHint"], &a["idempotentHint"], &a["openWorldHint"]);
        let h = &t.tool.annotations;
        assert_eq!(
            hints,
            (
                &Value::Bool(h.read_only_hint),
                &Value::Bool(h.destructive_hint),
                &Value::Bool(h.idempotent_hint),
                &Value::Bool(h.open_world_hint)
            ),
            "{}",
            t.tool.id
        );
    }
    assert!(
        catalog.tools().any(|t| t.tool.origin.annotations_given),
        "the bundled catalog declares its hints"
    );
    assert_eq!(seen["call"]["isError"], false, "{}", seen["call"]);
    assert!(!seen["call"]["text"].as_str().unwrap().is_empty());
}

#[test]
fn binding_beyond_loopback_needs_the_flag() {
    let out = Command::new(BIN).args(["mcp", "serve", "--http", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
}

fn run(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(REPO);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn trials(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_example_agent_runs_through_every_served_layout_and_makes_the_calls_the_in_process_loop_makes()
 {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mock = rt
        .block_on(toolpick::mock::spawn("127.0.0.1:0".parse().unwrap(), Default::default()))
        .unwrap();
    let url = mock.base_url();
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let common = [
        "--layouts",
        "flat,progressive,progressive-oss,search",
        "--variants",
        "good",
        "--sample",
        "10",
        "--out",
        o,
        "-q",
        "--no-cache",
    ];
    let agent = format!("mcp-agent:{} {REPO}/examples/mcp_agent.py", python().display());
    let mut served = vec!["run", "--backends", &agent, "--run-id", "served"];
    served.extend_from_slice(&common);
    let r = run(&served, &[("OPENAI_BASE_URL", &url), ("AGENT_MODEL", "mock")]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut in_process = vec![
        "run",
        "--backends",
        "openai",
        "--model",
        "mock",
        "--base-url",
        &url,
        "--run-id",
        "in-process",
    ];
    in_process.extend_from_slice(&common);
    let r = run(&in_process, &[]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (a, b) = (trials(&out.path().join("served")), trials(&out.path().join("in-process")));
    assert_eq!(a.len(), 40);
    assert_eq!(a.len(), b.len());
    let calls = |t: &Value| -> Vec<(Value, Value, Value)> {
        t["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["record"]["name"].clone(),
                    c["record"]["arguments"].clone(),
                    c["record"]["status"].clone(),
                )
            })
            .collect()
    };
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x["task_id"], &x["layout"]), (&y["task_id"], &y["layout"]));
        assert!(x["error"].is_null(), "{}: {}", x["trial_id"], x["error"]);
        assert_eq!(
            calls(x),
            calls(y),
            "{} made other calls through MCP than in process",
            x["trial_id"]
        );
        assert_eq!(x["score"], y["score"], "{}", x["trial_id"]);
    }
    assert!(
        a.iter().any(|t| !t["calls"].as_array().unwrap().is_empty()),
        "the agent called nothing"
    );
    let html = std::fs::read_to_string(out.path().join("served/report.html")).unwrap();
    assert!(html.contains("mcp-agent"), "the agent's trials are not in report.html");
}

/// `toolpick mcp import --out <dir> <args>` (what the proxy imports), and the imported catalog with
/// its `bad` variant.
fn import_with_bad(
    dir: &Path,
    args: &[&str],
) -> (toolpick::catalog::Catalog, toolpick::catalog::Catalog) {
    let out = Command::new(BIN)
        .args(["mcp", "import", "--out", dir.to_str().unwrap()])
        .args(args)
        .current_dir(REPO)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let catalog = toolpick::catalog::load_catalog(dir).unwrap();
    let bad = toolpick::catalog::variant::Variant::parse("bad").unwrap().apply(&catalog).unwrap();
    (catalog, bad)
}

/// The `bad` variant merges sibling tools behind a dispatch parameter: the served name of the
/// upstream tool `id`, and the arguments that reach it.
fn served_address(
    bad: &toolpick::catalog::Catalog,
    id: &str,
) -> (String, serde_json::Map<String, Value>) {
    bad.tools()
        .find_map(|t| match &t.tool.dispatch {
            Some(d) => {
                let value =
                    d.targets.iter().find(|(_, target)| *target == id).map(|(v, _)| v.clone());
                value.map(|v| {
                    (
                        t.tool.name.clone(),
                        [(d.param.clone(), Value::String(v))].into_iter().collect(),
                    )
                })
            }
            None => (t.tool.id == id).then(|| (t.tool.name.clone(), serde_json::Map::new())),
        })
        .unwrap_or_else(|| panic!("{id} is not in the bad variant"))
}

#[test]
fn mcp_proxy_serves_server_filesystem_through_the_bad_variant_and_forwards_calls() {
    if !tiers::ready(Tier::McpNpm) || !tiers::ready(Tier::McpPypi) {
        return;
    }
    python();
    let entry = "{servers}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";
    // The same import the proxy makes, to know what the bad variant calls each upstream tool.
    let tmp = tempfile::tempdir().unwrap();
    let catalog_dir = tmp.path().join("files");
    let (catalog, bad) =
        import_with_bad(&catalog_dir, &["--name", "files", "--", "node", entry, "{sandbox}"]);
    let address = |id: &str| served_address(&bad, id);
    let (list, args) = address("files/files_list/list_allowed_directories");
    let proxy = |name: &str, args: &serde_json::Map<String, Value>| {
        client(&[
            "stdio",
            "--",
            BIN,
            "mcp",
            "proxy",
            "--name",
            "files",
            "--variant",
            "bad",
            "--call",
            name,
            &Value::Object(args.clone()).to_string(),
            "--",
            "node",
            entry,
            "{sandbox}",
        ])
    };
    let seen = proxy(&list, &args);
    let mut bad_names: Vec<String> = bad.tools().map(|t| t.tool.name.clone()).collect();
    bad_names.sort();
    assert_eq!(names(&seen), bad_names, "the proxy serves the variant's tools");
    assert!(
        bad_names.iter().all(|n| catalog.tools().all(|t| t.tool.name != *n)),
        "the bad variant renames every tool"
    );
    // The call reached the real server, which answered with its sandbox (shown as /sandbox).
    assert_eq!(seen["call"]["isError"], false, "{}", seen["call"]);
    assert!(seen["call"]["text"].as_str().unwrap().contains("/sandbox"), "{}", seen["call"]);
    // Without opt-in a destructive upstream tool is refused, not forwarded.
    let (write, mut args) = address("files/files_write/write_file");
    args.insert("path".into(), Value::String("x.txt".into()));
    args.insert("content".into(), Value::String("hi".into()));
    let seen = proxy(&write, &args);
    assert_eq!(seen["call"]["isError"], true, "{}", seen["call"]);
    assert!(seen["call"]["text"].as_str().unwrap().contains("destructiveHint"), "{}", seen["call"]);
}

#[test]
fn a_task_session_becomes_a_scored_trial_of_a_run_when_the_client_leaves() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    // dev-001 asks for the Rust repositories: the client makes the expected call through the flat layout.
    let seen = client(&[
        "stdio",
        "--",
        BIN,
        "mcp",
        "serve",
        "--task",
        "dev-001",
        "--layout",
        "flat",
        "--out",
        o,
        "--run-id",
        "session",
        "--agent-name",
        "my-ide",
        "--call",
        "list_repositories",
        "{\"language\": \"Rust\"}",
    ]);
    assert_eq!(seen["call"]["isError"], false, "{}", seen["call"]);
    let run = out.path().join("session");
    let t = &trials(&run)[0];
    assert_eq!(
        (t["task_id"].as_str(), t["backend"].as_str(), t["layout"].as_str()),
        (Some("dev-001"), Some("my-ide"), Some("flat"))
    );
    assert_eq!(
        t["calls"][0]["record"]["tool_id"],
        "code_hosting/code_repositories/list_repositories"
    );
    assert_eq!(t["score"]["pass"], true, "{}", t["score"]);
    // The run is a run: `toolpick report` re-scores it to the same result.
    let report = run_in(&["report", run.to_str().unwrap()]);
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    assert!(std::fs::read_to_string(run.join("report.html")).unwrap().contains("my-ide"));
    // A wrong call scores as one.
    let seen = client(&[
        "stdio",
        "--",
        BIN,
        "mcp",
        "serve",
        "--task",
        "dev-001",
        "--out",
        o,
        "--run-id",
        "wrong",
        "--call",
        "list_repositories",
        "{\"language\": \"Go\"}",
    ]);
    assert_eq!(seen["call"]["isError"], false);
    assert_eq!(trials(&out.path().join("wrong"))[0]["score"]["pass"], false);
}

fn run_in(args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(REPO).output().unwrap()
}

/// Stop a server the way a user does (Ctrl-C), and wait for it to write what it writes on the way out.
fn interrupt(mut server: HttpServe) -> std::process::ExitStatus {
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = server.child.wait().unwrap();
    std::mem::forget(server);
    status
}

#[test]
fn one_http_server_holds_a_session_per_task_and_becomes_a_run_labelled_with_the_client() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let sessions = out.path().join("sessions.jsonl");
    let server = serve_http(&[
        "--layout",
        "flat",
        "--sessions",
        sessions.to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
        "--run-id",
        "many",
    ]);
    let url = |task: &str| {
        if task.is_empty() { server.url.clone() } else { format!("{}?task={task}", server.url) }
    };
    let ide = ["--client", "fixture-ide", "4.2"];
    // dev-002 first, through its URL: the right call (public repositories), then a wrong one on dev-001.
    let seen = client(
        &[
            &[
                "http",
                &url("dev-002"),
                "--call",
                "list_repositories",
                "{\"visibility\": \"public\"}",
            ][..],
            &ide,
        ]
        .concat(),
    );
    assert!(seen["instructions"].as_str().unwrap().contains("public"), "{}", seen["instructions"]);
    let seen = client(
        &[
            &["http", &url("dev-001"), "--call", "list_repositories", "{\"language\": \"Go\"}"][..],
            &ide,
        ]
        .concat(),
    );
    assert_eq!(seen["call"]["isError"], false);
    // No task in the URL: the first task in dataset order that had no session yet (dev-003).
    let dataset: Vec<Value> = std::fs::read_to_string(format!("{REPO}/datasets/starter.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let third = dataset.iter().find(|t| t["id"] != "dev-001" && t["id"] != "dev-002").unwrap();
    let seen = client(&[&["http", &url("")][..], &ide].concat());
    assert_eq!(seen["instructions"], third["query"]);
    // Every call is on disk before the server stops.
    let written = std::fs::read_to_string(&sessions).unwrap();
    assert_eq!(written.lines().filter(|l| l.contains("\"name\"")).count(), 2, "{written}");
    assert!(interrupt(server).success());
    let run = out.path().join("many");
    let t = trials(&run);
    let by_task: std::collections::HashMap<&str, &Value> =
        t.iter().map(|t| (t["task_id"].as_str().unwrap(), t)).collect();
    assert_eq!(t.len(), 3);
    assert!(
        t.iter().all(|t| t["backend"] == "fixture-ide 4.2"),
        "the client's clientInfo labels its trials"
    );
    assert_eq!(by_task["dev-002"]["score"]["pass"], true, "{}", by_task["dev-002"]["score"]);
    assert_eq!(by_task["dev-001"]["score"]["pass"], false);
    assert!(by_task[third["id"].as_str().unwrap()]["calls"].as_array().unwrap().is_empty());
    assert!(run.join("sessions.jsonl").exists());
    assert!(std::fs::read_to_string(run.join("report.html")).unwrap().contains("fixture-ide 4.2"));
}

#[test]
fn mcp_collect_makes_a_run_of_a_killed_servers_sessions_and_refuses_a_damaged_file() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("s.jsonl");
    let mut server =
        serve_http(&["--layout", "progressive", "--sessions", sessions.to_str().unwrap()]);
    let discover = "{\"user_query\": \"Rust repositories\", \"server_names\": [\"code_hosting\"]}";
    let seen = client(&[
        "http",
        &format!("{}?task=dev-001", server.url),
        "--call",
        "discover_server_categories_or_actions",
        discover,
    ]);
    assert_eq!(seen["call"]["isError"], false, "{}", seen["call"]);
    // Killed outright: nothing written on the way out.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let collect = |file: &Path, id: &str| {
        run_in(&[
            "mcp",
            "collect",
            file.to_str().unwrap(),
            "--out",
            tmp.path().to_str().unwrap(),
            "--run-id",
            id,
            "--agent-name",
            "killed",
        ])
    };
    let r = collect(&sessions, "collected");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let t = &trials(&tmp.path().join("collected"))[0];
    assert_eq!(
        (t["task_id"].as_str(), t["backend"].as_str(), t["layout"].as_str()),
        (Some("dev-001"), Some("killed"), Some("progressive"))
    );
    assert_eq!(t["calls"][0]["record"]["name"], "discover_server_categories_or_actions");
    assert!(t["error"].is_null(), "{}", t["error"]);
    // A result the replay does not reproduce (the file was edited, or the catalog changed): an
    // infrastructure error of that trial, not a silently different score.
    let text = std::fs::read_to_string(&sessions).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v.get("result").is_some() {
                v["result"] = Value::String("{\"servers\": []}".into());
            }
            v.to_string()
        })
        .collect();
    let diverged = tmp.path().join("diverged.jsonl");
    std::fs::write(&diverged, edited.join("\n")).unwrap();
    let r = collect(&diverged, "diverged");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let t = &trials(&tmp.path().join("diverged"))[0];
    assert!(
        t["error"].as_str().unwrap_or_default().contains("diverged at call 1"),
        "{}",
        t["error"]
    );
    // A damaged line: the error names the file, line and field; no run directory is left behind.
    let broken = tmp.path().join("broken.jsonl");
    std::fs::write(
        &broken,
        format!("{}\n{{\"session\": 1, \"name\": \"x\"}}\n", text.lines().next().unwrap()),
    )
    .unwrap();
    let r = collect(&broken, "broken");
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("broken.jsonl:2") && err.contains("`arguments`"), "{err}");
    assert!(!tmp.path().join("broken").exists());
}

#[test]
fn mcp_proxy_reaches_an_upstream_by_url_and_serves_it_through_the_bad_variant() {
    if !tiers::ready(Tier::McpPypi) {
        return;
    }
    // The upstream: toolpick itself serving the bundled catalog over HTTP (simulated execution).
    let upstream = serve_http(&["--layout", "flat"]);
    let tmp = tempfile::tempdir().unwrap();
    let catalog_dir = tmp.path().join("upstream");
    let (catalog, bad) =
        import_with_bad(&catalog_dir, &["--name", "upstream", "--url", &upstream.url]);
    let id_of = |name: &str| {
        catalog
            .tools()
            .find(|t| t.tool.name == name)
            .map(|t| t.tool.id.clone())
            .unwrap_or_else(|| panic!("no upstream tool {name}"))
    };
    let address = |id: &str| served_address(&bad, id);
    let proxy = |name: &str, args: &serde_json::Map<String, Value>| {
        client(&[
            "stdio",
            "--",
            BIN,
            "mcp",
            "proxy",
            "--name",
            "upstream",
            "--variant",
            "bad",
            "--url",
            &upstream.url,
            "--call",
            name,
            &Value::Object(args.clone()).to_string(),
        ])
    };
    // A read-only upstream tool (its hints came over the wire with it), renamed by the variant.
    let (name, mut args) = address(&id_of("list_repositories"));
    assert_ne!(name, "list_repositories");
    args.insert("language".into(), Value::String("Rust".into()));
    let seen = proxy(&name, &args);
    assert_eq!(seen["call"]["isError"], false, "{}", seen["call"]);
    assert!(seen["call"]["text"].as_str().unwrap().contains("repositories"), "{}", seen["call"]);
    // A destructive one is refused without opt-in, not forwarded.
    // A valid call (arguments as the starter suite's answer key has them), so only the policy stops it.
    let (tool, key) = std::fs::read_to_string(format!("{REPO}/datasets/starter.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|t| t["expected"].get(0).cloned())
        .find_map(|e| {
            let name = e["tool"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
            let t = catalog.tools().find(|t| t.tool.name == name)?;
            (t.tool.annotations.destructive_hint && !t.tool.annotations.read_only_hint)
                .then(|| (t.tool.id.clone(), e["arguments"].clone()))
        })
        .unwrap();
    let (name, mut args) = address(&tool);
    for (k, values) in key.as_object().unwrap() {
        if let Some(v) = values.as_array().unwrap().iter().find(|v| v.as_str() != Some("")) {
            args.insert(k.clone(), v.clone());
        }
    }
    let seen = proxy(&name, &args);
    assert_eq!(seen["call"]["isError"], true, "{}", seen["call"]);
    assert!(seen["call"]["text"].as_str().unwrap().contains("destructiveHint"), "{}", seen["call"]);
    // A run cannot use a catalog reached by URL: it needs a fresh server per trial.
    let dataset = tmp.path().join("one.jsonl");
    let task = serde_json::json!({"id": "t1", "query": "Which Rust repositories do we have?", "kind": "single", "expected": [{"tool": id_of("list_repositories"), "arguments": {"language": ["Rust"]}}]});
    std::fs::write(&dataset, format!("{task}\n")).unwrap();
    let r = run_in(&[
        "run",
        "--catalog",
        catalog_dir.to_str().unwrap(),
        "--dataset",
        dataset.to_str().unwrap(),
        "--execute",
        "live",
        "--out",
        tmp.path().to_str().unwrap(),
        "--run-id",
        "url",
        "--quiet",
    ]);
    assert!(!r.status.success());
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("reached by URL"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
}

/// The pids whose parent is `pid` (read from /proc: zombies included, they are not reaped yet).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                // `pid (comm) state ppid …`: the fields after the command's closing parenthesis.
                s.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(1))
                    == Some(&pid.to_string())
            })
        })
        .collect()
}

/// toolpick's per-session folders in `tmp` (sandboxes, the client's home).
fn session_folders(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("toolpick-sandbox-") || n.starts_with("toolpick-mcp-"))
        .collect()
}

/// Wait (up to 30 s: stopping a server takes its grace periods) until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn two_http_sessions_of_a_live_proxy_have_their_own_sandboxes_and_nothing_outlives_them() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let entry = "{servers}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";
    let mut child = Command::new(BIN)
        .args(["mcp", "proxy", "--name", "files", "--allow-destructive", "--http", "127.0.0.1:0"])
        .args(["--session-idle-ms", "2000", "--", "node", entry, "{sandbox}"])
        .env("TMPDIR", tmp.path())
        .current_dir(REPO)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("http://") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the proxy ended before serving");
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap();
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let pid = child.id();
    // Serving, before any session: the import's server is gone, no session has one yet.
    assert_eq!(children(pid), Vec::<u32>::new());
    assert_eq!(session_folders(tmp.path()), Vec::<String>::new());

    let mut a = http_client::Session::open(&addr, &[]);
    let (text, is_error) = a.call_tool(
        "write_file",
        serde_json::json!({"path": "/sandbox/from-a.txt", "content": "A"}),
    );
    assert!(!is_error, "{text}");
    let mut b = http_client::Session::open(&addr, &[]);
    assert_eq!(children(pid).len(), 2, "a server per session");
    let list = serde_json::json!({"path": "/sandbox"});
    let (seen_by_b, _) = b.call_tool("list_directory", list.clone());
    assert!(!seen_by_b.contains("from-a.txt"), "session B sees A's file: {seen_by_b}");
    let (text, is_error) = b.call_tool(
        "write_file",
        serde_json::json!({"path": "/sandbox/from-b.txt", "content": "B"}),
    );
    assert!(!is_error, "{text}");
    let (seen_by_a, _) = a.call_tool("list_directory", list);
    assert!(seen_by_a.contains("from-a.txt"), "A's own file: {seen_by_a}");
    assert!(!seen_by_a.contains("from-b.txt"), "session A sees B's file: {seen_by_a}");

    // Ending the sessions stops their servers and removes their folders.
    assert_eq!(a.delete().status / 100, 2);
    assert_eq!(b.delete().status / 100, 2);
    eventually("the sessions' servers stop", || children(pid).is_empty());
    eventually("the sessions' folders go", || session_folders(tmp.path()).is_empty());

    // An abandoned session ends after its idle time, and takes its server and sandbox with it.
    let _abandoned = http_client::Session::open(&addr, &[]);
    assert_eq!(children(pid).len(), 1);
    eventually("the idle session's server stops", || children(pid).is_empty());
    eventually("the idle session's folders go", || session_folders(tmp.path()).is_empty());

    // And Ctrl-C with a session open leaves nothing either.
    http_client::Session::open(&addr, &[]);
    let servers = children(pid);
    assert_eq!(servers.len(), 1);
    assert!(Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap().success());
    child.wait().unwrap();
    for server in servers {
        // Gone, or a zombie left to whoever adopted it: not running either way.
        let state = std::fs::read_to_string(format!("/proc/{server}/stat")).unwrap_or_default();
        let running = state.rsplit(')').next().and_then(|r| r.split_whitespace().next());
        assert!(matches!(running, None | Some("Z")), "server {server} outlived the proxy: {state}");
    }
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    assert_eq!(left, Vec::<String>::new(), "folders left after Ctrl-C");
}
