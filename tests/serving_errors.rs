//! Serving-side parse failures against a local endpoint: the real binary talks HTTP to a small server
//! started by the test that answers the way llama.cpp, Ollama, vLLM, Groq and Gemini do when their own
//! parser rejects what the model wrote — scored as the model's `malformed_call`, never retried, never
//! an infrastructure error — next to a transport failure, which stays an infrastructure error. Every
//! entry of the table (`agent::backends::serving_errors::TABLE`) gets a run of its own, and so do
//! answers at the same statuses without the marker.

mod common;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use toolpick::agent::backends::serving_errors::{Signal, TABLE};

/// llama.cpp's answer when the arguments of a tool call are not JSON, byte for byte as `llama-server`
/// writes it (the message the issue quotes).
const LLAMA_BODY: &str = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 23: syntax error while parsing object - unexpected end of input; expected '}'","type":"server_error"}}"#;

/// What the endpoint does with one chat request.
enum Reply {
    Json(u16, String),
    /// Read the request, then close the connection without a word (a transport failure).
    Hang,
}

type Handler = dyn Fn(&Value) -> Reply + Send + Sync;

/// A one-file HTTP/1.1 endpoint on a loopback port: `GET /v1/models` for the preflight, every
/// `POST` answered by the handler, one connection per request (`Connection: close`).
struct Endpoint {
    url: String,
    chat_requests: Arc<AtomicU64>,
}

fn serve(handler: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Endpoint {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let chat_requests = Arc::new(AtomicU64::new(0));
    let (count, handler): (Arc<AtomicU64>, Arc<Handler>) =
        (chat_requests.clone(), Arc::new(handler));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (count, handler) = (count.clone(), handler.clone());
            std::thread::spawn(move || answer(stream, &count, handler.as_ref()));
        }
    });
    Endpoint { url, chat_requests }
}

fn answer(stream: TcpStream, count: &AtomicU64, handler: &Handler) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let reply = if head.starts_with("GET") {
        Reply::Json(
            200,
            json!({"object": "list", "data": [{"id": "m", "object": "model"}]}).to_string(),
        )
    } else {
        count.fetch_add(1, Ordering::SeqCst);
        handler(&serde_json::from_slice(&body).unwrap())
    };
    let mut stream = stream;
    if let Reply::Json(status, text) = reply {
        let _ = write!(
            stream,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// A chat completion holding `message`, ending with `finish`.
fn completion(message: Value, finish: &str) -> Reply {
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    });
    Reply::Json(200, body.to_string())
}

fn done() -> Reply {
    completion(json!({"role": "assistant", "content": "Done."}), "stop")
}

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Run {
        let dir = tempfile::tempdir().unwrap();
        write_small_catalog(&dir.path().join("cat"));
        std::fs::write(dir.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
        Run { dir }
    }

    /// `toolpick run` of the small suite, flat layout, against `url`; at most 5 attempts per request
    /// and a circuit breaker that opens on the first infrastructure error unless `extra` says otherwise.
    fn run(&self, url: &str, run_id: &str, extra: &[&str]) -> std::process::Output {
        let mut args = argv_with(
            "run --catalog cat --dataset ds.jsonl --backends openai --model m --base-url {} \
             --layouts flat --variants good --out out --run-id {} --request-timeout 5 -q",
            &[url, run_id],
        );
        for (flag, value) in [("--max-attempts", "5"), ("--breaker", "1")] {
            if !extra.contains(&flag) {
                args.extend([flag, value]);
            }
        }
        args.extend_from_slice(extra);
        toolpick(&args, self.dir.path())
    }

    fn dir(&self, run_id: &str) -> std::path::PathBuf {
        self.dir.path().join("out").join(run_id)
    }
}

