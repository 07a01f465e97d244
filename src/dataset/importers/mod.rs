//! Importers: public benchmarks read in their own file formats and turned into a native catalog and
//! dataset. Nothing is lost silently: every record an importer skips or repairs, every file it cannot
//! read in full, every answer line without a question is reported as a [`Defect`] with the reason, and
//! one bad record never aborts an import.
//!
//! All importers read through [`read`] (encodings and undecodable bytes via [`decode`], empty files,
//! files of the wrong shape, deep nesting, broken arrays),
//! check field types with [`fields`] (reasons name the field, its type and the expected one), and
//! report through a [`Ledger`], which also gives duplicate task ids their deterministic rename
//! (`<id>#2`, `<id>#3`, … in reading order) and counts records for the [`Summary`].
//!
//! Every imported tool is [`MockMode::Static`](crate::catalog::MockMode): its mock response is the
//! benchmark's own data (or a fixed `{"ok": true}`), answered verbatim — never read for placeholders —
//! and [`write_native`] keeps that as `"mockMode": "static"`.

pub mod bench_catalog;
pub mod bfcl;
pub mod decode;
pub mod fields;
pub mod mcptoolbench;
pub mod read;
pub mod retarget;
pub mod safetoolbench;
pub mod stabletoolbench;

use super::{Dataset, Task};
use crate::catalog::Catalog;
use crate::error::InputError;
use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What happened to a record (or a file, an answer line, a tool) that could not be taken as it was.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Defect {
    /// The file, relative to the import root.
    pub file: String,
    /// 1-based number of the record in its file (element of a JSON array, non-blank line of JSON Lines);
    /// `None` for a row about the whole file.
    pub record: Option<usize>,
    /// 1-based line of the file where the record (or the problem) starts, when known.
    pub line: Option<usize>,
    /// The task id (after any rename), or the answer's / tool's own id; empty when unreadable.
    pub id: String,
    /// `skipped` or `repaired`.
    pub action: &'static str,
    /// How many task records this row is about: 1 for a record's own row, the count for a file-level row,
    /// 0 for rows about something that is not a task record (an answer line, an API, a tool); `None`
    /// when a file's records could not be counted (written `unknown` in `defects.csv` and
    /// `defects.json`).
    #[serde(serialize_with = "count_or_unknown")]
    pub affected: Option<usize>,
    pub reason: String,
}

fn count_or_unknown<S: serde::Serializer>(n: &Option<usize>, s: S) -> Result<S::Ok, S::Error> {
    match n {
        Some(n) => s.serialize_u64(*n as u64),
        None => s.serialize_str(UNKNOWN),
    }
}

/// What `affected` says when the records of a file could not be counted.
pub const UNKNOWN: &str = "unknown";

/// Where a record is: file, record number, line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct At {
    pub file: String,
    pub record: Option<usize>,
    pub line: Option<usize>,
}

impl At {
    fn describe(&self) -> String {
        match (self.record, self.line) {
            (Some(r), Some(l)) => format!("record {r}, line {l} of {}", self.file),
            (Some(r), None) => format!("record {r} of {}", self.file),
            (None, Some(l)) => format!("line {l} of {}", self.file),
            (None, None) => self.file.clone(),
        }
    }
}

/// Every row an import reports, and what it knows about the task records (ids, where they are, which
/// were repaired), so the summary counts records rather than rows.
#[derive(Debug, Default)]
pub struct Ledger {
    pub defects: Vec<Defect>,
    /// Id as written → (where it first appeared, how many records used it so far).
    seen: HashMap<String, (At, usize)>,
    /// Final task id → where its record is.
    origin: HashMap<String, At>,
    /// Task ids whose record was imported with a repair.
    repaired: HashSet<String>,
}

impl Ledger {
    pub fn rows(&self) -> usize {
        self.defects.len()
    }

