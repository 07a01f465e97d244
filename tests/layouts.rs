//! Both layouts, exercised through their public call interface on a small catalog.

mod common;
use common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use toolpick::catalog::variant::Variant;
use toolpick::catalog::{Catalog, load_catalog};
use toolpick::exec::{Executor, Rejection};
use toolpick::layout::{CallStatus, DiscoveryRule, FlatLayout, Layout, ProgressiveLayout};
use toolpick::protocol::ToolCall;

fn catalog() -> (tempfile::TempDir, Catalog) {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(tmp.path());
    let c = load_catalog(tmp.path()).unwrap();
    (tmp, c)
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall { id: "c1".into(), name: name.into(), arguments: args.to_string() }
}

fn raw_call(name: &str, args: &str) -> ToolCall {
    ToolCall { id: "c1".into(), name: name.into(), arguments: args.into() }
}

fn progressive(c: &Catalog, rule: DiscoveryRule) -> ProgressiveLayout {
    ProgressiveLayout::new(c.clone(), Arc::new(Executor::new(c).unwrap()), rule)
}

#[test]
fn flat_offers_every_tool_and_executes_valid_calls() {
    let (_t, c) = catalog();
    let flat = FlatLayout::new(&c, Arc::new(Executor::new(&c).unwrap()));
    let names: Vec<&str> = flat.functions().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["send_email", "get_current_weather", "get_forecast"]);
    let out = flat.call(&call("get_current_weather", json!({"city": "Pune"})), 1);
    assert_eq!(out.record.status, CallStatus::Executed);
    assert_eq!(out.record.tool_id.as_deref(), Some("weather/weather_now/get_current_weather"));
    assert_eq!(
        serde_json::from_str::<Value>(&out.content).unwrap(),
        json!({"temp_c": 21, "sky": "clear"})
    );
}

#[test]
fn flat_reports_invented_malformed_and_rejected_calls() {
    let (_t, c) = catalog();
    let flat = FlatLayout::new(&c, Arc::new(Executor::new(&c).unwrap()));
    let invented = flat.call(&call("get_weather", json!({})), 1);
    assert_eq!(invented.record.status, CallStatus::Invented);
    assert!(invented.content.contains("Unknown tool 'get_weather'"));
    let malformed = flat.call(&raw_call("get_forecast", "{\"city\": \"Oslo\""), 1);
    assert_eq!(malformed.record.status, CallStatus::Malformed);
    let rejected = flat.call(&call("get_forecast", json!({"city": "Oslo"})), 1);
    assert_eq!(rejected.record.status, CallStatus::Rejected);
    assert_eq!(rejected.record.rejection, Some(Rejection::MissingRequired));
    assert!(rejected.content.contains("\\\"days\\\" is required"), "{}", rejected.content);
}

#[test]
fn progressive_has_the_six_strata_meta_tools() {
    let (_t, c) = catalog();
    let p = progressive(&c, DiscoveryRule::default());
    let names: Vec<&str> = p.functions().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "discover_server_categories_or_actions",
            "get_category_actions",
            "get_action_details",
            "execute_action",
            "search_documentation",
            "handle_auth_failure"
        ]
    );
    let exec = &p.functions()[3].parameters["properties"];
    for param in [
        "server_name",
        "category_name",
        "action_name",
        "path_params",
        "query_params",
        "body_schema",
        "include_output_fields",
        "maximum_output_characters",
    ] {
        assert!(exec.get(param).is_some(), "execute_action lacks {param}");
    }
}

