//! The files `toolpick mcp serve` writes (`--sessions`, `--record`) are append-only, shared and
//! redacted, and `mcp collect` survives the damage a killed server leaves (issue 31, "nothing lost").
//!
//! The servers here are the library's own session pools and presentations (what `mcp serve` runs),
//! driven in this process without an MCP client; two pools on one file hold separate file handles, so
//! their locking is what two server processes get. Collecting goes through the real binary.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use toolpick::mcp::serve::Served;
use toolpick::run::serving::sessions::{ServedSpec, SessionPool, Sessions};

fn spec(dir: &Path, layout: toolpick::layout::LayoutKind) -> ServedSpec {
    ServedSpec {
        catalog: dir.join("cat"),
        dataset: dir.join("ds.jsonl"),
        variant: "good".into(),
        layout,
        distractors: None,
        seed: 0,
    }
}

fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    tmp
}

/// A server of the flat presentation writing its sessions to `file`.
fn server(dir: &Path, file: &Path) -> anyhow::Result<SessionPool> {
    let spec = spec(dir, toolpick::layout::LayoutKind::Flat);
    let prepared = toolpick::run::prepare(spec.config(vec![], Default::default()))?;
    SessionPool::new(prepared, &spec, None, file)
}

/// Open a session (`task`: the `?task=` of its URL) and make one call in it.
fn session(
    pool: &SessionPool,
    task: Option<&str>,
    client: &str,
    arguments: &str,
) -> Arc<dyn Served> {
    let s = pool.session(task, client).unwrap().expect("a session of its own");
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(s.call("get_current_weather".into(), arguments.into()));
    s
}

fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:.200}")))
        .collect()
}