    fn row(
        at: At,
        id: &str,
        action: &'static str,
        affected: Option<usize>,
        reason: String,
    ) -> Defect {
        Defect {
            file: at.file,
            record: at.record,
            line: at.line,
            id: id.to_string(),
            action,
            affected,
            reason,
        }
    }

    /// A row about a file or about records whose id is unknown (the reading helper's rows); `affected`
    /// is `None` when the file's records cannot be counted.
    pub fn file_row(
        &mut self,
        at: At,
        action: &'static str,
        affected: Option<usize>,
        reason: String,
    ) {
        self.defects.push(Self::row(at, "", action, affected, reason));
    }

    /// A file row placed before the rows already reported for that file.
    pub fn insert_file_row(
        &mut self,
        index: usize,
        at: At,
        action: &'static str,
        affected: Option<usize>,
        reason: String,
    ) {
        self.defects
            .insert(index.min(self.defects.len()), Self::row(at, "", action, affected, reason));
    }

    /// The task record at `at` is not imported. Report each skipped record exactly once.
    pub fn skip(&mut self, at: &At, id: &str, reason: impl Into<String>) {
        self.defects.push(Self::row(at.clone(), id, "skipped", Some(1), reason.into()));
    }

    /// The task record at `at` is imported with a change.
    pub fn repair(&mut self, at: &At, id: &str, reason: impl Into<String>) {
        self.repaired.insert(id.to_string());
        self.defects.push(Self::row(at.clone(), id, "repaired", Some(1), reason.into()));
    }

    /// Undecodable bytes were replaced in this record (the file-level row gives the count).
    pub fn mark_repaired(&mut self, id: &str) {
        self.repaired.insert(id.to_string());
    }

    /// A row about something that is not a task record: an answer line, an API, a tool.
    pub fn note(&mut self, at: &At, id: &str, action: &'static str, reason: impl Into<String>) {
        self.defects.push(Self::row(at.clone(), id, action, Some(0), reason.into()));
    }

    /// The id a task record gets: `id` itself the first time, else `<id>#2`, `<id>#3`, … in the order
    /// records are read (files sorted by name, records in file order), reported as a repair. Claimed
    /// when the id is read, so a rename never depends on whether another record is later skipped.
    pub fn claim_id(&mut self, at: &At, id: &str) -> String {
        let entry = self.seen.entry(id.to_string()).or_insert_with(|| (at.clone(), 0));
        entry.1 += 1;
        let (first, n) = (entry.0.clone(), entry.1);
        let mut final_id = id.to_string();
        if n > 1 {
            let mut k = n;
            final_id = format!("{id}#{k}");
            while self.origin.contains_key(&final_id) || self.seen.contains_key(&final_id) {
                k += 1;
                final_id = format!("{id}#{k}");
            }
            let reason = format!(
                "duplicate id `{id}` (first used by {}): renamed `{final_id}`",
                first.describe()
            );
            self.repair(at, &final_id, reason);
        }
        self.origin.insert(final_id.clone(), at.clone());
        final_id
    }

    /// Where task `id` came from (as claimed).
    pub fn origin(&self, id: &str) -> At {
        self.origin.get(id).cloned().unwrap_or_default()
    }
}

/// What an import did with the task records it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    /// Task records imported (repaired ones included).
    pub imported: usize,
    /// Imported task records that were changed on the way (each has a `repaired` row, or the file has
    /// one for replaced bytes).
    pub repaired: usize,
    /// Task records not imported: the `affected` counts of the `skipped` rows.
    pub skipped: usize,
    /// Skipped files whose records could not be counted (not in `skipped`).
    pub uncounted_files: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} records imported ({} of them repaired), {} skipped",
            self.imported, self.repaired, self.skipped
        )?;
        match self.uncounted_files {
            0 => Ok(()),
            n => write!(f, " and the records of {n} file(s) that could not be counted"),
        }
    }
}

