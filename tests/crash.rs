//! A kill at any point of the report phase is recovered exactly: after `kill -9` while the trials are
//! compacted, scanned or the outputs renamed, the next `toolpick report` (or resumed `run`) writes every
//! file byte-identical to an uninterrupted run's (all but `run.json`, the one file with timestamps, and
//! `timings.jsonl`, which holds measured latencies), and leaves no temporary file behind. Temporary
//! files of a dead process are removed by `run`, `report` and `merge`; a live process's are kept.
//!
//! Kills are deterministic: `TOOLPICK_TEST_KILL_AT=<point>:<n>` makes the binary SIGKILL itself at a
//! named point (src/crashpoint.rs), so each case stops at the same place on every machine.
#![cfg(unix)]

mod common;
use common::*;
use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const MATRIX: &str =
    "--variants good,bad --layouts flat,progressive --backends lexical,random --trials 3 --seed 11";
/// Files `run` writes before the report phase (the rest are report outputs).
const RUN_FILES: [&str; 5] =
    ["run.json", "tools.json", "lint.json", "defects.json", "timings.jsonl"];

/// A small catalog and dataset in a temporary directory, and an uninterrupted run of them (`out/ref`).
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let fx = Fixture { tmp: small_world() };
        let o = fx.toolpick(&fx.run_args("ref"), None);
        assert!(o.status.success(), "{}", stderr(&o));
        fx
    }

    fn root(&self) -> &Path {
        self.tmp.path()
    }

    fn dir(&self, id: &str) -> PathBuf {
        self.root().join("out").join(id)
    }

    fn run_args(&self, id: &str) -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            "--catalog",
            "cat",
            "--dataset",
            "ds.jsonl",
            "--out",
            "out",
            "--run-id",
            id,
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(argv(MATRIX).into_iter().map(String::from));
        args
    }

    fn report_args(&self, id: &str) -> Vec<String> {
        vec!["report".into(), self.dir(id).to_str().unwrap().into()]
    }

    /// Run the binary in the fixture directory, killed at `kill_at` if given.
    fn toolpick(&self, args: &[String], kill_at: Option<&str>) -> std::process::Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolpick"));
        cmd.args(args).current_dir(self.root()).env_remove("TOOLPICK_TEST_KILL_AT");
        if let Some(point) = kill_at {
            cmd.env("TOOLPICK_TEST_KILL_AT", point);
        }
        cmd.output().expect("toolpick runs")
    }

    /// Run the binary and insist that it died by SIGKILL at `point` (so the point was reached).
    fn killed(&self, args: &[String], point: &str) {
        let o = self.toolpick(args, Some(point));
        assert_eq!(
            o.status.signal(),
            Some(9),
            "`{}` was to be killed at {point} but ended with {:?}: {}",
            args.join(" "),
            o.status,
            stderr(&o)
        );
    }

    fn trial_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir("ref").join("trials.jsonl"))
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }

    /// `out/<id>` as a run killed before its trials were compacted leaves it: the run's own files, and
    /// the trials in completion order with the duplicates that resuming creates — an earlier record
    /// of the trial that ended in an infrastructure error (re-run by `--retry-errors`, appended later)
    /// and one trial appended twice around a crash. No report output exists yet.
    fn uncompacted(&self, id: &str) -> PathBuf {
        let dir = self.dir(id);
        std::fs::create_dir_all(&dir).unwrap();
        for f in RUN_FILES {
            std::fs::copy(self.dir("ref").join(f), dir.join(f)).unwrap();
        }
        let lines = self.trial_lines();
        let transcripts: Vec<String> =
            std::fs::read_to_string(self.dir("ref").join("transcripts.jsonl"))
                .unwrap()
                .lines()
                .map(String::from)
                .collect();
        let n = lines.len();
        assert_eq!(transcripts.len(), n, "one transcript per trial");
        // Completion order under concurrency: a fixed permutation of the matrix order. Each record is
        // preceded by its transcript, as the runner appends them.
        let order: Vec<usize> = (0..n).map(|i| (i * 37 + 11) % n).collect();
        assert_eq!(
            order.iter().copied().collect::<BTreeSet<_>>().len(),
            n,
            "37 must be prime to {n}"
        );
        let (mut text, mut said) = (String::new(), String::new());
        for i in (0..n).step_by(5) {
            let mut v: serde_json::Value = serde_json::from_str(&lines[i]).unwrap();
            v["error"] = "connection after 5 attempt(s): connection refused".into();
            v["calls"] = serde_json::json!([]);
            v["stop_reason"] = "backend_error".into();
            text.push_str(&serde_json::to_string(&v).unwrap());
            text.push('\n');
            // The failed attempt's transcript: the query only, which the retry's replaces.
            let mut x: serde_json::Value = serde_json::from_str(&transcripts[i]).unwrap();
            x["transcript"] = serde_json::json!([x["transcript"][0]]);
            said.push_str(&serde_json::to_string(&x).unwrap());
            said.push('\n');
        }
        for &i in &order {
            text.push_str(&lines[i]);
            text.push('\n');
            said.push_str(&transcripts[i]);
            said.push('\n');
        }
        text.push_str(&lines[order[n - 1]]);
        text.push('\n');
        said.push_str(&transcripts[order[n - 1]]);
        said.push('\n');
        // A kill between a transcript and its record: a transcript whose record never came.
        let mut orphan: serde_json::Value = serde_json::from_str(&transcripts[order[0]]).unwrap();
        orphan["trial_id"] = "ds/good/flat/oracle/never-recorded#0".into();
        said.push_str(&serde_json::to_string(&orphan).unwrap());
        said.push('\n');
        std::fs::write(dir.join("trials.jsonl"), text).unwrap();
        std::fs::write(dir.join("transcripts.jsonl"), said).unwrap();
        dir
    }

    /// Every file of the uninterrupted run, but `run.json` and `timings.jsonl`, is in `out/<id>` byte for
    /// byte, and nothing else is there (no temporary file, no half-compacted trials).
    fn assert_same_as_reference(&self, id: &str, case: &str) {
        let names = |d: &Path| -> BTreeSet<String> {
            std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        };
        let (want, got) = (names(&self.dir("ref")), names(&self.dir(id)));
        assert_eq!(got, want, "{case}: the files differ from an uninterrupted run's");
        let mut compared = 0;
        for name in &want {
            if name == "run.json" || name == "timings.jsonl" {
                continue;
            }
            let a = std::fs::read(self.dir("ref").join(name)).unwrap();
            let b = std::fs::read(self.dir(id).join(name)).unwrap();
            assert!(a == b, "{case}: {name} differs from the uninterrupted run's");
            compared += 1;
        }
        assert!(compared >= 14, "{case}: compared only {compared} files");
    }
}

