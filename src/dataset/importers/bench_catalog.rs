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

use super::read::Reader;
use super::{At, Imported, Ledger, fields, finish, task};
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::dataset::{Dataset, ExpectedCall, Kind};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// An integer id field (`id`, `target_id`): the generator writes numbers.
fn int_field(v: &Value, key: &str) -> Result<u64, String> {
    match v.get(key) {
        None => Err(format!("`{key}` is missing")),
        Some(n) => n.as_u64().ok_or_else(|| {
            if n.is_number() {
                format!("`{key}` is {n}, expected a whole number")
            } else {
                fields::wrong(key, n, "a whole number")
            }
        }),
    }
}

struct RawTool<'a> {
    id: u64,
    name: &'a str,
    category: &'a str,
    description: &'a str,
    /// (name, type, description)
    params: Vec<(&'a str, &'a str, &'a str)>,
}

fn raw_tool(v: &Value) -> Result<RawTool<'_>, String> {
    fields::as_object(v, "")?;
    let mut params = Vec::new();
    for (i, p) in fields::opt_array(v, "", "params", "an array of parameter objects")?
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = fields::index("params", i);
        fields::as_object(p, &path)?;
        params.push((
            fields::req_str(p, &path, "name")?,
            fields::opt_str(p, &path, "type")?.unwrap_or_default(),
            fields::opt_str(p, &path, "description")?.unwrap_or_default(),
        ));
    }
    Ok(RawTool {
        id: int_field(v, "id")?,
        name: fields::req_str(v, "", "name")?,
        category: fields::req_str(v, "", "category")?,
        description: fields::opt_str(v, "", "description")?.unwrap_or_default(),
        params,
    })
}

fn ident(s: &str) -> String {
    let mut out: String =
        s.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out = format!("c_{out}");
    }
    out.truncate(56);
    out
}

