//! End to end through the real binary: the default job, determinism, `report`, exit codes.

mod common;
use common::*;
use std::path::Path;

fn run_default(out: &Path, run_id: &str) {
    let o = toolpick(&["run", "--out", out.to_str().unwrap(), "--run-id", run_id], &repo());
    assert!(o.status.success(), "run failed: {}", stderr(&o));
}

#[test]
fn default_run_is_complete_correct_and_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    run_default(tmp.path(), "a");
    run_default(tmp.path(), "b");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for f in [
        "trials.jsonl",
        "trials.csv",
        "summary.csv",
        "summary.md",
        "summary.json",
        "report.html",
        "tools.json",
        "junit.xml",
        "trials.parquet",
        "summary.parquet",
    ] {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(!x.is_empty(), "{f} is empty");
        assert!(x == y, "{f} differs between two runs with the same seed");
    }
    assert!(a.join("run.json").is_file());
    // latest points at the newest run
    assert_eq!(
        std::fs::read(tmp.path().join("latest/summary.csv")).unwrap(),
        std::fs::read(b.join("summary.csv")).unwrap()
    );

    let rows = summary_rows(&a);
    assert_eq!(rows.len(), 8, "2 variants × 2 layouts × 2 backends");
    for row in &rows {
        let n: u64 = row["n"].parse().unwrap();
        assert!(n >= 150, "the starter suite has at least 150 tasks");
        let pass: f64 = row["pass_at_1"].parse().unwrap();
        let sel: f64 = row["selection_accuracy"].parse().unwrap();
        match row["backend"].as_str() {
            "oracle" => {
                assert_eq!(pass, 1.0, "oracle must pass everything: {row:?}");
                assert_eq!(sel, 1.0, "oracle must select everything: {row:?}");
            }
            "lexical" => {
                // Keyword overlap alone passes some call tasks with good descriptions; with bad ones it
                // may pass none (the headline counts only tasks that need a call).
                assert!(
                    pass < 1.0 && (pass > 0.0 || row["variant"] == "bad"),
                    "lexical should be non-trivial: {row:?}"
                );
                assert!(sel > 0.0 && sel < 1.0, "lexical should be non-trivial: {row:?}");
            }
            other => panic!("unexpected backend {other}"),
        }
        // Bootstrap intervals of the means bracket the means.
        for m in ["mean_steps", "mean_tokens_total"] {
            let (lo, mid, hi): (f64, f64, f64) = (
                row[&format!("{m}_low")].parse().unwrap(),
                row[m].parse().unwrap(),
                row[&format!("{m}_high")].parse().unwrap(),
            );
            assert!(lo <= mid && mid <= hi && lo < hi, "{m}: {lo} {mid} {hi}");
        }
    }
    // Every trial record has its transcript (beside it, in transcripts.jsonl) and is scored.
    let trials = trials_with_transcripts(&a);
    let first = &trials[0];
    assert!(first["transcript"].as_array().unwrap().len() >= 2);
    assert!(first["score"]["pass"].is_boolean());
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&a)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn report_rescores_from_trials_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    write_small_catalog(&data.join("cat"));
    std::fs::write(data.join("ds.jsonl"), SMALL_DATASET).unwrap();
    let out = tmp.path().join("out");
    let args = argv(
        "run --catalog data/cat --dataset data/ds.jsonl --backends oracle,random \
        --out out --run-id r",
    );
    let o = toolpick(&args, tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = out.join("r");
    let before = std::fs::read(dir.join("summary.csv")).unwrap();
    // A stored score of the current scorer version is trusted (the run scored its trials): tampered
    // with, the report shows it.
    let trials = std::fs::read_to_string(dir.join("trials.jsonl")).unwrap();
    let current = format!("\"scorer\":{}", toolpick::score::VERSION);
    assert_eq!(
        trials.matches(&current).count(),
        trials.lines().count(),
        "every score records its scorer version"
    );
    let tampered = trials.replace("\"pass\":true", "\"pass\":false");
    assert_ne!(tampered, trials);
    std::fs::write(dir.join("trials.jsonl"), &tampered).unwrap();
    let o = toolpick(&["report", dir.to_str().unwrap()], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(
        std::fs::read(dir.join("summary.csv")).unwrap(),
        before,
        "a score of the current version is read, not recomputed"
    );
    // A score without the current version (written before scores carried one) is not trusted:
    // `report` recomputes it from the calls.
    let older = tampered.replace(&format!(",{current}"), "");
    assert!(!older.contains("\"scorer\""));
    std::fs::write(dir.join("trials.jsonl"), older).unwrap();
    std::fs::remove_file(dir.join("summary.csv")).unwrap();
    let o = toolpick(&["report", dir.to_str().unwrap()], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.join("summary.csv")).unwrap(), before);

    // A damaged record: the error names file and line, exits 2, and every report stays as it was.
    let reports: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "trials.jsonl")
        .map(|p| {
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect();
    let mut lines: Vec<String> = std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[4] = lines[4].replacen("\"steps\":", "\"steps\":\"many\",\"x\":", 1);
    std::fs::write(dir.join("trials.jsonl"), lines.join("\n") + "\n").unwrap();
    let o = toolpick(&["report", dir.to_str().unwrap()], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("trials.jsonl:5"), "{}", stderr(&o));
    for (name, bytes) in &reports {
        assert!(std::fs::read(dir.join(name)).unwrap() == *bytes, "{name} changed");
    }
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), reports.len() + 1, "no temporary file is left: {names:?}");
}

