//! The native layouts end to end over each protocol that has them (`anthropic`, `openai-responses`),
//! against the mock endpoint started by the test: `native-search-client` (every tool deferred,
//! toolpick's BM25 answering the search through `tool_reference` blocks or a `tool_search_output`)
//! must score exactly as the `search` layout does, since the same search answers and only the wire
//! differs; `native-search` (the provider runs its own search, the mock standing in for it) records
//! each search the provider reported, with what it loaded. Backends whose protocol cannot express
//! them are refused before anything runs, by name.

mod common;
use common::*;
use serde_json::Value;
use std::collections::HashMap;
use toolpick::mock::MockConfig;

/// A run of the bundled suite's `good` variant by `backend` (model `mock`) in `layouts`.
fn run(env: &MockEnv, backend: &str, run_id: &str, layouts: &str) -> Vec<Row> {
    let url = format!("{}/v1", env.url().trim_end_matches('/').trim_end_matches("/v1"));
    let out = env.path("out");
    let o = toolpick(
        &argv_with(
            "run --backends {} --model mock --base-url {} --layouts {} --variants good \
             --out {} --run-id {} -q --no-cache",
            &[backend, &url, layouts, out.to_str().unwrap(), run_id],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{backend}: {}", stderr(&o));
    summary_rows(&env.path(&format!("out/{run_id}")))
}

/// The summary rows by layout.
fn by_layout(rows: &[Row]) -> HashMap<String, &Row> {
    rows.iter().map(|r| (r["layout"].clone(), r)).collect()
}

/// The summary columns two ways of sending the same tools must agree on when the mock chooses alike.
const SAME_FIGURES: [&str; 6] = [
    "n",
    "selection_accuracy",
    "pass_at_1",
    "abstention_accuracy",
    "mean_steps",
    "gold_revealed_rate",
];

#[test]
fn toolpicks_search_in_the_providers_form_scores_as_the_search_layout_over_both_protocols() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    for backend in ["anthropic", "openai-responses"] {
        let rows = run(&env, backend, backend, "search,native-search-client");
        let rows = by_layout(&rows);
        let (search, native) = (rows["search"], rows["native-search-client"]);
        for col in SAME_FIGURES {
            assert_eq!(native[col], search[col], "{backend}: {col}");
        }
        assert_eq!(native["infra_errors"], "0", "{backend}");
        let pass: f64 = native["pass_at_1"].parse().unwrap();
        assert!(pass > 0.0, "{backend}: the loaded tools were called");
        // What went up front is the search tool alone: far fewer prompt tokens than every tool.
        let trials = env.trials(backend);
        let searched = trials
            .iter()
            .filter(|t| t["layout"] == "native-search-client")
            .flat_map(|t| t["calls"].as_array().unwrap().clone())
            .filter(|c| c["record"]["name"] == "search_tools")
            .count();
        assert!(searched > 100, "{backend}: {searched} searches");
    }
}

#[test]
fn the_providers_own_search_is_recorded_with_what_it_loaded() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    for (backend, tool) in
        [("anthropic", "tool_search_tool_bm25"), ("openai-responses", "tool_search")]
    {
        let rows = run(&env, backend, backend, "native-search");
        let row = by_layout(&rows)["native-search"];
        assert_eq!(row["infra_errors"], "0", "{backend}");
        let revealed: f64 = row["gold_revealed_rate"].parse().unwrap();
        let pass: f64 = row["pass_at_1"].parse().unwrap();
        assert!(revealed > 0.0 && pass > 0.0, "{backend}: revealed {revealed}, pass {pass}");
        let trials = env.trials(backend);
        let mut searches = 0;
        for t in &trials {
            // The transcript holds each search and what it loaded, in order; the n-th search record
            // reveals the catalog tools behind exactly the n-th search's names, in order.
            let loaded: Vec<Vec<String>> = t["transcript"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool" && m["name"] == tool)
                .map(|m| {
                    let v: Value = serde_json::from_str(m["content"].as_str().unwrap()).unwrap();
                    let names = v["tools"].as_array().unwrap().iter();
                    names.map(|t| t["name"].as_str().unwrap().to_string()).collect()
                })
                .collect();
            let records: Vec<&Value> = t["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| &c["record"])
                .filter(|r| r["name"] == tool)
                .collect();
            assert_eq!(records.len(), loaded.len(), "{}", t["task_id"]);
            for (r, names) in records.iter().zip(&loaded) {
                searches += 1;
                assert_eq!(r["status"], "navigated", "{}", t["task_id"]);
                let revealed: Vec<&str> = r["revealed"]
                    .as_array()
                    .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
                    .unwrap_or_default();
                assert_eq!(revealed.len(), names.len(), "{}: {r}", t["task_id"]);
                for (id, name) in revealed.iter().zip(names) {
                    let tool_name = id.rsplit('/').next().unwrap();
                    assert!(
                        name == tool_name || name.ends_with(&format!("__{tool_name}")),
                        "{}: {id} revealed for {name}",
                        t["task_id"]
                    );
                }
            }
        }
        assert!(
            searches >= trials.len() / 2,
            "{backend}: {searches} searches in {} trials",
            trials.len()
        );
    }
}

#[test]
fn the_oracle_scores_every_task_in_the_native_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = toolpick(
        &argv_with(
            "run --backends oracle --layouts native-search,native-search-client --out {} --run-id o -q",
            &[out.to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = summary_rows(&out.join("o"));
    assert_eq!(rows.len(), 4, "2 variants x 2 layouts");
    for r in &rows {
        let pass: f64 = r["pass_at_1"].parse().unwrap();
        assert_eq!(pass, 1.0, "{} {}", r["variant"], r["layout"]);
    }
}

#[test]
fn a_backend_whose_protocol_has_no_deferred_tools_is_refused_the_native_layouts_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, layout) in [
        ("openai", "native-search"),
        ("gemini", "native-search-client"),
        ("lexical", "native-search"),
        ("random", "native-search-client"),
    ] {
        let layouts = format!("flat,{layout}");
        let o = toolpick(
            &argv_with(
                "run --backends {} --model m --base-url http://127.0.0.1:9/v1 --layouts {} \
                 --out {} -q",
                &[backend, &layouts, dir.path().join("out").to_str().unwrap()],
            ),
            &repo(),
        );
        assert_eq!(o.status.code(), Some(2), "{backend}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("`{backend}`")) && e.contains(&format!("`{layout}`")),
            "{backend}: {e}"
        );
        assert!(!dir.path().join("out").exists(), "nothing written");
    }
    let o = toolpick(&argv("mcp serve --layout native-search"), &repo());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("native-search"), "{}", stderr(&o));
}

#[test]
fn the_comparison_example_runs_every_layout_for_each_protocol_against_the_mock() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    let url = format!("http://{}/v1", env.server.addr);
    let config = repo().join("examples/native-vs-progressive.toml");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(["run", "--config", config.to_str().unwrap(), "--base-url", &url, "--limit", "4"])
        .args(["--out", "out", "--run-id", "ex", "-q", "--no-cache", "--trials", "1"])
        .env("ANTHROPIC_API_KEY", "sk-ant-example")
        .env("OPENAI_API_KEY", "sk-example")
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = env.csv("ex", "summary.csv");
    assert_eq!(rows.len(), 2 * 5 * 2, "2 models x 5 layouts x 2 variants");
    for r in &rows {
        assert_eq!(r["infra_errors"], "0", "{} {}", r["backend"], r["layout"]);
        let tokens: f64 = r["mean_endpoint_prompt_tokens"].parse().unwrap();
        assert!(tokens > 0.0, "{} {}: tokens per task", r["backend"], r["layout"]);
    }
}

