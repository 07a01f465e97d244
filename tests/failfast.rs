//! Failing fast on bad settings and bad endpoints (issue 12, parts 1 and 2), with the real binary
//! against endpoints the test starts on loopback ports: invalid settings exit 2 before anything is
//! written, an endpoint that does not answer properly fails the preflight with exit 1 before anything
//! is written, and an endpoint that goes down mid-run is stopped by the circuit breaker (exit 1,
//! finished trials kept, a resumed run completes).

mod common;
use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use toolpick::mock::{self, MockConfig, MockServer};

/// A scratch directory with the small catalog and dataset, and a runtime for servers.
struct Scratch {
    rt: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
}

fn scratch() -> Scratch {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    Scratch { rt, dir: small_world() }
}

impl Scratch {
    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn mock(&self, config: MockConfig) -> MockServer {
        self.rt.block_on(mock::spawn("127.0.0.1:0".parse().unwrap(), config)).unwrap()
    }

    /// A server whose every answer is `answer` (any method, any path), counting requests by path.
    fn fixed(&self, answer: fn(&str, &HeaderMap) -> axum::response::Response) -> Fixed {
        let hits = Arc::new(Hits::default());
        let h = hits.clone();
        let app = Router::new().fallback(move |uri: axum::http::Uri, headers: HeaderMap| {
            let h = h.clone();
            async move {
                h.count(uri.path());
                answer(uri.path(), &headers)
            }
        });
        let listener = self.rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        self.rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
        Fixed { url, hits }
    }

    /// `toolpick run` on the small suite against `url`, with extra flags (and environment).
    fn run(&self, url: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let mut args = argv_with(
            "run --catalog cat --dataset ds.jsonl --model mock --base-url {} --out out -q",
            &[url],
        );
        for (flag, default) in
            [("--backends", "openai"), ("--run-id", "r"), ("--request-timeout", "5")]
        {
            if !extra.contains(&flag) {
                args.extend_from_slice(&[flag, default]);
            }
        }
        args.extend_from_slice(extra);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"));
        cmd.args(&args)
            .current_dir(self.dir.path())
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// Nothing was written: no output root, so no run directory, trial or report.
    fn assert_nothing_written(&self, what: &str) {
        assert!(!self.path("out").exists(), "{what}: {} was created", self.path("out").display());
    }
}

#[derive(Default)]
struct Hits {
    models: AtomicU64,
    chat: AtomicU64,
}

impl Hits {
    fn count(&self, path: &str) {
        if path.ends_with("/models") {
            self.models.fetch_add(1, Ordering::SeqCst);
        } else if path.ends_with("/chat/completions") {
            self.chat.fetch_add(1, Ordering::SeqCst);
        }
    }
}

struct Fixed {
    url: String,
    hits: Arc<Hits>,
}

/// A port on loopback where nothing listens (bound, then released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn invalid_settings_exit_2_before_any_request_or_file() {
    let s = scratch();
    let server = s.mock(MockConfig::default());
    let good = server.base_url();
    // (base URL, extra flags, what stderr must name)
    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        ("notaurl", vec![], vec!["--base-url", "`notaurl` is not a URL"]),
        ("ftp://127.0.0.1/v1", vec![], vec!["--base-url", "scheme `ftp`"]),
        (
            &good,
            vec!["--tool-choice", "sometimes"],
            vec!["--tool-choice", "sometimes", "auto, none, required"],
        ),
        (&good, vec!["--request-timeout", "0"], vec!["--request-timeout", "more than 0"]),
        (&good, vec!["--episode-timeout", "-1"], vec!["--episode-timeout"]),
        (&good, vec!["--concurrency", "0"], vec!["--concurrency", "at least 1"]),
        (&good, vec!["--max-attempts", "0"], vec!["--max-attempts", "at least 1"]),
        (&good, vec!["--jobs", "0"], vec!["--jobs", "at least 1"]),
        (&good, vec!["--trials", "0"], vec!["--trials", "at least 1"]),
        (&good, vec!["--max-steps", "0"], vec!["--max-steps", "at least 1"]),
        (&good, vec!["--temperature", "2.5"], vec!["--temperature", "between 0 and 2"]),
        (&good, vec!["--top-p", "1.5"], vec!["--top-p", "between 0 and 1"]),
        (&good, vec!["--max-tokens", "0"], vec!["--max-tokens", "at least 1"]),
        (&good, vec!["--rpm", "0"], vec!["--rpm", "more than 0"]),
        (&good, vec!["--tpm", "-5"], vec!["--tpm"]),
        (&good, vec!["--distractors", "10,10"], vec!["--distractors", "level 10 is given twice"]),
        (&good, vec!["--layouts", "flat,flat"], vec!["--layouts", "given twice"]),
    ];
    for (url, extra, needles) in &cases {
        let o = s.run(url, extra, &[]);
        let err = stderr(&o);
        assert_eq!(code(&o), Some(2), "{extra:?} {url}: {err}");
        for n in needles {
            assert!(err.contains(n), "{extra:?} {url}: stderr does not name `{n}`: {err}");
        }
        s.assert_nothing_written(&format!("{extra:?}"));
    }
    // The same rules for the experiment file's keys, named with file, line and key path.
    let file_cases = [
        ("base_url = \"notaurl\"", "exp.toml:6: field `models[0].base_url`"),
        ("tool_choice = \"sometimes\"", "exp.toml:6: field `models[0].tool_choice`"),
        ("request_timeout_s = 0", "exp.toml:6: field `models[0].request_timeout_s`"),
        ("concurrency = 0", "exp.toml:6: field `models[0].concurrency`"),
        ("max_attempts = 0", "exp.toml:6: field `models[0].max_attempts`"),
        (
            "price = { input_per_mtok = -1, output_per_mtok = 1 }",
            "exp.toml:6: field `models[0].price.input_per_mtok`",
        ),
    ];
    for (line, needle) in file_cases {
        // The tested key is on line 6 (the base URL on line 5 unless it is the tested key).
        let fifth = if line.starts_with("base_url") {
            "name = \"m\"".to_string()
        } else {
            format!("base_url = \"{good}\"")
        };
        let text = format!("trials = 1\n\n[[models]]\nmodel = \"mock\"\n{fifth}\n{line}\n");
        std::fs::write(s.path("exp.toml"), &text).unwrap();
        let o = toolpick(
            &argv("run --config exp.toml --catalog cat --dataset ds.jsonl --out out -q"),
            s.dir.path(),
        );
        assert_eq!(code(&o), Some(2), "{line}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{line}: {}", stderr(&o));
        s.assert_nothing_written(line);
    }
    // OPENAI_BASE_URL is the fallback base URL: checked with the same rule.
    let o = s.run("", &[], &[]);
    assert_eq!(code(&o), Some(2), "an empty --base-url: {}", stderr(&o));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"));
    let o = cmd
        .args([
            "run",
            "--catalog",
            "cat",
            "--dataset",
            "ds.jsonl",
            "--backends",
            "openai",
            "--model",
            "mock",
            "--out",
            "out",
            "-q",
        ])
        .env("OPENAI_BASE_URL", "localhost:8080")
        .current_dir(s.dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("OPENAI_BASE_URL"), "{}", stderr(&o));
    s.assert_nothing_written("OPENAI_BASE_URL");
    assert_eq!(server.requests(), 0, "an invalid setting cost requests");
}

