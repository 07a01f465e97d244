//! Preflight: every path- and name-valued setting is checked before any request or file.
//!
//! Generated cases: each output-file flag (`--history`, `--step-summary`) × {missing directory, is a
//! directory, unwritable directory}, each output-directory flag (`--out`, `--cache-dir`) × {is a file,
//! under a file, unwritable}, `--baseline` × {missing, a file, a directory that is no run}, the judge's
//! prompt directory × {missing, a file, a misnamed template, an unknown placeholder}, unknown names
//! (`--execute`, `--judge-method`, `[judge.methods]`), an endpoint given as the judge's model, and the
//! numeric limits — on `run` against a counting mock endpoint: each exits 2 with one line naming the
//! flag, the directory is exactly as it was (names, sizes, modification times) and the endpoint got no
//! request (`GET /stats`). `report`, `merge` and `compare` get the path cases too, and leave the run
//! they were given untouched.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use toolpick::mock::{self, MockServer};

struct Mock {
    rt: tokio::runtime::Runtime,
    server: MockServer,
}

impl Mock {
    fn new() -> Mock {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server =
            rt.block_on(mock::spawn("127.0.0.1:0".parse().unwrap(), Default::default())).unwrap();
        Mock { rt, server }
    }
    /// Requests received, as the endpoint reports them over HTTP.
    fn requests(&self) -> u64 {
        let url = format!("http://{}/stats", self.server.addr);
        let stats: serde_json::Value =
            self.rt.block_on(async { reqwest::get(url).await.unwrap().json().await.unwrap() });
        stats["requests"].as_u64().unwrap()
    }
}

/// Every file and directory under `dir`: size and modification time (of files: a directory's changes
/// when the preflight makes and removes its probe file in it, which is no output).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.path().symlink_metadata().unwrap();
            out.insert(
                e.path(),
                if m.is_dir() { (0, None) } else { (m.len(), Some(m.modified().unwrap())) },
            );
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out
}

/// A directory no file can be created in: a read-only one, or (as root, whom permission bits do not
/// stop) one of the kernel's.
fn unwritable_dir(tmp: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let ro = tmp.join("read-only");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), "").is_ok() {
        std::fs::remove_file(ro.join("probe")).unwrap();
        return PathBuf::from("/proc/self/fdinfo");
    }
    ro
}

struct Setup {
    tmp: tempfile::TempDir,
    mock: Mock,
    unwritable: PathBuf,
    /// A finished run (a valid baseline, a run to report on).
    run: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        write_small_catalog(&tmp.path().join("catalog"));
        std::fs::write(tmp.path().join("tasks.jsonl"), SMALL_DATASET).unwrap();
        std::fs::create_dir(tmp.path().join("a-dir")).unwrap();
        std::fs::create_dir(tmp.path().join("not-a-run")).unwrap();
        std::fs::write(tmp.path().join("a-file"), "x").unwrap();
        let prompts = tmp.path().join("misnamed-prompts");
        std::fs::create_dir(&prompts).unwrap();
        std::fs::write(prompts.join("claims.txt"), "Does {{answer}} state {{claim}}?").unwrap();
        let prompts = tmp.path().join("unknown-placeholder");
        std::fs::create_dir(&prompts).unwrap();
        std::fs::write(
            prompts.join("claim.txt"),
            "Does {{answer}} state {{claim}}? Reference: {{reference}}",
        )
        .unwrap();
        std::fs::write(
            tmp.path().join("exp.toml"),
            "[judge]\nmodel = \"mock\"\n[judge.methods]\ntaks = \"claims\"\n",
        )
        .unwrap();
        let o = toolpick(
            &argv(
                "run --catalog catalog --dataset tasks.jsonl --variants good --layouts flat \
                 --backends lexical --out runs --run-id base -q",
            ),
            tmp.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let unwritable = unwritable_dir(tmp.path());
        let run = tmp.path().join("runs/base");
        Setup { tmp, mock: Mock::new(), unwritable, run }
    }

    /// `run` against the mock endpoint, plus `extra`.
    fn run_args(&self, extra: &[String]) -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            "--catalog",
            "catalog",
            "--dataset",
            "tasks.jsonl",
            "--variants",
            "good",
            "--layouts",
            "flat",
            "--backends",
            "openai",
            "--model",
            "mock",
            "--run-id",
            "r",
            "-q",
            "--base-url",
        ]
        .map(String::from)
        .to_vec();
        args.push(self.mock.server.base_url());
        if !extra.iter().any(|a| a == "--out") {
            args.extend(["--out".to_string(), "out".to_string()]);
        }
        args.extend(extra.iter().cloned());
        args
    }

    /// `args` exits 2 with an error whose first line names `flag`, writes nothing and sends no request.
    fn refused(&self, args: &[String], flag: &str) {
        let before = snapshot(self.tmp.path());
        let requests = self.mock.requests();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = toolpick(&argv, self.tmp.path());
        let err = stderr(&o);
        let what = args.join(" ");
        assert_eq!(o.status.code(), Some(2), "{what}\nstdout: {}\nstderr: {err}", stdout(&o));
        assert!(
            err.starts_with("error: ") && err.lines().next().unwrap_or_default().contains(flag),
            "{what}: names {flag}: {err}"
        );
        assert_eq!(snapshot(self.tmp.path()), before, "{what}: nothing written");
        assert_eq!(self.mock.requests(), requests, "{what}: no request sent");
    }

    fn path(&self, p: &str) -> String {
        self.tmp.path().join(p).to_str().unwrap().to_string()
    }
}

