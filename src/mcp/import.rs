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
//! **Annotations** are hints from an untrusted server. The server file carries exactly the hints the
//! server sent (none when it sent none, so `lint` can say so); the catalog reads a missing hint with
//! the specification's default — the unsafe value: `readOnlyHint` false, `destructiveHint` true (only
//! meaningful, and so only defaulted, when `readOnlyHint` is false), `idempotentHint` false,
//! `openWorldHint` true. `catalog.json` keeps per tool the annotations as sent and the hints left to
//! the defaults (`defaultHints`).
//!
//! **What cannot be imported as sent** becomes a defect row (printed, and kept in `catalog.json`'s
//! `mcp.defects`) rather than failing the whole import: a tool with no name, listed twice, or whose
//! input or output schema the catalog would refuse is `skipped`; a tool whose function name collides
//! with another's is `renamed` (`name_2`, `name_3`, … in wire-name order); a hint or description of
//! the wrong type is `repaired` (dropped). `--strict` refuses the import at the first such tool.
//!
//! **The server's description** (what progressive discovery ranks servers by) is `--server-description`,
//! else the server's own (`serverInfo.description`), else one written from the tools' descriptions —
//! their most frequent words — and marked `"generated"` in `catalog.json`'s
//! `mcp.serverDescriptionSource`.

use super::client::{Capabilities, ServerFacts};
pub use super::import_defects::ImportDefect;
use super::import_defects::{
    HINTS, defect, output_schema_problem, sent_hints, unique_name, written_description,
};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// What to import and how.
#[derive(Debug, Clone)]
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
    /// How long each request to the server (`initialize`, `tools/list`) may take.
    pub request_timeout: std::time::Duration,
    /// Refuse the import when a tool cannot be imported as the server sent it (a bad schema, a name
    /// that collides), instead of skipping or renaming it with a defect row.
    pub strict: bool,
    /// The server's description in the catalog, instead of one written from its tools.
    pub server_description: Option<String>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            name: None,
            capabilities: Capabilities::default(),
            categories: BTreeMap::new(),
            command: Vec::new(),
            env_names: Vec::new(),
            env_templates: BTreeMap::new(),
            request_timeout: super::client::REQUEST_TIMEOUT,
            strict: false,
            server_description: None,
        }
    }
}

