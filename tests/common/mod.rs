//! Helpers shared by the integration tests: run the real binary, build small catalogs on disk, read
//! a run's CSV files, start the mock endpoint with a small catalog beside it ([`MockEnv`]), and
//! find what the non-hermetic tiers need installed ([`tiers`]), run the provider-SDK test server ([`sdk`]).
#![allow(dead_code)]

pub mod sdk;
pub mod tiers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn toolpick(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("toolpick runs")
}

/// A command line's words, split at white space, so that a list of flags stays one line (rustfmt
/// writes a long array one element a line). A value with a space in it is pushed on its own.
pub fn argv(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// [`argv`] with each word `{}` replaced by the next of `values`, whole (a value is never split, so
/// paths and values with spaces are safe).
pub fn argv_with<'a>(line: &'a str, values: &[&'a str]) -> Vec<&'a str> {
    let mut values = values.iter();
    let args: Vec<&str> = line
        .split_whitespace()
        .map(|w| if w == "{}" { *values.next().expect("a value for each {}") } else { w })
        .collect();
    assert!(values.next().is_none(), "more values than {{}} in {line:?}");
    args
}

/// A fresh temporary directory holding the small catalog (`cat`) and its dataset (`ds.jsonl`).
pub fn small_world() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    std::fs::write(tmp.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    tmp
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/external/<name>`: from `TOOLPICK_SHARED_DIR` if set, else the nearest ancestor of the
/// checkout that has `shared/external` (CI and the development machine keep it beside the checkout).
pub fn shared(name: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("TOOLPICK_SHARED_DIR") {
        return PathBuf::from(dir).join("external").join(name);
    }
    let repo = repo();
    let found = repo.ancestors().skip(1).map(|a| a.join("shared/external")).find(|p| p.is_dir());
    found
        .unwrap_or_else(|| {
            panic!("../shared/external not found above {}; set TOOLPICK_SHARED_DIR", repo.display())
        })
        .join(name)
}

/// A run directory's trial records (`trials.jsonl`), each with its messages put back as `transcript`
/// from `transcripts.jsonl`. Checks the two files' contract on the way: one transcript line per record,
/// same trial ids in the same order, and no transcript inside a record.
pub fn trials_with_transcripts(run_dir: &Path) -> Vec<serde_json::Value> {
    let read = |name: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(run_dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", run_dir.join(name).display()))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let mut trials = read("trials.jsonl");
    let transcripts = read("transcripts.jsonl");
    assert_eq!(trials.len(), transcripts.len(), "one transcript line per trial record");
    for (t, x) in trials.iter_mut().zip(transcripts) {
        assert_eq!(
            t["trial_id"], x["trial_id"],
            "transcripts.jsonl follows trials.jsonl line by line"
        );
        assert!(t.get("transcript").is_none(), "a record of format 2 carries no transcript");
        // The record's final answer is the transcript's last message when that is the assistant's text.
        let last = x["transcript"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
        let answer = last["content"]
            .as_str()
            .filter(|c| last["role"] == "assistant" && !c.trim().is_empty());
        assert_eq!(t["final_answer"].as_str(), answer, "{}: final_answer", t["trial_id"]);
        t["transcript"] = x["transcript"].clone();
    }
    trials
}

/// One CSV row: column name to field (an empty field is a null).
pub type Row = BTreeMap<String, String>;

/// The rows of a CSV file with a header line.
pub fn csv_rows(path: &Path) -> Vec<Row> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            headers
                .iter()
                .zip(rec.unwrap().iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The rows of a run directory's `summary.csv`, one a cell.
pub fn summary_rows(run_dir: &Path) -> Vec<Row> {
    csv_rows(&run_dir.join("summary.csv"))
}

/// The mock OpenAI-compatible endpoint (`toolpick::mock`) on a loopback port, in a runtime of its
/// own that lives as long as this, beside a temporary directory holding the small catalog (`cat`)
/// and its dataset (`ds.jsonl`).
pub struct MockEnv {
    _rt: tokio::runtime::Runtime,
    pub server: toolpick::mock::MockServer,
    pub dir: tempfile::TempDir,
    /// Flags (each with its value, if any) [`MockEnv::run`] adds unless the call names the flag.
    defaults: Vec<&'static [&'static str]>,
}

impl MockEnv {
    /// The endpoint started with `config`; `defaults` as in [`MockEnv::run`].
    pub fn start(
        config: toolpick::mock::MockConfig,
        defaults: &[&'static [&'static str]],
    ) -> MockEnv {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server =
            rt.block_on(toolpick::mock::spawn("127.0.0.1:0".parse().unwrap(), config)).unwrap();
        MockEnv { _rt: rt, server, dir: small_world(), defaults: defaults.to_vec() }
    }

    pub fn url(&self) -> String {
        self.server.base_url()
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// `toolpick run` of the small catalog and dataset by the `openai` backend (model `mock`)
    /// against the endpoint, into `out/<run_id>`, quiet; then `extra`, then each default flag
    /// `extra` does not name.
    pub fn run(&self, run_id: &str, extra: &[&str]) -> Output {
        self.command(run_id, extra).output().expect("toolpick runs")
    }

    /// The command [`MockEnv::run`] runs, for a caller that sets its environment.
    pub fn command(&self, run_id: &str, extra: &[&str]) -> Command {
        let url = self.url();
        let mut args = argv("run --catalog cat --dataset ds.jsonl --backends openai --model mock");
        args.extend_from_slice(&["--base-url", &url, "--out", "out", "--run-id", run_id, "-q"]);
        args.extend_from_slice(extra);
        for flag in &self.defaults {
            if !extra.contains(&flag[0]) {
                args.extend_from_slice(flag);
            }
        }
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolpick"));
        command.args(&args).current_dir(self.dir.path());
        command
    }

    /// [`MockEnv::run`], which must succeed.
    pub fn run_ok(&self, run_id: &str, extra: &[&str]) -> Output {
        let o = self.run(run_id, extra);
        assert!(o.status.success(), "run failed: {}", stderr(&o));
        o
    }

    /// The trial records of `out/<run_id>`, with their transcripts.
    pub fn trials(&self, run_id: &str) -> Vec<serde_json::Value> {
        trials_with_transcripts(&self.path(&format!("out/{run_id}")))
    }

    /// The rows of `out/<run_id>/<file>`.
    pub fn csv(&self, run_id: &str, file: &str) -> Vec<Row> {
        csv_rows(&self.path(&format!("out/{run_id}/{file}")))
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A tiny two-server catalog written into `dir`.
pub fn write_small_catalog(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("weather.json"),
        r#"{
  "name": "weather",
  "description": "Weather conditions and forecasts for cities.",
  "categories": [
    {"name": "weather_now", "description": "Current conditions.", "tools": [
      {"name": "get_current_weather", "description": "Current temperature and sky for a city. Use when the user asks about weather right now. Do not use for future days (use get_forecast).",
       "inputSchema": {"type": "object", "properties": {
          "city": {"type": "string", "description": "City name."},
          "units": {"type": "string", "enum": ["metric", "imperial"], "description": "Unit system."}},
          "required": ["city"], "additionalProperties": false},
       "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
       "mockResponse": {"temp_c": 21, "sky": "clear"}}
    ]},
    {"name": "weather_later", "description": "Forecasts.", "tools": [
      {"name": "get_forecast", "description": "Forecast for the next days for a city. Use when the user asks about coming days.",
       "inputSchema": {"type": "object", "properties": {
          "city": {"type": "string", "description": "City name."},
          "days": {"type": "integer", "minimum": 1, "maximum": 7, "description": "Days ahead."}},
          "required": ["city", "days"], "additionalProperties": false},
       "annotations": {"readOnlyHint": true, "destructiveHint": false},
       "mockResponse": {"days": []}}
    ]}
  ]
}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("mail.json"),
        r#"{
  "name": "mail",
  "description": "E-mail.",
  "categories": [
    {"name": "mail_messages", "description": "Sending mail.", "tools": [
      {"name": "send_email", "description": "Send an e-mail. Use when the user wants a message delivered by e-mail.",
       "inputSchema": {"type": "object", "properties": {
          "to": {"type": "string", "format": "email", "description": "Recipient."},
          "subject": {"type": "string", "description": "Subject."}},
          "required": ["to", "subject"], "additionalProperties": false},
       "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": true},
       "mockResponse": {"id": "m1"}}
    ]}
  ]
}"#,
    )
    .unwrap();
}

/// A dataset for the small catalog.
pub const SMALL_DATASET: &str = r#"{"id": "w1", "query": "How warm is it in Pune right now?", "kind": "single", "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Pune"], "units": ["", "metric"]}}], "category": "weather", "tags": []}
{"id": "w2", "query": "Forecast for Oslo and Lima for 3 days", "kind": "parallel", "expected": [{"tool": "weather/weather_later/get_forecast", "arguments": {"city": ["Oslo"], "days": [3]}}, {"tool": "weather/weather_later/get_forecast", "arguments": {"city": ["Lima"], "days": [3]}}], "category": "weather", "tags": []}
{"id": "m1", "query": "Mail ana@example.com with subject \"Hi\" and tell me the weather in Rome", "kind": "multi", "expected": [{"tool": "mail/mail_messages/send_email", "arguments": {"to": ["ana@example.com"], "subject": ["Hi"]}}, {"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Rome"]}}], "category": "mail", "tags": []}
{"id": "a1", "query": "Book me a taxi to the airport", "kind": "abstain", "expected": [], "category": "none", "tags": []}
"#;

/// A run's summary in its three formats — `summary.csv`, `summary.parquet` and the `table` of
/// `summary.json` — holds the same columns in the same order with the same values: an empty CSV field
/// is a Parquet null and a JSON null, counts and text are equal, numbers agree to the CSV's six
/// decimals. Returns the number of columns compared.
pub fn assert_summary_formats_agree(run: &Path) -> usize {
    use polars::prelude::*;
    use polars_io::SerReader;
    let mut csv = csv::Reader::from_path(run.join("summary.csv")).unwrap();
    let header: Vec<String> = csv.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<Vec<String>> =
        csv.records().map(|r| r.unwrap().iter().map(String::from).collect()).collect();
    let parquet = polars_io::parquet::read::ParquetReader::new(
        std::fs::File::open(run.join("summary.parquet")).unwrap(),
    )
    .finish()
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let json_columns: Vec<&str> = json["table"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let json_rows = json["table"]["rows"].as_array().unwrap();
    let parquet_columns: Vec<String> =
        parquet.get_column_names().iter().map(|n| n.to_string()).collect();
    assert_eq!(parquet_columns, header, "summary.parquet and summary.csv name different columns");
    assert_eq!(json_columns, header, "summary.json's table and summary.csv name different columns");
    assert_eq!((parquet.height(), json_rows.len()), (rows.len(), rows.len()), "row counts differ");
    for (j, name) in header.iter().enumerate() {
        let column = parquet.column(name).unwrap().as_materialized_series().clone();
        for (i, row) in rows.iter().enumerate() {
            let (field, p, js) = (&row[j], column.get(i).unwrap(), &json_rows[i][j]);
            let at = format!("row {i}, column `{name}`: csv {field:?}, parquet {p:?}, json {js}");
            if field.is_empty() && !matches!(p, AnyValue::String(_) | AnyValue::StringOwned(_)) {
                assert!(
                    p.is_null() && js.is_null(),
                    "{at}: an empty CSV field must be null everywhere"
                );
                continue;
            }
            match p {
                AnyValue::Null => panic!("{at}: null in Parquet, a value in CSV"),
                AnyValue::String(s) => {
                    assert!(s == field && js.as_str() == Some(field.as_str()), "{at}")
                }
                AnyValue::StringOwned(s) => {
                    assert!(s.as_str() == field && js.as_str() == Some(field.as_str()), "{at}")
                }
                AnyValue::UInt64(n) => {
                    assert!(field.parse::<u64>().ok() == Some(n) && js.as_u64() == Some(n), "{at}")
                }
                AnyValue::Float64(x) => {
                    let f: f64 = field.parse().unwrap_or_else(|_| panic!("{at}: not a number"));
                    assert!(
                        (f - x).abs() <= 5e-7
                            && js.as_f64().is_some_and(|y| (y - x).abs() <= 1e-12),
                        "{at}"
                    );
                }
                other => panic!("{at}: unexpected Parquet type {other:?}"),
            }
        }
    }
    header.len()
}

/// A table's CSV file and (when it has one) its Parquet twin hold exactly the `declared` columns, in
/// their order, with the same values: each Parquet column has the declared type (text `String`, count
/// `UInt64`, number `Float64`, flag `Boolean`); a column declared never-null has no null and no empty
/// CSV field (but text, which may be the empty string in both); a column that can be null is null in
/// Parquet exactly where its CSV field is empty, and a nullable text column is never `""`; counts and
/// text are equal, flags are `true`/`false`, numbers agree to the CSV's six decimals. Returns the
/// nulls counted per column, in declared order.
pub fn assert_csv_and_parquet_agree<R, C>(
    csv_path: &Path,
    parquet_path: Option<&Path>,
    declared: &[toolpick::analysis::columns::Column<R, C>],
) -> Vec<usize> {
    use polars::prelude::*;
    use polars_io::SerReader;
    use toolpick::analysis::columns::ColumnType;
    let file = csv_path.file_name().unwrap().to_string_lossy().into_owned();
    let mut csv = csv::Reader::from_path(csv_path).unwrap();
    let header: Vec<String> = csv.headers().unwrap().iter().map(String::from).collect();
    let names: Vec<&str> = declared.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(header, names, "{file}'s header is not the declared columns");
    let rows: Vec<Vec<String>> =
        csv.records().map(|r| r.unwrap().iter().map(String::from).collect()).collect();
    let parquet = parquet_path.map(|p| {
        polars_io::parquet::read::ParquetReader::new(std::fs::File::open(p).unwrap())
            .finish()
            .unwrap()
    });
    if let Some(df) = &parquet {
        let columns: Vec<String> = df.get_column_names().iter().map(|n| n.to_string()).collect();
        assert_eq!(columns, header, "the Parquet twin of {file} names other columns");
        assert_eq!(df.height(), rows.len(), "the Parquet twin of {file} has another row count");
    }
    let mut nulls = vec![0; declared.len()];
    for (j, col) in declared.iter().enumerate() {
        let nullable = !col.null_when.is_empty();
        let series = parquet
            .as_ref()
            .map(|df| df.column(&col.name).unwrap().as_materialized_series().clone());
        if let Some(s) = &series {
            let want = match col.ty {
                ColumnType::Text => DataType::String,
                ColumnType::Count => DataType::UInt64,
                ColumnType::Number => DataType::Float64,
                ColumnType::Flag => DataType::Boolean,
            };
            assert_eq!(s.dtype(), &want, "{file}: Parquet type of `{}`", col.name);
        }
        for (i, row) in rows.iter().enumerate() {
            let field = row[j].as_str();
            let p = series.as_ref().map(|s| s.get(i).unwrap());
            let at = format!("{file} row {i}, column `{}`: csv {field:?}, parquet {p:?}", col.name);
            let null_in_csv = field.is_empty() && (nullable || col.ty != ColumnType::Text);
            if null_in_csv {
                assert!(nullable, "{at}: empty in a column declared never null");
                assert!(
                    p.as_ref().is_none_or(|p| p.is_null()),
                    "{at}: an empty CSV field must be a Parquet null"
                );
                nulls[j] += 1;
                continue;
            }
            let Some(p) = p else {
                // CSV only: the field parses as its declared type.
                match col.ty {
                    ColumnType::Text => {}
                    ColumnType::Count => assert!(field.parse::<u64>().is_ok(), "{at}"),
                    ColumnType::Number => {
                        assert!(field.parse::<f64>().is_ok_and(f64::is_finite), "{at}")
                    }
                    ColumnType::Flag => assert!(field == "true" || field == "false", "{at}"),
                }
                continue;
            };
            match p {
                AnyValue::Null => panic!("{at}: null in Parquet, a value in CSV"),
                AnyValue::String(s) => assert_eq!(s, field, "{at}"),
                AnyValue::StringOwned(s) => assert_eq!(s.as_str(), field, "{at}"),
                AnyValue::UInt64(n) => assert_eq!(field.parse::<u64>().ok(), Some(n), "{at}"),
                AnyValue::Boolean(b) => assert_eq!(field, if b { "true" } else { "false" }, "{at}"),
                AnyValue::Float64(x) => {
                    let f: f64 = field.parse().unwrap_or_else(|_| panic!("{at}: not a number"));
                    assert!((f - x).abs() <= 5e-7, "{at}");
                }
                other => panic!("{at}: unexpected Parquet type {other:?}"),
            }
        }
    }
    nulls
}
