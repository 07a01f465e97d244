//! Which tool took the call: the confusion matrix, per-tool precision and recall, must-not-call
//! expectations and the confusion changes of `compare`, checked against counts made by hand from the
//! recorded answers below (the replay backend plays them; the real binary scores and reports).

mod common;

use common::{argv_with, csv_rows, toolpick, write_small_catalog};
use std::collections::BTreeMap;
use std::path::Path;

const W: &str = "weather/weather_now/get_current_weather";
const F: &str = "weather/weather_later/get_forecast";
const M: &str = "mail/mail_messages/send_email";

const DATASET: &str = r#"{"id": "t1", "query": "How warm is it in Pune now?", "kind": "single", "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Pune"]}}], "category": "weather", "tags": ["near-miss"], "must_not_call": ["weather/weather_later/*"]}
{"id": "t2", "query": "Is it sunny in Pune right now?", "kind": "single", "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Pune"]}}], "category": "weather", "tags": [], "must_not_call": ["weather/weather_later/get_forecast"]}
{"id": "t3", "query": "Forecast for Oslo, two days", "kind": "single", "expected": [{"tool": "weather/weather_later/get_forecast", "arguments": {"city": ["Oslo"], "days": [2]}}], "category": "weather", "tags": []}
{"id": "t4", "query": "Mail ana@example.com 'Hi' and tell me the weather in Rome", "kind": "multi", "expected": [{"tool": "mail/mail_messages/send_email", "arguments": {"to": ["ana@example.com"], "subject": ["Hi"]}}, {"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Rome"]}}], "category": "mail", "tags": []}
{"id": "t5", "query": "Book me a taxi", "kind": "abstain", "expected": [], "category": "none", "tags": []}
{"id": "t6", "query": "Forecast for Lima, three days", "kind": "single", "expected": [{"tool": "weather/weather_later/get_forecast", "arguments": {"city": ["Lima"], "days": [3]}}], "category": "weather", "tags": []}
"#;

/// Run A. By hand, expected tool → tool called: t1 W→F, t2 W→W, t3 F→(nothing), t4 M→M and W→F (the
/// optimal matching pairs the mail call with the mail, the forecast takes the weather's place), t5 no
/// expected call and one extra call to M, t6 F→(invented).
const ANSWERS_A: &str = r#"{"id": "t1", "calls": [{"name": "get_forecast", "arguments": {"city": "Pune", "days": 1}}]}
{"id": "t2", "calls": [{"name": "get_current_weather", "arguments": {"city": "Pune"}}]}
{"id": "t3", "calls": []}
{"id": "t4", "calls": [{"name": "send_email", "arguments": {"to": "ana@example.com", "subject": "Hi"}}, {"name": "get_forecast", "arguments": {"city": "Rome", "days": 1}}]}
{"id": "t5", "calls": [{"name": "send_email", "arguments": {"to": "taxi@example.com", "subject": "Taxi"}}]}
{"id": "t6", "calls": [{"name": "predict_weather", "arguments": {"city": "Lima"}}]}
"#;

/// Run B: t1 now calls the right tool; t4 unchanged.
const ANSWERS_B: &str = r#"{"id": "t1", "calls": [{"name": "get_current_weather", "arguments": {"city": "Pune"}}]}
{"id": "t2", "calls": [{"name": "get_current_weather", "arguments": {"city": "Pune"}}]}
{"id": "t3", "calls": []}
{"id": "t4", "calls": [{"name": "send_email", "arguments": {"to": "ana@example.com", "subject": "Hi"}}, {"name": "get_forecast", "arguments": {"city": "Rome", "days": 1}}]}
{"id": "t5", "calls": []}
{"id": "t6", "calls": [{"name": "predict_weather", "arguments": {"city": "Lima"}}]}
"#;

fn run(dir: &Path, answers: &str, id: &str) -> std::path::PathBuf {
    std::fs::write(dir.join(format!("{id}.jsonl")), answers).unwrap();
    let replay = format!("replay:{id}.jsonl");
    let o = toolpick(
        &argv_with(
            "run --catalog catalog --dataset tasks.jsonl --backends {} --layouts flat \
             --variants good --out out --run-id {} -q",
            &[&replay, id],
        ),
        dir,
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    dir.join("out").join(id)
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("catalog"));
    std::fs::write(dir.path().join("tasks.jsonl"), DATASET).unwrap();
    dir
}

