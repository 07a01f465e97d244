//! `toolpick mcp import`: a live server's `tools/list`, written as a native catalog.
//!
//! The catalog has one server file and `catalog.json`, whose `mcp` object records where the tools came
//! from: the server's `serverInfo`, the protocol version and capabilities it negotiated, the client
//! capabilities declared (they change some servers' lists), each tool's name on the wire and its
//! annotations exactly as sent. Nothing in it depends on time or on the order the server listed its
//! tools in, so importing the same server twice gives byte-identical files.
//!
//! **Categories** (the progressive layouts' middle layer), by a fixed rule a mapping file can override:
//! 1. a tool named in the mapping file (`{"wire tool name": "category"}`) goes where it says;
//! 2. otherwise tools whose names share their first word (cut at `-`, `_` or `.`) with another tool
//!    form a category named after that word — unless every tool shares it (`git_*`), which says nothing;
//! 3. the rest are grouped by their annotations: `read` when the server marks them read-only, `write`
//!    otherwise (a missing hint counts as not read-only, as the specification's defaults have it).
//!
//! Category names are prefixed with the server's name, as they must be unique across a catalog.
//!
//! **Annotations** are hints from an untrusted server. The catalog states all four, with the
//! specification's defaults where a hint is missing (`readOnlyHint` false, `destructiveHint` true,
//! `idempotentHint` false, `openWorldHint` true), so a missing hint is read as the unsafe value;
//! `catalog.json` keeps what was actually sent.

use super::client::{Capabilities, ServerFacts};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// What to import and how.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The server's name in the catalog; default: from its `serverInfo.name`.
    pub name: Option<String>,
    /// Client capabilities declared while listing.
    pub capabilities: Capabilities,
    /// Tool (wire name) → category, overriding the rule.
    pub categories: BTreeMap<String, String>,
    /// The command line the server was started with, recorded in `catalog.json`.
    pub command: Vec<String>,
    /// Names (not values) of the environment variables given to the server.
    pub env_names: Vec<String>,
    /// Values of those variables that name `{sandbox}` or `{servers}` (templates, recorded so a live
    /// run can fill them in per trial; other values are never written).
    pub env_templates: BTreeMap<String, String>,
}

/// The files of an imported catalog, by file name.
pub struct ImportedCatalog {
    pub server: String,
    pub files: Vec<(String, Vec<u8>)>,
    pub tools: usize,
    pub categories: usize,
    /// Tools whose wire names are not valid function names, with the names they got.
    pub renamed: Vec<(String, String)>,
}

/// `s` as a catalog name: lower case, runs of other characters as `_`, starting with a letter, ≤ 64.
pub fn catalog_name(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let mut out = out.trim_end_matches('_').to_string();
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, "mcp_");
    }
    out.truncate(64);
    out.trim_end_matches('_').to_string()
}

/// A wire tool name usable as a function name (`^[a-zA-Z0-9_-]{1,64}$`): other characters become `_`.
fn function_name(wire: &str) -> String {
    let mut out: String = wire
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if out.is_empty() {
        out.push_str("tool");
    }
    out.chars().take(64).collect()
}

fn first_word(name: &str) -> &str {
    name.split(['-', '_', '.']).next().unwrap_or(name)
}

/// The four hints with the specification's defaults where the server sent none.
fn explicit_annotations(sent: Option<&Value>) -> Value {
    let hint = |key: &str, default: bool| {
        sent.and_then(|a| a.get(key)).and_then(Value::as_bool).unwrap_or(default)
    };
    json!({
        "readOnlyHint": hint("readOnlyHint", false),
        "destructiveHint": hint("destructiveHint", true),
        "idempotentHint": hint("idempotentHint", false),
        "openWorldHint": hint("openWorldHint", true),
    })
}

