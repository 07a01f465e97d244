//! `run.json`: what a run directory says about the run that made it, as one typed, versioned record
//! ([`RunMeta`]), and the two names every file of the directory is keyed by ([`trial_id`],
//! [`cell_key`]).
//!
//! Every writer (`run`, `merge`, `mcp serve --out`, `mcp collect`, `judge`) and every reader
//! (`report`, `compare`, `merge`, the history, a resumed run) goes through [`RunMeta::read`] and
//! [`RunMeta::write`], so the file has one shape and a damaged one is refused the same way
//! everywhere: naming the file, the line and the field (exit 2, before any output).
//!
//! Format versions (`format`, see `docs/formats.md`): files written before the field existed are
//! format 1 (an untyped object; every field here may be missing and reads as its default); this
//! version writes [`FORMAT`]. A file of a newer format is refused rather than half understood.
//!
//! The run's settings (`config`) stay an object here: their type (`run::RunConfig`) belongs to the
//! producer, which `record` may not import (`tests/module_deps.rs`); readers take the two settings
//! they need through typed accessors ([`RunMeta::cache_dir`], [`RunMeta::config_subset`]).

use crate::error::InputError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `run.json` format this version writes.
pub const FORMAT: u32 = 2;

/// The format of a `run.json` without a `format` field (every toolpick before [`FORMAT`] 2).
pub const UNVERSIONED_FORMAT: u32 = 1;

fn unversioned() -> u32 {
    UNVERSIONED_FORMAT
}

/// The trial file format of a run that does not record one (format 1 kept transcripts inline).
fn first_trial_format() -> u32 {
    1
}

/// `--shard i/n` as a run records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// One run a merged run was made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedRun {
    pub dir: String,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub shard: Option<Shard>,
    #[serde(default)]
    pub seconds: Option<f64>,
}

/// What `run.json` holds. Fields a run fills in as it goes (counts, durations, the endpoints'
/// counters) are absent until it has finished; fields of one kind of run (`shard`, `subset`, `live`,
/// `judge`, `served`, `merged_from`) are absent from the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// The layout of this file ([`FORMAT`]); 1 when the file does not say.
    #[serde(default = "unversioned")]
    pub format: u32,
    #[serde(default)]
    pub toolpick_version: String,
    #[serde(default)]
    pub started_unix: u64,
    /// `YYYYMMDD-hhmmss`, UTC.
    #[serde(default)]
    pub started_utc: String,
    #[serde(default)]
    pub run_id: String,
    #[serde(default)]
    pub tokenizer: String,
    /// Hash of the settings that decide the trials: a run resumes, and shards merge, only with the same.
    #[serde(default)]
    pub matrix_hash: String,
    /// The trial file format (`record::transcripts::FORMAT`); 1 when the file does not say.
    #[serde(default = "first_trial_format")]
    pub trial_format: u32,
    /// The run's settings as the runner recorded them (`run::RunConfig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery_rule: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The task selection and what each dataset kept of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subset: Option<Value>,
    /// `mcp serve --out` and `mcp collect`: where the trials came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<Value>,
    /// Per endpoint backend, its request counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<BTreeMap<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executed_trials: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_trials: Option<usize>,
    /// Wall time of the run, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episode_phase_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episode_phase_cpu_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<usize>,
    /// A live run's servers, their network isolation and the live options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<Value>,
    /// The judge of final answers, as `toolpick judge` describes it (no key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<Value>,
    /// `toolpick merge`: the runs merged into this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedRun>>,
    /// Fields this version does not know (written by another version): kept as they are, so reading
    /// and writing a file back loses nothing.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Default for RunMeta {
    /// A record of this format with nothing filled in (what `judge` starts from in a directory
    /// without `run.json`).
    fn default() -> RunMeta {
        RunMeta {
            format: FORMAT,
            toolpick_version: String::new(),
            started_unix: 0,
            started_utc: String::new(),
            run_id: String::new(),
            tokenizer: String::new(),
            matrix_hash: String::new(),
            trial_format: first_trial_format(),
            config: None,
            discovery_rule: None,
            shard: None,
            subset: None,
            served: None,
            endpoints: None,
            executed_trials: None,
            skipped_trials: None,
            seconds: None,
            episode_phase_seconds: None,
            episode_phase_cpu_seconds: None,
            tasks: None,
            live: None,
            judge: None,
            merged_from: None,
            other: Map::new(),
        }
    }
}

