//! The inputs toolpick made itself or reads beside a run — judge prompt templates, judge labels,
//! recorded answers, the history file, baseline and run directories, shards, sessions files, the
//! response cache — and the benchmark files the importers read. Each is damaged the generic ways and
//! the ways its own format allows, through every command that reads it.

use super::damage::*;
use super::harness::*;
use super::inputs::{Shape, generic, slot, strs, with, writes, wrong_types};
use super::world::SMALL_RUN;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn small_run(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<&str> = SMALL_RUN.to_vec();
    a.extend(extra);
    strs(&a)
}

fn prompt_mutations(world: &Path) -> Vec<Mutation> {
    let dir = "judge-templates";
    let file = |f: &str| format!("{dir}/{f}");
    // A missing template is documented as "the built-in one": not a case.
    let mut v = generic(world, &file("claim.txt"), Shape::Text, &["missing"]);
    for m in &mut v {
        m.name = format!("claim-{}", m.name);
    }
    let text = |f: &str| String::from_utf8(clean(world, &file(f))).unwrap();
    let edited = |name: &str, f: &str, new: String, names: &[&str]| {
        writes(name, &file(f), new.into_bytes(), refused(names))
    };
    v.extend([
        with("dir-missing", remove(dir), refused(&[dir])),
        with("dir-is-a-file", file_for_dir(dir), refused(&[dir])),
        with(
            "misnamed-template",
            put(&file("claims.txt"), clean(world, &file("claim.txt"))),
            refused(&["claims.txt"]),
        ),
        with(
            "give-up-utf16",
            put(&file("give_up.txt"), utf16le(&clean(world, &file("give_up.txt")))),
            refused(&["give_up.txt"]),
        ),
        edited(
            "answer-status-without-answer",
            "answer_status.txt",
            text("answer_status.txt").replace("{{answer}}", ""),
            &["answer_status.txt", "{{answer}}"],
        ),
        edited(
            "task-solved-without-process",
            "task_solved.txt",
            text("task_solved.txt").replace("{{process}}", ""),
            &["task_solved.txt", "{{process}}"],
        ),
        edited(
            "claim-without-claim",
            "claim.txt",
            text("claim.txt").replace("{{claim}}", ""),
            &["claim.txt", "{{claim}}"],
        ),
        edited(
            "answer-status-with-claim",
            "answer_status.txt",
            text("answer_status.txt") + "\nExpected: {{claim}}\n",
            &["answer_status.txt", "{{claim}}"],
        ),
        edited(
            "task-solved-unknown-placeholder",
            "task_solved.txt",
            text("task_solved.txt") + "\nAsked: {{qurey}}\n",
            &["task_solved.txt", "qurey"],
        ),
        edited(
            "claim-unknown-placeholder",
            "claim.txt",
            text("claim.txt") + "\nReference: {{reference_answr}}\n",
            &["claim.txt", "reference_answr"],
        ),
    ]);
    v
}

