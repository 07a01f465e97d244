//! Reports about the model under test: with a model run beside the lexical baseline, the first look
//! speaks about the model (the baseline's figure beside it), and per-tool figures are per cell, never
//! pooled across backends.

mod common;

use common::{SMALL_DATASET, argv, csv_rows, stderr, toolpick, write_small_catalog};

const W: &str = "weather/weather_now/get_current_weather";

/// The "model": recorded answers, some right, some wrong (the weather task answered with a forecast).
const MODEL: &str = r#"{"id": "w1", "calls": [{"name": "get_forecast", "arguments": {"city": "Pune", "days": 1}}]}
{"id": "w2", "calls": [{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 3}}, {"name": "get_forecast", "arguments": {"city": "Lima", "days": 3}}]}
{"id": "m1", "calls": [{"name": "send_email", "arguments": {"to": "ana@example.com", "subject": "Hi"}}, {"name": "get_forecast", "arguments": {"city": "Rome", "days": 1}}]}
"#;

#[test]
fn with_a_model_beside_the_baseline_the_first_look_is_about_the_model_and_tools_are_per_cell() {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    std::fs::write(tmp.path().join("model.jsonl"), MODEL).unwrap();
    let o = toolpick(
        &argv(
            "run --catalog cat --dataset ds.jsonl --variants good,bad --layouts flat \
             --backends lexical,replay:model.jsonl --out out --run-id r -q",
        ),
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = tmp.path().join("out/r");

    // The first look (summary.md opens with it, as the page does): every finding about descriptions,
    // layouts or confusions is about the model, and the variant finding carries the baseline's figure.
    let md = std::fs::read_to_string(run.join("summary.md")).unwrap();
    let findings: Vec<&str> = md
        .lines()
        .filter(|l| {
            l.starts_with("- Descriptions")
                || l.starts_with("- Layouts")
                || l.starts_with("- Confusion")
        })
        .collect();
    assert!(findings.iter().any(|f| f.starts_with("- Descriptions")), "a variant finding: {md}");
    assert!(findings.iter().any(|f| f.starts_with("- Confusion")), "a confusion finding: {md}");
    for f in &findings {
        assert!(f.contains("replay:model"), "about the model: {f}");
        assert!(
            !f.contains("; lexical,") && !f.contains("(lexical,"),
            "not about the baseline: {f}"
        );
    }
    let descriptions = findings.iter().find(|f| f.starts_with("- Descriptions")).unwrap();
    assert!(descriptions.contains("the lexical baseline:"), "the baseline beside: {descriptions}");

    // Per-tool figures per cell: each backend and variant has its own row for the weather tool, and its
    // true positives + false negatives are the calls of it that cell's tasks expect.
    let trials: Vec<serde_json::Value> = common::trials_with_transcripts(&run);
    let tools = csv_rows(&run.join("tools.csv"));
    for backend in ["lexical", "replay:model"] {
        for variant in ["good", "bad"] {
            let row = tools
                .iter()
                .find(|r| {
                    r["backend"] == backend
                        && r["variant"] == variant
                        && r["layout"] == "flat"
                        && r["tool"] == W
                })
                .unwrap_or_else(|| panic!("no row for {backend}/{variant}: {tools:?}"));
            let expected_calls = trials
                .iter()
                .filter(|t| {
                    t["backend"] == backend && t["variant"] == variant && t["kind"] != "relevant"
                })
                .flat_map(|t| t["expected"].as_array().unwrap().iter())
                .filter(|e| e["tool"] == W)
                .count() as u64;
            let n = |k: &str| row[k].parse::<u64>().unwrap();
            assert_eq!(
                n("true_positives") + n("false_negatives"),
                expected_calls,
                "{backend}/{variant}: {row:?}"
            );
        }
    }
}

#[test]
fn a_layout_loss_the_catalog_explains_is_said_with_the_lint_rule() {
    // Both servers described with stop words only: progressive discovery ranks servers by those
    // descriptions, so the lexical baseline cannot find its way, and the first look says why.
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    write_small_catalog(&cat);
    for (file, old) in
        [("weather.json", "Weather conditions and forecasts for cities."), ("mail.json", "E-mail.")]
    {
        let text = std::fs::read_to_string(cat.join(file)).unwrap();
        assert!(text.contains(old));
        std::fs::write(cat.join(file), text.replacen(old, "It is what it is.", 1)).unwrap();
    }
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    let o = toolpick(
        &argv(
            "run --catalog cat --dataset ds.jsonl --variants good --layouts flat,progressive \
             --backends lexical --out out --run-id r -q",
        ),
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = tmp.path().join("out/r");
    // The run's lint names the servers (what the report reads).
    let lint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("lint.json")).unwrap()).unwrap();
    for server in ["server:weather", "server:mail"] {
        assert!(
            lint["ds/good"][server]["rules"].as_array().unwrap().iter().any(|r| r == "TP-D006"),
            "{server}: {}",
            lint["ds/good"]
        );
    }
    let summary = csv_rows(&run.join("summary.csv"));
    let sel = |layout: &str| {
        summary.iter().find(|r| r["layout"] == layout).unwrap()["selection_accuracy"]
            .parse::<f64>()
            .unwrap()
    };
    assert!(
        sel("progressive") < sel("flat"),
        "the case under test: progressive loses ({} vs {})",
        sel("progressive"),
        sel("flat")
    );
    let md = std::fs::read_to_string(run.join("summary.md")).unwrap();
    let structure = md
        .lines()
        .find(|l| l.starts_with("- Structure"))
        .unwrap_or_else(|| panic!("a structural finding: {md}"));
    assert!(
        structure.contains("`progressive`")
            && structure.contains("TP-D006")
            && structure.contains("`weather`")
            && structure.contains("`mail`"),
        "{structure}"
    );
    // A catalog whose servers are described says nothing of the kind.
    let o = toolpick(
        &argv(
            "run --catalog cat2 --dataset ds.jsonl --variants good --layouts flat,progressive \
             --backends lexical --out out --run-id r2 -q",
        ),
        &{
            write_small_catalog(&tmp.path().join("cat2"));
            tmp.path().to_path_buf()
        },
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(tmp.path().join("out/r2/summary.md")).unwrap();
    assert!(!md.contains("- Structure"), "{md}");
}