impl RunMeta {
    /// A new run's record: who wrote it and when; the runner fills in the rest.
    pub fn new(run_id: &str, started_unix: u64, started_utc: &str) -> RunMeta {
        RunMeta {
            toolpick_version: env!("CARGO_PKG_VERSION").into(),
            started_unix,
            started_utc: started_utc.into(),
            run_id: run_id.into(),
            tokenizer: "o200k_base".into(),
            ..Default::default()
        }
    }

    /// `dir/run.json`, read and checked; an error names the file, and the line and field of what is
    /// wrong (a missing file: [`RunMeta::read_if_present`] tells the cases apart).
    pub fn read(dir: &Path) -> Result<RunMeta, InputError> {
        let path = dir.join(super::RUN_JSON);
        Self::read_if_present(dir)?.ok_or_else(|| {
            InputError::new(&path, "not a toolpick run directory: it has no run.json")
        })
    }

    /// Like [`RunMeta::read`], with `None` when the directory has no `run.json`.
    pub fn read_if_present(dir: &Path) -> Result<Option<RunMeta>, InputError> {
        let path = dir.join(super::RUN_JSON);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(Self::parse(&path, &bytes)?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(InputError::new(&path, format!("cannot read the run file: {e}"))),
        }
    }

    /// Parse the bytes of `path` (a `run.json`).
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<RunMeta, InputError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            let what = if e.is_eof() {
                "cut short (the file ends inside the JSON object)".to_string()
            } else {
                format!("not JSON: {e}")
            };
            InputError::new(path, format!("not a run file: {what}")).at_line(e.line().max(1))
        })?;
        let Value::Object(fields) = value else {
            let kind = match value {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            };
            return Err(InputError::new(
                path,
                format!("not a run file: it holds {kind}, not a JSON object"),
            )
            .at_line(1));
        };
        let meta: RunMeta = match serde_json::from_value(Value::Object(fields.clone())) {
            Ok(m) => m,
            Err(e) => return Err(Self::field_error(path, bytes, &fields, e)),
        };
        if meta.format > FORMAT {
            return Err(InputError::new(
                path,
                format!("run file format {} is newer than this toolpick reads ({FORMAT}); use the toolpick that wrote it", meta.format),
            )
            .field("format"));
        }
        Ok(meta)
    }

    /// The error of a file that is a JSON object but not a run record: the first field whose value has
    /// the wrong shape, with its line in the file.
    fn field_error(
        path: &Path,
        bytes: &[u8],
        fields: &Map<String, Value>,
        whole: serde_json::Error,
    ) -> InputError {
        for (key, value) in fields {
            let one: Map<String, Value> = std::iter::once((key.clone(), value.clone())).collect();
            if let Err(e) = serde_json::from_value::<RunMeta>(Value::Object(one)) {
                let err = InputError::new(path, format!("not a run file: {e}")).field(key.as_str());
                return match line_of_key(bytes, key) {
                    Some(line) => err.at_line(line),
                    None => err,
                };
            }
        }
        InputError::new(path, format!("not a run file: {whole}"))
    }

    /// Write `dir/run.json` (atomically: a reader sees the old file or the new one, never a part), in
    /// this version's layout whatever format the record was read from.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let current = RunMeta { format: FORMAT, ..self.clone() };
        let mut bytes = serde_json::to_vec_pretty(&current)?;
        bytes.push(b'\n');
        crate::files::write_atomic(&dir.join(super::RUN_JSON), &bytes)
    }

    /// The settings for a report: the recorded `config` without the response cache's place (a
    /// machine-local path, so runs on different machines render the same); `null` when not recorded.
    pub fn report_config(&self) -> Value {
        match &self.config {
            Some(c) => {
                let mut c = c.clone();
                c.remove("cache_dir");
                Value::Object(c)
            }
            None => Value::Null,
        }
    }

    /// The response cache the run used (`config.cache_dir`), if it recorded one.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        self.config.as_ref()?.get("cache_dir")?.as_str().map(PathBuf::from)
    }

    /// The run's task selection (`config.subset`) as recorded; `null` for a run of every task.
    pub fn config_subset(&self) -> &Value {
        self.config.as_ref().and_then(|c| c.get("subset")).unwrap_or(&Value::Null)
    }
}