#[test]
fn discovery_detail_follows_the_reported_rule() {
    let (_t, c) = catalog();
    let q = json!({"user_query": "weather", "server_names": ["weather", "mail"]});
    let modes = |rule| {
        let out = progressive(&c, rule)
            .call(&call("discover_server_categories_or_actions", q.clone()), 1);
        let v: Value = serde_json::from_str(&out.content).unwrap();
        v["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["detail"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    // weather has 2 actions, mail 1
    assert_eq!(
        modes(DiscoveryRule { full_details_max: 1, actions_max: 2 }),
        vec!["categories_and_actions", "full_details"]
    );
    assert_eq!(
        modes(DiscoveryRule { full_details_max: 0, actions_max: 0 }),
        vec!["categories_only", "categories_only"]
    );
    let out = progressive(&c, DiscoveryRule { full_details_max: 5, actions_max: 5 })
        .call(&call("discover_server_categories_or_actions", q), 1);
    assert!(out.content.contains("inputSchema"), "full details include schemas");
}

#[test]
fn progressive_drills_down_and_executes_with_merged_arguments() {
    let (_t, c) = catalog();
    let p = progressive(&c, DiscoveryRule { full_details_max: 0, actions_max: 0 });
    let cats =
        p.call(&call("get_category_actions", json!({"category_names": ["weather_later"]})), 2);
    assert_eq!(cats.record.status, CallStatus::Navigated);
    assert!(cats.content.contains("get_forecast"));
    let details = p.call(
        &call(
            "get_action_details",
            json!({"category_name": "weather_later", "action_name": "get_forecast"}),
        ),
        3,
    );
    let d: Value = serde_json::from_str(&details.content).unwrap();
    assert_eq!(d["inputSchema"]["required"], json!(["city", "days"]));
    let exec = p.call(
        &call(
            "execute_action",
            json!({
                "server_name": "weather", "category_name": "weather_later", "action_name": "get_forecast",
                "path_params": "{\"city\": \"Oslo\"}", "body_schema": "{\"days\": 3}"
            }),
        ),
        4,
    );
    assert_eq!(exec.record.status, CallStatus::Executed, "{}", exec.content);
    assert_eq!(exec.record.tool_id.as_deref(), Some("weather/weather_later/get_forecast"));
    assert_eq!(exec.record.arguments, Some(json!({"city": "Oslo", "days": 3})));
}

#[test]
fn progressive_execute_errors() {
    let (_t, c) = catalog();
    let p = progressive(&c, DiscoveryRule::default());
    let base = json!({"server_name": "weather", "category_name": "weather_later", "action_name": "get_forecast"});
    let with = |extra: Value| {
        let mut v = base.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        p.call(&call("execute_action", v), 1)
    };
    assert_eq!(with(json!({"body_schema": "{not json"})).record.status, CallStatus::Malformed);
    assert_eq!(with(json!({"path_params": "{\"city\":\"Oslo\"}", "body_schema": "{\"city\":\"Lima\",\"days\":1}"})).record.status, CallStatus::Malformed);
    let rejected = with(json!({"body_schema": "{\"city\":\"Oslo\",\"days\":9}"}));
    assert_eq!(rejected.record.rejection, Some(Rejection::ValueError));
    let invented = with(json!({"action_name": "get_wind"}));
    assert_eq!(invented.record.status, CallStatus::Invented);
    let wrong_category = with(json!({"action_name": "get_current_weather"}));
    assert_eq!(wrong_category.record.status, CallStatus::NavigationError);
    let wrong_server =
        with(json!({"server_name": "mail", "body_schema": "{\"city\":\"Oslo\",\"days\":1}"}));
    assert_eq!(wrong_server.record.status, CallStatus::NavigationError);
    // output shaping
    let shaped = with(
        json!({"body_schema": "{\"city\":\"Oslo\",\"days\":1}", "maximum_output_characters": 4}),
    );
    assert_eq!(shaped.content, "{\"da");
    let unknown = p.call(&call("get_weather", json!({})), 1);
    assert_eq!(unknown.record.status, CallStatus::Invented);
}

#[test]
fn search_documentation_ranks_actions_by_keywords() {
    let (_t, c) = catalog();
    let p = progressive(&c, DiscoveryRule::default());
    let out = p.call(
        &call(
            "search_documentation",
            json!({"query": "forecast coming days", "server_name": "weather", "max_results": 1}),
        ),
        1,
    );
    let v: Value = serde_json::from_str(&out.content).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    assert_eq!(v["results"][0]["action"], "get_forecast");
    let auth = p.call(
        &call(
            "handle_auth_failure",
            json!({"server_name": "weather", "intention": "get_auth_url"}),
        ),
        1,
    );
    assert_eq!(auth.record.status, CallStatus::Navigated);
}

#[test]
fn both_layouts_show_exactly_the_same_variant_text() {
    let c = load_catalog(&repo().join("registries/workspace")).unwrap();
    for variant in ["good", "bad"] {
        let shown = Variant::parse(variant).unwrap().apply(&c).unwrap();
        let ex = Arc::new(Executor::new(&c).unwrap());
        let flat = FlatLayout::new(&shown, ex.clone());
        let p = ProgressiveLayout::new(shown.clone(), ex, DiscoveryRule::default());
        for t in shown.tools() {
            let f = flat
                .functions()
                .iter()
                .find(|f| Some(f.name.as_str()) == flat.function_name(&t.tool.id))
                .unwrap();
            let out = p.call(
                &call(
                    "get_action_details",
                    json!({"category_name": t.category.name, "action_name": t.tool.name}),
                ),
                1,
            );
            let d: Value = serde_json::from_str(&out.content).unwrap();
            assert_eq!(
                d["description"].as_str().unwrap(),
                f.description,
                "{variant} {}",
                t.tool.id
            );
            assert_eq!(d["inputSchema"], f.parameters, "{variant} {}", t.tool.id);
            assert_eq!(
                d["name"].as_str().unwrap(),
                f.name,
                "{variant} {}: names are unique, so both use the tool name",
                t.tool.id
            );
        }
    }
}

#[test]
fn search_layout_end_to_end_with_gold_revealed_diagnostic() {
    let tmp = tempfile::tempdir().unwrap();
    let o = toolpick(
        &argv_with(
            "run --layouts search,progressive --backends oracle,lexical --out {} --run-id s -q",
            &[tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = summary_rows(&tmp.path().join("s"));
    assert_eq!(rows.len(), 8);
    for row in &rows {
        let revealed: f64 = row["gold_revealed_rate"].parse().unwrap();
        match row["backend"].as_str() {
            // The oracle finds its tools through the layout, so discovery/search showed every gold tool.
            "oracle" => {
                assert_eq!(row["pass_at_1"], "1.000000", "{row:?}");
                assert_eq!(revealed, 1.0, "{row:?}");
            }
            // A keyword agent does not always get the gold tool shown, and cannot pick what it never saw.
            _ => {
                let sel: f64 = row["selection_accuracy"].parse().unwrap();
                assert!(revealed < 1.0, "{row:?}");
                assert!(revealed > 0.0, "{row:?}");
                assert!(
                    sel <= revealed + 0.2,
                    "selection is bounded by what was shown (plus abstain tasks): {row:?}"
                );
            }
        }
    }
}

#[test]
fn progressive_oss_ranks_action_names_and_executes_by_server_and_name() {
    let (_t, c) = catalog();
    let p = ProgressiveLayout::new_oss(c.clone(), Arc::new(Executor::new(&c).unwrap()));
    let names: Vec<&str> = p.functions().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "discover_server_actions",
            "get_action_details",
            "execute_action",
            "search_documentation",
            "handle_auth_failure"
        ]
    );
    let d = p.call(
        &call(
            "discover_server_actions",
            json!({"user_query": "forecast for the coming days", "server_names": ["weather"]}),
        ),
        1,
    );
    let v: Value = serde_json::from_str(&d.content).unwrap();
    assert_eq!(
        v["servers"][0]["actions"],
        json!(["get_forecast", "get_current_weather"]),
        "best match first, names only"
    );
    assert!(d.content.find("inputSchema").is_none());
    let det = p.call(
        &call(
            "get_action_details",
            json!({"server_name": "weather", "action_name": "get_forecast"}),
        ),
        2,
    );
    assert_eq!(det.record.revealed, vec!["weather/weather_later/get_forecast".to_string()]);
    let ex = p
        .call(&call("execute_action", json!({"server_name": "weather", "action_name": "get_forecast", "body_schema": "{\"city\": \"Oslo\", \"days\": 2}"})), 3);
    assert_eq!(ex.record.status, CallStatus::Executed, "{}", ex.content);
    let wrong = p.call(
        &call(
            "execute_action",
            json!({"server_name": "mail", "action_name": "get_forecast", "body_schema": "{}"}),
        ),
        3,
    );
    assert_eq!(wrong.record.status, CallStatus::NavigationError);
    // the category-based discovery of hosted Strata is not part of the OSS tool set
    assert_eq!(
        p.call(
            &call(
                "discover_server_categories_or_actions",
                json!({"user_query": "x", "server_names": ["weather"]})
            ),
            1
        )
        .record
        .status,
        CallStatus::Invented
    );
}

#[test]
fn every_layout_lets_the_oracle_pass_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let o = toolpick(
        &argv_with(
            "run --layouts progressive-oss --backends oracle --out {} --run-id o -q",
            &[tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = std::fs::read_to_string(tmp.path().join("o/summary.csv")).unwrap();
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert!(r.contains(",progressive-oss,oracle,"), "{r}");
        assert!(r.contains(",1.000000,"), "{r}");
    }
}

#[test]
fn per_layer_diagnostics_locate_where_the_gold_tool_was_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let o = toolpick(
        &argv_with(
            "run --layouts progressive --variants good --backends oracle,lexical --out {} \
             --run-id d -q",
            &[tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = summary_rows(&tmp.path().join("d"));
    let f = |row: &Row, k: &str| -> f64 { row[k].parse().unwrap() };
    let oracle = rows.iter().find(|r| r["backend"] == "oracle").unwrap();
    for k in ["server_recall", "category_recall", "gold_revealed_rate"] {
        assert_eq!(f(oracle, k), 1.0, "{k}");
    }
    assert_eq!(f(oracle, "mean_wrong_servers"), 0.0);
    assert_eq!(f(oracle, "abandonment_rate"), 0.0);
    let lexical = rows.iter().find(|r| r["backend"] == "lexical").unwrap();
    // Each layer can only lose what the one above found.
    assert!(f(lexical, "server_recall") >= f(lexical, "category_recall"));
    assert!(f(lexical, "category_recall") >= f(lexical, "gold_revealed_rate"));
    assert!(f(lexical, "server_recall") < 1.0 && f(lexical, "mean_wrong_servers") > 0.0);
    assert!(f(lexical, "mean_peak_tokens") > f(lexical, "mean_tokens_upfront"));
}

/// The per-function token assembly equals encoding the whole `tools` array, on the bundled catalogs'
/// functions in many seeded subsets and orders, and on functions whose edges force the slow path.
#[test]
fn assembled_token_counts_equal_whole_array_counts() {
    use toolpick::protocol::FunctionDef;
    use toolpick::tokens::{FunctionTokens, count_functions};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("registries");
    let mut all: Vec<FunctionDef> = Vec::new();
    for name in ["workspace", "workspace-realistic-bad"] {
        let c = load_catalog(&root.join(name)).unwrap();
        all.extend(
            FlatLayout::new(&c, Arc::new(Executor::new(&c).unwrap())).functions().iter().cloned(),
        );
    }
    // Edges the assembly cannot rely on: trailing whitespace, non-ASCII before the braces, digits.
    let odd = |name: &str, description: &str, parameters: Value| FunctionDef {
        name: name.into(),
        description: description.into(),
        parameters,
    };
    all.push(odd("ends_in_space", "Trailing space ", json!({"type": "object", "properties": {"a": {"type": "string", "description": "The value "}}})));
    all.push(odd("ends_in_accent", "Café", json!({"type": "object", "properties": {"b": {"type": "string", "description": "naïve é"}}})));
    all.push(odd(
        "ends_in_digits",
        "Version 2",
        json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 100}}}),
    ));
    all.push(odd("empty_schema", "", json!({})));
    assert!(all.len() > 40, "the bundled catalogs offer {} functions", all.len());
    let tokens = FunctionTokens::default();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    assert_eq!(tokens.count(&[]), count_functions(&[]));
    for round in 0..300 {
        let n = 1 + (next() as usize) % all.len().min(60);
        let subset: Vec<FunctionDef> =
            (0..n).map(|_| all[(next() as usize) % all.len()].clone()).collect();
        assert_eq!(tokens.count(&subset), count_functions(&subset), "round {round}: {n} functions");
    }
    assert_eq!(tokens.count(&all), count_functions(&all));
}

#[test]
fn unknown_or_missing_servers_are_navigation_errors_that_list_the_servers() {
    let (_t, c) = catalog();
    let hosted = progressive(&c, DiscoveryRule::default());
    let oss = ProgressiveLayout::new_oss(c.clone(), Arc::new(Executor::new(&c).unwrap()));
    // The small catalog's files are mail.json and weather.json, loaded in file-name order.
    let unknown = "Unknown server 'nope'. Available servers: mail, weather";
    let empty = "server_names is empty. Available servers: mail, weather";
    let cases = [
        (
            &hosted,
            "discover_server_categories_or_actions",
            json!({"user_query": "x", "server_names": ["weather", "nope"]}),
            unknown,
        ),
        (
            &hosted,
            "discover_server_categories_or_actions",
            json!({"user_query": "x", "server_names": []}),
            empty,
        ),
        (
            &oss,
            "discover_server_actions",
            json!({"user_query": "x", "server_names": ["nope"]}),
            unknown,
        ),
        (&oss, "discover_server_actions", json!({"user_query": "x", "server_names": []}), empty),
        (
            &hosted,
            "search_documentation",
            json!({"query": "forecast", "server_name": "nope"}),
            unknown,
        ),
        (
            &hosted,
            "handle_auth_failure",
            json!({"server_name": "nope", "intention": "get_auth_url"}),
            unknown,
        ),
        (
            &oss,
            "get_action_details",
            json!({"server_name": "nope", "action_name": "get_forecast"}),
            unknown,
        ),
    ];
    for (layout, tool, args, message) in cases {
        let out = layout.call(&call(tool, args.clone()), 1);
        assert_eq!(out.record.status, CallStatus::NavigationError, "{tool} {args}");
        let content: Value = serde_json::from_str(&out.content).unwrap();
        assert_eq!(content, json!({"error": message}), "{tool} {args}");
    }
}
