//! MCPToolBench++ (`data/<category>/*.json`, `demo/<category>/*.json`): JSON arrays of
//! `{uuid, category, call_type, tools, mcp_tools_dict, query, function_call_label}`.
//!
//! - Servers come from `mcp_tools_dict` (server → tool names; names sanitised to snake_case), one
//!   category `<server>_tools` each; tools listed by no server go to `<category>_unassigned`.
//! - Each task's candidate set is its record's `tools` (the category's tools), as in the benchmark.
//! - Ground truth: the label's tool (resolved by name within its `mcp_server`), `similar_tools` as
//!   alternatives that also count, and the label's `input` as **exact** acceptable values: every given
//!   argument has exactly that value; arguments the label leaves out must not be passed. (The benchmark
//!   publishes one concrete call, not a set of acceptable ones; anything looser would be our invention.)
//! - Defects survived: files that are not valid JSON (skipped whole, with the parser's position),
//!   duplicate queries (later copies skipped), labels naming a tool the record does not offer (mapped
//!   when the label's server has exactly one tool, skipped otherwise), labels with several URLs in one
//!   string (kept, reported), ground truth that does not validate against the tool's schema (skipped).

use super::{Defect, Imported, keep_valid, task};
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::dataset::{Dataset, ExpectedCall, Kind};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// An MCP server id as a valid server name (`finance-agent-mcp-server` → `finance_agent_mcp_server`).
pub fn server_name(id: &str) -> String {
    let mut s: String = id.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s = format!("s_{s}");
    }
    s.truncate(56);
    s
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

