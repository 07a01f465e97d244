//! Every tool is reachable in every layout: the oracle, which plays the answer key through the layout
//! (searching for each expected tool by its name in the `search` layout), must pass every task of every
//! bundled and imported catalog in flat, progressive, progressive-oss and search, with the whole catalog
//! shown and at a distractor level. And a tool whose name and description are only stop words (`me`,
//! `it`, blank description — as in real catalogs) is still found, and `lint`/`validate` flag it.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const LAYOUTS: &str = "flat,progressive,progressive-oss,search";

/// Run the oracle in all four layouts (plus `extra` flags) and return the trials.
fn oracle_trials(args: &[&str], extra: &[&str], out: &Path, run_id: &str) -> Vec<Value> {
    let mut all = argv_with(
        "run --backends oracle --layouts {} --out {} --run-id {} -q",
        &[LAYOUTS, out.to_str().unwrap(), run_id],
    );
    all.extend_from_slice(args);
    all.extend_from_slice(extra);
    let o = toolpick(&all, &repo());
    assert!(o.status.success(), "toolpick {all:?}: {}", stderr(&o));
    trials_with_transcripts(&out.join(run_id))
}

/// Every trial the oracle can play passes, in every layout. `relevant` tasks (BFCL live_relevance)
/// have no ground truth, so the oracle has nothing to play there; they are left out and counted.
fn assert_oracle_passes_everywhere(what: &str, args: &[&str], min_tasks: usize) {
    let tmp = tempfile::tempdir().unwrap();
    for (run_id, extra) in [("whole", &[][..]), ("distractors", &["--distractors", "20"][..])] {
        let trials = oracle_trials(args, extra, tmp.path(), run_id);
        let played: Vec<&Value> = trials.iter().filter(|t| t["kind"] != "relevant").collect();
        let failed: Vec<String> = played
            .iter()
            .filter(|t| t["score"]["pass"] != true)
            .map(|t| {
                format!(
                    "{} {} {}: {} {}",
                    t["variant"],
                    t["layout"],
                    t["task_id"],
                    t["score"]["error_type"],
                    t["score"]["error_detail"]
                )
            })
            .collect();
        assert!(
            failed.is_empty(),
            "{what} ({run_id}): the oracle failed {} of {} trials:\n{}",
            failed.len(),
            played.len(),
            failed.join("\n")
        );
        for layout in LAYOUTS.split(',') {
            let n = played.iter().filter(|t| t["layout"] == layout).count();
            assert!(
                n >= min_tasks,
                "{what} ({run_id}): only {n} trials in layout {layout}, expected at least {min_tasks}"
            );
        }
    }
}

#[test]
fn oracle_reaches_every_tool_of_the_bundled_suite() {
    // The written catalog, every degrade operator at once, and the hand-written realistic-bad variant.
    let variants = "good,bad,file:registries/workspace-realistic-bad";
    assert_oracle_passes_everywhere("bundled", &["--variants", variants], 375 * 3);
}

#[test]
fn oracle_reaches_every_tool_of_imported_bfcl() {
    let spec = format!("bfcl:{}", shared("bfcl").display());
    assert_oracle_passes_everywhere("bfcl", &["--dataset", &spec], 300 * 2);
}

#[test]
fn oracle_reaches_every_tool_of_imported_mcptoolbench() {
    let spec = format!("mcptoolbench:{}", shared("mcptoolbench").display());
    assert_oracle_passes_everywhere("mcptoolbench", &["--dataset", &spec], 100);
}

#[test]
fn oracle_reaches_every_tool_of_imported_safetoolbench() {
    let spec = format!("safetoolbench:{}", shared("safetoolbench").display());
    assert_oracle_passes_everywhere("safetoolbench", &["--dataset", &spec], 100);
}

/// StableToolBench has the real stop-word tool: ticketbud's `me` (G1_tool-7971), which `search_tools`
/// could not return before search text fell back to raw name words.
#[test]
fn oracle_reaches_every_tool_of_imported_stabletoolbench() {
    for format in ["stabletoolbench", "stabletoolbench-merged"] {
        let spec = format!("{format}:{}", shared("stabletoolbench").display());
        assert_oracle_passes_everywhere(format, &["--dataset", &spec], 180 * 2);
    }
}

