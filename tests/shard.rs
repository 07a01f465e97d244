//! `run --shard i/n` + `toolpick merge` equal an unsharded run byte for byte (every file but `run.json`,
//! the one metadata file with timestamps, and `timings.jsonl`, which holds latencies).

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::Path;

const MATRIX: &str =
    "--variants good,bad --layouts flat,progressive --backends lexical,random --trials 2 --seed 7";

fn run(out: &Path, id: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--out", out.to_str().unwrap(), "--run-id", id, "--quiet"];
    args.extend(argv(MATRIX));
    args.extend_from_slice(extra);
    toolpick(&args, &repo())
}

fn ids(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["trial_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn sharded_and_merged_equals_unsharded_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let shards = tmp.path().join("shards");
    assert!(run(&whole, "r", &[]).status.success());
    let mut union = BTreeSet::new();
    let mut sizes = Vec::new();
    for i in 1..=3 {
        let o = run(&shards, &format!("s{i}"), &["--shard", &format!("{i}/3")]);
        assert!(o.status.success(), "{}", stderr(&o));
        let got = ids(&shards.join(format!("s{i}")));
        sizes.push(got.len());
        for id in got {
            assert!(union.insert(id.clone()), "{id} is in two shards");
        }
    }
    let all: BTreeSet<String> = ids(&whole.join("r")).into_iter().collect();
    assert_eq!(union, all, "the shards together run every trial exactly once");
    assert!(
        sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
        "round-robin shards are balanced: {sizes:?}"
    );

    let merged = tmp.path().join("merged");
    let dirs: Vec<String> = [3, 1, 2]
        .iter()
        .map(|i| shards.join(format!("s{i}")).to_str().unwrap().to_string())
        .collect();
    let mut args = vec!["merge", "--out", merged.to_str().unwrap()];
    args.extend(dirs.iter().map(String::as_str));
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));

    let mut compared = 0;
    for entry in std::fs::read_dir(whole.join("r")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name == "run.json" || name == "timings.jsonl" {
            continue;
        }
        let a = std::fs::read(whole.join("r").join(&name)).unwrap();
        let b = std::fs::read(merged.join(&name))
            .unwrap_or_else(|_| panic!("merge did not write {name}"));
        assert!(a == b, "{name} differs between the unsharded and the merged run");
        compared += 1;
    }
    assert!(compared >= 10, "compared only {compared} files");
}

#[test]
fn merge_refuses_missing_shards_and_foreign_runs() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 1..=2 {
        assert!(
            run(tmp.path(), &format!("s{i}"), &["--shard", &format!("{i}/2")]).status.success()
        );
    }
    let s1 = tmp.path().join("s1");
    let o = toolpick(
        &["merge", "--out", tmp.path().join("m1").to_str().unwrap(), s1.to_str().unwrap()],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("2/2"), "names the missing shard: {}", stderr(&o));
    assert!(!tmp.path().join("m1").exists(), "a refused merge writes nothing");

    // A run of another matrix (another seed) cannot be merged in.
    let mut args = argv_with(
        "run --out {} --run-id other --quiet --shard 2/2",
        &[tmp.path().to_str().unwrap()],
    );
    args.extend_from_slice(&argv(MATRIX)[..8]);
    args.extend_from_slice(&["--seed", "8"]);
    assert!(toolpick(&args, &repo()).status.success());
    let o = toolpick(
        &[
            "merge",
            "--out",
            tmp.path().join("m2").to_str().unwrap(),
            s1.to_str().unwrap(),
            tmp.path().join("other").to_str().unwrap(),
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("another matrix"), "{}", stderr(&o));

    // Resuming a shard as another shard is refused.
    let o = run(tmp.path(), "s1", &["--shard", "2/2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
