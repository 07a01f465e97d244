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

use super::read::Reader;
use super::{Imported, Ledger, fields, finish, task};
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
    if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() {
        format!("get_{out}")
    } else {
        out
    }
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

/// One RapidAPI parameter as (name, JSON Schema); `path` names it in reasons.
fn param_schema(p: &Value, path: &str) -> Result<(String, Value), String> {
    fields::as_object(p, path)?;
    let name = fields::req_str(p, path, "name")?.to_string();
    if name.trim().is_empty() {
        return Err(format!("`{path}.name` is empty"));
    }
    let ty = fields::opt_str(p, path, "type")?.unwrap_or("STRING").to_uppercase();
    let mut s = match ty.as_str() {
        "NUMBER" => json!({"type": "number"}),
        "INTEGER" | "INT" => json!({"type": "integer"}),
        "BOOLEAN" | "BOOL" => json!({"type": "boolean"}),
        "ARRAY" => json!({"type": "array"}),
        "OBJECT" => json!({"type": "object"}),
        t if t.starts_with("DATE") => json!({"type": "string", "description": "Date, YYYY-MM-DD."}),
        _ => json!({"type": "string"}),
    };
    let desc = fields::opt_str(p, path, "description")?.unwrap_or_default();
    if !desc.is_empty() {
        s["description"] = json!(desc);
    }
    if let Some(d) = coerce(&p["default"], &s["type"]) {
        s["default"] = d;
    }
    Ok((name, s))
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

/// Tools seen so far: server → category → tools.
type Servers = BTreeMap<String, BTreeMap<String, CategoryTools>>;

/// `query_id` as written: a number or a string.
fn query_id(r: &Value) -> Result<Option<String>, String> {
    match r.get("query_id") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        Some(Value::String(_)) => Ok(None),
        Some(other) => Err(fields::wrong("query_id", other, "a string or number")),
    }
}

pub fn import(path: &Path, merged: bool) -> Result<Imported> {
    let dir = path.join("solvable_queries").join("test_instruction");
    let files: Vec<PathBuf> = if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        let base = if dir.is_dir() { dir } else { path.to_path_buf() };
        let mut f: Vec<PathBuf> = std::fs::read_dir(&base)
            .map_err(|e| InputError::new(&base, format!("cannot read directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with('G') && n.ends_with(".json"))
            })
            .collect();
        f.sort();
        f
    };
    if files.is_empty() {
        return Err(InputError::new(
            path,
            "no G*_*.json query files (solvable_queries/test_instruction) here",
        )
        .into());
    }
    let mut ledger = Ledger::default();
    let mut state = State { servers: BTreeMap::new(), toolbench_names: HashMap::new() };
    let mut tasks = Vec::new();
    for file in &files {
        let fname = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let group = fname.trim_end_matches(".json").to_string();
        for raw in (Reader { name: &fname, tasks: true }).json_array(file, &mut ledger) {
            let r = &raw.value;
            let qid = match fields::as_object(r, "").and_then(|_| query_id(r)) {
                Ok(q) => q,
                Err(reason) => {
                    ledger.skip(&raw.at, "", reason);
                    continue;
                }
            };
            let record = raw.at.record.unwrap_or_default();
            let id = ledger.claim_id(
                &raw.at,
                &format!("{group}-{}", qid.clone().unwrap_or_else(|| record.to_string())),
            );
            if qid.is_none() {
                ledger.repair(
                    &raw.at,
                    &id,
                    format!("`query_id` is missing or empty: the record number {record} is used"),
                );
            }
            if raw.lossy {
                ledger.mark_repaired(&id);
            }
            let mut repairs = Vec::new();
            match record_task(r, &mut state, &mut repairs) {
                Ok((mut t, candidates)) => {
                    for rep in repairs {
                        ledger.repair(&raw.at, &id, rep);
                    }
                    t.id = id;
                    t.line = raw.at.line.unwrap_or_default();
                    t.category = group.clone();
                    if !merged {
                        t.candidates = candidates;
                    }
                    t.tags = vec![format!("stabletoolbench:{fname}")];
                    tasks.push(t);
                }
                Err(reason) => ledger.skip(&raw.at, &id, reason),
            }
        }
    }
    let servers: Vec<Server> = state
        .servers
        .into_iter()
        .map(|(name, cats)| Server {
            description: format!(
                "RapidAPI tool `{name}`. APIs: {}.",
                cats.values().flat_map(|t| t.keys().cloned()).collect::<Vec<_>>().join(", ")
            ),
            title: None,
            categories: cats
                .into_iter()
                .map(|(c, tools)| Category {
                    description: format!("`{c}` APIs."),
                    name: c,
                    tools: tools.into_values().map(|(t, _)| t).collect(),
                })
                .collect(),
            name,
        })
        .collect();
    let catalog = Catalog::new(
        "stabletoolbench",
        "StableToolBench RapidAPI tools from the queries' api_lists",
        servers,
    );
    let dataset = Dataset {
        name: if merged { "stabletoolbench-merged".into() } else { "stabletoolbench".into() },
        path: path.to_path_buf(),
        tasks,
    };
    Ok(finish(catalog, dataset, ledger))
}

