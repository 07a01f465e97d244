//! Live runs (`--execute live`) against the real reference servers (pinned npm packages, installed by
//! `scripts/install-test-deps.sh`: the `mcp-npm` tier, and `mcp-pypi` for the PyPI server) and
//! against a server that misbehaves on purpose (`tests/fixtures/flaky_mcp_server.py`): a fresh sandbox and server per trial, the oracle at 100 % in
//! every layout, elicitation, sampling and progress end to end, the safety policy, and broken servers
//! kept as infrastructure errors of their own trials.

mod common;
use common::tiers::{self, Tier};
use common::{argv, argv_with};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The folder holding the installed servers (the `mcp-npm` tier, installed before the tests).
fn servers() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| tiers::installed(Tier::McpNpm))
}

fn toolpick(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    cmd.args(args).env("TOOLPICK_MCP_SERVERS", servers());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run toolpick")
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

/// Import one of the reference servers the way docs/mcp.md does, with the `{servers}` and `{sandbox}`
/// placeholders kept in the catalog.
fn import(dir: &Path, server: &str) -> PathBuf {
    let out = dir.join("catalogs").join(server);
    let entry = |s: &str| {
        format!("{{servers}}/node_modules/@modelcontextprotocol/server-{s}/dist/index.js")
    };
    let (name, rest) = match server {
        "filesystem" => ("files", format!("-- node {} {{sandbox}}", entry("filesystem"))),
        "memory" => (
            "memory",
            format!("--env MEMORY_FILE_PATH={{sandbox}}/memory.jsonl -- node {}", entry("memory")),
        ),
        "everything" => (
            "everything",
            format!("--capabilities sampling,elicitation -- node {}", entry("everything")),
        ),
        other => panic!("no such server {other}"),
    };
    let mut args = vec!["mcp", "import", "--out", out.to_str().unwrap(), "--name", name];
    args.extend(argv(&rest));
    ok(&toolpick(&args, &[]));
    out
}

fn trials(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The text of every tool result in a run's transcripts (as the model read it, JSON strings unescaped).
fn tool_results(run: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(run.join("transcripts.jsonl")).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for m in v["transcript"].as_array().unwrap().iter().filter(|m| m["role"] == "tool") {
            let content = m["content"].as_str().unwrap();
            out.push(match serde_json::from_str::<Value>(content) {
                Ok(Value::Object(o)) => o
                    .values()
                    .map(|v| v.as_str().map(String::from).unwrap_or_else(|| v.to_string()))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => content.to_string(),
            });
        }
    }
    out
}

/// `toolpick run` of `catalog` and `dataset` executed live into `out/<id>`, then `extra`.
fn live_args<'a>(
    catalog: &'a Path,
    dataset: &'a str,
    out: &'a Path,
    id: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["run", "--catalog", catalog.to_str().unwrap(), "--dataset", dataset];
    args.extend(["--execute", "live", "--out", out.to_str().unwrap(), "--run-id", id]);
    args.extend_from_slice(extra);
    args
}

/// [`live_args`], quiet, which must succeed; the run's directory.
fn live_run(catalog: &Path, dataset: &str, out: &Path, id: &str, extra: &[&str]) -> PathBuf {
    ok(&toolpick(&live_args(catalog, dataset, out, id, &[extra, &["--quiet"]].concat()), &[]));
    out.join(id)
}

/// The oracle alone, in one layout and one variant: the smallest live matrix.
const ORACLE_FLAT_GOOD: &[&str] =
    &["--backends", "oracle", "--layouts", "flat", "--variants", "good"];

const ALL_LAYOUTS: &str = "flat,progressive,progressive-oss,search";

