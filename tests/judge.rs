//! Judged final answers end to end: the real binary, the judge over HTTP against the mock endpoint's
//! deterministic judge mode (started here, in this process), verdicts checked against values worked
//! out by hand from the answers below.

mod common;

use common::{argv, argv_with, repo, stdout, toolpick, write_small_catalog};
use serde_json::Value;
use std::path::Path;
use toolpick::mock::{self, Fault, MockConfig, MockServer};

struct Mock {
    _rt: tokio::runtime::Runtime,
    server: MockServer,
}

fn mock(config: MockConfig) -> Mock {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = rt.block_on(mock::spawn("127.0.0.1:0".parse().unwrap(), config)).unwrap();
    Mock { _rt: rt, server }
}

/// Four judged tasks and one that is not (abstain): claims on two, pass-rate on the others.
const DATASET: &str = r#"{"id": "w1", "query": "How warm is it in Pune right now?", "kind": "single", "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Pune"]}}], "category": "weather", "tags": [], "claims": ["it is 21 degrees in Pune", "the sky is clear"]}
{"id": "w2", "query": "Is the sky clear in Oslo?", "kind": "single", "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Oslo"]}}], "category": "weather", "tags": [], "claims": ["the sky over Oslo is clear", "the temperature is 21 degrees", "no rain is expected"]}
{"id": "m1", "query": "What's the weather like in Rome?", "kind": "single", "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Rome"]}}], "category": "weather", "tags": []}
{"id": "m2", "query": "Send bob@example.com a note titled \"Lunch\"", "kind": "single", "expected": [{"tool": "mail/mail_messages/send_email", "arguments": {"to": ["bob@example.com"], "subject": ["Lunch"]}}], "category": "mail", "tags": []}
{"id": "a1", "query": "Book me a taxi to the airport", "kind": "abstain", "expected": [], "category": "none", "tags": []}
"#;

/// The recorded answers (replay backend): the calls and the final answer of each task.
///
/// By hand, with the mock judge's word rule (a fact is stated when all its words of three letters or
/// more are in the answer, partly when half are):
/// - w1 (claims): "it is 21 degrees in Pune" → 21, degrees, pune: all in the answer → fulfilled;
///   "the sky is clear" → sky, clear → fulfilled. Coverage 1.0, done (≥ 0.75).
/// - w2 (claims): "the sky over Oslo is clear" → sky, over, oslo, clear: sky, oslo, clear present,
///   "over" missing → 3 of 4 → partly (0.5); "the temperature is 21 degrees" → temperature, 21, degrees
///   all present → fulfilled (1); "no rain is expected" → rain, expected: none → not (0). Coverage
///   1.5 / 3 = 0.5, not done.
/// - m1 (pass-rate, no claims): the answer check is Unsure (it sees no facts, and the answer does not
///   decline); the process check finds half or
///   more of the weather result's words ({"temp_c": 21, "sky": "clear"} → temp, 21, sky, clear: three
///   of four) in the answer → Solved, every round: score 1, done.
/// - m2 (pass-rate): the answer gives up ("I give up …") → Unsolved without asking: score 0.
/// - a1 (abstain): not judged for solvability.
const ANSWERS: &str = r#"{"id": "w1", "calls": [{"name": "get_current_weather", "arguments": {"city": "Pune"}}], "content": "Pune is at 21 degrees right now and the sky is clear."}
{"id": "w2", "calls": [{"name": "get_current_weather", "arguments": {"city": "Oslo"}}], "content": "Oslo: clear sky, temperature 21 degrees."}
{"id": "m1", "calls": [{"name": "get_current_weather", "arguments": {"city": "Rome"}}], "content": "Rome: 21 °C under a clear sky."}
{"id": "m2", "calls": [], "content": "I give up: I cannot send mail."}
{"id": "a1", "calls": [], "content": "I cannot book taxis."}
"#;

fn setup(dir: &Path) {
    write_small_catalog(&dir.join("catalog"));
    std::fs::write(dir.join("tasks.jsonl"), DATASET).unwrap();
    std::fs::write(dir.join("answers.jsonl"), ANSWERS).unwrap();
}

fn run_args<'a>(judge: &'a str, run_id: &'a str) -> Vec<&'a str> {
    argv_with(
        "run --catalog catalog --dataset tasks.jsonl --backends replay:answers.jsonl \
         --layouts flat --variants good --out out --run-id {} --no-cache -q --judge {}",
        &[run_id, judge],
    )
}