/// Line 2 of a JSON Lines input edited; the error names `file:2` and `field`.
fn line2(
    world: &Path,
    rel: &str,
    name: &str,
    field: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Mutation {
    let file = super::inputs::base_name(rel);
    writes(
        name,
        rel,
        edit_json_line(&clean(world, rel), 2, edit),
        refused(&[at(&file, 2), field.to_string()]),
    )
}

fn label_mutations(world: &Path) -> Vec<Mutation> {
    let rel = "labels.jsonl";
    let mut v = generic(world, rel, Shape::Lines(2), &[]);
    v.extend([
        line2(world, rel, "unknown-field", "humann", |l| l["humann"] = json!("solved")),
        line2(world, rel, "verdict-unknown", "human", |l| l["human"] = json!("maybe")),
        line2(world, rel, "verdict-missing", "human", |l| {
            l.as_object_mut().unwrap().remove("human");
        }),
        line2(world, rel, "task-unknown", "task", |l| l["task"] = json!("nosuch")),
        line2(world, rel, "id-duplicate", "id", |l| l["id"] = json!("l1")),
        line2(world, rel, "answer-number", "answer", |l| l["answer"] = json!(7)),
        line2(world, rel, "answer-missing", "answer", |l| {
            l.as_object_mut().unwrap().remove("answer");
        }),
    ]);
    let typed = wrong_types(world, rel, 2, &v);
    v.extend(typed);
    v
}

fn replay_mutations(world: &Path) -> Vec<Mutation> {
    let rel = "answers.jsonl";
    // An empty file is documented: every task answers without a call.
    let mut v = generic(world, rel, Shape::Lines(2), &["empty"]);
    v.extend([
        line2(world, rel, "id-unknown", "id", |a| a["id"] = json!("nosuch")),
        line2(world, rel, "id-duplicate", "id", |a| a["id"] = json!("w1")),
        line2(world, rel, "calls-object", "calls", |a| {
            a["calls"] = json!({"name": "get_forecast"})
        }),
        line2(world, rel, "call-without-name", "calls[0]", |a| {
            a["calls"][0].as_object_mut().unwrap().remove("name");
        }),
        line2(world, rel, "call-name-number", "calls[0].name", |a| {
            a["calls"][0]["name"] = json!(5)
        }),
        line2(world, rel, "arguments-number", "calls[0].arguments", |a| {
            a["calls"][0]["arguments"] = json!(5)
        }),
        line2(world, rel, "unknown-field", "contnt", |a| a["contnt"] = json!("Done.")),
        line2(world, rel, "content-number", "content", |a| a["content"] = json!(5)),
    ]);
    let typed = wrong_types(world, rel, 2, &v);
    v.extend(typed);
    let mut layout = Mutation::new("progressive-layout", refused(&["progressive"]));
    layout.args = Some(strs(&[
        "run",
        "--catalog",
        "smallcat",
        "--dataset",
        "tasks.jsonl",
        "--variants",
        "good",
        "--layouts",
        "progressive",
        "--out",
        "out",
        "-q",
        "--backends",
        "replay:answers.jsonl",
        "--run-id",
        "t1",
    ]));
    v.push(layout);
    v
}

fn history_mutations(world: &Path) -> Vec<Mutation> {
    let rel = "trend/runs.jsonl";
    // A missing or empty history is where every history starts.
    let mut v = generic(world, rel, Shape::Lines(2), &["missing", "empty"]);
    v.extend([
        with("parent-is-a-file", file_for_dir("trend"), refused(&["trend/runs.jsonl"])),
        writes(
            "empty-object-line2",
            rel,
            replace_line(&clean(world, rel), 2, Some(b"{}")),
            refused(&[at("runs.jsonl", 2)]),
        ),
        line2(world, rel, "run-id-number", "run_id", |e| e["run_id"] = json!(5)),
        Mutation::new("tag-without-value", refused(&["--tag"])).extra(&["--tag", "novalue"]),
        Mutation::new("tag-without-key", refused(&["--tag"])).extra(&["--tag", "=x"]),
    ]);
    let typed = wrong_types(world, rel, 2, &v);
    v.extend(typed);
    v
}

/// Damage to a run directory `run` (`out/base` or `out/b`) that a reader of it must refuse.
fn run_dir_mutations(world: &Path, run: &str) -> Vec<Mutation> {
    let trials = format!("{run}/trials.jsonl");
    let bytes = clean(world, &trials);
    let meta = clean(world, &format!("{run}/run.json"));
    let line = |n| refused(&[at("trials.jsonl", n)]);
    vec![
        with("missing", remove(run), refused(&[run])),
        with("a-file", file_for_dir(run), refused(&[run])),
        with("no-trials", remove(&trials), refused(&[run])),
        with("trials-torn-line2", put(&trials, torn_line(&bytes, 2)), line(2)),
        with("trials-invalid-utf8-line2", put(&trials, invalid_utf8_at(&bytes, 2)), line(2)),
        with("trials-array-line2", put(&trials, replace_line(&bytes, 2, Some(b"[1, 2]"))), line(2)),
        with("trials-nul-line2", put(&trials, replace_line(&bytes, 2, Some(&[0u8; 16]))), line(2)),
        with(
            "trials-empty-object-line2",
            put(&trials, replace_line(&bytes, 2, Some(b"{}"))),
            line(2),
        ),
        with("trials-utf16", put(&trials, utf16le(&bytes)), refused(&["trials.jsonl"])),
        with(
            "run-json-cut",
            put(&format!("{run}/run.json"), meta[..meta.len() / 2].to_vec()),
            refused(&["run.json"]),
        ),
        with(
            "run-json-array",
            put(&format!("{run}/run.json"), b"[]\n".to_vec()),
            refused(&["run.json"]),
        ),
    ]
}

fn shard_mutations(world: &Path) -> Vec<Mutation> {
    let merge = |dirs: &[&str]| {
        let mut a = vec!["merge", "--out", "merged"];
        a.extend(dirs);
        strs(&a)
    };
    let trials = clean(world, "out/s1/trials.jsonl");
    let meta = clean(world, "out/s1/run.json");
    vec![
        Mutation::new("one-shard-missing", refused(&["2/2", "missing"])).args(&merge(&["out/s1"])),
        // The same shard twice leaves the other one missing.
        Mutation::new("shard-twice", refused(&["2/2", "missing"]))
            .args(&merge(&["out/s1", "out/s1"])),
        Mutation::new("shard-of-another-matrix", refused(&["out/x2"]))
            .args(&merge(&["out/s1", "out/x2"])),
        Mutation::new("out-holds-a-run", refused(&["out/b"]))
            .args(&strs(&["merge", "--out", "out/b", "out/s1", "out/s2"])),
        Mutation::new("out-is-latest-link", refused(&["out/latest"])).args(&strs(&[
            "merge",
            "--out",
            "out/latest",
            "out/s1",
            "out/s2",
        ])),
        Mutation::new("out-is-a-file", refused(&["tasks.jsonl"])).args(&strs(&[
            "merge",
            "--out",
            "tasks.jsonl",
            "out/s1",
            "out/s2",
        ])),
        with("shard-dir-missing", remove("out/s2"), refused(&["out/s2"])),
        with("shard-dir-a-file", file_for_dir("out/s2"), refused(&["out/s2"])),
        with("shard-no-trials", remove("out/s1/trials.jsonl"), refused(&["out/s1"])),
        with(
            "shard-trials-torn-line2",
            put("out/s1/trials.jsonl", torn_line(&trials, 2)),
            refused(&[at("trials.jsonl", 2)]),
        ),
        with(
            "shard-trials-invalid-utf8-line2",
            put("out/s1/trials.jsonl", invalid_utf8_at(&trials, 2)),
            refused(&[at("trials.jsonl", 2)]),
        ),
        with(
            "shard-trials-array-line2",
            put("out/s1/trials.jsonl", replace_line(&trials, 2, Some(b"[1, 2]"))),
            refused(&[at("trials.jsonl", 2)]),
        ),
        with("shard-run-json-missing", remove("out/s1/run.json"), refused(&["run.json"])),
        with(
            "shard-run-json-cut",
            put("out/s1/run.json", meta[..meta.len() / 2].to_vec()),
            refused(&["run.json"]),
        ),
    ]
}

fn session_mutations(world: &Path) -> Vec<Mutation> {
    let rel = "sessions.jsonl";
    let bytes = clean(world, rel);
    // Per-line integrity: a line that is not JSON (torn by a killed server, two servers writing at
    // once, undecodable bytes) is reported with its line and skipped; a line that is JSON but no
    // session record may be skipped the same way or refused naming it.
    let mut v = generic(world, rel, Shape::Lines(3), &[]);
    for m in &mut v {
        if let (true, Expect::Refused { names, .. }) = (m.name.contains("line3"), &m.expect) {
            let refusal_ok = m.name.starts_with("array") || m.name.starts_with("string");
            m.expect = Expect::LineSkipped { names: names.clone(), refusal_ok };
        }
    }
    let header = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut b = bytes.clone();
        b = edit_json_line(&b, 1, |h| edit(h));
        b
    };
    let l1 = |field: &str| refused(&[at(rel, 1), field.to_string()]);
    let abs = |dir: &Path, p: &str| dir.join(p).display().to_string();
    let mut missing_catalog =
        Mutation::new("header-catalog-missing", refused(&["no-such-catalog"]));
    let b2 = bytes.clone();
    missing_catalog.setup = Some(Arc::new(move |dir: &Path| {
        let b = edit_json_line(&b2, 1, |h| h["catalog"] = json!(abs(dir, "no-such-catalog")));
        std::fs::write(dir.join("sessions.jsonl"), b).unwrap();
    }));
    v.extend([
        writes(
            "header-not-json",
            rel,
            replace_line(&bytes, 1, Some(b"toolpick sessions")),
            l1("toolpick_sessions"),
        ),
        writes(
            "header-format-2",
            rel,
            header(&|h| h["toolpick_sessions"] = json!(2)),
            l1("toolpick_sessions"),
        ),
        writes(
            "header-layout-unknown",
            rel,
            header(&|h| h["layout"] = json!("sideways")),
            l1("layout"),
        ),
        writes(
            "header-seed-missing",
            rel,
            header(&|h| {
                h.as_object_mut().unwrap().remove("seed");
            }),
            l1("seed"),
        ),
        missing_catalog,
        writes("header-only", rel, join(&lines(&bytes)[..1]), refused(&[rel])),
        writes(
            "session-without-number",
            rel,
            edit_json_line(&bytes, 4, |s| {
                s.as_object_mut().unwrap().remove("session");
            }),
            refused(&[at(rel, 4), "session".into()]),
        ),
        writes(
            "call-of-unstarted-session",
            rel,
            edit_json_line(&bytes, 3, |c| c["session"] = json!(9)),
            refused(&[at(rel, 3)]),
        ),
        writes(
            "session-starts-twice",
            rel,
            edit_json_line(&bytes, 4, |s| s["session"] = json!(1)),
            refused(&[at(rel, 4)]),
        ),
        writes(
            "task-not-in-dataset",
            rel,
            edit_json_line(&bytes, 4, |s| s["task"] = json!("nosuch")),
            refused_without(&["sessions.jsonl", "nosuch"], &["--tasks"]),
        ),
        Mutation::new("run-id-latest", refused(&["--run-id"])).extra(&["--run-id", "latest"]),
        Mutation::new("out-is-a-file", refused(&["tasks.jsonl"])).args(&strs(&[
            "mcp",
            "collect",
            "sessions.jsonl",
            "--out",
            "tasks.jsonl",
            "--run-id",
            "c1",
        ])),
    ]);
    v
}