#[test]
fn each_requests_usage_is_kept_as_the_provider_wrote_it_and_the_normalised_usage_is_its_sum() {
    // The normalisation (docs/models.md) recomputed from the raw objects, per protocol: Messages'
    // input excludes the cache reads and writes, Responses' and Gemini's include them.
    let env = MockEnv::start(MockConfig::default(), &[]);
    for (backend, base) in [
        ("anthropic", format!("{}/v1", env.server.base_url().trim_end_matches("/v1"))),
        ("openai-responses", format!("{}/v1", env.server.base_url().trim_end_matches("/v1"))),
        ("gemini", format!("http://{}", env.server.addr)),
        ("openai", env.server.base_url()),
    ] {
        let o = toolpick(
            &argv_with(
                "run --catalog cat --dataset ds.jsonl --backends {} --model mock --base-url {} \
                 --layouts flat,progressive --out out --run-id {} -q --no-cache",
                &[backend, &base, backend],
            ),
            env.dir.path(),
        );
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let trials = env.trials(backend);
        assert!(!trials.is_empty());
        for t in &trials {
            let raw = t["provider_usage"].as_array().expect("provider_usage");
            assert_eq!(
                raw.len() as u64,
                t["steps"].as_u64().unwrap(),
                "{backend}: one per request"
            );
            let sum = |f: &dyn Fn(&Value) -> u64| raw.iter().map(f).sum::<u64>();
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            let (prompt, completion) = match backend {
                "anthropic" => (
                    sum(&|u| {
                        n(&u["input_tokens"])
                            + n(&u["cache_creation_input_tokens"])
                            + n(&u["cache_read_input_tokens"])
                    }),
                    sum(&|u| n(&u["output_tokens"])),
                ),
                "openai-responses" => {
                    (sum(&|u| n(&u["input_tokens"])), sum(&|u| n(&u["output_tokens"])))
                }
                "gemini" => (
                    sum(&|u| n(&u["promptTokenCount"]) + n(&u["toolUsePromptTokenCount"])),
                    sum(&|u| n(&u["candidatesTokenCount"]) + n(&u["thoughtsTokenCount"])),
                ),
                _ => (sum(&|u| n(&u["prompt_tokens"])), sum(&|u| n(&u["completion_tokens"]))),
            };
            let reasoning = match backend {
                "anthropic" => 0,
                "openai-responses" => sum(&|u| n(&u["output_tokens_details"]["reasoning_tokens"])),
                "gemini" => sum(&|u| n(&u["thoughtsTokenCount"])),
                _ => sum(&|u| n(&u["completion_tokens_details"]["reasoning_tokens"])),
            };
            let recorded = t["usage"].get("reasoning_tokens").map_or(0, |r| r.as_u64().unwrap());
            assert_eq!(recorded, reasoning, "{backend}: reasoning_tokens");
            assert!(prompt > 0, "{backend}");
            assert_eq!(t["usage"]["prompt_tokens"].as_u64().unwrap(), prompt, "{backend}");
            assert_eq!(t["usage"]["completion_tokens"].as_u64().unwrap(), completion, "{backend}");
        }
    }
    // The in-process baselines have no provider: no field.
    let o = toolpick(
        &argv("run --catalog cat --dataset ds.jsonl --backends lexical --out out --run-id l -q"),
        env.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(env.trials("l").iter().all(|t| t.get("provider_usage").is_none()));
}

/// Every JSON object in `v` and below it.
fn objects(v: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            out.push(v);
            m.values().for_each(|c| out.extend(objects(c)));
        }
        Value::Array(a) => a.iter().for_each(|c| out.extend(objects(c))),
        _ => {}
    }
    out
}