#[test]
fn an_endpoint_where_nothing_listens_fails_the_preflight_with_exit_1() {
    let s = scratch();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let o = s.run(&url, &["--max-attempts", "2"], &[]);
    let err = stderr(&o);
    assert_eq!(code(&o), Some(1), "{err}");
    assert!(err.contains(&format!("GET {url}/models")), "says what was tried: {err}");
    assert!(
        err.contains("cannot connect") && err.contains("(2 attempt(s))"),
        "says what came back, with the normal retries: {err}"
    );
    assert!(err.contains("--no-preflight"), "{err}");
    s.assert_nothing_written("refused");
}

#[test]
fn a_rejected_key_fails_the_preflight_once_and_the_key_is_not_printed() {
    let s = scratch();
    let secret = "sk-failfast-0c9e7d21";
    // An endpoint that answers 401 and echoes the Authorization header it got.
    let server = s.fixed(|_, headers| {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_string();
        (
            StatusCode::UNAUTHORIZED,
            format!("{{\"error\": {{\"message\": \"Incorrect API key provided: {auth}\"}}}}"),
        )
            .into_response()
    });
    let o = s.run(&server.url, &["--api-key-env", "FAILFAST_KEY"], &[("FAILFAST_KEY", secret)]);
    let err = stderr(&o);
    assert_eq!(code(&o), Some(1), "{err}");
    assert!(
        err.contains("HTTP 401") && err.contains("Incorrect API key provided"),
        "says what came back: {err}"
    );
    assert!(
        err.contains("[REDACTED]") && !err.contains(secret) && !stdout(&o).contains(secret),
        "the echoed key is removed: {err}"
    );
    assert!(err.contains("$FAILFAST_KEY"), "names where the key came from: {err}");
    assert_eq!(server.hits.models.load(Ordering::SeqCst), 1, "a 401 is not retried");
    assert_eq!(server.hits.chat.load(Ordering::SeqCst), 0, "no episode ran");
    s.assert_nothing_written("401");

    // Without a key the message says none was sent.
    let o = s.run(&server.url, &["--api-key-env", "FAILFAST_UNSET_KEY"], &[]);
    assert_eq!(code(&o), Some(1));
    assert!(
        stderr(&o).contains("no API key was sent: $FAILFAST_UNSET_KEY is not set"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_answer_that_is_not_json_fails_the_preflight() {
    let s = scratch();
    // A web page where the API should be (e.g. the base URL of a web UI).
    let server = s.fixed(|_, _| {
        (
            StatusCode::OK,
            [("content-type", "text/html")],
            "<!doctype html><html><body>Welcome</body></html>",
        )
            .into_response()
    });
    let o = s.run(&server.url, &["--max-attempts", "2"], &[]);
    let err = stderr(&o);
    assert_eq!(code(&o), Some(1), "{err}");
    assert!(err.contains("not a JSON object") && err.contains("<!doctype html>"), "{err}");
    assert!(err.contains("(2 attempt(s))"), "retried like any truncated body: {err}");
    assert_eq!(server.hits.models.load(Ordering::SeqCst), 2);
    assert_eq!(server.hits.chat.load(Ordering::SeqCst), 0);
    s.assert_nothing_written("html");
}

/// A minimal chat completion: the model answers without a call.
fn completion() -> axum::response::Response {
    axum::Json(serde_json::json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "mock",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop", "logprobs": null}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
    }))
    .into_response()
}

#[test]
fn without_a_model_list_the_preflight_is_a_one_token_completion_that_is_not_cached() {
    let s = scratch();
    let server = s.fixed(|path, _| {
        if path.ends_with("/chat/completions") {
            completion()
        } else {
            StatusCode::NOT_FOUND.into_response()
        }
    });
    let o = s.run(&server.url, &["--layouts", "flat", "--variants", "good"], &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let chat = server.hits.chat.load(Ordering::SeqCst);
    assert_eq!(server.hits.models.load(Ordering::SeqCst), 1);
    // Four tasks, one request each (the model answers at once), plus the preflight's completion.
    assert_eq!(chat, 5);
    let trials = std::fs::read_to_string(s.path("out/r/trials.jsonl")).unwrap();
    assert_eq!(trials.lines().count(), 4, "the preflight is not a trial");
    let cached = walk(&s.path("out/.cache"))
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .count();
    assert_eq!(cached, 4, "the episodes' responses are cached, the preflight's is not");

    // /models missing and the completion refused: both attempts are named.
    let refused = s.fixed(|path, _| {
        if path.ends_with("/models") {
            StatusCode::METHOD_NOT_ALLOWED.into_response()
        } else {
            (StatusCode::FORBIDDEN, "{\"error\": \"forbidden\"}").into_response()
        }
    });
    std::fs::remove_dir_all(s.path("out")).unwrap();
    let o = s.run(&refused.url, &[], &[]);
    let err = stderr(&o);
    assert_eq!(code(&o), Some(1), "{err}");
    assert!(
        err.contains("/models → HTTP 405, then POST")
            && err.contains("/chat/completions (one token) → HTTP 403"),
        "{err}"
    );
    s.assert_nothing_written("403");
}

#[test]
fn no_preflight_skips_the_check_from_the_flag_or_the_file() {
    let s = scratch();
    let server = s.fixed(|path, _| {
        if path.ends_with("/models") {
            (StatusCode::UNAUTHORIZED, "{}").into_response()
        } else {
            completion()
        }
    });
    let o = s.run(&server.url, &["--no-preflight", "--layouts", "flat", "--variants", "good"], &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(server.hits.models.load(Ordering::SeqCst), 0, "--no-preflight sends no check");
    assert_eq!(std::fs::read_to_string(s.path("out/r/trials.jsonl")).unwrap().lines().count(), 4);
    let text = format!(
        "layouts = [\"flat\"]\nvariants = [\"good\"]\n\n[[models]]\nmodel = \"mock\"\nbase_url = \"{}\"\npreflight = false\n",
        server.url
    );
    std::fs::write(s.path("exp.toml"), text).unwrap();
    let o = toolpick(
        &argv(
            "run --config exp.toml --catalog cat --dataset ds.jsonl --out out --run-id f -q \
             --no-cache",
        ),
        s.dir.path(),
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(server.hits.models.load(Ordering::SeqCst), 0, "`preflight = false` sends no check");
    // Without either, the same endpoint fails its check.
    let o = s.run(&server.url, &["--run-id", "checked"], &[]);
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    assert_eq!(server.hits.models.load(Ordering::SeqCst), 1);
}

#[test]
fn the_breaker_stops_an_endpoint_that_goes_down_and_a_resumed_run_completes() {
    let s = scratch();
    // w1 × 10 trials come first in the matrix, two requests each (call, then answer): with the endpoint
    // down after 20 requests, w2's first three trials fail and open the breaker.
    let server = s.mock(MockConfig { down_after: Some(20), ..Default::default() });
    let url = server.base_url();
    let args = argv(
        "--layouts flat --variants good --trials 10 --concurrency 1 --max-attempts 1 \
        --no-cache --breaker 3",
    );
    let o = s.run(&url, &args, &[]);
    let err = stderr(&o);
    assert_eq!(code(&o), Some(1), "{err}");
    assert!(
        err.contains("endpoint `mock`")
            && err.contains("last 3 episodes all failed with `server_error`"),
        "{err}"
    );
    assert!(
        err.contains("27 of its 40 trials were not run") && err.contains("--run-id r"),
        "{err}"
    );
    let kept: Vec<serde_json::Value> = std::fs::read_to_string(s.path("out/r/trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(kept.len(), 13, "every finished trial is kept");
    assert_eq!(kept.iter().filter(|t| t["error"].is_string()).count(), 3);
    assert!(kept.iter().take(10).all(|t| t["task_id"] == "w1" && t["error"].is_null()));
    assert!(
        !s.path("out/r/summary.csv").exists() && !s.path("out/latest").exists(),
        "stopped like an interrupted run: no reports"
    );
    assert_eq!(server.requests(), 23, "nothing was requested after the breaker opened");

    // The endpoint recovers; the resumed run runs what was left and the failed trials.
    server.set_down_after(None);
    let o = s.run(&url, &[&args[..], &["--retry-errors"]].concat(), &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("30 trials run, 10 already done"), "{}", stdout(&o));
    let reference = s.run(&url, &[&args[..], &["--run-id", "whole"]].concat(), &[]);
    assert_eq!(code(&reference), Some(0), "{}", stderr(&reference));
    assert_eq!(
        std::fs::read(s.path("out/r/trials.jsonl")).unwrap(),
        std::fs::read(s.path("out/whole/trials.jsonl")).unwrap(),
        "resumed = uninterrupted"
    );
    assert_eq!(
        std::fs::read(s.path("out/r/summary.csv")).unwrap(),
        std::fs::read(s.path("out/whole/summary.csv")).unwrap()
    );

    // With episodes in flight the breaker drops them; what was written is whole and resumable.
    server.set_down_after(Some(server.requests() + 20));
    let busy = argv(
        "--layouts flat --variants good --trials 10 --concurrency 4 --max-attempts 1 \
        --no-cache --breaker 3 --run-id busy",
    );
    let o = s.run(&url, &busy, &[]);
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    let written = std::fs::read_to_string(s.path("out/busy/trials.jsonl")).unwrap();
    assert!(
        written.lines().count() < 40
            && written.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
    server.set_down_after(None);
    let o = s.run(&url, &[&busy[..], &["--retry-errors"]].concat(), &[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(s.path("out/busy/trials.jsonl")).unwrap(),
        std::fs::read(s.path("out/whole/trials.jsonl")).unwrap()
    );

    // Only the failing endpoint is stopped: the other backends' trials all finish.
    server.set_down_after(Some(0));
    let o = s.run(
        &url,
        &argv(
            "--backends lexical,openai --layouts flat --variants good --trials 10 \
            --max-attempts 1 --no-cache --breaker 3 --run-id mixed",
        ),
        &[],
    );
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    let mixed = std::fs::read_to_string(s.path("out/mixed/trials.jsonl")).unwrap();
    assert_eq!(
        mixed.lines().filter(|l| l.contains("\"backend\":\"lexical\"")).count(),
        40,
        "every lexical trial ran"
    );
    assert!(mixed.lines().filter(|l| l.contains("\"backend\":\"mock\"")).count() < 40);

    // `--breaker 0` never stops: the run ends with every failure recorded as an error.
    let o = s.run(
        &url,
        &argv(
            "--layouts flat --variants good --max-attempts 1 --no-cache --breaker 0 --run-id off",
        ),
        &[],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let off = std::fs::read_to_string(s.path("out/off/trials.jsonl")).unwrap();
    assert_eq!(off.lines().count(), 4);
    assert!(off.lines().all(|l| l.contains("\"error\":\"server_error after 1 attempt(s)")));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