/// A benchmark slice copied from `../shared/external` into the case's `src` (never into the
/// repository), imported to `imp`; `file` (under `src`) is damaged.
fn import_cases(format: &'static str, file: &str, array: bool) -> (Slot, Vec<Mutation>) {
    let source = crate::common::shared(format);
    let mut s = slot("import", format, &["import", format, "src", "-o", "imp"]);
    s.prepare =
        Some(Arc::new(move |dir: &Path| super::world::copy_tree(&source, &dir.join("src"))));
    s.import_out = Some("imp".into());
    let pristine = std::fs::read(crate::common::shared(format).join(file)).unwrap();
    let rel = format!("src/{file}");
    let name = super::inputs::base_name(file);
    let defect = |line: Option<usize>| Expect::Defect { file: name.clone(), line };
    let n = line_of(&pristine, "\"") + 2;
    let mut v = vec![
        // UTF-16 is decoded (and the decoding reported in a `repaired` row); a byte-order mark is
        // dropped: either way the records are those of the clean copy.
        with(
            "utf16",
            put(&rel, utf16le(&pristine)),
            Expect::LikeClean { file: name.clone(), reported: true },
        ),
        with(
            &format!("invalid-utf8-line{n}"),
            put(&rel, invalid_utf8_at(&pristine, n)),
            defect(Some(n)),
        ),
        with(
            "bom",
            put(&rel, with_bom(&pristine)),
            Expect::LikeClean { file: name.clone(), reported: false },
        ),
    ];
    if array {
        let records: serde_json::Value = serde_json::from_slice(&pristine).unwrap();
        let wrapped = serde_json::to_vec_pretty(&json!({"data": records})).unwrap();
        v.push(with("object-where-array", put(&rel, wrapped), defect(None)));
    }
    (s, v)
}

