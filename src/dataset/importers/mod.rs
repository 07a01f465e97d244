//! Importers: public benchmarks read in their own file formats and turned into a native catalog and
//! dataset. Every record an importer skips or repairs is reported as a [`Defect`] with the reason; one
//! bad record never aborts an import.

pub mod bench_catalog;
pub mod bfcl;
pub mod mcptoolbench;
pub mod safetoolbench;
pub mod stabletoolbench;

use super::{Dataset, Task};
use crate::catalog::Catalog;
use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// What happened to a record that could not be taken as it was.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Defect {
    pub file: String,
    pub line: usize,
    pub id: String,
    /// `skipped` or `repaired`.
    pub action: &'static str,
    pub reason: String,
}

/// An imported benchmark.
pub struct Imported {
    pub catalog: Catalog,
    pub dataset: Dataset,
    pub defects: Vec<Defect>,
}

/// Supported formats.
pub const FORMATS: [&str; 6] = ["bench-catalog", "bfcl", "mcptoolbench", "safetoolbench", "stabletoolbench", "stabletoolbench-merged"];

/// Import `path` in `format`.
pub fn import(format: &str, path: &Path) -> Result<Imported> {
    match format {
        "bench-catalog" => bench_catalog::import(path),
        "bfcl" => bfcl::import(path),
        "mcptoolbench" => mcptoolbench::import(path),
        "safetoolbench" => safetoolbench::import(path),
        "stabletoolbench" => stabletoolbench::import(path, false),
        "stabletoolbench-merged" => stabletoolbench::import(path, true),
        other => Err(crate::error::InputError::new(path, format!("unknown import format `{other}`; supported: {}", FORMATS.join(", "))).into()),
    }
}

/// Split `format:path` (as given to `--dataset`); `None` for a plain path.
pub fn split_spec(spec: &Path) -> Option<(String, PathBuf)> {
    let s = spec.to_str()?;
    let (format, rest) = s.split_once(':')?;
    FORMATS.contains(&format).then(|| (format.to_string(), PathBuf::from(rest)))
}

/// Keep only the tasks whose ground truth validates against the imported catalog; the others become
/// defects (so a run never aborts on one bad record).
pub fn keep_valid(catalog: &Catalog, dataset: &mut Dataset, defects: &mut Vec<Defect>, file_of: impl Fn(&Task) -> String) {
    let path = dataset.path.clone();
    dataset.tasks.retain(|t| {
        let one = Dataset { name: dataset.name.clone(), path: path.clone(), tasks: vec![t.clone()] };
        match super::check_against(&one, catalog) {
            Ok(()) => true,
            Err(e) => {
                defects.push(Defect {
                    file: file_of(t),
                    line: t.line,
                    id: t.id.clone(),
                    action: "skipped",
                    reason: e.0.first().map(|e| e.message.clone()).unwrap_or_default(),
                });
                false
            }
        }
    });
}

/// Write an import as native files: `<out>/catalog/*.json`, `<out>/<name>.jsonl`, `<out>/defects.csv`.
pub fn write_native(imported: &Imported, out: &Path) -> Result<PathBuf> {
    let cat_dir = out.join("catalog");
    std::fs::create_dir_all(&cat_dir).with_context(|| format!("cannot create {}", cat_dir.display()))?;
    let meta = json!({"name": imported.catalog.name, "description": imported.catalog.description});
    crate::report::write_atomic(&cat_dir.join("catalog.json"), &serde_json::to_vec_pretty(&meta)?)?;
    for s in &imported.catalog.servers {
        let v = json!({
            "name": s.name,
            "description": s.description,
            "categories": s.categories.iter().map(|c| json!({
                "name": c.name,
                "description": c.description,
                "tools": c.tools.iter().map(tool_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        crate::report::write_atomic(&cat_dir.join(format!("{}.json", s.name)), &serde_json::to_vec_pretty(&v)?)?;
    }
    let mut lines = Vec::new();
    for t in &imported.dataset.tasks {
        lines.extend(serde_json::to_vec(t)?);
        lines.push(b'\n');
    }
    let dataset_path = out.join(format!("{}.jsonl", imported.dataset.name));
    crate::report::write_atomic(&dataset_path, &lines)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["file", "line", "id", "action", "reason"])?;
    for d in &imported.defects {
        w.write_record([d.file.as_str(), &d.line.to_string(), &d.id, d.action, &d.reason])?;
    }
    crate::report::write_atomic(&out.join("defects.csv"), &w.into_inner()?)?;
    Ok(dataset_path)
}

fn tool_json(t: &crate::catalog::Tool) -> Value {
    let mut v = json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema});
    if let Some(title) = &t.title {
        v["title"] = json!(title);
    }
    if t.origin.annotations_given {
        v["annotations"] = serde_json::to_value(&t.annotations).unwrap_or(Value::Null);
    }
    v["mockResponse"] = t.mock_response.clone();
    v
}

/// A task skeleton for importers.
pub fn task(id: String, query: String, kind: super::Kind, expected: Vec<super::ExpectedCall>, category: String, line: usize) -> Task {
    Task { id, query, kind, expected, category, tags: vec![], risk: None, forbidden: vec![], poison: None, candidates: vec![], line }
}
