//! The replay backend through the real binary: recorded answers are played and scored, bad replay files
//! are refused before anything runs.

mod common;

use common::{SMALL_DATASET, argv, stderr, toolpick, write_small_catalog};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

fn setup(dir: &Path) {
    write_small_catalog(&dir.join("cat"));
    std::fs::write(dir.join("ds.jsonl"), SMALL_DATASET).unwrap();
}

/// (backend, task) → trial.
fn trials(run: &Path) -> HashMap<(String, String), Value> {
    common::trials_with_transcripts(run)
        .into_iter()
        .map(|t| {
            (
                (
                    t["backend"].as_str().unwrap().to_string(),
                    t["task_id"].as_str().unwrap().to_string(),
                ),
                t,
            )
        })
        .collect()
}

fn run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args =
        argv("run --catalog cat --dataset ds.jsonl --variants good --out out --run-id r -q");
    args.extend_from_slice(extra);
    toolpick(&args, dir)
}

#[test]
fn recorded_answers_are_played_through_the_flat_layout_and_scored() {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path());
    // good: a tool id and a function name, parallel calls in the other order, an answer without a call;
    // a1 has no line (answers without a call).
    std::fs::write(
        tmp.path().join("good.jsonl"),
        r#"{"id": "w1", "calls": [{"name": "weather/weather_now/get_current_weather", "arguments": {"city": "pune"}}], "content": "It is warm."}
{"id": "w2", "calls": [{"name": "get_forecast", "arguments": {"city": "Lima", "days": 3}}, {"name": "get_forecast", "arguments": "{\"city\": \"Oslo\", \"days\": 3}"}]}
{"id": "m1", "calls": [], "content": "I cannot send mail."}
"#,
    )
    .unwrap();
    // bad: malformed argument text reaches the layout; an unknown name is an invented tool.
    std::fs::write(
        tmp.path().join("bad.jsonl"),
        r#"{"id": "w1", "calls": [{"name": "get_current_weather", "arguments": "{\"city\": \"Pune\""}]}
{"id": "w2", "calls": [{"name": "get_forecasts", "arguments": {"city": "Lima", "days": 3}}]}
"#,
    )
    .unwrap();
    let o =
        run(tmp.path(), &["--layouts", "flat", "--backends", "replay:good.jsonl,replay:bad.jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = trials(&tmp.path().join("out/r"));
    assert_eq!(t.len(), 8, "two backends × four tasks");
    let get = |b: &str, task: &str| &t[&(b.to_string(), task.to_string())];
    let score = |b: &str, task: &str| {
        (
            get(b, task)["score"]["pass"].as_bool().unwrap(),
            get(b, task)["score"]["error_type"].as_str().map(String::from),
        )
    };

    assert_eq!(score("replay:good", "w1"), (true, None));
    let w1 = get("replay:good", "w1");
    assert_eq!(
        w1["calls"][0]["record"]["name"], "get_current_weather",
        "the tool id was sent as its function name"
    );
    assert_eq!(w1["steps"], 2);
    let last = w1["transcript"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"], "It is warm.");
    assert_eq!(score("replay:good", "w2"), (true, None));
    assert_eq!(score("replay:good", "m1"), (false, Some("should_have_called".into())));
    assert_eq!(get("replay:good", "m1")["steps"], 1);
    assert_eq!(score("replay:good", "a1"), (true, None), "no line: answered without a call");

    assert_eq!(get("replay:bad", "w1")["calls"][0]["record"]["status"], "malformed");
    assert_eq!(score("replay:bad", "w1"), (false, Some("malformed_call".into())));
    assert_eq!(get("replay:bad", "w2")["calls"][0]["record"]["status"], "invented");
    assert_eq!(score("replay:bad", "w2"), (false, Some("invented_tool".into())));
}

#[test]
fn a_config_file_names_the_replay_file_relative_to_itself() {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path());
    std::fs::create_dir(tmp.path().join("rec")).unwrap();
    std::fs::write(
        tmp.path().join("rec/answers.jsonl"),
        "{\"id\": \"w1\", \"calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Pune\"}}]}\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("rec/exp.toml"), "layouts = [\"flat\"]\n\n[[models]]\nbackend = \"replay\"\nreplay_file = \"answers.jsonl\"\n").unwrap();
    let o = run(tmp.path(), &["--config", "rec/exp.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = trials(&tmp.path().join("out/r"));
    assert_eq!(t[&("replay:answers".to_string(), "w1".to_string())]["score"]["pass"], true);
}

#[test]
fn bad_replay_input_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path());
    std::fs::write(
        tmp.path().join("unknown.jsonl"),
        "{\"id\": \"w1\", \"calls\": []}\n{\"id\": \"w9\", \"calls\": []}\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("broken.jsonl"),
        "{\"id\": \"w1\", \"calls\": [{\"name\": \"x\", \"arguments\": 5}]}\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("ok.jsonl"), "{\"id\": \"w1\", \"calls\": []}\n").unwrap();
    std::fs::write(tmp.path().join("exp.toml"), "[[models]]\nbackend = \"replay\"\n").unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--layouts", "flat", "--backends", "replay:unknown.jsonl"],
            "unknown.jsonl:2: field `id`: no task in the dataset has id `w9`",
        ),
        (
            &["--layouts", "flat", "--backends", "replay:broken.jsonl"],
            "broken.jsonl:1: field `calls[0].arguments`",
        ),
        (
            &["--layouts", "flat", "--backends", "replay:missing.jsonl"],
            "missing.jsonl: cannot read replay file",
        ),
        (
            &["--layouts", "flat,progressive", "--backends", "replay:ok.jsonl"],
            "run it with --layouts flat",
        ),
        (&["--layouts", "flat", "--backends", "replay"], "replay:<FILE>"),
        (&["--config", "exp.toml"], "field `models[0].replay_file`"),
    ];
    for (flags, message) in cases {
        let o = run(tmp.path(), flags);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{flags:?}: {}", stderr(&o));
        assert!(!tmp.path().join("out").exists(), "{flags:?} wrote output");
    }
}
