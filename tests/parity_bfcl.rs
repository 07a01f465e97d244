//! The BFCL parity run (scripts/parity-bfcl.sh) as a test: toolpick's verdicts against BFCL's own
//! checker on every record of `../shared/external/bfcl`, with the real binary.
//!
//! Of the `bfcl` tier (tests/common/tiers.rs): needs `bfcl-eval` from PyPI in `target/parity-venv`,
//! installed before the tests by `scripts/install-test-deps.sh`. The expected number of rows is
//! computed here from the shared files with the applicability rules of scripts/parity_bfcl_mutations.py, not read from the
//! script's output.

mod common;
use common::shared;
use common::tiers::{self, Tier};

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// BFCL's scalar types (the nested mutations change values declared as one of these).
const SCALARS: [&str; 4] = ["integer", "float", "string", "boolean"];

const AST: [&str; 6] =
    ["simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple"];

struct Record {
    id: String,
    category: String,
    functions: Vec<Value>,
    ground_truth: Vec<Value>,
}

fn records(dir: &Path) -> Vec<Record> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("BFCL_v4_") && p.is_file())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        let category = name.trim_start_matches("BFCL_v4_").trim_end_matches(".json").to_string();
        let mut answers: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        if let Ok(text) = std::fs::read_to_string(dir.join("possible_answer").join(&name)) {
            for l in text.lines().filter(|l| !l.trim().is_empty()) {
                let v: Value = serde_json::from_str(l).unwrap();
                answers.insert(
                    v["id"].as_str().unwrap().into(),
                    v["ground_truth"].as_array().unwrap().clone(),
                );
            }
        }
        for l in std::fs::read_to_string(&f).unwrap().lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(l).unwrap();
            let id = v["id"].as_str().unwrap().to_string();
            out.push(Record {
                ground_truth: answers.remove(&id).unwrap_or_default(),
                id,
                category: category.clone(),
                functions: v["function"].as_array().cloned().unwrap_or_default(),
            });
        }
    }
    out
}

fn is_empty_string(v: &Value) -> bool {
    v.as_str() == Some("")
}

/// The correct answer's value for a list of acceptable values (None: the parameter is omitted).
fn resolve(acceptable: &[Value]) -> Option<Value> {
    match acceptable.iter().find(|v| !is_empty_string(v) && !v.is_null()) {
        Some(v) => Some(v.clone()),
        None if acceptable.iter().any(is_empty_string) => None,
        None => Some(Value::Null),
    }
}

/// A dict-typed value's per-key acceptable lists resolved (one level), as is each dict of a list of dicts.
fn concrete(value: Value, schema: &Value) -> Value {
    match (schema["type"].as_str(), value) {
        (Some("dict"), Value::Object(m)) => Value::Object(
            m.into_iter()
                .filter_map(|(k, l)| match l {
                    Value::Array(a) => resolve(&a).map(|v| (k, v)),
                    other => Some((k, other)),
                })
                .collect(),
        ),
        (Some("array" | "tuple"), Value::Array(a)) if schema["items"]["type"] == "dict" => {
            Value::Array(a.into_iter().map(|v| concrete(v, &schema["items"])).collect())
        }
        (_, v) => v,
    }
}

/// One parameter of the correct answer, with what the rules look at.
struct Param {
    value: Value,
    schema: Value,
    required: bool,
    acceptable: Vec<Value>,
}

/// Per expected call: the correct answer's parameters, how many doc parameters the ground truth leaves
/// out, and how many ground-truth parameters the doc defines but does not require (given or omitted).
fn correct(r: &Record) -> Vec<(Vec<Param>, usize, usize)> {
    r.ground_truth
        .iter()
        .map(|call| {
            let (name, args) = call.as_object().unwrap().iter().next().unwrap();
            let doc =
                r.functions.iter().find(|f| f["name"] == *name).cloned().unwrap_or(Value::Null);
            let props = doc["parameters"]["properties"].as_object().cloned().unwrap_or_default();
            let required: Vec<&str> = doc["parameters"]["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let args = args.as_object().unwrap();
            let params = args
                .iter()
                .filter_map(|(p, acc)| {
                    let acc = acc.as_array().unwrap();
                    if !props.contains_key(p) && acc.iter().any(is_empty_string) {
                        return None;
                    }
                    let schema = props.get(p).cloned().unwrap_or(Value::Null);
                    resolve(acc).map(|v| Param {
                        value: concrete(v, &schema),
                        schema,
                        required: required.contains(&p.as_str()),
                        acceptable: acc.clone(),
                    })
                })
                .collect();
            let optional_in_truth = args
                .keys()
                .filter(|p| props.contains_key(*p) && !required.contains(&p.as_str()))
                .count();
            (params, props.keys().filter(|p| !args.contains_key(*p)).count(), optional_in_truth)
        })
        .collect()
}

fn integral_float(v: &Value) -> bool {
    v.is_f64() && v.as_f64().unwrap().fract() == 0.0
}

fn has_quote(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.contains('\'') || s.contains('"'))
}