#[test]
fn the_oracle_passes_every_live_task_in_every_layout_on_the_real_servers() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let suites = [
        ("filesystem", "datasets/live/filesystem.jsonl", vec!["--allow-destructive"]),
        ("memory", "datasets/live/memory.jsonl", vec!["--allow-destructive"]),
        (
            "everything",
            "datasets/live/everything.jsonl",
            vec!["--live-allow", "trigger-sampling-request,trigger-url-elicitation"],
        ),
    ];
    for (server, dataset, policy) in suites {
        let catalog = import(tmp.path(), server);
        let mut extra =
            vec!["--backends", "oracle", "--layouts", ALL_LAYOUTS, "--variants", "good"];
        extra.extend(policy);
        let run = live_run(&catalog, &format!("{REPO}/{dataset}"), tmp.path(), server, &extra);
        let trials = trials(&run);
        let tasks = std::fs::read_to_string(format!("{REPO}/{dataset}")).unwrap().lines().count();
        assert_eq!(trials.len(), tasks * 4, "{server}: one trial per task and layout");
        for t in &trials {
            assert_eq!(
                t["score"]["pass"], true,
                "{server}: {} failed: {}",
                t["trial_id"], t["score"]
            );
            assert!(
                t["live"]["server"].as_str().is_some_and(|s| !s.is_empty()),
                "{server}: {} has no live record",
                t["trial_id"]
            );
            for c in t["calls"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["record"]["status"] == "executed")
            {
                assert!(
                    c["record"]["live"].is_object(),
                    "{}: an executed call did not go to the server: {c}",
                    t["trial_id"]
                );
            }
        }
        // The state checks the tasks give ran on the sandboxes, and held.
        let checked: usize =
            trials.iter().map(|t| t["live"]["state"].as_array().map_or(0, Vec::len)).sum();
        assert!(
            server == "everything" || checked >= 4 * 4,
            "{server}: only {checked} state checks ran"
        );
    }
    // server-everything's requests to the client, end to end, in every layout.
    let everything = trials(&tmp.path().join("everything"));
    let call_of = |task: &str, layout: &str| -> Vec<Value> {
        let t = everything.iter().find(|t| t["task_id"] == task && t["layout"] == layout).unwrap();
        t["calls"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["record"].get("live").cloned())
            .collect()
    };
    for layout in ALL_LAYOUTS.split(',') {
        assert!(
            call_of("ev-progress", layout)[0]["progress"].as_u64().unwrap() >= 1,
            "{layout}: no progress recorded"
        );
        assert_eq!(
            call_of("ev-form-accept", layout)[0]["elicitations"],
            json!([{"mode": "form", "action": "accept"}])
        );
        assert_eq!(
            call_of("ev-form-decline", layout)[0]["elicitations"],
            json!([{"mode": "form", "action": "decline"}])
        );
        assert_eq!(
            call_of("ev-url-consent", layout)[0]["elicitations"],
            json!([{"mode": "url", "action": "accept"}])
        );
        assert_eq!(call_of("ev-sampling", layout)[0]["samplings"], 1);
    }
    // What the server did with the scripted answers reached the model, with the sandbox-independent text.
    let results = tool_results(&tmp.path().join("everything"));
    assert!(
        results.iter().any(|r| r.contains("Name: Ada Lovelace"))
            && results.iter().any(|r| r.contains("User declined")),
        "the elicitation answers did not reach the server"
    );
    assert!(
        results
            .iter()
            .any(|r| r.contains("LLM sampling result") && r.contains("\"model\": \"oracle\"")),
        "the sampling request was not answered by the run's model"
    );
    let fs = std::fs::read_to_string(tmp.path().join("filesystem/transcripts.jsonl")).unwrap();
    assert!(
        fs.contains("/sandbox/projects/atlas/plan.md") && !fs.contains("toolpick-sandbox-"),
        "sandbox paths are not shown as /sandbox"
    );
}

#[test]
fn a_wrong_expected_state_fails_the_oracle_with_state_mismatch() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = import(tmp.path(), "filesystem");
    // The bundled edit task, expecting a port the edit never writes.
    let line = std::fs::read_to_string(format!("{REPO}/datasets/live/filesystem.jsonl"))
        .unwrap()
        .lines()
        .find(|l| l.contains("\"fs-edit-port\""))
        .unwrap()
        .to_string();
    let mut task: Value = serde_json::from_str(&line).unwrap();
    let state = &mut task["live"]["expect_state"][0]["equals"];
    *state = json!(state.as_str().unwrap().replace("port=9090", "port=7070"));
    let dataset = tmp.path().join("wrong.jsonl");
    std::fs::write(&dataset, format!("{task}\n")).unwrap();
    let run = live_run(
        &catalog,
        dataset.to_str().unwrap(),
        tmp.path(),
        "wrong",
        &["--backends", "oracle", "--layouts", "flat", "--variants", "good", "--allow-destructive"],
    );
    let t = &trials(&run)[0];
    assert_eq!(
        (t["score"]["pass"].as_bool(), t["score"]["error_type"].as_str()),
        (Some(false), Some("state_mismatch")),
        "{}",
        t["score"]
    );
    assert!(
        t["score"]["error_detail"].as_str().unwrap().contains("port=9090"),
        "the detail shows what the file holds: {}",
        t["score"]
    );
}