fn judgements(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("judgements.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn summary_cell(run: &Path) -> Value {
    let s: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let cells = s["cells"].as_array().or_else(|| s.as_array()).cloned().unwrap_or_default();
    assert_eq!(cells.len(), 1, "{s}");
    cells[0].clone()
}

#[test]
fn judged_run_matches_hand_computed_verdicts() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let judge = format!("mock-judge@{}", m.server.base_url());
    let o = toolpick(&run_args(&judge, "r"), dir.path());
    assert!(o.status.success(), "{}", common::stderr(&o));
    let run = dir.path().join("out/r");
    // The judge's columns agree across summary.csv, summary.parquet and summary.json.
    common::assert_summary_formats_agree(&run);
    let js = judgements(&run);
    let by: std::collections::BTreeMap<String, Value> =
        js.iter().map(|j| (j["trial_id"].as_str().unwrap().to_string(), j.clone())).collect();
    assert_eq!(by.len(), 4, "the abstain task is not judged: {:?}", by.keys());
    let get = |task: &str| {
        by.iter().find(|(k, _)| k.contains(&format!("/{task}#"))).map(|(_, v)| v.clone()).unwrap()
    };
    let w1 = get("w1");
    assert_eq!(w1["method"], "claims");
    assert_eq!(w1["score"], 1.0);
    assert_eq!(w1["done"], true);
    let w2 = get("w2");
    let statuses: Vec<&str> =
        w2["claims"].as_array().unwrap().iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["partly", "fulfilled", "not"]);
    assert_eq!(w2["score"], 0.5);
    assert_eq!(w2["done"], false);
    let m1 = get("m1");
    assert_eq!(m1["method"], "pass-rate");
    let rounds = m1["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3, "three rounds by default");
    for r in rounds {
        assert_eq!(
            (r["answer_status"].as_str(), r["process_status"].as_str(), r["status"].as_str()),
            (Some("unsure"), Some("solved"), Some("solved"))
        );
    }
    assert_eq!((m1["score"].as_f64(), m1["done"].as_bool()), (Some(1.0), Some(true)));
    let m2 = get("m2");
    assert_eq!(m2["short_circuit"], "the answer gives up");
    assert_eq!(
        (m2["score"].as_f64(), m2["usage"]["prompt_tokens"].as_u64()),
        (Some(0.0), Some(0)),
        "a give-up is not sent to the judge"
    );

    // The summary: SoPR over m1, m2 = (1 + 0) / 2; coverage over w1, w2 = (1 + 0.5) / 2; done 2 of 4.
    let cell = summary_cell(&run);
    let j = &cell["judge"];
    assert_eq!(j["judged"], 4);
    assert_eq!(j["errors"], 0);
    assert_eq!(j["sopr"]["mean"], 0.5);
    assert_eq!(j["sopr"]["n"], 2);
    assert_eq!(
        j["sopr"]["round_std"], 0.0,
        "a deterministic judge gives the same verdict every round"
    );
    assert_eq!(j["coverage"]["mean"], 0.75);
    assert_eq!((j["done"]["successes"].as_u64(), j["done"]["n"].as_u64()), (Some(2), Some(4)));
    // Joint view: w1 and m1 called the right tool and are done; w2 right tool, not done; m2 made no
    // call (wrong tools) and is not done.
    assert_eq!(
        j["joint"],
        serde_json::json!({"tools_done": 2, "tools_not_done": 1, "wrong_tools_done": 0, "wrong_tools_not_done": 1})
    );
    // Judge tokens are the judge's own: the agent (replay) reported none.
    assert!(j["prompt_tokens"].as_u64().unwrap() > 0);
    let trials = std::fs::read_to_string(run.join("trials.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(trials.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| {
        header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"))
    };
    for r in rows.records() {
        let r = r.unwrap();
        // The agent (replay, in-process) reported no tokens: null, never the judge's.
        assert_eq!(&r[col("prompt_tokens")], "", "the agent's tokens never include the judge's");
        if &r[col("task_id")] == "w2" {
            assert_eq!(
                (&r[col("judge_method")], &r[col("judge_score")], &r[col("judge_done")]),
                ("claims", "0.500000", "false")
            );
        }
        if &r[col("task_id")] == "a1" {
            assert_eq!(&r[col("judge_method")], "", "not judged");
        }
    }
    // trials.parquet carries the same verdicts, typed (nulls for the trial not judged).
    {
        use polars_io::SerReader;
        let df = polars_io::parquet::read::ParquetReader::new(
            std::fs::File::open(run.join("trials.parquet")).unwrap(),
        )
        .finish()
        .unwrap();
        let tasks = df.column("task_id").unwrap().str().unwrap().clone();
        let score = df.column("judge_score").unwrap().f64().unwrap().clone();
        let done = df.column("judge_done").unwrap().bool().unwrap().clone();
        let method = df.column("judge_method").unwrap().str().unwrap().clone();
        let judge_tokens = df.column("judge_prompt_tokens").unwrap().u64().unwrap().clone();
        for i in 0..df.height() {
            match tasks.get(i).unwrap() {
                "w2" => assert_eq!(
                    (method.get(i), score.get(i), done.get(i)),
                    (Some("claims"), Some(0.5), Some(false))
                ),
                "m1" => assert_eq!(
                    (method.get(i), score.get(i), done.get(i)),
                    (Some("pass-rate"), Some(1.0), Some(true))
                ),
                "a1" => assert_eq!(
                    (method.get(i), score.get(i), judge_tokens.get(i)),
                    (None, None, None),
                    "not judged: nulls"
                ),
                _ => {}
            }
        }
        let summary = polars_io::parquet::read::ParquetReader::new(
            std::fs::File::open(run.join("summary.parquet")).unwrap(),
        )
        .finish()
        .unwrap();
        assert_eq!(summary.column("sopr").unwrap().f64().unwrap().get(0), Some(0.5));
        assert_eq!(summary.column("claim_coverage").unwrap().f64().unwrap().get(0), Some(0.75));
    }
    let run_json: Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        run_json["judge"]["prompts"], w1["prompts"],
        "run.json records the prompt set's digest"
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains("Judged final answers") && html.contains("no rain is expected"),
        "the drill-down carries the verdicts"
    );

    // Judged again with the same judge: every judgement is kept, nothing is asked.
    let before = m.server.requests();
    let o = toolpick(&["report", "out/r", "--judge", &judge, "--judge-no-preflight"], dir.path());
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(stdout(&o).contains("4 kept from before"), "{}", stdout(&o));
    assert_eq!(m.server.requests(), before, "nothing asked again");
    assert_eq!(judgements(&run), js, "judgements unchanged");
}

