//! Task subsets through the real binary on the bundled suite: every selection (`--tasks`, `--filter`,
//! `--sample`, `--limit`, their TOML keys) runs exactly the tasks an independent reading of
//! `datasets/starter.jsonl` says, the sample is seeded and stratified by kind, bad selections exit 2
//! before anything is written, a run cannot be resumed with another selection, `run.json` records it,
//! and `compare` says when a subset run is compared with a full one.

mod common;
use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A task as the test reads it from the dataset file (not through toolpick).
#[derive(Clone, Debug)]
struct T {
    id: String,
    kind: String,
    category: String,
    tags: Vec<String>,
}

fn starter() -> Vec<T> {
    std::fs::read_to_string(repo().join("datasets/starter.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim().starts_with("//"))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            T {
                id: s("id"),
                kind: s("kind"),
                category: s("category"),
                tags: v["tags"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| t.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

fn ids<'a>(tasks: impl IntoIterator<Item = &'a T>) -> Vec<String> {
    tasks.into_iter().map(|t| t.id.clone()).collect()
}

/// A glob as a regex: `*` → `.*`, `?` → `.`, the rest escaped.
fn glob_regex(pattern: &str) -> regex::Regex {
    let body: String = pattern
        .chars()
        .map(|c| match c {
            '*' => ".*".to_string(),
            '?' => ".".to_string(),
            c => regex::escape(&c.to_string()),
        })
        .collect();
    regex::Regex::new(&format!("^{body}$")).unwrap()
}

/// The smallest matrix: one cell (good, flat, oracle), so the trials are the selected tasks once each.
fn run(out: &Path, id: &str, extra: &[&str]) -> std::process::Output {
    let mut args = argv_with(
        "run --out {} --run-id {} -q --variants good --layouts flat --backends oracle",
        &[out.to_str().unwrap(), id],
    );
    args.extend_from_slice(extra);
    toolpick(&args, &repo())
}

fn run_ok(out: &Path, id: &str, extra: &[&str]) -> std::process::Output {
    let o = run(out, id, extra);
    assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
    o
}

/// Task ids of a run's trials, in file (matrix) order, with the dataset of each.
fn trial_tasks(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|t| {
            (t["dataset"].as_str().unwrap().to_string(), t["task_id"].as_str().unwrap().to_string())
        })
        .collect()
}

fn selected(dir: &Path) -> Vec<String> {
    trial_tasks(dir).into_iter().map(|(_, t)| t).collect()
}

fn run_json(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap()
}

/// FNV-1a 64, as the sample's ranking is specified (docs/concepts.md, module docs).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100000001b3))
}

const KINDS: [&str; 6] = ["single", "multi", "parallel", "abstain", "refuse", "relevant"];

/// The documented sample: per kind ⌊n·share⌋ plus one for the largest remainders (ties to the kind listed
/// first), the tasks with the smallest hash of `<seed>|sample|<id>`, in dataset order.
fn expected_sample(tasks: &[T], n: usize, seed: u64) -> Vec<String> {
    let total = tasks.len();
    let sizes: Vec<usize> =
        KINDS.iter().map(|k| tasks.iter().filter(|t| t.kind == *k).count()).collect();
    let quotas: Vec<f64> = sizes.iter().map(|s| n as f64 * *s as f64 / total as f64).collect();
    let mut seats: Vec<usize> = quotas.iter().map(|q| q.floor() as usize).collect();
    let mut by_remainder: Vec<usize> = (0..KINDS.len()).collect();
    by_remainder.sort_by(|a, b| {
        (quotas[*b] - quotas[*b].floor())
            .partial_cmp(&(quotas[*a] - quotas[*a].floor()))
            .unwrap()
            .then(a.cmp(b))
    });
    let left = n - seats.iter().sum::<usize>();
    for k in by_remainder.into_iter().take(left) {
        seats[k] += 1;
    }
    let mut keep = BTreeSet::new();
    for (k, kind) in KINDS.iter().enumerate() {
        let mut stratum: Vec<&T> = tasks.iter().filter(|t| t.kind == *kind).collect();
        stratum.sort_by_key(|t| fnv(format!("{seed}|sample|{}", t.id).as_bytes()));
        keep.extend(stratum.into_iter().take(seats[k]).map(|t| t.id.clone()));
    }
    tasks.iter().filter(|t| keep.contains(&t.id)).map(|t| t.id.clone()).collect()
}

fn kinds_of(selection: &[String], tasks: &[T]) -> BTreeMap<String, usize> {
    let kind: BTreeMap<&str, &str> =
        tasks.iter().map(|t| (t.id.as_str(), t.kind.as_str())).collect();
    let mut out = BTreeMap::new();
    for id in selection {
        *out.entry(kind[id.as_str()].to_string()).or_insert(0) += 1;
    }
    out
}

#[test]
fn task_globs_select_exactly_the_matching_ids_and_run_json_records_them() {
    let tmp = tempfile::tempdir().unwrap();
    let all = starter();
    // Comma list and a repeated flag; `?` and `*`.
    run_ok(tmp.path(), "g", &["--tasks", "dev-00?,safe-*1", "--tasks", "comms-01*"]);
    let patterns = ["dev-00?", "safe-*1", "comms-01*"].map(glob_regex);
    let expected = ids(all.iter().filter(|t| patterns.iter().any(|p| p.is_match(&t.id))));
    assert!(
        expected.len() > 10 && expected.len() < 60,
        "the patterns pick a real subset: {}",
        expected.len()
    );
    assert_eq!(selected(&tmp.path().join("g")), expected, "the matching tasks, in dataset order");

    let meta = run_json(&tmp.path().join("g"));
    assert_eq!(meta["subset"]["tasks"], serde_json::json!(["dev-00?", "safe-*1", "comms-01*"]));
    assert_eq!(
        meta["subset"]["kept"],
        serde_json::json!([{"dataset": "starter", "catalog": "workspace", "available": all.len(), "kept": expected.len()}])
    );
    assert_eq!(meta["config"]["subset"]["tasks"], meta["subset"]["tasks"]);
    assert!(meta["config"]["subset"].get("kept").is_none(), "counts are not settings");
}

#[test]
fn filters_and_across_keys_and_or_within_a_key() {
    let tmp = tempfile::tempdir().unwrap();
    let all = starter();
    run_ok(
        tmp.path(),
        "f",
        &["--filter", "kind=single", "--filter", "tag=enum", "--filter", "kind=multi"],
    );
    let expected = ids(all.iter().filter(|t| {
        (t.kind == "single" || t.kind == "multi") && t.tags.iter().any(|g| g == "enum")
    }));
    assert!(!expected.is_empty() && expected.len() < all.len());
    assert_eq!(selected(&tmp.path().join("f")), expected);

    // Patterns first, then the filter.
    run_ok(tmp.path(), "c", &["--filter", "category=payments", "--tasks", "biz-*"]);
    let expected = ids(all.iter().filter(|t| t.category == "payments" && t.id.starts_with("biz-")));
    assert!(!expected.is_empty());
    assert_eq!(selected(&tmp.path().join("c")), expected);
}

#[test]
fn limit_keeps_the_first_n_after_the_other_selections() {
    let tmp = tempfile::tempdir().unwrap();
    let all = starter();
    run_ok(tmp.path(), "l", &["--filter", "category=chat", "--limit", "5"]);
    assert_eq!(
        selected(&tmp.path().join("l")),
        ids(all.iter().filter(|t| t.category == "chat").take(5))
    );
    // Sample, then limit: the first 4 of the sample.
    run_ok(tmp.path(), "sl", &["--sample", "12", "--limit", "4", "--seed", "5"]);
    assert_eq!(selected(&tmp.path().join("sl")), expected_sample(&all, 12, 5)[..4].to_vec());
    // More than is left keeps everything left.
    run_ok(tmp.path(), "big", &["--filter", "kind=abstain", "--limit", "1000", "--sample", "1000"]);
    assert_eq!(selected(&tmp.path().join("big")), ids(all.iter().filter(|t| t.kind == "abstain")));
}

#[test]
fn a_subset_run_of_24_tasks_is_one_command() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    // The default matrix (good,bad × flat,progressive × lexical,oracle), 24 tasks in every cell.
    let o = toolpick(&["run", "--limit", "24", "--out", out, "--run-id", "quick", "-q"], &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("subset (--limit 24): starter/workspace 24 of 375 tasks"),
        "{}",
        stdout(&o)
    );
    let first: Vec<String> = ids(starter().iter().take(24));
    let trials = selected(&tmp.path().join("quick"));
    assert_eq!(trials.len(), 24 * 8);
    for cell in trials.chunks(24) {
        assert_eq!(cell, first.as_slice());
    }
}

