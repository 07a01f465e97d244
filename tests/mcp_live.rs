//! `toolpick mcp import` against the real reference servers (pinned npm packages, installed once by
//! `scripts/install-mcp-servers.sh` into target/mcp-servers), over stdio.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The folder holding the installed servers (installing them the first time).
fn servers() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Command::new("bash").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/install-mcp-servers.sh")).output().expect("run the installer");
        assert!(out.status.success(), "installing the MCP servers failed: {}", String::from_utf8_lossy(&out.stderr));
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

fn entry(server: &str) -> String {
    servers().join(format!("node_modules/@modelcontextprotocol/server-{server}/dist/index.js")).display().to_string()
}

fn toolpick(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolpick")).args(args).output().expect("run toolpick")
}

fn import(out: &Path, extra: &[&str], server: &[&str]) -> std::process::Output {
    let mut args = vec!["mcp", "import", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(server);
    toolpick(&args)
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())).collect();
    out.sort();
    out
}

fn tool_count(dir: &Path) -> usize {
    toolpick::catalog::load_catalog(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).tool_count()
}

#[test]
fn server_everything_imports_the_same_files_twice_and_lists_more_tools_to_a_client_declaring_more() {
    let tmp = tempfile::tempdir().unwrap();
    let everything = entry("everything");
    let (a, b, c) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
    for dir in [&a, &b] {
        let out = import(dir, &[], &["node", &everything]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(files(&a), files(&b), "two imports of the same server differ");
    // The counts measured with this pinned version (../shared/notes/mcp-live.md §0): 13 tools to a
    // client declaring nothing, 16 with sampling and elicitation.
    assert_eq!(tool_count(&a), 13);
    let out = import(&c, &["--capabilities", "sampling,elicitation"], &["node", &everything]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tool_count(&c), 16);
    let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(c.join("catalog.json")).unwrap()).unwrap();
    assert_eq!(meta["mcp"]["serverInfo"]["name"], "mcp-servers/everything");
    assert_eq!(meta["mcp"]["clientCapabilities"], serde_json::json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}}));
    assert_eq!(meta["mcp"]["protocolVersion"], "2025-11-25");
    // Wire names with hyphens are valid function names: kept as they are.
    let catalog = toolpick::catalog::load_catalog(&c).unwrap();
    assert!(catalog.tools().any(|t| t.tool.name == "trigger-sampling-request"));
    // The linter reads it like any catalog.
    let lint = toolpick(&["lint", a.to_str().unwrap(), "--format", "json"]);
    assert!(serde_json::from_slice::<serde_json::Value>(&lint.stdout).is_ok(), "lint: {}", String::from_utf8_lossy(&lint.stderr));
}

#[test]
fn server_filesystem_keeps_annotations_as_sent_and_makes_missing_hints_the_unsafe_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let allowed = tmp.path().join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let out_dir = tmp.path().join("catalog");
    let out = import(&out_dir, &["--name", "files"], &["node", &entry("filesystem"), allowed.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tool_count(&out_dir), 14);
    let catalog = toolpick::catalog::load_catalog(&out_dir).unwrap();
    let read = catalog.tools().find(|t| t.tool.name == "read_text_file").expect("read_text_file");
    // It sends readOnlyHint and openWorldHint only: the other two take the specification's defaults.
    let a = &read.tool.annotations;
    assert!(a.read_only_hint && !a.open_world_hint && a.destructive_hint && !a.idempotent_hint, "{a:?}");
    assert_eq!(read.category.name, "files_read");
    let write = catalog.tools().find(|t| t.tool.name == "write_file").expect("write_file");
    assert!(write.tool.annotations.destructive_hint && !write.tool.annotations.read_only_hint);
    let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(out_dir.join("catalog.json")).unwrap()).unwrap();
    assert_eq!(meta["mcp"]["tools"]["files/files_read/read_text_file"]["annotations"], serde_json::json!({"readOnlyHint": true, "openWorldHint": false}));
}

#[test]
fn server_memory_imports_with_its_store_where_it_is_told() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("memory.jsonl");
    let out_dir = tmp.path().join("catalog");
    let env = format!("MEMORY_FILE_PATH={}", store.display());
    let out = import(&out_dir, &["--env", &env], &["node", &entry("memory")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tool_count(&out_dir), 9);
    let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(out_dir.join("catalog.json")).unwrap()).unwrap();
    // The variable's name is recorded, never its value.
    assert_eq!(meta["mcp"]["env"], serde_json::json!(["MEMORY_FILE_PATH"]));
    assert!(!String::from_utf8_lossy(&std::fs::read(out_dir.join("catalog.json")).unwrap()).contains(store.to_str().unwrap()));
}

#[test]
fn a_server_that_does_not_start_is_an_error_naming_it_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("catalog");
    let missing = tmp.path().join("no-such-server.js");
    let out = import(&out_dir, &[], &["node", missing.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`node`") && err.contains("stderr"), "{err}");
    assert!(!out_dir.exists(), "a failed import left files behind");
    let out = import(&out_dir, &[], &["no-such-program-toolpick"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot start the MCP server `no-such-program-toolpick`"));
}
