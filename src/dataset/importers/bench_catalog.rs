//! The seeded synthetic catalog of `shared/bench/gen_catalog.py` (`bench-catalog`): `catalog.jsonl`
//! (16 464 tools: `{id, name, category, description, params: [{name, type, description}]}`) and
//! `queries.jsonl` (`{id, query, target_id}`). It is the yardstick the lexical baseline is measured on
//! against bm25s, so it is read here rather than converted by hand.
//!
//! - One server per category (its tools in one category `<category>_tools`), as the generator's
//!   categories stand for ToolBench's APIs.
//! - Parameters become optional string/number/boolean properties; a tool name repeated within its
//!   category gets its id appended (reported as a repair).
//! - A query's ground truth is its target tool with any arguments (the generator makes no arguments).

use super::{Defect, Imported, task};
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::dataset::{Dataset, ExpectedCall, Kind};
use crate::error::InputError;
use anyhow::Result;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

#[derive(Deserialize)]
struct RawParam {
    name: String,
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
struct RawTool {
    id: u64,
    name: String,
    category: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    params: Vec<RawParam>,
}

#[derive(Deserialize)]
struct RawQuery {
    id: u64,
    query: String,
    target_id: u64,
}

fn lines<T: for<'de> Deserialize<'de>>(path: &Path, mut each: impl FnMut(usize, Result<T, String>)) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|e| InputError::new(path, format!("cannot open: {e} (generate it with gen_catalog.py)")))?;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| InputError::new(path, format!("cannot read: {e}")).at_line(i + 1))?;
        if !line.trim().is_empty() {
            each(i + 1, serde_json::from_str(&line).map_err(|e| e.to_string()));
        }
    }
    Ok(())
}

fn ident(s: &str) -> String {
    let mut out: String = s.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out = format!("c_{out}");
    }
    out.truncate(56);
    out
}

pub fn import(dir: &Path) -> Result<Imported> {
    let mut defects = Vec::new();
    let mut by_category: BTreeMap<String, Vec<Tool>> = BTreeMap::new();
    let mut names: HashMap<(String, String), u64> = HashMap::new();
    let mut ids: HashMap<u64, String> = HashMap::new();
    let catalog_file = dir.join("catalog.jsonl");
    lines::<RawTool>(&catalog_file, |line, raw| {
        let raw = match raw {
            Ok(r) => r,
            Err(e) => return defects.push(Defect { file: "catalog.jsonl".into(), line, id: String::new(), action: "skipped", reason: e }),
        };
        let category = ident(&raw.category);
        let mut name = ident(&raw.name);
        if names.insert((category.clone(), name.clone()), raw.id).is_some() {
            name = format!("{name}_{}", raw.id);
            defects.push(Defect { file: "catalog.jsonl".into(), line, id: raw.id.to_string(), action: "repaired", reason: format!("name `{}` repeated in its category; renamed `{name}`", raw.name) });
        }
        let properties: serde_json::Map<String, Value> = raw
            .params
            .iter()
            .map(|p| {
                let kind = match p.kind.as_str() {
                    "integer" | "int" => "integer",
                    "number" | "float" => "number",
                    "boolean" | "bool" => "boolean",
                    _ => "string",
                };
                (ident(&p.name), json!({"type": kind, "description": p.description}))
            })
            .collect();
        let value = json!({"name": name, "description": raw.description, "inputSchema": {"type": "object", "properties": properties}});
        let server = category.clone();
        match crate::catalog::load::parse_tool(&server, &format!("{category}_tools"), &value) {
            Ok(tool) => {
                ids.insert(raw.id, tool.id.clone());
                by_category.entry(category).or_default().push(tool);
            }
            Err(e) => defects.push(Defect { file: "catalog.jsonl".into(), line, id: raw.id.to_string(), action: "skipped", reason: e }),
        }
    })?;
    let servers: Vec<Server> = by_category
        .into_iter()
        .map(|(name, tools)| Server {
            description: format!("The `{name}` API."),
            title: None,
            categories: vec![Category { name: format!("{name}_tools"), description: format!("Endpoints of the `{name}` API."), tools }],
            name,
        })
        .collect();
    let catalog = Catalog::new("bench_catalog", "Synthetic ToolBench-sized catalog (shared/bench/gen_catalog.py)", servers);
    let mut tasks = Vec::new();
    lines::<RawQuery>(&dir.join("queries.jsonl"), |line, raw| match raw {
        Ok(q) => match ids.get(&q.target_id) {
            Some(tool) => tasks.push(task(
                format!("q{}", q.id),
                q.query,
                Kind::Single,
                vec![ExpectedCall { tool: tool.clone(), arguments: BTreeMap::new(), alternatives: vec![], any_arguments: true }],
                String::new(),
                line,
            )),
            None => defects.push(Defect { file: "queries.jsonl".into(), line, id: q.id.to_string(), action: "skipped", reason: format!("target_id {} is not a tool", q.target_id) }),
        },
        Err(e) => defects.push(Defect { file: "queries.jsonl".into(), line, id: String::new(), action: "skipped", reason: e }),
    })?;
    let dataset = Dataset { name: "bench_catalog".into(), path: dir.join("queries.jsonl"), tasks };
    Ok(Imported { catalog, dataset, defects })
}