#[test]
fn the_sample_is_seeded_and_stratified_by_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let all = starter();
    for (id, seed) in [("s1", "1"), ("s1b", "1"), ("s2", "2")] {
        run_ok(tmp.path(), id, &["--sample", "24", "--seed", seed]);
    }
    let (a, b, c) = (
        selected(&tmp.path().join("s1")),
        selected(&tmp.path().join("s1b")),
        selected(&tmp.path().join("s2")),
    );
    assert_eq!(a.len(), 24);
    assert_eq!(a, b, "same seed, same tasks");
    assert_ne!(a, c, "another seed, other tasks");
    assert_eq!(a, expected_sample(&all, 24, 1), "the documented draw");
    assert_eq!(c, expected_sample(&all, 24, 2));
    // Proportions per kind within rounding: 245/35/21/26/48 of 375 → 15.68, 2.24, 1.34, 1.66, 3.07.
    for sel in [&a, &c] {
        let per_kind = kinds_of(sel, &all);
        for kind in KINDS {
            let share =
                24.0 * all.iter().filter(|t| t.kind == kind).count() as f64 / all.len() as f64;
            let got = *per_kind.get(kind).unwrap_or(&0) as f64;
            assert!(
                got >= share.floor() && got <= share.ceil(),
                "{kind}: {got} for a quota of {share}"
            );
        }
        assert_eq!(per_kind["single"], 16);
        assert_eq!(per_kind["abstain"], 2);
    }
    // Stratified after the filter: only what the filter kept is drawn from.
    run_ok(tmp.path(), "fs", &["--filter", "tag=near-miss", "--sample", "10", "--seed", "3"]);
    let pool: Vec<T> =
        all.iter().filter(|t| t.tags.iter().any(|g| g == "near-miss")).cloned().collect();
    assert_eq!(selected(&tmp.path().join("fs")), expected_sample(&pool, 10, 3));
}