#[test]
fn destructive_tools_are_refused_without_opt_in_and_the_sandbox_stays_as_it_was() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = import(tmp.path(), "filesystem");
    let dataset = format!("{REPO}/datasets/live/filesystem.jsonl");
    let run = live_run(
        &catalog,
        &dataset,
        tmp.path(),
        "no-opt-in",
        &[ORACLE_FLAT_GOOD, &["--tasks", "fs-write-groceries,fs-edit-port,fs-read-todo"]].concat(),
    );
    for t in trials(&run) {
        let call = &t["calls"][0]["record"];
        if t["task_id"] == "fs-read-todo" {
            assert_eq!(
                t["score"]["pass"], true,
                "a read-only tool needs no opt-in: {}",
                t["score"]
            );
            continue;
        }
        assert_eq!(call["live"]["refused"], true, "{}: {call}", t["task_id"]);
        assert!(call["live"]["detail"].as_str().unwrap().contains("destructiveHint"), "{call}");
        assert_eq!(t["score"]["error_type"], "execution_failed", "{}", t["score"]);
        // The final-state check of the write task saw the sandbox without the refused file.
        if t["task_id"] == "fs-write-groceries" {
            assert_eq!(t["live"]["state"][0]["ok"], false, "{}", t["live"]);
        }
    }
    // A deny list wins over the opt-in.
    let run = live_run(
        &catalog,
        &dataset,
        tmp.path(),
        "denied",
        &[
            ORACLE_FLAT_GOOD,
            &argv("--tasks fs-write-groceries --allow-destructive --live-deny write_*"),
        ]
        .concat(),
    );
    let t = &trials(&run)[0];
    assert!(
        t["calls"][0]["record"]["live"]["detail"].as_str().unwrap().contains("deny list"),
        "{}",
        t["calls"][0]
    );
}

#[test]
fn live_trials_are_byte_identical_across_runs() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = import(tmp.path(), "filesystem");
    let dataset = format!("{REPO}/datasets/live/filesystem.jsonl");
    let args = argv(
        "--backends oracle,lexical --layouts flat,progressive --variants good,bad \
         --allow-destructive",
    );
    let a = live_run(&catalog, &dataset, tmp.path(), "a", &args);
    let b = live_run(&catalog, &dataset, tmp.path(), "b", &args);
    for file in ["trials.jsonl", "transcripts.jsonl", "summary.csv", "report.html"] {
        assert!(
            std::fs::read(a.join(file)).unwrap() == std::fs::read(b.join(file)).unwrap(),
            "{file} differs between two live runs"
        );
    }
    let timings = std::fs::read_to_string(a.join("timings.jsonl")).unwrap();
    assert!(
        timings.lines().all(|l| serde_json::from_str::<Value>(l).unwrap()["sandbox_ms"]
            .as_f64()
            .is_some_and(|ms| ms > 0.0)),
        "every trial's sandbox cost is in timings.jsonl"
    );
}

/// The flaky server imported as a catalog, and one task per tool.
fn flaky(dir: &Path) -> (PathBuf, PathBuf) {
    let catalog = dir.join("catalogs/flaky");
    let script = format!("{REPO}/tests/fixtures/flaky_mcp_server.py");
    ok(&toolpick(
        &["mcp", "import", "--out", catalog.to_str().unwrap(), "--", "python3", &script],
        &[],
    ));
    let tools: Vec<String> = toolpick::catalog::load_catalog(&catalog)
        .unwrap()
        .tools()
        .map(|t| t.tool.id.clone())
        .collect();
    let id = |name: &str| tools.iter().find(|t| t.ends_with(&format!("/{name}"))).unwrap().clone();
    let dataset = dir.join("flaky.jsonl");
    let lines: Vec<String> = ["say_ok", "say_error", "crash", "hang", "flood", "garbage", "show_env"]
        .iter()
        .map(|name| json!({"id": name, "query": format!("please run {name}"), "kind": "single", "expected": [{"tool": id(name)}]}).to_string())
        .collect();
    std::fs::write(&dataset, lines.join("\n") + "\n").unwrap();
    (catalog, dataset)
}

