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
//!   copies skipped), records whose `quality_score` is below `--min-quality` (default 7, the paper's
//!   threshold; 0 keeps all; skipped with their score). APIs keep their `results_arguments` as the
//!   tool's `outputSchema`.
//! - The benchmark has no benign controls, so only the refusal rate is meaningful on it, not false refusal.

use super::read::Reader;
use super::{At, Imported, Ledger, fields, finish, task};
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::dataset::{Dataset, Kind, Risk};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
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

/// One app's APIs as tools; an API that cannot be a tool is reported (it is not a task record).
fn app_tools(app: &Value, server: &str, at: &At, ledger: &mut Ledger) -> Result<Vec<Tool>, String> {
    let app_name = app["app_name"].as_str().unwrap_or_default();
    let mut tools = Vec::new();
    for (api, spec) in fields::req_object(app, "", "APIs")? {
        let path = fields::join("APIs", api);
        match api_tool(api, spec, &path, server) {
            Ok(t) => tools.push(t),
            Err(reason) => ledger.note(
                at,
                api,
                "skipped",
                format!("API `{api}` of `{app_name}` is not imported: {reason}"),
            ),
        }
    }
    Ok(tools)
}

fn api_tool(api: &str, spec: &Value, path: &str, server: &str) -> Result<Tool, String> {
    fields::as_object(spec, path)?;
    let mut props = Map::new();
    let mut required = Vec::new();
    for (group, is_required) in [
        ("required_arguments", true),
        ("additional_required_arguments", true),
        ("optional_arguments", false),
    ] {
        let gpath = fields::join(path, group);
        for (k, desc) in fields::opt_object(spec, path, group)?.into_iter().flatten() {
            let desc = fields::as_str(desc, &fields::join(&gpath, k))?;
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
    let rpath = fields::join(path, "results_arguments");
    for (k, desc) in fields::opt_object(spec, path, "results_arguments")?.into_iter().flatten() {
        let desc = fields::as_str(desc, &fields::join(&rpath, k))?;
        let (name, ty) = parse_arg(k);
        out.insert(
            name,
            ty.map(|t| json!({"type": t, "description": desc}))
                .unwrap_or_else(|| json!({"description": desc})),
        );
    }
    let value = json!({
        "name": api,
        "description": fields::opt_str(spec, path, "desc")?.unwrap_or_default(),
        "inputSchema": {"type": "object", "properties": props, "required": required},
        "outputSchema": {"type": "object", "properties": out},
        "mockResponse": {"status": "success"},
        "mockMode": "static"
    });
    crate::catalog::load::parse_tool(server, &format!("{server}_apis"), &value)
}

/// The apps of `api/api.json` as servers, and lower-case app name → server.
fn read_apps(
    api_path: &Path,
    ledger: &mut Ledger,
) -> (Vec<Server>, BTreeMap<String, String>, Vec<String>) {
    let mut servers: Vec<Server> = Vec::new();
    let mut app_index: BTreeMap<String, String> = BTreeMap::new(); // lower-case app name → server
    let mut app_names = Vec::new();
    for raw in (Reader { name: "api/api.json", tasks: false }).json_array(api_path, ledger) {
        let app = &raw.value;
        let name =
            match fields::as_object(app, "").and_then(|_| fields::req_str(app, "", "app_name")) {
                Ok(n) => n.to_string(),
                Err(reason) => {
                    ledger.note(&raw.at, "", "skipped", format!("app not imported: {reason}"));
                    continue;
                }
            };
        let server = server_name(&name);
        if servers.iter().any(|s| s.name == server) {
            ledger.note(&raw.at, &name, "skipped", format!("app `{name}` is defined twice (as server `{server}`); this definition is not imported"));
            continue;
        }
        let parts = fields::opt_str(app, "", "desc").and_then(|d| {
            Ok((d.unwrap_or_default().to_string(), app_tools(app, &server, &raw.at, ledger)?))
        });
        let (description, tools) = match parts {
            Ok(p) => p,
            Err(reason) => {
                ledger.note(&raw.at, &name, "skipped", format!("app not imported: {reason}"));
                continue;
            }
        };
        app_index.insert(name.to_lowercase(), server.clone());
        app_names.push(name.clone());
        servers.push(Server {
            name: server.clone(),
            title: Some(name.clone()),
            description,
            categories: vec![Category {
                name: format!("{server}_apis"),
                description: format!("{name} APIs."),
                tools,
            }],
        });
    }
    // Sorted by name, the order a native catalog directory loads in (one file per server), so a direct
    // run and a run on the files `import` writes present the same catalog.
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    (servers, app_index, app_names)
}

/// `quality_score` as a number: SafeToolBench writes it as a string ("8"); a number is taken as well.
fn quality(r: &Value) -> Result<f64, String> {
    match r.get("quality_score") {
        None | Some(Value::Null) => Err("`quality_score` is missing".into()),
        Some(Value::Number(n)) => {
            n.as_f64().ok_or_else(|| "`quality_score` is not a finite number".into())
        }
        Some(Value::String(s)) => {
            s.trim().parse::<f64>().map_err(|_| format!("`quality_score` \"{s}\" is not a number"))
        }
        Some(other) => Err(fields::wrong("quality_score", other, "a number or a numeric string")),
    }
}

/// Import SafeToolBench; records with a `quality_score` below `min_quality` are skipped (0 keeps all).
pub fn import(path: &Path, min_quality: u32) -> Result<Imported> {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent().unwrap_or(Path::new(".")).to_path_buf()
    };
    let api_path = dir.join("api").join("api.json");
    if !api_path.is_file() {
        return Err(InputError::new(&api_path, "missing: SafeToolBench's tool definitions (api/api.json) are needed beside the query files").into());
    }
    let mut ledger = Ledger::default();
    let (servers, app_index, app_names) = read_apps(&api_path, &mut ledger);
    let catalog = Catalog::new("safetoolbench", "SafeToolBench apps and APIs", servers);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| InputError::new(&dir, format!("cannot read directory: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("query_") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    if !path.is_dir() {
        files.retain(|f| f == path);
    }
    let mut tasks = Vec::new();
    let mut seen: HashMap<String, At> = HashMap::new();
    for file in &files {
        let fname = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let stem = fname.trim_start_matches("query_").trim_end_matches(".json").to_string();
        for raw in (Reader { name: &fname, tasks: true }).json_array(file, &mut ledger) {
            let id = ledger
                .claim_id(&raw.at, &format!("{stem}-{:03}", raw.at.record.unwrap_or_default()));
            if raw.lossy {
                ledger.mark_repaired(&id);
            }
            let r = &raw.value;
            let mut repairs = Vec::new();
            let outcome = fields::as_object(r, "").and_then(|_| {
                let instruction = fields::req_str(r, "", "instruction")?;
                if instruction.trim().is_empty() {
                    return Err("`instruction` is empty".to_string());
                }
                if min_quality > 0 {
                    let q = quality(r).map_err(|e| format!("{e}; it is needed for --min-quality {min_quality} (0 keeps all)"))?;
                    if q < f64::from(min_quality) {
                        return Err(format!("quality_score {q} is below --min-quality {min_quality} (the paper's threshold is {MIN_QUALITY})"));
                    }
                }
                if let Some(first) = seen.get(instruction) {
                    return Err(format!("duplicated instruction: {} has the same", first.describe()));
                }
                seen.insert(instruction.to_string(), raw.at.clone());
                record_task(r, &catalog, &app_index, &app_names, &mut repairs)
            });
            match outcome {
                Ok(mut t) => {
                    for rep in repairs {
                        ledger.repair(&raw.at, &id, rep);
                    }
                    t.id = id;
                    t.line = raw.at.line.unwrap_or_default();
                    t.category = format!("safetoolbench:{stem}");
                    t.tags = vec![format!("safetoolbench:{fname}"), "safety".into()];
                    tasks.push(t);
                }
                Err(reason) => ledger.skip(&raw.at, &id, reason),
            }
        }
    }
    let dataset = Dataset { name: "safetoolbench".into(), path: path.to_path_buf(), tasks };
    Ok(finish(catalog, dataset, ledger))
}

/// One (object) record as a `refuse` task, or why it is skipped.
fn record_task(
    r: &Value,
    catalog: &Catalog,
    app_index: &BTreeMap<String, String>,
    app_names: &[String],
    repairs: &mut Vec<String>,
) -> Result<crate::dataset::Task, String> {
    let risk = match fields::req_str(r, "", "Risk category")? {
        "Privacy Leak" => Risk::PrivacyLeak,
        "Property Damage" => Risk::PropertyDamage,
        "Physical Injury" => Risk::PhysicalInjury,
        "Bias & Offensiveness" => Risk::OffensiveContent,
        other => return Err(format!("unknown risk category `{other}`")),
    };
    fields::req_object(r, "", "output")?;
    let output = &r["output"];
    let mut used_servers = Vec::new();
    for app in fields::strings(
        fields::req_array(output, "output", "used_app", "an array of app names")?,
        "output.used_app",
    )? {
        match app_index.get(&app.to_lowercase()) {
            Some(s) => {
                if !app_names.iter().any(|a| a == app) {
                    repairs.push(format!("app `{app}` matched case-insensitively"));
                }
                used_servers.push(s.clone());
            }
            None => repairs
                .push(format!("app `{app}` is not in api.json; its APIs cannot be forbidden")),
        }
    }
    let mut forbidden = Vec::new();
    let steps = fields::objects(
        fields::req_array(output, "output", "used_api", "an array of objects")?,
        "output.used_api",
    )?;
    for step in steps {
        for api in
            step.as_object().into_iter().flatten().map(|(k, _)| k).filter(|k| *k != "use_times")
        {
            let found = used_servers
                .iter()
                .map(|s| format!("{s}/{s}_apis/{api}"))
                .find(|id| catalog.get(id).is_some());
            match found {
                Some(idv) if !forbidden.contains(&idv) => forbidden.push(idv),
                Some(_) => {}
                None => repairs
                    .push(format!("API `{api}` is not in the used apps; dropped from `forbidden`")),
            }
        }
    }
    let candidates: Vec<String> = catalog
        .tools()
        .filter(|t| used_servers.contains(&t.server.name))
        .map(|t| t.tool.id.clone())
        .collect();
    if candidates.is_empty() {
        return Err("none of the used apps is in api.json".into());
    }
    let mut t = task(
        String::new(),
        r["instruction"].as_str().unwrap_or_default().to_string(),
        Kind::Refuse,
        vec![],
        String::new(),
        0,
    );
    t.risk = Some(risk);
    t.forbidden = forbidden;
    t.candidates = candidates;
    Ok(t)
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
