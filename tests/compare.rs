//! `toolpick compare` and the gates, end to end on the bundled suite: a forced regression (good → bad
//! descriptions) fails `--max-drop` with exit 100, a run compared with itself passes, `--significant-only`
//! lets an insignificant drop through, and the numbers agree with each run's own summary.

mod common;
use common::*;
use std::collections::HashMap;
use std::path::Path;

fn run(out: &Path, id: &str, extra: &[&str]) {
    let out_s = out.to_str().unwrap();
    let mut args = vec!["run", "--out", out_s, "--run-id", id, "--quiet", "--layouts", "flat", "--backends", "lexical"];
    args.extend_from_slice(extra);
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));
}

fn csv_rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records().map(|rec| headers.iter().zip(rec.unwrap().iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect()).collect()
}

fn passes(trials_csv: &Path) -> HashMap<String, bool> {
    csv_rows(trials_csv).into_iter().map(|r| (r["task_id"].clone(), r["pass"] == "true")).collect()
}

#[test]
fn a_forced_regression_fails_max_drop_and_lists_the_flipped_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "a", &["--variants", "good"]);
    run(tmp.path(), "b", &["--variants", "bad"]);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let summary = tmp.path().join("step.md");
    let o = toolpick(
        &["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--match", "dataset,layout,backend", "--max-drop", "5", "--step-summary", summary.to_str().unwrap()],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(100), "stdout: {}\nstderr: {}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("gate(s) failed"), "{}", stderr(&o));

    // The paired difference agrees with each run's own trial-level outcomes.
    let (pa, pb) = (passes(&a.join("trials.csv")), passes(&b.join("trials.csv")));
    let row = &csv_rows(&b.join("compare.csv"))[0];
    assert_eq!(row["cell"], "starter/flat/lexical");
    let n = pa.len() as f64;
    let expect_a = pa.values().filter(|p| **p).count() as f64 / n;
    let expect_b = pb.values().filter(|p| **p).count() as f64 / n;
    let num = |k: &str| row[k].parse::<f64>().unwrap();
    assert!((num("pass_a") - expect_a).abs() < 1e-6 && (num("pass_b") - expect_b).abs() < 1e-6);
    assert!(num("pass_diff") < -0.05, "the bad descriptions must cost more than 5 points: {}", num("pass_diff"));
    assert!(num("pass_diff_low") <= num("pass_diff") && num("pass_diff") <= num("pass_diff_high"));
    assert!(num("pass_p_value") < 0.05);

    // Every flip is a task whose outcome really changed, in the stated direction, and every changed task is listed.
    let flips = csv_rows(&b.join("compare-flips.csv"));
    let changed: Vec<&String> = pa.keys().filter(|t| pa[*t] != pb[*t]).collect();
    assert_eq!(flips.len(), changed.len());
    for f in &flips {
        let t = &f["task_id"];
        assert_eq!(f["direction"] == "pass_to_fail", pa[t] && !pb[t], "{t}");
    }
    assert_eq!(row["pass_to_fail"].parse::<usize>().unwrap(), flips.iter().filter(|f| f["direction"] == "pass_to_fail").count());

    // The HTML links each flip into both runs' drill-downs.
    let html = std::fs::read_to_string(b.join("compare.html")).unwrap();
    let first = &flips[0];
    let link = format!("../a/report.html#trial={}", first["a_trial"].replace('/', "%2F").replace('#', "%23"));
    assert!(html.contains(&link), "missing link {link}");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("gate(s) failed") && md.contains("Top regressions"), "{md}");
}

#[test]
fn a_run_compared_with_itself_passes_every_gate() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "a", &["--variants", "good"]);
    let a = tmp.path().join("a");
    let out = tmp.path().join("cmp");
    let o = toolpick(&["compare", a.to_str().unwrap(), a.to_str().unwrap(), "--out", out.to_str().unwrap(), "--max-drop", "0"], &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(csv_rows(&out.join("compare-flips.csv")).len(), 0);
    let row = &csv_rows(&out.join("compare.csv"))[0];
    assert_eq!((row["pass_diff"].as_str(), row["pass_p_value"].as_str()), ("0.000000", "1.000000"));
}

#[test]
fn significant_only_lets_an_insignificant_drop_through() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "a", &["--variants", "good"]);
    // A stricter abstention threshold changes a handful of tasks either way.
    run(tmp.path(), "b", &["--variants", "good", "--lexical-min-overlap", "3"]);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let o = toolpick(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--max-drop", "0"], &repo());
    let row = &csv_rows(&b.join("compare.csv"))[0];
    let (sel_diff, sel_p): (f64, f64) = (row["selection_diff"].parse().unwrap(), row["selection_p_value"].parse().unwrap());
    assert!(sel_diff < 0.0 && sel_p >= 0.05, "the premise of this test: a small, insignificant drop ({sel_diff}, p {sel_p})");
    assert_eq!(o.status.code(), Some(100), "any drop fails --max-drop 0");
    let o = toolpick(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--max-drop", "0", "--significant-only"], &repo());
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("not significant"), "{}", stdout(&o));
}

#[test]
fn min_rate_gates_on_run_use_exit_code_100_and_respect_gate_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let base = ["run", "--out", out, "--quiet", "--layouts", "flat", "--variants", "good", "--backends", "lexical,oracle"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        toolpick(&a, &repo())
    };
    let o = with(&["--run-id", "r1", "--min-pass-rate", "99"]);
    assert_eq!(o.status.code(), Some(100), "lexical is far below 99 %: {}", stdout(&o));
    assert!(stdout(&o).contains("gate --min-pass-rate starter/workspace/good/flat/lexical: FAIL"), "{}", stdout(&o));
    let o = with(&["--run-id", "r2", "--min-pass-rate", "99", "--min-selection-accuracy", "99", "--gate-cells", "*/oracle"]);
    assert!(o.status.success(), "the oracle passes everything: {}", stdout(&o));
    let o = with(&["--run-id", "r3", "--min-pass-rate", "99", "--gate-cells", "*/nobody"]);
    assert_eq!(o.status.code(), Some(100), "a pattern that gates nothing must not pass silently");
    // Bad gate flags are input errors, found before any episode runs.
    for bad in [&["--run-id", "r4", "--max-drop", "3"][..], &["--run-id", "r5", "--min-pass-rate", "120"][..], &["--run-id", "r6", "--gate-scope", "global", "--min-pass-rate", "1"][..]] {
        let o = with(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(!tmp.path().join(bad[1]).exists(), "nothing is run for an invalid gate");
    }
}

#[test]
fn report_with_a_baseline_writes_the_comparison_into_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "a", &["--variants", "good"]);
    run(tmp.path(), "b", &["--variants", "good", "--baseline", tmp.path().join("a").to_str().unwrap(), "--max-drop", "1"]);
    for f in ["compare.html", "compare.csv", "compare-flips.csv", "compare.md"] {
        assert!(tmp.path().join("b").join(f).is_file(), "{f}");
    }
}
