//! The writer discipline end to end (issue 31, "nothing lost"): the real binary, generated cases of
//! each class of data loss it fixed.
//!
//! - Every run id that would break the output layout (`latest`, `.`, `..`, empty, a path separator, a
//!   leading dot, a control character) is refused with exit 2, from each place a run id comes from,
//!   before anything is written.
//! - Reports of one run started together all succeed and leave exactly what one report leaves, from a
//!   compacted and from an uncompacted trial file, round after round; a report that waits longer than
//!   its patience for another process refuses with exit 2 naming the directory.
//! - `lint -o` onto a directory or into a missing one leaves no file behind.
//! - A judge pass killed after some verdicts keeps them: the next pass asks the endpoint only for the
//!   rest (counted on the mock endpoint), and its result equals an uninterrupted pass's.
#![cfg(unix)]

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    cmd.env_remove("TOOLPICK_TEST_KILL_AT").env_remove("TOOLPICK_LOCK_WAIT_S");
    cmd
}

fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    bin().args(args).current_dir(dir).output().expect("toolpick runs")
}

/// Every file of a directory by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap_or_default())
        })
        .collect()
}

/// Names of intermediate files (temporary, compaction, junit body) in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    files(dir)
        .into_keys()
        .filter(|n| {
            n.contains(".tmp-")
                || n.contains(".compact")
                || n.contains(".body")
                || n.contains(".link-")
        })
        .collect()
}

/// Every form of a run id that breaks the layout under the output directory.
const RESERVED: [&str; 12] = [
    "latest",
    ".",
    "..",
    "",
    ".hidden",
    ".cache",
    "a/b",
    "../escape",
    "/abs",
    "x/..",
    "a\\b",
    "tab\tid",
];

