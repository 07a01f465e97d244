//! The binary alone is enough: copied into an empty directory (no checkout beside it, no source tree
//! it could fall back to), `toolpick run` runs the bundled suite and writes what a run from the source
//! tree writes; `toolpick init` writes a suite that a run then reads, edits included, and never
//! overwrites without `--force`.

mod common;

use common::{argv_with, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary copied alone into a fresh directory, and a separate empty working directory with its
/// own HOME (so the embedded suite is extracted into a cache this test owns).
struct Alone {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    cwd: PathBuf,
    home: PathBuf,
}

impl Alone {
    fn new() -> Alone {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin/toolpick");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_toolpick"), &bin).unwrap();
        let (cwd, home) = (dir.path().join("work"), dir.path().join("home"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Alone { _dir: dir, bin, cwd, home }
    }

    fn run(&self, args: &[&str], cwd: &Path) -> Output {
        Command::new(&self.bin)
            .args(args)
            .current_dir(cwd)
            .env("HOME", &self.home)
            .env_remove("XDG_CACHE_HOME")
            .output()
            .unwrap()
    }
}

fn ok(o: &Output) {
    assert!(o.status.success(), "exit {:?}\n{}", o.status.code(), stderr(o));
}

/// Every file a run writes, but those that hold times (run.json, timings.jsonl).
fn outputs(run: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(run)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .filter(|(name, _)| name != "run.json" && name != "timings.jsonl")
        .collect();
    files.sort();
    files
}

#[test]
fn the_binary_alone_in_an_empty_directory_runs_the_bundled_suite_as_the_source_tree_does() {
    let alone = Alone::new();
    let out = alone.cwd.join("reports");
    ok(&alone.run(&argv_with("run --run-id same --out {}", &[out.to_str().unwrap()]), &alone.cwd));
    assert!(
        std::fs::read_dir(&alone.cwd).unwrap().count() == 1,
        "only the reports directory is written into the working directory"
    );
    let extracted: Vec<_> =
        std::fs::read_dir(alone.home.join(".cache/toolpick")).unwrap().flatten().collect();
    assert_eq!(extracted.len(), 1, "the suite came from the binary, extracted into its cache");

    let reference = tempfile::tempdir().unwrap();
    let o = common::toolpick(
        &argv_with("run --run-id same --out {}", &[reference.path().to_str().unwrap()]),
        &common::repo(),
    );
    ok(&o);

    let (ours, theirs) = (outputs(&out.join("same")), outputs(&reference.path().join("same")));
    assert!(ours.iter().any(|(n, _)| n == "summary.csv") && ours.len() > 10, "{}", ours.len());
    assert_eq!(
        ours.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        theirs.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in ours.iter().zip(&theirs) {
        assert!(a == b, "{name} differs between the binary alone and the source tree");
    }
    // run.json names the suite as the checkout does, not by the cache it was read from.
    let config = |dir: &Path| {
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("same/run.json")).unwrap()).unwrap();
        (
            run["config"]["catalogs"].clone(),
            run["config"]["datasets"].clone(),
            run["matrix_hash"].clone(),
        )
    };
    assert_eq!(config(&out), config(reference.path()));
}

#[test]
fn an_edited_cache_does_not_change_the_bundled_suite() {
    let alone = Alone::new();
    let first = alone.cwd.join("first");
    ok(&alone.run(&argv_with("run --run-id r --out {}", &[first.to_str().unwrap()]), &alone.cwd));
    // Tamper with every extracted dataset and add a server file to every extracted catalog.
    let cache = alone.home.join(".cache/toolpick");
    let mut tampered = 0;
    for bundle in std::fs::read_dir(&cache).unwrap().flatten() {
        let starter = bundle.path().join("datasets/starter.jsonl");
        let text = std::fs::read_to_string(&starter).unwrap();
        std::fs::write(&starter, text.lines().take(3).collect::<Vec<_>>().join("\n")).unwrap();
        std::fs::copy(
            bundle.path().join("registries/workspace/mail.json"),
            bundle.path().join("registries/workspace/zz_copy.json"),
        )
        .unwrap();
        tampered += 1;
    }
    assert_eq!(tampered, 1, "one extracted bundle in {}", cache.display());
    let second = alone.cwd.join("second");
    ok(&alone.run(&argv_with("run --run-id r --out {}", &[second.to_str().unwrap()]), &alone.cwd));
    assert_eq!(outputs(&first.join("r")), outputs(&second.join("r")));
}

#[test]
fn init_writes_an_editable_suite_and_never_overwrites_without_force() {
    let alone = Alone::new();
    let suite = alone.cwd.join("suite");
    ok(&alone.run(&argv_with("init {}", &[suite.to_str().unwrap()]), &alone.cwd));
    for name in ["toolpick.toml", "datasets/starter.jsonl", "registries/workspace/mail.json"] {
        assert!(suite.join(name).is_file(), "{name}");
    }
    let bundled = std::fs::read(common::repo().join("datasets/starter.jsonl")).unwrap();
    assert_eq!(std::fs::read(suite.join("datasets/starter.jsonl")).unwrap(), bundled);

    // Edit the suite: keep the first 5 tasks. A run in the directory reads the edit, through the
    // experiment file and through the defaults.
    let kept: Vec<serde_json::Value> = String::from_utf8(bundled)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(5)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let edited: String = kept.iter().map(|t| format!("{t}\n")).collect();
    std::fs::write(suite.join("datasets/starter.jsonl"), &edited).unwrap();
    for args in ["run --config toolpick.toml --run-id c", "run --out reports --run-id d"] {
        ok(&alone.run(&common::argv(args), &suite));
        let run = suite.join("reports").join(args.rsplit(' ').next().unwrap());
        let trials = std::fs::read_to_string(run.join("trials.jsonl")).unwrap();
        let mut tasks: Vec<String> = trials
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["task_id"].to_string())
            .collect();
        tasks.sort();
        tasks.dedup();
        let mut expected: Vec<String> = kept.iter().map(|t| t["id"].to_string()).collect();
        expected.sort();
        assert_eq!(tasks, expected, "{args}");
    }

    // A second init refuses (exit 2), writes nothing and keeps the edit; --force restores the file.
    let before: Vec<_> = std::fs::read_dir(&suite).unwrap().flatten().map(|e| e.path()).collect();
    let again = alone.run(&argv_with("init {}", &[suite.to_str().unwrap()]), &alone.cwd);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(suite.join("datasets/starter.jsonl")).unwrap(), edited);
    assert_eq!(std::fs::read_dir(&suite).unwrap().count(), before.len());
    ok(&alone.run(&argv_with("init --force {}", &[suite.to_str().unwrap()]), &alone.cwd));
    assert_eq!(
        std::fs::read(suite.join("datasets/starter.jsonl")).unwrap(),
        std::fs::read(common::repo().join("datasets/starter.jsonl")).unwrap()
    );
}

#[test]
fn an_unwritable_home_falls_back_to_the_temp_directory() {
    let alone = Alone::new();
    // HOME is a file: no cache directory can be made under it (a read-only home in a container).
    let home_file = alone.cwd.join("not-a-directory");
    std::fs::write(&home_file, b"").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(&alone.bin)
        .args(common::argv("run --out reports --run-id t -q"))
        .current_dir(&alone.cwd)
        .env("HOME", &home_file)
        .env_remove("XDG_CACHE_HOME")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    ok(&o);
    assert!(alone.cwd.join("reports/t/summary.csv").is_file());
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with(".toolpick-cache-")), "{names:?}");
}
