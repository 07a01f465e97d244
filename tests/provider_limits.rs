//! Provider limits end to end, offline: the real binary against the mock endpoint (started in-process
//! on a loopback port) that refuses requests as the providers do. Before the run, every cell a limit
//! would refuse is named (exit 2, nothing written); with `--allow-provider-errors` each refusal at
//! run time is a `provider_limit` trial with its kind — not retried, not a breaker trip, in no rate and
//! counted per cell in `excluded_provider_limit`.
//!
//! The catalogs are generated here: one server of `n` tools, for tool counts around OpenAI's 128.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};
use toolpick::mock::MockConfig;
use toolpick::mock::limits::ContextError;

/// A catalog `dir` of one server holding one tool per name, and a two-task dataset `ds_<dir>.jsonl`
/// asking for the first and the last tool.
fn write_catalog(root: &Path, dir: &str, names: &[String]) {
    let tools: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({"name": n, "description": format!("Performs operation number {i} on a record. Use when asked for operation {i}."),
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": "Record id."}},
                                "required": ["id"], "additionalProperties": false},
                "annotations": {"readOnlyHint": true, "destructiveHint": false}, "mockResponse": {"ok": true}})
        })
        .collect();
    let server = json!({"name": "big", "description": "Many operations.",
        "categories": [{"name": "ops", "description": "Operations.", "tools": tools}]});
    std::fs::create_dir_all(root.join(dir)).unwrap();
    std::fs::write(root.join(dir).join("big.json"), server.to_string()).unwrap();
    let task = |i: usize| {
        json!({"id": format!("t{i}"), "query": format!("Run operation {i} on record r{i}"), "kind": "single",
               "expected": [{"tool": format!("big/ops/{}", names[i]), "arguments": {"id": [format!("r{i}")]}}],
               "category": "ops", "tags": []})
        .to_string()
    };
    let lines = [task(0), task(names.len() - 1)].join("\n");
    std::fs::write(root.join(format!("ds_{dir}.jsonl")), lines + "\n").unwrap();
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("do_thing_{i}")).collect()
}

/// `toolpick run` of catalog `dir` by `backend` against the mock, into `out/<run_id>`: the good
/// variant, one trial, quiet, no cache.
fn command(env: &MockEnv, backend: &str, dir: &str, run_id: &str, extra: &[&str]) -> Command {
    let url = match backend {
        "anthropic" => format!("http://{}", env.server.addr),
        _ => env.url(),
    };
    let dataset = format!("ds_{dir}.jsonl");
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    c.args(["run", "--catalog", dir, "--dataset", &dataset, "--backends", backend])
        .args(["--model", "mock", "--base-url", &url, "--out", "out", "--run-id", run_id])
        .args(["--variants", "good", "-q", "--no-cache", "--request-timeout", "5"])
        .args(extra)
        .current_dir(env.dir.path());
    c
}

fn run(env: &MockEnv, backend: &str, dir: &str, run_id: &str, extra: &[&str]) -> Output {
    command(env, backend, dir, run_id, extra).output().unwrap()
}

fn start(config: MockConfig) -> MockEnv {
    MockEnv::start(config, &[])
}

/// The run was refused before anything ran: exit 2, no output directory.
fn assert_refused_before_the_run(env: &MockEnv, o: &Output, what: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(!env.path("out").exists(), "{what}: nothing is written");
    assert_eq!(env.server.requests(), 0, "{what}: no model request was sent");
    assert!(err.contains("--allow-provider-errors"), "{what}: says how to run anyway: {err}");
    err
}

#[test]
fn tool_counts_around_openais_128_are_refused_before_the_run_by_cell() {
    for n in [127, 128, 129, 150] {
        let env = start(MockConfig { tool_limits: true, ..Default::default() });
        let dir = format!("cat{n}");
        write_catalog(env.dir.path(), &dir, &names(n));
        let o = run(
            &env,
            "openai",
            &dir,
            "r",
            &["--provider-limits", "openai", "--layouts", "flat,progressive"],
        );
        if n <= 128 {
            assert!(o.status.success(), "{n} tools: {}", stderr(&o));
            continue;
        }
        let err = assert_refused_before_the_run(&env, &o, &format!("{n} tools"));
        let cell =
            format!("ds_{dir}/{dir}/good/flat/mock [tool_count]: {n} tools, more than the 128");
        assert!(err.contains(&cell), "{n} tools: names the cell, the limit and the numbers: {err}");
        assert!(
            !err.contains("/progressive/"),
            "the progressive layout offers its meta-tools only: {err}"
        );
        assert!(err.contains("--layouts progressive or search"), "{err}");
    }
}

