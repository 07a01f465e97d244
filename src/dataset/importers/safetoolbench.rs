//! SafeToolBench (`query_<CAT>_<SA|MA>.json` + `api/api.json`): risky instructions with a risk category
//! and the tool plan that would carry them out, over 16 apps / 116 APIs.
//!
//! - Each app becomes a server with one category; each API a tool. Argument types are written inside
//!   the key names (`"temperature (int)"`) and are parsed out; `additional_required_arguments` and
//!   `required_arguments` are required, `optional_arguments` optional. APIs declare no annotations.
//! - Each record becomes a `refuse` task: its risk category maps to ours (Bias & Offensiveness →
//!   offensive_content), the APIs of its plan become `forbidden`, and the used apps' tools its candidate
//!   set. Passing = executing nothing (all tools are undeclared, so any call may change state).
//! - Defects survived: apps missing from api.json (also `WeChat` vs `Wechat`, matched case-insensitively
//!   and reported), unknown APIs (dropped from `forbidden`, reported), duplicated instructions (later
//!   copies skipped), records whose `quality_score` is below the paper's threshold of 7 (skipped).
//! - The benchmark has no benign controls, so only the refusal rate is meaningful on it, not false refusal.

use super::{Defect, Imported, keep_valid, task};
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::dataset::{Dataset, Kind, Risk};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// Paper's quality threshold: records scored below it were meant to be filtered out.
pub const MIN_QUALITY: u32 = 7;

/// `"temperature (int)"` → (`temperature`, JSON Schema type).
pub fn parse_arg(key: &str) -> (String, Option<&'static str>) {
    let (name, ty) = match key.rsplit_once('(') {
        Some((n, t)) => (n.trim(), t.trim_end_matches(')').trim().to_lowercase()),
        None => (key.trim(), String::new()),
    };
    let ty = match ty.as_str() {
        "string" | "str" | "datetime" | "date" | "file" => Some("string"),
        "int" | "integer" => Some("integer"),
        "float" | "number" | "double" => Some("number"),
        "bool" | "boolean" => Some("boolean"),
        "array" | "list" => Some("array"),
        "dict" | "object" => Some("object"),
        _ => None,
    };
    (name.to_string(), ty)
}

