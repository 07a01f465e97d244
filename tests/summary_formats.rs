//! Every table's formats agree column by column with its declaration — the summary (`summary.csv`,
//! `summary.parquet`, `summary.json`'s table), the trials (`trials.csv`, `trials.parquet`), the tools
//! (`tools.csv`, `tools.parquet`) and `confusion.csv` — the declared columns read the figures the cells
//! and the trial records hold, and `docs/formats.md` documents every declared column with its
//! description.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn csv_parquet_and_json_hold_the_same_summary() {
    let tmp = tempfile::tempdir().unwrap();
    // Flat cells leave the hiding layers' rates undefined, progressive ones define them: both kinds of
    // values, and nulls, are in the files.
    let args = argv_with(
        "run --out {} --run-id r -q --variants good,bad \
        --layouts flat,progressive --backends lexical,oracle",
        &[tmp.path().to_str().unwrap()],
    );
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let run = tmp.path().join("r");
    let compared = assert_summary_formats_agree(&run);
    assert!(compared > 100, "{compared} columns");

    // The table reads what the cells say (the nested form of summary.json, serialized from the cells
    // themselves), with undefined rates null, bounds included.
    let json: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let names: Vec<&str> = json["table"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let col = |name: &str| {
        names.iter().position(|n| *n == name).unwrap_or_else(|| panic!("no column {name}"))
    };
    let cells = json["cells"].as_array().unwrap();
    let mut saw_undefined = false;
    for (cell, row) in cells.iter().zip(json["table"]["rows"].as_array().unwrap()) {
        assert_eq!(row[col("backend")], cell["backend"]);
        assert_eq!(row[col("n")], cell["n"]);
        assert_eq!(row[col("n_call")], cell["pass"]["n"]);
        assert_eq!(row[col("selection_accuracy")], cell["selection"]["rate"]);
        assert_eq!(row[col("pass_at_1_high")], cell["pass"]["high"]);
        assert_eq!(row[col("mean_steps")], cell["mean_steps"]);
        assert_eq!(row[col("n_single")], cell["kinds"][0]["pass"]["n"]);
        for (error, count) in cell["errors"].as_object().unwrap() {
            assert_eq!(&row[col(&format!("errors_{error}"))], count);
        }
        if cell["gold_revealed"]["n"] == 0 {
            saw_undefined = true;
            for c in ["gold_revealed_rate", "gold_revealed_rate_low", "gold_revealed_rate_high"] {
                assert!(row[col(c)].is_null(), "{c} of a rate over no trial: {}", row[col(c)]);
            }
        } else {
            assert_eq!(row[col("gold_revealed_rate_low")], cell["gold_revealed"]["low"]);
        }
        // An in-process backend reports no endpoint tokens: undefined, not 0.
        assert!(row[col("mean_endpoint_prompt_tokens")].is_null());
    }
    assert!(saw_undefined, "the flat cells have an undefined gold-revealed rate");
    assert_html_all_cells_follow_the_declarations(&run);
}

/// The texts of the `tag` elements (`th` or `td`) in `html`, in order (markup inside them kept).
fn element_texts(html: &str, tag: &str) -> Vec<String> {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    // `<th` also starts `<thead`: an element's name ends at `>` or a space.
    let starts = html.split(&open).skip(1).filter(|part| part.starts_with(['>', ' ']));
    starts
        .map(|part| part[part.find('>').unwrap() + 1..part.find(&close).unwrap()].to_string())
        .collect()
}

