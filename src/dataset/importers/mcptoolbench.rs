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
//! - Defects survived: malformed JSON (read record by record through [`super::read`]; only the broken
//!   records are skipped), a missing `uuid` (id made from the file and record number), duplicate
//!   queries (later copies skipped), labels naming a tool the record does not offer (mapped
//!   when the label's server has exactly one tool, skipped otherwise), labels with several URLs in one
//!   string (kept, reported), ground truth that does not validate against the tool's schema (skipped).

use super::read::Reader;
use super::{At, Imported, Ledger, fields, finish, task};
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::dataset::{Dataset, ExpectedCall, Kind};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// An MCP server id as a valid server name (`finance-agent-mcp-server` → `finance_agent_mcp_server`).
pub fn server_name(id: &str) -> String {
    let mut s: String = id
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
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
        let json = p.extension().is_some_and(|e| e == "json");
        // A directory named `*.json` stands where a record file belongs: read as one, it is reported
        // (as a directory) instead of being searched or passed over.
        if p.is_dir() && !json {
            json_files(&p, out);
        } else if json {
            out.push(p);
        }
    }
}

/// Tools seen so far: server → tool name → tool.
type Servers = BTreeMap<String, BTreeMap<String, Tool>>;

pub fn import(path: &Path) -> Result<Imported> {
    let mut files = Vec::new();
    if path.is_dir() {
        for sub in ["data", "demo"] {
            json_files(&path.join(sub), &mut files);
        }
        if files.is_empty() {
            json_files(path, &mut files);
        }
    } else if path.is_file() {
        files.push(path.to_path_buf());
    }
    if files.is_empty() {
        return Err(InputError::new(
            path,
            "no MCPToolBench++ record files (data/<category>/*.json) here",
        )
        .into());
    }
    let rel = |p: &Path| p.strip_prefix(path).unwrap_or(p).display().to_string();
    let mut ledger = Ledger::default();
    let mut servers: Servers = BTreeMap::new();
    let mut tasks = Vec::new();
    let mut seen_queries: HashMap<(String, String), At> = HashMap::new();
    for file in &files {
        let name = if path.is_file() {
            file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()
        } else {
            rel(file)
        };
        for raw in (Reader { name: &name, tasks: true }).json_array(file, &mut ledger) {
            let r = &raw.value;
            let uuid = fields::as_object(r, "").and_then(|_| fields::opt_str(r, "", "uuid"));
            let (written, generated) = match uuid {
                Ok(Some(u)) if !u.trim().is_empty() => (u.to_string(), false),
                Ok(_) => (format!("{name}-{}", raw.at.record.unwrap_or_default()), true),
                Err(reason) => {
                    ledger.skip(&raw.at, "", reason);
                    continue;
                }
            };
            let id = ledger.claim_id(&raw.at, &written);
            if generated {
                ledger.repair(&raw.at, &id, format!("`uuid` is missing or empty: id `{written}` made from the file and record number"));
            }
            if raw.lossy {
                ledger.mark_repaired(&id);
            }
            let mut repairs = Vec::new();
            match record_task(r, &mut servers, &mut repairs) {
                Ok(mut t) => {
                    for rep in repairs {
                        ledger.repair(&raw.at, &id, rep);
                    }
                    if let Some(first) = seen_queries.get(&(t.category.clone(), t.query.clone())) {
                        ledger.skip(
                            &raw.at,
                            &id,
                            format!("duplicate query: {} asks the same", first.describe()),
                        );
                        continue;
                    }
                    seen_queries.insert((t.category.clone(), t.query.clone()), raw.at.clone());
                    t.id = id;
                    t.line = raw.at.line.unwrap_or_default();
                    t.tags = vec![format!("mcptoolbench:{name}")];
                    tasks.push(t);
                }
                Err(reason) => ledger.skip(&raw.at, &id, reason),
            }
        }
    }
    let servers: Vec<Server> = servers
        .into_iter()
        .map(|(name, tools)| Server {
            // MCPToolBench++ gives servers no descriptions; what they offer is their tools' names.
            description: format!(
                "MCP server `{name}`. Tools: {}.",
                tools.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
            title: None,
            categories: vec![Category {
                name: format!("{name}_tools"),
                description: format!("Tools of `{name}`."),
                tools: tools.into_values().collect(),
            }],
            name,
        })
        .collect();
    let catalog =
        Catalog::new("mcptoolbench", "MCPToolBench++ tools, one server per MCP server", servers);
    let dataset = Dataset { name: "mcptoolbench".into(), path: path.to_path_buf(), tasks };
    Ok(finish(catalog, dataset, ledger))
}

/// Register the record's tools (a tool that cannot be offered is a repair of the record) and return the
/// name → tool id lookup (`server/name` and bare `name`) and the candidate ids.
fn record_tools(
    r: &Value,
    category: &str,
    servers: &mut Servers,
    repairs: &mut Vec<String>,
) -> Result<(HashMap<String, String>, Vec<String>), String> {
    let mut owner: HashMap<String, String> = HashMap::new();
    for (srv, names) in fields::opt_object(r, "", "mcp_tools_dict")?.into_iter().flatten() {
        let path = fields::join("mcp_tools_dict", srv);
        for n in fields::strings(fields::as_array(names, &path, "an array of tool names")?, &path)?
        {
            owner.insert(n.to_string(), srv.clone());
        }
    }
    let mut candidates = Vec::new();
    let mut by_name: HashMap<String, String> = HashMap::new();
    for (i, t) in fields::req_array(r, "", "tools", "an array of tool objects")?.iter().enumerate()
    {
        let path = fields::index("tools", i);
        let parts = fields::as_object(t, &path).and_then(|_| {
            let name = fields::req_str(t, &path, "name")?;
            let description = fields::opt_str(t, &path, "description")?;
            let schema =
                fields::opt_object(t, &path, "input_schema")?.map(|_| t["input_schema"].clone());
            Ok((name, description, schema))
        });
        let (name, description, schema) = match parts {
            Ok(p) => p,
            Err(reason) => {
                repairs.push(format!("{reason}: that tool is not offered"));
                continue;
            }
        };
        if description.is_none() {
            repairs.push(format!("`{path}.description` is missing: empty description"));
        }
        let schema = schema.unwrap_or_else(|| {
            repairs.push(format!("`{path}.input_schema` is missing: no parameters"));
            json!({"type": "object", "properties": {}})
        });
        let srv = server_name(
            owner.get(name).map(String::as_str).unwrap_or(&format!("{category}_unassigned")),
        );
        let tool_name: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect();
        let tool_id = format!("{srv}/{srv}_tools/{tool_name}");
        let entry = servers.entry(srv.clone()).or_default();
        if !entry.contains_key(&tool_name) {
            let value = json!({"name": tool_name, "description": description.unwrap_or_default(), "inputSchema": schema, "mockMode": "static"});
            match crate::catalog::load::parse_tool(&srv, &format!("{srv}_tools"), &value) {
                Ok(tool) => {
                    entry.insert(tool_name.clone(), tool);
                }
                Err(e) => {
                    repairs.push(format!(
                        "tool `{name}` is not a valid tool ({e}): it is not offered"
                    ));
                    continue;
                }
            }
        }
        by_name.insert(
            format!("{}/{name}", owner.get(name).cloned().unwrap_or_default()),
            tool_id.clone(),
        );
        by_name.entry(name.to_string()).or_insert(tool_id.clone());
        candidates.push(tool_id);
    }
    Ok((by_name, candidates))
}

/// One record as a task (id, line and tags set by the caller), or why it is skipped.
fn record_task(
    r: &Value,
    servers: &mut Servers,
    repairs: &mut Vec<String>,
) -> Result<crate::dataset::Task, String> {
    let category = match fields::opt_str(r, "", "category")? {
        Some(c) => c.to_string(),
        None => {
            repairs.push("`category` is missing: `unknown`".into());
            "unknown".into()
        }
    };
    let (by_name, candidates) = record_tools(r, &category, servers, repairs)?;
    let query = fields::req_str(r, "", "query")?.to_string();
    if query.trim().is_empty() {
        return Err("`query` is empty".into());
    }
    let labels = fields::objects(
        fields::req_array(r, "", "function_call_label", "an array of calls")?,
        "function_call_label",
    )?;
    if labels.is_empty() {
        return Err("`function_call_label` is empty: no ground truth".into());
    }
    let mut expected = Vec::new();
    for (li, l) in labels.iter().enumerate() {
        let path = fields::index("function_call_label", li);
        let name = fields::req_str(l, &path, "name")?;
        let srv = fields::opt_str(l, &path, "mcp_server")?.unwrap_or_default();
        let resolved = match by_name.get(&format!("{srv}/{name}")).or_else(|| by_name.get(name)) {
            Some(t) => t.clone(),
            None => {
                // The label names a tool the record does not offer; if its server has exactly one tool, it is that one.
                let only = r["mcp_tools_dict"][srv]
                    .as_array()
                    .filter(|n| n.len() == 1)
                    .and_then(|n| n[0].as_str());
                match only.and_then(|o| by_name.get(o).map(|t| (o, t))) {
                    Some((only, t)) => {
                        repairs.push(format!("label tool `{name}` is not offered; mapped to `{only}`, the only tool of `{srv}`"));
                        t.clone()
                    }
                    None => {
                        return Err(format!(
                            "label tool `{name}` (server `{srv}`) is not among the record's tools"
                        ));
                    }
                }
            }
        };
        let mut alternatives = Vec::new();
        let similar_path = fields::join(&path, "similar_tools");
        for (si, s) in fields::objects(
            fields::opt_array(l, &path, "similar_tools", "an array of objects")?
                .map(Vec::as_slice)
                .unwrap_or_default(),
            &similar_path,
        )?
        .into_iter()
        .enumerate()
        {
            let spath = fields::index(&similar_path, si);
            let n = fields::req_str(s, &spath, "name")?;
            let ssrv = fields::opt_str(s, &spath, "mcp_server")?.unwrap_or_default();
            match by_name.get(&format!("{ssrv}/{n}")).or_else(|| by_name.get(n)) {
                Some(a) if *a != resolved => alternatives.push(a.clone()),
                Some(_) => {}
                None => repairs.push(format!("similar tool `{n}` (server `{ssrv}`) is not among the record's tools: not counted as an alternative")),
            }
        }
        let mut arguments = BTreeMap::new();
        for (k, v) in fields::opt_object(l, &path, "input")?.into_iter().flatten() {
            if v.as_str().is_some_and(|s| s.matches("http").count() > 1) {
                repairs.push(format!(
                    "argument `{k}` holds several URLs in one string; kept as written"
                ));
            }
            arguments.insert(k.clone(), vec![v.clone()]);
        }
        expected.push(ExpectedCall {
            tool: resolved,
            arguments,
            alternatives,
            any_arguments: false,
        });
    }
    let kind = if expected.len() > 1 { Kind::Multi } else { Kind::Single };
    let mut t = task(String::new(), query, kind, expected, category, 0);
    t.candidates = candidates;
    Ok(t)
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