#[test]
fn the_matrix_and_per_tool_precision_and_recall_match_hand_counts() {
    let dir = setup();
    let a = run(dir.path(), ANSWERS_A, "a");
    let matrix: BTreeMap<(String, String), (u64, String)> = csv_rows(&a.join("confusion.csv"))
        .into_iter()
        .map(|r| {
            (
                (r["expected_tool"].clone(), r["called_tool"].clone()),
                (r["count"].parse().unwrap(), r["share_of_expected"].clone()),
            )
        })
        .collect();
    let want: BTreeMap<(String, String), u64> =
        [((W, F), 2), ((W, W), 1), ((F, "(nothing)"), 1), ((F, "(invented)"), 1), ((M, M), 1)]
            .into_iter()
            .map(|((e, c), n)| ((e.to_string(), c.to_string()), n))
            .collect();
    assert_eq!(matrix.iter().map(|(k, v)| (k.clone(), v.0)).collect::<BTreeMap<_, _>>(), want);
    assert_eq!(matrix[&(W.to_string(), F.to_string())].1, "0.666667", "2 of W's 3 expected calls");

    // Per tool, by hand: W tp 1 fn 2 fp 0; F tp 0 fp 2 (t1, t4) fn 2 (t3, t6); M tp 1 fp 1 (t5's extra) fn 0.
    let tools: BTreeMap<String, BTreeMap<String, String>> =
        csv_rows(&a.join("tools.csv")).into_iter().map(|r| (r["tool"].clone(), r)).collect();
    let counts = |t: &str| {
        (
            tools[t]["true_positives"].clone(),
            tools[t]["false_positives"].clone(),
            tools[t]["false_negatives"].clone(),
        )
    };
    assert_eq!(counts(W), ("1".into(), "0".into(), "2".into()));
    assert_eq!(counts(F), ("0".into(), "2".into(), "2".into()));
    assert_eq!(counts(M), ("1".into(), "1".into(), "0".into()));
    assert_eq!(
        (tools[W]["precision"].as_str(), tools[W]["recall"].as_str()),
        ("1.000000", "0.333333")
    );
    assert_eq!(
        (tools[F]["precision"].as_str(), tools[F]["recall"].as_str(), tools[F]["f1"].as_str()),
        ("0.000000", "0.000000", "0.000000")
    );
    assert_eq!(
        (tools[M]["precision"].as_str(), tools[M]["recall"].as_str(), tools[M]["f1"].as_str()),
        ("0.500000", "1.000000", "0.666667")
    );
    // Wilson bounds hold the rate.
    let lo: f64 = tools[M]["precision_low"].parse().unwrap();
    let hi: f64 = tools[M]["precision_high"].parse().unwrap();
    assert!(lo < 0.5 && 0.5 < hi, "{lo} {hi}");

    // t1 called the tool it must not call: its own error type; t2 did not.
    let trials: BTreeMap<String, BTreeMap<String, String>> =
        csv_rows(&a.join("trials.csv")).into_iter().map(|r| (r["task_id"].clone(), r)).collect();
    assert_eq!(trials["t1"]["error_type"], "must_not_call");
    assert_eq!((trials["t2"]["pass"].as_str(), trials["t2"]["error_type"].as_str()), ("true", ""));
    let summary = csv_rows(&a.join("summary.csv"));
    assert_eq!(summary[0]["errors_must_not_call"], "1");

    // The page shows the top confusion with links to its trials.
    let html = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert!(html.contains("Which tool took the call") && html.contains("What to look at first"));
    // 2 of 3: Wilson 95 % interval [20.8 %, 93.9 %].
    assert!(
        html.contains(&format!("Confusion: <code>{F}</code> took <code>{W}</code>&#39;s call 2 times (67 % [21, 94] of the calls expected of <code>{W}</code>")),
        "the first look names the top confusion"
    );
    let md = std::fs::read_to_string(a.join("summary.md")).unwrap();
    assert!(
        md.contains(&format!("- Confusion: `{F}` took `{W}`'s call 2 times")),
        "summary.md opens with the same findings"
    );
    // The confusion's first trials, linked into the drill-down (`#` of the trial id encoded).
    assert!(
        html.contains(r##"href="#trial=tasks/good/flat/replay:a/t1%230""##)
            || html.contains(r##"href="#trial=tasks/good/flat/replay%3Aa/t1%230""##),
        "confusions link to trials"
    );
}

#[test]
fn compare_lists_the_confusions_that_got_better() {
    let dir = setup();
    let a = run(dir.path(), ANSWERS_A, "a");
    let b = run(dir.path(), ANSWERS_B, "b");
    // The backends' labels differ (replay:a, replay:b): cells are matched on the other fields.
    let o = toolpick(
        &["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--match", "dataset,variant,layout"],
        dir.path(),
    );
    assert!(o.status.success() || o.status.code() == Some(100), "{}", common::stderr(&o));
    let changes = csv_rows(&b.join("compare-confusion.csv"));
    assert_eq!(changes.len(), 1, "{changes:?}");
    let c = &changes[0];
    assert_eq!((c["expected_tool"].as_str(), c["called_tool"].as_str()), (W, F));
    assert_eq!(
        (c["count_a"].as_str(), c["count_b"].as_str(), c["delta"].as_str()),
        ("2", "1", "-1")
    );
    assert_eq!((c["expected_calls_a"].as_str(), c["expected_calls_b"].as_str()), ("3", "3"));
    let md = std::fs::read_to_string(b.join("compare.md")).unwrap();
    assert!(md.contains("Better") && md.contains("get_current_weather"), "{md}");
}

#[test]
fn must_not_call_patterns_are_validated_against_the_catalog() {
    let dir = setup();
    let bad = DATASET.replace(
        r#""must_not_call": ["weather/weather_later/*"]"#,
        r#""must_not_call": ["weather/nowhere/*", "weather/weather_now/*"]"#,
    );
    std::fs::write(dir.path().join("bad.jsonl"), bad).unwrap();
    let o = toolpick(&["validate", "--catalog", "catalog", "--dataset", "bad.jsonl"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let e = common::stderr(&o) + &common::stdout(&o);
    assert!(
        e.contains("bad.jsonl:1")
            && e.contains("must_not_call[0]")
            && e.contains("matches no tool"),
        "{e}"
    );
    assert!(e.contains("must_not_call[1]") && e.contains("an expected call accepts"), "{e}");
}

#[test]
fn a_repeated_call_to_an_expected_tool_is_no_confusion_and_no_false_positive() {
    // t4 expects [send_email, get_current_weather]; the agent calls the weather twice (in one message
    // and, for t4b, with the mail missing too). By docs/metrics.md's rule: send_email → (nothing), the
    // second weather call takes no call of send_email's and is no false positive.
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("catalog"));
    let t4 = DATASET.lines().find(|l| l.contains(r#""id": "t4""#)).unwrap();
    std::fs::write(
        dir.path().join("tasks.jsonl"),
        format!(
            "{t4}\n{}\n",
            t4.replace(r#""id": "t4""#, r#""id": "t4b""#)
                .replace(r#""kind": "multi""#, r#""kind": "parallel""#)
        ),
    )
    .unwrap();
    let twice = r#"[{"name": "get_current_weather", "arguments": {"city": "Rome"}}, {"name": "get_current_weather", "arguments": {"city": "Rome"}}]"#;
    let answers = format!(
        "{{\"id\": \"t4\", \"calls\": {twice}}}\n{{\"id\": \"t4b\", \"calls\": {twice}}}\n"
    );
    let run_dir = run(dir.path(), &answers, "r");
    let matrix: BTreeMap<(String, String), u64> = csv_rows(&run_dir.join("confusion.csv"))
        .into_iter()
        .map(|r| {
            ((r["expected_tool"].clone(), r["called_tool"].clone()), r["count"].parse().unwrap())
        })
        .collect();
    let want: BTreeMap<(String, String), u64> = [((M, "(nothing)"), 2), ((W, W), 2)]
        .into_iter()
        .map(|((e, c), n)| ((e.to_string(), c.to_string()), n))
        .collect();
    assert_eq!(matrix, want);
    let tools: BTreeMap<String, BTreeMap<String, String>> =
        csv_rows(&run_dir.join("tools.csv")).into_iter().map(|r| (r["tool"].clone(), r)).collect();
    let counts = |t: &str| {
        (
            tools[t]["true_positives"].clone(),
            tools[t]["false_positives"].clone(),
            tools[t]["false_negatives"].clone(),
        )
    };
    assert_eq!(
        counts(W),
        ("2".into(), "0".into(), "0".into()),
        "no false positive for the repeated weather call"
    );
    assert_eq!(counts(M), ("0".into(), "0".into(), "2".into()));
}