/// Build the catalog files from a server's handshake facts and its `tools/list` entries.
pub fn build(
    facts: &ServerFacts,
    tools: &[Value],
    options: &ImportOptions,
) -> Result<ImportedCatalog> {
    let info_name = facts.server_info.get("name").and_then(Value::as_str).unwrap_or("server");
    let server = catalog_name(options.name.as_deref().unwrap_or(info_name));
    let mut tools: Vec<&Value> = tools.iter().collect();
    tools.sort_by(|a, b| wire_name(a).cmp(wire_name(b)));
    if let Some(pair) = tools.windows(2).find(|w| wire_name(w[0]) == wire_name(w[1])) {
        anyhow::bail!("the server lists the tool `{}` twice", wire_name(pair[0]));
    }
    if tools.is_empty() {
        anyhow::bail!(
            "the server lists no tools (with client capabilities {}); nothing to import",
            facts_caps(options.capabilities)
        );
    }

    // The rule, step 2: first words shared by two tools or more, but not by all.
    let mut words: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &tools {
        *words.entry(first_word(wire_name(t))).or_default() += 1;
    }
    let group = |t: &Value| -> String {
        let wire = wire_name(t);
        if let Some(c) = options.categories.get(wire) {
            return c.clone();
        }
        let word = first_word(wire);
        if words[word] >= 2 && words[word] < tools.len() {
            return word.to_string();
        }
        let read_only =
            t.pointer("/annotations/readOnlyHint").and_then(Value::as_bool).unwrap_or(false);
        if read_only { "read".into() } else { "write".into() }
    };

    let mut categories: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut provenance = serde_json::Map::new();
    let mut renamed = Vec::new();
    let mut names_used: BTreeMap<String, String> = BTreeMap::new();
    for t in &tools {
        let wire = wire_name(t);
        let name = function_name(wire);
        if let Some(other) = names_used.insert(name.clone(), wire.to_string()) {
            anyhow::bail!(
                "the tools `{other}` and `{wire}` both become `{name}` as function names; rename one on the server"
            );
        }
        if name != wire {
            renamed.push((wire.to_string(), name.clone()));
        }
        let category = catalog_name(&format!("{server}_{}", group(t)));
        let mut tool = serde_json::Map::new();
        tool.insert("name".into(), json!(name));
        let title =
            t.get("title").or_else(|| t.pointer("/annotations/title")).and_then(Value::as_str);
        if let Some(title) = title {
            tool.insert("title".into(), json!(title));
        }
        tool.insert(
            "description".into(),
            json!(t.get("description").and_then(Value::as_str).unwrap_or_default()),
        );
        tool.insert(
            "inputSchema".into(),
            t.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"})),
        );
        if let Some(out) = t.get("outputSchema") {
            tool.insert("outputSchema".into(), out.clone());
        }
        tool.insert("annotations".into(), explicit_annotations(t.get("annotations")));
        // Simulated runs answer with a fixed result (a live run asks the server); `static`, so the text
        // is never read as a template.
        tool.insert("mockResponse".into(), json!({"ok": true}));
        tool.insert("mockMode".into(), json!("static"));
        provenance.insert(format!("{server}/{category}/{name}"), json!({"name": wire, "annotations": t.get("annotations").cloned().unwrap_or(Value::Null)}));
        categories.entry(category).or_default().push(Value::Object(tool));
    }

    let title = facts.server_info.get("title").and_then(Value::as_str);
    let version =
        facts.server_info.get("version").and_then(Value::as_str).unwrap_or("unknown version");
    let description = format!(
        "{} (MCP server `{info_name}` {version}, imported from its tools/list).",
        title.unwrap_or(info_name)
    );
    let category_count = categories.len();
    let server_json = json!({
        "name": server,
        "title": title.unwrap_or(info_name),
        "description": description,
        "categories": categories.into_iter().map(|(name, tools)| {
            let word = name.strip_prefix(&format!("{server}_")).unwrap_or(&name).to_string();
            let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
            json!({
                "name": name,
                "description": format!("{} tools of {}: {}.", category_label(&word), title.unwrap_or(info_name), names.join(", ")),
                "tools": tools,
            })
        }).collect::<Vec<_>>(),
    });
    let meta = json!({
        "name": server,
        "description": description,
        "mcp": {
            "serverInfo": facts.server_info,
            "protocolVersion": facts.protocol_version,
            "serverCapabilities": facts.capabilities,
            "clientCapabilities": options.capabilities.to_wire(),
            "command": options.command,
            "env": options.env_names,
            "tools": provenance,
        },
    });
    let mut meta = meta;
    if !options.env_templates.is_empty() {
        meta["mcp"]["envTemplates"] = json!(options.env_templates);
    }
    let files = vec![
        ("catalog.json".to_string(), pretty(&meta)?),
        (format!("{server}.json"), pretty(&server_json)?),
    ];
    Ok(ImportedCatalog { server, files, tools: tools.len(), categories: category_count, renamed })
}

fn category_label(word: &str) -> String {
    match word {
        "read" => "Read-only".into(),
        "write" => "State-changing (or not marked read-only)".into(),
        w => format!("`{w}…`"),
    }
}

fn facts_caps(c: Capabilities) -> String {
    let v = c.to_wire();
    let names: Vec<&str> =
        v.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

fn wire_name(t: &Value) -> &str {
    t.get("name").and_then(Value::as_str).unwrap_or_default()
}

fn pretty(v: &Value) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(v)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Write the files into `dir` (created if missing). They are first written to a staging directory beside
/// it and loaded from there as a catalog, so an import toolpick could not load leaves `dir` untouched;
/// then each file is moved into place.
pub fn write(imported: &ImportedCatalog, dir: &Path) -> Result<()> {
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".toolpick-import-")
        .tempdir_in(parent)
        .with_context(|| format!("cannot create a staging directory in {}", parent.display()))?;
    for (name, bytes) in &imported.files {
        std::fs::write(staging.path().join(name), bytes)
            .with_context(|| format!("cannot write {name} in {}", staging.path().display()))?;
    }
    crate::catalog::load_catalog(staging.path()).map_err(|e| {
        anyhow::anyhow!("the imported catalog does not load (please report this): {e}")
    })?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, bytes) in &imported.files {
        crate::files::write_atomic(&dir.join(name), bytes)?;
    }
    Ok(())
}

