//! Untrusted text (queries, tool descriptions, model output) must never become markup in report.html.

mod common;
use common::*;
use serde_json::Value;

const ATTACK: &str = "</script><img src=x onerror=alert(1)>";

#[test]
fn hostile_query_and_description_end_up_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    write_small_catalog(&cat);
    let mail = std::fs::read_to_string(cat.join("mail.json")).unwrap();
    std::fs::write(
        cat.join("mail.json"),
        mail.replace(
            "Send an e-mail.",
            "Send an e-mail. <b onmouseover=alert(2)>bold</b> \u{2028}",
        ),
    )
    .unwrap();
    let query = format!("Weather in Pune {ATTACK} & \"quotes\" 'single'");
    let line = serde_json::json!({"id": "x<script>1", "query": query, "kind": "single",
        "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Pune"]}}],
        "category": "<i>cat</i>", "tags": ["<u>tag</u>"]});
    std::fs::write(tmp.path().join("ds.jsonl"), format!("{line}\n")).unwrap();
    let o = toolpick(
        &argv(
            "run --catalog cat --dataset ds.jsonl --backends lexical,oracle --out out \
            --run-id r",
        ),
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(tmp.path().join("out/r/report.html")).unwrap();

    assert!(!html.contains("<img"), "no injected element");
    assert!(!html.contains("<b onmouseover"), "no injected element from a tool description");
    assert!(!html.contains("<i>cat</i>") && !html.contains("<u>tag</u>"));
    assert_eq!(html.matches("</script>").count(), 2, "only our own two script elements close");
    assert!(!html.contains("innerHTML"), "the page only ever sets textContent");
    assert!(!html.contains('\u{2028}'));

    // The data island parses back to exactly the original text.
    let open = "<script type=\"application/json\" id=\"toolpick-data\">";
    let start = html.find(open).unwrap() + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let island: Value = serde_json::from_str(&html[start..end]).unwrap();
    let queries: Vec<&str> =
        island["trials"].as_array().unwrap().iter().map(|t| t["query"].as_str().unwrap()).collect();
    assert!(queries.iter().all(|q| *q == query), "{queries:?}");
    assert!(
        html[start..end].contains("\\u003cb onmouseover"),
        "descriptions are escaped inside the island too"
    );
    assert!(
        island["offered"]["ds/good/flat"].to_string().contains("<b onmouseover"),
        "and decode to the original text"
    );

    // JUnit XML: one test case per trial, everything escaped.
    let junit = std::fs::read_to_string(tmp.path().join("out/r/junit.xml")).unwrap();
    let trials =
        std::fs::read_to_string(tmp.path().join("out/r/trials.jsonl")).unwrap().lines().count();
    assert_eq!(junit.matches("<testcase ").count(), trials);
    assert!(!junit.contains("<img") && !junit.contains("<b onmouseover"));
    assert!(junit.contains("x&lt;script&gt;1#0"), "task ids are escaped in test names");
    let failed = std::fs::read_to_string(tmp.path().join("out/r/trials.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"pass\":false"))
        .count();
    assert_eq!(junit.matches("<failure ").count(), failed);

    // Markdown escapes table-breaking and HTML characters as well.
    let md = std::fs::read_to_string(tmp.path().join("out/r/summary.md")).unwrap();
    assert!(!md.contains("<i>"));
}
