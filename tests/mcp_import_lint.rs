//! `lint` finds nothing `mcp import` caused: every reference server the `mcp-npm` and `mcp-pypi` tiers
//! install (tests/common/tiers.rs), and a fixture server whose tools have bad schemas, colliding names
//! and a hint of the wrong type (`tests/fixtures/misbehaving_mcp_server.py bad-tools`), imported and
//! linted. What the importer causes: a contradiction between hints the server did not send both of, a
//! tool without annotations that the server sent hints for, two tools with one name, a server or
//! category description (the importer writes those) without content words — and a catalog that does
//! not load or a `lint` that blocks. What the servers' own texts earn (short descriptions, undocumented
//! parameters) is theirs, and not counted.

mod common;
use common::tiers::{self, Tier};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn toolpick(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolpick")).args(args).output().expect("run toolpick")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn import(out: &Path, extra: &[&str], server: &[&str]) -> Output {
    let mut args = vec!["mcp", "import", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(server);
    toolpick(&args)
}

/// The findings of `lint` on `catalog` that the importer caused, as readable lines; and lint's exit.
fn importer_findings(catalog: &Path) -> (Vec<String>, Option<i32>) {
    let lint = toolpick(&["lint", catalog.to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_slice(&lint.stdout)
        .unwrap_or_else(|e| panic!("lint output is not JSON ({e}): {}", text(&lint)));
    let meta: Value =
        serde_json::from_slice(&std::fs::read(catalog.join("catalog.json")).unwrap()).unwrap();
    let sent = |tool: &str| meta["mcp"]["tools"][tool]["annotations"].clone();
    let mut out = Vec::new();
    for f in report["findings"].as_array().unwrap() {
        let (rule, tool) = (f["name"].as_str().unwrap(), f["tool"].as_str().unwrap());
        let caused = match rule {
            "contradictory-annotations" => {
                let a = sent(tool);
                !(a["readOnlyHint"] == true && a["destructiveHint"] == true)
            }
            "missing-annotations" => {
                let a = sent(tool);
                ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
                    .iter()
                    .any(|h| a[h].is_boolean())
            }
            "unique-name" => true,
            "description-without-content-words" => {
                tool.starts_with("server:") || tool.starts_with("category:")
            }
            _ => f["severity"] == "block",
        };
        if caused {
            out.push(format!("{rule} {tool}: {}", f["message"]));
        }
    }
    (out, lint.status.code())
}

fn assert_lint_clean(catalog: &Path, what: &str) {
    let (caused, code) = importer_findings(catalog);
    assert_eq!(caused, Vec::<String>::new(), "{what}: lint findings the importer caused");
    assert_eq!(code, Some(0), "{what}: lint blocked");
}

#[test]
fn lint_finds_nothing_the_importer_caused_on_fresh_imports_of_the_reference_servers() {
    if !tiers::ready(Tier::McpNpm) || !tiers::ready(Tier::McpPypi) {
        return;
    }
    let servers = tiers::installed(Tier::McpNpm);
    let tmp = tempfile::tempdir().unwrap();
    let npm = |s: &str| {
        servers
            .join(format!("node_modules/@modelcontextprotocol/server-{s}/dist/index.js"))
            .display()
            .to_string()
    };
    let venv = |s: &str| servers.join("venv/bin").join(s).display().to_string();
    let repo = tmp.path().join("repo");
    let init = Command::new("git").args(["init", "-q"]).arg(&repo).status().unwrap();
    assert!(init.success());
    let memory = format!("MEMORY_FILE_PATH={}", tmp.path().join("memory.jsonl").display());
    let cases: Vec<(&str, Vec<String>, Vec<String>)> = vec![
        (
            "everything",
            vec!["--capabilities".into(), "sampling,elicitation".into()],
            vec!["node".into(), npm("everything")],
        ),
        ("filesystem", vec![], vec!["node".into(), npm("filesystem"), "{sandbox}".into()]),
        ("memory", vec!["--env".into(), memory], vec!["node".into(), npm("memory")]),
        ("sequential-thinking", vec![], vec!["node".into(), npm("sequential-thinking")]),
        ("time", vec![], vec![venv("mcp-server-time"), "--local-timezone".into(), "UTC".into()]),
        ("git", vec![], vec![venv("mcp-server-git"), "-r".into(), repo.display().to_string()]),
    ];
    for (name, extra, server) in &cases {
        let out = tmp.path().join(name);
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let server: Vec<&str> = server.iter().map(String::as_str).collect();
        let o = import(&out, &extra, &server);
        assert!(o.status.success(), "{name}: {}", text(&o));
        assert_lint_clean(&out, name);
        // The server description is the server's own or written from its tools, and says which.
        let meta: Value =
            serde_json::from_slice(&std::fs::read(out.join("catalog.json")).unwrap()).unwrap();
        let source = meta["mcp"]["serverDescriptionSource"].as_str().unwrap_or_default();
        assert!(["server", "generated"].contains(&source), "{name}: {source}");
    }
}

#[test]
fn a_server_with_bad_schemas_and_colliding_names_imports_its_good_tools_with_defect_rows_and_lints_clean()
 {
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let script = format!("{REPO}/tests/fixtures/misbehaving_mcp_server.py");
    let server = ["python3", script.as_str(), "bad-tools", pids.to_str().unwrap()];

    // --strict refuses, naming a tool, and writes nothing.
    let strict = tmp.path().join("strict");
    let o = import(&strict, &["--strict"], &server);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--strict"), "{}", text(&o));
    assert!(!strict.exists());

    let out = tmp.path().join("notes");
    let o = import(&out, &["--server-description", "Keeps a notebook of titled notes."], &server);
    assert!(o.status.success(), "{}", text(&o));
    let meta: Value =
        serde_json::from_slice(&std::fs::read(out.join("catalog.json")).unwrap()).unwrap();
    let defects = meta["mcp"]["defects"].as_array().unwrap();
    let rows = |action: &str| -> Vec<&str> {
        defects
            .iter()
            .filter(|d| d["action"] == action)
            .map(|d| d["tool"].as_str().unwrap())
            .collect()
    };
    assert_eq!(rows("skipped"), ["array_input", "bad_output", "broken_schema", "missing_required"]);
    // `note_write` is its own function name and keeps it; `note.write` is renamed; of the two names
    // with no ASCII letter (same length, so the same function name), the second is renamed.
    assert_eq!(rows("renamed"), ["note.write", "счётчик"]);
    assert_eq!(rows("repaired"), ["счётчик"]);
    // Each defect row is printed too.
    let stdout = String::from_utf8_lossy(&o.stdout);
    for d in defects {
        assert!(stdout.contains(d["tool"].as_str().unwrap()), "{stdout}");
    }
    let catalog = toolpick::catalog::load_catalog(&out).unwrap();
    assert_eq!(catalog.tool_count(), 5);
    assert_eq!(meta["mcp"]["serverDescriptionSource"], "flag");
    assert_eq!(catalog.servers[0].description, "Keeps a notebook of titled notes.");
    // read_note sent readOnlyHint only: not destructive, and not written as if it had said so.
    let read = catalog.tools().find(|t| t.tool.name == "read_note").unwrap();
    assert!(read.tool.annotations.read_only_hint && !read.tool.annotations.destructive_hint);
    assert_lint_clean(&out, "bad-tools");
}
