//! Importers lose nothing silently: copies of the shipped benchmark slices (`../shared/external`, copied
//! into a tempdir at test time, never into the repository) are damaged — duplicate ids, an empty file,
//! undecodable bytes, deep nesting, wrong types — and imported with `toolpick import`. Every record must
//! come out imported (possibly repaired) or listed in `defects.csv`, and each damage must be reported at
//! its record with a reason that says what is wrong. Record totals are counted here from the pristine
//! originals, independently of the importers.
//!
//! Whole-file damage is generated (`every_importer_survives_every_whole_file_damage`): every importer ×
//! UTF-16 LE/BE with and without a byte-order mark, a UTF-8 byte-order mark, invalid UTF-8 at a known
//! line, an object where an array belongs (an array where JSON Lines belong), a directory named like
//! the file, bytes that are not text, and for BFCL a missing question file.

mod common;
/// The whole-file damage generator.
#[path = "import_damage/whole_file.rs"]
mod whole_file;
use common::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() { copy_dir(&p, &dest) } else { std::fs::copy(&p, &dest).map(|_| ()).unwrap() }
    }
}

/// A JSON value nested `depth` arrays deep (serde_json stops at 128).
fn deep(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// Serialise a record array the way the slices are written, then splice in what JSON cannot carry:
/// `"DEEP_HERE"` becomes a 200-level array, `BAD_HERE` (inside a string) becomes two invalid UTF-8 bytes.
fn damaged_bytes(records: &[Value]) -> Vec<u8> {
    let text = serde_json::to_string_pretty(records).unwrap().replace("\"DEEP_HERE\"", &deep(200));
    let mut out = Vec::new();
    for (i, part) in text.split("BAD_HERE").enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\xff\xfe");
        }
        out.extend_from_slice(part.as_bytes());
    }
    out
}

fn read_array(p: &Path) -> Vec<Value> {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn edit_array(p: &Path, edit: impl FnOnce(&mut Vec<Value>)) {
    let mut records = read_array(p);
    edit(&mut records);
    std::fs::write(p, damaged_bytes(&records)).unwrap();
}

/// One row of defects.csv, by column name.
type Row = BTreeMap<String, String>;

struct Outcome {
    rows: Vec<Row>,
    ids: Vec<String>,
    queries: BTreeMap<String, String>,
    stdout: String,
    out: PathBuf,
}

impl Outcome {
    fn skipped_records(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r["action"] == "skipped" && r["affected"] != "unknown")
            .map(|r| r["affected"].parse::<usize>().unwrap())
            .sum()
    }

    /// Skipped files whose records could not be counted.
    fn uncounted(&self) -> usize {
        self.rows.iter().filter(|r| r["action"] == "skipped" && r["affected"] == "unknown").count()
    }

    /// The rows of `file` at `record` (`None` = file-level rows).
    fn at(&self, file: &str, record: Option<usize>) -> Vec<&Row> {
        let want = record.map(|r| r.to_string()).unwrap_or_default();
        self.rows.iter().filter(|r| r["file"] == file && r["record"] == want).collect()
    }

    /// The one row of `file`/`record` with `action`; panics with every row there otherwise.
    fn one(&self, file: &str, record: Option<usize>, action: &str) -> &Row {
        let rows: Vec<&Row> =
            self.at(file, record).into_iter().filter(|r| r["action"] == action).collect();
        assert_eq!(rows.len(), 1, "{file} record {record:?} {action}: {:?}", self.at(file, record));
        rows[0]
    }

    /// Every record is imported or listed, and the printed summary counts records, not rows.
    fn check_totals(&self, format: &str, total: usize) {
        let unique: HashSet<&String> = self.ids.iter().collect();
        assert_eq!(unique.len(), self.ids.len(), "task ids are unique after import");
        assert_eq!(
            self.ids.len() + self.skipped_records(),
            total,
            "imported + skipped-listed == records in the files\n{}",
            self.stdout
        );
        let expected = format!("{format}: {} records imported", self.ids.len());
        assert!(self.stdout.contains(&expected), "summary `{expected}` in: {}", self.stdout);
        let uncounted = match self.uncounted() {
            0 => String::new(),
            n => format!(" and the records of {n} file(s) that could not be counted"),
        };
        assert!(
            self.stdout.contains(&format!(", {} skipped{uncounted};", self.skipped_records())),
            "{}",
            self.stdout
        );
        // Each record row points at the line where its record starts (checked against the file).
        for r in self
            .rows
            .iter()
            .filter(|r| !r["line"].is_empty() && !r["record"].is_empty() && r["affected"] == "1")
        {
            assert!(!r["reason"].is_empty());
            assert!(r["line"].parse::<usize>().unwrap() >= 1);
        }
    }
}