/// The mutations that apply to a record (scripts/parity_bfcl_mutations.py's rules).
fn applicable(r: &Record) -> Vec<&'static str> {
    let has_fn = !r.functions.is_empty();
    match r.category.as_str() {
        "irrelevance" | "live_irrelevance" => {
            let mut m = vec!["correct"];
            if has_fn {
                m.extend(["irrelevance_call", "irrelevance_malformed", "irrelevance_invented"]);
            }
            return m;
        }
        "live_relevance" => {
            return if has_fn {
                vec!["correct", "no_call", "relevance_malformed", "relevance_invented"]
            } else {
                vec!["no_call"]
            };
        }
        c => assert!(AST.contains(&c), "{}: unknown category {c}", r.id),
    }
    let calls = correct(r);
    let any = |f: &dyn Fn(&Param) -> bool| calls.iter().any(|(ps, _, _)| ps.iter().any(f));
    let ty = |p: &Param| p.schema["type"].as_str().unwrap_or("").to_string();
    let names: BTreeSet<&str> = r.functions.iter().filter_map(|f| f["name"].as_str()).collect();
    let many = calls.len() >= 2;
    let array = |p: &Param| matches!(ty(p).as_str(), "array" | "tuple");
    let items = |p: &Param, f: &dyn Fn(&Value, &Value) -> bool| {
        array(p) && p.value.as_array().is_some_and(|a| a.iter().any(|x| f(x, &p.schema["items"])))
    };
    let keys = |p: &Param, f: &dyn Fn(&Value, &Value) -> bool| {
        ty(p) == "dict"
            && p.value
                .as_object()
                .is_some_and(|o| o.iter().any(|(k, x)| f(x, &p.schema["properties"][k])))
    };
    let scalar =
        |x: &Value, s: &Value| !x.is_null() && SCALARS.contains(&s["type"].as_str().unwrap_or(""));
    let int = |x: &Value| x.is_i64() || x.is_u64();
    let rules: [(&str, bool); 37] = [
        ("correct", true),
        ("wrong_tool", names.len() >= 2),
        ("invented_tool", true),
        ("extra_param_doc", calls.iter().any(|(_, left_out, _)| *left_out > 0)),
        ("extra_param_unknown", true),
        ("missing_required", any(&|p| p.required)),
        ("omit_optional", any(&|p| !p.required && !p.acceptable.iter().any(is_empty_string))),
        ("renamed_param", any(&|_| true)),
        ("wrong_type", any(&|p| !p.value.is_null())),
        ("wrong_value", any(&|p| !p.value.is_null() && !p.value.is_object())),
        ("int_for_float", any(&|p| ty(p) == "float" && integral_float(&p.value))),
        (
            "float_for_int_literal",
            any(&|p| ty(p) == "float" && (p.value.is_i64() || p.value.is_u64())),
        ),
        ("float_for_int", any(&|p| ty(p) == "integer" && (p.value.is_i64() || p.value.is_u64()))),
        (
            "int_for_float_in_array",
            any(&|p| {
                matches!(ty(p).as_str(), "array" | "tuple")
                    && p.schema["items"]["type"] == "float"
                    && p.value.as_array().is_some_and(|a| a.iter().any(integral_float))
            }),
        ),
        (
            "string_case",
            any(&|p| p.value.as_str().is_some_and(|s| s.chars().any(|c| c.is_ascii_alphabetic()))),
        ),
        ("string_punct", any(&|p| p.value.as_str().is_some_and(|s| !s.is_empty()))),
        (
            "string_quote",
            any(&|p| {
                has_quote(&p.value) || p.value.as_array().is_some_and(|a| a.iter().any(has_quote))
            }),
        ),
        (
            "reordered_list",
            any(&|p| {
                p.value.as_array().is_some_and(|a| a.len() >= 2 && a.iter().any(|x| *x != a[0]))
            }),
        ),
        ("extra_call", true),
        ("fewer_calls", many),
        ("no_call", true),
        ("swapped_order", many),
        ("malformed_json", true),
        ("array_item_retyped", any(&|p| items(p, &scalar))),
        ("array_item_float_for_int", any(&|p| items(p, &|x, s| int(x) && s["type"] == "integer"))),
        (
            "array_item_enum_case",
            any(&|p| {
                items(p, &|x, s| {
                    s.get("enum").is_some()
                        && x.as_str().is_some_and(|t| t.chars().any(|c| c.is_ascii_alphabetic()))
                })
            }),
        ),
        ("dict_value_retyped", any(&|p| keys(p, &scalar))),
        (
            "dict_value_float_for_int",
            any(&|p| {
                keys(p, &|x, s| int(x) && (s["type"] == "integer" || s.get("type").is_none()))
            }),
        ),
        ("null_optional", calls.iter().any(|(_, _, optional)| *optional > 0)),
        (
            "extra_rejected_before",
            any(&|p| !p.value.is_null() && p.schema.get("type").is_some_and(|t| t != "any")),
        ),
        (
            "extra_rejected_after",
            any(&|p| !p.value.is_null() && p.schema.get("type").is_some_and(|t| t != "any")),
        ),
        ("extra_malformed_before", true),
        ("extra_malformed_after", true),
        ("extra_invented_before", true),
        ("extra_invented_after", true),
        ("extra_missing_required_before", any(&|p| p.required)),
        ("extra_missing_required_after", any(&|p| p.required)),
    ];
    rules.into_iter().filter(|(_, ok)| *ok).map(|(m, _)| m).collect()
}