#[test]
fn every_reserved_run_id_is_refused_with_exit_2_from_every_source_before_anything_is_written() {
    let tmp = small_world();
    let dir = tmp.path();
    std::fs::write(dir.join("s.jsonl"), "").unwrap();
    for id in RESERVED {
        let shown = id.escape_debug().to_string();
        let out = |n: &str| format!("out-{n}");
        // The flag of `run`.
        let args = argv("run --catalog cat --dataset ds.jsonl --backends oracle -q");
        let o = run_in(dir, &[args, vec!["--out", &out("flag"), "--run-id", id]].concat());
        assert_eq!(o.status.code(), Some(2), "run --run-id {shown}: {}", stderr(&o));
        assert!(stderr(&o).contains("--run-id"), "run --run-id {shown}: {}", stderr(&o));
        // The experiment file's key: the error names the file and the key.
        let toml =
            format!("run_id = {}\nout = \"{}\"\n", serde_json::to_string(id).unwrap(), out("toml"));
        std::fs::write(dir.join("exp.toml"), toml).unwrap();
        let o = run_in(
            dir,
            &argv("run --config exp.toml --catalog cat --dataset ds.jsonl --backends oracle -q"),
        );
        assert_eq!(o.status.code(), Some(2), "run_id = {shown}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("exp.toml") && stderr(&o).contains("run_id"),
            "run_id = {shown}: {}",
            stderr(&o)
        );
        // `mcp collect` and `mcp serve --out`.
        let o =
            run_in(dir, &["mcp", "collect", "s.jsonl", "--out", &out("collect"), "--run-id", id]);
        assert_eq!(o.status.code(), Some(2), "mcp collect --run-id {shown}: {}", stderr(&o));
        assert!(stderr(&o).contains("--run-id"), "mcp collect --run-id {shown}: {}", stderr(&o));
        let args = argv("mcp serve --catalog cat --dataset ds.jsonl --task w1");
        let o = run_in(dir, &[args, vec!["--out", &out("serve"), "--run-id", id]].concat());
        assert_eq!(o.status.code(), Some(2), "mcp serve --run-id {shown}: {}", stderr(&o));
        assert!(stderr(&o).contains("--run-id"), "mcp serve --run-id {shown}: {}", stderr(&o));
        for source in ["flag", "toml", "collect", "serve"] {
            assert!(
                !dir.join(out(source)).exists(),
                "{source} with run id {shown} wrote {}",
                out(source)
            );
        }
        assert!(!dir.join("escape").exists() && !Path::new("/abs").exists());
    }
    // A plain id: the run is written and `latest` points at it, with its report.
    let args = "run --catalog cat --dataset ds.jsonl --backends oracle --out out -q";
    let o = run_in(dir, &[argv(args), vec!["--run-id", "latest-but-plain"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_link(dir.join("out/latest")).unwrap(), Path::new("latest-but-plain"));
    assert!(dir.join("out/latest/report.html").is_file());
    assert!(leftovers(&dir.join("out")).is_empty(), "{:?}", leftovers(&dir.join("out")));
}

const MATRIX: &str = "--variants good,bad --layouts flat,progressive --backends lexical,random,oracle \
                      --trials 8 --seed 5 --out out";

/// The trial and transcript files in another order (as a run killed before compacting leaves them).
fn uncompact(run: &Path) {
    for name in ["trials.jsonl", "transcripts.jsonl"] {
        let text = std::fs::read_to_string(run.join(name)).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.reverse();
        std::fs::write(run.join(name), lines.join("\n") + "\n").unwrap();
    }
}

#[test]
fn reports_of_one_run_started_together_all_succeed_and_leave_what_one_report_leaves() {
    let tmp = small_world();
    let dir = tmp.path();
    let mut args = argv("run --catalog cat --dataset ds.jsonl --run-id r -q");
    args.extend(argv(MATRIX));
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = dir.join("out/r");
    // What one report of the run leaves (run.json holds timestamps; the report does not rewrite it).
    let o = run_in(dir, &["report", "out/r"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = files(&run);
    assert!(want.len() >= 14, "{:?}", want.keys());
    for round in 0..6 {
        let compacted = round % 2 == 0;
        if !compacted {
            uncompact(&run);
        }
        let reports: Vec<std::process::Child> = (0..3)
            .map(|_| {
                bin()
                    .args(["report", "out/r"])
                    .current_dir(dir)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (i, child) in reports.into_iter().enumerate() {
            let o = child.wait_with_output().unwrap();
            assert!(
                o.status.success(),
                "round {round} (compacted: {compacted}), report {i}: {:?} {}",
                o.status,
                stderr(&o)
            );
        }
        let got = files(&run);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "round {round}: other files than one report leaves"
        );
        for (name, bytes) in &want {
            assert!(
                got[name] == *bytes,
                "round {round} (compacted: {compacted}): {name} differs from one report's"
            );
        }
    }
}

#[test]
fn a_report_waits_for_another_holder_and_after_its_patience_refuses_with_exit_2_naming_the_directory()
 {
    let tmp = small_world();
    let dir = tmp.path();
    let o = run_in(
        dir,
        &argv("run --catalog cat --dataset ds.jsonl --backends oracle --out out --run-id r -q"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = dir.join("out/r");
    let before = files(&run);
    // This test process plays another report of the run: it holds the lock, not as a writer of trials.
    let held = toolpick::record::guard::DirLock::for_report_within(&run, std::time::Duration::ZERO)
        .unwrap();
    assert!(held.held());
    let o = bin()
        .args(["report", "out/r"])
        .env("TOOLPICK_LOCK_WAIT_S", "1")
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error: out/r: ") && stderr(&o).contains("TOOLPICK_LOCK_WAIT_S"),
        "{}",
        stderr(&o)
    );
    assert!(files(&run) == before, "a refused report wrote into the run");
    // Released while a report waits: the report goes on once it is free.
    let waiting = bin()
        .args(["report", "out/r"])
        .current_dir(dir)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    drop(held);
    let o = waiting.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("waiting for it"), "{}", stderr(&o));
}

#[test]
fn lint_output_onto_a_directory_or_into_a_missing_one_leaves_no_file_behind() {
    for format in ["text", "json", "sarif"] {
        let tmp = small_world();
        let dir = tmp.path();
        std::fs::create_dir(dir.join("outdir")).unwrap();
        let before = files(dir).into_keys().collect::<BTreeSet<_>>();
        for target in ["outdir", "missing/lint.out", "outdir/"] {
            let o = run_in(
                dir,
                &["lint", "cat", "--format", format, "--fail-on", "never", "-o", target],
            );
            assert!(!o.status.success(), "{format} -o {target}: wrote somewhere");
            let first = target.split('/').next().unwrap();
            assert!(
                stderr(&o).contains(first),
                "{format} -o {target}: the error names the target: {}",
                stderr(&o)
            );
            assert_eq!(
                files(dir).into_keys().collect::<BTreeSet<_>>(),
                before,
                "{format} -o {target}: a file was left"
            );
            assert!(
                std::fs::read_dir(dir.join("outdir")).unwrap().next().is_none(),
                "{format} -o {target}: a file was left in outdir"
            );
        }
        // A file name works and leaves only the file.
        let o = run_in(
            dir,
            &["lint", "cat", "--format", format, "--fail-on", "never", "-o", "outdir/lint.out"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(files(&dir.join("outdir")).into_keys().collect::<Vec<_>>(), ["lint.out"]);
    }
}

struct Mock {
    _rt: tokio::runtime::Runtime,
    server: toolpick::mock::MockServer,
}

fn mock() -> Mock {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = rt
        .block_on(toolpick::mock::spawn("127.0.0.1:0".parse().unwrap(), Default::default()))
        .unwrap();
    Mock { _rt: rt, server }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (name, bytes) in files(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
}

/// The complete judgements of a run's file.
fn judgements(run: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(run.join("judgements.jsonl")).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The requests a judgement took at least, read from its record: nothing when it was decided without
/// asking; else per round the answer check, and the process check when the answer check was unsure;
/// per claim one question.
fn asked(j: &serde_json::Value) -> u64 {
    if !j["short_circuit"].is_null() {
        return 0;
    }
    let rounds = j["rounds"]
        .as_array()
        .map(|r| r.iter().map(|r| 1 + r.get("process_status").is_some() as u64).sum())
        .unwrap_or(0);
    rounds + j["claims"].as_array().map_or(0, |c| c.len() as u64)
}

#[test]
fn a_killed_judge_pass_keeps_its_verdicts_and_the_next_asks_only_for_the_rest() {
    let tmp = small_world();
    let dir = tmp.path();
    let o = run_in(
        dir,
        &argv(
            "run --catalog cat --dataset ds.jsonl --run-id j --no-cache -q --variants good,bad \
             --layouts flat,progressive --backends lexical --trials 3 --out out",
        ),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    copy_dir(&dir.join("out/j"), &dir.join("out/whole"));
    let judge = |m: &Mock| format!("mock-judge@{}", m.server.base_url());
    let judging = |run: &str, m: &Mock| -> Vec<String> {
        ["report", run, "--judge", &judge(m), "--no-cache", "--judge-concurrency", "1"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };

    // An uninterrupted pass: how many requests judging the run takes, and each judgement.
    let whole = mock();
    let o = bin().args(judging("out/whole", &whole)).current_dir(dir).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let full = whole.server.requests();
    let cost: BTreeMap<String, u64> = judgements(&dir.join("out/whole"))
        .iter()
        .map(|j| (j["trial_id"].as_str().unwrap().to_string(), asked(j)))
        .collect();
    assert!(
        cost.len() >= 24 && full >= cost.values().sum::<u64>(),
        "{} judgements, {full} requests",
        cost.len()
    );
    // The most one judgement asks (three rounds of the answer check and the process check): what a
    // kill may lose, the judgement in flight.
    let in_flight = 6;

    for kill_after in [1u64, 9, 17] {
        let run = dir.join(format!("out/k{kill_after}"));
        copy_dir(&dir.join("out/j"), &run);
        let m = mock();
        let o = bin()
            .args(judging(run.to_str().unwrap(), &m))
            .env("TOOLPICK_TEST_KILL_AT", format!("judge-append:{kill_after}"))
            .current_dir(dir)
            .output()
            .unwrap();
        assert_eq!(
            o.status.signal(),
            Some(9),
            "not killed after verdict {kill_after}: {:?} {}",
            o.status,
            stderr(&o)
        );
        let first = m.server.requests();
        let kept = judgements(&run);
        assert!(
            kept.len() as u64 >= kill_after,
            "verdict {kill_after} was appended before the kill, {} are in the file",
            kept.len()
        );
        let saved: u64 = kept.iter().map(|j| cost[j["trial_id"].as_str().unwrap()]).sum();
        assert!(
            saved > 0,
            "killed after {kill_after}: the kept verdicts asked nothing, so the case shows nothing"
        );
        assert!(
            first <= saved + in_flight,
            "killed after {kill_after}: {first} requests for {} kept verdicts worth {saved}",
            kept.len()
        );
        // A pass killed while writing a verdict: a torn last line, cut at a place of its own each time.
        let text = std::fs::read_to_string(run.join("judgements.jsonl")).unwrap();
        let last = text.lines().last().unwrap().as_bytes();
        let cut = last.len() * (kill_after as usize % 5 + 1) / 7;
        std::fs::write(run.join("judgements.jsonl"), [text.as_bytes(), &last[..cut]].concat())
            .unwrap();
        // Readers survive it.
        let o = run_in(dir, &["report", run.to_str().unwrap()]);
        assert!(o.status.success(), "a report after a killed judge pass: {}", stderr(&o));
        assert!(
            stderr(&o).contains("judgements.jsonl") && stderr(&o).contains("incomplete"),
            "{}",
            stderr(&o)
        );
        // The next pass asks only for the verdicts the killed one had not written.
        let o = bin().args(judging(run.to_str().unwrap(), &m)).current_dir(dir).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let resumed = m.server.requests() - first;
        eprintln!(
            "killed after {kill_after} verdicts: {first} requests before the kill, {resumed} after; {full} for a whole pass, {saved} kept"
        );
        assert!(
            resumed <= full - saved,
            "killed after {kill_after}: {resumed} requests on resume, {full} for a whole pass, {saved} of them answered before the kill"
        );
        // And the judged run equals an uninterrupted pass's.
        for name in ["judgements.jsonl", "summary.json", "summary.csv", "trials.csv", "report.html"]
        {
            assert!(
                std::fs::read(run.join(name)).unwrap()
                    == std::fs::read(dir.join("out/whole").join(name)).unwrap(),
                "killed after {kill_after}: {name} differs"
            );
        }
        assert!(leftovers(&run).is_empty(), "{:?}", leftovers(&run));
    }
}