#[test]
fn judge_failures_stay_errors_until_retried() {
    let healthy = mock(MockConfig::default());
    let failing = mock(MockConfig { faults: vec![(Fault::ServerError, 1)], ..Default::default() });
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let judge = format!("mock-judge@{}", failing.server.base_url());
    let mut args = run_args(&judge, "f");
    args.extend(["--judge-max-attempts", "2", "--judge-no-preflight"]);
    let o = toolpick(&args, dir.path());
    assert!(o.status.success(), "a failing judge does not fail the run: {}", common::stderr(&o));
    let run = dir.path().join("out/f");
    let js = judgements(&run);
    let asked: Vec<&Value> = js.iter().filter(|j| j["short_circuit"].is_null()).collect();
    assert_eq!(asked.len(), 3, "w1, w2, m1 need the judge");
    for j in &asked {
        assert!(j["error"].as_str().unwrap().contains("server_error"), "{j}");
        assert!(
            j["score"].is_null() && j["done"].is_null(),
            "a failed judgement has no verdict, not Unsolved: {j}"
        );
    }
    let cell = summary_cell(&run);
    assert_eq!(cell["judge"]["errors"], 3);
    assert_eq!(cell["judge"]["judged"], 1, "only the give-up has a verdict");

    // A rerun without --retry-errors keeps the errors; with it, the healthy judge fills them in.
    let healthy_judge = format!("mock-judge@{}", healthy.server.base_url());
    let o = toolpick(&["report", "out/f", "--judge", &healthy_judge], dir.path());
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(summary_cell(&run)["judge"]["errors"], 3);
    let o = toolpick(&["report", "out/f", "--judge", &healthy_judge, "--retry-errors"], dir.path());
    assert!(o.status.success(), "{}", common::stderr(&o));
    let cell = summary_cell(&run);
    assert_eq!(cell["judge"]["errors"], 0);
    assert_eq!(cell["judge"]["judged"], 4);
    assert_eq!(cell["judge"]["sopr"]["mean"], 0.5);
}

