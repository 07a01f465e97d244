//! Exports to other viewers from the command line: `--export inspect,otel` on `run`, `report` and
//! `merge` (written after the reports, under the run directory's lock), and `toolpick export FORMAT
//! RUN_DIR [--out PATH]` for a finished run. The work is [`crate::report::export`]'s.

use crate::report::export::Format;
use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};

/// A format's name on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// inspect_ai `.json` EvalLogs, one per cell, in <run-dir>/inspect/.
    Inspect,
    /// OTLP/JSON traces with the OpenTelemetry GenAI attributes, <run-dir>/otel-traces.json.
    Otel,
}

impl ExportFormat {
    fn format(self) -> Format {
        match self {
            ExportFormat::Inspect => Format::Inspect,
            ExportFormat::Otel => Format::Otel,
        }
    }
}

/// `--export`: formats for other viewers, written after the reports.
#[derive(Args, Debug, Clone, Default)]
pub struct ExportArgs {
    /// Also write the run for other viewers: inspect (inspect_ai EvalLogs in <run-dir>/inspect/),
    /// otel (OpenTelemetry GenAI traces, <run-dir>/otel-traces.json); comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FORMAT")]
    pub export: Vec<ExportFormat>,
}

impl ExportArgs {
    /// Write the formats asked for of the run in `dir`, whose reports were just rendered into `data`.
    pub fn write(&self, dir: &Path, data: &crate::report::ReportData) -> Result<Vec<PathBuf>> {
        let mut formats: Vec<Format> = self.export.iter().map(|f| f.format()).collect();
        formats.sort();
        formats.dedup();
        install_redactor();
        crate::report::export::write(dir, data, &formats, None)
    }
}

/// `toolpick export`.
#[derive(Subcommand)]
pub enum ExportAction {
    /// One inspect_ai EvalLog (.json) per cell, for `inspect view` and `read_eval_log`.
    Inspect(ExportTarget),
    /// The episodes as OpenTelemetry GenAI spans in OTLP/JSON.
    Otel(ExportTarget),
}

#[derive(Args)]
pub struct ExportTarget {
    /// A run directory, e.g. reports/latest.
    run_dir: PathBuf,
    /// Where to write: a folder for inspect (default <run-dir>/inspect), a file for otel (default
    /// <run-dir>/otel-traces.json).
    #[arg(long, short)]
    out: Option<PathBuf>,
}

/// `toolpick export FORMAT RUN_DIR [--out PATH]`: score the run as `report` does (compacting trials
/// an interrupted run left out of order), then write the format.
pub fn cmd_export(action: ExportAction) -> Result<()> {
    let (format, target) = match action {
        ExportAction::Inspect(t) => (Format::Inspect, t),
        ExportAction::Otel(t) => (Format::Otel, t),
    };
    super::preflight::run_dir("<run-dir>", &target.run_dir)?;
    if let Some(out) = &target.out {
        match format {
            Format::Inspect => super::preflight::output_dir("--out", out)?,
            Format::Otel => super::preflight::output_file("--out", out)?,
        }
    }
    // The keys the run's models read are secrets here too, whatever this shell's variables are named.
    let config = crate::record::meta::RunMeta::read_if_present(&target.run_dir)?
        .and_then(|m| m.config)
        .map(serde_json::Value::Object)
        .unwrap_or_default();
    let mut names = Vec::new();
    key_env_names(&config, &mut names);
    crate::redact::install_for(names.iter().map(String::as_str));
    install_redactor();
    let data = crate::report::load_run(&target.run_dir)?;
    let written =
        crate::report::export::write(&target.run_dir, &data, &[format], target.out.as_deref())?;
    outln!("wrote {} {} file(s):", written.len(), format.name());
    for f in &written {
        outln!("  {}", f.display());
    }
    Ok(())
}

/// Every exported byte goes through the process's secret redactor.
fn install_redactor() {
    crate::report::export::set_redactor(|b| crate::redact::global().redact_bytes(b).into_owned());
}

/// Every `api_key_env` value in the run's settings.
fn key_env_names(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("api_key_env", serde_json::Value::String(name)) => out.push(name.clone()),
                    _ => key_env_names(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| key_env_names(v, out)),
        _ => {}
    }
}
