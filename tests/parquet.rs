//! `trials.parquet` and `summary.parquet` read back with polars' own reader and agree with the trial
//! records in `trials.jsonl`, parsed independently here.

mod common;
use common::*;
use polars::prelude::*;
use polars_io::SerReader;
use polars_io::parquet::read::ParquetReader;
use serde_json::Value;
use std::collections::BTreeMap;

fn read(path: &std::path::Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap()).finish().unwrap()
}

#[test]
fn parquet_files_hold_the_trials_and_the_summary_with_types() {
    let tmp = tempfile::tempdir().unwrap();
    let o = toolpick(
        &argv_with(
            "run --out {} --run-id r --quiet --variants good --layouts flat \
             --backends lexical,oracle",
            &[tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp.path().join("r");
    let records: Vec<Value> = std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    let trials = read(&dir.join("trials.parquet"));
    assert_eq!(trials.height(), records.len());
    let ids = trials.column("trial_id").unwrap().str().unwrap().clone();
    let pass = trials.column("pass").unwrap().bool().unwrap().clone();
    let steps = trials.column("steps").unwrap().u64().unwrap().clone();
    for (i, r) in records.iter().enumerate() {
        assert_eq!(ids.get(i), r["trial_id"].as_str());
        assert_eq!(pass.get(i), r["score"]["pass"].as_bool(), "{}", r["trial_id"]);
        assert_eq!(steps.get(i), r["steps"].as_u64());
    }

    // pass@1 per backend, counted from the records: over the tasks that need a call; n over all.
    let mut counts: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    for r in &records {
        let e = counts.entry(r["backend"].as_str().unwrap().to_string()).or_default();
        let call_task = matches!(r["kind"].as_str().unwrap(), "single" | "multi" | "parallel");
        e.0 += (call_task && r["score"]["pass"].as_bool().unwrap()) as u64;
        e.1 += call_task as u64;
        e.2 += 1;
    }
    let summary = read(&dir.join("summary.parquet"));
    assert_eq!(summary.height(), counts.len());
    let backends = summary.column("backend").unwrap().str().unwrap().clone();
    let rates = summary.column("pass_at_1").unwrap().f64().unwrap().clone();
    let n = summary.column("n").unwrap().u64().unwrap().clone();
    let n_call = summary.column("n_call").unwrap().u64().unwrap().clone();
    for i in 0..summary.height() {
        let (k, calls, total) = counts[backends.get(i).unwrap()];
        assert_eq!(n.get(i), Some(total));
        assert_eq!(n_call.get(i), Some(calls));
        assert!(calls > 0);
        assert!((rates.get(i).unwrap() - k as f64 / calls as f64).abs() < 1e-12);
    }
    // One trial per task: pass@k and the noise floor are undefined, so null rather than zero.
    assert_eq!(summary.column("pass_at_k").unwrap().null_count(), summary.height());
}