/// Paths an output file cannot be written at: missing directory, a directory, an unwritable directory.
fn bad_output_files(s: &Setup) -> Vec<String> {
    vec![
        s.path("missing-dir/out.file"),
        s.path("a-dir"),
        s.unwritable.join("out.file").to_str().unwrap().to_string(),
        s.path("a-file/out.file"),
    ]
}

/// Paths an output directory cannot be made at: a file, under a file, unwritable.
fn bad_output_dirs(s: &Setup) -> Vec<String> {
    vec![
        s.path("a-file"),
        s.path("a-file/sub"),
        s.unwritable.join("sub").to_str().unwrap().to_string(),
    ]
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn run_refuses_every_bad_path_and_name_before_any_request_or_file() {
    let s = Setup::new();
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    for flag in ["--history", "--step-summary"] {
        for p in bad_output_files(&s) {
            cases.push((vec![flag.into(), p], flag));
        }
    }
    for flag in ["--out", "--cache-dir"] {
        for p in bad_output_dirs(&s) {
            cases.push((vec![flag.into(), p], flag));
        }
    }
    for p in [s.path("missing-run"), s.path("a-file"), s.path("not-a-run")] {
        cases.push((vec!["--baseline".into(), p], "--baseline"));
    }
    let judge = format!("mock@{}", s.mock.server.base_url());
    // The prompt directory is named by the flag; a file in it by its own path (claims.txt is misnamed,
    // claim.txt holds an unknown placeholder).
    for (p, named) in [
        (s.path("missing-prompts"), "--judge-prompts"),
        (s.path("a-file"), "--judge-prompts"),
        (s.path("misnamed-prompts"), "claims.txt"),
        (s.path("unknown-placeholder"), "{{reference}}"),
    ] {
        cases.push((vec!["--judge".into(), judge.clone(), "--judge-prompts".into(), p], named));
    }
    cases.push((
        vec!["--judge".into(), judge.clone(), "--judge-method".into(), "nosuch=claims".into()],
        "--judge-method",
    ));
    cases.push((vec!["--judge".into(), s.mock.server.base_url()], "--judge"));
    cases.push((
        vec![
            "--judge".into(),
            format!("{}@{}", s.mock.server.base_url(), s.mock.server.base_url()),
        ],
        "--judge",
    ));
    cases.push((strings(&["--config", "exp.toml"]), "judge.methods.taks"));
    cases.push((strings(&["--execute", "nosuch=live"]), "--execute"));
    cases.push((strings(&["--execute", "catalog=simulated,nosuch=live"]), "--execute"));
    cases.push((
        strings(&["--min-pass-rate", "50", "--gate-cells", "tasks/good/*"]),
        "--gate-cells",
    ));
    cases.push((strings(&["--gate-cells", "*"]), "--gate-cells"));
    cases.push((strings(&["--tag", "k=v"]), "--tag"));
    for (flag, value) in [
        ("--jobs", "257"),
        ("--jobs", "30000"),
        ("--trials", "1001"),
        ("--distractors", "1000001"),
        ("--judge-rounds", "101"),
    ] {
        cases.push((vec![flag.into(), value.into()], flag));
    }
    for (extra, flag) in &cases {
        s.refused(&s.run_args(extra), flag);
    }
    // The same run with nothing wrong runs and asks the endpoint (the checks above are not vacuous).
    let before = s.mock.requests();
    let argv = s.run_args(&[]);
    let o = toolpick(&argv.iter().map(String::as_str).collect::<Vec<_>>(), s.tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(s.mock.requests() > before);
}

#[test]
fn report_merge_and_compare_refuse_bad_paths_before_touching_anything() {
    let s = Setup::new();
    let run = s.run.to_str().unwrap().to_string();
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    for flag in ["--history", "--step-summary"] {
        for p in bad_output_files(&s) {
            cases.push((vec!["report".into(), run.clone(), flag.into(), p.clone()], flag));
            cases.push((
                vec![
                    "merge".into(),
                    "--out".into(),
                    s.path("merged"),
                    run.clone(),
                    flag.into(),
                    p.clone(),
                ],
                flag,
            ));
            if flag == "--step-summary" {
                cases
                    .push((vec!["compare".into(), run.clone(), run.clone(), flag.into(), p], flag));
            }
        }
    }
    for p in [s.path("missing-run"), s.path("a-file"), s.path("not-a-run")] {
        cases.push((
            vec!["report".into(), run.clone(), "--baseline".into(), p.clone()],
            "--baseline",
        ));
        cases.push((
            vec![
                "merge".into(),
                "--out".into(),
                s.path("merged"),
                run.clone(),
                "--baseline".into(),
                p.clone(),
            ],
            "--baseline",
        ));
        cases.push((vec!["report".into(), p.clone()], "<run-dir>"));
        cases.push((vec!["compare".into(), p.clone(), run.clone()], "<baseline-run>"));
        cases.push((vec!["compare".into(), run.clone(), p], "<run>"));
    }
    for p in bad_output_dirs(&s) {
        cases.push((vec!["merge".into(), "--out".into(), p.clone(), run.clone()], "--out"));
        cases.push((vec!["compare".into(), run.clone(), run.clone(), "--out".into(), p], "--out"));
    }
    cases.push((vec!["report".into(), run.clone(), "--retry-errors".into()], "--retry-errors"));
    cases.push((
        vec![
            "report".into(),
            run.clone(),
            "--judge".into(),
            format!("mock@{}", s.mock.server.base_url()),
            "--judge-method".into(),
            "nosuch=claims".into(),
        ],
        "--judge-method",
    ));
    for (args, flag) in &cases {
        s.refused(args, flag);
    }
}

#[test]
fn validate_checks_a_catalog_alone_and_says_ok_only_when_nothing_is_wrong() {
    let s = Setup::new();
    let o = toolpick(&["validate", "--catalog", "catalog"], s.tmp.path());
    assert!(
        o.status.success() && stdout(&o).starts_with("ok: catalog"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    // A dataset that names a tool the catalog lacks: problems, and no `ok:`.
    std::fs::write(
        s.tmp.path().join("bad.jsonl"),
        SMALL_DATASET.replace("get_forecast", "get_forcast"),
    )
    .unwrap();
    let o = toolpick(&["validate", "--catalog", "catalog", "--dataset", "bad.jsonl"], s.tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stdout(&o).contains("ok:"), "{}", stdout(&o));
    // A broken catalog alone: its problem, exit 2.
    std::fs::write(s.tmp.path().join("catalog/broken.json"), "{").unwrap();
    let o = toolpick(&["validate", "--catalog", "catalog"], s.tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("broken.json") && !stdout(&o).contains("ok:"), "{}", stderr(&o));
}

#[test]
fn cache_stats_tells_a_file_and_a_missing_directory_from_an_empty_cache() {
    let s = Setup::new();
    let o = toolpick(&["cache", "stats", "--cache-dir", "a-file"], s.tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--cache-dir") && stderr(&o).contains("a-file"), "{}", stderr(&o));
    let o = toolpick(&["cache", "stats", "--cache-dir", "missing"], s.tmp.path());
    assert!(o.status.success() && stdout(&o).contains("does not exist"), "{}", stdout(&o));
    let o = toolpick(&["cache", "stats", "--cache-dir", "a-dir"], s.tmp.path());
    assert!(o.status.success() && stdout(&o).contains("0 entries"), "{}", stdout(&o));
}

#[test]
fn mcp_commands_name_their_own_flags_and_the_sessions_file() {
    let s = Setup::new();
    // `mcp serve` has --variant and --layout (singular): the run machinery's --variants must not show.
    for (args, flag) in [
        (vec!["--variant", "nosuch"], "--variant:"),
        (vec!["--variant", "op:nosuch"], "--variant:"),
        (vec!["--layout", "nosuch"], "--layout:"),
        (vec!["--sessions", "sessions.jsonl", "--variant", "bad2"], "--variant:"),
    ] {
        let mut argv = vec!["mcp", "serve", "--catalog", "catalog", "--dataset", "tasks.jsonl"];
        argv.extend(args);
        let o = toolpick(&argv, s.tmp.path());
        let first = stderr(&o).lines().next().unwrap_or_default().to_string();
        assert_eq!(o.status.code(), Some(2), "{argv:?}: {}", stderr(&o));
        assert!(first.starts_with(&format!("error: {flag}")), "{argv:?}: {first}");
    }
    // `mcp collect` reads its settings from the sessions file: a task the dataset lacks, or an unknown
    // variant or layout, names the file and the field, never `--tasks`, `--variants` or `--layouts`.
    let root = s.tmp.path().display().to_string();
    for (task, variant, layout, field) in [
        ("nosuch", "good", "flat", "task"),
        ("w1", "goood", "flat", "variant"),
        ("w1", "good", "flatt", "layout"),
    ] {
        let header = serde_json::json!({"toolpick_sessions": 1, "catalog": format!("{root}/catalog"), "dataset": format!("{root}/tasks.jsonl"), "variant": variant, "layout": layout, "seed": 0});
        let session = serde_json::json!({"session": 1, "task": task, "client": "x"});
        std::fs::write(s.tmp.path().join("s.jsonl"), format!("{header}\n{session}\n")).unwrap();
        let o = toolpick(&["mcp", "collect", "s.jsonl", "--out", "collected"], s.tmp.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{field}: {err}");
        assert!(
            err.starts_with("error: s.jsonl") && err.contains(&format!("field `{field}`")),
            "{field}: {err}"
        );
        assert!(
            !err.contains("--tasks") && !err.contains("--variants") && !err.contains("--layouts"),
            "{field}: {err}"
        );
        assert!(!s.tmp.path().join("collected").exists(), "{field}: nothing written");
    }
}
