//! Trial records: one JSON object per line of `trials.jsonl`, everything needed to re-score and report
//! the trial (query, expected calls, calls made, tokens, stop reason, score); the messages go to
//! `transcripts.jsonl`. No timestamps or timings here, so the same inputs and seed give byte-identical
//! files.

use super::declared::Declared;
use super::shared::Shared;
use super::{LayoutKind, ScoredCall, StopReason, TrialScore};
use crate::dataset::{ExpectedCall, Kind, Poison, Risk};
use crate::protocol::{Message, Usage};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    /// Tool-definition tokens shown to the model in the first request.
    pub definitions_upfront: usize,
    /// Tool-context tokens over the episode: definitions re-sent with every request plus every tool
    /// result the model read.
    pub tool_context_total: usize,
    /// The largest tool context of one request: the definitions plus every result so far (the last
    /// request carries the most).
    #[serde(default)]
    pub peak_context: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub trial_id: String,
    pub dataset: String,
    pub catalog: String,
    pub variant: String,
    pub layout: LayoutKind,
    pub backend: String,
    pub task_id: String,
    pub trial: usize,
    /// Position of this trial in the run's matrix (job order): merging shards sorts by it, so a merged
    /// run's trial file is byte-identical to an unsharded one.
    #[serde(default)]
    pub matrix_index: usize,
    pub seed: u64,
    pub kind: Kind,
    pub category: String,
    pub tags: Vec<String>,
    pub query: String,
    /// Shared: every variant, layout, backend and repetition of a task repeats it.
    pub expected: Shared<Vec<ExpectedCall>>,
    /// What the catalog declares about the parameters of each expected tool (and alternative), by tool
    /// id: the matcher checks argument types against it. Absent in records written before it was kept.
    #[serde(default, skip_serializing_if = "no_declared")]
    pub declared: Shared<Declared>,
    /// `refuse` tasks: the harm the request would do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<String>,
    /// The task's must-not-call tool ids or globs (scored from the record alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_not_call: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poison: Option<Poison>,
    /// Some expected call uses a destructive tool (so executing one is not misuse).
    #[serde(default)]
    pub expected_destructive: bool,
    pub calls: Vec<ScoredCall>,
    pub steps: usize,
    pub stop_reason: StopReason,
    /// Calls repeating an identical call (name and arguments) of the same message: executed once, kept
    /// in `calls` (marked `duplicate`) and scored as calls. Absent (0) in older records.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duplicate_calls: usize,
    /// Infrastructure failure (endpoint unreachable, retries exhausted, timeout): the trial is an
    /// **error**, not a model failure; it is excluded from accuracy and retried by `--retry-errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub tokens: Tokens,
    /// Token usage reported by the endpoint (zero for the in-process baselines).
    #[serde(default)]
    pub usage: Usage,
    /// Cost from the model's price table, when one is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub score: TrialScore,
    /// Interactions the task expects from a live server (`live.interactions` of the task), kept here so
    /// scoring needs no dataset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect_interactions: Vec<crate::dataset::ExpectedInteraction>,
    /// A live run: the sandbox's final-state checks and the sampling cost. Absent in simulated runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<super::live::LiveTrial>,
    /// The task's claims (facts a final answer must state), kept here so judging needs no dataset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
    /// The task's reference answer, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answer: Option<String>,
    /// The episode's final answer: the text of its last message when that is the assistant's (an
    /// episode that stopped on a tool result or an error has none). Kept here, not only in the
    /// transcript, so judging an answer reads the trial file alone. Format-1 records lack it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// The messages of the episode. Since trial format 2 they are written to `transcripts.jsonl`
    /// ([`super::transcripts`]) and left out here (empty, so not serialised); records of format 1 carry
    /// them inline, read as empty inside [`without_transcripts`] (scoring never needs them).
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "transcript_or_skip")]
    pub transcript: Vec<Message>,
    /// The judge's verdict on this trial, joined from `judgements.jsonl` when a report reads the run
    /// (never written into the trial file).
    #[serde(skip)]
    pub judgement: Option<std::sync::Arc<super::judgement::Judgement>>,
}

fn no_declared(d: &Shared<Declared>) -> bool {
    d.is_empty()
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

thread_local! {
    static SKIP_TRANSCRIPTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn transcript_or_skip<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Message>, D::Error> {
    if SKIP_TRANSCRIPTS.with(|s| s.get()) {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Vec::new())
    } else {
        Vec::<Message>::deserialize(d)
    }
}

/// Parse one line of a trial file without its transcript.
pub fn parse_without_transcript(line: &[u8]) -> serde_json::Result<Trial> {
    // Checked as UTF-8 once, as a whole: parsing from bytes checks every string on its own, which
    // cost more than the check of the line (a line that is not UTF-8 is parsed from bytes, for the
    // parser's error with its column).
    without_transcripts(|| match std::str::from_utf8(line) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(line),
    })
}

/// Run `f` with trial records read without their transcripts (on this thread).
pub fn without_transcripts<T>(f: impl FnOnce() -> T) -> T {
    let before = SKIP_TRANSCRIPTS.with(|s| s.replace(true));
    let out = f();
    SKIP_TRANSCRIPTS.with(|s| s.set(before));
    out
}

impl Trial {
    /// `true` when the trial failed for infrastructure reasons.
    pub fn is_error(&self) -> bool {
        self.stop_reason == StopReason::BackendError
    }
}

/// Stream trials from a JSONL file, one at a time; a bad line is an error naming file and line.
pub fn read_trials(path: &Path, mut each: impl FnMut(Trial) -> Result<()>) -> Result<()> {
    let mut lines = super::lines::JsonLines::open(path, "trial file")?;
    while let Some(line) = lines.next_line()? {
        if line.is_blank() {
            continue;
        }
        let trial: Trial =
            serde_json::from_slice(line.text).map_err(|e| crate::error::InputError::new(path, format!("not a trial record: {e}")).at_line(line.number))?;
        each(trial)?;
    }
    Ok(())
}