#[test]
fn report_after_a_kill_anywhere_in_the_report_phase_equals_an_uninterrupted_run() {
    let fx = Fixture::new();
    let n = fx.trial_lines().len();
    assert!(n >= 90, "{n} trials");
    let points = [
        "compact-write:1".to_string(),
        format!("compact-write:{}", n / 2),
        "compact-rename:1".into(),
        "compact-done:1".into(),
        "scan:1".into(),
        format!("scan:{}", n / 2),
        format!("scan:{n}"),
        "stage:1".into(),
        "stage:8".into(),
        "rename:1".into(),
        "rename:6".into(),
        "rename:10".into(),
    ];
    for (i, point) in points.iter().enumerate() {
        let id = format!("k{i}");
        fx.uncompacted(&id);
        fx.killed(&fx.report_args(&id), point);
        let o = fx.toolpick(&fx.report_args(&id), None);
        assert!(o.status.success(), "report after a kill at {point}: {}", stderr(&o));
        fx.assert_same_as_reference(&id, &format!("report after a kill at {point}"));
    }

    // A second kill while recovering from the first, then a third report.
    fx.uncompacted("twice");
    fx.killed(&fx.report_args("twice"), &format!("compact-write:{}", n / 3));
    fx.killed(&fx.report_args("twice"), "rename:3");
    assert!(fx.toolpick(&fx.report_args("twice"), None).status.success());
    fx.assert_same_as_reference("twice", "report after two kills");

    // A report of a compacted run, killed between renames, over the outputs of an earlier report.
    fx.uncompacted("again");
    assert!(fx.toolpick(&fx.report_args("again"), None).status.success());
    fx.killed(&fx.report_args("again"), "rename:4");
    assert!(fx.toolpick(&fx.report_args("again"), None).status.success());
    fx.assert_same_as_reference("again", "report after a kill between renames of a second report");
}