/// What the import has built so far across records.
struct State {
    servers: Servers,
    /// ToolBench function name → the `tool/api` that first took it.
    toolbench_names: HashMap<String, String>,
}

/// Register one `api_list` entry as a tool; returns ((tool_name, api_name), tool id).
fn register_api(
    api: &Value,
    path: &str,
    state: &mut State,
    repairs: &mut Vec<String>,
) -> Result<((String, String), String), String> {
    fields::as_object(api, path)?;
    let tool_name = fields::req_str(api, path, "tool_name")?;
    let api_name = fields::req_str(api, path, "api_name")?;
    let category_name = fields::opt_str(api, path, "category_name")?.unwrap_or("misc");
    let description = fields::opt_str(api, path, "api_description")?
        .filter(|s| !s.is_empty())
        .unwrap_or("(no description)");
    let server = name64(standardize(tool_name));
    let category = name64(format!("{}_of_{}", standardize(category_name), server));
    let name = name64(standardize(api_name));
    let tb = toolbench_name(api_name, tool_name);
    let origin = format!("{tool_name}/{api_name}");
    match state.toolbench_names.get(&tb) {
        Some(prev) if *prev != origin => repairs.push(format!(
            "ToolBench naming collision: `{origin}` and `{prev}` both become `{tb}`"
        )),
        Some(_) => {}
        None => {
            state.toolbench_names.insert(tb, origin);
        }
    }
    let tools =
        state.servers.entry(server.clone()).or_default().entry(category.clone()).or_default();
    if !tools.contains_key(&name) {
        let mut props = Map::new();
        let mut required = Vec::new();
        let mut defaults = BTreeMap::new();
        for (group, req) in [("required_parameters", true), ("optional_parameters", false)] {
            let gpath = fields::join(path, group);
            for (i, p) in fields::opt_array(api, path, group, "an array of parameter objects")?
                .into_iter()
                .flatten()
                .enumerate()
            {
                let (pname, schema) = param_schema(p, &fields::index(&gpath, i))?;
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
                repairs.push(format!(
                    "template_response of `{api_name}` is a truncated JSON string; kept as text"
                ));
                json!({"text": s})
            }),
            Value::Null => json!({"ok": true}),
            other => other.clone(),
        };
        let value = json!({
            "name": name,
            "title": api_name,
            "description": description,
            "inputSchema": {"type": "object", "properties": props, "required": required},
            "mockResponse": mock,
            // Upstream data, kept verbatim: a literal `{{x}}` in it is text, not a placeholder.
            "mockMode": "static"
        });
        let t = crate::catalog::load::parse_tool(&server, &category, &value)
            .map_err(|e| format!("API `{api_name}` of `{tool_name}` is not a valid tool: {e}"))?;
        tools.insert(name.clone(), (t, defaults));
    }
    Ok(((tool_name.to_string(), api_name.to_string()), format!("{server}/{category}/{name}")))
}

