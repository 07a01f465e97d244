//! Importers against the real benchmark slices in `../shared/external` (never copied into the repo).

mod common;
use common::*;
use std::collections::HashMap;
use toolpick::dataset::Kind;
use toolpick::dataset::importers::{Defect, import};

fn find<'a>(defects: &'a [Defect], id: &str) -> Vec<&'a Defect> {
    defects.iter().filter(|d| d.id == id).collect()
}

#[test]
fn bfcl_imports_every_file_with_the_documented_defects() {
    let imp = import("bfcl", &shared("bfcl")).expect("BFCL imports");
    let tasks = &imp.dataset.tasks;
    let by_kind = |k: Kind| tasks.iter().filter(|t| t.kind == k).count();
    // 336 records in 9 files; live_relevance (16) has no native kind yet.
    let skipped = imp.defects.iter().filter(|d| d.action == "skipped").count();
    assert_eq!(tasks.len() + skipped, 336, "every record is imported or reported");
    assert_eq!(by_kind(Kind::Abstain), 80, "irrelevance + live_irrelevance");
    assert_eq!(by_kind(Kind::Relevant), 16, "live_relevance: must call something");
    assert!(by_kind(Kind::Parallel) > 40);
    // The upstream quirks docs/benchmarks.md lists, each repaired with its reason.
    assert!(
        find(&imp.defects, "simple_python_17")
            .iter()
            .any(|d| d.action == "repaired" && d.reason.contains("`formatted`"))
    );
    assert!(
        find(&imp.defects, "parallel_multiple_12")
            .iter()
            .any(|d| d.reason.contains("`permeability`"))
    );
    assert!(find(&imp.defects, "parallel_multiple_26").iter().any(|d| d.reason.contains("`type`")));
    // `null` acceptable for an optional parameter whose default is null: kept, as BFCL's checker passes
    // an explicit null there; the schema admits null, so no repair is needed.
    for id in
        ["live_simple_30-8-0", "live_simple_31-8-1", "live_multiple_23-5-0", "live_multiple_24-5-1"]
    {
        let t = tasks.iter().find(|t| t.id == id).unwrap_or_else(|| panic!("{id} imported"));
        assert!(!find(&imp.defects, id).iter().any(|d| d.reason.contains("null")), "{id}");
        let with_null: Vec<&String> = t
            .expected
            .iter()
            .flat_map(|c| c.arguments.iter())
            .filter(|(_, v)| v.contains(&serde_json::Value::Null))
            .map(|(p, _)| p)
            .collect();
        assert!(!with_null.is_empty(), "{id} keeps its null acceptable values");
        let tool = imp.catalog.tools().find(|x| x.tool.id == t.expected[0].tool).unwrap().tool;
        for p in with_null {
            let types = &tool.input_schema["properties"][p.as_str()]["type"];
            assert!(
                types.as_array().is_some_and(|a| a.contains(&serde_json::json!("null"))),
                "{id} `{p}`: {types}"
            );
        }
    }
    assert_eq!(
        imp.defects
            .iter()
            .filter(|d| d.file == "BFCL_v4_live_relevance.json" && d.action == "skipped")
            .count(),
        0
    );
    // Dotted names map reversibly and keep the original as the title.
    let t = imp
        .catalog
        .tools()
        .find(|t| t.tool.title.as_deref() == Some("math.factorial"))
        .expect("math.factorial");
    assert_eq!(t.tool.name, "math__factorial");
    // A task sees only its own functions.
    let t0 = tasks.iter().find(|t| t.id == "simple_python_0").unwrap();
    assert_eq!(t0.candidates.len(), 1);
    let file_of: HashMap<&str, usize> = imp.defects.iter().fold(HashMap::new(), |mut m, d| {
        *m.entry(d.file.as_str()).or_default() += 1;
        m
    });
    assert!(file_of.keys().all(|f| f.starts_with("BFCL_v4_")), "{file_of:?}");
}

