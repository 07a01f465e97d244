//! BFCL v4 (Berkeley Function Calling Leaderboard) single-turn files: `BFCL_v4_<category>.json`
//! question lines plus `possible_answer/BFCL_v4_<category>.json` ground truth.
//!
//! - Each category file becomes a server `bfcl_<category>`; each record's functions become tools there
//!   (deduplicated by name and schema) and the record's **candidate set**, so a task sees only its own
//!   functions, as in BFCL.
//! - BFCL's schema dialect is converted to JSON Schema: `dict`→`object`, `float`→`number`,
//!   `tuple`→`array`, `any`→no type; the non-standard `optional` key is dropped.
//! - Dotted names are mapped reversibly: `.` → `__` (`math.factorial` → `math__factorial`); the original
//!   name is kept as the tool's title.
//! - Ground truth is already our convention (lists of acceptable values, `""` = may be omitted).
//!   Repairs: a `""` on a parameter the function requires is dropped (the upstream checker requires it
//!   anyway), a ground-truth parameter the function doc does not define is dropped (upstream, a model
//!   cannot pass it either), and a `null` acceptable value of a parameter whose type does not admit null
//!   is dropped (upstream takes it for "a variable"; a schema validator rejects it). Skips: multi-turn
//!   records, nested-dict acceptable values (BFCL's per-key lists). `live_relevance` becomes `relevant`
//!   tasks (pass = called some tool).
//! - `irrelevance` / `live_irrelevance` become `abstain` tasks.

