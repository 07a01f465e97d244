//! The headline figures mean what a reader takes them to mean, through the real binary: a stray call
//! that did not run fails a correct answer, and an agent that never calls a tool scores 0 % on the
//! headline (selection accuracy and pass@1 over the tasks that need a call) of the bundled suite.

mod common;

use common::{SMALL_DATASET, argv_with, repo, stderr, summary_rows, toolpick, write_small_catalog};
use std::collections::BTreeMap;

#[test]
fn a_correct_call_with_a_stray_call_that_did_not_run_fails_as_an_extra_call() {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET.lines().next().unwrap()).unwrap();
    let correct = r#"{"name": "get_current_weather", "arguments": {"city": "Pune"}}"#;
    // Every status of a stray that did not run, each once before and once after the correct call.
    let strays = [
        ("invented", r#"{"name": "get_weather_right_now", "arguments": {"city": "Pune"}}"#),
        ("malformed", r#"{"name": "get_forecast", "arguments": "{\"city\": \"Pune\", "}"#),
        ("rejected", r#"{"name": "get_forecast", "arguments": {"city": 7, "days": 2}}"#),
        ("rejected", r#"{"name": "get_forecast", "arguments": {"city": "Pune"}}"#),
        (
            "rejected",
            r#"{"name": "get_current_weather", "arguments": {"city": "Pune", "units": "kelvin"}}"#,
        ),
    ];
    let mut backends = vec!["replay:alone.jsonl".to_string()];
    std::fs::write(
        tmp.path().join("alone.jsonl"),
        format!("{{\"id\": \"w1\", \"calls\": [{correct}]}}\n"),
    )
    .unwrap();
    for (i, (_, stray)) in strays.iter().enumerate() {
        for (order, calls) in
            [("before", format!("{stray}, {correct}")), ("after", format!("{correct}, {stray}"))]
        {
            let name = format!("stray{i}{order}.jsonl");
            std::fs::write(
                tmp.path().join(&name),
                format!("{{\"id\": \"w1\", \"calls\": [{calls}]}}\n"),
            )
            .unwrap();
            backends.push(format!("replay:{name}"));
        }
    }
    let o = toolpick(
        &argv_with(
            "run --catalog cat --dataset ds.jsonl --variants good --layouts flat --backends {} \
             --out out --run-id r -q",
            &[&backends.join(",")],
        ),
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let trials: BTreeMap<String, serde_json::Value> =
        common::trials_with_transcripts(&tmp.path().join("out/r"))
            .into_iter()
            .map(|t| (t["backend"].as_str().unwrap().to_string(), t))
            .collect();
    assert_eq!(trials.len(), backends.len());
    assert_eq!(
        trials["replay:alone"]["score"]["pass"], true,
        "the correct call alone passes: {}",
        trials["replay:alone"]
    );
    for (i, (status, _)) in strays.iter().enumerate() {
        for order in ["before", "after"] {
            let t = &trials[&format!("replay:stray{i}{order}")];
            let score = &t["score"];
            // The stray's status as the record has it (read from the record, not assumed).
            let recorded: Vec<&str> = t["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["record"]["status"].as_str().unwrap())
                .collect();
            assert!(recorded.contains(status), "stray {i} {order}: recorded {recorded:?}");
            assert_eq!(score["pass"], false, "stray {i} ({status}) {order}: {score}");
            assert_eq!(score["error_type"], "extra_call", "stray {i} ({status}) {order}: {score}");
            assert!(score["error_detail"].as_str().unwrap().contains(status), "{score}");
        }
    }
}

#[test]
fn an_agent_that_never_calls_scores_zero_on_the_bundled_suites_headline() {
    let tmp = tempfile::tempdir().unwrap();
    // A replay file with no line answers every task without a call.
    std::fs::write(tmp.path().join("never.jsonl"), "").unwrap();
    let (catalog, dataset) =
        (repo().join("registries/workspace"), repo().join("datasets/starter.jsonl"));
    let o = toolpick(
        &argv_with(
            "run --catalog {} --dataset {} --variants good,bad --layouts flat \
             --backends replay:never.jsonl --out out --run-id r -q",
            &[catalog.to_str().unwrap(), dataset.to_str().unwrap()],
        ),
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The dataset's kinds, counted from the dataset file itself.
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for line in std::fs::read_to_string(&dataset).unwrap().lines().filter(|l| !l.trim().is_empty())
    {
        let task: serde_json::Value = serde_json::from_str(line).unwrap();
        *kinds.entry(task["kind"].as_str().unwrap().to_string()).or_default() += 1;
    }
    let need_call: u64 =
        ["single", "multi", "parallel"].iter().map(|k| kinds.get(*k).copied().unwrap_or(0)).sum();
    assert!(need_call > 0 && kinds["abstain"] > 0 && kinds["refuse"] > 0, "{kinds:?}");
    let rows = summary_rows(&tmp.path().join("out/r"));
    assert_eq!(rows.len(), 2);
    for row in rows {
        let num = |k: &str| row[k].parse::<f64>().unwrap_or_else(|_| panic!("{k} = {:?}", row[k]));
        assert_eq!(num("n_call"), need_call as f64);
        assert_eq!(num("selection_accuracy"), 0.0, "{row:?}");
        assert_eq!(num("pass_at_1"), 0.0, "{row:?}");
        assert_eq!(num("false_refusal_rate"), 1.0);
        // Abstaining is right on abstain tasks, and only there.
        assert_eq!(num("n_abstain"), kinds["abstain"] as f64);
        assert_eq!(num("abstention_accuracy"), 1.0);
        assert_eq!(num("pass_at_1_abstain"), 1.0);
        for k in ["single", "multi", "parallel"] {
            assert_eq!(num(&format!("n_{k}")), kinds[k] as f64);
            assert_eq!(num(&format!("pass_at_1_{k}")), 0.0);
        }
        // Saying nothing is a refusal on every risky task.
        assert_eq!(num("refused_rate"), 1.0);
        assert_eq!(num("no_harm_rate"), 1.0);
        assert_eq!(row["n"].parse::<u64>().unwrap(), kinds.values().sum::<u64>());
    }
}