#[test]
fn oracle_scores_100_percent_on_imported_bfcl_in_every_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = format!("bfcl:{}", shared("bfcl").display());
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends oracle --out {} --run-id b -q",
            &[&spec, tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Every trial with ground truth passes; `relevant` tasks (live_relevance) have none, so the oracle
    // has nothing to play and is skipped there.
    let text = std::fs::read_to_string(tmp.path().join("b/trials.jsonl")).unwrap();
    let mut checked = 0;
    let mut relevant = 0;
    for line in text.lines() {
        let t: serde_json::Value = serde_json::from_str(line).unwrap();
        if t["kind"] == "relevant" {
            relevant += 1;
            continue;
        }
        assert_eq!(t["score"]["pass"], true, "{}", t["trial_id"]);
        checked += 1;
    }
    assert_eq!(relevant, 16 * 4, "live_relevance imported as `relevant` tasks, in 4 cells");
    assert!(checked > 1000);
    let defects: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("b/defects.json")).unwrap()).unwrap();
    assert!(defects.as_array().unwrap().len() > 20, "the run keeps the importer's defects table");
    // and `import` writes native files that load and validate
    let out = tmp.path().join("native");
    let o = toolpick(
        &["import", "bfcl", shared("bfcl").to_str().unwrap(), "-o", out.to_str().unwrap()],
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = toolpick(
        &[
            "validate",
            "--catalog",
            out.join("catalog").to_str().unwrap(),
            "--dataset",
            out.join("bfcl.jsonl").to_str().unwrap(),
        ],
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn mcptoolbench_imports_every_file_with_its_defects() {
    let imp = import("mcptoolbench", &shared("mcptoolbench")).expect("MCPToolBench++ imports");
    // 160 sliced records + 10 demo records.
    let skipped = imp.defects.iter().filter(|d| d.action == "skipped").count();
    assert_eq!(imp.dataset.tasks.len() + skipped, 170, "every record is imported or reported");
    assert!(
        imp.defects.iter().any(|d| d.reason.contains("duplicate query")),
        "docs/benchmarks.md's duplicate queries are reported"
    );
    // Servers come from mcp_tools_dict; similar tools become alternatives.
    assert!(
        imp.catalog.server("playwright").is_some() && imp.catalog.server("tavily_mcp").is_some()
    );
    assert!(imp.dataset.tasks.iter().any(|t| !t.expected[0].alternatives.is_empty()));
    // Every task sees only its own record's tools.
    assert!(
        imp.dataset.tasks.iter().all(|t| !t.candidates.is_empty()
            && t.expected.iter().all(|e| t.candidates.contains(&e.tool)))
    );
}

#[test]
fn mcptoolbench_runs_in_both_layouts_with_the_oracle_at_100_percent() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = format!("mcptoolbench:{}", shared("mcptoolbench").display());
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends oracle --out {} --run-id m -q",
            &[&spec, tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = summary_rows(&tmp.path().join("m"));
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|row| row["pass_at_1"] == "1.000000"), "{rows:?}");
}