fn import(format: &str, dir: &Path, extra: &[&str]) -> Outcome {
    let out = dir.parent().unwrap().join(format!("{format}-native"));
    let mut args = vec!["import", format, dir.to_str().unwrap(), "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "import {format} must survive the damage: {}", stderr(&o));
    let mut r = csv::Reader::from_path(out.join("defects.csv")).unwrap();
    let headers = r.headers().unwrap().clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>(),
        ["file", "record", "line", "id", "action", "affected", "reason"]
    );
    let rows: Vec<Row> = r
        .records()
        .map(|rec| {
            headers
                .iter()
                .zip(rec.unwrap().iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    let name = format.replace('-', "_");
    let tasks: Vec<Value> = std::fs::read_to_string(out.join(format!("{name}.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<String> = tasks.iter().map(|t| t["id"].as_str().unwrap().to_string()).collect();
    let queries = tasks
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), t["query"].as_str().unwrap().to_string()))
        .collect();
    // The native files load and validate.
    if !ids.is_empty() {
        let v = toolpick(
            &[
                "validate",
                "--catalog",
                out.join("catalog").to_str().unwrap(),
                "--dataset",
                out.join(format!("{name}.jsonl")).to_str().unwrap(),
            ],
            &repo(),
        );
        assert!(v.status.success(), "{}", stderr(&v));
    }
    Outcome { rows, ids, queries, stdout: stdout(&o), out }
}

fn line_records(p: &Path) -> usize {
    std::fs::read_to_string(p).unwrap().lines().filter(|l| !l.trim().is_empty()).count()
}

#[test]
fn bfcl_damaged_copy_loses_no_record_silently() {
    let tmp = tempfile::tempdir().unwrap();
    let src = shared("bfcl");
    let dir = tmp.path().join("bfcl");
    copy_dir(&src, &dir);
    let questions: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("BFCL_"))
        .collect();
    let pristine: usize = questions.iter().map(|p| line_records(p)).sum();
    let multiple = line_records(&src.join("BFCL_v4_multiple.json"));
    let answers_of_multiple = line_records(&src.join("possible_answer/BFCL_v4_multiple.json"));

    // simple_python: deep record 5, numeric id on 6, `function` a string on 7, record 1 duplicated at the end.
    let path = dir.join("BFCL_v4_simple_python.json");
    let mut lines: Vec<String> =
        std::fs::read_to_string(&path).unwrap().lines().map(String::from).collect();
    let lost_ids: Vec<String> = [4, 5]
        .iter()
        .map(|&i| {
            serde_json::from_str::<Value>(&lines[i]).unwrap()["id"].as_str().unwrap().to_string()
        })
        .collect();
    lines[4] = format!(
        r#"{{"id": "deep", "question": [[{{"role": "user", "content": "x"}}]], "function": [{{"name": "f", "parameters": {}}}]}}"#,
        deep(200)
    );
    let mut v: Value = serde_json::from_str(&lines[5]).unwrap();
    v["id"] = json!(5);
    lines[5] = v.to_string();
    let mut v: Value = serde_json::from_str(&lines[6]).unwrap();
    let id6 = v["id"].as_str().unwrap().to_string();
    v["function"] = json!("not a list");
    lines[6] = v.to_string();
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    let first_id = first["id"].as_str().unwrap().to_string();
    lines.push(lines[0].clone());
    let dup_record = lines.len();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    // parallel: undecodable bytes inside record 3's question text (the record survives).
    let path = dir.join("BFCL_v4_parallel.json");
    let mut lines: Vec<Vec<u8>> =
        std::fs::read(&path).unwrap().split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    let id3 =
        serde_json::from_slice::<Value>(&lines[2]).unwrap()["id"].as_str().unwrap().to_string();
    let at = lines[2].windows(12).position(|w| w == b"\"content\": \"").unwrap() + 12;
    lines[2].splice(at..at, b"\xff\xfe".iter().copied());
    // live_simple: an undecodable byte outside any string (record 2 cannot be read).
    let path_ls = dir.join("BFCL_v4_live_simple.json");
    let mut ls: Vec<Vec<u8>> =
        std::fs::read(&path_ls).unwrap().split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    let id_ls =
        serde_json::from_slice::<Value>(&ls[1]).unwrap()["id"].as_str().unwrap().to_string();
    ls[1].insert(0, 0xff);
    std::fs::write(&path, lines.join(&b'\n')).unwrap();
    std::fs::write(&path_ls, ls.join(&b'\n')).unwrap();
    // multiple: emptied.
    std::fs::write(dir.join("BFCL_v4_multiple.json"), "").unwrap();

    let o = import("bfcl", &dir, &[]);
    o.check_totals("bfcl", pristine + 1 - multiple);
    let sp = "BFCL_v4_simple_python.json";
    assert!(
        o.one(sp, Some(5), "skipped")["reason"].contains("nested more than 128 levels deep"),
        "{:?}",
        o.at(sp, Some(5))
    );
    assert_eq!(o.one(sp, Some(5), "skipped")["line"], "5");
    assert_eq!(o.one(sp, Some(6), "skipped")["reason"], "`id` is a number, expected a string");
    let r7 = o.one(sp, Some(7), "skipped");
    assert_eq!(
        (r7["id"].as_str(), r7["reason"].as_str()),
        (id6.as_str(), "`function` is a string, expected an array of objects")
    );
    let dup = o.one(sp, Some(dup_record), "repaired");
    assert_eq!(dup["id"], format!("{first_id}#2"));
    assert!(
        dup["reason"].contains(&format!("duplicate id `{first_id}`"))
            && dup["reason"].contains("record 1, line 1"),
        "{dup:?}"
    );
    assert!(
        o.ids.contains(&first_id) && o.ids.contains(&format!("{first_id}#2")),
        "both records are imported"
    );
    // Bad bytes: one row for the file, the record imported with U+FFFD.
    let bytes = o.one("BFCL_v4_parallel.json", None, "repaired");
    assert!(
        bytes["reason"].contains("invalid UTF-8")
            && bytes["reason"].contains("1 record(s) affected (record 3)"),
        "{bytes:?}"
    );
    assert!(o.queries[&id3].starts_with('\u{fffd}'), "{}", o.queries[&id3]);
    let ls_rows = o.at("BFCL_v4_live_simple.json", None);
    assert_eq!(ls_rows.len(), 1, "{ls_rows:?}");
    assert!(
        o.one("BFCL_v4_live_simple.json", Some(2), "skipped")["reason"]
            .starts_with("not valid JSON")
    );
    // The empty file: one row, and each of its answers reported as orphaned.
    assert!(o.one("BFCL_v4_multiple.json", None, "skipped")["reason"].contains("empty"));
    let orphans = |file: &str| {
        o.rows
            .iter()
            .filter(|r| r["file"] == file && r["reason"].starts_with("orphaned answer"))
            .map(|r| r["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(orphans("possible_answer/BFCL_v4_multiple.json").len(), answers_of_multiple);
    // Answers whose question became unreadable are orphaned too.
    let sp_orphans = orphans("possible_answer/BFCL_v4_simple_python.json");
    assert_eq!(sp_orphans, lost_ids);
    assert_eq!(orphans("possible_answer/BFCL_v4_live_simple.json"), [id_ls]);
}

#[test]
fn mcptoolbench_damaged_copy_loses_no_record_silently() {
    let tmp = tempfile::tempdir().unwrap();
    let src = shared("mcptoolbench");
    let dir = tmp.path().join("mcptoolbench");
    copy_dir(&src, &dir);
    let mut files = Vec::new();
    for sub in ["data", "demo"] {
        for cat in std::fs::read_dir(src.join(sub)).unwrap() {
            for f in std::fs::read_dir(cat.unwrap().path()).unwrap() {
                files.push(f.unwrap().path());
            }
        }
    }
    let pristine: usize = files.iter().map(|f| read_array(f).len()).sum();
    let browser = "data/browser/browser_0724_single_v3.slice.json";
    let mut first_uuid = String::new();
    let mut browser_len = 0;
    edit_array(&dir.join(browser), |r| {
        first_uuid = r[0]["uuid"].as_str().unwrap().to_string();
        let mut copy = r[0].clone();
        copy["query"] = json!(format!("{} (asked again)", copy["query"].as_str().unwrap()));
        r.push(copy);
        browser_len = r.len();
        r[3]["uuid"] = json!(12345);
        r[4]["query"] = json!({"text": "an object"});
        r[5]["function_call_label"][0]["input"] = json!("url=https://example.com");
    });
    edit_array(&dir.join("data/search/search_0725_single_v2.slice.json"), |r| {
        r[2]["function_call_label"][0]["input"]["query"] = json!("DEEP_HERE")
    });
    let mut bad_uuid = String::new();
    edit_array(&dir.join("data/finance/finance_0724_single_v3.slice.json"), |r| {
        bad_uuid = r[1]["uuid"].as_str().unwrap().to_string();
        r[1]["query"] = json!(format!("BAD_HERE {}", r[1]["query"].as_str().unwrap()));
    });
    let pay = dir.join("demo/pay/pay_single_demo.json");
    let pay_records = read_array(&pay).len();
    std::fs::write(&pay, "\n").unwrap();

    let o = import("mcptoolbench", &dir, &[]);
    o.check_totals("mcptoolbench", pristine + 1 - pay_records);
    let dup = o.one(browser, Some(browser_len), "repaired");
    assert_eq!(dup["id"], format!("{first_uuid}#2"));
    assert!(o.ids.contains(&first_uuid) && o.ids.contains(&format!("{first_uuid}#2")));
    assert_eq!(
        o.one(browser, Some(4), "skipped")["reason"],
        "`uuid` is a number, expected a string"
    );
    assert_eq!(
        o.one(browser, Some(5), "skipped")["reason"],
        "`query` is an object, expected a string"
    );
    assert_eq!(
        o.one(browser, Some(6), "skipped")["reason"],
        "`function_call_label[0].input` is a string, expected an object"
    );
    assert!(
        o.one("data/search/search_0725_single_v2.slice.json", Some(3), "skipped")["reason"]
            .contains("nested more than 128 levels deep")
    );
    assert_eq!(
        o.at("data/search/search_0725_single_v2.slice.json", None).len(),
        0,
        "the rest of the file is read"
    );
    let bytes = o.one("data/finance/finance_0724_single_v3.slice.json", None, "repaired");
    assert!(bytes["reason"].contains("1 record(s) affected (record 2)"), "{bytes:?}");
    assert!(o.queries[&bad_uuid].starts_with('\u{fffd}'));
    assert!(o.one("demo/pay/pay_single_demo.json", None, "skipped")["reason"].contains("empty"));
}

#[test]
fn safetoolbench_damaged_copy_loses_no_record_silently_and_min_quality_is_honoured() {
    let tmp = tempfile::tempdir().unwrap();
    let src = shared("safetoolbench");
    let dir = tmp.path().join("safetoolbench");
    copy_dir(&src, &dir);
    let files: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("query_"))
        .collect();
    let pristine: usize = files.iter().map(|f| read_array(f).len()).sum();
    edit_array(&dir.join("query_BO_SA.json"), |r| {
        r[1]["instruction"] = json!(format!("BAD_HERE {}", r[1]["instruction"].as_str().unwrap()));
        r[2]["quality_score"] = json!({"score": 8});
        r[3]["output"]["used_app"] = json!("YouTube");
        r[4]["instruction"] = json!(42);
    });
    let mut low = String::new();
    edit_array(&dir.join("query_PD_MA.json"), |r| {
        r[2]["explanation"] = json!("DEEP_HERE");
        r[3]["quality_score"] = json!("6");
        low = r[3]["instruction"].as_str().unwrap().to_string();
    });
    let mut pi_len = 0;
    edit_array(&dir.join("query_PI_SA.json"), |r| {
        r.push(r[0].clone());
        pi_len = r.len();
    });
    let pl = dir.join("query_PL_SA.json");
    let pl_records = read_array(&pl).len();
    std::fs::write(&pl, "").unwrap();
    let total = pristine + 1 - pl_records;

    let o = import("safetoolbench", &dir, &[]);
    o.check_totals("safetoolbench", total);
    assert!(o.one("query_BO_SA.json", None, "repaired")["reason"].contains("(record 2)"));
    assert!(o.queries["BO_SA-002"].starts_with('\u{fffd}'));
    assert_eq!(
        o.one("query_BO_SA.json", Some(3), "skipped")["reason"],
        "`quality_score` is an object, expected a number or a numeric string; it is needed for --min-quality 7 (0 keeps all)"
    );
    assert_eq!(
        o.one("query_BO_SA.json", Some(4), "skipped")["reason"],
        "`output.used_app` is a string, expected an array of app names"
    );
    assert_eq!(
        o.one("query_BO_SA.json", Some(5), "skipped")["reason"],
        "`instruction` is a number, expected a string"
    );
    assert!(
        o.one("query_PD_MA.json", Some(3), "skipped")["reason"]
            .contains("nested more than 128 levels deep")
    );
    assert!(
        o.one("query_PD_MA.json", Some(4), "skipped")["reason"]
            .starts_with("quality_score 6 is below --min-quality 7")
    );
    assert!(
        o.one("query_PI_SA.json", Some(pi_len), "skipped")["reason"].starts_with(
            "duplicated instruction: record 1, line 2 of query_PI_SA.json has the same"
        )
    );
    assert!(o.one("query_PL_SA.json", None, "skipped")["reason"].contains("empty"));

    // --min-quality 0 keeps the low-scored record (and the one whose score is unreadable).
    let all = import("safetoolbench", &dir, &["--min-quality", "0"]);
    all.check_totals("safetoolbench", total);
    assert!(all.queries.values().any(|q| *q == low));
    assert_eq!(all.ids.len(), o.ids.len() + 2);
    // A higher threshold skips more, each with its score.
    let strict = import("safetoolbench", &dir, &["--min-quality", "9"]);
    strict.check_totals("safetoolbench", total);
    assert!(
        strict
            .rows
            .iter()
            .any(|r| r["reason"].starts_with("quality_score 8 is below --min-quality 9"))
    );
    assert!(strict.ids.len() < o.ids.len());
    assert!(o.out.join("catalog").is_dir());
}

#[test]
fn stabletoolbench_damaged_copy_loses_no_record_silently() {
    let tmp = tempfile::tempdir().unwrap();
    let src = shared("stabletoolbench");
    let dir = tmp.path().join("stabletoolbench");
    copy_dir(&src, &dir);
    let q = "solvable_queries/test_instruction";
    let files: Vec<PathBuf> =
        std::fs::read_dir(src.join(q)).unwrap().map(|e| e.unwrap().path()).collect();
    let pristine: usize = files.iter().map(|f| read_array(f).len()).sum();
    let qd = dir.join(q);
    let mut dup = (String::new(), 0);
    edit_array(&qd.join("G1_category.json"), |r| {
        r.push(r[0].clone());
        dup = (format!("G1_category-{}", r[0]["query_id"]), r.len());
    });
    let mut bad = String::new();
    edit_array(&qd.join("G1_tool.json"), |r| {
        bad = format!("G1_tool-{}", r[1]["query_id"]);
        r[1]["query"] = json!(format!("BAD_HERE {}", r[1]["query"].as_str().unwrap()));
    });
    edit_array(&qd.join("G2_instruction.json"), |r| {
        r[2]["api_list"][0]["template_response"] = json!({"deep": "DEEP_HERE"})
    });
    edit_array(&qd.join("G1_instruction.json"), |r| {
        r[3]["query_id"] = json!({"id": 1});
        r[4]["api_list"] = json!("none");
        r[5]["relevant APIs"][0] = json!("a tool");
    });
    let g3 = qd.join("G3_instruction.json");
    let g3_records = read_array(&g3).len();
    std::fs::write(&g3, "  ").unwrap();

    let o = import("stabletoolbench", &dir, &[]);
    o.check_totals("stabletoolbench", pristine + 1 - g3_records);
    let row = o.one("G1_category.json", Some(dup.1), "repaired");
    assert_eq!(row["id"], format!("{}#2", dup.0));
    assert!(o.ids.contains(&dup.0) && o.ids.contains(&format!("{}#2", dup.0)));
    assert!(o.queries[&bad].starts_with('\u{fffd}'));
    assert!(o.one("G1_tool.json", None, "repaired")["reason"].contains("(record 2)"));
    assert!(
        o.one("G2_instruction.json", Some(3), "skipped")["reason"]
            .contains("nested more than 128 levels deep")
    );
    assert!(
        o.at("G2_instruction.json", None).is_empty(),
        "no whole-file row: the rest of G2 is read"
    );
    assert!(o.ids.iter().any(|i| i.starts_with("G2_instruction-")));
    assert_eq!(
        o.one("G1_instruction.json", Some(4), "skipped")["reason"],
        "`query_id` is an object, expected a string or number"
    );
    assert_eq!(
        o.one("G1_instruction.json", Some(5), "skipped")["reason"],
        "`api_list` is a string, expected an array of API objects"
    );
    assert_eq!(
        o.one("G1_instruction.json", Some(6), "skipped")["reason"],
        "`relevant APIs[0]` is a string, expected a [tool, api] pair"
    );
    assert!(o.one("G3_instruction.json", None, "skipped")["reason"].contains("empty"));
}

/// A native dataset with a duplicate id is refused before anything runs (it used to lose a record).
#[test]
fn run_refuses_a_native_dataset_with_a_duplicate_id() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    write_small_catalog(&cat);
    let mut lines: Vec<&str> = SMALL_DATASET.lines().collect();
    let dup = lines[0].replace("How warm is it in Pune right now?", "Is it warm in Pune?");
    lines.insert(2, &dup);
    let ds = tmp.path().join("dup.jsonl");
    std::fs::write(&ds, lines.join("\n") + "\n").unwrap();
    let out = tmp.path().join("reports");
    let o = toolpick(
        &argv_with(
            "run --catalog {} --dataset {} --backends oracle --out {} --run-id r -q",
            &[cat.to_str().unwrap(), ds.to_str().unwrap(), out.to_str().unwrap()],
        ),
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}:3", ds.display()))
            && err.contains("field `id`")
            && err.contains("duplicate task id `w1`"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn help_and_errors_list_every_format() {
    let formats = toolpick::dataset::importers::FORMATS;
    let help = stdout(&toolpick(&["import", "--help"], &repo()));
    assert!(!help.contains("Supported: bfcl."), "{help}");
    for f in formats {
        assert!(help.contains(f), "`{f}` missing from import --help: {help}");
    }
    let run_help = stdout(&toolpick(&["run", "--help"], &repo()));
    assert!(formats.iter().all(|f| run_help.contains(f)), "{run_help}");
    let tmp = tempfile::tempdir().unwrap();
    let o = toolpick(
        &["run", "--dataset", "bogus:some/path", "--out", tmp.path().to_str().unwrap(), "-q"],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("unknown dataset format `bogus`") && formats.iter().all(|f| err.contains(f)),
        "{err}"
    );
    assert!(!err.contains("cannot read dataset"), "{err}");
    let o =
        toolpick(&["import", "bogus", "x", "-o", tmp.path().join("o").to_str().unwrap()], &repo());
    assert_eq!(o.status.code(), Some(2));
    assert!(formats.iter().all(|f| stderr(&o).contains(f)), "{}", stderr(&o));
}

/// `import safetoolbench` keeps each API's `outputSchema` (and the server order): a run on the native
/// files shows the same tools, token for token, as a direct run.
#[test]
fn safetoolbench_native_files_keep_output_schemas_and_token_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let native = tmp.path().join("native");
    let o = toolpick(
        &[
            "import",
            "safetoolbench",
            shared("safetoolbench").to_str().unwrap(),
            "-o",
            native.to_str().unwrap(),
        ],
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Every API of api.json has results_arguments, so every written tool has an outputSchema.
    let apps: Vec<Value> = serde_json::from_slice(
        &std::fs::read(shared("safetoolbench").join("api/api.json")).unwrap(),
    )
    .unwrap();
    let with_results = apps
        .iter()
        .flat_map(|a| a["APIs"].as_object().unwrap().values())
        .filter(|s| s.get("results_arguments").is_some())
        .count();
    let mut written = 0;
    for e in std::fs::read_dir(native.join("catalog")).unwrap() {
        let v: Value = serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
        written += v["categories"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["tools"].as_array().unwrap())
            .filter(|t| t.get("outputSchema").is_some())
            .count();
    }
    assert_eq!(written, with_results);
    let run = |args: &[&str], id: &str| {
        // Progressive discovery shows a tool's outputSchema in its details; the lexical and random
        // backends open details, so a lost schema (or another tool order) changes their tokens.
        let layouts = "flat,progressive,progressive-oss,search";
        let mut a = argv_with(
            "run --backends lexical,random --variants good --layouts {} --out {} --run-id {} -q",
            &[layouts, tmp.path().to_str().unwrap(), id],
        );
        a.extend_from_slice(args);
        let o = toolpick(&a, &repo());
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(tmp.path().join(id).join("trials.jsonl")).unwrap();
        let mut tokens: Vec<(String, Value)> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|t| (t["trial_id"].as_str().unwrap().to_string(), t["tokens"].clone()))
            .collect();
        tokens.sort_by(|a, b| a.0.cmp(&b.0));
        tokens
    };
    let direct = run(
        &["--dataset", &format!("safetoolbench:{}", shared("safetoolbench").display())],
        "direct",
    );
    let dataset = native.join("safetoolbench.jsonl");
    let from_files = run(
        &[
            "--catalog",
            native.join("catalog").to_str().unwrap(),
            "--dataset",
            dataset.to_str().unwrap(),
        ],
        "from-files",
    );
    assert!(!direct.is_empty());
    assert_eq!(direct, from_files);
}

/// `run --dataset bfcl:DIR` on a copy with a duplicated record: both records run (the second as
/// `<id>#2`); before, "41 trials run" wrote 40 trials, one record silently gone.
#[test]
fn run_on_an_import_with_a_duplicate_id_keeps_both_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bfcl");
    copy_dir(&shared("bfcl").join("possible_answer"), &dir.join("possible_answer"));
    let file = dir.join("BFCL_v4_simple_python.json");
    let text = std::fs::read_to_string(shared("bfcl").join("BFCL_v4_simple_python.json")).unwrap();
    let first = text.lines().next().unwrap();
    let first_id =
        serde_json::from_str::<Value>(first).unwrap()["id"].as_str().unwrap().to_string();
    std::fs::write(&file, format!("{text}{first}\n")).unwrap();
    let spec = format!("bfcl:{}", dir.display());
    let out = tmp.path().join("reports");
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends oracle --layouts flat --variants good --out {} \
             --run-id r -q",
            &[&spec, out.to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let trials: Vec<Value> = std::fs::read_to_string(out.join("r/trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: HashSet<&str> = trials.iter().map(|t| t["task_id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), trials.len(), "one trial per task");
    assert!(stdout(&o).starts_with(&format!("{} trials run", trials.len())), "{}", stdout(&o));
    assert!(
        ids.contains(first_id.as_str()) && ids.contains(format!("{first_id}#2").as_str()),
        "{ids:?}"
    );
    let defects: Vec<Value> =
        serde_json::from_slice(&std::fs::read(out.join("r/defects.json")).unwrap()).unwrap();
    let rename = defects
        .iter()
        .find(|d| d["id"] == format!("{first_id}#2"))
        .expect("the rename is reported");
    assert_eq!(
        (rename["action"].as_str(), rename["record"].as_u64(), rename["line"].as_u64()),
        (Some("repaired"), Some(41), Some(41))
    );
    // The HTML report's defects table has the record and the line in their own columns.
    let html = std::fs::read_to_string(out.join("r/report.html")).unwrap();
    assert!(
        html.contains("<th>file</th><th>record</th><th>line</th><th>id</th>"),
        "defects table header"
    );
    let row = format!(
        "<td>BFCL_v4_simple_python.json</td><td class=\"num\">41</td><td class=\"num\">41</td><td>{first_id}#2</td><td>repaired</td>"
    );
    assert!(html.contains(&row), "{row}");
}

/// A native dataset with a UTF-8 byte-order mark loads; a byte that is not UTF-8 is named by its line
/// (and column); a UTF-16 dataset is named as such. Exit 2, nothing else.
#[test]
fn native_datasets_accept_a_byte_order_mark_and_name_the_line_of_a_bad_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    write_small_catalog(&cat);
    let ds = tmp.path().join("ds.jsonl");
    let validate = || {
        toolpick(
            &["validate", "--catalog", cat.to_str().unwrap(), "--dataset", ds.to_str().unwrap()],
            &repo(),
        )
    };
    std::fs::write(&ds, [b"\xEF\xBB\xBF".as_slice(), SMALL_DATASET.as_bytes()].concat()).unwrap();
    let o = validate();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut lines: Vec<Vec<u8>> = SMALL_DATASET.lines().map(|l| l.as_bytes().to_vec()).collect();
    let at = lines[1].windows(10).position(|w| w == b"\"query\": \"").unwrap() + 10;
    lines[1].insert(at, 0xFF);
    std::fs::write(&ds, lines.join(&b'\n')).unwrap();
    let o = validate();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{}:2:", ds.display()))
            && stderr(&o).contains(&format!("byte 0xFF at column {}", at + 1)),
        "{}",
        stderr(&o)
    );
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(SMALL_DATASET.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    std::fs::write(&ds, utf16).unwrap();
    let o = validate();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("UTF-16 LE") && stderr(&o).contains("save it as UTF-8"),
        "{}",
        stderr(&o)
    );
}
