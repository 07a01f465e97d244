//! `toolpick compare` and the gates, end to end on the bundled suite: a forced regression (good → bad
//! descriptions) fails `--max-drop` with exit 100, a run compared with itself passes, `--significant-only`
//! lets an insignificant drop through, and the numbers agree with each run's own summary.

mod common;
use common::*;
use std::collections::HashMap;
use std::path::Path;

fn run(out: &Path, id: &str, extra: &[&str]) {
    let out_s = out.to_str().unwrap();
    let mut args = argv_with(
        "run --out {} --run-id {} --quiet --layouts flat --backends lexical",
        &[out_s, id],
    );
    args.extend_from_slice(extra);
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Pass per task, over the tasks that need a call (the tasks `compare` pairs, as the headline).
fn passes(trials_csv: &Path) -> HashMap<String, bool> {
    let rows = csv_rows(trials_csv);
    assert!(
        rows.iter().any(|r| !["single", "multi", "parallel"].contains(&r["kind"].as_str())),
        "the suite has tasks that need no call"
    );
    rows.into_iter()
        .filter(|r| ["single", "multi", "parallel"].contains(&r["kind"].as_str()))
        .map(|r| (r["task_id"].clone(), r["pass"] == "true"))
        .collect()
}

#[test]
fn a_forced_regression_fails_max_drop_and_lists_the_flipped_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "a", &["--variants", "good"]);
    run(tmp.path(), "b", &["--variants", "bad"]);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let summary = tmp.path().join("step.md");
    let o = toolpick(
        &argv_with(
            "compare {} {} --match dataset,layout,backend --max-drop 5 --step-summary {}",
            &[a.to_str().unwrap(), b.to_str().unwrap(), summary.to_str().unwrap()],
        ),
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
    assert_eq!(
        row["tasks"].parse::<usize>().unwrap(),
        pa.len(),
        "only the tasks that need a call are paired"
    );
    assert!((num("pass_a") - expect_a).abs() < 1e-6 && (num("pass_b") - expect_b).abs() < 1e-6);
    // One trial per task: McNemar's exact test, and its interval excludes 0 exactly when p < 0.05;
    // with a single matched cell the Holm family has one member, so the adjusted p is the raw one.
    assert_eq!(row["pass_test"], "mcnemar_exact");
    assert_eq!(
        num("pass_diff_high") < 0.0 || num("pass_diff_low") > 0.0,
        num("pass_p_value") < 0.05
    );
    assert_eq!(row["pass_p_holm"], row["pass_p_value"]);
    assert!(
        num("pass_diff") < -0.05,
        "the bad descriptions must cost more than 5 points: {}",
        num("pass_diff")
    );
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
    assert_eq!(
        row["pass_to_fail"].parse::<usize>().unwrap(),
        flips.iter().filter(|f| f["direction"] == "pass_to_fail").count()
    );

    // The HTML links each flip into both runs' drill-downs.
    let html = std::fs::read_to_string(b.join("compare.html")).unwrap();
    let first = &flips[0];
    let link = format!(
        "../a/report.html#trial={}",
        first["a_trial"].replace('/', "%2F").replace('#', "%23")
    );
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
    let o = toolpick(
        &argv_with(
            "compare {} {} --out {} --max-drop 0",
            &[a.to_str().unwrap(), a.to_str().unwrap(), out.to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(csv_rows(&out.join("compare-flips.csv")).len(), 0);
    let row = &csv_rows(&out.join("compare.csv"))[0];
    assert_eq!((row["pass_diff"].as_str(), row["pass_p_value"].as_str()), ("0.000000", "1.000000"));
    assert_eq!(
        (row["pass_diff_low"].as_str(), row["pass_diff_high"].as_str()),
        ("0.000000", "0.000000"),
        "nothing changed: the interval is exactly 0"
    );
}

/// Several matched cells: the p-values are Holm-adjusted across them (per metric), every interval
/// agrees with its raw p, and the written summaries say which p "significant" uses.
#[test]
fn several_cells_get_holm_adjusted_p_values_next_to_the_raw_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let out_s = tmp.path().to_str().unwrap();
    for (id, variant) in [("a", "good"), ("b", "bad")] {
        let o = toolpick(
            &argv_with(
                "run --out {} --run-id {} --quiet --layouts flat,search \
                 --backends lexical,random --variants {}",
                &[out_s, id, variant],
            ),
            &repo(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let o = toolpick(
        &["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--match", "dataset,layout,backend"],
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = csv_rows(&b.join("compare.csv"));
    let cells: Vec<&Row> = rows.iter().filter(|r| r["cell"] != "overall").collect();
    assert_eq!(cells.len(), 4, "2 layouts × 2 backends");
    let m = cells.len() as f64;
    for metric in ["pass", "selection"] {
        let num = |r: &Row, k: &str| r[&format!("{metric}_{k}")].parse::<f64>().unwrap();
        for r in &cells {
            let (raw, adj) = (num(r, "p_value"), num(r, "p_holm"));
            assert!(
                adj >= raw - 1e-9 && adj <= (m * raw).min(1.0) + 1e-6,
                "{metric} {}: raw {raw} adjusted {adj}",
                r["cell"]
            );
            assert_eq!(
                num(r, "diff_high") < 0.0 || num(r, "diff_low") > 0.0,
                raw < 0.05,
                "{metric} {}: the interval and raw p agree",
                r["cell"]
            );
        }
        // The smallest raw p is multiplied by the family size (Holm's first step).
        let smallest =
            cells.iter().min_by(|x, y| num(x, "p_value").total_cmp(&num(y, "p_value"))).unwrap();
        assert!((num(smallest, "p_holm") - (m * num(smallest, "p_value")).min(1.0)).abs() < 1e-6);
        // The adjustment keeps the order of the raw p-values.
        let mut by_raw: Vec<(f64, f64)> =
            cells.iter().map(|r| (num(r, "p_value"), num(r, "p_holm"))).collect();
        by_raw.sort_by(|x, y| x.0.total_cmp(&y.0));
        assert!(by_raw.windows(2).all(|w| w[0].1 <= w[1].1 + 1e-12), "{by_raw:?}");
        let overall = rows.iter().find(|r| r["cell"] == "overall").unwrap();
        assert_eq!(
            overall[&format!("{metric}_p_holm")],
            overall[&format!("{metric}_p_value")],
            "the pooled row is its own test"
        );
    }
    let md = std::fs::read_to_string(b.join("compare.md")).unwrap();
    assert!(
        md.contains("Holm–Bonferroni adjusted across the 4 matched cell(s)")
            && md.contains("p (Holm)"),
        "{md}"
    );
    let html = std::fs::read_to_string(b.join("compare.html")).unwrap();
    assert!(html.contains("adjusted across the 4 matched cell(s)"), "the page states the family");
}

#[test]
fn significant_only_lets_an_insignificant_drop_through() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "a", &["--variants", "good"]);
    // Dropping the descriptions' usage guidance changes a handful of the lexical baseline's tasks
    // either way (over the tasks that need a call).
    run(tmp.path(), "b", &["--variants", "op:drop_guidance"]);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let on = "dataset,layout,backend";
    let o = toolpick(
        &["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--match", on, "--max-drop", "0"],
        &repo(),
    );
    let row = &csv_rows(&b.join("compare.csv"))[0];
    for metric in ["selection", "pass"] {
        let (diff, p): (f64, f64) = (
            row[&format!("{metric}_diff")].parse().unwrap(),
            row[&format!("{metric}_p_holm")].parse().unwrap(),
        );
        assert!(
            diff < 0.0 && p >= 0.05,
            "the premise of this test: a small, insignificant {metric} drop ({diff}, adjusted p {p})"
        );
    }
    assert_eq!(o.status.code(), Some(100), "any drop fails --max-drop 0");
    let o = toolpick(
        &argv_with(
            "compare {} {} --match {} --max-drop 0 --significant-only",
            &[a.to_str().unwrap(), b.to_str().unwrap(), on],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("not significant"), "{}", stdout(&o));
}

#[test]
fn min_rate_gates_on_run_use_exit_code_100_and_respect_gate_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let base = argv_with(
        "run --out {} --quiet --layouts flat --variants good \
        --backends lexical,oracle",
        &[out],
    );
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        toolpick(&a, &repo())
    };
    let o = with(&["--run-id", "r1", "--min-pass-rate", "99"]);
    assert_eq!(o.status.code(), Some(100), "lexical is far below 99 %: {}", stdout(&o));
    assert!(
        stdout(&o).contains("gate --min-pass-rate starter/workspace/good/flat/lexical: FAIL"),
        "{}",
        stdout(&o)
    );
    let o = with(&argv(
        "--run-id r2 --min-pass-rate 99 --min-selection-accuracy 99 --gate-cells */oracle",
    ));
    assert!(o.status.success(), "the oracle passes everything: {}", stdout(&o));
    let o = with(&["--run-id", "r3", "--min-pass-rate", "99", "--gate-cells", "*/nobody"]);
    // A pattern that gates nothing must not pass silently: an input error before anything runs.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!tmp.path().join("r3").exists());
    // Bad gate flags are input errors, found before any episode runs.
    for bad in [
        &["--run-id", "r4", "--max-drop", "3"][..],
        &["--run-id", "r5", "--min-pass-rate", "120"][..],
        &["--run-id", "r6", "--gate-scope", "global", "--min-pass-rate", "1"][..],
    ] {
        let o = with(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(!tmp.path().join(bad[1]).exists(), "nothing is run for an invalid gate");
    }
}

#[test]
fn report_with_a_baseline_writes_the_comparison_into_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "a", &["--variants", "good"]);
    run(
        tmp.path(),
        "b",
        &argv_with(
            "--variants good --baseline {} --max-drop 1",
            &[tmp.path().join("a").to_str().unwrap()],
        ),
    );
    for f in ["compare.html", "compare.csv", "compare-flips.csv", "compare.md"] {
        assert!(tmp.path().join("b").join(f).is_file(), "{f}");
    }
}