/// The files of an imported catalog, by file name.
pub struct ImportedCatalog {
    pub server: String,
    pub files: Vec<(String, Vec<u8>)>,
    pub tools: usize,
    pub categories: usize,
    /// Tools whose wire names are not valid function names, with the names they got.
    pub renamed: Vec<(String, String)>,
    /// Tools skipped, renamed or repaired (see the module documentation).
    pub defects: Vec<ImportDefect>,
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

/// A tool as the importer writes it, before its category is known.
pub(super) struct Written {
    pub(super) wire: String,
    read_only: bool,
    pub(super) value: Value,
    provenance: Value,
}

/// Build the catalog files from a server's handshake facts and its `tools/list` entries.
pub fn build(
    facts: &ServerFacts,
    tools: &[Value],
    options: &ImportOptions,
) -> Result<ImportedCatalog> {
    let info_name = facts.server_info.get("name").and_then(Value::as_str).unwrap_or("server");
    let server = catalog_name(options.name.as_deref().unwrap_or(info_name));
    let mut listed: Vec<&Value> = tools.iter().collect();
    // Stable: of two entries with one name, the first listed is kept.
    listed.sort_by(|a, b| wire_name(a).cmp(wire_name(b)));
    let mut defects = Vec::new();
    let mut written: Vec<Written> = Vec::new();
    let mut renamed = Vec::new();
    let mut names_used: BTreeMap<String, String> = BTreeMap::new();
    for t in listed {
        let wire = wire_name(t);
        if wire.is_empty() {
            defect(options, &mut defects, "(unnamed)", "skipped", "the entry has no name".into())?;
            continue;
        }
        if written.iter().any(|w| w.wire == wire) {
            defect(options, &mut defects, wire, "skipped", "the server lists it twice".into())?;
            continue;
        }
        let mut tool = serde_json::Map::new();
        tool.insert("name".into(), json!(function_name(wire)));
        let title =
            t.get("title").or_else(|| t.pointer("/annotations/title")).and_then(Value::as_str);
        if let Some(title) = title {
            tool.insert("title".into(), json!(title));
        }
        let description = match t.get("description") {
            None | Some(Value::Null) => "",
            Some(Value::String(d)) => d.as_str(),
            Some(other) => {
                defect(
                    options,
                    &mut defects,
                    wire,
                    "repaired",
                    format!("its description is {other}, not text; it is left empty"),
                )?;
                ""
            }
        };
        tool.insert("description".into(), json!(description));
        tool.insert(
            "inputSchema".into(),
            t.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"})),
        );
        if let Some(out) = t.get("outputSchema").filter(|o| !o.is_null()) {
            if let Some(why) = output_schema_problem(out) {
                defect(options, &mut defects, wire, "skipped", why)?;
                continue;
            }
            tool.insert("outputSchema".into(), out.clone());
        }
        let hints = sent_hints(wire, t.get("annotations"), options, &mut defects)?;
        let defaults: Vec<&str> = HINTS.into_iter().filter(|h| !hints.contains_key(*h)).collect();
        let read_only = hints.get("readOnlyHint").and_then(Value::as_bool).unwrap_or(false);
        if !hints.is_empty() {
            tool.insert("annotations".into(), Value::Object(hints));
        }
        // Simulated runs answer with a fixed result (a live run asks the server); `static`, so the text
        // is never read as a template.
        tool.insert("mockResponse".into(), json!({"ok": true}));
        tool.insert("mockMode".into(), json!("static"));
        let value = Value::Object(tool);
        // The catalog's own rules for a tool (name, input schema), as loading will apply them.
        if let Err(why) = crate::catalog::load::parse_tool(&server, "check", &value) {
            defect(options, &mut defects, wire, "skipped", why)?;
            continue;
        }
        let provenance = json!({
            "name": wire,
            "annotations": t.get("annotations").cloned().unwrap_or(Value::Null),
            "defaultHints": defaults,
        });
        written.push(Written { wire: wire.to_string(), read_only, value, provenance });
    }
    // Names last, so a skipped tool takes none; a tool whose wire name is already a function name
    // keeps it, and the others (in wire-name order) take what is left.
    let order: Vec<usize> = {
        let (mut keep, mut rest): (Vec<usize>, Vec<usize>) =
            (0..written.len()).partition(|&i| function_name(&written[i].wire) == written[i].wire);
        keep.append(&mut rest);
        keep
    };
    for i in order {
        let w = &mut written[i];
        let base = function_name(&w.wire);
        let name = unique_name(&base, &names_used);
        if name != base {
            let other = &names_used[&base];
            defect(
                options,
                &mut defects,
                &w.wire,
                "renamed",
                format!("`{other}` is already `{base}` as a function name; this one is `{name}`"),
            )?;
        } else if name != w.wire {
            renamed.push((w.wire.clone(), name.clone()));
        }
        names_used.insert(name.clone(), w.wire.clone());
        w.value["name"] = json!(name);
    }
    if written.is_empty() {
        anyhow::bail!(
            "the server lists no tools that can be imported (with client capabilities {}); nothing to import{}",
            facts_caps(options.capabilities),
            if defects.is_empty() {
                String::new()
            } else {
                format!(" ({} skipped)", defects.len())
            }
        );
    }

    // The rule, step 2: first words shared by two tools or more, but not by all.
    let mut words: BTreeMap<&str, usize> = BTreeMap::new();
    for w in &written {
        *words.entry(first_word(&w.wire)).or_default() += 1;
    }
    let group = |w: &Written| -> String {
        if let Some(c) = options.categories.get(&w.wire) {
            return c.clone();
        }
        let word = first_word(&w.wire);
        if words[word] >= 2 && words[word] < written.len() {
            return word.to_string();
        }
        if w.read_only { "read".into() } else { "write".into() }
    };

    let mut categories: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut provenance = serde_json::Map::new();
    for w in &written {
        let category = catalog_name(&format!("{server}_{}", group(w)));
        let name = w.value["name"].as_str().unwrap_or_default();
        provenance.insert(format!("{server}/{category}/{name}"), w.provenance.clone());
        categories.entry(category).or_default().push(w.value.clone());
    }

    let title = facts.server_info.get("title").and_then(Value::as_str);
    let own = facts
        .server_info
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty());
    let (description, source) = match (&options.server_description, own) {
        (Some(given), _) => (given.clone(), "flag"),
        (None, Some(own)) => (own.to_string(), "server"),
        (None, None) => (written_description(title.unwrap_or(info_name), &written), "generated"),
    };
    let version =
        facts.server_info.get("version").and_then(Value::as_str).unwrap_or("unknown version");
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
    let mut meta = json!({
        "name": server,
        "description": format!("{description} (MCP server `{info_name}` {version}, imported from its tools/list)"),
        "mcp": {
            "serverInfo": facts.server_info,
            "protocolVersion": facts.protocol_version,
            "serverCapabilities": facts.capabilities,
            "clientCapabilities": options.capabilities.to_wire(),
            "command": options.command,
            "env": options.env_names,
            "serverDescriptionSource": source,
            "tools": provenance,
        },
    });
    if !options.env_templates.is_empty() {
        meta["mcp"]["envTemplates"] = json!(options.env_templates);
    }
    if !defects.is_empty() {
        meta["mcp"]["defects"] = json!(defects);
    }
    let files = vec![
        ("catalog.json".to_string(), pretty(&meta)?),
        (format!("{server}.json"), pretty(&server_json)?),
    ];
    Ok(ImportedCatalog {
        server,
        files,
        tools: written.len(),
        categories: category_count,
        renamed,
        defects,
    })
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
    fn only_the_hints_sent_are_written_and_the_defaults_are_named() {
        let tools = vec![
            tool("peek", json!({"readOnlyHint": true, "title": "Peek"})),
            tool("poke", json!(null)),
            tool("prod", json!({"readOnlyHint": "yes", "openWorldHint": false})),
        ];
        let imported = build(&facts(), &tools, &ImportOptions::default()).unwrap();
        let server: Value = serde_json::from_slice(&imported.files[1].1).unwrap();
        let by_name = |n: &str| {
            server["categories"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|c| c["tools"].as_array().unwrap())
                .find(|t| t["name"] == n)
                .unwrap()
                .clone()
        };
        let peek = by_name("peek");
        // No destructiveHint next to readOnlyHint: true (the specification gives it no meaning there).
        assert_eq!(peek["annotations"], json!({"readOnlyHint": true}));
        assert_eq!(peek["title"], "Peek");
        assert!(by_name("poke").get("annotations").is_none());
        assert_eq!(by_name("prod")["annotations"], json!({"openWorldHint": false}));
        assert_eq!(imported.defects.len(), 1);
        assert_eq!(imported.defects[0].action, "repaired");
        assert!(imported.defects[0].reason.contains("readOnlyHint"), "{:?}", imported.defects);
        let meta: Value = serde_json::from_slice(&imported.files[0].1).unwrap();
        let id = "acme_files_server/acme_files_server_read/peek";
        assert_eq!(
            meta["mcp"]["tools"][&id]["annotations"],
            json!({"readOnlyHint": true, "title": "Peek"})
        );
        assert_eq!(
            meta["mcp"]["tools"][&id]["defaultHints"],
            json!(["destructiveHint", "idempotentHint", "openWorldHint"])
        );
        assert_eq!(meta["mcp"]["defects"][0]["tool"], "prod");
    }