/// Every trial of the run is scored (no error) and failed as the model's malformed call whose record
/// keeps the server's words; returns the trials.
fn assert_all_model_malformed(run: &Run, run_id: &str, words: &str) -> Vec<Value> {
    let trials = trials_with_transcripts(&run.dir(run_id));
    assert_eq!(trials.len(), 4);
    for t in &trials {
        assert!(t["error"].is_null(), "not an infrastructure error: {t}");
        assert_eq!(t["stop_reason"], "unparsed", "{t}");
        assert_eq!(t["score"]["error_type"], "malformed_call", "{t}");
        let call = &t["calls"][0]["record"];
        assert_eq!(call["status"], "malformed");
        assert!(call["server_parse_error"].as_str().unwrap().contains(words), "{call}");
        assert!(t["score"]["error_detail"].as_str().unwrap().contains(words), "{t}");
    }
    for row in summary_rows(&run.dir(run_id)) {
        assert_eq!(row["infra_errors"], "0", "{row:?}");
        assert_eq!(row["n"], "4");
        assert_eq!(row["errors_malformed_call"], "4", "every task kind, the abstain task included");
    }
    trials
}

#[test]
fn llama_cpps_parse_error_body_scores_malformed_call_once_per_trial_and_reruns_from_the_cache() {
    let endpoint = serve(|_| Reply::Json(500, LLAMA_BODY.into()));
    let run = Run::new();
    let o = run.run(&endpoint.url, "r", &[]);
    assert!(o.status.success(), "the breaker (1) must not open on model failures: {}", stderr(&o));
    let trials = assert_all_model_malformed(
        &run,
        "r",
        "HTTP 500: Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 23",
    );
    assert_eq!(
        endpoint.chat_requests.load(Ordering::SeqCst),
        trials.len() as u64,
        "one request per trial: never retried"
    );
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run.dir("r").join("run.json")).unwrap()).unwrap();
    let stats = &meta["endpoints"]["m"];
    assert_eq!(
        (stats["unparsed_calls"].as_u64(), stats["failures"].as_u64(), stats["retries"].as_u64()),
        (Some(4), Some(0), Some(0)),
        "{stats}"
    );
    // The answer is the model's: a new run of the same matrix is served from the cache, scored alike.
    let o = run.run(&endpoint.url, "again", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(endpoint.chat_requests.load(Ordering::SeqCst), 4, "served from the cache");
    assert_eq!(
        std::fs::read(run.dir("again").join("trials.jsonl")).unwrap(),
        std::fs::read(run.dir("r").join("trials.jsonl")).unwrap()
    );
}

