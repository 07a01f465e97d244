//! Secrets never reach an output (issue 12 part 3, issue 31): endpoints started by the test echo the
//! API key they were sent — in error bodies, headers, a `Basic` credential, the assistant's text, in
//! every encoding (`toolpick mock-endpoint --echo-key`) — and no file the run writes (trials, reports,
//! Parquet cells, the response cache, run.json), nor stdout/stderr, may contain the key in any
//! encoding. Keys inside URLs are never printed or stored, and a key given where a variable name
//! belongs is refused (exit 2) without being repeated.
//!
//! The cases are generated: key shapes (with `/`, `+`, `=`, hex-looking, long random) × every
//! encoding, × every way a URL or a variable name reaches toolpick. The encodings searched for are
//! written here, each its plain way, independently of the redactor.

mod common;
use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use toolpick::mock::{self, Fault, MockConfig};

const SECRET: &str = "sk-proj-R3dact1on-T3st-5e1f0a9b7c";

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// Key shapes: the classic `sk-`, with `/`, with `+` and `=`, hex-looking, and long random ones over
/// an alphabet with every URL- and JSON-sensitive character a key uses.
fn key_shapes() -> Vec<String> {
    let mut keys: Vec<String> = [
        SECRET,
        "sk-live-ab/cd/ef/0123456789xyz",
        "Ab+Cd+Ef0123456789xyz+/==",
        "9f8e7d6c5b4a392817060f1e2d3c4b5a",
    ]
    .map(String::from)
    .to_vec();
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/+=.";
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for len in [40, 96] {
        keys.push(
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    alphabet[(x % alphabet.len() as u64) as usize] as char
                })
                .collect(),
        );
    }
    keys
}

/// What must never be found for `key`: the key in every encoding (as is, `\/`-escaped once and
/// twice, `\u`-escaped once and twice, hex both cases, percent-encoded every byte both cases and
/// URL-encoded, HTML references), and 12-character windows of its base64 forms at every alignment
/// (a fragment that long identifies the key).
fn needles(key: &str) -> Vec<String> {
    let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    let percent: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    let url: String = key
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02x}")
            }
        })
        .collect();
    let unicode: String = key.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
    let html: String =
        key.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_string()
                } else {
                    format!("&#x{:X};", c as u32)
                }
            })
            .collect();
    let mut out = vec![
        key.to_string(),
        hex.clone(),
        hex.to_uppercase(),
        percent.clone(),
        percent.to_lowercase(),
        unicode.clone(),
        unicode.replace('\\', "\\\\"),
    ];
    if key.contains('/') {
        out.extend([key.replace('/', "\\/"), key.replace('/', "\\\\/")]);
    }
    if url != key {
        // The escapes' hex digits in either case, the key's own characters as they are.
        let upper: String = key
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        out.extend([url, upper]);
    }
    if html != key {
        out.push(html);
    }
    for prefix in ["", "u", "us", "user:", "Bearer "] {
        let enc = base64(format!("{prefix}{key}").as_bytes());
        if enc.len() < 28 {
            continue; // too short for a window that mixes with nothing
        }
        // Skip the group mixing prefix and key, keep a window from the middle.
        let mid = &enc[8..20];
        out.extend([mid.to_string(), mid.replace('+', "-").replace('/', "_")]);
    }
    out
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A file's text as it can be searched: its bytes, and for Parquet (compressed) every cell.
fn searchable(f: &Path) -> String {
    let mut text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
    if f.extension().is_some_and(|e| e == "parquet") {
        use polars::prelude::*;
        use polars_io::SerReader;
        let df = polars_io::parquet::read::ParquetReader::new(std::fs::File::open(f).unwrap())
            .finish()
            .unwrap();
        for col in df.columns() {
            let s = col.as_materialized_series();
            for i in 0..s.len() {
                if let Ok(AnyValue::String(v)) = s.get(i) {
                    text.push_str(v);
                    text.push('\n');
                } else if let Ok(AnyValue::StringOwned(v)) = s.get(i) {
                    text.push_str(v.as_str());
                    text.push('\n');
                }
            }
        }
    }
    text
}

/// Every file under `dir` and both output streams are free of every needle of every key; returns
/// how many files were checked and how many mention `[REDACTED]`.
fn assert_clean(dir: &Path, outputs: &[&Output], keys: &[&str]) -> (usize, usize) {
    let needles: Vec<String> = keys.iter().flat_map(|k| needles(k)).collect();
    let (mut checked, mut marked) = (0, 0);
    for f in files(dir) {
        let text = searchable(&f);
        for n in &needles {
            assert!(!text.contains(n.as_str()), "`{n}` (a form of a key) found in {}", f.display());
        }
        checked += 1;
        marked += usize::from(text.contains("[REDACTED]"));
    }
    for o in outputs {
        for n in &needles {
            assert!(
                !stdout(o).contains(n.as_str()) && !stderr(o).contains(n.as_str()),
                "`{n}` printed:\n{}\n{}",
                stdout(o),
                stderr(o)
            );
        }
    }
    (checked, marked)
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("cat"));
    std::fs::write(dir.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    dir
}