#[test]
fn invalid_selections_exit_2_naming_the_flag_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["--sample", "0"], vec!["--sample", "at least 1"]),
        (vec!["--limit", "0"], vec!["--limit", "at least 1"]),
        (vec!["--limit", "ten"], vec!["--limit", "not a whole number"]),
        (vec!["--filter", "colour=red"], vec!["--filter", "kind, category, tag"]),
        (vec!["--filter", "kind=singel"], vec!["--filter", "single, multi, parallel"]),
        (vec!["--filter", "tag"], vec!["--filter", "key=value"]),
        (vec!["--tasks", ""], vec!["--tasks", "empty"]),
        (vec!["--tasks", "dev-001,"], vec!["--tasks", "empty"]),
        // Typos: a pattern or filter that matches no task anywhere.
        (vec!["--tasks", "dev-001,dve-*"], vec!["--tasks", "`dve-*` matches no task"]),
        (
            vec!["--filter", "tag=enums"],
            vec!["--filter", "`tag=enums` matches no task", "near-miss"],
        ),
        // A selection that empties the dataset names the step and the dataset.
        (
            vec!["--filter", "kind=abstain", "--filter", "tag=enum"],
            vec!["--filter", "`tag=enum` (after --filter kind=abstain) keeps none", "starter"],
        ),
        (
            vec!["--tasks", "safe-*", "--filter", "category=wiki", "--filter", "kind=single"],
            vec!["--filter", "(after --tasks safe-*", "starter"],
        ),
    ] {
        let o = run(tmp.path(), "bad", &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        for s in says {
            assert!(stderr(&o).contains(s), "{args:?} should say {s:?}: {}", stderr(&o));
        }
        assert!(!tmp.path().join("bad").exists(), "{args:?} wrote a run directory");
    }
}