pub fn import(dir: &Path) -> Result<Imported> {
    let catalog_file = dir.join("catalog.jsonl");
    let queries_file = dir.join("queries.jsonl");
    for f in [&catalog_file, &queries_file] {
        if f.is_dir() {
            return Err(InputError::new(f, "is a directory, not the generator's JSON Lines file (shared/bench/gen_catalog.py OUTDIR writes it)").into());
        }
        if !f.is_file() {
            return Err(InputError::new(
                f,
                "missing (generate it with shared/bench/gen_catalog.py OUTDIR)",
            )
            .into());
        }
    }
    let mut ledger = Ledger::default();
    let mut by_category: BTreeMap<String, Vec<Tool>> = BTreeMap::new();
    let mut names: HashMap<(String, String), u64> = HashMap::new();
    // generator id → (tool id, where it was defined)
    let mut ids: HashMap<u64, (String, At)> = HashMap::new();
    for raw in (Reader { name: "catalog.jsonl", tasks: false }).jsonl(&catalog_file, &mut ledger) {
        let tool = match raw_tool(&raw.value) {
            Ok(t) => t,
            Err(reason) => {
                ledger.note(
                    &raw.at,
                    &raw.value["id"].to_string(),
                    "skipped",
                    format!("tool not imported: {reason}"),
                );
                continue;
            }
        };
        if let Some((_, first)) = ids.get(&tool.id) {
            ledger.note(
                &raw.at,
                &tool.id.to_string(),
                "skipped",
                format!(
                    "tool id {} is already used by {}; this tool is not imported",
                    tool.id,
                    first.describe()
                ),
            );
            continue;
        }
        let category = ident(tool.category);
        let mut name = ident(tool.name);
        if names.insert((category.clone(), name.clone()), tool.id).is_some() {
            name = format!("{name}_{}", tool.id);
            ledger.note(
                &raw.at,
                &tool.id.to_string(),
                "repaired",
                format!("name `{}` repeated in its category; renamed `{name}`", tool.name),
            );
        }
        let properties: serde_json::Map<String, Value> = tool
            .params
            .iter()
            .map(|(pname, kind, description)| {
                let kind = match *kind {
                    "integer" | "int" => "integer",
                    "number" | "float" => "number",
                    "boolean" | "bool" => "boolean",
                    _ => "string",
                };
                (ident(pname), json!({"type": kind, "description": description}))
            })
            .collect();
        let value = json!({"name": name, "description": tool.description, "inputSchema": {"type": "object", "properties": properties}, "mockMode": "static"});
        let server = category.clone();
        match crate::catalog::load::parse_tool(&server, &format!("{category}_tools"), &value) {
            Ok(t) => {
                ids.insert(tool.id, (t.id.clone(), raw.at.clone()));
                by_category.entry(category).or_default().push(t);
            }
            Err(e) => ledger.note(
                &raw.at,
                &tool.id.to_string(),
                "skipped",
                format!("tool not imported: {e}"),
            ),
        }
    }
    let servers: Vec<Server> = by_category
        .into_iter()
        .map(|(name, tools)| Server {
            description: format!("The `{name}` API."),
            title: None,
            categories: vec![Category {
                name: format!("{name}_tools"),
                description: format!("Endpoints of the `{name}` API."),
                tools,
            }],
            name,
        })
        .collect();
    let catalog = Catalog::new(
        "bench_catalog",
        "Synthetic ToolBench-sized catalog (shared/bench/gen_catalog.py)",
        servers,
    );
    let mut tasks = Vec::new();
    for raw in (Reader { name: "queries.jsonl", tasks: true }).jsonl(&queries_file, &mut ledger) {
        let q = &raw.value;
        let qid = match fields::as_object(q, "").and_then(|_| int_field(q, "id")) {
            Ok(n) => n,
            Err(reason) => {
                ledger.skip(&raw.at, "", reason);
                continue;
            }
        };
        let id = ledger.claim_id(&raw.at, &format!("q{qid}"));
        if raw.lossy {
            ledger.mark_repaired(&id);
        }
        let outcome = fields::req_str(q, "", "query").and_then(|query| {
            let target = int_field(q, "target_id")?;
            let (tool, _) = ids
                .get(&target)
                .ok_or_else(|| format!("target_id {target} is not a tool of catalog.jsonl"))?;
            if query.trim().is_empty() {
                return Err("`query` is empty".to_string());
            }
            let expected = vec![ExpectedCall {
                tool: tool.clone(),
                arguments: BTreeMap::new(),
                alternatives: vec![],
                any_arguments: true,
            }];
            Ok(task(
                id.clone(),
                query.to_string(),
                Kind::Single,
                expected,
                String::new(),
                raw.at.line.unwrap_or_default(),
            ))
        });
        match outcome {
            Ok(t) => tasks.push(t),
            Err(reason) => ledger.skip(&raw.at, &id, reason),
        }
    }
    let dataset = Dataset { name: "bench_catalog".into(), path: queries_file, tasks };
    Ok(finish(catalog, dataset, ledger))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_generator_output_loses_no_query_silently() {
        let tmp = tempfile::tempdir().unwrap();
        let tools = [
            r#"{"id": 1, "name": "get weather", "category": "Weather", "description": "Weather now.", "params": [{"name": "city", "type": "string"}]}"#,
            r#"{"id": 2, "name": "get forecast", "category": "Weather", "description": "Forecast."}"#,
            r#"{"id": 1, "name": "shadow", "category": "Weather", "description": "Same id as line 1."}"#,
            r#"{"id": "3", "name": "x", "category": "Misc"}"#,
        ];
        std::fs::write(tmp.path().join("catalog.jsonl"), tools.join("\n")).unwrap();
        let mut queries =
            b"{\"id\": 1, \"query\": \"weather in Pune\", \"target_id\": 1}\n".to_vec();
        queries.extend_from_slice(
            b"{\"id\": 1, \"query\": \"forecast for Oslo \xff\", \"target_id\": 2}\n",
        );
        queries.extend_from_slice(b"{\"id\": 2, \"query\": [\"weather\"], \"target_id\": 1}\n");
        queries.extend_from_slice(b"{\"id\": 3, \"query\": \"rain?\", \"target_id\": 2.5}\n");
        queries.extend_from_slice(b"{\"id\": 4, \"query\": \"sun?\", \"target_id\": 9}\n");
        std::fs::write(tmp.path().join("queries.jsonl"), queries).unwrap();
        let imp = import(tmp.path()).unwrap();
        let ids: Vec<&str> = imp.dataset.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["q1", "q1#2"]);
        assert_eq!(
            imp.summary,
            super::super::Summary { imported: 2, repaired: 1, skipped: 3, uncounted_files: 0 }
        );
        let reasons: Vec<(&str, Option<usize>, &str)> =
            imp.defects.iter().map(|d| (d.file.as_str(), d.record, d.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [
                (
                    "catalog.jsonl",
                    Some(3),
                    "tool id 1 is already used by record 1, line 1 of catalog.jsonl; this tool is not imported"
                ),
                (
                    "catalog.jsonl",
                    Some(4),
                    "tool not imported: `id` is a string, expected a whole number"
                ),
                (
                    "queries.jsonl",
                    None,
                    "1 bytes of invalid UTF-8 in 1 place(s) (line 2) replaced by U+FFFD; 1 record(s) affected (record 2)"
                ),
                (
                    "queries.jsonl",
                    Some(2),
                    "duplicate id `q1` (first used by record 1, line 1 of queries.jsonl): renamed `q1#2`"
                ),
                ("queries.jsonl", Some(3), "`query` is an array, expected a string"),
                ("queries.jsonl", Some(4), "`target_id` is 2.5, expected a whole number"),
                ("queries.jsonl", Some(5), "target_id 9 is not a tool of catalog.jsonl"),
            ]
        );
    }
}