/// `report.html`'s "All cells" table is generated from the summary's declared columns: its headings
/// are the columns flagged `InHtml::Shown` (spaced for underscores, unit and interval marks aside)
/// and the groups flagged `InHtml::Grouped`, in declared order; each row shows what `summary.csv`
/// holds for its cell.
fn assert_html_all_cells_follow_the_declarations(run: &std::path::Path) {
    use toolpick::analysis::columns::{InHtml, SUMMARY};
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    let start = html.find(r#"id="all-cells""#).expect("an All cells table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let headings: Vec<String> = element_texts(table, "th")
        .iter()
        .map(|h| h.replace(" [95 % CI]", "").replace(" %", "").replace(' ', "_"))
        .collect();
    let mut declared: Vec<&str> = vec![];
    for c in SUMMARY.iter() {
        match c.in_html {
            InHtml::Hidden => {}
            InHtml::Shown => declared.push(&c.name),
            InHtml::Grouped(g) => {
                if declared.last() != Some(&g) {
                    declared.push(g)
                }
            }
        }
    }
    assert_eq!(headings, declared, "the All cells headings are not the flagged declarations");
    assert!(
        declared.contains(&"pass_at_1") && !declared.contains(&"safety_violation_rate"),
        "flags: {declared:?}"
    );
    let rows: Vec<Vec<String>> =
        table.split("<tr>").skip(2).map(|r| element_texts(r, "td")).collect();
    let summary = summary_rows(run);
    assert_eq!(rows.len(), summary.len(), "one row a cell");
    let at = |name: &str| headings.iter().position(|h| h == name).unwrap();
    for (row, cell) in rows.iter().zip(&summary) {
        assert_eq!(row.len(), headings.len());
        assert_eq!((&row[at("backend")], &row[at("n_call")]), (&cell["backend"], &cell["n_call"]));
        // A rate in % with one decimal, then its Wilson interval.
        let selection: f64 = cell["selection_accuracy"].parse().unwrap();
        let shown = &row[at("selection_accuracy")];
        assert!(
            shown.starts_with(&format!("{:.1} [", selection * 100.0)),
            "{shown} for {selection}"
        );
        // Undefined (an in-process backend's endpoint tokens) is "n/a", never 0.
        assert_eq!(
            (
                cell["mean_endpoint_prompt_tokens"].as_str(),
                row[at("mean_endpoint_prompt_tokens")].as_str()
            ),
            ("", "n/a")
        );
        // The error types the cell has, each with its count; the others left out.
        let errors = &row[at("errors")];
        for (name, count) in cell.iter().filter_map(|(k, v)| Some((k.strip_prefix("errors_")?, v)))
        {
            assert_eq!(
                errors.contains(&format!("{name}: {count}")),
                count != "0",
                "{name} {count} in {errors:?}"
            );
        }
    }
}

/// A run with a model over HTTP (the mock endpoint, which reports usage) beside an in-process baseline
/// (which reports none), both layouts kinds, two variants, judged by the mock judge (the abstain task is
/// not judged): every declared column of trials, tools and confusion is in each format with the same
/// values and nulls.
#[test]
fn trials_tools_and_confusion_agree_in_every_format() {
    use toolpick::analysis::columns::{CONFUSION, TOOLS, TRIALS};
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = rt
        .block_on(toolpick::mock::spawn(
            "127.0.0.1:0".parse().unwrap(),
            toolpick::mock::MockConfig::default(),
        ))
        .unwrap();
    let url = server.base_url();
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("cat"));
    std::fs::write(dir.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    let judge = format!("mock-judge@{url}");
    let args = argv_with(
        "run --catalog cat --dataset ds.jsonl --base-url {} --model mock \
        --backends lexical,openai --variants good,bad --layouts flat,progressive --out out \
        --run-id r --no-cache -q --judge {}",
        &[&url, &judge],
    );
    let o = toolpick(&args, dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let run = dir.path().join("out/r");
    assert_summary_formats_agree(&run);

    let nulls = assert_csv_and_parquet_agree(
        &run.join("trials.csv"),
        Some(&run.join("trials.parquet")),
        &TRIALS,
    );
    let tool_nulls = assert_csv_and_parquet_agree(
        &run.join("tools.csv"),
        Some(&run.join("tools.parquet")),
        &TOOLS,
    );
    assert_csv_and_parquet_agree(&run.join("confusion.csv"), None, &CONFUSION);
    let null_count = |names: &[&str], counts: &[usize], name: &str| {
        counts[names.iter().position(|n| *n == name).unwrap()]
    };
    // A tool never called has no precision, one never expected no recall: null with both bounds (not
    // 0 and 1), and only then.
    let mut tools = csv::Reader::from_path(run.join("tools.csv")).unwrap();
    let th = tools.headers().unwrap().clone();
    let tc = |name: &str| th.iter().position(|h| h == name).unwrap();
    let tool_rows: Vec<csv::StringRecord> = tools.records().map(Result::unwrap).collect();
    assert!(!tool_rows.is_empty());
    let n = |r: &csv::StringRecord, c: &str| r[tc(c)].parse::<u64>().unwrap();
    for r in &tool_rows {
        let (called, expected) = (
            n(r, "true_positives") + n(r, "false_positives"),
            n(r, "true_positives") + n(r, "false_negatives"),
        );
        for (rate, defined) in [("precision", called > 0), ("recall", expected > 0)] {
            for c in [rate.to_string(), format!("{rate}_low"), format!("{rate}_high")] {
                assert_eq!(!r[tc(&c)].is_empty(), defined, "{c} of {:?}", r);
            }
        }
    }
    let tool_names: Vec<&str> = TOOLS.iter().map(|c| c.name.as_str()).collect();
    let undefined_recall =
        tool_rows.iter().filter(|r| n(r, "true_positives") + n(r, "false_negatives") == 0).count();
    assert_eq!(
        null_count(&tool_names, &tool_nulls, "recall_low"),
        undefined_recall,
        "tools.parquet: the same nulls"
    );

    // Read against the trial records, parsed here: the endpoint's tokens are null exactly where it
    // reported none (the lexical baseline), a passing trial's error detail is null, the abstain task
    // is not judged.
    let records: Vec<Value> = std::fs::read_to_string(run.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut csv = csv::Reader::from_path(run.join("trials.csv")).unwrap();
    let header = csv.headers().unwrap().clone();
    let col = |name: &str| {
        header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"))
    };
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), records.len());
    let (mut baseline, mut model, mut passed) = (0, 0, 0);
    for (row, r) in rows.iter().zip(&records) {
        assert_eq!(&row[col("trial_id")], r["trial_id"].as_str().unwrap());
        let prompt = r["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
        if r["backend"] == "lexical" {
            baseline += 1;
            assert_eq!(
                (&row[col("prompt_tokens")], &row[col("completion_tokens")]),
                ("", ""),
                "{}: the baseline reports no tokens",
                r["trial_id"]
            );
        } else {
            model += 1;
            assert!(prompt > 0, "the mock endpoint reports usage");
            assert_eq!(row[col("prompt_tokens")], prompt.to_string());
        }
        if r["score"]["error_detail"].as_str().unwrap_or("").is_empty() {
            passed += 1;
            assert_eq!(&row[col("error_detail")], "");
        } else {
            assert_eq!(&row[col("error_detail")], r["score"]["error_detail"].as_str().unwrap());
        }
        if r["task_id"] == "a1" {
            assert_eq!(
                (&row[col("judge_method")], &row[col("judge_prompt_tokens")]),
                ("", ""),
                "the abstain task is not judged"
            );
        } else {
            assert!(!row[col("judge_method")].is_empty(), "{} is judged", r["trial_id"]);
        }
    }
    assert!(baseline > 0 && model > 0 && passed > 0, "both backends ran and some trial passed");
    let names: Vec<&str> = TRIALS.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        null_count(&names, &nulls, "prompt_tokens"),
        baseline,
        "trials.parquet: the baseline's tokens are null"
    );
    assert_eq!(
        null_count(&names, &nulls, "error_detail"),
        passed,
        "trials.parquet: no detail is a null, not \"\""
    );
    assert_eq!(
        null_count(&names, &nulls, "sampling_prompt_tokens"),
        records.len(),
        "not a live run"
    );
    drop(server);
}

/// `docs/formats.md` holds each table's generated column list between `<!-- {table} columns: … -->`
/// and `<!-- end of {table} columns -->`.
fn check_docs(
    table: &str,
    source: &str,
    generated: &str,
    names_and_descriptions: Vec<(&str, &str)>,
) {
    let path = repo().join("docs/formats.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = format!("<!-- {table} columns: generated from {source} -->\n");
    let end = format!("<!-- end of {table} columns -->");
    let (Some(a), Some(b)) = (text.find(&begin), text.find(&end)) else {
        panic!("docs/formats.md has no generated {table} column list ({begin:?} … {end:?})")
    };
    let documented = &text[a + begin.len()..b];
    if documented != generated && std::env::var_os("TOOLPICK_BLESS").is_some() {
        std::fs::write(&path, format!("{}{generated}{}", &text[..a + begin.len()], &text[b..]))
            .unwrap();
        return;
    }
    // Each declared column is listed with its description (the list is generated; rerun with
    // TOOLPICK_BLESS=1 to write it after changing a declaration).
    for (name, description) in names_and_descriptions {
        assert!(
            documented.contains(&format!("| `{name}` |")),
            "docs/formats.md does not list {table} column `{name}`"
        );
        assert!(
            documented.contains(&description.replace('|', "\\|")),
            "docs/formats.md has another description of {table} column `{name}`"
        );
    }
    assert_eq!(
        documented, generated,
        "docs/formats.md's {table} columns are out of date: run TOOLPICK_BLESS=1 cargo test --test summary_formats"
    );
}

#[test]
fn formats_md_documents_every_declared_column() {
    use toolpick::analysis::columns::{CONFUSION, SUMMARY, TOOLS, TRIALS, docs};
    check_docs(
        "summary",
        "src/analysis/columns.rs",
        &docs(&SUMMARY),
        SUMMARY.iter().map(|c| (c.name.as_str(), c.description.as_str())).collect(),
    );
    check_docs(
        "trials",
        "src/analysis/columns/trials.rs",
        &docs(&TRIALS),
        TRIALS.iter().map(|c| (c.name.as_str(), c.description.as_str())).collect(),
    );
    check_docs(
        "tools",
        "src/analysis/columns/tools.rs",
        &docs(&TOOLS),
        TOOLS.iter().map(|c| (c.name.as_str(), c.description.as_str())).collect(),
    );
    check_docs(
        "confusion",
        "src/analysis/columns/tools.rs",
        &docs(&CONFUSION),
        CONFUSION.iter().map(|c| (c.name.as_str(), c.description.as_str())).collect(),
    );
}