#[test]
fn namespaces_change_only_the_wire_in_flat_and_native_search() {
    let env = MockEnv::start(MockConfig::default(), &[]);
    let url = format!("{}/v1", env.url().trim_end_matches('/').trim_end_matches("/v1"));
    let (out, cache) = (env.path("out"), env.path("cache"));
    let go = |run_id: &str, extra: &str| {
        let o = toolpick(
            &argv_with(
                &format!(
                    "run --backends openai-responses --model mock --base-url {{}} --layouts \
                     flat,native-search --variants good --out {{}} --run-id {{}} -q {extra}"
                ),
                &[&url, out.to_str().unwrap(), run_id],
            ),
            &repo(),
        );
        assert!(o.status.success(), "{run_id}: {}", stderr(&o));
    };
    go("plain", "--no-cache");
    go("grouped", &format!("--namespaces --cache-dir {}", cache.display()));
    let (plain, grouped) =
        (summary_rows(&env.path("out/plain")), summary_rows(&env.path("out/grouped")));
    let (plain, grouped) = (by_layout(&plain), by_layout(&grouped));
    for layout in ["flat", "native-search"] {
        let (p, g) = (plain[layout], grouped[layout]);
        for col in SAME_FIGURES {
            assert_eq!(g[col], p[col], "{layout}: {col}");
        }
        assert_eq!(g["infra_errors"], "0", "{layout}");
        assert!(g["pass_at_1"].parse::<f64>().unwrap() > 0.0, "{layout}");
    }
    // Call by call, the same tools were resolved with the same outcome.
    // (task, layout) → each call's (name, tool id, status).
    type Calls = HashMap<(String, String), Vec<(Value, Value, Value)>>;
    let calls = |run_id: &str| -> Calls {
        env.trials(run_id)
            .iter()
            .map(|t| {
                let key = (
                    t["task_id"].as_str().unwrap().to_string(),
                    t["layout"].as_str().unwrap().to_string(),
                );
                let calls = t["calls"].as_array().unwrap().iter().map(|c| {
                    let r = &c["record"];
                    (r["name"].clone(), r["tool_id"].clone(), r["status"].clone())
                });
                (key, calls.collect())
            })
            .collect()
    };
    let (p, g) = (calls("plain"), calls("grouped"));
    assert_eq!(p.len(), g.len());
    assert!(p.values().flatten().any(|c| c.1.is_string()), "tools were resolved");
    assert_eq!(p, g);
    // The answers (cached as the mock wrote them) called grouped functions in their namespace, and the
    // API's own search loaded them inside namespaces: the mock saw the groups in the requests.
    let mut answers = Vec::new();
    let mut stack = vec![cache.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(v) = serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap()) {
                answers.push(v);
            }
        }
    }
    assert!(!answers.is_empty(), "the grouped run's answers were cached");
    let items: Vec<&Value> = answers.iter().flat_map(objects).collect();
    let namespaced =
        items.iter().filter(|i| i["type"] == "function_call" && i["namespace"].is_string()).count();
    let plain_calls = items
        .iter()
        .filter(|i| i["type"] == "function_call" && i.get("namespace").is_none())
        .count();
    assert!(namespaced > 10 && plain_calls == 0, "{namespaced} namespaced, {plain_calls} not");
    assert!(
        items.iter().any(|i| i["type"] == "tool_search_output"
            && i["tools"].as_array().unwrap().iter().any(|t| t["type"] == "namespace")),
        "a search loaded a namespace"
    );
}