#[test]
fn toolpick_agrees_with_bfcl_checker_except_for_documented_differences() {
    if !tiers::ready(Tier::Bfcl) {
        return;
    }
    let bfcl = shared("bfcl");
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(common::repo().join("scripts/parity-bfcl.sh"))
        .arg(out.path())
        .args(["--", "--bfcl", bfcl.to_str().unwrap()])
        .env("TOOLPICK", env!("CARGO_BIN_EXE_toolpick"))
        .output()
        .expect("scripts/parity-bfcl.sh runs");
    let log = format!("{}\n{}", common::stdout(&o), common::stderr(&o));
    let csv_path = out.path().join("parity.csv");
    assert!(csv_path.exists(), "no parity.csv (exit {:?}):\n{log}", o.status.code());

    // Rows: every record × every mutation that applies to it.
    let recs = records(&bfcl);
    assert!(!recs.is_empty());
    let mut want: BTreeMap<String, usize> = BTreeMap::new();
    for r in &recs {
        for m in applicable(r) {
            *want.entry(m.to_string()).or_default() += 1;
        }
    }
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let h = reader.headers().unwrap().clone();
    let col = |name: &str| {
        h.iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("parity.csv has no `{name}` column"))
    };
    let (rec, mutation, bv, tv, agree) = (
        col("record"),
        col("mutation"),
        col("bfcl_verdict"),
        col("toolpick_verdict"),
        col("agree"),
    );
    let mut got: BTreeMap<String, usize> = BTreeMap::new();
    for r in &rows {
        *got.entry(r[mutation].to_string()).or_default() += 1;
    }
    assert_eq!(got, want, "rows per mutation");

    // The correct answer: BFCL passes it on every record, and toolpick agrees on every record it imported.
    let imported: BTreeSet<String> = toolpick::dataset::importers::import("bfcl", &bfcl)
        .unwrap()
        .dataset
        .tasks
        .into_iter()
        .map(|t| t.id)
        .collect();
    let correct: Vec<&csv::StringRecord> =
        rows.iter().filter(|r| &r[mutation] == "correct").collect();
    assert_eq!(correct.len(), recs.len());
    for r in &correct {
        assert_eq!(&r[bv], "pass", "BFCL rejects the generated correct answer of {}", &r[rec]);
        if imported.contains(&r[rec]) {
            assert_eq!((&r[tv], &r[agree]), ("pass", "yes"), "correct answer of {}", &r[rec]);
        } else {
            assert_eq!(&r[tv], "not_imported", "{}", &r[rec]);
        }
    }
    assert!(
        o.status.success(),
        "parity run failed (exit {:?}): a disagreement with BFCL that is not documented, a record lost \
         without a reason, or a system message the imported task dropped:\n{log}",
        o.status.code()
    );
}