#[test]
fn a_server_that_crashes_hangs_floods_or_speaks_garbage_is_an_infrastructure_error_of_that_trial_only()
 {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (catalog, dataset) = flaky(tmp.path());
    let config = tmp.path().join("limits.toml");
    std::fs::write(&config, "[live]\ncall_timeout_ms = 2000\n").unwrap();
    let args = [&["--config", config.to_str().unwrap()], ORACLE_FLAT_GOOD].concat();
    let started = std::time::Instant::now();
    let run = live_run(&catalog, dataset.to_str().unwrap(), tmp.path(), "flaky", &args);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(90),
        "a broken server held the run up"
    );
    let by_task =
        |trials: &[Value], id: &str| trials.iter().find(|t| t["task_id"] == id).unwrap().clone();
    let trials_a = trials(&run);
    assert_eq!(by_task(&trials_a, "say_ok")["score"]["pass"], true);
    // A tool that answers isError is the tool failing (a model-visible failure), not the server breaking.
    let err = by_task(&trials_a, "say_error");
    assert_eq!(
        (err["error"].is_null(), err["score"]["error_type"].as_str()),
        (true, Some("execution_failed")),
        "{err}"
    );
    for broken in ["crash", "hang", "flood", "garbage"] {
        let t = by_task(&trials_a, broken);
        assert_eq!(t["stop_reason"], "backend_error", "{broken}: {t}");
        assert!(
            t["error"].as_str().unwrap().starts_with("mcp_server:"),
            "{broken}: {}",
            t["error"]
        );
    }
    assert!(
        by_task(&trials_a, "crash")["error"].as_str().unwrap().contains("crashing on purpose"),
        "the crash shows the server's stderr"
    );
    // Resuming re-runs exactly the errors when asked to.
    let again = [&["--retry-errors"], args.as_slice()].concat();
    let dataset = dataset.to_str().unwrap();
    let stdout = ok(&toolpick(&live_args(&catalog, dataset, tmp.path(), "flaky", &again), &[]));
    assert!(stdout.contains("4 trials run, 3 already done"), "{stdout}");
}

#[test]
fn the_models_api_key_never_reaches_a_live_server() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (catalog, dataset) = flaky(tmp.path());
    let canary = "sk-canary-7f3a9c2e41d8";
    let extra = [&["--tasks", "show_env", "--quiet"], ORACLE_FLAT_GOOD].concat();
    let args = live_args(&catalog, dataset.to_str().unwrap(), tmp.path(), "env", &extra);
    ok(&toolpick(&args, &[("OPENAI_API_KEY", canary), ("TOOLPICK_UNRELATED_SECRET", canary)]));
    let transcripts = std::fs::read_to_string(tmp.path().join("env/transcripts.jsonl")).unwrap();
    assert!(
        transcripts.contains("PATH=") && transcripts.contains("HOME=/sandbox"),
        "the server's environment was not shown: {transcripts}"
    );
    assert!(
        !transcripts.contains(canary) && !transcripts.contains("OPENAI_API_KEY"),
        "a variable of toolpick's environment reached the server"
    );
}

