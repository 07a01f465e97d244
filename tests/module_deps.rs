//! The module dependency rule, checked from the sources (`use crate::…` and `crate::…` paths, comments
//! skipped): every top-level module of `src/` sits in [`LAYERS`] with the modules it may import, the
//! table has no cycle (so neither has the code), and the readers of trial records (`score`, `report`,
//! `compare`) may import neither the modules that produce them (`run`, `agent`, `layout`, `exec`) nor
//! one another upwards. Data flows one way: catalog + dataset → layout → agent → run → trial records →
//! score → report → compare → gate; `record` is the floor both sides stand on.
//!
//! The reader side is layered too: `analysis` computes every figure of a run once; `report`'s renderers
//! (every file of `src/report/` but `mod.rs` and `scan.rs`, the pipeline that reads the trials and calls the analysis)
//! may only *name* analysis types and constants, never call analysis functions; `compare` and `gate`
//! read analyses; nothing below imports what is above it.
//!
//! A new import that the table does not allow fails with the file and the path; widening the table is
//! a design decision to make in review, not a way to make this test pass.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const READERS: &[&str] = &["score", "analysis", "report", "compare", "gate"];
const PRODUCERS: &[&str] = &["run", "agent", "layout", "exec", "mcp", "judge"];

/// Each top-level module and the modules it may import, from the ground floor up.
const LAYERS: &[(&str, &[&str])] = &[
    ("allocator", &[]),
    ("error", &[]),
    ("text", &[]),
    ("crashpoint", &[]),
    ("files", &[]),
    ("redact", &[]),
    // The one channel for lines a person reads: every module may say something through it.
    ("messages", &["redact"]),
    // The embedded suite, written out into a cache directory on first use.
    ("bundle", &["files", "messages"]),
    // Flag and key checks show a rejected URL with its credentials redacted and refuse keys given as
    // variable names: they need the redactor's URL display and key test.
    ("rules", &["redact"]),
    ("protocol", &[]),
    ("tokens", &["protocol"]),
    ("catalog", &["error", "text", "protocol"]),
    ("dataset", &["catalog", "error", "files", "text"]),
    ("lint", &["catalog", "text"]),
    ("record", &["catalog", "dataset", "protocol", "error", "crashpoint", "files", "messages"]),
    // `text`: the one cut for every echo of a call in an error (`text::echo`).
    ("exec", &["catalog", "record", "text"]),
    ("score", &["record", "dataset", "text"]),
    ("layout", &["catalog", "record", "exec", "protocol", "text", "error"]),
    ("agent", &["layout", "record", "dataset", "protocol", "text", "error", "redact", "rules"]),
    (
        "judge",
        &["agent", "text", "score", "record", "dataset", "protocol", "error", "redact", "rules"],
    ),
    ("analysis", &["score", "record", "catalog", "dataset", "error", "files"]),
    (
        "report",
        &["analysis", "score", "record", "protocol", "error", "crashpoint", "files", "messages"],
    ),
    ("compare", &["analysis", "report", "score", "record"]),
    ("gate", &["analysis", "compare"]),
    // `text`: a served error quotes a call cut as every echo is (`text::capped`).
    ("mcp", &["catalog", "dataset", "record", "protocol", "error", "files", "messages", "text"]),
    (
        "run",
        &[
            "agent",
            "judge",
            "text",
            "layout",
            "exec",
            "mcp",
            "score",
            "record",
            "catalog",
            "dataset",
            "lint",
            "protocol",
            "tokens",
            "error",
            "redact",
            "rules",
            "crashpoint",
            "files",
            "messages",
            "bundle",
        ],
    ),
    ("mock", &["agent", "layout", "dataset", "protocol", "redact"]),
    // `record`: the pipeline (`cli/pipeline.rs`) holds the run directory's lock
    // (`record::guard::DirLock`) from the runner's last record to the gates.
    (
        "cli",
        &[
            "run", "analysis", "report", "compare", "gate", "mock", "mcp", "judge", "agent",
            "layout", "catalog", "dataset", "lint", "error", "redact", "rules", "files",
            "messages", "record", "bundle",
        ],
    ),
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
    let code: String =
        text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
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
        let path: String =
            rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
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

/// The top-level modules of `src/` and the source files of each (`lib.rs` and `main.rs` are the roots,
/// not modules).
fn modules(src: &Path) -> BTreeMap<String, Vec<std::path::PathBuf>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            let mut files = Vec::new();
            rust_files(&p, &mut files);
            out.insert(name, files);
        } else if p.extension().is_some_and(|x| x == "rs") && name != "lib" && name != "main" {
            out.insert(name, vec![p]);
        }
    }
    out
}

