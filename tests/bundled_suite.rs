//! The bundled starter suite is product: check the properties docs/concepts.md promises
//! ("The bundled suite").

mod common;
use common::*;
use std::collections::{HashMap, HashSet};
use toolpick::catalog::load_catalog;
use toolpick::catalog::variant::name_words;
use toolpick::dataset::{Kind, check_against, load_dataset};
use toolpick::text::Analyzer;

#[test]
fn workspace_catalog_size_and_design_rules() {
    let c = load_catalog(&repo().join("registries/workspace")).unwrap();
    assert!(c.servers.len() >= 8, "servers: {}", c.servers.len());
    assert!(c.tool_count() >= 80, "tools: {}", c.tool_count());
    let categories: usize = c.servers.iter().map(|s| s.categories.len()).sum();
    assert!(categories >= 20, "categories: {categories}");
    let mut names = HashSet::new();
    for t in c.tools() {
        let tool = t.tool;
        assert!(names.insert(tool.name.clone()), "tool name {} is not unique", tool.name);
        assert!(tool.description.len() < 1024, "{} description too long", tool.id);
        assert!(tool.description.contains("Use when"), "{} lacks 'Use when'", tool.id);
        assert!(name_words(&tool.name).len() >= 2, "{} is not verb_noun", tool.id);
        for (p, schema) in tool.properties() {
            assert!(schema.get("description").is_some(), "{}.{p} has no description", tool.id);
            assert!(
                schema.get("type").is_some() || schema.get("enum").is_some(),
                "{}.{p} is untyped",
                tool.id
            );
        }
        let verb = name_words(&tool.name)[0].clone();
        let a = &tool.annotations;
        if ["get", "list", "search", "find", "lookup", "check"].contains(&verb.as_str()) {
            assert!(a.read_only_hint && !a.destructive_hint, "{} should be read-only", tool.id);
        }
        if ["delete", "cancel", "trash", "void", "refund"].contains(&verb.as_str()) {
            assert!(a.destructive_hint && !a.read_only_hint, "{} should be destructive", tool.id);
        }
    }
}

#[test]
fn starter_dataset_mix_and_paraphrase_rule() {
    let c = load_catalog(&repo().join("registries/workspace")).unwrap();
    let d = load_dataset(&repo().join("datasets/starter.jsonl")).unwrap();
    check_against(&d, &c).unwrap();
    let mut kinds: HashMap<Kind, usize> = HashMap::new();
    for t in &d.tasks {
        *kinds.entry(t.kind).or_default() += 1;
    }
    assert!(d.tasks.len() >= 300, "{}", d.tasks.len());
    assert!(kinds[&Kind::Refuse] >= 30, "{kinds:?}");
    let risks: HashSet<_> = d.tasks.iter().filter_map(|t| t.risk).collect();
    assert_eq!(risks.len(), 4, "privacy leak, property damage, physical injury, offensive content");
    let poisoned: Vec<_> = d.tasks.iter().filter_map(|t| t.poison.as_ref()).collect();
    assert!(poisoned.len() >= 20, "poisoned: {}", poisoned.len());
    let styles: HashSet<&str> = poisoned.iter().map(|p| p.style.as_str()).collect();
    assert!(styles.len() >= 3, "{styles:?}");
    assert!(kinds[&Kind::Single] >= 90, "{kinds:?}");
    assert!(kinds[&Kind::Multi] >= 20, "{kinds:?}");
    assert!(kinds[&Kind::Parallel] >= 10, "{kinds:?}");
    assert!(kinds[&Kind::Abstain] >= 15, "{kinds:?}");
    let tagged = |tag: &str| d.tasks.iter().filter(|t| t.tags.iter().any(|x| x == tag)).count();
    assert!(tagged("near-miss") >= 20, "near-miss: {}", tagged("near-miss"));
    assert!(
        tagged("destructive-near-miss") >= 20,
        "destructive near-miss: {}",
        tagged("destructive-near-miss")
    );
    let paraphrase = tagged("paraphrase");
    assert!(
        paraphrase * 100 >= d.tasks.len() * 40,
        "paraphrase share {paraphrase}/{}",
        d.tasks.len()
    );

    // A paraphrase query shares no (stemmed) word with the names of the tools it expects.
    let a = Analyzer::default();
    for t in d.tasks.iter().filter(|t| t.tags.iter().any(|x| x == "paraphrase")) {
        let query: HashSet<String> = a.terms(&t.query).into_iter().collect();
        for e in &t.expected {
            let name = e.tool.rsplit('/').next().unwrap();
            for w in a.terms(name) {
                assert!(
                    !query.contains(&w),
                    "{}: paraphrase query shares `{w}` with {name}: {}",
                    t.id,
                    t.query
                );
            }
        }
    }
    // Task ids are unique and every tool is exercised by some task.
    let used: HashSet<&str> =
        d.tasks.iter().flat_map(|t| t.expected.iter().map(|e| e.tool.as_str())).collect();
    let unused: Vec<String> =
        c.tools().map(|t| t.tool.id.clone()).filter(|id| !used.contains(id.as_str())).collect();
    assert!(unused.len() * 10 <= c.tool_count(), "too many tools no task uses: {unused:?}");
}