#[test]
fn a_run_killed_while_compacting_is_recovered_by_report_or_by_resuming() {
    let fx = Fixture::new();
    let n = fx.trial_lines().len();
    for (id, point) in [
        ("c1", "compact-write:1".to_string()),
        ("c2", format!("compact-write:{}", n - 1)),
        ("c3", "compact-rename:1".into()),
    ] {
        fx.uncompacted(id);
        // Resuming finds every trial done and goes straight to compaction, where it is killed.
        fx.killed(&fx.run_args(id), &point);
        let o = fx.toolpick(&fx.report_args(id), None);
        assert!(o.status.success(), "{}", stderr(&o));
        fx.assert_same_as_reference(id, &format!("report after a run killed at {point}"));
    }
    // The same, recovered by resuming the run instead of `report`.
    fx.uncompacted("c4");
    fx.killed(&fx.run_args("c4"), &format!("compact-write:{}", n / 2));
    let o = fx.toolpick(&fx.run_args("c4"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("0 trials run, {n} already done")), "{}", stdout(&o));
    fx.assert_same_as_reference("c4", "resumed run after a kill while compacting");
}

/// The pid of a process that has ended (and been reaped).
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Plant temporary files of a dead and of a live process in `dir`; returns the ones that must stay.
fn plant(dir: &Path, dead: u32, live: u32) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    for name in [
        format!("trials.csv.tmp-{dead}"),
        format!("run.tmp-{dead}"),
        format!("trials.jsonl.compact-{dead}"),
        "trials.jsonl.compact".into(),
    ] {
        std::fs::write(dir.join(name), "half-written").unwrap();
    }
    // Another process's files, and files that only look like ours.
    let keep = [
        format!("summary.md.tmp-{live}"),
        format!("trials.jsonl.compact-{live}"),
        "notes.tmp-draft".into(),
        "x.tmp-12a".into(),
    ];
    for name in &keep {
        std::fs::write(dir.join(name), "in use").unwrap();
    }
    keep.iter().map(|n| dir.join(n)).collect()
}

fn leftovers(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".tmp-") || n.contains(".compact"))
        .collect()
}