/// An imported benchmark.
pub struct Imported {
    pub catalog: Catalog,
    pub dataset: Dataset,
    pub defects: Vec<Defect>,
    pub summary: Summary,
}

/// Import settings that only some formats use.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// SafeToolBench: records whose `quality_score` is below this are skipped (0 keeps all).
    pub min_quality: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { min_quality: safetoolbench::MIN_QUALITY }
    }
}

/// Supported formats.
pub const FORMATS: [&str; 6] = [
    "bench-catalog",
    "bfcl",
    "mcptoolbench",
    "safetoolbench",
    "stabletoolbench",
    "stabletoolbench-merged",
];

/// Import `path` in `format` with the default options.
pub fn import(format: &str, path: &Path) -> Result<Imported> {
    import_with(format, path, &Options::default())
}

/// Import `path` in `format`.
pub fn import_with(format: &str, path: &Path, options: &Options) -> Result<Imported> {
    // A benchmark that is not there is named as given, before a format looks for files inside it
    // (which would name a file the user never typed).
    if !path.exists() {
        return Err(InputError::new(
            path,
            "no such file or directory; give the benchmark's file or folder as published",
        )
        .into());
    }
    match format {
        "bench-catalog" => bench_catalog::import(path),
        "bfcl" => bfcl::import(path),
        "mcptoolbench" => mcptoolbench::import(path),
        "safetoolbench" => safetoolbench::import(path, options.min_quality),
        "stabletoolbench" => stabletoolbench::import(path, false),
        "stabletoolbench-merged" => stabletoolbench::import(path, true),
        other => Err(InputError::new(
            path,
            format!("unknown import format `{other}`; supported: {}", FORMATS.join(", ")),
        )
        .into()),
    }
}

/// Split `format:path` (as given to `--dataset`): `Ok(None)` for a plain path, an error naming the known
/// formats for `word:path` with an unknown format (unless a file of that name exists).
pub fn split_spec(spec: &Path) -> Result<Option<(String, PathBuf)>, InputError> {
    let Some(s) = spec.to_str() else {
        return Ok(None);
    };
    let Some((format, rest)) = s.split_once(':') else {
        return Ok(None);
    };
    if FORMATS.contains(&format) {
        return Ok(Some((format.to_string(), PathBuf::from(rest))));
    }
    // One letter is a Windows drive (`C:\data.jsonl`); an existing file is a plain path.
    let word = format.len() > 1
        && format.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if word && !spec.exists() {
        return Err(InputError::new(
            spec,
            format!(
                "unknown dataset format `{format}`; known formats: {} (as FORMAT:PATH), or give a JSONL dataset file",
                FORMATS.join(", ")
            ),
        ));
    }
    Ok(None)
}

/// Keep only the tasks whose ground truth validates against the imported catalog (the others become
/// `skipped` rows, so a run never aborts on one bad record), then count what was imported.
pub fn finish(catalog: Catalog, mut dataset: Dataset, mut ledger: Ledger) -> Imported {
    let path = dataset.path.clone();
    dataset.tasks.retain(|t| {
        let one =
            Dataset { name: dataset.name.clone(), path: path.clone(), tasks: vec![t.clone()] };
        match super::check_against(&one, &catalog) {
            Ok(()) => true,
            Err(e) => {
                let reason = e.0.first().map(|e| match &e.field {
                    Some(f) => format!("`{f}`: {}", e.message),
                    None => e.message.clone(),
                });
                ledger.skip(&ledger.origin(&t.id), &t.id, reason.unwrap_or_default());
                false
            }
        }
    });
    let summary = Summary {
        imported: dataset.tasks.len(),
        repaired: dataset.tasks.iter().filter(|t| ledger.repaired.contains(&t.id)).count(),
        skipped: ledger
            .defects
            .iter()
            .filter(|d| d.action == "skipped")
            .filter_map(|d| d.affected)
            .sum(),
        uncounted_files: ledger
            .defects
            .iter()
            .filter(|d| d.action == "skipped" && d.affected.is_none())
            .count(),
    };
    Imported { catalog, dataset, defects: ledger.defects, summary }
}