pub fn server_name(app: &str) -> String {
    app.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

fn app_tools(app: &Value) -> Vec<Tool> {
    let server = server_name(app["app_name"].as_str().unwrap_or_default());
    let mut tools = Vec::new();
    for (api, spec) in app["APIs"].as_object().into_iter().flatten() {
        let mut props = Map::new();
        let mut required = Vec::new();
        for (group, is_required) in [("required_arguments", true), ("additional_required_arguments", true), ("optional_arguments", false)] {
            for (k, desc) in spec[group].as_object().into_iter().flatten() {
                let (name, ty) = parse_arg(k);
                let mut p = json!({"description": desc});
                if let Some(t) = ty {
                    p["type"] = json!(t);
                }
                props.insert(name.clone(), p);
                if is_required {
                    required.push(json!(name));
                }
            }
        }
        let mut out = Map::new();
        for (k, desc) in spec["results_arguments"].as_object().into_iter().flatten() {
            let (name, ty) = parse_arg(k);
            out.insert(name, ty.map(|t| json!({"type": t, "description": desc})).unwrap_or_else(|| json!({"description": desc})));
        }
        let value = json!({
            "name": api,
            "description": spec["desc"],
            "inputSchema": {"type": "object", "properties": props, "required": required},
            "outputSchema": {"type": "object", "properties": out},
            "mockResponse": {"status": "success"}
        });
        if let Ok(t) = crate::catalog::load::parse_tool(&server, &format!("{server}_apis"), &value) {
            tools.push(t);
        }
    }
    tools
}

pub fn import(path: &Path) -> Result<Imported> {
    let dir = if path.is_dir() { path.to_path_buf() } else { path.parent().unwrap_or(Path::new(".")).to_path_buf() };
    let api_path = dir.join("api").join("api.json");
    let apps: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&api_path).map_err(|e| InputError::new(&api_path, format!("cannot read: {e}")))?)
        .map_err(|e| InputError::new(&api_path, format!("not JSON: {e}")).at_line(e.line()))?;
    let mut servers = Vec::new();
    let mut app_index: BTreeMap<String, String> = BTreeMap::new(); // lower-case app name → server
    for app in &apps {
        let name = app["app_name"].as_str().unwrap_or_default();
        let server = server_name(name);
        app_index.insert(name.to_lowercase(), server.clone());
        servers.push(Server {
            name: server.clone(),
            title: Some(name.to_string()),
            description: app["desc"].as_str().unwrap_or_default().to_string(),
            categories: vec![Category { name: format!("{server}_apis"), description: format!("{name} APIs."), tools: app_tools(app) }],
        });
    }
    let catalog = Catalog::new("safetoolbench", "SafeToolBench apps and APIs", servers);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| InputError::new(&dir, format!("cannot read directory: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("query_") && n.ends_with(".json")))
        .collect();
    files.sort();
    if !path.is_dir() {
        files.retain(|f| f == path);
    }
    let mut defects = Vec::new();
    let mut tasks = Vec::new();
    let mut seen = HashSet::new();
    for file in &files {
        let fname = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let records: Vec<Value> = match std::fs::read_to_string(file).ok().and_then(|t| serde_json::from_str(&t).ok()) {
            Some(r) => r,
            None => {
                defects.push(Defect { file: fname.clone(), line: 0, id: String::new(), action: "skipped", reason: "not a JSON array of records".into() });
                continue;
            }
        };
        let stem = fname.trim_start_matches("query_").trim_end_matches(".json").to_string();
        for (i, r) in records.iter().enumerate() {
            let id = format!("{stem}-{:03}", i + 1);
            let d = |action: &'static str, reason: String| Defect { file: fname.clone(), line: i + 1, id: id.clone(), action, reason };
            let instruction = r["instruction"].as_str().unwrap_or_default().to_string();
            let quality: u32 = r["quality_score"].as_str().and_then(|q| q.trim().parse().ok()).unwrap_or(0);
            if quality < MIN_QUALITY {
                defects.push(d("skipped", format!("quality_score {quality} is below the paper's threshold of {MIN_QUALITY}")));
                continue;
            }
            if !seen.insert(instruction.clone()) {
                defects.push(d("skipped", "duplicated instruction".into()));
                continue;
            }
            let risk = match r["Risk category"].as_str().unwrap_or_default() {
                "Privacy Leak" => Risk::PrivacyLeak,
                "Property Damage" => Risk::PropertyDamage,
                "Physical Injury" => Risk::PhysicalInjury,
                "Bias & Offensiveness" => Risk::OffensiveContent,
                other => {
                    defects.push(d("skipped", format!("unknown risk category `{other}`")));
                    continue;
                }
            };
            let mut used_servers = Vec::new();
            for app in r["output"]["used_app"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                match app_index.get(&app.to_lowercase()) {
                    Some(s) => {
                        if !apps.iter().any(|a| a["app_name"] == app) {
                            defects.push(d("repaired", format!("app `{app}` matched case-insensitively")));
                        }
                        used_servers.push(s.clone());
                    }
                    None => defects.push(d("repaired", format!("app `{app}` is not in api.json; its APIs cannot be forbidden"))),
                }
            }
            let mut forbidden = Vec::new();
            for step in r["output"]["used_api"].as_array().into_iter().flatten() {
                for api in step.as_object().into_iter().flatten().map(|(k, _)| k).filter(|k| *k != "use_times") {
                    let found = used_servers.iter().map(|s| format!("{s}/{s}_apis/{api}")).find(|id| catalog.get(id).is_some());
                    match found {
                        Some(idv) if !forbidden.contains(&idv) => forbidden.push(idv),
                        Some(_) => {}
                        None => defects.push(d("repaired", format!("API `{api}` is not in the used apps; dropped from `forbidden`"))),
                    }
                }
            }
            let candidates: Vec<String> = catalog.tools().filter(|t| used_servers.contains(&t.server.name)).map(|t| t.tool.id.clone()).collect();
            let mut t = task(id.clone(), instruction, Kind::Refuse, vec![], format!("safetoolbench:{stem}"), i + 1);
            t.risk = Some(risk);
            t.forbidden = forbidden;
            t.candidates = candidates;
            t.tags = vec![format!("safetoolbench:{fname}"), "safety".into()];
            if t.candidates.is_empty() {
                defects.push(d("skipped", "none of the used apps is in api.json".into()));
                continue;
            }
            tasks.push(t);
        }
    }
    let mut dataset = Dataset { name: "safetoolbench".into(), path: path.to_path_buf(), tasks };
    keep_valid(&catalog, &mut dataset, &mut defects, |t| t.tags.first().and_then(|g| g.strip_prefix("safetoolbench:")).unwrap_or_default().to_string());
    Ok(Imported { catalog, dataset, defects })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_types_come_out_of_key_names() {
        assert_eq!(parse_arg("temperature (int)"), ("temperature".into(), Some("integer")));
        assert_eq!(parse_arg("amount (Float)"), ("amount".into(), Some("number")));
        assert_eq!(parse_arg("when (datetime)"), ("when".into(), Some("string")));
        assert_eq!(parse_arg("blob"), ("blob".into(), None));
    }
}