/// A catalog with tools called `me` and `it` with blank descriptions (one without parameters, one with),
/// beside ordinary tools that share the server.
fn write_stop_word_catalog(dir: &Path) -> PathBuf {
    let cat = dir.join("cat");
    std::fs::create_dir_all(&cat).unwrap();
    let tool = |name: &str, desc: &str, props: &str, required: &str| {
        format!(
            r#"{{"name": "{name}", "description": "{desc}", "inputSchema": {{"type": "object", "properties": {{{props}}}, "required": [{required}]}},
              "annotations": {{"readOnlyHint": true, "destructiveHint": false}}, "mockResponse": {{"ok": true}}}}"#
        )
    };
    let tools = [
        tool("me", "", "", ""),
        tool(
            "it",
            "",
            r#""ticket_key": {"type": "string", "description": "Ticket key."}"#,
            r#""ticket_key""#,
        ),
        tool(
            "get_profile",
            "Read the profile of a user of the help desk by e-mail address.",
            r#""email": {"type": "string", "description": "E-mail address."}"#,
            r#""email""#,
        ),
        tool(
            "list_tickets",
            "List the help-desk tickets of a queue, newest first.",
            r#""queue": {"type": "string", "description": "Queue name."}"#,
            r#""queue""#,
        ),
    ];
    std::fs::write(
        cat.join("helpdesk.json"),
        format!(
            r#"{{"name": "helpdesk", "description": "The help desk: people and tickets.", "categories": [
  {{"name": "account", "description": "Who is signed in.", "tools": [{}]}}]}}"#,
            tools.join(",\n")
        ),
    )
    .unwrap();
    cat
}

const STOP_WORD_TASKS: &str = r#"{"id": "who", "query": "Who am I signed in as?", "kind": "single", "expected": [{"tool": "helpdesk/account/me", "arguments": {}}], "category": "account", "tags": []}
{"id": "it", "query": "Open the IT view of ticket OPS-1.", "kind": "single", "expected": [{"tool": "helpdesk/account/it", "arguments": {"ticket_key": ["OPS-1"]}}], "category": "account", "tags": []}
{"id": "both", "query": "Who am I, and what is in ticket OPS-2?", "kind": "multi", "expected": [{"tool": "helpdesk/account/me", "arguments": {}}, {"tool": "helpdesk/account/it", "arguments": {"ticket_key": ["OPS-2"]}}], "category": "account", "tags": []}
"#;

#[test]
fn tools_named_only_with_stop_words_are_found_in_every_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = write_stop_word_catalog(tmp.path());
    let data = tmp.path().join("tasks.jsonl");
    std::fs::write(&data, STOP_WORD_TASKS).unwrap();
    let args = argv_with(
        "--catalog {} --dataset {} --variants good,bad",
        &[cat.to_str().unwrap(), data.to_str().unwrap()],
    );
    let trials = oracle_trials(&args, &[], tmp.path(), "r");
    assert_eq!(trials.len(), 3 * 2 * 4, "3 tasks × 2 variants × 4 layouts");
    for t in &trials {
        assert_eq!(
            t["score"]["pass"], true,
            "{} {} {}: {}",
            t["variant"], t["layout"], t["task_id"], t["score"]["error_detail"]
        );
    }
    // The search the oracle made for `me` returned it (not just: the call went through).
    let search = trials
        .iter()
        .find(|t| t["task_id"] == "who" && t["layout"] == "search" && t["variant"] == "good")
        .unwrap();
    let result = search["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["name"] == "search_tools")
        .unwrap();
    let found: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(found["tools"][0]["name"], "me", "{found}");
}

#[test]
fn lint_and_validate_flag_descriptions_without_content_words() {
    let tmp = tempfile::tempdir().unwrap();
    write_stop_word_catalog(tmp.path());
    let o = toolpick(&["lint", "cat", "--format", "json", "--fail-on", "never"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let flagged: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "TP-D006")
        .map(|f| f["tool"].as_str().unwrap())
        .collect();
    assert_eq!(flagged, vec!["helpdesk/account/me", "helpdesk/account/it"]);
    let me = v["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "TP-D006").unwrap();
    assert_eq!(me["severity"], "warn");
    assert_eq!(me["field"], "description");
    assert!(me["message"].as_str().unwrap().contains("`me` has none either"), "{me}");
    // `--fail-on warn` makes it a gate.
    let o = toolpick(&["lint", "cat", "--fail-on", "warn"], tmp.path());
    assert_eq!(o.status.code(), Some(100));
    assert!(stdout(&o).contains("TP-D006 description-without-content-words"), "{}", stdout(&o));
    // SARIF carries the rule in its rule table and the results point at the server file.
    let o = toolpick(&["lint", "cat", "--format", "sarif", "--fail-on", "never"], tmp.path());
    let sarif: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let index =
        rules.iter().position(|r| r["id"] == "TP-D006").expect("TP-D006 in the SARIF rule table");
    let results: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "TP-D006")
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["ruleIndex"], index);
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "cat/helpdesk.json"
    );
    // validate: the input is valid (exit 0), and each such tool is named with file and line.
    std::fs::write(tmp.path().join("tasks.jsonl"), STOP_WORD_TASKS).unwrap();
    let o = toolpick(&["validate", "--catalog", "cat", "--dataset", "tasks.jsonl"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let warnings: Vec<&str> = out.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 2, "{out}");
    assert!(
        warnings[0].contains("cat/helpdesk.json:")
            && warnings[0].contains("`helpdesk/account/me`")
            && warnings[0].contains("TP-D006"),
        "{}",
        warnings[0]
    );
    // The bundled catalog has no such tool, and validate stays quiet on it.
    let o = toolpick(&["validate"], &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("warning:"), "{}", stdout(&o));
}