#[test]
fn a_transport_failure_stays_an_infrastructure_error_excluded_and_retried() {
    let endpoint = serve(|_| Reply::Hang);
    let run = Run::new();
    let o = run.run(&endpoint.url, "r", &["--max-attempts", "2", "--breaker", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = trials_with_transcripts(&run.dir("r"));
    for t in &trials {
        assert_eq!(t["stop_reason"], "backend_error", "{t}");
        assert!(t["error"].as_str().unwrap().contains("after 2 attempt(s)"), "{t}");
        assert!(t["calls"].as_array().unwrap().is_empty());
    }
    assert_eq!(endpoint.chat_requests.load(Ordering::SeqCst), 2 * trials.len() as u64, "retried");
    for row in summary_rows(&run.dir("r")) {
        assert_eq!(
            (
                row["n"].as_str(),
                row["infra_errors"].as_str(),
                row["excluded_infrastructure"].as_str()
            ),
            ("0", "4", "4"),
            "{row:?}"
        );
        assert_eq!(row["errors_malformed_call"], "0");
    }
}

#[test]
fn every_entry_of_the_table_is_the_models_malformed_call_and_the_same_status_without_it_is_not() {
    for entry in TABLE {
        let marker = entry.marker;
        let endpoint = match entry.signal {
            Signal::Http { high, .. } => {
                // The marker inside the server's usual error shape, at the highest status the entry covers.
                let body = json!({"error": {"message": format!("{marker}: the model wrote {{\"city\": \"Pa"), "type": "server_error"}}).to_string();
                serve(move |_| Reply::Json(high, body.clone()))
            }
            Signal::FinishReason => {
                serve(move |_| completion(json!({"role": "assistant", "content": null}), marker))
            }
        };
        let run = Run::new();
        let o = run.run(&endpoint.url, "r", &[]);
        assert!(o.status.success(), "{marker}: {}", stderr(&o));
        assert_all_model_malformed(&run, "r", marker);
        assert_eq!(endpoint.chat_requests.load(Ordering::SeqCst), 4, "{marker}: never retried");
    }
    // The statuses of the table, without a marker: infrastructure errors, retried, excluded.
    for status in [400, 500] {
        let endpoint = serve(move |_| {
            Reply::Json(
                status,
                r#"{"error":{"message":"failed to load model","type":"server_error"}}"#.into(),
            )
        });
        let run = Run::new();
        let o = run.run(&endpoint.url, "r", &["--max-attempts", "2", "--breaker", "0"]);
        assert!(o.status.success(), "{}", stderr(&o));
        for t in trials_with_transcripts(&run.dir("r")) {
            assert_eq!(t["stop_reason"], "backend_error", "HTTP {status}: {t}");
            assert!(t["calls"].as_array().unwrap().is_empty());
        }
    }
}

#[test]
fn a_malformed_call_in_the_history_never_makes_the_next_request_fail() {
    // Like llama.cpp (`func_args_not_string`) and vLLM: a request whose history holds tool-call
    // arguments that are not JSON is rejected with the parse-error body. The model's first answer is a
    // call with arguments cut mid-string; the trial must score that call and go on to the answer.
    let endpoint = serve(|request| {
        let history_ok = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
            .all(|c| {
                let args = c["function"]["arguments"].as_str().unwrap();
                serde_json::from_str::<Value>(args).is_ok()
            });
        if !history_ok {
            return Reply::Json(500, LLAMA_BODY.into());
        }
        let answered = request["messages"].as_array().unwrap().iter().any(|m| m["role"] == "tool");
        if answered {
            return done();
        }
        let name = request["tools"][0]["function"]["name"].as_str().unwrap();
        let call = json!({"id": "c1", "type": "function", "function": {"name": name, "arguments": "{\"city\": \"Pa"}});
        completion(
            json!({"role": "assistant", "content": null, "tool_calls": [call]}),
            "tool_calls",
        )
    });
    let run = Run::new();
    let o = run.run(&endpoint.url, "r", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for t in trials_with_transcripts(&run.dir("r")) {
        assert!(t["error"].is_null(), "{t}");
        assert_eq!(
            (t["stop_reason"].as_str(), t["steps"].as_u64()),
            (Some("answered"), Some(2)),
            "{t}"
        );
        assert_eq!(t["calls"][0]["record"]["status"], "malformed", "{t}");
        assert!(
            t["calls"][0]["record"].get("server_parse_error").is_none(),
            "the server never failed: {t}"
        );
        // The transcript keeps what the model wrote.
        assert_eq!(
            t["transcript"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap()
                ["tool_calls"][0]["arguments"],
            "{\"city\": \"Pa"
        );
    }
    assert_eq!(
        endpoint.chat_requests.load(Ordering::SeqCst),
        8,
        "two requests per trial, none refused"
    );
}

#[test]
fn the_docs_table_lists_every_entry() {
    let page = std::fs::read_to_string(repo().join("docs/models.md")).unwrap();
    let section = page
        .split("### Serving-side parse failures")
        .nth(1)
        .expect("docs/models.md has the section");
    let section = section.split("\n#").next().unwrap();
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with('|')).collect();
    for e in TABLE {
        let signal = match e.signal {
            Signal::Http { low, high } if low == high => format!("HTTP {low}"),
            Signal::Http { low, high } => format!("HTTP {low}–{high}"),
            Signal::FinishReason => "finish reason".to_string(),
        };
        assert!(
            rows.iter().any(|r| r.contains(&format!("`{}`", e.marker))
                && r.contains(&signal)
                && r.contains(e.server.split(' ').next().unwrap())),
            "docs/models.md's table has no row for {} {signal} `{}`",
            e.server,
            e.marker
        );
    }
    assert_eq!(rows.len(), TABLE.len() + 2, "a header, its rule and one row per entry");
}

#[test]
fn excluded_trials_are_shown_next_to_n_everywhere_and_gated() {
    // One task of four (the Oslo forecast) never gets an answer: a quarter of the cell is in no rate.
    let endpoint = serve(|request| {
        let asks_oslo = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains("Oslo")));
        if asks_oslo { Reply::Hang } else { done() }
    });
    let run = Run::new();
    let o = run.run(&endpoint.url, "r", &["--max-attempts", "1", "--breaker", "0"]);
    assert!(o.status.success(), "no gate asked for, none applies: {}", stderr(&o));
    // The printed table: the excluded trials, their share and why, next to n; and what that means.
    let printed = stdout(&o);
    let header = printed.lines().find(|l| l.starts_with("dataset")).unwrap();
    let row = printed.lines().find(|l| l.starts_with("ds ")).unwrap();
    assert!(header.split_whitespace().collect::<Vec<_>>()[4..6] == ["n", "excluded"], "{header}");
    assert!(row.contains(" 1 (25.0%: 1 infra) "), "{printed}");
    assert!(printed.contains("infra: the endpoint or harness failed"), "{printed}");
    let dir = run.dir("r");
    let cell = &summary_rows(&dir)[0];
    assert_eq!((cell["n"].as_str(), cell["infra_errors"].as_str()), ("3", "1"));
    assert_eq!(
        (
            cell["excluded_infrastructure"].as_str(),
            cell["excluded_provider_limit"].as_str(),
            cell["excluded_share"].as_str()
        ),
        ("1", "0", "0.250000")
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("m · good · flat on ds: 1 (25.0%: 1 infra)"),
        "the HTML headline names the cell's excluded trials"
    );
    assert!(
        html.contains("n 2, excluded 1 (25.0%: 1 infra)"),
        "and the chart's group says it next to n"
    );
    // The gate, around the cell's 25 %: at and above it passes, below it fails with exit 100.
    let report = |gates: &[&str]| {
        let mut args = vec!["report", "out/r"];
        args.extend_from_slice(gates);
        toolpick(&args, run.dir.path())
    };
    for (gates, code) in [
        (&["--max-excluded", "25"][..], 0),
        (&["--max-excluded", "100"], 0),
        (&["--max-excluded", "24.9"], 100),
        (&["--max-excluded", "0"], 100),
        // Another gate brings the default of 10 % with it …
        (&["--min-pass-rate", "0"], 100),
        // … unless it is raised or turned off.
        (&["--min-pass-rate", "0", "--max-excluded", "100"], 0),
        (&["--min-pass-rate", "0", "--max-excluded", "30"], 0),
        // Pooled over the gated cells, and only over those.
        (&["--max-excluded", "20", "--gate-scope", "overall"], 100),
    ] {
        let o = report(gates);
        assert_eq!(o.status.code(), Some(code), "{gates:?}: {}{}", stdout(&o), stderr(&o));
        if code == 100 {
            assert!(
                stdout(&o).contains("gate --max-excluded")
                    && stderr(&o).contains(
                        "1 of 4 trials in no rate (1 infrastructure, 0 provider limit): 25.0 %"
                    ),
                "{gates:?}: {}",
                stderr(&o)
            );
        }
        if gates == ["--min-pass-rate", "0"] {
            assert!(
                stderr(&o).contains("the default when another gate is checked"),
                "{}",
                stderr(&o)
            );
        }
    }
    // A threshold outside 0–100 is refused before anything is done, naming the flag.
    for bad in ["--max-excluded=101", "--max-excluded=-1", "--max-excluded=NaN"] {
        let o = report(&[bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains("--max-excluded"), "{}", stderr(&o));
    }
}
