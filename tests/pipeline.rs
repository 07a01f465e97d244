//! The one pipeline `run`, `report` and `merge` end through (`src/cli/pipeline.rs`): the trials are
//! read once even with `--history` (the history point is on the page written by that one pass), the
//! steps print in their documented order, a failed gate is exit 100 with every file written, and a
//! gate that would check nothing is exit 2 with nothing recorded or rewritten.

mod common;
use common::*;
use std::path::Path;

/// A small run (ten tasks, one cell) into `out/<id>`.
fn small_run(out: &Path, id: &str) {
    let o = toolpick(
        &argv_with(
            "run --tasks dev-00? --backends lexical --variants good --layouts flat \
            --quiet --out {} --run-id {}",
            &[out.to_str().unwrap(), id],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn report_with_history_baseline_and_gates_reads_the_trials_once_and_prints_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    small_run(tmp.path(), "a");
    small_run(tmp.path(), "b");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let history = tmp.path().join("history.jsonl");
    let summary = tmp.path().join("summary.md");
    let report = |run: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
            .args([
                "report",
                run.to_str().unwrap(),
                "--history",
                history.to_str().unwrap(),
                "--baseline",
                a.to_str().unwrap(),
                "--min-pass-rate",
                "100",
                "--step-summary",
                summary.to_str().unwrap(),
            ])
            .env("TOOLPICK_PHASES", "1")
            .current_dir(repo())
            .output()
            .unwrap()
    };
    assert_eq!(report(&a).status.code(), Some(100), "the lexical baseline passes no 100 % gate");
    let o = report(&b);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(100), "{err}");
    // One pass over the trials for the run itself (the baseline is loaded, not rendered).
    let scans = err.lines().filter(|l| l.starts_with("phase scan (wall) ")).count();
    let renders = err.lines().filter(|l| l.starts_with("phase render report.html ")).count();
    assert_eq!((scans, renders), (2, 1), "baseline load + this run's render, one page:\n{err}");
    // The page written by that one pass already holds the trend of both recorded runs.
    let html = std::fs::read_to_string(b.join("report.html")).unwrap();
    assert!(html.contains("Trend over the run history"), "the page draws the history");
    assert_eq!(std::fs::read_to_string(&history).unwrap().lines().count(), 2);
    assert!(b.join("compare.html").is_file() && b.join("compare.md").is_file());
    let appended = std::fs::read_to_string(&summary).unwrap();
    assert!(appended.contains("FAIL") || appended.contains("fail"), "{appended}");
    // The documented order: the command's summary, the cells, the history line, the comparison,
    // the gates.
    let at = |needle: &str| {
        out.find(needle).unwrap_or_else(|| panic!("`{needle}` is not in the output:\n{out}"))
    };
    let order = [
        at("re-scored "),
        at("dataset variant layout"),
        at("recorded in "),
        at("cell (B vs baseline A)"),
        at("gate --min-pass-rate "),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "out of order {order:?}:\n{out}");
}

#[test]
fn a_gate_that_checks_nothing_records_and_rewrites_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    small_run(tmp.path(), "a");
    let a = tmp.path().join("a");
    let history = tmp.path().join("history.jsonl");
    let page = std::fs::read(a.join("report.html")).unwrap();
    let modified = std::fs::metadata(a.join("report.html")).unwrap().modified().unwrap();
    let o = toolpick(
        &argv_with(
            "report {} --history {} --min-pass-rate 10 --gate-cells */no-such-backend",
            &[a.to_str().unwrap(), history.to_str().unwrap()],
        ),
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--gate-cells"), "{}", stderr(&o));
    assert!(!history.exists(), "no history point for a report that was refused");
    assert_eq!(std::fs::read(a.join("report.html")).unwrap(), page);
    let now = std::fs::metadata(a.join("report.html")).unwrap().modified().unwrap();
    assert_eq!(now, modified, "the page was not rewritten");
}

/// Damaged lines anywhere in the trial file, several at once: the report names the first of them (in
/// file order, whichever parsing thread met one first), exits 2 and rewrites no report file.
#[test]
fn of_several_damaged_trial_lines_the_report_names_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    small_run(tmp.path(), "a");
    let a = tmp.path().join("a");
    let trials = std::fs::read_to_string(a.join("trials.jsonl")).unwrap();
    let lines: Vec<&str> = trials.lines().collect();
    assert!(lines.len() >= 8, "a run of ten tasks: {} lines", lines.len());
    let page = std::fs::read(a.join("report.html")).unwrap();
    // Seeded choices of two to four damaged lines, each damaged one of several ways.
    let damage = ["not json", r#"{"trial_id": 5"#, "[1, 2]", r#"{"trial_id": "x"}"#];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for round in 0..6 {
        let count = 2 + next(3);
        let mut bad: Vec<usize> = Vec::new();
        while bad.len() < count {
            let i = next(lines.len());
            if !bad.contains(&i) {
                bad.push(i);
            }
        }
        let damaged: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if bad.contains(&i) {
                    damage[next(damage.len())].to_string()
                } else {
                    l.to_string()
                }
            })
            .collect();
        std::fs::write(a.join("trials.jsonl"), damaged.join("\n") + "\n").unwrap();
        let o = toolpick(&argv_with("report {}", &[a.to_str().unwrap()]), &repo());
        let first = bad.iter().min().unwrap() + 1;
        assert_eq!(o.status.code(), Some(2), "round {round}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("trials.jsonl:{first}: ")),
            "round {round}: damaged lines {bad:?}, the first is {first}:\n{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(a.join("report.html")).unwrap(), page, "round {round}");
    }
}