pub fn import(path: &Path) -> Result<Imported> {
    let mut files = Vec::new();
    if path.is_dir() {
        for sub in ["data", "demo"] {
            json_files(&path.join(sub), &mut files);
        }
        if files.is_empty() {
            json_files(path, &mut files);
        }
    } else {
        files.push(path.to_path_buf());
    }
    if files.is_empty() {
        return Err(InputError::new(path, "no MCPToolBench++ record files (data/<category>/*.json) here").into());
    }
    let rel = |p: &Path| p.strip_prefix(path).unwrap_or(p).display().to_string();
    let mut defects = Vec::new();
    // server → tool name → tool
    let mut servers: BTreeMap<String, BTreeMap<String, Tool>> = BTreeMap::new();
    let mut tasks = Vec::new();
    let mut seen_queries: HashSet<(String, String)> = HashSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| InputError::new(file, format!("cannot read: {e}")))?;
        let records: Vec<Value> = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(a)) => a,
            Ok(_) => {
                defects.push(Defect { file: rel(file), line: 0, id: String::new(), action: "skipped", reason: "not a JSON array of records".into() });
                continue;
            }
            Err(e) => {
                defects.push(Defect { file: rel(file), line: e.line(), id: String::new(), action: "skipped", reason: format!("invalid JSON, whole file skipped: {e}") });
                continue;
            }
        };
        for (i, r) in records.iter().enumerate() {
            let id = r["uuid"].as_str().unwrap_or_default().to_string();
            let d = |action: &'static str, reason: String| Defect { file: rel(file), line: i + 1, id: id.clone(), action, reason };
            let category = r["category"].as_str().unwrap_or("unknown").to_string();
            // Tools → servers.
            let mut owner: HashMap<String, String> = HashMap::new();
            for (srv, names) in r["mcp_tools_dict"].as_object().into_iter().flatten() {
                for n in names.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    owner.insert(n.to_string(), srv.clone());
                }
            }
            let mut candidates = Vec::new();
            let mut by_name: HashMap<String, String> = HashMap::new();
            for t in r["tools"].as_array().into_iter().flatten() {
                let Some(name) = t["name"].as_str() else { continue };
                let srv = server_name(owner.get(name).map(String::as_str).unwrap_or(&format!("{category}_unassigned")));
                let tool_name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
                let tool_id = format!("{srv}/{srv}_tools/{tool_name}");
                let entry = servers.entry(srv.clone()).or_default();
                if !entry.contains_key(&tool_name) {
                    let value = json!({"name": tool_name, "description": t["description"], "inputSchema": t.get("input_schema").cloned().unwrap_or(json!({"type": "object", "properties": {}}))});
                    match crate::catalog::load::parse_tool(&srv, &format!("{srv}_tools"), &value) {
                        Ok(tool) => {
                            entry.insert(tool_name.clone(), tool);
                        }
                        Err(e) => {
                            defects.push(d("skipped", format!("tool `{name}` is not a valid tool: {e}")));
                            continue;
                        }
                    }
                }
                by_name.insert(format!("{}/{name}", owner.get(name).cloned().unwrap_or_default()), tool_id.clone());
                by_name.entry(name.to_string()).or_insert(tool_id.clone());
                candidates.push(tool_id);
            }
            let query = r["query"].as_str().unwrap_or_default().to_string();
            if query.trim().is_empty() {
                defects.push(d("skipped", "empty query".into()));
                continue;
            }
            if !seen_queries.insert((category.clone(), query.clone())) {
                defects.push(d("skipped", "duplicate query (an earlier record asks the same)".into()));
                continue;
            }
            let labels = r["function_call_label"].as_array().cloned().unwrap_or_default();
            if labels.is_empty() {
                defects.push(d("skipped", "no function_call_label".into()));
                continue;
            }
            let mut expected = Vec::new();
            let mut skip = None;
            for l in &labels {
                let name = l["name"].as_str().unwrap_or_default();
                let srv = l["mcp_server"].as_str().unwrap_or_default();
                let resolved = by_name.get(&format!("{srv}/{name}")).or_else(|| by_name.get(name)).cloned().or_else(|| {
                    // The label names a tool the record does not offer; if its server has exactly one tool, it is that one.
                    let names = r["mcp_tools_dict"][srv].as_array()?;
                    if names.len() == 1 {
                        let only = names[0].as_str()?;
                        let t = by_name.get(only).cloned()?;
                        defects.push(d("repaired", format!("label tool `{name}` is not offered; mapped to `{only}`, the only tool of `{srv}`")));
                        Some(t)
                    } else {
                        None
                    }
                });
                let Some(tool) = resolved else {
                    skip = Some(format!("label tool `{name}` (server `{srv}`) is not among the record's tools"));
                    break;
                };
                let alternatives: Vec<String> = l["similar_tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| {
                        let n = s["name"].as_str()?;
                        by_name.get(&format!("{}/{n}", s["mcp_server"].as_str().unwrap_or_default())).or_else(|| by_name.get(n)).cloned()
                    })
                    .filter(|a| *a != tool)
                    .collect();
                let mut arguments = BTreeMap::new();
                for (k, v) in l["input"].as_object().into_iter().flatten() {
                    if v.as_str().is_some_and(|s| s.matches("http").count() > 1) {
                        defects.push(d("repaired", format!("argument `{k}` holds several URLs in one string; kept as written")));
                    }
                    arguments.insert(k.clone(), vec![v.clone()]);
                }
                expected.push(ExpectedCall { tool, arguments, alternatives, any_arguments: false });
            }
            if let Some(reason) = skip {
                defects.push(d("skipped", reason));
                continue;
            }
            let kind = if expected.len() > 1 { Kind::Multi } else { Kind::Single };
            let mut t = task(if id.is_empty() { format!("{}-{}", rel(file), i + 1) } else { id.clone() }, query, kind, expected, category.clone(), i + 1);
            t.candidates = candidates;
            t.tags = vec![format!("mcptoolbench:{}", rel(file))];
            tasks.push(t);
        }
    }
    let servers: Vec<Server> = servers
        .into_iter()
        .map(|(name, tools)| Server {
            // MCPToolBench++ gives servers no descriptions; what they offer is their tools' names.
            description: format!("MCP server `{name}`. Tools: {}.", tools.keys().cloned().collect::<Vec<_>>().join(", ")),
            title: None,
            categories: vec![Category { name: format!("{name}_tools"), description: format!("Tools of `{name}`."), tools: tools.into_values().collect() }],
            name,
        })
        .collect();
    let catalog = Catalog::new("mcptoolbench", "MCPToolBench++ tools, one server per MCP server", servers);
    let mut dataset = Dataset { name: "mcptoolbench".into(), path: path.to_path_buf(), tasks };
    keep_valid(&catalog, &mut dataset, &mut defects, |t| t.tags.first().and_then(|g| g.strip_prefix("mcptoolbench:")).unwrap_or_default().to_string());
    Ok(Imported { catalog, dataset, defects })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_are_valid() {
        assert_eq!(server_name("finance-agent-mcp-server"), "finance_agent_mcp_server");
        assert_eq!(server_name("1password"), "s_1password");
        assert!(crate::catalog::load::is_valid_name(&server_name("Baidu Maps/SSE")));
    }
}