/// The 1-based line of the first `"key":` in a JSON text (good enough to point at a top-level field
/// of a pretty-printed `run.json`).
fn line_of_key(bytes: &[u8], key: &str) -> Option<usize> {
    let needle = serde_json::to_string(key).ok()?;
    let text = String::from_utf8_lossy(bytes);
    let at = text.find(&format!("{needle}:"))?;
    Some(text[..at].matches('\n').count() + 1)
}

/// A trial's id, `dataset/variant/layout/backend/task#trial`: unique in a run, and the key of its record
/// in `trials.jsonl`, `transcripts.jsonl`, `timings.jsonl` and `judgements.jsonl`.
pub fn trial_id(
    dataset: &str,
    variant: &str,
    layout: &str,
    backend: &str,
    task: &str,
    trial: usize,
) -> String {
    format!("{dataset}/{variant}/{layout}/{backend}/{task}#{trial}")
}

/// A cell's key, `dataset/catalog/variant/layout/backend`: what reports list, gates match
/// (`--gate-cells`) and runs are compared by.
pub fn cell_key(
    dataset: &str,
    catalog: &str,
    variant: &str,
    layout: &str,
    backend: &str,
) -> String {
    format!("{dataset}/{catalog}/{variant}/{layout}/{backend}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RunMeta, InputError> {
        RunMeta::parse(Path::new("r/run.json"), text.as_bytes())
    }

    #[test]
    fn a_written_record_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = RunMeta::new("r1", 1_700_000_000, "20231114-221320");
        m.matrix_hash = "00ff".into();
        m.shard = Some(Shard { index: 2, count: 3 });
        m.config = Some(
            serde_json::from_str(r#"{"seed": 4, "cache_dir": "/tmp/c", "subset": {"sample": 3}}"#)
                .unwrap(),
        );
        m.merged_from = Some(vec![MergedRun {
            dir: "out/s1".into(),
            run_id: Some("s1".into()),
            shard: None,
            seconds: Some(1.5),
        }]);
        m.other.insert("from_a_newer_minor".into(), serde_json::json!([1]));
        m.write(dir.path()).unwrap();
        let back = RunMeta::read(dir.path()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.cache_dir(), Some(PathBuf::from("/tmp/c")));
        assert_eq!(back.config_subset()["sample"], 3);
        assert!(back.report_config().get("cache_dir").is_none());
        assert_eq!(back.report_config()["seed"], 4);
    }

    #[test]
    fn files_of_earlier_versions_read_with_defaults() {
        // As toolpick wrote it before `format`: no format, no trial format, a run just started.
        let m = parse(r#"{"toolpick_version": "0.1.0", "run_id": "old", "matrix_hash": "ab"}"#)
            .unwrap();
        assert_eq!((m.format, m.trial_format, m.run_id.as_str()), (UNVERSIONED_FORMAT, 1, "old"));
        assert_eq!((m.seconds, m.shard, m.config_subset()), (None, None, &Value::Null));
        assert_eq!(m.report_config(), Value::Null);
        // A merge of earlier versions recorded `shard: null` and may lack `seconds`.
        let m = parse(r#"{"merged_from": [{"dir": "a", "run_id": "a", "shard": null}]}"#).unwrap();
        assert_eq!(m.merged_from.unwrap()[0].seconds, None);
    }

    #[test]
    fn damaged_files_are_refused_naming_line_and_field() {
        let e = parse("{\n  \"run_id\": \"r\",\n  \"matrix_").unwrap_err();
        assert!(e.message.contains("cut short"), "{e}");
        assert_eq!(e.file, Path::new("r/run.json"));
        let e = parse("[]\n").unwrap_err();
        assert!(e.message.contains("an array"), "{e}");
        assert_eq!(e.line, Some(1));
        let e = parse("{\n  \"run_id\": \"r\",\n  \"shard\": \"2/3\"\n}\n").unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some("shard"), Some(3)), "{e}");
        let e = parse("{\"started_unix\": -4}").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("started_unix"), "{e}");
        let e = parse(&format!("{{\"format\": {}}}", FORMAT + 1)).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("format"), "{e}");
    }

    #[test]
    fn a_missing_file_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        assert!(RunMeta::read_if_present(dir.path()).unwrap().is_none());
        let e = RunMeta::read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("run.json"), "{e}");
    }

    #[test]
    fn ids_and_keys_put_every_part_in_its_place() {
        assert_eq!(trial_id("d", "good", "flat", "oracle", "t-1", 2), "d/good/flat/oracle/t-1#2");
        assert_eq!(cell_key("d", "ws", "bad", "search", "lexical"), "d/ws/bad/search/lexical");
    }
}
