//! What `mcp import` does with what it cannot take as the server sent it — the defect rows (a tool
//! skipped, renamed or repaired; `--strict` refuses instead) — and the server description it writes
//! when the server gives none. Apart from `import` (the catalog's shape) because these are the
//! importer's judgements about a server's output, each with its reason.

use super::import::{ImportOptions, Written};
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The annotation hints the catalog knows; others a server sends (`title`) are kept in `catalog.json`.
pub(super) const HINTS: [&str; 4] =
    ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

/// One tool the import could not take as the server sent it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImportDefect {
    /// The tool's wire name (`(unnamed)` when it has none).
    pub tool: String,
    /// `skipped`, `renamed` or `repaired`.
    pub action: &'static str,
    pub reason: String,
}

/// Record a defect, or refuse the import with it under `--strict`.
pub(super) fn defect(
    options: &ImportOptions,
    defects: &mut Vec<ImportDefect>,
    tool: &str,
    action: &'static str,
    reason: String,
) -> Result<()> {
    if options.strict {
        anyhow::bail!(
            "the tool `{tool}` cannot be imported as the server sent it: {reason} (--strict refuses; without it the tool is {action})"
        );
    }
    defects.push(ImportDefect { tool: tool.to_string(), action, reason });
    Ok(())
}

/// The hints the server sent that the catalog can hold (booleans among [`HINTS`]); others are
/// defects (`repaired`: the hint reads as its default).
pub(super) fn sent_hints(
    wire: &str,
    sent: Option<&Value>,
    options: &ImportOptions,
    defects: &mut Vec<ImportDefect>,
) -> Result<serde_json::Map<String, Value>> {
    let mut hints = serde_json::Map::new();
    for key in HINTS {
        match sent.and_then(|a| a.get(key)) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => {
                hints.insert(key.into(), json!(b));
            }
            Some(other) => defect(
                options,
                defects,
                wire,
                "repaired",
                format!("annotations.{key} is {other}, not true or false; it reads as the default"),
            )?,
        }
    }
    Ok(hints)
}

/// Why the catalog would refuse this output schema, if it would.
pub(super) fn output_schema_problem(schema: &Value) -> Option<String> {
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        return Some(format!("outputSchema is not a valid JSON Schema (draft 2020-12): {e}"));
    }
    jsonschema::draft202012::new(schema)
        .err()
        .map(|e| format!("outputSchema does not compile as a JSON Schema: {e}"))
}

/// `base` made unique among `used`: `base`, else `base_2`, `base_3`… (cut to stay within 64).
pub(super) fn unique_name(base: &str, used: &BTreeMap<String, String>) -> String {
    if !used.contains_key(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let stem: String = base.chars().take(64 - suffix.len()).collect();
            format!("{stem}{suffix}")
        })
        .find(|name| !used.contains_key(name))
        .expect("some suffix is free")
}

/// Words a generated server description leaves out: they say nothing about what a server is for.
const GENERIC: &[&str] = &[
    "about",
    "also",
    "after",
    "before",
    "between",
    "each",
    "from",
    "including",
    "make",
    "makes",
    "optional",
    "provide",
    "provides",
    "specific",
    "specified",
    "within",
    "work",
    "works",
    "given",
    "into",
    "more",
    "must",
    "only",
    "other",
    "returns",
    "return",
    "server",
    "should",
    "some",
    "such",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "those",
    "tool",
    "tools",
    "used",
    "using",
    "when",
    "where",
    "which",
    "will",
    "with",
    "without",
    "your",
];

/// A server description from its tools' own words: the most frequent words of four letters or more
/// in their descriptions (ties in order of first appearance, tools in wire-name order), so discovery
/// has what the tools are about to match.
pub(super) fn written_description(title: &str, written: &[Written]) -> String {
    // word → (tools using it, first appearance)
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut position = 0;
    for w in written {
        let text = w.value["description"].as_str().unwrap_or_default();
        let mut seen = std::collections::BTreeSet::new();
        for word in text.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase) {
            if word.chars().count() >= 4
                && word.chars().all(char::is_alphabetic)
                && !GENERIC.contains(&word.as_str())
                && seen.insert(word.clone())
            {
                position += 1;
                counts.entry(word).or_insert((0, position)).0 += 1;
            }
        }
    }
    let mut ranked: Vec<(String, (usize, usize))> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    let top: Vec<String> = ranked.into_iter().take(12).map(|(w, _)| w).collect();
    let names: Vec<&str> = written.iter().filter_map(|w| w.value["name"].as_str()).collect();
    let tools =
        if names.len() == 1 { "1 tool".to_string() } else { format!("{} tools", names.len()) };
    if top.is_empty() {
        return format!("{title}: {tools} ({}).", names.join(", "));
    }
    format!("{title}: {tools} about {}.", top.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::client::ServerFacts;
    use super::super::import::{ImportedCatalog, build};
    use super::*;

    fn facts() -> ServerFacts {
        ServerFacts {
            server_info: json!({"name": "acme/files-server", "version": "1.2.0"}),
            protocol_version: "2025-11-25".into(),
            capabilities: json!({"tools": {}}),
            instructions: None,
        }
    }

    #[test]
    fn the_server_description_is_the_flag_the_servers_own_or_written_from_the_tools() {
        let tools = vec![
            json!({"name": "read_file", "description": "Read a file of the workspace as text.", "inputSchema": {"type": "object"}}),
            json!({"name": "list_directory", "description": "List the entries of a workspace directory.", "inputSchema": {"type": "object"}}),
        ];
        let source = |imported: &ImportedCatalog| {
            let meta: Value = serde_json::from_slice(&imported.files[0].1).unwrap();
            let server: Value = serde_json::from_slice(&imported.files[1].1).unwrap();
            (
                meta["mcp"]["serverDescriptionSource"].as_str().unwrap().to_string(),
                server["description"].as_str().unwrap().to_string(),
            )
        };
        let (from, text) = source(&build(&facts(), &tools, &ImportOptions::default()).unwrap());
        assert_eq!(from, "generated");
        assert!(text.contains("workspace") && text.contains("directory"), "{text}");
        let given =
            ImportOptions { server_description: Some("Files.".into()), ..Default::default() };
        assert_eq!(
            source(&build(&facts(), &tools, &given).unwrap()),
            ("flag".to_string(), "Files.".to_string())
        );
        let mut own = facts();
        own.server_info["description"] = json!("A workspace server.");
        assert_eq!(
            source(&build(&own, &tools, &ImportOptions::default()).unwrap()),
            ("server".to_string(), "A workspace server.".to_string())
        );
    }
}
