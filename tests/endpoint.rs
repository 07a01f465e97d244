//! The openai backend end to end: the real binary speaks HTTP to a local mock endpoint started by the
//! test (in-process, on a loopback port), with faults injected by the server.

mod common;
use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;
use toolpick::mock::{Fault, MockConfig};

/// The mock endpoint and the small catalog; runs time a request out after 2 s and try 5 times
/// unless told otherwise.
fn start(config: MockConfig) -> MockEnv {
    MockEnv::start(config, &[&["--request-timeout", "2"], &["--max-attempts", "5"]])
}

fn faults(list: &[(Fault, u64)]) -> MockConfig {
    MockConfig { faults: list.to_vec(), retry_after_s: 0, ..Default::default() }
}

/// Every request `out/<run_id>/timings.jsonl` times, over all its trials.
fn timed_requests(env: &MockEnv, run_id: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(env.path(&format!("out/{run_id}/timings.jsonl"))).unwrap();
    text.lines()
        .flat_map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["requests"].as_array().unwrap().clone()
        })
        .collect()
}

/// What `run.json` says of the mock endpoint after `out/<run_id>`.
fn endpoint_stats(env: &MockEnv, run_id: &str) -> Value {
    let run: Value = serde_json::from_slice(
        &std::fs::read(env.path(&format!("out/{run_id}/run.json"))).unwrap(),
    )
    .unwrap();
    run["endpoints"]["mock"].clone()
}

