//! Running a slow local model (issue 13, part 5), against the mock endpoint over HTTP: progress lines
//! keep coming while no trial finishes, the summary carries the endpoint's own token counts next to
//! toolpick's estimate, and the printed table stays aligned whatever the model's name.

mod common;
use common::*;
use serde_json::Value;
use std::process::Output;
use toolpick::mock::MockConfig;

/// The mock endpoint and the small catalog (runs here name their own backends).
fn start(config: MockConfig) -> MockEnv {
    MockEnv::start(config, &[])
}

fn run(env: &MockEnv, extra: &[&str], vars: &[(&str, &str)]) -> Output {
    let url = env.url();
    let mut args = argv_with(
        "run --catalog cat --dataset ds.jsonl --base-url {} --out out \
        --run-id r --variants good --layouts flat",
        &[&url],
    );
    args.extend_from_slice(extra);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"));
    cmd.args(&args).current_dir(env.dir.path()).env_remove("CI");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn progress_lines_keep_coming_while_a_slow_model_has_not_finished_a_trial() {
    // Every request takes 900 ms, one at a time; lines are due every 150 ms (5 s by default).
    let env =
        start(MockConfig { latency: std::time::Duration::from_millis(900), ..Default::default() });
    let o = run(
        &env,
        &["--backends", "openai", "--model", "slow", "--concurrency", "1", "--no-cache"],
        &[("TOOLPICK_PROGRESS_INTERVAL_MS", "150")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("progress: ")).collect();
    let trials =
        std::fs::read_to_string(env.dir.path().join("out/r/trials.jsonl")).unwrap().lines().count();
    // Before, a line could only follow a finished trial: at most one per trial.
    assert!(lines.len() > trials + 2, "{} progress lines for {trials} trials:\n{err}", lines.len());
    // Lines while nothing finished repeat the count: some consecutive lines show the same count.
    let counts: Vec<&str> =
        lines.iter().map(|l| l.split_whitespace().nth(1).unwrap_or("")).collect();
    assert!(counts.windows(2).any(|w| w[0] == w[1]), "{err}");
    assert_eq!(
        counts.last().copied(),
        Some(format!("{trials}/{trials}").as_str()),
        "the last line is the total"
    );
}

#[test]
fn the_summary_carries_the_endpoints_token_counts_next_to_the_estimate() {
    let env = start(MockConfig::default());
    let o =
        run(&env, &["--backends", "lexical,openai", "--model", "mock", "--no-cache", "-q"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = env.dir.path().join("out/r");
    // Means of the endpoint's usage over the mock's trials, from the trial records.
    let trials: Vec<Value> = std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mock: Vec<&Value> = trials.iter().filter(|t| t["backend"] == "mock").collect();
    assert!(!mock.is_empty());
    let mean = |field: &str| {
        mock.iter().map(|t| t["usage"][field].as_f64().unwrap()).sum::<f64>() / mock.len() as f64
    };
    let rows = csv_rows(&dir.join("summary.csv"));
    let row = rows.iter().find(|r| r["backend"] == "mock").unwrap();
    for (col, field) in [
        ("mean_endpoint_prompt_tokens", "prompt_tokens"),
        ("mean_endpoint_completion_tokens", "completion_tokens"),
        ("mean_endpoint_cached_tokens", "cached_tokens"),
    ] {
        let got: f64 = row[col].parse().unwrap_or_else(|_| panic!("{col}: {:?}", row[col]));
        assert!((got - mean(field)).abs() < 1e-6, "{col}: {got} vs {}", mean(field));
    }
    assert!(
        row["mean_endpoint_prompt_tokens"].parse::<f64>().unwrap() > 0.0,
        "the mock reports usage"
    );
    // toolpick's own estimate stays beside it, and a baseline has no endpoint counts (missing, not 0).
    assert!(row["mean_tokens_total"].parse::<f64>().unwrap() > 0.0);
    let lexical = rows.iter().find(|r| r["backend"] == "lexical").unwrap();
    assert_eq!(lexical["mean_endpoint_prompt_tokens"], "");
}

#[test]
fn the_printed_table_stays_aligned_with_a_long_model_name() {
    let env = start(MockConfig::default());
    let name = "qwen2.5-coder-0.5b-instruct-q8_0-on-a-laptop";
    let o = run(&env, &["--backends", "lexical,openai", "--model", name, "--no-cache", "-q"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("dataset"))
        .take_while(|l| l.split_whitespace().count() == 12)
        .collect();
    assert!(table.len() >= 3 && table.iter().any(|l| l.contains(name)), "{out}");
    // Every column ends where the header's does: the `n` column's right edge is the same on every line.
    let edges: Vec<usize> = table.iter().map(|l| token_end(l, 4)).collect();
    assert!(edges.windows(2).all(|w| w[0] == w[1]), "misaligned:\n{}", table.join("\n"));
    let widths: Vec<usize> = table.iter().map(|l| l.chars().count()).collect();
    assert!(
        widths.windows(2).all(|w| w[0] == w[1]),
        "lines of different widths:\n{}",
        table.join("\n")
    );
}

/// Where the `k`-th (0-based) whitespace-separated token of `line` ends, in characters.
fn token_end(line: &str, k: usize) -> usize {
    let mut token = 0;
    let mut inside = false;
    for (i, c) in line.chars().enumerate() {
        if c.is_whitespace() {
            if inside && token == k {
                return i;
            }
            if inside {
                token += 1;
            }
            inside = false;
        } else {
            inside = true;
        }
    }
    line.chars().count()
}

#[test]
fn the_llama_cpp_recipe_runs_as_written_against_a_local_endpoint() {
    // docs/models.md's recipe: examples/llama-cpp.toml with a 24-task sample; the mock stands in for
    // llama-server (its URL replaces the file's, as a flag overrides the file).
    // The mock refuses, as llama-server -c 16384 does, a request over the recipe's context.
    let env = start(MockConfig { context_size: Some(16384), ..Default::default() });
    let out = env.dir.path().join("recipe");
    let config = repo().join("examples/llama-cpp.toml");
    let o = toolpick(
        &argv_with(
            "run --config {} --sample 24 --base-url {} --out {} --run-id r -q",
            &[config.to_str().unwrap(), &env.url(), out.to_str().unwrap()],
        ),
        env.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = csv_rows(&out.join("r/summary.csv"));
    let mut cells: Vec<(String, String, String)> =
        rows.iter().map(|r| (r["variant"].clone(), r["backend"].clone(), r["n"].clone())).collect();
    cells.sort();
    let want: Vec<(String, String, String)> = [
        ("bad@20", "lexical"),
        ("bad@20", "qwen-0.5b-cpu"),
        ("good@20", "lexical"),
        ("good@20", "qwen-0.5b-cpu"),
    ]
    .iter()
    .map(|(v, b)| (v.to_string(), b.to_string(), "24".to_string()))
    .collect();
    assert_eq!(cells, want, "two variants × the model and the baseline, 24 tasks each");
    for r in &rows {
        assert_eq!(r["excluded_provider_limit"], "0", "every request fits the context: {r:?}");
    }
    let meta: Value =
        serde_json::from_slice(&std::fs::read(out.join("r/run.json")).unwrap()).unwrap();
    let model = &meta["config"]["models"][0];
    assert_eq!(
        (model["concurrency"].as_u64(), model["parse_text_calls"].as_bool()),
        (Some(1), Some(true)),
        "{model}"
    );
    assert!(model["request_timeout_s"].as_f64().unwrap() >= 300.0);
}