#[test]
fn other_prompts_are_a_new_judgement_and_a_bad_prompt_dir_is_refused() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let judge = format!("mock-judge@{}", m.server.base_url());
    assert!(toolpick(&run_args(&judge, "p"), dir.path()).status.success());
    let run = dir.path().join("out/p");
    let first = judgements(&run)[0]["prompts"].clone();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    let claim = std::fs::read_to_string(repo().join("prompts/judge/claim.txt")).unwrap();
    std::fs::write(prompts.join("claim.txt"), format!("Be strict.\n{claim}")).unwrap();
    let o =
        toolpick(&["report", "out/p", "--judge", &judge, "--judge-prompts", "prompts"], dir.path());
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        stdout(&o).contains("judged 4 trials"),
        "new prompts: every trial judged again: {}",
        stdout(&o)
    );
    let second = judgements(&run)[0]["prompts"].clone();
    assert_ne!(first, second);
    let run_json: Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["judge"]["prompts"], second);

    std::fs::write(prompts.join("answer_status.txt"), "Grade it.").unwrap();
    let before = std::fs::read(run.join("summary.csv")).unwrap();
    let o =
        toolpick(&["report", "out/p", "--judge", &judge, "--judge-prompts", "prompts"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("answer_status.txt")
            && common::stderr(&o).contains("{{query}}"),
        "{}",
        common::stderr(&o)
    );
    assert_eq!(
        std::fs::read(run.join("summary.csv")).unwrap(),
        before,
        "a refused judging leaves the reports as they were"
    );
}

#[test]
fn judge_check_scores_the_shipped_labels() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let judge = format!("mock-judge@{}", m.server.base_url());
    let labels = repo().join("datasets/judge/labels.jsonl");
    let out = dir.path().join("check.json");
    let o = toolpick(
        &argv_with(
            "judge-check {} --judge {} --judge-b {} --no-cache --out {}",
            &[
                labels.to_str().unwrap(),
                &judge,
                &format!("mock-b@{}", m.server.base_url()),
                out.to_str().unwrap(),
            ],
        ),
        dir.path(),
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let a = &report["judges"][0];
    let n_labels =
        std::fs::read_to_string(&labels).unwrap().lines().filter(|l| !l.trim().is_empty()).count()
            as u64;
    assert!(n_labels >= 60);
    let agreement = &a["agreement"];
    let table = agreement["confusion"].as_array().unwrap();
    let cells: Vec<u64> = table
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|c| c.as_u64().unwrap()))
        .collect();
    assert_eq!(
        cells.iter().sum::<u64>() + a["errors"].as_u64().unwrap(),
        n_labels,
        "every label is in the table or an error"
    );
    // The table's rows are the humans' verdicts: the shipped set is balanced.
    assert_eq!(cells[0] + cells[1], cells[2] + cells[3], "balanced labels");
    // κ recomputed from the table by hand.
    let n = cells.iter().sum::<u64>() as f64;
    let po = (cells[0] + cells[3]) as f64 / n;
    let (h, j) = ((cells[0] + cells[1]) as f64 / n, (cells[0] + cells[2]) as f64 / n);
    let pe = h * j + (1.0 - h) * (1.0 - j);
    let kappa = agreement["kappa"][0].as_f64().unwrap();
    assert!((kappa - (po - pe) / (1.0 - pe)).abs() < 1e-9, "{agreement}");
    assert!((agreement["accuracy"].as_f64().unwrap() - po).abs() < 1e-12);
    // Two copies of one deterministic judge agree perfectly with each other.
    assert_eq!(report["between_judges"]["accuracy"], 1.0);
    assert!(stdout(&o).contains("Cohen's κ"), "{}", stdout(&o));
}