/// `(module, file under src/, imported path)` for every import of another top-level module.
fn imports(src: &Path) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (module, files) in modules(src) {
        for f in files {
            let rel = f.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
            for path in crate_paths(&std::fs::read_to_string(&f).unwrap()) {
                let target = path.split("::").next().unwrap_or_default().to_string();
                if target != module {
                    out.push((module.clone(), rel.clone(), path));
                }
            }
        }
    }
    out
}

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_is_placed_in_the_layers() {
    let placed: BTreeSet<&str> = LAYERS.iter().map(|(m, _)| *m).collect();
    let present: BTreeSet<String> = modules(&src()).into_keys().collect();
    let unplaced: Vec<&String> = present.iter().filter(|m| !placed.contains(m.as_str())).collect();
    assert!(
        unplaced.is_empty(),
        "modules missing from LAYERS in tests/module_deps.rs (place each where it belongs): {unplaced:?}"
    );
    let gone: Vec<&&str> = placed.iter().filter(|m| !present.contains(**m)).collect();
    assert!(gone.is_empty(), "LAYERS names modules that no longer exist: {gone:?}");
}

#[test]
fn every_import_is_allowed_by_the_layers() {
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let bad: Vec<String> = imports(&src())
        .into_iter()
        .filter(|(m, _, path)| {
            let target = path.split("::").next().unwrap_or_default();
            allowed.get(m.as_str()).is_some_and(|ok| !ok.contains(&target))
        })
        .map(|(_, file, path)| format!("src/{file} imports crate::{path}"))
        .collect();
    assert!(
        bad.is_empty(),
        "imports that run against the layering (move what is needed down, e.g. into `record`, instead):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_layers_have_no_cycle() {
    // Kahn's algorithm: repeatedly remove a module all of whose allowed imports are removed already.
    let mut left: BTreeMap<&str, BTreeSet<&str>> =
        LAYERS.iter().map(|(m, deps)| (*m, deps.iter().copied().collect())).collect();
    while let Some(free) = left.iter().find(|(_, deps)| deps.is_empty()).map(|(m, _)| *m) {
        left.remove(free);
        for deps in left.values_mut() {
            deps.remove(free);
        }
    }
    assert!(left.is_empty(), "LAYERS allows a cycle among {:?}", left.keys().collect::<Vec<_>>());
}

#[test]
fn readers_of_trial_records_may_not_import_their_producers() {
    for (m, deps) in LAYERS {
        if READERS.contains(m) {
            let bad: Vec<&&str> = deps.iter().filter(|d| PRODUCERS.contains(d)).collect();
            assert!(
                bad.is_empty(),
                "{m} may not import {bad:?}: scoring and reports are pure functions of trial records"
            );
        }
    }
    let producers_of_records_below_readers = LAYERS.iter().find(|(m, _)| *m == "record").unwrap().1;
    for p in PRODUCERS {
        assert!(!producers_of_records_below_readers.contains(p), "record may not import {p}");
    }
}

#[test]
fn the_table_is_not_wider_than_the_code() {
    // An allowed edge nobody uses is a door left open: keep the table to what the code does.
    let used: BTreeSet<(String, String)> = imports(&src())
        .into_iter()
        .map(|(m, _, p)| (m, p.split("::").next().unwrap_or_default().to_string()))
        .collect();
    let unused: Vec<String> = LAYERS
        .iter()
        .flat_map(|(m, deps)| deps.iter().map(move |d| (m.to_string(), d.to_string())))
        .filter(|e| !used.contains(e))
        .map(|(m, d)| format!("{m} → {d}"))
        .collect();
    assert!(unused.is_empty(), "LAYERS allows imports no code makes; remove them: {unused:?}");
}

#[test]
fn the_path_reader_sees_plain_grouped_and_nested_imports() {
    let text = "use crate::run::Trial;\nuse crate::{agent::StopReason, layout::{self, CallRecord}};\n// use crate::exec::Hidden;\nfn f() { crate::layout::flat::stable_hash(b\"\"); crate::agent::StopReason::Answered; }";
    let got = crate_paths(text);
    let want: BTreeSet<String> =
        ["run::Trial", "agent::StopReason", "layout", "layout::flat::stable_hash"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    assert_eq!(got, want);
}

/// `crate::analysis` paths named in a source text (comments skipped), grouped imports expanded at any
/// depth (`crate::analysis::cells::{CellSummary, KindRates}` → both), and every other way of reaching
/// the module: `use crate::analysis;`, `use crate::analysis as a;` come back as the bare `analysis`.
fn analysis_paths(text: &str) -> Vec<String> {
    fn expand(prefix: &str, rest: &str, out: &mut Vec<String>) -> usize {
        // Returns how many bytes of `rest` the path took.
        let path: String =
            rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        let mut used = path.len();
        let full = format!("{prefix}{path}");
        if let Some(group) = rest[used..].strip_prefix('{') {
            used += 1;
            let mut depth = 0usize;
            let mut start = 0usize;
            let bytes = group.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'{' => depth += 1,
                    b'}' if depth == 0 => {
                        let item = group[start..i].trim();
                        if !item.is_empty() {
                            expand(&full, item, out);
                        }
                        used += i + 1;
                        return used;
                    }
                    b'}' => depth -= 1,
                    b',' if depth == 0 => {
                        let item = group[start..i].trim();
                        if !item.is_empty() {
                            expand(&full, item, out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
                i += 1;
            }
            return used + group.len();
        }
        out.push(full.trim_end_matches(':').to_string());
        used
    }
    let code: String =
        text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::analysis") {
        rest = &rest[i + "crate::analysis".len()..];
        match rest.strip_prefix("::") {
            Some(after) => {
                let used = expand("analysis::", after, &mut out);
                rest = &after[used.min(after.len())..];
            }
            None => out.push("analysis".to_string()),
        }
    }
    out
}

/// A path a renderer may name: it ends at a type or a constant (its last segment, and only that one,
/// starts upper-case), so it names data, not a function or a module to call through.
fn names_only_data(path: &str) -> bool {
    let segs: Vec<&str> = path.split("::").map(str::trim).collect();
    let first_upper = segs.iter().position(|s| s.starts_with(|c: char| c.is_uppercase()));
    first_upper == Some(segs.len() - 1)
}

#[test]
fn renderers_only_read_the_analysis() {
    let mut files = Vec::new();
    rust_files(&src().join("report"), &mut files);
    let mut bad = Vec::new();
    for f in files.iter() {
        let rel = f.strip_prefix(src()).unwrap().to_string_lossy().replace('\\', "/");
        // The pipeline: it reads the trials (scan.rs) and calls the analysis (mod.rs).
        if ["report/mod.rs", "report/scan.rs"].contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for p in analysis_paths(&text).into_iter().filter(|p| !names_only_data(p)) {
            bad.push(format!("src/{rel} names crate::{p}"));
        }
        // The pipeline's own imports of analysis modules are reachable from a renderer as `super::…`.
        if text.contains("super::rows::") || text.contains("super::analyze") {
            bad.push(format!("src/{rel} reaches the analysis through the pipeline (`super::`)"));
        }
    }
    assert!(
        bad.is_empty(),
        "renderers compute nothing: they may name analysis types and constants, never call analysis functions (compute it in `crate::analysis` and read it from `RunAnalysis`):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_analysis_rule_sees_calls_modules_and_groups() {
    let text = "use crate::analysis::cells::{CellSummary, KindRates};\nuse crate::analysis::confusion;\n// crate::analysis::hidden::f()\nfn f() { crate::analysis::ablation::effects(a, b); let x: crate::analysis::tools::ToolRow; crate::analysis::BOOTSTRAP_RESAMPLES; crate::analysis::cells::CellSummary::key(c); }\nuse crate::analysis as a;";
    let paths = analysis_paths(text);
    let want = [
        "analysis::cells::CellSummary",
        "analysis::cells::KindRates",
        "analysis::confusion",
        "analysis::ablation::effects",
        "analysis::tools::ToolRow",
        "analysis::BOOTSTRAP_RESAMPLES",
        "analysis::cells::CellSummary::key",
        "analysis",
    ];
    assert_eq!(paths, want);
    let allowed: Vec<bool> = paths.iter().map(|p| names_only_data(p)).collect();
    assert_eq!(allowed, [true, true, false, false, true, true, false, false]);
}

#[test]
fn the_analysis_sits_below_every_reader_that_reads_it() {
    // Analysis computes; report renders, compare pairs runs, gate judges: none of them may be below it.
    let analysis = LAYERS.iter().find(|(m, _)| *m == "analysis").expect("analysis is a layer").1;
    for above in ["report", "compare", "gate", "cli"] {
        assert!(!analysis.contains(&above), "analysis may not import {above}");
    }
    let gate = LAYERS.iter().find(|(m, _)| *m == "gate").unwrap().1;
    assert!(!gate.contains(&"report"), "gate reads analyses and comparisons, not report internals");
}