#[test]
fn a_catalog_not_imported_from_a_server_cannot_run_live() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let args = [
        &["run", "--execute", "live"],
        ORACLE_FLAT_GOOD,
        &["--out", out_dir.path().to_str().unwrap()],
    ];
    let out = toolpick(&args.concat(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was not imported from an MCP server"));
}

#[test]
fn a_servers_sampling_request_goes_to_the_runs_model_over_http_and_its_tokens_are_kept_apart() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mock = rt
        .block_on(toolpick::mock::spawn("127.0.0.1:0".parse().unwrap(), Default::default()))
        .unwrap();
    let catalog = tmp.path().join("catalogs/flaky");
    let script = format!("{REPO}/tests/fixtures/flaky_mcp_server.py");
    let import = argv("mcp import --capabilities sampling --out");
    ok(&toolpick(
        &[&import[..], &[catalog.to_str().unwrap(), "--", "python3", &script]].concat(),
        &[],
    ));
    let tool = toolpick::catalog::load_catalog(&catalog)
        .unwrap()
        .tools()
        .find(|t| t.tool.name == "ask_model")
        .unwrap()
        .tool
        .id
        .clone();
    let dataset = tmp.path().join("ask.jsonl");
    std::fs::write(&dataset, json!({"id": "ask", "query": "please run ask_model", "kind": "single", "expected": [{"tool": tool}], "live": {"interactions": [{"kind": "sampling"}]}}).to_string() + "\n").unwrap();
    let url = mock.base_url();
    let model = argv("--backends openai --model mock --no-cache --layouts flat --variants good");
    let run = live_run(
        &catalog,
        dataset.to_str().unwrap(),
        tmp.path(),
        "ask",
        &[&model[..], &["--base-url", &url]].concat(),
    );
    let t = &trials(&run)[0];
    assert_eq!(t["score"]["pass"], true, "{}", t["score"]);
    assert_eq!(t["calls"][0]["record"]["live"]["samplings"], 1);
    // The model answered the server: its text came back through the tool's result.
    assert!(
        tool_results(&run).iter().any(|r| r.starts_with("the model said: ")),
        "{:?}",
        tool_results(&run)
    );
    // Three requests reached the endpoint: the agent's two turns and the server's sampling request,
    // whose tokens are the trial's sampling usage, not the agent's.
    let stats: Value = rt.block_on(async {
        reqwest::get(format!("{}/stats", url.trim_end_matches("/v1")))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(stats["requests"], 3, "{stats}");
    assert_eq!(t["steps"], 2);
    let sampling = &t["live"]["sampling_usage"];
    assert!(
        sampling["prompt_tokens"].as_u64().unwrap() > 0
            && sampling["completion_tokens"].as_u64().unwrap() > 0,
        "{sampling}"
    );
    let csv = std::fs::read_to_string(run.join("trials.csv")).unwrap();
    let (head, row) = (
        csv.lines().next().unwrap().split(',').collect::<Vec<_>>(),
        csv.lines().nth(1).unwrap().split(',').collect::<Vec<_>>(),
    );
    let col = |name: &str| row[head.iter().position(|h| *h == name).unwrap()].to_string();
    assert_eq!(col("sampling_prompt_tokens"), sampling["prompt_tokens"].to_string());
    assert_eq!(col("prompt_tokens"), t["usage"]["prompt_tokens"].to_string());
}

#[test]
fn mcptoolbench_filesystem_tasks_run_live_on_server_filesystem() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = import(tmp.path(), "filesystem");
    let slice = format!(
        "{REPO}/../shared/external/mcptoolbench/data/filesystem/filesystem_0723_single.slice.json"
    );
    let out = tmp.path().join("mtb-dataset");
    let fixture = format!("{REPO}/datasets/live/fixtures/mcptoolbench");
    let args = ["import", "mcptoolbench", &slice, "--output", out.to_str().unwrap()];
    let stdout = ok(&toolpick(
        &[&args[..], &["--onto", catalog.to_str().unwrap(), "--fixture", &fixture]].concat(),
        &[],
    ));
    assert!(stdout.contains("40 tasks onto"), "{stdout}");
    let dataset = out.join("mcptoolbench.jsonl");
    let run = live_run(
        &catalog,
        dataset.to_str().unwrap(),
        tmp.path(),
        "mtb",
        &argv_with(
            "--backends oracle --layouts {} --variants good --allow-destructive",
            &[ALL_LAYOUTS],
        ),
    );
    let trials = trials(&run);
    assert_eq!(trials.len(), 160);
    for t in &trials {
        assert_eq!(t["score"]["pass"], true, "{}: {}", t["trial_id"], t["score"]);
    }
    // The labels' relative ./test_project_root paths reached the real files of the fixture.
    assert!(
        tool_results(&run).iter().any(|r| r.contains("version: 1.0")),
        "the fixture's files were not read"
    );
}

#[test]
fn a_pypi_server_imports_and_runs_live_too() {
    if !tiers::ready(Tier::McpNpm) || !tiers::ready(Tier::McpPypi) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalogs/time");
    let server = argv("--name time -- {servers}/venv/bin/mcp-server-time --local-timezone UTC");
    ok(&toolpick(
        &[&["mcp", "import", "--out", catalog.to_str().unwrap()], &server[..]].concat(),
        &[],
    ));
    let loaded = toolpick::catalog::load_catalog(&catalog).unwrap();
    let mut names: Vec<&str> = loaded.tools().map(|t| t.tool.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        ["convert_time", "get_current_time"],
        "mcp-server-time 2026.10.19 lists two tools (mcp-live.md §1.2)"
    );
    let id = loaded.tools().find(|t| t.tool.name == "convert_time").unwrap().tool.id.clone();
    let task = json!({"id": "tz", "query": "It's 14:00 in Paris - what time is that in Tokyo?", "kind": "single",
        "expected": [{"tool": id, "arguments": {"source_timezone": ["Europe/Paris"], "time": ["14:00"], "target_timezone": ["Asia/Tokyo"]}}]});
    let dataset = tmp.path().join("tz.jsonl");
    std::fs::write(&dataset, format!("{task}\n")).unwrap();
    let run = live_run(
        &catalog,
        dataset.to_str().unwrap(),
        tmp.path(),
        "tz",
        &["--backends", "oracle", "--layouts", "flat,progressive", "--variants", "good"],
    );
    for t in trials(&run) {
        assert_eq!(t["score"]["pass"], true, "{}: {}", t["trial_id"], t["score"]);
    }
    assert!(
        tool_results(&run)
            .iter()
            .any(|r| r.contains("Asia/Tokyo") && r.contains("time_difference")),
        "{:?}",
        tool_results(&run)
    );
}