fn import_flag_cases() -> (Slot, Vec<Mutation>) {
    let source = crate::common::shared("safetoolbench");
    let mut s = slot("import", "flags", &["import", "safetoolbench", "src", "-o", "imp"]);
    s.prepare =
        Some(Arc::new(move |dir: &Path| super::world::copy_tree(&source, &dir.join("src"))));
    let args = |extra: &[&str]| {
        let mut a = vec!["import"];
        a.extend(extra);
        strs(&a)
    };
    let v = vec![
        Mutation::new("path-missing", refused(&["no-such-src"])).args(&args(&[
            "safetoolbench",
            "no-such-src",
            "-o",
            "imp",
        ])),
        Mutation::new("output-is-a-file", refused(&["tasks.jsonl"])).args(&args(&[
            "safetoolbench",
            "src",
            "-o",
            "tasks.jsonl",
        ])),
        Mutation::new("min-quality-negative", refused(&["--min-quality"]))
            .extra(&["--min-quality", "-1"]),
        Mutation::new("min-quality-on-bfcl", refused(&["--min-quality"])).args(&args(&[
            "bfcl",
            "src",
            "-o",
            "imp",
            "--min-quality",
            "5",
        ])),
        Mutation::new("fixture-without-onto", refused(&["--fixture"])).extra(&["--fixture", "src"]),
        Mutation::new("onto-missing", refused(&["no-such-live"]))
            .extra(&["--onto", "no-such-live"]),
        Mutation::new("format-unknown", refused(&["FORMAT"])).args(&args(&[
            "toolbench",
            "src",
            "-o",
            "imp",
        ])),
    ];
    (s, v)
}