#[test]
fn stale_temporary_files_of_a_dead_process_are_removed_and_a_live_ones_kept() {
    let fx = Fixture::new();
    let mut live = Command::new("sleep").arg("120").spawn().unwrap();
    let dead = dead_pid();
    assert!(
        !Path::new(&format!("/proc/{dead}")).exists() || cfg!(not(target_os = "linux")),
        "pid {dead} was reused"
    );

    // report
    fx.uncompacted("rep");
    let keep = plant(&fx.dir("rep"), dead, live.id());
    let o = fx.toolpick(&fx.report_args("rep"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    let want: BTreeSet<String> =
        keep.iter().map(|p| p.file_name().unwrap().to_str().unwrap().to_string()).collect();
    assert_eq!(leftovers(&fx.dir("rep")), want, "report removes exactly the dead process's files");
    for p in &keep {
        assert_eq!(std::fs::read_to_string(p).unwrap(), "in use", "{} was touched", p.display());
        std::fs::remove_file(p).unwrap();
    }
    fx.assert_same_as_reference("rep", "report over stale files");

    // resumed run
    fx.uncompacted("res");
    let keep = plant(&fx.dir("res"), dead, live.id());
    let o = fx.toolpick(&fx.run_args("res"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        leftovers(&fx.dir("res")),
        want,
        "a resumed run removes exactly the dead process's files"
    );
    for p in &keep {
        std::fs::remove_file(p).unwrap();
    }
    fx.assert_same_as_reference("res", "resumed run over stale files");

    // merge: its output directory after a merge that was killed before it wrote anything but temporaries
    let merged = fx.dir("merged");
    plant(&merged, dead, live.id());
    let o = fx.toolpick(
        &[
            "merge".into(),
            "--out".into(),
            merged.to_str().unwrap().into(),
            fx.dir("ref").to_str().unwrap().into(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(leftovers(&merged), want, "merge removes exactly the dead process's files");

    live.kill().unwrap();
    live.wait().unwrap();
}

#[test]
fn a_legacy_compaction_file_is_kept_while_a_process_holds_it_open() {
    let fx = Fixture::new();
    fx.uncompacted("held");
    let legacy = fx.dir("held").join("trials.jsonl.compact");
    std::fs::write(&legacy, "").unwrap();
    // `sleep` holds the file open as its stdout, as a compaction in progress would.
    let mut holder = Command::new("sleep")
        .arg("120")
        .stdout(std::fs::OpenOptions::new().append(true).open(&legacy).unwrap())
        .spawn()
        .unwrap();
    let o = fx.toolpick(&fx.report_args("held"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(legacy.exists(), "a compaction file another process has open was removed");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let o = fx.toolpick(&fx.report_args("held"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    fx.assert_same_as_reference(
        "held",
        "report after the holder of a legacy compaction file ended",
    );
}

#[test]
fn a_report_beside_a_live_writer_rewrites_no_trial_and_a_second_writer_is_refused() {
    let fx = Fixture::new();
    let dir = fx.uncompacted("busy");
    let before = std::fs::read(dir.join("trials.jsonl")).unwrap();
    // This test process plays the run in progress: it holds the directory lock.
    let lock = toolpick::record::guard::DirLock::acquire(&dir).unwrap();
    assert!(lock.held());
    let o = fx.toolpick(&fx.report_args("busy"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("another toolpick process is writing"), "{}", stderr(&o));
    assert!(
        std::fs::read(dir.join("trials.jsonl")).unwrap() == before,
        "the trials of a directory another process writes were compacted"
    );
    let o = fx.toolpick(&fx.run_args("busy"), None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("in use by another toolpick process"), "{}", stderr(&o));
    assert!(std::fs::read(dir.join("trials.jsonl")).unwrap() == before);
    drop(lock);
    let o = fx.toolpick(&fx.report_args("busy"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    fx.assert_same_as_reference("busy", "report once the writer ended");
}

#[test]
fn a_killed_merge_is_redone_or_finished_by_report() {
    let fx = Fixture::new();
    let merge = |id: &str| -> Vec<String> {
        vec![
            "merge".into(),
            "--out".into(),
            fx.dir(id).to_str().unwrap().into(),
            fx.dir("ref").to_str().unwrap().into(),
        ]
    };
    // Killed before it wrote the trials: the same merge again.
    fx.killed(&merge("m1"), "merge-trials:1");
    assert!(!fx.dir("m1").join("trials.jsonl").exists());
    let o = fx.toolpick(&merge("m1"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    fx.assert_same_as_reference("m1", "merge redone after a kill before its trials");
    // Killed while rendering: the directory holds a run, which `report` finishes.
    fx.killed(&merge("m2"), "rename:2");
    let o = fx.toolpick(&merge("m2"), None);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a second merge into a merged run is refused: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("toolpick report"), "{}", stderr(&o));
    let o = fx.toolpick(&fx.report_args("m2"), None);
    assert!(o.status.success(), "{}", stderr(&o));
    fx.assert_same_as_reference("m2", "report after a merge killed while rendering");
}