/// One (object) record as a task and its `api_list` candidates (id, line, category and tags set by the
/// caller), or why it is skipped.
fn record_task(
    r: &Value,
    state: &mut State,
    repairs: &mut Vec<String>,
) -> Result<(crate::dataset::Task, Vec<String>), String> {
    let query = fields::req_str(r, "", "query")?;
    if query.trim().is_empty() {
        return Err("`query` is empty".into());
    }
    let mut ids: HashMap<(String, String), String> = HashMap::new();
    let mut candidates = Vec::new();
    for (i, api) in
        fields::req_array(r, "", "api_list", "an array of API objects")?.iter().enumerate()
    {
        let path = fields::index("api_list", i);
        match register_api(api, &path, state, repairs) {
            Ok((key, tool_id)) => {
                ids.insert(key, tool_id.clone());
                if !candidates.contains(&tool_id) {
                    candidates.push(tool_id);
                }
            }
            Err(reason) => repairs.push(format!("{reason}: that API is not offered")),
        }
    }
    let mut expected = Vec::new();
    for (i, pair) in fields::req_array(r, "", "relevant APIs", "an array of [tool, api] pairs")?
        .iter()
        .enumerate()
    {
        let path = fields::index("relevant APIs", i);
        let pair = fields::strings(fields::as_array(pair, &path, "a [tool, api] pair")?, &path)?;
        let [t, a] = pair[..] else {
            return Err(format!(
                "`{path}` has {} elements, expected a [tool, api] pair",
                pair.len()
            ));
        };
        match ids.get(&(t.to_string(), a.to_string())) {
            Some(tool_id) => {
                if expected.iter().any(|e: &ExpectedCall| e.tool == *tool_id) {
                    continue;
                }
                let (server, rest) = tool_id.split_once('/').unwrap_or_default();
                let (category, name) = rest.split_once('/').unwrap_or_default();
                let arguments = state.servers[server][category][name].1.clone();
                expected.push(ExpectedCall {
                    tool: tool_id.clone(),
                    arguments,
                    alternatives: vec![],
                    any_arguments: true,
                });
            }
            None => repairs.push(format!(
                "relevant API `{t}` / `{a}` is not in the query's api_list; dropped"
            )),
        }
    }
    if expected.is_empty() {
        return Err("no relevant API left".into());
    }
    let kind = if expected.len() > 1 { Kind::Multi } else { Kind::Single };
    Ok((task(String::new(), query.to_string(), kind, expected, String::new(), 0), candidates))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolbench_naming() {
        assert_eq!(standardize("Songkick concert"), "songkick_concert");
        assert_eq!(standardize("TheClique"), "theclique");
        assert_eq!(standardize("4D Results"), "get_4d_results");
        assert_eq!(
            toolbench_name("Songkick concert", "TheClique"),
            "songkick_concert_for_theclique"
        );
        let long = toolbench_name(&"a".repeat(70), "tool");
        assert_eq!(long.len(), 64);
        assert!(long.ends_with("_for_tool"), "the last 64 characters are kept");
    }

    #[test]
    fn rapidapi_types_and_defaults() {
        let (n, s) = param_schema(
            &json!({"name": "limit", "type": "NUMBER", "description": "", "default": "10"}),
            "p",
        )
        .unwrap();
        assert_eq!((n.as_str(), s), ("limit", json!({"type": "number", "default": 10.0})));
        let (_, s) =
            param_schema(&json!({"name": "d", "type": "DATE (YYYY-MM-DD)", "default": ""}), "p")
                .unwrap();
        assert_eq!(s["type"], "string");
        assert!(s.get("default").is_none());
    }
}