#[test]
fn namespaces_are_refused_on_any_other_backend_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ["openai", "anthropic", "gemini"] {
        let o = toolpick(
            &argv_with(
                "run --backends {} --model m --base-url http://127.0.0.1:9/v1 --namespaces \
                 --out {} -q",
                &[backend, dir.path().join("out").to_str().unwrap()],
            ),
            &repo(),
        );
        assert_eq!(o.status.code(), Some(2), "{backend}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("namespaces") && e.contains(&format!("`{backend}`")), "{backend}: {e}");
        assert!(!dir.path().join("out").exists(), "nothing written");
    }
    // In an experiment file: the model is named.
    let file = dir.path().join("x.toml");
    std::fs::write(
        &file,
        "[[models]]\nname = \"claude-grouped\"\nbackend = \"anthropic\"\nmodel = \"m\"\n\
         base_url = \"http://127.0.0.1:9/v1\"\nnamespaces = true\n",
    )
    .unwrap();
    let o = toolpick(
        &argv_with(
            "run --config {} --out {} -q",
            &[file.to_str().unwrap(), dir.path().join("out").to_str().unwrap()],
        ),
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("namespaces") && e.contains("claude-grouped"), "{e}");
    // A misspelt option is refused as any unknown key is.
    std::fs::write(
        &file,
        "[[models]]\nbackend = \"openai-responses\"\nmodel = \"m\"\nnamespace = true\n",
    )
    .unwrap();
    let o = toolpick(&argv_with("run --config {} -q", &[file.to_str().unwrap()]), &repo());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("namespace"), "{}", stderr(&o));
}