    #[test]
    fn listing_order_does_not_change_the_files_and_clashing_names_are_renamed() {
        let a = vec![tool("b-tool", json!({})), tool("a.tool", json!({}))];
        let b = vec![tool("a.tool", json!({})), tool("b-tool", json!({}))];
        let (x, y) = (
            build(&facts(), &a, &ImportOptions::default()).unwrap(),
            build(&facts(), &b, &ImportOptions::default()).unwrap(),
        );
        assert_eq!(x.files, y.files);
        assert_eq!(x.renamed, [("a.tool".to_string(), "a_tool".to_string())]);
        let clash = vec![tool("a_tool", json!({})), tool("a.tool", json!({}))];
        let imported = build(&facts(), &clash, &ImportOptions::default()).unwrap();
        // Listed in wire-name order: `a.tool` (renamed) before `a_tool`.
        let names: Vec<String> = categories(&imported.files).into_values().flatten().collect();
        assert_eq!(names, ["a_tool_2", "a_tool"]);
        assert_eq!(imported.defects.len(), 1);
        // The tool already named `a_tool` on the wire keeps the name.
        assert_eq!(
            (imported.defects[0].tool.as_str(), imported.defects[0].action),
            ("a.tool", "renamed")
        );
        let strict = ImportOptions { strict: true, ..Default::default() };
        let err = build(&facts(), &clash, &strict).err().unwrap().to_string();
        assert!(err.contains("--strict"), "{err}");
    }

    #[test]
    fn a_tool_with_a_bad_schema_is_skipped_and_the_rest_imported() {
        let mut bad_input = tool("bad_input", json!({}));
        bad_input["inputSchema"] = json!({"type": "array"});
        let mut bad_output = tool("bad_output", json!({}));
        bad_output["outputSchema"] = json!({"type": 12});
        let tools =
            vec![bad_input, bad_output, tool("fine", json!({})), json!({"description": "x"})];
        let imported = build(&facts(), &tools, &ImportOptions::default()).unwrap();
        assert_eq!(imported.tools, 1);
        let skipped: Vec<&str> = imported
            .defects
            .iter()
            .filter(|d| d.action == "skipped")
            .map(|d| d.tool.as_str())
            .collect();
        assert_eq!(skipped, ["(unnamed)", "bad_input", "bad_output"]);
        let strict = ImportOptions { strict: true, ..Default::default() };
        assert!(build(&facts(), &tools, &strict).is_err());
    }
}
