//! The summary's formats agree column by column (`summary.csv`, `summary.parquet`, `summary.json`'s
//! table), the declared columns read the figures the cells hold, and `docs/formats.md` documents every
//! declared column with its description.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn csv_parquet_and_json_hold_the_same_summary() {
    let tmp = tempfile::tempdir().unwrap();
    // Flat cells leave the hiding layers' rates undefined, progressive ones define them: both kinds of
    // values, and nulls, are in the files.
    let args = ["run", "--out", tmp.path().to_str().unwrap(), "--run-id", "r", "-q", "--variants", "good,bad", "--layouts", "flat,progressive", "--backends", "lexical,oracle"];
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let run = tmp.path().join("r");
    let compared = assert_summary_formats_agree(&run);
    assert!(compared > 100, "{compared} columns");

    // The table reads what the cells say (the nested form of summary.json, serialized from the cells
    // themselves), with undefined rates null, bounds included.
    let json: Value = serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let names: Vec<&str> = json["table"]["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    let col = |name: &str| names.iter().position(|n| *n == name).unwrap_or_else(|| panic!("no column {name}"));
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
}

const BEGIN: &str = "<!-- summary columns: generated from src/analysis/columns.rs -->\n";
const END: &str = "<!-- end of summary columns -->";

#[test]
fn formats_md_documents_every_summary_column() {
    let path = repo().join("docs/formats.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let table = toolpick::analysis::columns::summary_docs();
    let (Some(a), Some(b)) = (text.find(BEGIN), text.find(END)) else { panic!("docs/formats.md has no generated summary column list ({BEGIN:?} … {END:?})") };
    let documented = &text[a + BEGIN.len()..b];
    if documented != table && std::env::var_os("TOOLPICK_BLESS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &text[..a + BEGIN.len()], &text[b..])).unwrap();
        return;
    }
    // Each declared column is listed with its description (the list is generated; rerun with
    // TOOLPICK_BLESS=1 to write it after changing a declaration).
    for c in toolpick::analysis::columns::SUMMARY.iter() {
        assert!(documented.contains(&format!("| `{}` |", c.name)), "docs/formats.md does not list `{}`", c.name);
        assert!(documented.contains(&c.description.replace('|', "\\|")), "docs/formats.md has another description of `{}`", c.name);
    }
    assert_eq!(documented, table, "docs/formats.md's summary columns are out of date: run TOOLPICK_BLESS=1 cargo test --test summary_formats");
}