pub fn cases(world: &Path) -> Vec<(Slot, Vec<Mutation>)> {
    let judge = ["--judge", "mock@@MOCK@", "--judge-prompts", "judge-templates"];
    let mut out = vec![];
    let mut run_judged = small_run(&["--backends", "oracle", "--run-id", "t1"]);
    run_judged.extend(strs(&judge));
    let mut report_judged = strs(&["report", "out/b"]);
    report_judged.extend(strs(&judge));
    let mut check =
        strs(&["judge-check", "labels.jsonl", "--dataset", "tasks.jsonl", "-o", "verdicts.json"]);
    check.extend(strs(&judge));
    for (name, args) in [("run", &run_judged), ("report", &report_judged), ("judge-check", &check)]
    {
        let s = Slot { args: args.clone(), ..slot("judge prompts", name, &[]) };
        out.push((s, prompt_mutations(world)));
    }
    out.push((
        Slot { args: check.clone(), ..slot("labels", "judge-check", &[]) },
        label_mutations(world),
    ));
    out.push((
        Slot {
            args: small_run(&["--backends", "replay:answers.jsonl", "--run-id", "t1"]),
            ..slot("replay", "run", &[])
        },
        replay_mutations(world),
    ));
    let history = ["--history", "trend/runs.jsonl"];
    for (name, mut args) in [
        ("run", small_run(&["--backends", "oracle", "--run-id", "t1"])),
        ("report", strs(&["report", "out/b"])),
        ("merge", strs(&["merge", "--out", "merged", "out/s1", "out/s2"])),
    ] {
        args.extend(strs(&history));
        out.push((Slot { args, ..slot("history", name, &[]) }, history_mutations(world)));
    }
    for (name, args) in [
        ("compare", strs(&["compare", "out/base", "out/b"])),
        (
            "run",
            small_run(&[
                "--backends",
                "oracle,lexical",
                "--run-id",
                "t1",
                "--baseline",
                "out/base",
            ]),
        ),
        ("report", strs(&["report", "out/b", "--baseline", "out/base"])),
        (
            "merge",
            strs(&["merge", "--out", "merged", "out/s1", "out/s2", "--baseline", "out/base"]),
        ),
    ] {
        out.push((
            Slot { args, ..slot("baselines", name, &[]) },
            run_dir_mutations(world, "out/base"),
        ));
    }
    for (name, args) in [
        ("report", strs(&["report", "out/b"])),
        ("compare", strs(&["compare", "out/base", "out/b"])),
    ] {
        out.push((Slot { args, ..slot("run dirs", name, &[]) }, run_dir_mutations(world, "out/b")));
    }
    out.push((
        slot("shards", "merge", &["merge", "--out", "merged", "out/s1", "out/s2"]),
        shard_mutations(world),
    ));
    out.push((
        slot(
            "sessions",
            "collect",
            &["mcp", "collect", "sessions.jsonl", "--out", "runs", "--run-id", "c1"],
        ),
        session_mutations(world),
    ));
    for (name, args) in [
        ("stats", ["cache", "stats", "--cache-dir", "respcache"]),
        ("clear", ["cache", "clear", "--cache-dir", "respcache"]),
    ] {
        // A cache directory that does not exist yet is an empty cache: only a file in its place is bad.
        let v = vec![with("dir-is-a-file", file_for_dir("respcache"), refused(&["respcache"]))];
        out.push((slot("cache", name, &args), v));
    }
    out.push(import_cases("bfcl", "BFCL_v4_simple_python.json", false));
    out.push(import_cases("mcptoolbench", "data/finance/finance_0724_single_v3.slice.json", true));
    out.push(import_cases("safetoolbench", "query_PL_SA.json", true));
    out.push(import_cases(
        "stabletoolbench",
        "solvable_queries/test_instruction/G1_category.json",
        true,
    ));
    out.push(import_flag_cases());
    out
}
