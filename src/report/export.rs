//! Exports of a run to other viewers: inspect_ai EvalLogs ([`super::inspect`]) and OpenTelemetry
//! GenAI traces ([`super::otel`]), written when asked (`--export inspect,otel` on `run`, `report`
//! and `merge`; `toolpick export FORMAT RUN_DIR`), never by a plain report.
//!
//! Why a second pass and not a sink of the report's scan: the exports need every trial's messages
//! (`transcripts.jsonl`), which the scan deliberately skips, and a report that nobody asked to export
//! must not pay for them. So an export re-reads `trials.jsonl` with `transcripts.jsonl` beside it, one
//! trial at a time and in step ([`each_episode`]): memory holds one trial and a few counters per cell,
//! however many trials the run has (`docs/formats.md`, "Exports").
//!
//! What is drawn is what the run recorded and what the analysis computed ([`ReportData`]); an export
//! only counts and adds (samples, tokens). Every piece of untrusted text (queries, tool results, model
//! text) is placed by serde_json, never pasted into a string, and every byte written goes through the
//! process's secret redactor ([`crate::redact::global`]), as the runner's trial writer does. Files are
//! written under temporary names and renamed into place only when all of a format's files are
//! complete ([`Staging`]).

use super::ReportData;
use crate::error::InputError;
use crate::protocol::Message;
use crate::record::Trial;
use crate::record::lines::JsonLines;
use crate::record::transcripts::{self, TranscriptLine};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A viewer's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// inspect_ai `.json` EvalLogs, one per cell.
    Inspect,
    /// OTLP/JSON traces with the OpenTelemetry GenAI attribute names, one file.
    Otel,
}

impl Format {
    pub const ALL: [Format; 2] = [Format::Inspect, Format::Otel];

    /// The name on the command line (`--export`, `toolpick export`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Inspect => "inspect",
            Format::Otel => "otel",
        }
    }

    /// Where the format is written without `--out`: a folder of logs inside the run directory, or a
    /// file beside the reports.
    pub fn default_place(self, run_dir: &Path) -> PathBuf {
        match self {
            Format::Inspect => run_dir.join("inspect"),
            Format::Otel => run_dir.join(super::otel::FILE),
        }
    }
}

/// What the exports take from `run.json`: the run's id, its start (the one place a time is kept) and
/// its settings.
pub struct RunInfo {
    pub run_id: String,
    /// Seconds since the epoch; 0 when the run does not record it.
    pub started_unix: u64,
    /// Wall time of the run, seconds, when recorded.
    pub seconds: Option<f64>,
    pub toolpick_version: String,
    /// The run's seed (`config.seed`), when recorded.
    pub seed: Option<u64>,
    /// Per backend name (`config.models[].name`): its kind (`openai`, `lexical`, …) and its model.
    models: BTreeMap<String, (String, Option<String>)>,
}

impl RunInfo {
    /// Read `dir/run.json` (a run without one exports with empty fields; a damaged one is refused).
    pub fn read(dir: &Path) -> Result<RunInfo> {
        let meta = crate::record::meta::RunMeta::read_if_present(dir)?;
        let mut models = BTreeMap::new();
        let config = meta.as_ref().and_then(|m| m.config.as_ref());
        for m in
            config.and_then(|c| c.get("models")).and_then(|m| m.as_array()).into_iter().flatten()
        {
            let text = |k: &str| m.get(k).and_then(|v| v.as_str()).map(str::to_string);
            if let (Some(name), Some(kind)) = (text("name"), text("backend")) {
                models.insert(name, (kind, text("model")));
            }
        }
        let seed = config.and_then(|c| c.get("seed")).and_then(|s| s.as_u64());
        Ok(match meta {
            Some(m) => RunInfo {
                run_id: m.run_id,
                started_unix: m.started_unix,
                seconds: m.seconds,
                toolpick_version: m.toolpick_version,
                seed,
                models,
            },
            None => RunInfo {
                run_id: String::new(),
                started_unix: 0,
                seconds: None,
                toolpick_version: String::new(),
                seed,
                models,
            },
        })
    }

    /// The backend's kind (`openai`, `anthropic`, `lexical`, …): the provider a viewer names. A
    /// backend the settings do not describe is its own kind.
    pub fn provider<'a>(&'a self, backend: &'a str) -> &'a str {
        self.models.get(backend).map_or(backend, |(kind, _)| kind.as_str())
    }

    /// The model a backend asked for (the backend's name for the in-process baselines).
    pub fn model<'a>(&'a self, backend: &'a str) -> &'a str {
        self.models.get(backend).and_then(|(_, m)| m.as_deref()).unwrap_or(backend)
    }

    /// `<provider>/<model>`, the way inspect_ai names a model.
    pub fn model_id(&self, backend: &str) -> String {
        format!("{}/{}", self.provider(backend), self.model(backend))
    }
}

/// Write each of `formats` for the run in `dir` whose analysis is `data`, to `out` (a folder for
/// inspect, a file for otel) or to the format's [`Format::default_place`]. Returns the files
/// written.
pub fn write(
    dir: &Path,
    data: &ReportData,
    formats: &[Format],
    out: Option<&Path>,
) -> Result<Vec<PathBuf>> {
    if formats.is_empty() {
        return Ok(Vec::new());
    }
    let info = RunInfo::read(dir)?;
    let mut written = Vec::new();
    for &format in formats {
        let place = out.map_or_else(|| format.default_place(dir), Path::to_path_buf);
        written.extend(match format {
            Format::Inspect => super::inspect::write(dir, data, &info, &place)?,
            Format::Otel => vec![super::otel::write(dir, &info, &place)?],
        });
    }
    Ok(written)
}

