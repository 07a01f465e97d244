//! StableToolBench (`solvable_queries/test_instruction/G*_*.json`): JSON arrays of
//! `{api_list, query, "relevant APIs", query_id}`.
//!
//! - Servers = `tool_name`, categories = `category_name` (as `<category>_of_<server>`, since category
//!   names are unique catalog-wide), tools = `api_name`, all standardised to snake_case.
//! - RapidAPI parameter types become JSON Schema (`STRING`, `NUMBER`, `INTEGER`, `BOOLEAN`, `ENUM`
//!   (values unknown → string), `DATE (YYYY-MM-DD)` → date string, `ARRAY`, `OBJECT`); defaults are kept.
//! - `template_response` (a dict, or a truncated JSON string) becomes the mock response.
//! - Ground truth is `relevant APIs` — tools only, so expected calls are `any_arguments`: these tasks score
//!   **selection**, and pass@1 = selecting exactly the relevant tools (arguments unchecked). The oracle
//!   calls them with the parameters' defaults.
//! - `stabletoolbench:` gives each task its query's `api_list` as candidates (as the benchmark does);
//!   `stabletoolbench-merged:` shows the union of all api_lists, to measure the tool-count effect.
//! - ToolBench's own function naming (`<api>_for_<tool>`, standardised, last 64 characters kept) is
//!   reproduced by [`toolbench_name`]; the collisions it causes are reported as defects.

use super::{Defect, Imported, keep_valid, task};
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::dataset::{Dataset, ExpectedCall, Kind};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// ToolBench's `standardize`: lower-case, non-alphanumerics to `_`, runs collapsed, leading digits prefixed.
pub fn standardize(s: &str) -> String {
    let mut out = String::new();
    for c in s.to_lowercase().chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_matches('_').to_string();
    if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() { format!("get_{out}") } else { out }
}

/// ToolBench's function name: `<api>_for_<tool>`, standardised, the last 64 characters kept.
pub fn toolbench_name(api: &str, tool: &str) -> String {
    let full = format!("{}_for_{}", standardize(api), standardize(tool));
    let n = full.chars().count();
    full.chars().skip(n.saturating_sub(64)).collect()
}

fn name64(s: String) -> String {
    let mut s = s;
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s = format!("t_{s}");
    }
    s.chars().take(64).collect()
}

fn param_schema(p: &Value) -> (String, Value) {
    let name = p["name"].as_str().unwrap_or_default().to_string();
    let ty = p["type"].as_str().unwrap_or("STRING").to_uppercase();
    let mut s = match ty.as_str() {
        "NUMBER" => json!({"type": "number"}),
        "INTEGER" | "INT" => json!({"type": "integer"}),
        "BOOLEAN" | "BOOL" => json!({"type": "boolean"}),
        "ARRAY" => json!({"type": "array"}),
        "OBJECT" => json!({"type": "object"}),
        t if t.starts_with("DATE") => json!({"type": "string", "description": "Date, YYYY-MM-DD."}),
        _ => json!({"type": "string"}),
    };
    let desc = p["description"].as_str().unwrap_or_default();
    if !desc.is_empty() {
        s["description"] = json!(desc);
    }
    if let Some(d) = coerce(&p["default"], &s["type"]) {
        s["default"] = d;
    }
    (name, s)
}

/// A default coerced to the declared type (RapidAPI often writes numbers as strings and vice versa).
fn coerce(v: &Value, ty: &Value) -> Option<Value> {
    if v.is_null() || v.as_str() == Some("") {
        return None;
    }
    match (ty.as_str(), v) {
        (Some("string"), Value::String(_)) => Some(v.clone()),
        (Some("string"), other) => Some(json!(other.to_string())),
        (Some("number"), Value::String(s)) => s.parse::<f64>().ok().map(|f| json!(f)),
        (Some("integer"), Value::String(s)) => s.parse::<i64>().ok().map(|i| json!(i)),
        (Some("number" | "integer"), Value::Number(_)) => Some(v.clone()),
        (Some("boolean"), Value::Bool(_)) => Some(v.clone()),
        (Some("boolean"), Value::String(s)) => s.parse::<bool>().ok().map(|b| json!(b)),
        _ => None,
    }
}

