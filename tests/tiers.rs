//! The test tiers stay as `tests/common/tiers.rs` documents them: each tier lists exactly the test
//! binaries that ask for it, and no test installs anything (installs belong to
//! `scripts/install-test-deps.sh`, which `scripts/test.sh` runs before the tests).

mod common;
use common::tiers::Tier;
use std::collections::BTreeSet;

/// Every `tests/<name>.rs` with its text.
fn test_sources() -> Vec<(String, String)> {
    let dir = common::repo().join("tests");
    let mut out = vec![];
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    assert!(out.len() > 30, "{} test files in {}", out.len(), dir.display());
    out
}

#[test]
fn each_tier_lists_exactly_the_test_binaries_that_ask_for_it() {
    let sources = test_sources();
    for tier in Tier::ALL {
        let asked = format!("Tier::{tier:?}");
        let asking: BTreeSet<&str> = sources
            .iter()
            .filter(|(_, text)| text.contains(&asked))
            .map(|(n, _)| n.as_str())
            .filter(|n| *n != "tiers")
            .collect();
        let listed: BTreeSet<&str> = tier.binaries().iter().copied().collect();
        assert_eq!(asking, listed, "the `{}` tier's binaries", tier.name());
    }
}

#[test]
fn no_test_installs_anything() {
    // What an install inside a test looked like before the tiers: the installers, package managers.
    let installs = [
        "install-mcp-servers.sh",
        "install-parity-venv.sh",
        "install-test-deps.sh\")",
        "apt-get",
        "pip install",
        "npm install",
        "\"pip\"",
        "\"npm\"",
    ];
    // docs_flags names the installers' and pip's flags as documentation it checks, never runs them.
    let documents_installers = ["tiers", "docs_flags"];
    for (name, text) in
        test_sources().iter().filter(|(n, _)| !documents_installers.contains(&n.as_str()))
    {
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for install in installs {
                assert!(!line.contains(install), "tests/{name}.rs runs `{install}`: {line}");
            }
        }
    }
    // And the one script that installs knows every tier.
    let script =
        std::fs::read_to_string(common::repo().join("scripts/install-test-deps.sh")).unwrap();
    for tier in Tier::ALL {
        assert!(
            script.contains(&format!("{})", tier.name())),
            "scripts/install-test-deps.sh does not install `{}`",
            tier.name()
        );
    }
}