/// Write an import as native files: `<out>/catalog/*.json`, `<out>/<name>.jsonl`, `<out>/defects.csv`.
pub fn write_native(imported: &Imported, out: &Path) -> Result<PathBuf> {
    write_native_with(imported, out, true)
}

/// As [`write_native`]; without the catalog when `catalog` is false (an import retargeted onto a live
/// server's catalog runs against that catalog, which stays where it is).
pub fn write_native_with(imported: &Imported, out: &Path, catalog: bool) -> Result<PathBuf> {
    if catalog {
        write_catalog(imported, out)?;
    } else {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    }
    write_tasks(imported, out)
}

fn write_catalog(imported: &Imported, out: &Path) -> Result<()> {
    let cat_dir = out.join("catalog");
    std::fs::create_dir_all(&cat_dir)
        .with_context(|| format!("cannot create {}", cat_dir.display()))?;
    let meta = json!({"name": imported.catalog.name, "description": imported.catalog.description});
    crate::files::write_atomic(&cat_dir.join("catalog.json"), &serde_json::to_vec_pretty(&meta)?)?;
    for s in &imported.catalog.servers {
        let mut v = json!({
            "name": s.name,
            "description": s.description,
            "categories": s.categories.iter().map(|c| json!({
                "name": c.name,
                "description": c.description,
                "tools": c.tools.iter().map(tool_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        if let Some(title) = &s.title {
            v["title"] = json!(title);
        }
        crate::files::write_atomic(
            &cat_dir.join(format!("{}.json", s.name)),
            &serde_json::to_vec_pretty(&v)?,
        )?;
    }
    Ok(())
}

fn write_tasks(imported: &Imported, out: &Path) -> Result<PathBuf> {
    let mut lines = Vec::new();
    for t in &imported.dataset.tasks {
        lines.extend(serde_json::to_vec(t)?);
        lines.push(b'\n');
    }
    let dataset_path = out.join(format!("{}.jsonl", imported.dataset.name));
    crate::files::write_atomic(&dataset_path, &lines)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["file", "record", "line", "id", "action", "affected", "reason"])?;
    let opt = |n: Option<usize>| n.map(|n| n.to_string()).unwrap_or_default();
    for d in &imported.defects {
        let affected = d.affected.map_or_else(|| UNKNOWN.to_string(), |n| n.to_string());
        w.write_record([
            d.file.as_str(),
            &opt(d.record),
            &opt(d.line),
            &d.id,
            d.action,
            &affected,
            &d.reason,
        ])?;
    }
    crate::files::write_atomic(&out.join("defects.csv"), &w.into_inner()?)?;
    Ok(dataset_path)
}

fn tool_json(t: &crate::catalog::Tool) -> Value {
    let mut v =
        json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema});
    if let Some(title) = &t.title {
        v["title"] = json!(title);
    }
    if let Some(out) = &t.output_schema {
        v["outputSchema"] = out.clone();
    }
    if t.origin.annotations_given {
        v["annotations"] = serde_json::to_value(&t.annotations).unwrap_or(Value::Null);
    }
    v["mockResponse"] = t.mock_response.clone();
    if t.mock_mode == crate::catalog::MockMode::Static {
        v["mockMode"] = json!("static");
    }
    v
}

/// A task skeleton for importers.
pub fn task(
    id: String,
    query: String,
    kind: super::Kind,
    expected: Vec<super::ExpectedCall>,
    category: String,
    line: usize,
) -> Task {
    Task {
        id,
        query,
        history: vec![],
        kind,
        expected,
        category,
        tags: vec![],
        risk: None,
        forbidden: vec![],
        poison: None,
        candidates: vec![],
        live: None,
        must_not_call: vec![],
        claims: vec![],
        reference_answer: None,
        line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, record: usize) -> At {
        At { file: file.into(), record: Some(record), line: Some(record + 1) }
    }

    #[test]
    fn duplicate_ids_get_numbered_renames_in_reading_order() {
        let mut l = Ledger::default();
        assert_eq!(l.claim_id(&at("a.json", 1), "x"), "x");
        assert_eq!(l.claim_id(&at("a.json", 2), "y"), "y");
        assert_eq!(l.claim_id(&at("a.json", 3), "x"), "x#2");
        assert_eq!(l.claim_id(&at("b.json", 1), "x"), "x#3");
        // An id that is literally `x#4` is taken first; the next duplicate of `x` skips it.
        assert_eq!(l.claim_id(&at("b.json", 2), "x#4"), "x#4");
        assert_eq!(l.claim_id(&at("b.json", 3), "x"), "x#5");
        let renames: Vec<(&str, &str, Option<usize>)> =
            l.defects.iter().map(|d| (d.id.as_str(), d.file.as_str(), d.record)).collect();
        assert_eq!(
            renames,
            [("x#2", "a.json", Some(3)), ("x#3", "b.json", Some(1)), ("x#5", "b.json", Some(3))]
        );
        assert_eq!(
            l.defects[0].reason,
            "duplicate id `x` (first used by record 1, line 2 of a.json): renamed `x#2`"
        );
        assert!(l.defects.iter().all(|d| d.action == "repaired" && d.affected == Some(1)));
        assert_eq!(l.origin("x#3"), at("b.json", 1));
    }

    #[test]
    fn the_summary_counts_records_not_rows() {
        let mut l = Ledger::default();
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            l.claim_id(&at("q.json", i + 1), id);
        }
        // `a`: two repairs (one record); `c`: skipped; a whole file of 5 records skipped; an orphaned
        // answer line (no task record).
        l.repair(&at("q.json", 1), "a", "one");
        l.repair(&at("q.json", 1), "a", "two");
        l.skip(&at("q.json", 3), "c", "bad");
        l.file_row(
            At { file: "r.json".into(), ..Default::default() },
            "skipped",
            Some(5),
            "whole file".into(),
        );
        l.file_row(
            At { file: "s.json".into(), ..Default::default() },
            "skipped",
            None,
            "not text".into(),
        );
        l.note(&at("answers.json", 1), "z", "skipped", "orphaned answer");
        let mk = |id: &str| {
            task(id.into(), "q".into(), crate::dataset::Kind::Abstain, vec![], String::new(), 1)
        };
        let dataset = Dataset { name: "d".into(), path: "d".into(), tasks: vec![mk("a"), mk("b")] };
        let imported = finish(Catalog::new("c", "", vec![]), dataset, l);
        assert_eq!(
            imported.summary,
            Summary { imported: 2, repaired: 1, skipped: 6, uncounted_files: 1 }
        );
        assert_eq!(
            imported.summary.to_string(),
            "2 records imported (1 of them repaired), 6 skipped and the records of 1 file(s) that could not be counted"
        );
        assert_eq!(imported.defects.len(), 6);
    }

    #[test]
    fn unknown_formats_are_named_with_the_known_ones() {
        let e = split_spec(Path::new("bogus:data/x")).unwrap_err();
        assert!(e.message.contains("unknown dataset format `bogus`"));
        assert!(FORMATS.iter().all(|f| e.message.contains(f)), "{}", e.message);
        assert_eq!(
            split_spec(Path::new("bfcl:dir")).unwrap(),
            Some(("bfcl".to_string(), PathBuf::from("dir")))
        );
        assert_eq!(
            split_spec(Path::new("C:/data.jsonl")).unwrap(),
            None,
            "a drive letter is not a format"
        );
        assert_eq!(split_spec(Path::new("datasets/starter.jsonl")).unwrap(), None);
    }
}
