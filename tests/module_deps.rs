//! The dependency rule of the design (issue 14): the modules that read trial records — `score`,
//! `report`, `compare` — never import the modules that produce them — `run`, `agent`, `layout`,
//! `exec`. Checked by reading the sources: every `crate::…` path in those modules (plain or inside a
//! grouped `use crate::{…}`) is listed, and any import of a producing module that is not in
//! [`KNOWN`] fails the test.
//!
//! [`KNOWN`] is a ratchet: the imports that still break the rule today, to be removed as the trial
//! record moves to a module of its own. A new violation fails; removing one only asks to shorten the
//! list (the test says which entries are gone), so the list can only shrink.

use std::collections::BTreeSet;
use std::path::Path;

const READERS: &[&str] = &["score", "report", "compare"];
const PRODUCERS: &[&str] = &["run", "agent", "layout", "exec"];

/// `(file under src/, imported path)` pairs that break the rule today.
const KNOWN: &[(&str, &str)] = &[
    ("report/csv.rs", "run::Trial"),
    ("report/junit.rs", "run::Trial"),
    ("report/mod.rs", "run::Trial"),
    ("report/mod.rs", "run::guard::DirLock"),
    ("report/mod.rs", "run::guard::remove_stale"),
    ("report/mod.rs", "run::store::OrderCheck"),
    ("report/mod.rs", "run::store::compact"),
    ("report/mod.rs", "run::trial::parse_without_transcript"),
    ("report/parquet.rs", "run::Trial"),
    ("report/summary.rs", "run::Trial"),
    ("score/diagnostics.rs", "layout::progressive"),
    ("score/diagnostics.rs", "run::Trial"),
    ("score/metrics_bookkeeping.rs", "layout::record"),
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The paths a source text names under `crate::` (comments skipped), each cut after its first item
/// (`agent::StopReason::Answered` → `agent::StopReason`); a grouped import is expanded one level
/// (`use crate::{run::Trial, layout::{self, X}}` → `run::Trial`, `layout`).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find("};").or_else(|| group.find('}')).unwrap_or(group.len());
            let mut depth = 0;
            let mut item = String::new();
            for c in group[..end].chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(head(item.trim()));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            if !item.trim().is_empty() {
                out.insert(head(item.trim()));
            }
            continue;
        }
        let path: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        out.insert(head(path.trim_end_matches(':')));
    }
    out
}

/// A path up to its first item (the first segment starting upper-case, or a lower-case function after
/// a type), without a trailing group.
fn head(path: &str) -> String {
    let path = path.split("::{").next().unwrap_or(path).trim_end_matches("::*");
    let mut kept = Vec::new();
    for seg in path.split("::") {
        let seg = seg.trim();
        if seg.is_empty() {
            break;
        }
        kept.push(seg);
        if seg.starts_with(|c: char| c.is_uppercase()) {
            break;
        }
    }
    kept.join("::")
}

#[test]
fn readers_of_trial_records_do_not_import_their_producers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known: BTreeSet<(String, String)> = KNOWN.iter().map(|(f, p)| (f.to_string(), p.to_string())).collect();
    let mut found = BTreeSet::new();
    for reader in READERS {
        let mut files = Vec::new();
        rust_files(&src.join(reader), &mut files);
        assert!(!files.is_empty(), "src/{reader} has no sources");
        for f in files {
            let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            for path in crate_paths(&std::fs::read_to_string(&f).unwrap()) {
                if PRODUCERS.iter().any(|p| path == *p || path.starts_with(&format!("{p}::"))) {
                    found.insert((rel.clone(), path));
                }
            }
        }
    }
    let new: Vec<_> = found.difference(&known).collect();
    assert!(new.is_empty(), "modules that read trial records import modules that produce them (move what they need to the record's module instead): {new:?}");
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(gone.is_empty(), "these imports are gone: remove them from KNOWN in tests/module_deps.rs so they cannot come back: {gone:?}");
}

#[test]
fn the_path_reader_sees_plain_grouped_and_nested_imports() {
    let text = "use crate::run::Trial;\nuse crate::{agent::StopReason, layout::{self, CallRecord}};\n// use crate::exec::Hidden;\nfn f() { crate::layout::flat::stable_hash(b\"\"); crate::agent::StopReason::Answered; }";
    let got = crate_paths(text);
    let want: BTreeSet<String> = ["run::Trial", "agent::StopReason", "layout", "layout::flat::stable_hash"].iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want);
}
