//! The drill-down's argument comparison (report.html's data island, `compare` of each trial) agrees
//! with the scorer's recorded verdicts on every trial of the bundled default run: a call the scorer
//! matched has every argument `ok`; a call that failed on its arguments names exactly one decisive
//! argument, whose verdict and rule are the call's; and a single-call trial with one attempt that failed
//! on its arguments shows the very error type and detail `trials.jsonl` records. Also: the island is
//! byte-identical across two reports of the same run.

mod common;

use common::{argv_with, repo, stderr, toolpick};
use serde_json::Value;

const ARGUMENT_ERRORS: [&str; 4] =
    ["value_error", "type_error", "missing_required", "unexpected_param"];

fn island(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"toolpick-data\">";
    let start = html.find(open).expect("the data island") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn every_comparison_agrees_with_the_recorded_score() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let o = toolpick(&argv_with("run --out {} --run-id r -q", &[out]), &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp.path().join("r");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let records: std::collections::BTreeMap<String, Value> =
        std::fs::read_to_string(dir.join("trials.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|t| (t["trial_id"].as_str().unwrap().to_string(), t))
            .collect();
    let (mut calls, mut decided, mut recorded) = (0, 0, 0);
    for t in island(&html)["trials"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        let record = &records[id];
        for c in t["compare"].as_array().unwrap() {
            calls += 1;
            let args = c["arguments"].as_array().unwrap();
            let verdict = c["verdict"].as_str().unwrap();
            if verdict == "match" {
                assert!(args.iter().all(|a| a[3] == "ok"), "{id}: a matched call: {c}");
            }
            if ARGUMENT_ERRORS.contains(&verdict) {
                let decisive: Vec<&Value> = args.iter().filter(|a| a[5] == 1).collect();
                assert_eq!(decisive.len(), 1, "{id}: one argument decides {c}");
                assert_eq!(decisive[0][3], verdict, "{id}: {c}");
                assert_eq!(decisive[0][4], c["detail"], "{id}: {c}");
                decided += 1;
            }
            let attempts = record["calls"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| {
                    matches!(
                        x["record"]["status"].as_str(),
                        Some("executed" | "rejected" | "malformed" | "invented")
                    )
                })
                .count();
            let error = record["score"]["error_type"].as_str().unwrap_or("");
            if record["kind"] == "single" && attempts == 1 && ARGUMENT_ERRORS.contains(&error) {
                assert_eq!(verdict, error, "{id}: the recorded error type");
                assert_eq!(
                    c["detail"], record["score"]["error_detail"],
                    "{id}: the recorded detail"
                );
                recorded += 1;
            }
        }
    }
    assert!(calls > 1000 && decided > 50 && recorded > 50, "{calls} {decided} {recorded}");
    println!(
        "{calls} compared calls; {decided} decided by one argument; {recorded} as trials.jsonl records"
    );
    // Reported again: the same page, byte for byte.
    let again = toolpick(&argv_with("report {}", &[dir.to_str().unwrap()]), &repo());
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(dir.join("report.html")).unwrap(), html);
}