#[test]
fn a_label_for_an_unknown_task_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("labels.jsonl"), "{\"id\": \"l1\", \"task\": \"dev-001\", \"answer\": \"x\", \"human\": \"solved\"}\n{\"id\": \"l2\", \"task\": \"nope\", \"answer\": \"x\", \"human\": \"solved\"}\n").unwrap();
    let o = toolpick(
        &["judge-check", "labels.jsonl", "--judge", "m@http://127.0.0.1:9/v1"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let e = common::stderr(&o);
    assert!(e.contains("labels.jsonl:2") && e.contains("nope"), "{e}");
}

#[test]
fn a_stabletoolbench_import_reports_sopr_next_to_selection() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let dataset = format!("stabletoolbench:{}", common::shared("stabletoolbench").display());
    let judge = format!("mock-judge@{}", m.server.base_url());
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends lexical,oracle --layouts flat --variants good --out out \
             --run-id s --no-cache -q --judge {}",
            &[&dataset, &judge],
        ),
        dir.path(),
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let printed = stdout(&o);
    assert!(printed.lines().any(|l| l.contains("selection%") && l.contains("SoPR%")), "{printed}");
    let text = std::fs::read_to_string(dir.path().join("out/s/summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| {
        header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"))
    };
    let mut sopr = std::collections::BTreeMap::new();
    for r in rows.records() {
        let r = r.unwrap();
        // Every StableToolBench query is solvable and has no claims: all judged by pass rate.
        assert_eq!(&r[col("judged_n")], &r[col("n")], "{r:?}");
        assert_eq!(&r[col("claim_coverage")], "");
        let s: f64 = r[col("sopr")].parse().unwrap();
        let (lo, hi): (f64, f64) =
            (r[col("sopr_low")].parse().unwrap(), r[col("sopr_high")].parse().unwrap());
        assert!(lo <= s && s <= hi, "the interval holds the mean: {lo} {s} {hi}");
        sopr.insert(r[col("backend")].to_string(), s);
    }
    assert!(
        sopr["oracle"] > sopr["lexical"],
        "the answer key finishes more tasks than the baseline: {sopr:?}"
    );
    // Cross-check the cell against the judgements file: SoPR is the mean of the trial scores.
    let judged: Vec<Value> = judgements(&dir.path().join("out/s"));
    let oracle: Vec<f64> = judged
        .iter()
        .filter(|j| j["trial_id"].as_str().unwrap().contains("/oracle/"))
        .map(|j| j["score"].as_f64().unwrap())
        .collect();
    let mean = oracle.iter().sum::<f64>() / oracle.len() as f64;
    assert!((mean - sopr["oracle"]).abs() < 1e-6, "{mean} vs {}", sopr["oracle"]);
}

/// The mock judge's word rule, written again here from its documentation: the content words of a
/// text, and how much of a fact an answer states.
fn words(text: &str) -> std::collections::HashSet<String> {
    const STOP: [&str; 24] = [
        "the", "and", "for", "with", "was", "are", "has", "have", "that", "this", "from", "its",
        "our", "your", "into", "not", "all", "any", "but", "who", "what", "which", "there",
        "their",
    ];
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| {
            (w.chars().count() >= 3 || (!w.is_empty() && w.chars().all(|c| c.is_ascii_digit())))
                && !STOP.contains(&w.as_str())
        })
        .collect()
}

fn stated(fact: &str, answer: &std::collections::HashSet<String>) -> f64 {
    let want = words(fact);
    let have = want.iter().filter(|w| answer.contains(*w)).count();
    if have == want.len() {
        1.0
    } else if 2 * have >= want.len() {
        0.5
    } else {
        0.0
    }
}