/// Call `each` with every trial of `dir` in file order, its messages filled in from
/// `transcripts.jsonl` (or kept from the record, for a run of trial format 1) and its score
/// recomputed when it is of an older scorer (as a report does). The two files are read in step, one
/// line each per trial; a transcript line of another trial than the record's is refused (the files
/// of an interrupted run are not in the same order until `toolpick report` compacts them).
pub fn each_episode(dir: &Path, mut each: impl FnMut(Trial) -> Result<()>) -> Result<()> {
    let trials_path = dir.join(crate::record::TRIALS);
    let transcripts_path = dir.join(transcripts::FILE);
    let mut messages = if transcripts_path.is_file() {
        Some(JsonLines::open(&transcripts_path, "transcripts file")?)
    } else {
        None
    };
    crate::record::trial::read_trials(&trials_path, |mut trial| {
        if let Some(lines) = messages.as_mut() {
            trial.transcript = next_transcript(lines, &transcripts_path, &trial.trial_id)?;
        }
        crate::score::score_if_stale(&mut trial);
        each(trial)
    })
}

/// The next transcript of `lines`, which must be the one of trial `id`.
fn next_transcript(lines: &mut JsonLines, path: &Path, id: &str) -> Result<Vec<Message>> {
    loop {
        let Some(line) = lines.next_line()? else {
            return Err(InputError::new(
                path,
                format!("ends before the transcript of trial `{id}`; `toolpick report` on the run compacts its files"),
            )
            .into());
        };
        if line.is_blank() {
            continue;
        }
        let parsed: TranscriptLine = serde_json::from_slice(line.text).map_err(|e| {
            InputError::new(path, format!("not a transcript line: {e}")).at_line(line.number)
        })?;
        if parsed.trial_id != id {
            return Err(InputError::new(
                path,
                format!(
                    "holds trial `{}` where trials.jsonl has `{id}`: the files are not in the same order (an interrupted run?); `toolpick report` on the run compacts them",
                    parsed.trial_id
                ),
            )
            .at_line(line.number)
            .into());
        }
        return Ok(parsed.transcript.into_owned());
    }
}

/// The secret redactor the command line installs ([`set_redactor`]): `report` may not import
/// `crate::redact` (`tests/module_deps.rs`), so the writer of text that may hold a key hands it in.
static REDACTOR: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();

/// A function that returns its input with every known secret cut out.
pub type Redactor = fn(&[u8]) -> Vec<u8>;

/// Install the redaction every exported byte goes through (the CLI's `crate::redact::global`).
pub fn set_redactor(redact: Redactor) {
    let _ = REDACTOR.set(redact);
}

/// `bytes` with every secret the process knows cut out (the installed redactor).
pub fn redacted(bytes: Vec<u8>) -> Vec<u8> {
    match REDACTOR.get() {
        Some(redact) => redact(&bytes),
        None => bytes,
    }
}

/// `value` serialised, then redacted.
pub fn json_bytes(value: &serde_json::Value) -> Result<Vec<u8>> {
    Ok(redacted(serde_json::to_vec(value)?))
}

/// Files being written under temporary names: [`Staging::commit`] renames them all into place;
/// dropped uncommitted, it removes them (a failed export leaves the previous one as it was).
#[derive(Default)]
pub struct Staging {
    files: Vec<(PathBuf, PathBuf)>,
    committed: bool,
}

impl Staging {
    /// A temporary name for `dest`, removed unless committed.
    pub fn stage(&mut self, dest: &Path) -> PathBuf {
        let tmp = crate::files::temp_path(dest);
        self.files.push((tmp.clone(), dest.to_path_buf()));
        tmp
    }

    /// Move every staged file into place.
    pub fn commit(mut self) -> Result<Vec<PathBuf>> {
        for (tmp, dest) in &self.files {
            std::fs::rename(tmp, dest)
                .with_context(|| format!("cannot move {} into place", dest.display()))?;
        }
        self.committed = true;
        Ok(self.files.iter().map(|(_, dest)| dest.clone()).collect())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            for (tmp, _) in &self.files {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
}

/// `unix` seconds as an ISO 8601 UTC time with an offset (`2026-12-05T19:10:08+00:00`), the form
/// inspect_ai writes (`datetime.isoformat(timespec="seconds")`).
pub fn iso_utc(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Howard Hinnant's days-to-civil: the proleptic Gregorian date of a day count since 1970-01-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}+00:00",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The first `len` bytes of SHA-256 over `parts` (each followed by a newline), in hex: the
/// deterministic ids of logs, traces and spans.
pub fn hex_id(parts: &[&str], len: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update(b"\n");
    }
    h.finalize().iter().take(len).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_are_the_calendar_dates_of_known_instants() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00+00:00");
        // 2000-02-29 (a leap day in a century leap year) and the last second of 1999.
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00+00:00");
        assert_eq!(iso_utc(946_684_799), "1999-12-31T23:59:59+00:00");
        assert_eq!(iso_utc(1_796_498_136), "2026-12-05T19:15:36+00:00");
    }

    #[test]
    fn ids_depend_on_every_part_and_on_where_parts_split() {
        let a = hex_id(&["run", "trial"], 16);
        assert_eq!(a.len(), 32);
        assert_ne!(a, hex_id(&["run", "trial2"], 16));
        assert_ne!(a, hex_id(&["runt", "rial"], 16));
        assert_eq!(a, hex_id(&["run", "trial"], 16), "deterministic");
    }
}