#[test]
fn a_tool_count_curve_is_measured_per_task_at_each_level() {
    // Each task sees its gold tool plus N drawn from the 150: N = 126 and 127 fit in 128, 128 does not.
    let env = start(MockConfig { tool_limits: true, ..Default::default() });
    write_catalog(env.dir.path(), "cat", &names(150));
    let args =
        ["--provider-limits", "openai", "--layouts", "flat", "--distractors", "10,126,127,128"];
    let o = run(&env, "openai", "cat", "r", &args);
    let err = assert_refused_before_the_run(&env, &o, "a curve");
    assert!(err.contains("/good@128/flat/mock [tool_count]: 129 tools"), "{err}");
    for fits in ["@10/", "@126/", "@127/"] {
        assert!(!err.contains(fits), "{fits} fits: {err}");
    }
    let args = ["--provider-limits", "openai", "--layouts", "flat", "--distractors", "10,127"];
    let o = run(&env, "openai", "cat", "r", &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = trials_with_transcripts(&env.path("out/r"));
    assert!(trials.iter().all(|t| t["stop_reason"] != "provider_limit"), "every request fits");
}

#[test]
fn the_limits_of_openais_own_api_are_not_those_of_a_compatible_server() {
    // The same 150 tools to a local OpenAI-compatible server: no limit is assumed, the run goes on.
    let env = start(MockConfig::default());
    write_catalog(env.dir.path(), "cat", &names(150));
    let o = run(&env, "openai", "cat", "r", &["--layouts", "flat"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&env, "openai", "cat", "n", &["--layouts", "flat", "--provider-limits", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn names_gemini_refuses_are_named_before_the_run() {
    // Names valid for OpenAI (the flat layout's pattern) that break Gemini's `[a-zA-Z_][a-zA-Z0-9_.:-]*`.
    for bad in ["9lives", "-dash_first", "0"] {
        let env = start(MockConfig::default());
        let mut list = names(3);
        list.push(bad.to_string());
        write_catalog(env.dir.path(), "cat", &list);
        let o =
            run(&env, "openai", "cat", "r", &["--provider-limits", "gemini", "--layouts", "flat"]);
        let err = assert_refused_before_the_run(&env, &o, bad);
        assert!(err.contains("[tool_name]") && err.contains(&format!("`{bad}`")), "{bad}: {err}");
        assert!(err.contains("Gemini"), "{err}");
        // The same names pass OpenAI's rule.
        let o =
            run(&env, "openai", "cat", "o", &["--provider-limits", "openai", "--layouts", "flat"]);
        assert!(o.status.success(), "{bad} under OpenAI's rule: {}", stderr(&o));
    }
}

#[test]
fn with_allow_provider_errors_each_refusal_is_a_provider_limit_trial_counted_per_cell() {
    let env = start(MockConfig { tool_limits: true, ..Default::default() });
    write_catalog(env.dir.path(), "cat", &names(150));
    // One episode in a row failing the same way would open a breaker of 1: a limit is no such failure.
    let extra = [
        "--provider-limits",
        "openai",
        "--layouts",
        "flat,progressive",
        "--allow-provider-errors",
        "--breaker",
        "1",
        "--trials",
        "2",
    ];
    let o = run(&env, "openai", "cat", "r", &extra);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("[tool_count]"), "the cells are still named: {}", stderr(&o));
    let trials = trials_with_transcripts(&env.path("out/r"));
    assert_eq!(trials.len(), 8, "every trial ran");
    for t in &trials {
        if t["layout"] == "flat" {
            assert_eq!(t["stop_reason"], "provider_limit", "{t}");
            assert_eq!(t["provider_limit"]["kind"], "tool_count", "{t}");
            assert!(
                t["provider_limit"]["message"].as_str().unwrap().contains("array_above_max_length")
            );
            assert!(t.get("error").is_none(), "not an infrastructure error: {t}");
            assert_eq!(t["score"]["error_type"], "provider_limit", "{t}");
        } else {
            assert_ne!(t["stop_reason"], "provider_limit", "{t}");
            assert!(t.get("provider_limit").is_none(), "{t}");
        }
    }
    let run_json: Value =
        serde_json::from_slice(&std::fs::read(env.path("out/r/run.json")).unwrap()).unwrap();
    assert_eq!(run_json["endpoints"]["mock"]["retries"], 0, "a limit is never retried");
    for row in summary_rows(&env.path("out/r")) {
        let (n, limited) = if row["layout"] == "flat" { ("0", "4") } else { ("4", "0") };
        assert_eq!(
            (row["n"].as_str(), row["excluded_provider_limit"].as_str()),
            (n, limited),
            "{row:?}"
        );
        assert_eq!(row["excluded_infrastructure"], "0", "{row:?}");
    }
}

/// The estimated prompt of the cell the refusal names, from its message.
fn estimate_in(err: &str) -> u64 {
    let at = err.find("an estimated ").expect("an estimate") + "an estimated ".len();
    err[at..].split('-').next().unwrap().parse().unwrap()
}

#[test]
fn context_windows_around_the_estimate_from_the_flag_and_from_the_servers_props() {
    // The server's own n_ctx (llama-server's `GET /props`), read when no window is configured.
    let env = start(MockConfig { context_size: Some(2000), ..Default::default() });
    write_catalog(env.dir.path(), "cat", &names(60));
    let o = run(&env, "openai", "cat", "r", &["--layouts", "flat"]);
    let err = assert_refused_before_the_run(&env, &o, "/props");
    assert!(
        err.contains("/good/flat/mock [context]")
            && err.contains("2000-token context window (the server's /props n_ctx)"),
        "{err}"
    );
    let estimate = estimate_in(&err);
    assert!(estimate > 2000, "{err}");
    // A configured window wins over /props; windows around the estimate: refused above it only.
    let env = start(MockConfig::default());
    write_catalog(env.dir.path(), "cat", &names(60));
    for (window, refused) in
        [(estimate - 1, true), (estimate, false), (estimate + 1, false), (1, true)]
    {
        let w = window.to_string();
        let o = run(
            &env,
            "openai",
            "cat",
            &format!("w{window}"),
            &["--layouts", "flat", "--context-window", &w],
        );
        if refused {
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "window {window}: {err}");
            assert!(
                err.starts_with("error: --context-window:") || err.contains("--context-window:"),
                "{err}"
            );
            assert!(
                err.contains(&format!("{window}-token context window (context_window)")),
                "{err}"
            );
        } else {
            assert!(o.status.success(), "window {window}: {}", stderr(&o));
        }
    }
    // A server without /props, and no window configured: nothing to check, the run goes on.
    let o = run(&env, "openai", "cat", "none", &["--layouts", "flat"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn each_providers_context_refusal_at_run_time_is_a_context_limit() {
    let cases = [
        ("openai", ContextError::LlamaCpp, "exceed_context_size_error"),
        ("openai", ContextError::OpenAi, "context_length_exceeded"),
        ("anthropic", ContextError::LlamaCpp, "prompt is too long"),
        ("anthropic", ContextError::StopReason, "model_context_window_exceeded"),
    ];
    for (backend, style, words) in cases {
        let env = start(MockConfig {
            context_size: Some(1500),
            context_error: style,
            ..Default::default()
        });
        write_catalog(env.dir.path(), "cat", &names(60));
        let o = run(
            &env,
            backend,
            "cat",
            "r",
            &["--layouts", "flat", "--allow-provider-errors", "--breaker", "1"],
        );
        assert!(o.status.success(), "{backend} {style:?}: {}", stderr(&o));
        let trials = trials_with_transcripts(&env.path("out/r"));
        assert_eq!(trials.len(), 2);
        for t in &trials {
            assert_eq!(t["stop_reason"], "provider_limit", "{backend} {style:?}: {t}");
            assert_eq!(t["provider_limit"]["kind"], "context", "{t}");
            assert!(t["provider_limit"]["message"].as_str().unwrap().contains(words), "{t}");
        }
        assert_eq!(
            env.server.requests(),
            2,
            "{backend} {style:?}: one request per trial, none retried"
        );
        let row = &summary_rows(&env.path("out/r"))[0];
        assert_eq!(row["excluded_provider_limit"], "2", "{row:?}");
    }
}

#[test]
fn bad_limit_settings_name_their_flag_or_field_and_the_rule() {
    let env = start(MockConfig::default());
    write_catalog(env.dir.path(), "cat", &names(3));
    for (args, says) in [
        (
            vec!["--provider-limits", "azure"],
            ["'--provider-limits <PROVIDER>'", "openai, anthropic, gemini, none"],
        ),
        (vec!["--context-window", "0"], ["'--context-window <TOKENS>'", "at least 1"]),
        (
            vec!["--context-window", "lots"],
            ["'--context-window <TOKENS>'", "not a whole number of tokens"],
        ),
    ] {
        let o = run(&env, "openai", "cat", "r", &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(says.iter().all(|w| stderr(&o).contains(w)), "{args:?}: {}", stderr(&o));
    }
    let config = env.path("exp.toml");
    for (line, says) in [
        ("context_window = 0", "exp.toml:6: field `models[0].context_window`: must be at least 1"),
        (
            "provider_limits = \"azure\"",
            "exp.toml:6: field `models[0].provider_limits`: `azure` is not a provider",
        ),
    ] {
        std::fs::write(&config, format!("catalogs = [\"cat\"]\ndatasets = [\"ds_cat.jsonl\"]\n[[models]]\nbackend = \"openai\"\nmodel = \"m\"\n{line}\n")).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_toolpick"))
            .args([
                "run",
                "--config",
                config.to_str().unwrap(),
                "--base-url",
                &env.url(),
                "--out",
                "out",
            ])
            .current_dir(env.dir.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{line}");
        assert!(stderr(&o).contains(says), "{line}: {}", stderr(&o));
    }
    assert!(!env.path("out").exists());
    for (args, says) in [
        (
            ["--context-error", "gemini"],
            "--context-error: `gemini` is not a style; choose from llama-cpp, openai, stop-reason",
        ),
        (["--context-size", "0"], "--context-size: must be at least 1 token"),
    ] {
        let o = toolpick(&["mock-endpoint", "--port", "0", args[0], args[1]], env.dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}