#[test]
fn resuming_with_another_selection_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    run_ok(tmp.path(), "r", &["--limit", "5"]);
    for other in [
        vec!["--limit", "6"],
        vec![],
        vec!["--sample", "5"],
        vec!["--limit", "5", "--filter", "kind=single"],
    ] {
        let o = run(tmp.path(), "r", &other);
        assert_eq!(o.status.code(), Some(2), "{other:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("task subset"), "{}", stderr(&o));
    }
    let o = run_ok(tmp.path(), "r", &["--limit", "5"]);
    assert!(stdout(&o).starts_with("0 trials run, 5 already done"), "{}", stdout(&o));
    // A sample drawn with another seed is another matrix too (the seed is part of it anyway).
    run_ok(tmp.path(), "s", &["--sample", "5", "--seed", "1"]);
    assert_eq!(run(tmp.path(), "s", &["--sample", "5", "--seed", "2"]).status.code(), Some(2));
}

#[test]
fn toml_keys_select_like_the_flags_and_bad_values_name_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let all = starter();
    let mini = tmp.path().join("mini.jsonl");
    // A second dataset: the first 30 lines of the starter set (the selection applies per dataset).
    let text = std::fs::read_to_string(repo().join("datasets/starter.jsonl")).unwrap();
    std::fs::write(&mini, text.lines().take(30).collect::<Vec<_>>().join("\n")).unwrap();
    let exp = tmp.path().join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "datasets = [{:?}, {:?}]\ntasks = [\"dev-*\", \"comms-*\"]\nfilter = [\"kind=single\"]\nlimit = 7\n",
            repo().join("datasets/starter.jsonl").to_str().unwrap(),
            mini.to_str().unwrap()
        ),
    )
    .unwrap();
    let exp_s = exp.to_str().unwrap();
    run_ok(tmp.path(), "t", &["--config", exp_s]);
    let pick = |tasks: &[T], n: usize| {
        ids(tasks
            .iter()
            .filter(|t| {
                (t.id.starts_with("dev-") || t.id.starts_with("comms-")) && t.kind == "single"
            })
            .take(n))
    };
    let mini_tasks: Vec<T> = all[..30].to_vec();
    let mut expected: Vec<(String, String)> =
        pick(&all, 7).into_iter().map(|t| ("starter".to_string(), t)).collect();
    expected.extend(pick(&mini_tasks, 7).into_iter().map(|t| ("mini".to_string(), t)));
    assert_eq!(trial_tasks(&tmp.path().join("t")), expected);
    let kept = &run_json(&tmp.path().join("t"))["subset"]["kept"];
    assert_eq!(
        kept[1],
        serde_json::json!({"dataset": "mini", "catalog": "workspace", "available": 30, "kept": 7})
    );

    // A flag replaces its key, the other keys stay.
    run_ok(tmp.path(), "t3", &["--config", exp_s, "--limit", "3"]);
    assert_eq!(selected(&tmp.path().join("t3")).len(), 6);

    // A selection that empties one dataset is an error naming it.
    let o =
        run(tmp.path(), "e", &["--config", exp_s, "--tasks", "safe-*", "--filter", "kind=refuse"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--tasks: `safe-*` keeps none of the 30 tasks of dataset mini"),
        "{}",
        stderr(&o)
    );

    for (body, line, key) in [
        ("seed = 1\nsample = 0\n", 2, "sample"),
        ("filter = [\"kind=single\", \"color=red\"]\n", 1, "filter"),
        ("tasks = []\n", 1, "tasks"),
    ] {
        std::fs::write(&exp, body).unwrap();
        let o = run(tmp.path(), "x", &["--config", exp_s]);
        assert_eq!(o.status.code(), Some(2), "{body}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("exp.toml:{line}: field `{key}`")),
            "{body}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn compare_says_when_a_subset_run_meets_a_full_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (full, sub, sub2) =
        (tmp.path().join("full"), tmp.path().join("sub"), tmp.path().join("sub2"));
    run_ok(tmp.path(), "full", &[]);
    run_ok(tmp.path(), "sub", &["--sample", "24"]);
    run_ok(tmp.path(), "sub2", &["--sample", "24"]);
    let o = toolpick(&["compare", full.to_str().unwrap(), sub.to_str().unwrap()], &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "warning: the runs ran different task subsets (A: all tasks; B: --sample 24)"
        ),
        "{}",
        stderr(&o)
    );
    // compare pairs the tasks that need a call (the headline's): those the sample kept, and the rest of
    // the starter suite's only in A — counted from the dataset and the sample run's trials.
    let kept: BTreeSet<String> = selected(&sub).into_iter().collect();
    let needs_call = |t: &&T| matches!(t.kind.as_str(), "single" | "multi" | "parallel");
    let all = starter();
    let call_tasks: Vec<&T> = all.iter().filter(needs_call).collect();
    let paired = call_tasks.iter().filter(|t| kept.contains(&t.id)).count();
    let unpaired: BTreeSet<String> =
        call_tasks.iter().filter(|t| !kept.contains(&t.id)).map(|t| t.id.clone()).collect();
    assert!(
        paired > 0 && paired < 24,
        "the sample keeps some call tasks and some others: {paired}"
    );
    assert!(
        stderr(&o)
            .contains(&format!("{} task(s) scored only in A and 0 only in B", unpaired.len())),
        "{}",
        stderr(&o)
    );
    let row = csv_rows(&sub.join("compare.csv")).remove(0);
    assert_eq!(
        (row["tasks"].clone(), row["tasks_only_a"].clone(), row["tasks_only_b"].as_str()),
        (paired.to_string(), unpaired.len().to_string(), "0")
    );
    let md = std::fs::read_to_string(sub.join("compare.md")).unwrap();
    assert!(md.contains("**Warning**: the runs ran different task subsets"), "{md}");
    let first = unpaired.iter().next().unwrap();
    assert!(md.contains(&format!("only in A ({}): `{first}`", unpaired.len())), "{md}");
    let html = std::fs::read_to_string(sub.join("compare.html")).unwrap();
    assert!(
        html.contains("Warning:")
            && html.contains(&format!("{} task(s) only in A", unpaired.len())),
        "the page says it too"
    );

    // The same subset on both sides: nothing to warn about.
    let o = toolpick(&["compare", sub.to_str().unwrap(), sub2.to_str().unwrap()], &repo());
    assert!(o.status.success() && !stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn recorded_answers_for_the_whole_dataset_replay_a_subset() {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    std::fs::write(
        tmp.path().join("rec.jsonl"),
        r#"{"id": "w1", "calls": [{"name": "get_current_weather", "arguments": {"city": "Pune"}}]}
{"id": "m1", "calls": [], "content": "No."}
"#,
    )
    .unwrap();
    let o = toolpick(
        &argv(
            "run --catalog cat --dataset ds.jsonl --variants good --layouts flat \
             --backends replay:rec.jsonl --tasks w? --out out --run-id r -q",
        ),
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(selected(&tmp.path().join("out/r")), ["w1", "w2"]);
}