#[test]
fn the_bundled_suite_judged_through_the_mock_matches_coverage_worked_out_from_the_answers() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let judge = format!("mock-judge@{}", m.server.base_url());
    let base = m.server.base_url();
    let o = toolpick(
        &argv_with(
            "run --backends lexical,openai --model mock --base-url {} --layouts flat --out out \
             --run-id b --no-cache -q --judge {}",
            &[&base, &judge],
        ),
        dir.path(),
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let run = dir.path().join("out/b");
    let trials: Vec<Value> = std::fs::read_to_string(run.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id: std::collections::BTreeMap<String, Value> = judgements(&run)
        .into_iter()
        .map(|j| (j["trial_id"].as_str().unwrap().to_string(), j))
        .collect();
    // Per cell: (judged, sum of coverage, done) worked out from each trial's final answer and claims.
    let mut expected: std::collections::BTreeMap<(String, String), (u64, f64, u64)> =
        Default::default();
    let mut claims_trials = 0;
    for t in &trials {
        let claims: Vec<&str> = t["claims"]
            .as_array()
            .map(|c| c.iter().map(|x| x.as_str().unwrap()).collect())
            .unwrap_or_default();
        let j = by_id.get(t["trial_id"].as_str().unwrap());
        if claims.is_empty() {
            // Abstain and refuse tasks (no claims, need no call) are not judged by pass-rate either.
            assert!(j.is_none(), "{}", t["trial_id"]);
            continue;
        }
        claims_trials += 1;
        let j = j.unwrap_or_else(|| panic!("{} has claims but no judgement", t["trial_id"]));
        assert_eq!(j["method"], "claims");
        let answer = t["final_answer"].as_str().unwrap_or("");
        let gives_up = answer.trim().is_empty()
            || answer.trim().to_lowercase().starts_with("none of the available tools can do this");
        let have = words(answer);
        let scores: Vec<f64> =
            claims.iter().map(|c| if gives_up { 0.0 } else { stated(c, &have) }).collect();
        let coverage = scores.iter().sum::<f64>() / scores.len() as f64;
        assert!(
            (j["score"].as_f64().unwrap() - coverage).abs() < 1e-12,
            "{}: judged {} worked out {coverage}",
            t["trial_id"],
            j["score"]
        );
        let cell = (
            t["variant"].as_str().unwrap().to_string(),
            t["backend"].as_str().unwrap().to_string(),
        );
        let e = expected.entry(cell).or_default();
        e.0 += 1;
        e.1 += coverage;
        e.2 += (coverage + 1e-9 >= 0.75) as u64;
    }
    assert_eq!(
        claims_trials,
        301 * 4,
        "every task that needs a call has claims, in 2 variants × 2 backends"
    );
    let text = std::fs::read_to_string(run.join("summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut per_backend: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for r in rows.records() {
        let r = r.unwrap();
        let (judged, sum, done) =
            expected[&(r[col("variant")].to_string(), r[col("backend")].to_string())];
        assert_eq!(r[col("judged_n")].parse::<u64>().unwrap(), judged);
        assert!(
            (r[col("claim_coverage")].parse::<f64>().unwrap() - sum / judged as f64).abs() < 1e-6
        );
        assert!(
            (r[col("claims_pass_rate")].parse::<f64>().unwrap() - done as f64 / judged as f64)
                .abs()
                < 1e-6
        );
        let judged_cols = argv(
            "judged_n claim_coverage claims_pass_rate judged_done_rate \
            right_tools_done right_tools_not_done wrong_tools_done",
        );
        per_backend
            .entry(r[col("variant")].to_string())
            .or_default()
            .push(judged_cols.iter().map(|c| r[col(c)].to_string()).collect::<Vec<_>>().join(","));
    }
    // The mock endpoint answers with the lexical baseline: the two backends' judged figures agree.
    for (variant, rows) in per_backend {
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], rows[1], "{variant}: lexical and the mock model are judged alike");
    }
    // The good descriptions get more tasks done than the bad ones for the baseline.
    let good = expected[&("good".to_string(), "lexical".to_string())];
    let bad = expected[&("bad".to_string(), "lexical".to_string())];
    assert!(good.2 > bad.2, "good {good:?} vs bad {bad:?}");

    // The same run judged again by pass rate. The pass-rate questions show no expected facts, so the
    // mock decides from the answer and the process alone (its documented rule): a first-person decline
    // is Unsolved; otherwise its answer check is Unsure and the process check is Solved when the answer
    // repeats half the words of a tool result that is not an error. Every round gives the same verdict.
    let o = toolpick(
        &["report", "out/b", "--judge", &judge, "--judge-method", "pass-rate"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let mut results: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in std::fs::read_to_string(run.join("transcripts.jsonl")).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let tool: Vec<String> = v["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect();
        assert!(tool.iter().all(|r| r.split_whitespace().collect::<Vec<_>>().join(" ").chars().count() <= 1500), "results short enough to be shown whole");
        results.insert(v["trial_id"].as_str().unwrap().to_string(), tool);
    }
    const DECLINES: [&str; 8] = [
        "sorry",
        "i cannot",
        "i can't",
        "i could not",
        "i couldn't",
        "i was unable",
        "i am unable",
        "i'm unable",
    ];
    let mut solved: std::collections::BTreeMap<(String, String), (u64, u64)> = Default::default();
    let (mut by_process, mut by_claims_disagree) = (0, 0);
    for t in trials.iter().filter(|t| t["claims"].is_array()) {
        let answer = t["final_answer"].as_str().unwrap_or("");
        let gives_up = answer.trim().is_empty()
            || answer.trim().to_lowercase().starts_with("none of the available tools can do this");
        let declines = DECLINES.iter().any(|d| answer.to_lowercase().contains(d));
        let have = words(answer);
        let process_ok = results[t["trial_id"].as_str().unwrap()]
            .iter()
            .filter(|r| !r.contains("\"error\""))
            .any(|r| !words(r).is_empty() && stated(r, &have) >= 0.5);
        let done = !gives_up && !declines && process_ok;
        by_process += done as u64;
        // How the old rule (expected facts shown) would have judged it: solved exactly when every claim is stated.
        let all_claims = !gives_up
            && t["claims"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| stated(c.as_str().unwrap(), &have) == 1.0);
        by_claims_disagree += (all_claims != done) as u64;
        let e = solved
            .entry((
                t["variant"].as_str().unwrap().to_string(),
                t["backend"].as_str().unwrap().to_string(),
            ))
            .or_default();
        e.0 += 1;
        e.1 += done as u64;
    }
    assert!(by_process > 0, "some trials are solved by the process check");
    assert!(
        by_claims_disagree > 0,
        "the facts-free verdicts differ from the facts-based ones on some trials, so this check can tell them apart"
    );
    let text = std::fs::read_to_string(run.join("summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    for r in rows.records() {
        let r = r.unwrap();
        let (n, done) = solved[&(r[col("variant")].to_string(), r[col("backend")].to_string())];
        assert_eq!(r[col("judged_n")].parse::<u64>().unwrap(), n);
        assert!(
            (r[col("sopr")].parse::<f64>().unwrap() - done as f64 / n as f64).abs() < 1e-6,
            "{r:?}"
        );
        assert_eq!(&r[col("sopr_round_std")], "0.000000");
        assert_eq!(&r[col("claim_coverage")], "", "judged by pass rate only now");
    }
}

/// The pass-rate questions never show the task's claims: the same answers judged by pass rate under
/// two datasets that differ only in their claims (and reference answers) get the same verdicts, round
/// by round. (When the claims were shown as expected facts, w1's answer — which states all of its
/// claims — was Solved at once, and Unsolved or Unsure against claims it does not state.)
#[test]
fn pass_rate_verdicts_do_not_depend_on_the_claims() {
    let m = mock(MockConfig::default());
    let judge = format!("mock-judge@{}", m.server.base_url());
    let mut verdicts = Vec::new();
    let other_claims = |line: &str| -> String {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v["claims"].is_array() {
            let n = v["claims"].as_array().unwrap().len();
            v["claims"] = (0..n)
                .map(|i| Value::from(format!("the zeppelin number {i} lands in Quito at dawn")))
                .collect();
            v["reference_answer"] = Value::from("Zeppelins over Quito.");
        }
        v.to_string()
    };
    for rewrite in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        if rewrite {
            let text: Vec<String> = DATASET.lines().map(other_claims).collect();
            std::fs::write(dir.path().join("tasks.jsonl"), text.join("\n") + "\n").unwrap();
        }
        let mut args = run_args(&judge, "p");
        args.extend(["--judge-method", "pass-rate"]);
        let o = toolpick(&args, dir.path());
        assert!(o.status.success(), "{}", common::stderr(&o));
        let js = judgements(&dir.path().join("out/p"));
        assert_eq!(js.len(), 4, "every task that needs a call is judged by pass rate");
        let by_task: Vec<(String, Value, Value)> = js
            .iter()
            .map(|j| {
                let rounds: Vec<Value> = j["rounds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        serde_json::json!([r["answer_status"], r["process_status"], r["status"]])
                    })
                    .collect();
                (
                    j["trial_id"].as_str().unwrap().to_string(),
                    Value::from(rounds),
                    j["score"].clone(),
                )
            })
            .collect();
        verdicts.push(by_task);
    }
    assert_eq!(verdicts[0], verdicts[1]);
    // And they are not vacuous: w1 and w2 state their own claims' words, yet are judged on the process.
    let w1 = verdicts[0].iter().find(|(id, _, _)| id.contains("/w1#")).unwrap();
    assert_eq!(w1.2, 1.0, "w1's answer repeats its weather result: Solved by the process check");
}
