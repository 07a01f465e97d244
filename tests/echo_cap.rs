//! An error never quotes a call back whole: for every layout and every way a call can go wrong that
//! names what the model sent (an unknown tool, server, category or action; a key given twice; an
//! unexpected parameter; a value of the wrong type or outside an enum; a merged tool's unknown
//! dispatch value), a call carrying a 100 000-character piece in that place gets an answer of a few
//! thousand characters that holds at most a cut prefix of it.

use serde_json::{Map, Value, json};
use std::sync::Arc;
use toolpick::catalog::variant::Variant;
use toolpick::catalog::{Catalog, load_catalog};
use toolpick::exec::Executor;
use toolpick::layout::{
    CallStatus, DiscoveryRule, FlatLayout, Layout, ProgressiveLayout, SearchLayout,
};
use toolpick::protocol::ToolCall;

const HUGE_LEN: usize = 100_000;

/// A piece no catalog holds, `HUGE_LEN` characters long, different per use.
fn huge(tag: &str) -> String {
    let mut s = format!("{tag}_");
    while s.len() < HUGE_LEN {
        s.push_str("qz");
    }
    s
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall { id: "c1".into(), name: name.into(), arguments: args.to_string() }
}

fn bundled() -> Catalog {
    load_catalog(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("registries/workspace"))
        .unwrap()
}

/// The answer quotes at most a cut prefix of `piece`, and stays short.
fn assert_cut(what: &str, content: &str, piece: &str) {
    assert!(!content.contains(piece), "{what}: the whole piece came back");
    assert!(content.len() < 6_000, "{what}: an answer of {} bytes", content.len());
}

/// A tool with a required parameter of each kind the validator rejects by value, from `catalog`: the
/// tool's flat name and its arguments with `piece` in the place of one argument at a time.
fn argument_cases(
    catalog: &Catalog,
    flat: &FlatLayout,
    piece: &str,
) -> Vec<(String, String, Value)> {
    let mut cases = Vec::new();
    for f in flat.functions() {
        let Some(props) = f.parameters["properties"].as_object() else { continue };
        let base: Map<String, Value> = props.iter().map(|(k, _)| (k.clone(), json!("x"))).collect();
        for (k, schema) in props {
            let bad = match schema["type"].as_str() {
                // A string where a number or boolean is wanted, an enum's non-member: quoted back.
                Some("integer" | "number" | "boolean") => json!(piece),
                Some("string") if schema.get("enum").is_some() => json!(piece),
                _ => continue,
            };
            let mut args = base.clone();
            args.insert(k.clone(), bad);
            cases.push((format!("{} {k}", f.name), f.name.clone(), Value::Object(args)));
        }
        // An unexpected parameter: its name is the piece.
        let mut args = base.clone();
        args.insert(piece.to_string(), json!(1));
        cases.push((format!("{} unexpected key", f.name), f.name.clone(), Value::Object(args)));
    }
    assert!(cases.len() > 20, "{} cases from {} tools", cases.len(), catalog.tools().count());
    cases
}

#[test]
fn flat_and_search_cut_every_echo() {
    let catalog = bundled();
    let exec = Arc::new(Executor::new(&catalog).unwrap());
    let flat = FlatLayout::new(&catalog, exec.clone());
    let piece = huge("name");
    let out = flat.call(&call(&piece, json!({})), 1);
    assert_eq!(out.record.status, CallStatus::Invented);
    assert_cut("flat unknown tool", &out.content, &piece);
    let search = SearchLayout::new(&catalog, exec);
    let out = search.call_in(&call(&piece, json!({})), 1, &[]);
    assert_cut("search unknown tool", &out.content, &piece);

    let piece = huge("value");
    let mut rejected = 0;
    for (what, name, args) in argument_cases(&catalog, &flat, &piece) {
        let out = flat.call(&call(&name, args), 1);
        if out.record.status == CallStatus::Rejected {
            rejected += 1;
        }
        assert_cut(&what, &out.content, &piece);
    }
    assert!(rejected > 20, "{rejected} rejected calls");
}

#[test]
fn a_merged_tools_unknown_dispatch_value_is_cut() {
    let catalog = Variant::parse("op:merge_siblings").unwrap().apply(&bundled()).unwrap();
    let flat = FlatLayout::new(&catalog, Arc::new(Executor::new(&catalog).unwrap()));
    let piece = huge("dispatch");
    let mut tried = 0;
    for f in flat.functions() {
        // The merged tools take an enum-valued dispatch parameter naming the original tool.
        let Some(props) = f.parameters["properties"].as_object() else { continue };
        for (k, schema) in props {
            if schema.get("enum").is_some() {
                let out = flat.call(&call(&f.name, json!({ k.as_str(): piece })), 1);
                assert_cut(&format!("{} {k}", f.name), &out.content, &piece);
                tried += 1;
            }
        }
    }
    assert!(tried > 0, "no merged tool in the variant");
}

#[test]
fn progressive_cuts_every_echo_of_a_name_a_key_and_a_value() {
    let catalog = bundled();
    let exec = Arc::new(Executor::new(&catalog).unwrap());
    for layout in [
        ProgressiveLayout::new(catalog.clone(), exec.clone(), DiscoveryRule::default()),
        ProgressiveLayout::new_oss(catalog.clone(), exec.clone()),
    ] {
        let names: Vec<String> = layout.functions().iter().map(|f| f.name.clone()).collect();
        let piece = huge("meta");
        let out = layout.call(&call(&piece, json!({})), 1);
        assert_cut("unknown meta-tool", &out.content, &piece);
        // Every meta-tool, with the piece in every string argument its schema names, and in a list
        // where it takes a list.
        for f in layout.functions() {
            let Some(props) = f.parameters["properties"].as_object() else { continue };
            for (k, schema) in props {
                let value = match schema["type"].as_str() {
                    Some("array") => json!([piece]),
                    _ => json!(piece),
                };
                let out = layout.call(&call(&f.name, json!({ k.as_str(): value })), 1);
                assert_cut(&format!("{} {k}", f.name), &out.content, &piece);
            }
        }
        // execute_action on a real action: a key given twice, and a bad value.
        let server = &catalog.servers[0];
        let category = &server.categories[0];
        let tool = &category.tools[0];
        let key = huge("key");
        let body = json!({ key.as_str(): 1 }).to_string();
        let execute = names.iter().find(|n| n.contains("execute")).expect("an execute meta-tool");
        let args = json!({"server_name": server.name, "category_name": category.name,
            "action_name": tool.name, "path_params": body, "body_schema": body});
        let out = layout.call(&call(execute, args), 1);
        assert_cut("a key given twice", &out.content, &key);
        let args = json!({"server_name": piece, "category_name": category.name,
            "action_name": tool.name, "body_schema": "{}"});
        let out = layout.call(&call(execute, args), 1);
        assert_cut("a server that does not own the category", &out.content, &piece);
    }
}
