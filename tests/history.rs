//! `--history`: each run appends its headline numbers (with commit, date, config hash, tags), the same
//! run recorded again replaces its entry, and the HTML report draws the trend.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn history_records_runs_and_the_report_draws_the_trend() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let history = tmp.path().join("ci/history.jsonl");
    // The history's directory must exist (a mistyped one is refused before the run, not created).
    std::fs::create_dir(tmp.path().join("ci")).unwrap();
    for (i, seed) in ["1", "2", "3"].iter().enumerate() {
        let id = format!("n{i}");
        let o = toolpick(
            &argv_with(
                "run --out {} --run-id {} --quiet --variants good --layouts flat \
                --backends lexical,random --seed {} --history {} --tag branch=main --tag {}",
                &[out, &id, seed, history.to_str().unwrap(), &format!("night={i}")],
            ),
            &repo(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let entries: Vec<Value> = std::fs::read_to_string(&history)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 3);
    let iso = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$").unwrap();
    for (i, e) in entries.iter().enumerate() {
        let dir = tmp.path().join(format!("n{i}"));
        let meta: Value =
            serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
        assert_eq!(e["run_id"], format!("n{i}"));
        assert_eq!(e["config_hash"], meta["matrix_hash"]);
        assert_eq!(e["tags"]["night"], i.to_string());
        assert_eq!(e["tags"]["branch"], "main");
        // ISO 8601, UTC: 2026-11-30T01:02:03Z.
        let date = e["date_utc"].as_str().unwrap();
        assert!(iso.is_match(date), "{date}");
        // The recorded pass@1 is the summary's.
        let rates: Vec<f64> =
            summary_rows(&dir).iter().map(|row| row["pass_at_1"].parse().unwrap()).collect();
        let recorded: Vec<f64> =
            e["cells"].as_array().unwrap().iter().map(|c| c["pass"].as_f64().unwrap()).collect();
        assert_eq!(rates.len(), recorded.len());
        for (a, b) in rates.iter().zip(&recorded) {
            assert!((a - b).abs() < 1e-6);
        }
    }
    let html = std::fs::read_to_string(tmp.path().join("n2/report.html")).unwrap();
    assert!(html.contains("Trend over the run history"));
    assert!(
        html.contains("pass@1 over the last 3 runs")
            && html.contains("selection accuracy over the last 3 runs")
    );
    assert!(html.contains("starter/workspace/good/flat/random"));
    // The first run's report had no history to draw yet.
    assert!(
        !std::fs::read_to_string(tmp.path().join("n0/report.html"))
            .unwrap()
            .contains("Trend over the run history")
    );

    // Re-rendering a recorded run replaces its entry instead of adding a point.
    let o = toolpick(
        &[
            "report",
            tmp.path().join("n2").to_str().unwrap(),
            "--history",
            history.to_str().unwrap(),
        ],
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&history).unwrap().lines().count(), 3);

    // A malformed tag is an input error.
    let o = toolpick(
        &argv_with(
            "report {} --history {} --tag oops",
            &[tmp.path().join("n2").to_str().unwrap(), history.to_str().unwrap()],
        ),
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2));
}