/// The mapping file of `--categories`: a JSON object of wire tool name → category word.
pub fn read_mapping(path: &Path) -> Result<BTreeMap<String, String>> {
    let text = crate::error::read_text(path, "the category mapping")?;
    serde_json::from_str(&text).map_err(|e| {
        crate::error::InputError::new(path, format!("not a category mapping ({e}); write a JSON object such as {{\"read_file\": \"files\"}}")).at_line(e.line()).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> ServerFacts {
        ServerFacts {
            server_info: json!({"name": "acme/files-server", "version": "1.2.0"}),
            protocol_version: "2025-11-25".into(),
            capabilities: json!({"tools": {}}),
            instructions: None,
        }
    }

    fn tool(name: &str, annotations: Value) -> Value {
        json!({"name": name, "description": format!("does {name}"), "inputSchema": {"type": "object"}, "annotations": annotations})
    }

    fn categories(files: &[(String, Vec<u8>)]) -> BTreeMap<String, Vec<String>> {
        let server: Value = serde_json::from_slice(&files[1].1).unwrap();
        server["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t["name"].as_str().unwrap().to_string())
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn names_become_catalog_names() {
        assert_eq!(catalog_name("mcp-servers/everything"), "mcp_servers_everything");
        assert_eq!(catalog_name("Secure Filesystem Server!"), "secure_filesystem_server");
        assert_eq!(catalog_name("42-tools"), "mcp_42_tools");
        assert_eq!(catalog_name(&"x".repeat(80)).len(), 64);
        assert_eq!(function_name("github.create_issue"), "github_create_issue");
    }

    #[test]
    fn categories_follow_shared_first_words_then_annotations_and_the_mapping_wins() {
        let tools = vec![
            tool("read_file", json!({"readOnlyHint": true})),
            tool("read_many", json!({"readOnlyHint": true})),
            tool("write_file", json!({"readOnlyHint": false})),
            tool("stat", json!({"readOnlyHint": true})),
            tool("purge", json!({})),
            tool("move_file", json!(null)),
        ];
        let got = categories(&build(&facts(), &tools, &ImportOptions::default()).unwrap().files);
        assert_eq!(got["acme_files_server_read"], ["read_file", "read_many", "stat"]);
        assert_eq!(got["acme_files_server_write"], ["move_file", "purge", "write_file"]);
        assert_eq!(got.len(), 2);
        let options = ImportOptions {
            categories: [("stat".to_string(), "meta".to_string())].into(),
            ..Default::default()
        };
        let got = categories(&build(&facts(), &tools, &options).unwrap().files);
        assert_eq!(got["acme_files_server_meta"], ["stat"]);
        // A first word every tool shares says nothing.
        let git =
            vec![tool("git_status", json!({"readOnlyHint": true})), tool("git_commit", json!({}))];
        let got = categories(&build(&facts(), &git, &ImportOptions::default()).unwrap().files);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            ["acme_files_server_read", "acme_files_server_write"]
        );
    }

    #[test]
    fn missing_hints_take_the_unsafe_defaults_and_what_was_sent_is_kept() {
        let tools = vec![tool("peek", json!({"readOnlyHint": true, "title": "Peek"}))];
        let imported = build(&facts(), &tools, &ImportOptions::default()).unwrap();
        let server: Value = serde_json::from_slice(&imported.files[1].1).unwrap();
        let t = &server["categories"][0]["tools"][0];
        assert_eq!(
            t["annotations"],
            json!({"readOnlyHint": true, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true})
        );
        assert_eq!(t["title"], "Peek");
        let meta: Value = serde_json::from_slice(&imported.files[0].1).unwrap();
        let id = "acme_files_server/acme_files_server_read/peek";
        assert_eq!(
            meta["mcp"]["tools"][&id]["annotations"],
            json!({"readOnlyHint": true, "title": "Peek"})
        );
    }

    #[test]
    fn listing_order_does_not_change_the_files_and_clashing_names_are_refused() {
        let a = vec![tool("b-tool", json!({})), tool("a.tool", json!({}))];
        let b = vec![tool("a.tool", json!({})), tool("b-tool", json!({}))];
        let (x, y) = (
            build(&facts(), &a, &ImportOptions::default()).unwrap(),
            build(&facts(), &b, &ImportOptions::default()).unwrap(),
        );
        assert_eq!(x.files, y.files);
        assert_eq!(x.renamed, [("a.tool".to_string(), "a_tool".to_string())]);
        let clash = vec![tool("a.tool", json!({})), tool("a_tool", json!({}))];
        assert!(build(&facts(), &clash, &ImportOptions::default()).is_err());
    }
}