#[test]
fn agent_loop_over_http_matches_the_in_process_baseline_in_every_layout() {
    // The mock decides with the lexical baseline, so the HTTP path must reproduce it exactly, the
    // meta-tools of progressive discovery and of search included.
    let env = start(MockConfig::default());
    let url = env.server.base_url();
    let o = toolpick(
        &argv_with(
            "run --backends lexical,openai --model mock --base-url {} --out {} --run-id r -q \
             --no-cache --layouts flat,progressive,search",
            &[&url, env.path("out").to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = summary_rows(&env.path("out/r"));
    assert_eq!(rows.len(), 12);
    let key = |r: &Row| (r["variant"].clone(), r["layout"].clone());
    let lexical: HashMap<_, _> =
        rows.iter().filter(|r| r["backend"] == "lexical").map(|r| (key(r), r)).collect();
    for r in rows.iter().filter(|r| r["backend"] == "mock") {
        let l = lexical[&key(r)];
        for col in [
            "n",
            "selection_accuracy",
            "pass_at_1",
            "abstention_accuracy",
            "mean_steps",
            "infra_errors",
        ] {
            assert_eq!(r[col], l[col], "{col} differs for {:?}", key(r));
        }
        assert_eq!(r["infra_errors"], "0");
    }
    // Progressive episodes really went through several requests each.
    assert!(env.server.requests() > 264 * 4, "requests: {}", env.server.requests());
    // Usage reported by the endpoint is recorded.
    let t: Value = serde_json::from_str(
        std::fs::read_to_string(env.path("out/r/trials.jsonl"))
            .unwrap()
            .lines()
            .find(|l| l.contains("\"backend\":\"mock\""))
            .unwrap(),
    )
    .unwrap();
    assert!(t["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn transient_faults_are_retried_counted_and_never_become_model_failures() {
    for fault in [
        Fault::RateLimit,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::Truncated,
        Fault::EmptyChoices,
        Fault::Timeout,
    ] {
        let env = start(faults(&[(fault, 3)]));
        let baseline = start(MockConfig::default());
        // One request at a time: a retry always lands on the next request number, so with faults on
        // every third request no attempt sequence can fail five times in a row (no flaky outcomes).
        env.run_ok("r", &["--no-cache", "--concurrency", "1"]);
        baseline.run_ok("r", &["--no-cache"]);
        let injected = env.server.injected(fault);
        assert!(injected > 0, "{fault:?} was never injected");
        let stats = endpoint_stats(&env, "r");
        assert_eq!(
            stats["retries"].as_u64().unwrap(),
            injected,
            "{fault:?}: every injected fault is one counted retry"
        );
        assert_eq!(stats["failures"].as_u64().unwrap(), 0);
        if fault == Fault::RateLimit {
            assert_eq!(stats["rate_limited"].as_u64().unwrap(), injected);
        }
        // Same scores as a run without faults.
        let strip = |ts: Vec<Value>| {
            ts.into_iter()
                .map(|t| (t["trial_id"].clone(), t["score"].clone(), t["calls"].clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            strip(env.trials("r")),
            strip(baseline.trials("r")),
            "{fault:?} changed the outcome"
        );
        // Latency was measured per attempt: the timings sidecar has more attempts than requests that succeeded.
        let attempts: usize = timed_requests(&env, "r")
            .iter()
            .map(|r| r["attempt_ms"].as_array().unwrap().len())
            .sum();
        assert_eq!(
            attempts as u64,
            env.server.requests(),
            "{fault:?}: one latency per HTTP attempt"
        );
    }
}

#[test]
fn retry_after_is_honoured() {
    let env = start(MockConfig {
        faults: vec![(Fault::RateLimit, 2)],
        retry_after_s: 1,
        ..Default::default()
    });
    let started = std::time::Instant::now();
    env.run_ok("r", &["--no-cache", "--concurrency", "1"]);
    let injected = env.server.injected(Fault::RateLimit);
    assert!(injected >= 2);
    // With one request in flight, every 429 costs at least its Retry-After of one second.
    assert!(
        started.elapsed() >= Duration::from_secs(injected),
        "{injected} retries of 1 s each, took {:?}",
        started.elapsed()
    );
    let waited: f64 =
        timed_requests(&env, "r").iter().map(|r| r["waited_ms"].as_f64().unwrap()).sum();
    assert!(waited >= 1000.0 * injected as f64 - 1.0, "waited {waited} ms");
}

#[test]
fn exhausted_retries_are_errors_excluded_from_accuracy_and_kept_on_resume() {
    let env = start(faults(&[(Fault::ServerError, 1)]));
    env.run_ok("r", &["--max-attempts", "2"]);
    let trials = env.trials("r");
    assert!(
        trials
            .iter()
            .all(|t| { t["error"].as_str().unwrap().contains("server_error after 2 attempt(s)") })
    );
    let rows = summary_rows(&env.path("out/r"));
    for r in &rows {
        assert_eq!(r["n"], "0", "errors are not scored");
        assert_eq!(r["pass_at_1"], "", "an undefined rate, not 0 %");
        assert!(r["infra_errors"].parse::<u64>().unwrap() > 0);
    }
    // Resuming keeps errors as they are …
    let before = env.server.requests();
    env.run_ok("r", &[]);
    assert_eq!(env.server.requests(), before, "a plain resume does not retry errors");
    // Pointing the run at another endpoint is refused: the base URL is part of the matrix.
    let healthy = start(MockConfig::default());
    std::fs::rename(env.path("out"), healthy.path("out")).unwrap();
    let o = healthy.run("r", &["--retry-errors"]);
    // the base URL is part of the matrix: a different endpoint is a different experiment
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("different matrix"));
}

#[test]
fn retry_errors_reruns_only_the_failed_trials() {
    // Every second request fails; with a single attempt some trials end as errors. Resuming with
    // --retry-errors and enough attempts re-runs exactly those.
    let env = start(faults(&[(Fault::Unavailable, 2)]));
    // One request at a time, so a failed attempt's retry is the next (odd, healthy) request.
    env.run_ok("r", &["--max-attempts", "1", "--no-cache", "--concurrency", "1"]);
    let errors = env.trials("r").iter().filter(|t| t["error"].is_string()).count();
    assert!(errors > 0);
    let before = env.trials("r");
    let ok_before: Vec<&Value> = before.iter().filter(|t| t["error"].is_null()).collect();
    assert!(!ok_before.is_empty());
    let o = env.run_ok(
        "r",
        &["--max-attempts", "5", "--retry-errors", "--no-cache", "--concurrency", "1"],
    );
    assert!(
        stdout(&o).contains(&format!("{errors} trials run, {} already done", ok_before.len())),
        "{}",
        stdout(&o)
    );
    let after = env.trials("r");
    assert_eq!(after.len(), before.len(), "one record per trial after compaction");
    assert!(
        after.iter().all(|t| t["error"].is_null()),
        "retried with enough attempts, all succeed"
    );
    for t in ok_before {
        assert!(after.contains(t), "finished trials are kept as they were");
    }
}

#[test]
fn model_misbehaviour_is_recorded_taught_and_the_episode_goes_on() {
    for (fault, error) in [
        (Fault::MalformedArgs, "malformed_call"),
        (Fault::InventedTool, "invented_tool"),
        (Fault::TextCalls, "should_have_called"),
    ] {
        let env = start(faults(&[(fault, 1)]));
        env.run_ok("r", &["--no-cache", "--layouts", "flat"]);
        let trials = env.trials("r");
        let t = trials.iter().find(|t| t["task_id"] == "w1").unwrap();
        assert_eq!(t["score"]["error_type"], error, "{fault:?}: {t}");
        assert!(t["error"].is_null(), "a model failure is not an infrastructure error");
        if fault != Fault::TextCalls {
            // the model got a teaching error back and was asked again
            let transcript = t["transcript"].as_array().unwrap();
            let tool_msg = transcript.iter().find(|m| m["role"] == "tool").unwrap();
            assert!(tool_msg["content"].as_str().unwrap().contains("error"), "{tool_msg}");
            assert!(t["steps"].as_u64().unwrap() >= 2);
        }
    }
}

#[test]
fn text_calls_are_parsed_only_when_asked_and_marked() {
    let env = start(faults(&[(Fault::TextCalls, 1)]));
    env.run_ok("strict", &["--no-cache", "--layouts", "flat"]);
    env.run_ok("lenient", &["--no-cache", "--layouts", "flat", "--parse-text-calls"]);
    let strict = env.trials("strict");
    assert!(
        strict.iter().all(|t| t["calls"].as_array().unwrap().is_empty()),
        "strict: text is not a call"
    );
    // Parsed from text, the calls score exactly like the same calls sent as tool_calls.
    let plain = start(MockConfig::default());
    plain.run_ok("r", &["--no-cache", "--layouts", "flat"]);
    let lenient = env.trials("lenient");
    let reference = plain.trials("r");
    for (a, b) in lenient.iter().zip(&reference) {
        assert_eq!(a["score"], b["score"], "{}", a["trial_id"]);
        for (ca, cb) in a["calls"].as_array().unwrap().iter().zip(b["calls"].as_array().unwrap()) {
            assert_eq!(ca["record"]["from_text"], true);
            assert!(cb["record"].get("from_text").is_none());
            assert_eq!(ca["record"]["tool_id"], cb["record"]["tool_id"]);
        }
    }
    assert!(lenient.iter().any(|t| !t["calls"].as_array().unwrap().is_empty()));
}

#[test]
fn a_rerun_is_served_from_the_cache_with_zero_requests() {
    let env = start(MockConfig::default());
    env.run_ok("a", &[]);
    let first = env.server.requests();
    assert!(first > 0);
    env.run_ok("b", &[]);
    assert_eq!(env.server.requests(), first, "the second run made requests");
    assert_eq!(
        std::fs::read(env.path("out/a/trials.jsonl")).unwrap(),
        std::fs::read(env.path("out/b/trials.jsonl")).unwrap()
    );
    assert!(endpoint_stats(&env, "b")["cache_hits"].as_u64().unwrap() > 0);
    // More trials need new entries: trial 1 must not reuse trial 0's response.
    env.run_ok("c", &["--trials", "2"]);
    assert!(env.server.requests() > first, "trial index is part of the cache key");
    let o = toolpick(&["cache", "stats", "--cache-dir", "out/.cache"], env.dir.path());
    assert!(stdout(&o).contains(" entries"), "{}", stdout(&o));
    let o = toolpick(&["cache", "clear", "--cache-dir", "out/.cache"], env.dir.path());
    assert!(o.status.success());
    let before = env.server.requests();
    env.run_ok("d", &[]);
    assert!(env.server.requests() > before, "cleared cache means new requests");
}

#[test]
fn a_killed_run_resumes_without_lost_or_duplicated_trials() {
    let env = start(MockConfig { latency: Duration::from_millis(15), ..Default::default() });
    let url = env.server.base_url();
    let out = env.path("out");
    let args = |id: &str| -> Vec<String> {
        [
            "run",
            "--backends",
            "openai",
            "--model",
            "mock",
            "--base-url",
            &url,
            "--out",
            out.to_str().unwrap(),
            "--run-id",
            id,
            "--no-cache",
            "-q",
            "--concurrency",
            "4",
            "--layouts",
            "flat",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let reference =
        toolpick(&args("whole").iter().map(String::as_str).collect::<Vec<_>>(), &repo());
    assert!(reference.status.success(), "{}", stderr(&reference));

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(args("killed"))
        .current_dir(repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let trials = out.join("killed/trials.jsonl");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let lines = std::fs::read_to_string(&trials).map(|t| t.lines().count()).unwrap_or(0);
        if lines >= 40 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = std::fs::read_to_string(&trials).unwrap().lines().count();
    assert!(partial > 0 && partial < 528, "killed mid-run: {partial} trials written");
    // A torn last line must be tolerated too.
    let mut f = std::fs::OpenOptions::new().append(true).open(&trials).unwrap();
    std::io::Write::write_all(&mut f, b"{\"trial_id\":\"starter/good/flat/mock/dev-0").unwrap();
    drop(f);

    let resumed = toolpick(&args("killed").iter().map(String::as_str).collect::<Vec<_>>(), &repo());
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stdout(&resumed).contains(&format!("{} already done", partial)),
        "{}",
        stdout(&resumed)
    );
    for f in ["trials.jsonl", "summary.csv"] {
        assert!(
            std::fs::read(out.join("whole").join(f)).unwrap()
                == std::fs::read(out.join("killed").join(f)).unwrap(),
            "{f} differs after resume"
        );
    }
}

#[test]
fn the_api_key_never_reaches_any_output() {
    let secret = "sk-toolpick-test-7f3a9c1e5b";
    let env = start(MockConfig { require_key: Some(secret.into()), ..Default::default() });
    let o = env
        .command("r", &["--api-key-env", "TOOLPICK_TEST_KEY"])
        .env("TOOLPICK_TEST_KEY", secret)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = summary_rows(&env.path("out/r"));
    assert!(
        rows.iter().all(|r| r["infra_errors"] == "0"),
        "the key was sent: the server accepted every request"
    );
    // And a wrong key is an infrastructure error whose message does not contain the key either (past
    // the preflight, which would stop the run at the first 401: tests/failfast.rs).
    let o2 = env
        .command("r2", &["--api-key-env", "TOOLPICK_TEST_KEY", "--no-cache", "--no-preflight"])
        .env("TOOLPICK_TEST_KEY", format!("{secret}-wrong"))
        .output()
        .unwrap();
    assert!(o2.status.success());
    let mut seen = 0;
    for entry in walk(&env.path("out")) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "key found in {}",
            entry.display()
        );
        seen += 1;
    }
    assert!(seen > 10);
    for out in [&o, &o2] {
        assert!(!stdout(out).contains(secret) && !stderr(out).contains(secret));
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out
}

#[test]
fn sampling_noise_shows_up_as_a_noise_floor_and_a_deterministic_endpoint_has_none() {
    // The bundled catalog and its first 60 tasks: enough tasks for outcomes to vary.
    let use_bundled = |env: &MockEnv| {
        let cat = env.path("cat");
        std::fs::remove_dir_all(&cat).unwrap();
        std::fs::create_dir_all(&cat).unwrap();
        for f in std::fs::read_dir(repo().join("registries/workspace")).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, cat.join(f.file_name().unwrap())).unwrap();
        }
        let tasks: Vec<String> = std::fs::read_to_string(repo().join("datasets/starter.jsonl"))
            .unwrap()
            .lines()
            .take(60)
            .map(String::from)
            .collect();
        std::fs::write(env.path("ds.jsonl"), tasks.join("\n") + "\n").unwrap();
    };
    let mixed_tasks = |env: &MockEnv, run_id: &str| -> usize {
        let mut by_task: HashMap<String, (u32, u32)> = HashMap::new();
        for t in env.trials(run_id) {
            let e = by_task.entry(t["task_id"].as_str().unwrap().to_string()).or_default();
            e.0 += 1;
            e.1 += t["score"]["pass"].as_bool().unwrap() as u32;
        }
        by_task.values().filter(|(n, c)| *c > 0 && c < n).count()
    };
    let args = argv(
        "--trials 5 --concurrency 1 --no-cache --variants good --layouts flat \
        --temperature 1",
    );

    let env = start(MockConfig { sampling_noise: 0.5, seed: 3, ..Default::default() });
    use_bundled(&env);
    env.run_ok("noisy", &args);
    let row = &summary_rows(&env.path("out/noisy"))[0];
    let num = |k: &str| row[k].parse::<f64>().unwrap_or_else(|_| panic!("{k} = {:?}", row[k]));
    assert_eq!(row["trials_per_task"], "5");
    assert!(
        mixed_tasks(&env, "noisy") > 0,
        "a sampled endpoint makes some task pass in one trial and fail in another"
    );
    assert!(
        num("flip_rate") > 0.0
            && num("noise_95") > 0.0
            && num("min_detectable_diff") > num("noise_95")
    );
    assert!(num("pass_at_k") > num("pass_at_1") && num("pass_at_1") > num("pass_hat_k"));

    let env = start(MockConfig::default());
    use_bundled(&env);
    env.run_ok("steady", &args);
    let row = &summary_rows(&env.path("out/steady"))[0];
    assert_eq!(mixed_tasks(&env, "steady"), 0);
    assert_eq!(row["flip_rate"].parse::<f64>().unwrap(), 0.0);
    assert_eq!(row["pass_at_k"], row["pass_hat_k"], "no flips: some-of-k equals all-of-k");
}