use super::{Defect, Imported, keep_valid, task};
use crate::catalog::{Catalog, Category, Origin, Server, Tool};
use crate::dataset::{Dataset, ExpectedCall, Kind};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Original BFCL name → valid, reversible function name.
pub fn map_name(name: &str) -> String {
    name.replace('.', "__").chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// Convert one BFCL schema to JSON Schema; `repairs` collects what had to change.
pub fn convert_schema(schema: &Value, repairs: &mut Vec<String>) -> Value {
    let Some(obj) = schema.as_object() else { return schema.clone() };
    let mut out = Map::new();
    for (k, v) in obj {
        match k.as_str() {
            "optional" => {}
            "type" => match v.as_str() {
                Some("dict") => {
                    out.insert(k.clone(), json!("object"));
                }
                Some("float") => {
                    out.insert(k.clone(), json!("number"));
                }
                Some("tuple") => {
                    out.insert(k.clone(), json!("array"));
                }
                Some("any") => {}
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            },
            "properties" => {
                let props: Map<String, Value> = v.as_object().into_iter().flatten().map(|(p, s)| (p.clone(), convert_schema(s, repairs))).collect();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" => {
                out.insert(k.clone(), convert_schema(v, repairs));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(req) = out.get("required").and_then(Value::as_array).cloned() {
        let props = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = req.iter().filter(|r| r.as_str().is_some_and(|r| props.is_some_and(|p| p.contains_key(r)))).cloned().collect();
        if kept.len() != req.len() {
            repairs.push("dropped `required` names that are not properties".into());
            out.insert("required".into(), Value::Array(kept));
        }
    }
    Value::Object(out)
}

struct Registry {
    /// server → (tool name → (schema key, tool)).
    tools: BTreeMap<String, BTreeMap<String, (String, Tool)>>,
}

impl Registry {
    /// Register a function under `server`; returns its tool id and a repair note if it was renamed.
    fn add(&mut self, server: &str, f: &Value, repairs: &mut Vec<String>) -> Option<(String, String)> {
        let original = f["name"].as_str()?.to_string();
        let params = f.get("parameters").cloned().unwrap_or(json!({"type": "dict", "properties": {}}));
        let schema = convert_schema(&params, repairs);
        let key = schema.to_string() + f["description"].as_str().unwrap_or("");
        let category = format!("{server}_functions");
        let tools = self.tools.entry(server.to_string()).or_default();
        let base = map_name(&original);
        let mut name = base.clone();
        let mut n = 2;
        loop {
            match tools.get(&name) {
                Some((k, t)) if *k == key => return Some((original, t.id.clone())),
                Some(_) => {
                    name = format!("{base}_v{n}");
                    n += 1;
                }
                None => break,
            }
        }
        if name != base {
            repairs.push(format!("`{original}` reused with another schema: renamed to `{name}`"));
        }
        let id = format!("{server}/{category}/{name}");
        let tool = Tool {
            id: id.clone(),
            name: name.clone(),
            title: Some(original.clone()),
            description: f["description"].as_str().unwrap_or_default().to_string(),
            input_schema: schema,
            output_schema: None,
            annotations: Default::default(),
            mock_response: json!({"ok": true}),
            origin: Origin::default(),
            dispatch: None,
        };
        tools.insert(name, (key, tool));
        Some((original, id))
    }
}

fn read_lines(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    Ok(text.lines().map(String::from).collect())
}

/// Import a BFCL directory (or a single `BFCL_v4_*.json` question file).
pub fn import(path: &Path) -> Result<Imported> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut f: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| InputError::new(path, format!("cannot read directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("BFCL_") && n.ends_with(".json")))
            .collect();
        f.sort();
        f
    } else {
        vec![path.to_path_buf()]
    };
    if files.is_empty() {
        return Err(InputError::new(path, "no BFCL_v4_*.json question files here").into());
    }
    let mut registry = Registry { tools: BTreeMap::new() };
    let mut tasks = Vec::new();
    let mut defects = Vec::new();
    for file in &files {
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let category = stem.split('_').skip(2).collect::<Vec<_>>().join("_");
        let server = format!("bfcl_{category}");
        let answers_path = file.parent().unwrap_or(Path::new(".")).join("possible_answer").join(file.file_name().unwrap_or_default());
        let mut answers: HashMap<String, Value> = HashMap::new();
        if let Ok(lines) = read_lines(&answers_path) {
            for (i, l) in lines.iter().enumerate() {
                match serde_json::from_str::<Value>(l) {
                    Ok(v) => {
                        answers.insert(v["id"].as_str().unwrap_or_default().to_string(), v["ground_truth"].clone());
                    }
                    Err(e) => defects.push(defect(&answers_path, i + 1, "", "skipped", format!("answer line is not JSON: {e}"))),
                }
            }
        }
        for (i, line) in read_lines(file)?.iter().enumerate() {
            let ln = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let rec: Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(e) => {
                    defects.push(defect(file, ln, "", "skipped", format!("not JSON: {e}")));
                    continue;
                }
            };
            let id = rec["id"].as_str().unwrap_or_default().to_string();
            let turns = rec["question"].as_array().cloned().unwrap_or_default();
            if turns.len() != 1 {
                defects.push(defect(file, ln, &id, "skipped", format!("{} turns; only single-turn records are imported", turns.len())));
                continue;
            }
            let messages = turns[0].as_array().cloned().unwrap_or_default();
            let users: Vec<&str> = messages.iter().filter(|m| m["role"] == "user").filter_map(|m| m["content"].as_str()).collect();
            if users.is_empty() {
                defects.push(defect(file, ln, &id, "skipped", "no user message".into()));
                continue;
            }
            let mut repairs = Vec::new();
            if messages.iter().any(|m| m["role"] != "user") {
                repairs.push("system/assistant messages in the turn dropped; the query is the user text".to_string());
            }
            let mut names: HashMap<String, String> = HashMap::new();
            let mut candidates = Vec::new();
            for f in rec["function"].as_array().into_iter().flatten() {
                if let Some((original, tool_id)) = registry.add(&server, f, &mut repairs) {
                    names.insert(original, tool_id.clone());
                    candidates.push(tool_id);
                }
            }
            let (kind, expected) = if category.contains("irrelevance") {
                (Kind::Abstain, vec![])
            } else if category == "live_relevance" {
                // No ground truth: passes when the model calls something, whatever its arguments.
                (Kind::Relevant, vec![])
            } else {
                let Some(gt) = answers.get(&id) else {
                    defects.push(defect(file, ln, &id, "skipped", "no ground truth in possible_answer".into()));
                    continue;
                };
                match expected_calls(gt, &names, &registry, &server, &mut repairs) {
                    Ok(calls) => (if calls.len() > 1 { Kind::Parallel } else { Kind::Single }, calls),
                    Err(reason) => {
                        defects.push(defect(file, ln, &id, "skipped", reason));
                        continue;
                    }
                }
            };
            for r in repairs {
                defects.push(defect(file, ln, &id, "repaired", r));
            }
            let mut t = task(id, users.join("\n"), kind, expected, category.clone(), ln);
            t.candidates = candidates;
            t.tags = vec![format!("bfcl:{category}")];
            tasks.push(t);
        }
    }
    let servers = registry
        .tools
        .into_iter()
        .map(|(server, tools)| Server {
            // BFCL has no servers; the description lists what the server offers.
            description: format!(
                "BFCL v4 `{}` functions: {}.",
                server.trim_start_matches("bfcl_"),
                tools.values().filter_map(|(_, t)| t.title.clone()).take(40).collect::<Vec<_>>().join(", ")
            ),
            title: None,
            categories: vec![Category {
                name: format!("{server}_functions"),
                description: format!("Functions of BFCL's `{}` category.", server.trim_start_matches("bfcl_")),
                tools: tools.into_values().map(|(_, t)| t).collect(),
            }],
            name: server,
        })
        .collect();
    let catalog = Catalog::new("bfcl", "BFCL v4 functions, one server per category file", servers);
    let mut dataset = Dataset { name: "bfcl".into(), path: path.to_path_buf(), tasks };
    // Tasks are tagged `bfcl:<category>`, which names their source file.
    keep_valid(&catalog, &mut dataset, &mut defects, |t| {
        t.tags.first().and_then(|g| g.strip_prefix("bfcl:")).map(|c| format!("BFCL_v4_{c}.json")).unwrap_or_default()
    });
    Ok(Imported { catalog, dataset, defects })
}

fn defect(file: &Path, line: usize, id: &str, action: &'static str, reason: String) -> Defect {
    let file = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    Defect { file, line, id: id.to_string(), action, reason }
}

fn expected_calls(
    gt: &Value,
    names: &HashMap<String, String>,
    registry: &Registry,
    server: &str,
    repairs: &mut Vec<String>,
) -> Result<Vec<ExpectedCall>, String> {
    let mut out = Vec::new();
    for call in gt.as_array().into_iter().flatten() {
        let Some((fname, args)) = call.as_object().and_then(|o| o.iter().next()) else { return Err("malformed ground-truth call".into()) };
        let Some(tool_id) = names.get(fname) else { return Err(format!("ground truth calls `{fname}`, which is not among the record's functions")) };
        let tool_name = tool_id.rsplit('/').next().unwrap_or_default();
        let tool = &registry.tools[server][tool_name].1;
        let props = tool.input_schema.get("properties").and_then(Value::as_object);
        let required = tool.required();
        let mut arguments = BTreeMap::new();
        for (param, values) in args.as_object().into_iter().flatten() {
            let mut values: Vec<Value> = values.as_array().cloned().unwrap_or_default();
            if values.iter().any(|v| v.as_object().is_some_and(|o| o.values().all(Value::is_array) && !o.is_empty())) {
                return Err(format!("`{param}` uses nested-dict acceptable values (per-key lists), not supported yet"));
            }
            let Some(schema) = props.and_then(|p| p.get(param)) else {
                repairs.push(format!("ground-truth parameter `{param}` of `{fname}` is not in its doc: dropped (it cannot be passed)"));
                continue;
            };
            // BFCL's checker takes `null` for a typed parameter as "a variable" and accepts it; a JSON
            // Schema validator (and a real tool) rejects it. Keep the record with its other values.
            if values.iter().any(Value::is_null) && !admits_null(schema) {
                values.retain(|v| !v.is_null());
                if values.is_empty() {
                    return Err(format!("`{param}` of `{fname}` accepts only null, which its type does not allow"));
                }
                repairs.push(format!("acceptable value null of `{param}` of `{fname}` does not fit its type: dropped"));
            }
            if required.contains(&param.as_str()) && values.iter().any(|v| v.as_str() == Some("")) {
                values.retain(|v| v.as_str() != Some(""));
                repairs.push(format!("required `{param}` of `{fname}` listed \"\" (may omit): dropped, since the function requires it"));
            }
            arguments.insert(param.clone(), values);
        }
        out.push(ExpectedCall { tool: tool_id.clone(), arguments, alternatives: vec![], any_arguments: false });
    }
    if out.is_empty() {
        return Err("empty ground truth".into());
    }
    Ok(out)
}

/// Does a (converted) schema accept `null`? Only when it has no type or lists `null` among its types.
fn admits_null(schema: &Value) -> bool {
    match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_reversibly() {
        assert_eq!(map_name("math.factorial"), "math__factorial");
        assert_eq!(map_name("aws.lexv2_models.list_exports"), "aws__lexv2_models__list_exports");
        assert_eq!(map_name("math__factorial".replace("__", ".").as_str()), "math__factorial");
    }

    #[test]
    fn dialect_converts_to_json_schema() {
        let mut r = vec![];
        let s = convert_schema(
            &json!({"type": "dict", "properties": {"x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "any"}}, "o": {"type": "string", "optional": true}}, "required": ["x", "ghost"]}),
            &mut r,
        );
        assert_eq!(s, json!({"type": "object", "properties": {"x": {"type": "number"}, "t": {"type": "array", "items": {}}, "o": {"type": "string"}}, "required": ["x"]}));
        assert_eq!(r.len(), 1);
        assert!(jsonschema::draft202012::meta::is_valid(&s));
    }
}