#[test]
fn validate_accepts_the_bundled_suite() {
    let o = toolpick(&["validate"], &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("ok: catalog workspace"));
}

#[test]
fn validate_rejects_a_malformed_catalog_with_file_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    write_small_catalog(&cat);
    let text = std::fs::read_to_string(cat.join("mail.json")).unwrap();
    // `required` names an undefined property.
    std::fs::write(
        cat.join("mail.json"),
        text.replace(r#""required": ["to", "subject"]"#, r#""required": ["to", "subjct"]"#),
    )
    .unwrap();
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    let o = toolpick(&["validate", "--catalog", "cat", "--dataset", "ds.jsonl"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("mail.json:10: field `categories[0].tools[0].inputSchema.required[1]`"),
        "{err}"
    );
    assert!(err.contains("subjct"), "{err}");
}

#[test]
fn validate_rejects_a_syntax_error_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    write_small_catalog(&cat);
    std::fs::write(
        cat.join("broken.json"),
        "{\n  \"name\": \"x\",\n  \"description\": \"y\"\n  \"categories\": []\n}",
    )
    .unwrap();
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    let o = toolpick(&["validate", "--catalog", "cat", "--dataset", "ds.jsonl"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("broken.json:4:"), "{}", stderr(&o));
}

#[test]
fn validate_rejects_bad_dataset_lines_with_file_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    let mut ds = SMALL_DATASET.to_string();
    // line 5: unknown tool id; line 6: value that breaks the schema (days is an integer ≤ 7); line 7: missing field
    ds.push_str(r#"{"id": "x1", "query": "q", "kind": "single", "expected": [{"tool": "weather/weather_now/get_wind", "arguments": {}}]}"#);
    ds.push('\n');
    ds.push_str(r#"{"id": "x2", "query": "q", "kind": "single", "expected": [{"tool": "weather/weather_later/get_forecast", "arguments": {"city": ["Oslo"], "days": [9]}}]}"#);
    ds.push('\n');
    ds.push_str(r#"{"id": "x3", "kind": "single", "expected": []}"#);
    ds.push('\n');
    std::fs::write(tmp.path().join("ds.jsonl"), ds).unwrap();
    let o = toolpick(&["validate", "--catalog", "cat", "--dataset", "ds.jsonl"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("ds.jsonl:7: field `query`"), "{err}");
    // the line with the missing field stops the cross-check, so fix it and check the other two
    let fixed = std::fs::read_to_string(tmp.path().join("ds.jsonl"))
        .unwrap()
        .replace(r#"{"id": "x3", "kind""#, r#"{"id": "x3", "query": "q", "kind""#)
        .replace(r#""kind": "single", "expected": []}"#, r#""kind": "abstain", "expected": []}"#);
    std::fs::write(tmp.path().join("ds.jsonl"), fixed).unwrap();
    let o = toolpick(&["validate", "--catalog", "cat", "--dataset", "ds.jsonl"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("ds.jsonl:5: field `expected[0].tool`"), "{err}");
    assert!(err.contains("ds.jsonl:6: field `expected[0].arguments.days[0]`"), "{err}");
}

#[test]
fn a_failed_run_leaves_no_output_behind() {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    std::fs::write(tmp.path().join("ds.jsonl"), "{\"id\": \"a\", \"query\": \"q\", \"kind\": \"single\", \"expected\": [{\"tool\": \"nope/x/y\"}]}\n").unwrap();
    let o =
        toolpick(&["run", "--catalog", "cat", "--dataset", "ds.jsonl", "--out", "out"], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ds.jsonl:1"), "{}", stderr(&o));
    let out = tmp.path().join("out");
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
        "nothing may be written"
    );
}

#[test]
fn unknown_flags_values_are_input_errors() {
    let o = toolpick(&["run", "--layouts", "spiral", "--out", "/nonexistent-toolpick"], &repo());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown layout `spiral`"), "{}", stderr(&o));
    let o = toolpick(&["run", "--variants", "worse", "--out", "/nonexistent-toolpick"], &repo());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown variant `worse`"), "{}", stderr(&o));
}

#[test]
fn random_backend_is_seeded() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |seed: &str, id: &str| {
        let o = toolpick(
            &argv_with(
                "run --backends random --seed {} --out {} --run-id {}",
                &[seed, tmp.path().to_str().unwrap(), id],
            ),
            &repo(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(tmp.path().join(id).join("trials.jsonl")).unwrap()
    };
    let (a, b, c) = (run("7", "a"), run("7", "b"), run("8", "c"));
    assert!(a == b, "same seed, same trials");
    assert!(a != c, "another seed, other choices");
    // chance level: random picks are rarely right on a 158-tool catalog
    let rows = summary_rows(&tmp.path().join("a"));
    for row in rows {
        let sel: f64 = row["selection_accuracy"].parse().unwrap();
        assert!(sel < 0.25, "random selection accuracy should be near chance: {row:?}");
    }
}

#[test]
fn large_runs_keep_every_trial_in_the_data_files_and_a_sample_in_the_drill_down() {
    let tmp = tempfile::tempdir().unwrap();
    let o = toolpick(
        &argv_with(
            "run --out {} --run-id big --quiet --layouts flat --backends lexical,random --trials 7",
            &[tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp.path().join("big");
    let total = std::fs::read_to_string(dir.join("trials.jsonl")).unwrap().lines().count();
    assert!(total > toolpick::report::DRILLDOWN_MAX, "{total}");
    assert_eq!(csv::Reader::from_path(dir.join("trials.csv")).unwrap().records().count(), total);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains(&format!(
        "This run has {total} trials; the drill-down below holds a deterministic sample of {}",
        toolpick::report::DRILLDOWN_MAX
    )));
    let island =
        html.split("id=\"toolpick-data\">").nth(1).unwrap().split("</script>").next().unwrap();
    let data: serde_json::Value = serde_json::from_str(island).unwrap();
    assert_eq!(data["trials"].as_array().unwrap().len(), toolpick::report::DRILLDOWN_MAX);
    // The sample carries transcripts, and the summary still counts every trial.
    assert!(data["trials"][0]["transcript"].as_array().is_some_and(|t| !t.is_empty()));
    let n: usize = summary_rows(&dir).iter().map(|r| r["n"].parse::<usize>().unwrap()).sum();
    assert_eq!(n, total);
}

#[test]
fn the_drill_down_reads_the_same_transcripts_with_the_index_without_it_and_with_a_stale_one() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = toolpick(args, &repo());
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run(&argv_with(
        "run --out {} --run-id r --quiet --layouts flat,progressive --backends oracle,lexical",
        &[tmp.path().to_str().unwrap()],
    ));
    let dir = tmp.path().join("r");
    let index = dir.join("transcripts.idx");
    let written = std::fs::read(&index).expect("a run indexes its transcripts");
    let html = std::fs::read(dir.join("report.html")).unwrap();
    let report = || {
        run(&["report", dir.to_str().unwrap()]);
        std::fs::read(dir.join("report.html")).unwrap()
    };
    // The index points at every line: the page is the run's, not one without transcripts.
    assert!(String::from_utf8_lossy(&html).contains("\"transcript\":[{"));
    std::fs::remove_file(&index).unwrap();
    assert!(
        report() == html,
        "without the index the transcripts file is scanned, to the same page"
    );
    // Offsets swapped: the lines they point at carry other trial ids, so the index is not trusted.
    let mut swapped = written.clone();
    let (a, b) = (24, 32);
    let first: Vec<u8> = swapped[a..a + 8].to_vec();
    swapped.copy_within(b..b + 8, a);
    swapped[b..b + 8].copy_from_slice(&first);
    std::fs::write(&index, &swapped).unwrap();
    assert!(report() == html, "a stale index falls back to the scan");
    // An index of another length (the transcripts file grew since) is not trusted either.
    std::fs::write(&index, &written[..written.len() - 8]).unwrap();
    assert!(report() == html);
    std::fs::write(&index, &written).unwrap();
    assert!(report() == html);
}