/// The session numbers the file starts, in file order, with their tasks.
fn starts(file: &Path) -> Vec<(u64, String)> {
    lines(file)
        .iter()
        .filter(|v| v.get("task").is_some())
        .map(|v| (v["session"].as_u64().unwrap(), v["task"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_restarted_server_keeps_every_earlier_session_and_numbers_new_ones_after_the_highest() {
    let tmp = fixture();
    let file = tmp.path().join("sessions.jsonl");
    let mut before = Vec::new();
    for restart in 0..3u64 {
        let pool = server(tmp.path(), &file).unwrap();
        // One session through its URL's task, one given the next task no session has played.
        session(&pool, Some("a1"), "ide 1", "{\"city\": \"Oslo\"}");
        session(&pool, None, "ide 1", "{\"city\": \"Pune\"}");
        drop(pool);
        let now = std::fs::read(&file).unwrap();
        assert!(now.starts_with(&before), "restart {restart}: the earlier sessions were not kept");
        before = now;
        let numbers: Vec<u64> = starts(&file).iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, (1..=2 * (restart + 1)).collect::<Vec<_>>(), "restart {restart}");
        assert_eq!(
            lines(&file).iter().filter(|v| v.get("toolpick_sessions").is_some()).count(),
            1,
            "one header"
        );
    }
    // The next task skips every task a session in the file played, across restarts: w1, w2, m1 in
    // dataset order (a1 was asked for by URL).
    let nexts: Vec<String> =
        starts(&file).iter().filter(|(_, t)| t != "a1").map(|(_, t)| t.clone()).collect();
    assert_eq!(nexts, ["w1", "w2", "m1"]);
    // All of it is collectable: the latest session of each task is its trial.
    let o = toolpick(
        &["mcp", "collect", file.to_str().unwrap(), "--out", "out", "--run-id", "c"],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let trials = std::fs::read_to_string(tmp.path().join("out/c/trials.jsonl")).unwrap();
    assert_eq!(trials.lines().count(), 4);
}

#[test]
fn two_servers_on_one_file_never_interleave_lines_and_never_share_a_session_number() {
    let tmp = fixture();
    let file = tmp.path().join("sessions.jsonl");
    let pools = [server(tmp.path(), &file).unwrap(), server(tmp.path(), &file).unwrap()];
    // Long arguments, so that a line takes more than one write where nothing holds the others off.
    let long = |i: usize| format!("{{\"city\": \"{}\"}}", "x".repeat(20_000 + i * 997));
    std::thread::scope(|s| {
        for (p, pool) in pools.iter().enumerate() {
            for t in 0..3 {
                s.spawn(move || {
                    for i in 0..8 {
                        let one = session(pool, Some("w1"), &format!("ide {p}"), &long(i + t));
                        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
                        rt.block_on(one.call("get_forecast".into(), long(t)));
                    }
                });
            }
        }
    });
    let all = lines(&file);
    assert_eq!(all.len(), 1 + 2 * 3 * 8 * 3, "header, and per session its start and two calls");
    let numbers: Vec<u64> = starts(&file).iter().map(|(n, _)| *n).collect();
    assert_eq!(
        numbers,
        (1..=48).collect::<Vec<_>>(),
        "numbers are unique and follow the file order"
    );
    let started: std::collections::HashSet<u64> = numbers.into_iter().collect();
    for v in &all[1..] {
        assert!(started.contains(&v["session"].as_u64().unwrap()), "{v:.200}");
    }
    let loaded = Sessions::load(&file).unwrap();
    assert!(!loaded.is_empty());
}

/// A file of two sessions with two calls each, written by a server.
fn recorded(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("s.jsonl");
    let pool = server(dir, &file).unwrap();
    for task in ["w1", "w2"] {
        let s = session(&pool, Some(task), "ide 2", "{\"city\": \"Lima\"}");
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(s.call("get_forecast".into(), "{\"city\": \"Lima\", \"days\": 3}".into()));
    }
    file
}

#[test]
fn collect_skips_a_torn_last_line_at_any_offset_and_a_damaged_middle_line_and_says_where() {
    let tmp = fixture();
    let file = recorded(tmp.path());
    let text = std::fs::read(&file).unwrap();
    let whole: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
    assert_eq!(whole.len(), 7);
    let last = whole[6].len() - 1;
    let mut cases: Vec<(String, Vec<u8>, usize)> = Vec::new();
    // The last line cut at several offsets (a server killed while writing it).
    for cut in [1, 2, last / 3, last / 2, last - 1] {
        cases.push((
            format!("torn at byte {cut}"),
            [&text[..text.len() - whole[6].len()], &whole[6][..cut]].concat(),
            7,
        ));
    }
    // A damaged line in the middle: half a line, bytes that are not UTF-8, a line glued onto another.
    let mid = |bad: &[u8]| -> Vec<u8> {
        [&whole[..3].concat()[..], bad, b"\n", &whole[3..].concat()[..]].concat()
    };
    cases.push(("half a line in the middle".into(), mid(&whole[4][..whole[4].len() / 2]), 4));
    cases.push((
        "invalid UTF-8 in the middle".into(),
        mid(b"{\"session\": 1, \"name\": \"\xff\xfe\"}"),
        4,
    ));
    cases.push((
        "two lines glued".into(),
        mid(&[&whole[4][..20], whole[5]].concat()[..whole[5].len() + 19]),
        4,
    ));
    for (i, (case, bytes, line)) in cases.iter().enumerate() {
        let damaged = tmp.path().join(format!("d{i}.jsonl"));
        std::fs::write(&damaged, bytes).unwrap();
        let o = toolpick(
            &argv_with(
                "mcp collect {} --out out --run-id {}",
                &[damaged.to_str().unwrap(), &format!("d{i}")],
            ),
            tmp.path(),
        );
        assert!(o.status.success(), "{case}: {}", stderr(&o));
        let want = format!("{}:{line}: ", damaged.display());
        assert!(
            stderr(&o).contains(&want) && stderr(&o).contains("skipped"),
            "{case}: no `{want}` warning: {}",
            stderr(&o)
        );
        let trials =
            std::fs::read_to_string(tmp.path().join(format!("out/d{i}/trials.jsonl"))).unwrap();
        assert_eq!(trials.lines().count(), 2, "{case}: both sessions are trials");
        let meta: Value = serde_json::from_slice(
            &std::fs::read(tmp.path().join(format!("out/d{i}/run.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(meta["served"]["skipped_lines"], 1, "{case}");
    }
}

#[test]
fn a_file_of_another_presentation_or_of_something_else_is_refused_and_left_as_it_is() {
    let tmp = fixture();
    let file = recorded(tmp.path());
    let before = std::fs::read(&file).unwrap();
    let other = spec(tmp.path(), toolpick::layout::LayoutKind::Progressive);
    let prepared = toolpick::run::prepare(other.config(vec![], Default::default())).unwrap();
    let err = SessionPool::new(prepared, &other, None, &file).err().expect("refused");
    let input = err
        .downcast_ref::<toolpick::error::InputError>()
        .unwrap_or_else(|| panic!("not an input error: {err:#}"));
    assert_eq!((input.line, input.field.as_deref()), (Some(1), Some("layout")), "{input}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let err = server(tmp.path(), &notes).err().expect("refused");
    assert!(err.downcast_ref::<toolpick::error::InputError>().is_some(), "{err:#}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
}

#[test]
fn record_and_sessions_files_are_appended_to_and_carry_no_key() {
    let tmp = fixture();
    let key = "sk-sessions-7Hq2/xK9+pL4=zzW";
    toolpick::redact::install(&toolpick::redact::Redactor::new([key]));
    let args = format!("{{\"city\": \"{key}\"}}");
    // Two presentations recording into one file, as two `mcp serve --record` would.
    let record = tmp.path().join("record.jsonl");
    for _ in 0..2 {
        let config =
            spec(tmp.path(), toolpick::layout::LayoutKind::Flat).config(vec![], Default::default());
        let p = toolpick::run::serving::presentation::Presentation::new(
            config,
            Some("w1"),
            Some(record.clone()),
        )
        .unwrap();
        p.answer("get_current_weather".into(), args.clone());
    }
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.lines().count(), 2, "the second server kept the first one's record: {text}");
    assert!(!text.contains(key) && text.contains(toolpick::redact::MARK), "{text}");
    let file = tmp.path().join("s.jsonl");
    let pool = server(tmp.path(), &file).unwrap();
    session(&pool, None, key, &args);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(key) && text.contains(toolpick::redact::MARK), "{text}");
}

#[test]
fn record_with_sessions_or_out_is_refused_with_exit_2_before_serving() {
    let tmp = fixture();
    let dir = tmp.path();
    for with in [["--sessions", "s.jsonl"], ["--out", "out"]] {
        let o = toolpick(
            &argv_with(
                "mcp serve --catalog cat --dataset ds.jsonl --task w1 --record r.jsonl {} \
                {}",
                &[with[0], with[1]],
            ),
            dir,
        );
        assert_eq!(o.status.code(), Some(2), "{with:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--record") && stderr(&o).contains(with[0]), "{}", stderr(&o));
        for f in ["s.jsonl", "r.jsonl", "out"] {
            assert!(!dir.join(f).exists(), "{with:?}: {f} was written");
        }
    }
}