fn run_with_key(dir: &Path, url: &str, run_id: &str, key: &str, extra: &[&str]) -> Output {
    let mut args = argv_with(
        "run --catalog cat --dataset ds.jsonl --backends openai --model mock --base-url {} \
         --out out --run-id {} --api-key-env REDACTION_TEST_KEY --max-attempts 1 --breaker 0 \
         --cache-dir cache",
        &[url, run_id],
    );
    args.extend_from_slice(extra);
    std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(&args)
        .env("REDACTION_TEST_KEY", key)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn run(dir: &Path, url: &str, run_id: &str, extra: &[&str]) -> Output {
    run_with_key(dir, url, run_id, SECRET, extra)
}

/// Generated: every key shape, echoed in every encoding by the mock endpoint (401 bodies, headers,
/// answers, the model list), through a run, a second run served from the cache, and `report`.
#[test]
fn a_key_echoed_in_every_encoding_reaches_no_output_file_cache_or_stream() {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let keys = key_shapes();
    std::thread::scope(|scope| {
        for key in &keys {
            let rt = &rt;
            scope.spawn(move || {
                // Every third chat request is a 401 whose body quotes the key; every response carries
                // the key in two headers, and every answer without a tool call quotes it.
                let config = MockConfig { require_key: Some(key.clone()), echo_key: true, faults: vec![(Fault::Unauthorized, 3)], ..Default::default() };
                let server = rt.block_on(mock::spawn("127.0.0.1:0".parse().unwrap(), config)).unwrap();
                let dir = scratch();
                let o = run_with_key(dir.path(), &server.base_url(), "r", key, &["--judge", &format!("mock@{}", server.base_url()), "--judge-api-key-env", "REDACTION_TEST_KEY"]);
                assert!(o.status.success(), "{key}: {}", stderr(&o));
                assert!(server.injected(Fault::Unauthorized) > 0, "the echoing 401s were served");
                // A second run is served from the cache, and `report` re-renders: still nothing.
                let again = run_with_key(dir.path(), &server.base_url(), "r2", key, &[]);
                assert!(again.status.success(), "{}", stderr(&again));
                let report = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick")).args(["report", "out/r"]).env("REDACTION_TEST_KEY", key).current_dir(dir.path()).output().unwrap();
                assert!(report.status.success(), "{}", stderr(&report));
                let (checked, marked) = assert_clean(dir.path(), &[&o, &again, &report], &[key]);
                // The echo happened and was caught: the 401s are recorded as errors with the key marked out.
                let trials = std::fs::read_to_string(dir.path().join("out/r/trials.jsonl")).unwrap();
                assert!(trials.contains("Incorrect API key provided: as is [REDACTED]; json-escaped [REDACTED] and [REDACTED]; escaped text [REDACTED]"), "{key}: the 401 body is kept, redacted");
                assert!(checked > 15, "only {checked} files checked");
                assert!(marked >= 3, "the redaction mark should show in trials, reports and the cache ({marked} files)");
                for name in ["trials.jsonl", "trials.csv", "trials.parquet", "junit.xml", "report.html", "transcripts.jsonl", "run.json", "summary.json"] {
                    assert!(dir.path().join("out/r").join(name).is_file(), "{name} was written and checked");
                }
            });
        }
    });
}

#[test]
fn a_key_written_with_json_escapes_or_percent_encoded_is_removed_too() {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // A hand-written endpoint: a valid chat completion whose text holds the key as `\u`-escaped JSON,
    // percent-encoded in a URL and in a Basic credential; `/models` answers so the preflight passes.
    let app = Router::new().fallback(|uri: axum::http::Uri, headers: HeaderMap| async move {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        let key = auth.trim_start_matches("Bearer ").to_string();
        if uri.path().ends_with("/models") {
            return (StatusCode::OK, r#"{"object":"list","data":[]}"#.to_string()).into_response();
        }
        let escaped: String = key.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
        let encoded: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
        let basic = base64(format!("me:{key}").as_bytes());
        let text = format!("key {escaped}; see https://x.test/?k={encoded}; Basic {basic}");
        let body = format!(
            r#"{{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{{"index":0,"message":{{"role":"assistant","content":"{text}"}},"finish_reason":"stop","logprobs":null}}],"usage":{{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}}}"#
        );
        (StatusCode::OK, [("content-type", "application/json")], body).into_response()
    });
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
    let dir = scratch();
    let o = run(dir.path(), &url, "r", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = std::fs::read_to_string(dir.path().join("out/r/trials.jsonl")).unwrap();
    assert!(
        trials.contains("key [REDACTED]; see https://x.test/?k=[REDACTED]; Basic "),
        "{}",
        &trials[..trials.len().min(2000)]
    );
    let (checked, _) = assert_clean(dir.path(), &[&o], &[SECRET]);
    assert!(checked > 10);
    // The percent-encoded form must not survive either (it is not a needle of `assert_clean`).
    let encoded: String = SECRET.bytes().map(|b| format!("%{b:02X}")).collect();
    for f in files(dir.path()) {
        assert!(
            !String::from_utf8_lossy(&std::fs::read(&f).unwrap()).contains(&encoded),
            "{}",
            f.display()
        );
    }
}

/// How a URL or a variable name reaches toolpick: a flag, a key of the experiment file, the
/// environment, the judge's flag and its table. `value` is put where that channel takes it.
#[derive(Clone, Copy, Debug)]
enum Channel {
    BaseUrlFlag,
    BaseUrlToml,
    BaseUrlEnv,
    JudgeFlag,
    JudgeToml,
}

/// Run toolpick with `value` given through `channel` (as a base URL, or with `key_env` as the name
/// of the key's variable), in a fresh directory; returns the output and whether `out` was created.
fn run_given(channel: Channel, url: &str, key_env: Option<&str>) -> (Output, bool) {
    let dir = scratch();
    let mut args: Vec<String> =
        ["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--out", "out", "--run-id", "r", "-q"]
            .map(String::from)
            .to_vec();
    let mut env: Vec<(&str, String)> = vec![];
    let model_toml = |extra: &str| format!("[[models]]\nmodel = \"mock\"\n{extra}");
    match channel {
        Channel::BaseUrlFlag => {
            args.extend([
                "--backends".into(),
                "openai".into(),
                "--model".into(),
                "mock".into(),
                "--base-url".into(),
                url.into(),
            ]);
            if let Some(k) = key_env {
                args.extend(["--api-key-env".into(), k.into()]);
            }
        }
        Channel::BaseUrlToml => {
            let key =
                key_env.map(|k| format!("api_key_env = {}\n", toml_string(k))).unwrap_or_default();
            std::fs::write(
                dir.path().join("exp.toml"),
                model_toml(&format!("base_url = {}\n{key}", toml_string(url))),
            )
            .unwrap();
            args.extend(["--config".into(), "exp.toml".into()]);
        }
        Channel::BaseUrlEnv => {
            args.extend(["--backends".into(), "openai".into(), "--model".into(), "mock".into()]);
            env.push(("OPENAI_BASE_URL", url.into()));
        }
        Channel::JudgeFlag => {
            args.extend([
                "--backends".into(),
                "lexical".into(),
                "--judge".into(),
                format!("mock@{url}"),
            ]);
            if let Some(k) = key_env {
                args.extend(["--judge-api-key-env".into(), k.into()]);
            }
        }
        Channel::JudgeToml => {
            let key =
                key_env.map(|k| format!("api_key_env = {}\n", toml_string(k))).unwrap_or_default();
            std::fs::write(
                dir.path().join("exp.toml"),
                format!("[judge]\nmodel = \"mock\"\nbase_url = {}\n{key}", toml_string(url)),
            )
            .unwrap();
            args.extend([
                "--config".into(),
                "exp.toml".into(),
                "--backends".into(),
                "lexical".into(),
            ]);
        }
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(&args)
        .envs(env)
        .env_remove("OPENAI_API_KEY")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let wrote = dir.path().join("out").exists();
    (o, wrote)
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Generated: a key in a URL's userinfo, in a query value (named like a key, or only shaped like
/// one) or in a fragment × every way a URL is given × every reason to reject it (a query, no host,
/// another scheme): exit 2, nothing written, and the key in no encoding on either stream.
#[test]
fn a_key_in_a_rejected_url_is_never_printed() {
    let channels = [
        Channel::BaseUrlFlag,
        Channel::BaseUrlToml,
        Channel::BaseUrlEnv,
        Channel::JudgeFlag,
        Channel::JudgeToml,
    ];
    let mut cases = Vec::new();
    for key in ["sk-proj-R3dact1on-T3st-5e1f0a9b7c", "Ab+Cd/Ef0123456789xyzQ"] {
        let enc: String = key
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'-' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        for carried in [
            format!("http://user:{enc}@127.0.0.1:9/v1?x=1"),
            format!("http://127.0.0.1:9/v1?api_key={enc}"),
            format!("http://127.0.0.1:9/v1?q={enc}"),
            format!("http://127.0.0.1:9/v1#access_token={enc}"),
            format!("http://user:{enc}@/v1"),
            format!("ftp://me:{enc}@127.0.0.1:9/v1"),
            format!("http:///{enc}@v1"),
        ] {
            for channel in channels {
                cases.push((key, carried.clone(), channel));
            }
        }
    }
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for chunk in cases.chunks(cases.len().div_ceil(4)) {
            let failures = &failures;
            scope.spawn(move || {
                for (key, url, channel) in chunk {
                    let (o, wrote) = run_given(*channel, url, None);
                    let err = stderr(&o);
                    let leaked: Vec<String> = needles(key)
                        .into_iter()
                        .filter(|n| err.contains(n.as_str()) || stdout(&o).contains(n.as_str()))
                        .collect();
                    if o.status.code() != Some(2)
                        || wrote
                        || !leaked.is_empty()
                        || !err.contains("[REDACTED]")
                    {
                        failures.lock().unwrap().push(format!(
                            "{channel:?} {url}: exit {:?}, wrote {wrote}, leaked {leaked:?}: {err}",
                            o.status.code()
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// `http:///v1` (no host: the URL parser would read `v1` as one) is refused wherever a URL is given.
#[test]
fn a_url_without_a_host_is_refused() {
    for channel in [
        Channel::BaseUrlFlag,
        Channel::BaseUrlToml,
        Channel::BaseUrlEnv,
        Channel::JudgeFlag,
        Channel::JudgeToml,
    ] {
        for url in ["http:///v1", "https:///", "http://:8080/v1"] {
            let (o, wrote) = run_given(channel, url, None);
            assert_eq!(o.status.code(), Some(2), "{channel:?} {url}: {}", stderr(&o));
            assert!(
                (stderr(&o).contains("has no host") || stderr(&o).contains("empty host")) && !wrote,
                "{channel:?} {url}: {}",
                stderr(&o)
            );
        }
    }
}

/// Generated: every key shape given where the name of its variable belongs (`--api-key-env`, the
/// model's `api_key_env`, `--judge-api-key-env`, the judge's `api_key_env`) is refused with exit 2
/// before anything is written, saying it looks like a key and never repeating it.
#[test]
fn a_key_given_where_a_variable_name_belongs_is_refused_without_being_repeated() {
    let url = "http://127.0.0.1:9/v1";
    for key in key_shapes()
        .iter()
        .map(String::as_str)
        .chain(["ghp_0123456789abcdefABCDEF0123", "sk-short-1"])
    {
        for channel in
            [Channel::BaseUrlFlag, Channel::BaseUrlToml, Channel::JudgeFlag, Channel::JudgeToml]
        {
            let (o, wrote) = run_given(channel, url, Some(key));
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{channel:?} {key}: {err}");
            assert!(
                err.contains("this looks like a key; give the name of the variable that holds it")
                    && !wrote,
                "{channel:?} {key}: {err}"
            );
            let leaked: Vec<String> =
                needles(key).into_iter().filter(|n| err.contains(n.as_str())).collect();
            assert!(leaked.is_empty(), "{channel:?}: {leaked:?} in {err}");
        }
    }
    // A variable name is accepted (the run then fails its preflight against the closed port: exit 1).
    let (o, _) = run_given(Channel::BaseUrlFlag, url, Some("MY_PROVIDER_API_KEY"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// A base URL with credentials in its userinfo works, and they are stored nowhere: run.json,
/// summary.json, report.html and every other file show `[REDACTED]@host`.
#[test]
fn credentials_in_an_accepted_url_are_stored_and_printed_nowhere() {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server =
        rt.block_on(mock::spawn("127.0.0.1:0".parse().unwrap(), MockConfig::default())).unwrap();
    let password = "s3cr3t-Pa55w0rd/xyz";
    let url = format!("http://someone:{}@{}/v1", password.replace('/', "%2F"), server.addr);
    let dir = scratch();
    let judge = format!("mock@{url}");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args([
            "run",
            "--catalog",
            "cat",
            "--dataset",
            "ds.jsonl",
            "--backends",
            "lexical,openai",
            "--model",
            "mock",
            "--base-url",
            &url,
            "--judge",
            &judge,
            "--out",
            "out",
            "--run-id",
            "r",
        ])
        .env_remove("OPENAI_API_KEY")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(server.requests() > 0, "the endpoint answered");
    assert_clean(dir.path(), &[&o], &[password, &format!("someone:{password}")]);
    let shown = format!("http://[REDACTED]@{}/v1", server.addr);
    for name in ["run.json", "summary.json", "report.html"] {
        let text = std::fs::read_to_string(dir.path().join("out/r").join(name)).unwrap();
        assert!(text.contains(&shown), "{name} shows the endpoint as {shown}");
        assert!(!text.contains("someone"), "{name}");
    }
}