/// A placeholder of the right type for a required parameter without a default.
fn placeholder(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("number") | Some("integer") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("example"),
    }
}

/// Tool name → (tool, an argument set the oracle can call it with: defaults of required parameters).
type CategoryTools = BTreeMap<String, (Tool, BTreeMap<String, Vec<Value>>)>;

pub fn import(path: &Path, merged: bool) -> Result<Imported> {
    let dir = path.join("solvable_queries").join("test_instruction");
    let files: Vec<PathBuf> = if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        let base = if dir.is_dir() { dir } else { path.to_path_buf() };
        let mut f: Vec<PathBuf> = std::fs::read_dir(&base)
            .map_err(|e| InputError::new(&base, format!("cannot read directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('G') && n.ends_with(".json")))
            .collect();
        f.sort();
        f
    };
    if files.is_empty() {
        return Err(InputError::new(path, "no G*_*.json query files (solvable_queries/test_instruction) here").into());
    }
    let mut defects = Vec::new();
    let mut servers: BTreeMap<String, BTreeMap<String, CategoryTools>> = BTreeMap::new();
    let mut toolbench_names: HashMap<String, String> = HashMap::new();
    let mut tasks = Vec::new();
    for file in &files {
        let fname = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let group = fname.trim_end_matches(".json").to_string();
        let records: Vec<Value> = match std::fs::read_to_string(file).ok().and_then(|t| serde_json::from_str(&t).ok()) {
            Some(r) => r,
            None => {
                defects.push(Defect { file: fname.clone(), line: 0, id: String::new(), action: "skipped", reason: "not a JSON array of records".into() });
                continue;
            }
        };
        for (i, r) in records.iter().enumerate() {
            let id = format!("{group}-{}", r["query_id"].as_i64().map(|q| q.to_string()).unwrap_or_else(|| (i + 1).to_string()));
            let d = |action: &'static str, reason: String| Defect { file: fname.clone(), line: i + 1, id: id.clone(), action, reason };
            let mut ids: HashMap<(String, String), String> = HashMap::new();
            let mut candidates = Vec::new();
            for api in r["api_list"].as_array().into_iter().flatten() {
                let tool_name = api["tool_name"].as_str().unwrap_or_default();
                let api_name = api["api_name"].as_str().unwrap_or_default();
                let server = name64(standardize(tool_name));
                let category = name64(format!("{}_of_{}", standardize(api["category_name"].as_str().unwrap_or("misc")), server));
                let name = name64(standardize(api_name));
                let tb = toolbench_name(api_name, tool_name);
                let origin = format!("{tool_name}/{api_name}");
                if let Some(prev) = toolbench_names.get(&tb) {
                    if *prev != origin {
                        defects.push(d("repaired", format!("ToolBench naming collision: `{origin}` and `{prev}` both become `{tb}`")));
                    }
                } else {
                    toolbench_names.insert(tb, origin);
                }
                let tools = servers.entry(server.clone()).or_default().entry(category.clone()).or_default();
                if !tools.contains_key(&name) {
                    let mut props = Map::new();
                    let mut required = Vec::new();
                    let mut defaults = BTreeMap::new();
                    for (group, req) in [("required_parameters", true), ("optional_parameters", false)] {
                        for p in api[group].as_array().into_iter().flatten() {
                            let (pname, schema) = param_schema(p);
                            if pname.is_empty() {
                                continue;
                            }
                            if req {
                                required.push(json!(pname));
                                let v = schema.get("default").cloned().unwrap_or_else(|| placeholder(&schema));
                                defaults.insert(pname.clone(), vec![v]);
                            }
                            props.insert(pname, schema);
                        }
                    }
                    let mock = match &api["template_response"] {
                        Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or_else(|_| {
                            defects.push(d("repaired", format!("template_response of `{api_name}` is a truncated JSON string; kept as text")));
                            json!({"text": s})
                        }),
                        Value::Null => json!({"ok": true}),
                        other => other.clone(),
                    };
                    let value = json!({
                        "name": name,
                        "title": api_name,
                        "description": api["api_description"].as_str().filter(|s| !s.is_empty()).unwrap_or("(no description)"),
                        "inputSchema": {"type": "object", "properties": props, "required": required},
                        "mockResponse": mock
                    });
                    match crate::catalog::load::parse_tool(&server, &category, &value) {
                        Ok(t) => {
                            tools.insert(name.clone(), (t, defaults));
                        }
                        Err(e) => {
                            defects.push(d("skipped", format!("API `{api_name}` of `{tool_name}` is not a valid tool: {e}")));
                            continue;
                        }
                    }
                }
                let tool_id = format!("{server}/{category}/{name}");
                ids.insert((tool_name.to_string(), api_name.to_string()), tool_id.clone());
                if !candidates.contains(&tool_id) {
                    candidates.push(tool_id);
                }
            }
            let mut expected = Vec::new();
            for pair in r["relevant APIs"].as_array().into_iter().flatten() {
                let (t, a) = (pair[0].as_str().unwrap_or_default(), pair[1].as_str().unwrap_or_default());
                match ids.get(&(t.to_string(), a.to_string())) {
                    Some(tool_id) => {
                        if expected.iter().any(|e: &ExpectedCall| e.tool == *tool_id) {
                            continue;
                        }
                        let (server, rest) = tool_id.split_once('/').unwrap_or_default();
                        let (category, name) = rest.split_once('/').unwrap_or_default();
                        let arguments = servers[server][category][name].1.clone();
                        expected.push(ExpectedCall { tool: tool_id.clone(), arguments, alternatives: vec![], any_arguments: true });
                    }
                    None => defects.push(d("repaired", format!("relevant API `{t}` / `{a}` is not in the query's api_list; dropped"))),
                }
            }
            if expected.is_empty() {
                defects.push(d("skipped", "no relevant API left".into()));
                continue;
            }
            let kind = if expected.len() > 1 { Kind::Multi } else { Kind::Single };
            let mut t = task(id.clone(), r["query"].as_str().unwrap_or_default().to_string(), kind, expected, group.clone(), i + 1);
            if !merged {
                t.candidates = candidates;
            }
            t.tags = vec![format!("stabletoolbench:{fname}")];
            tasks.push(t);
        }
    }
    let servers: Vec<Server> = servers
        .into_iter()
        .map(|(name, cats)| Server {
            description: format!("RapidAPI tool `{name}`. APIs: {}.", cats.values().flat_map(|t| t.keys().cloned()).collect::<Vec<_>>().join(", ")),
            title: None,
            categories: cats
                .into_iter()
                .map(|(c, tools)| Category { description: format!("`{c}` APIs."), name: c, tools: tools.into_values().map(|(t, _)| t).collect() })
                .collect(),
            name,
        })
        .collect();
    let catalog = Catalog::new("stabletoolbench", "StableToolBench RapidAPI tools from the queries' api_lists", servers);
    let mut dataset = Dataset { name: if merged { "stabletoolbench-merged".into() } else { "stabletoolbench".into() }, path: path.to_path_buf(), tasks };
    keep_valid(&catalog, &mut dataset, &mut defects, |t| t.tags.first().and_then(|g| g.strip_prefix("stabletoolbench:")).unwrap_or_default().to_string());
    Ok(Imported { catalog, dataset, defects })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolbench_naming() {
        assert_eq!(standardize("Songkick concert"), "songkick_concert");
        assert_eq!(standardize("TheClique"), "theclique");
        assert_eq!(standardize("4D Results"), "get_4d_results");
        assert_eq!(toolbench_name("Songkick concert", "TheClique"), "songkick_concert_for_theclique");
        let long = toolbench_name(&"a".repeat(70), "tool");
        assert_eq!(long.len(), 64);
        assert!(long.ends_with("_for_tool"), "the last 64 characters are kept");
    }

    #[test]
    fn rapidapi_types_and_defaults() {
        let (n, s) = param_schema(&json!({"name": "limit", "type": "NUMBER", "description": "", "default": "10"}));
        assert_eq!((n.as_str(), s), ("limit", json!({"type": "number", "default": 10.0})));
        let (_, s) = param_schema(&json!({"name": "d", "type": "DATE (YYYY-MM-DD)", "default": ""}));
        assert_eq!(s["type"], "string");
        assert!(s.get("default").is_none());
    }
}