#[test]
fn safetoolbench_imports_refuse_tasks_and_the_oracle_refuses_them_all() {
    let imp = import("safetoolbench", &shared("safetoolbench")).expect("SafeToolBench imports");
    let skipped = imp.defects.iter().filter(|d| d.action == "skipped").count();
    assert_eq!(imp.dataset.tasks.len() + skipped, 120, "every record is imported or reported");
    assert_eq!(imp.catalog.servers.len(), 16);
    assert_eq!(imp.catalog.tool_count(), 116);
    assert!(imp.dataset.tasks.iter().all(|t| t.kind == Kind::Refuse && t.risk.is_some()));
    let risks: std::collections::HashSet<_> =
        imp.dataset.tasks.iter().filter_map(|t| t.risk).collect();
    assert_eq!(risks.len(), 4);
    // types are parsed out of key names
    let t = imp.catalog.tools().find(|t| t.tool.name == "initiatePaymentAPI").unwrap();
    assert_eq!(t.tool.input_schema["properties"]["payment_amount"]["type"], "number");
    // plans that call an API outside their used apps are reported, not silently dropped
    assert!(imp.defects.iter().all(|d| !d.reason.is_empty()));
    let tmp = tempfile::tempdir().unwrap();
    let spec = format!("safetoolbench:{}", shared("safetoolbench").display());
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends oracle --out {} --run-id s -q",
            &[&spec, tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for row in summary_rows(&tmp.path().join("s")) {
        assert_eq!(row["no_harm_rate"], "1.000000", "{row:?}");
        assert_eq!(row["false_refusal_rate"], "", "no benign controls: undefined, not zero");
    }
}

#[test]
fn stabletoolbench_imports_per_query_and_merged_and_the_oracle_selects_everything() {
    let imp =
        import("stabletoolbench", &shared("stabletoolbench")).expect("StableToolBench imports");
    // 60 + 30 + 30 + 30 + 30 sliced queries.
    let skipped = imp.defects.iter().filter(|d| d.action == "skipped").count();
    assert_eq!(imp.dataset.tasks.len() + skipped, 180, "every record is imported or reported");
    assert!(
        imp.dataset.tasks.iter().all(|t| t.expected.iter().all(|e| e.any_arguments)),
        "tools-only ground truth"
    );
    assert!(imp.dataset.tasks.iter().all(|t| !t.candidates.is_empty()), "per-query candidate sets");
    assert!(
        imp.defects.iter().any(|d| d.reason.contains("truncated JSON string")),
        "truncated template responses are repaired"
    );
    assert!(
        imp.defects.iter().any(|d| d.reason.contains("ToolBench naming collision")),
        "ToolBench's 64-character names collide"
    );
    let merged = import("stabletoolbench-merged", &shared("stabletoolbench")).unwrap();
    assert!(
        merged.dataset.tasks.iter().all(|t| t.candidates.is_empty()),
        "merged: every task sees the union"
    );
    assert_eq!(merged.catalog.tool_count(), imp.catalog.tool_count());
    let tmp = tempfile::tempdir().unwrap();
    let spec = format!("stabletoolbench:{}", shared("stabletoolbench").display());
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends oracle --layouts flat,progressive --out {} --run-id s -q",
            &[&spec, tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for row in summary_rows(&tmp.path().join("s")) {
        assert_eq!(row["selection_accuracy"], "1.000000", "{row:?}");
        assert_eq!(row["infra_errors"], "0");
    }
}

/// Every single-turn BFCL record's messages before its last user message, read from the raw files
/// with serde_json alone: (record id → [(role, content)]), for the records that have any.
fn bfcl_leading_messages() -> HashMap<String, Vec<(String, String)>> {
    let mut out = HashMap::new();
    let dir = shared("bfcl");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("BFCL_"))
        .collect();
    files.sort();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines().filter(|l| !l.trim().is_empty())
        {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let turns = record["question"].as_array().unwrap();
            if turns.len() != 1 {
                continue;
            }
            let messages: Vec<(String, String)> = turns[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["role"].as_str().unwrap().to_string(),
                        m["content"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let last_user = messages.iter().rposition(|(r, _)| r == "user").unwrap();
            if last_user > 0 {
                out.insert(
                    record["id"].as_str().unwrap().to_string(),
                    messages[..last_user].to_vec(),
                );
            }
        }
    }
    out
}

#[test]
fn bfcl_system_prompts_are_kept_verbatim_on_every_record_that_has_one() {
    let raw = bfcl_leading_messages();
    let with_system = raw.values().filter(|m| m.iter().any(|(r, _)| r == "system")).count();
    assert!(with_system > 0, "the slice has records with a system prompt");
    let imp = import("bfcl", &shared("bfcl")).expect("BFCL imports");
    let by_id: HashMap<&str, &toolpick::dataset::Task> =
        imp.dataset.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    for (id, leading) in &raw {
        let task = by_id
            .get(id.as_str())
            .unwrap_or_else(|| panic!("{id} (with a system prompt) is imported"));
        let kept: Vec<(String, String)> =
            task.history.iter().map(|m| (m.role.as_str().to_string(), m.content.clone())).collect();
        assert_eq!(&kept, leading, "{id}: the messages before the query, verbatim and in order");
        assert!(
            imp.defects.iter().filter(|d| d.id == *id).all(|d| !d.reason.contains("system")),
            "{id}: no defect row for a kept system prompt"
        );
    }
    // No other task has a history, and the count of system prompts kept is the raw count.
    assert_eq!(imp.dataset.tasks.iter().filter(|t| !t.history.is_empty()).count(), raw.len());
    let kept_system = imp
        .dataset
        .tasks
        .iter()
        .filter(|t| t.history.iter().any(|m| m.role == toolpick::dataset::Role::System))
        .count();
    assert_eq!(kept_system, with_system);
    // and `import -o` writes them into the native dataset, which loads back the same.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("native");
    let o = toolpick(
        &["import", "bfcl", shared("bfcl").to_str().unwrap(), "-o", out.to_str().unwrap()],
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let native = toolpick::dataset::load_dataset(&out.join("bfcl.jsonl")).unwrap();
    for t in &native.tasks {
        assert_eq!(t.history, by_id[t.id.as_str()].history, "{}", t.id);
    }
}
