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
    /// The provider's limit that refused the request (`stop_reason: provider_limit`): which one and
    /// the provider's words. Absent otherwise, and in records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_limit: Option<super::LimitHit>,
    pub tokens: Tokens,
    /// Token usage reported by the endpoint (zero for the in-process baselines).
    #[serde(default)]
    pub usage: Usage,
    /// Each model request's usage object exactly as the provider wrote it, in order (`usage` of chat
    /// completions, Messages and Responses; `usageMetadata` of Gemini): what `usage` was normalised
    /// from. Absent for the in-process baselines, and in records written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_usage: Vec<serde_json::Value>,
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
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "claims_or_skip")]
    pub claims: Vec<String>,
    /// The task's reference answer, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "answer_or_skip")]
    pub reference_answer: Option<String>,
    /// The episode's final answer: the text of its last message when that is the assistant's (an
    /// episode that stopped on a tool result or an error has none). Kept here, not only in the
    /// transcript, so judging an answer reads the trial file alone. Format-1 records lack it.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "answer_or_skip")]
    pub final_answer: Option<String>,
    /// The messages of the episode. Since trial format 2 they are written to `transcripts.jsonl`
    /// ([`super::transcripts`]) and left out here (empty, so not serialised); records of format 1 carry
    /// them inline, read as empty inside [`without_transcripts`] (scoring never needs them).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "transcript_or_skip"
    )]
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

/// How much of a record this thread's parser builds ([`parse_without_transcript`],
/// [`parse_for_report`]); every other reader builds all of it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Full,
    /// Everything but the transcript.
    WithoutTranscript,
    /// Neither the transcript nor the call arguments that only scoring reads (all but the
    /// navigation ones the per-layer diagnostics read). The declared parameters are still read: a
    /// record whose `declared` is not what it should be is an error in a report too, not a value
    /// skipped unseen.
    ForReport,
    /// [`Reading::ForReport`] of a run without judgements: nor what only judging reads (the claims,
    /// the reference and final answers).
    ForUnjudgedReport,
}

impl Reading {
    fn for_report(self) -> bool {
        matches!(self, Reading::ForReport | Reading::ForUnjudgedReport)
    }
}

thread_local! {
    static READING: std::cell::Cell<Reading> = const { std::cell::Cell::new(Reading::Full) };
}

fn reading() -> Reading {
    READING.with(|r| r.get())
}

fn transcript_or_skip<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Message>, D::Error> {
    if reading() == Reading::Full {
        Vec::<Message>::deserialize(d)
    } else {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Vec::new())
    }
}

fn claims_or_skip<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    if reading() == Reading::ForUnjudgedReport {
        serde::de::IgnoredAny::deserialize(d)?;
        return Ok(Vec::new());
    }
    Vec::deserialize(d)
}

fn answer_or_skip<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    if reading() == Reading::ForUnjudgedReport {
        serde::de::IgnoredAny::deserialize(d)?;
        return Ok(None);
    }
    Option::deserialize(d)
}

/// The argument keys a report reads without scoring: the navigation calls' servers and categories
/// (`crate::score::diagnostics`).
const REPORT_ARGUMENT_KEYS: [&str; 2] = ["server_names", "category_names"];

/// A call's arguments ([`super::CallRecord::arguments`]); for a report, an object keeps only
/// [`REPORT_ARGUMENT_KEYS`] (building every argument's value cost more than anything else a report
/// reads of a call, and the scores it would serve are trusted or recomputed from a full parse).
pub(super) fn arguments_or_few<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    if !reading().for_report() {
        return Option::<serde_json::Value>::deserialize(d);
    }
    d.deserialize_option(FewArguments)
}

/// Deserializes `null` as `None`, an object as its [`REPORT_ARGUMENT_KEYS`], anything else whole.
struct FewArguments;

impl<'de> serde::de::Visitor<'de> for FewArguments {
    type Value = Option<serde_json::Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the call's arguments")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(FewArgumentsValue).map(Some)
    }
}

struct FewArgumentsValue;

impl<'de> serde::de::Visitor<'de> for FewArgumentsValue {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the call's arguments")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut kept = serde_json::Map::new();
        while let Some(key) = map.next_key::<ReportKey>()? {
            match key.0 {
                Some(name) => {
                    kept.insert(name.to_string(), map.next_value()?);
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(serde_json::Value::Object(kept))
    }

    // Not an object (a record never has one, but the format allows any value): kept whole.
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        let number = serde_json::Number::from_f64(v);
        Ok(number.map_or(serde_json::Value::Null, serde_json::Value::Number))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        serde_json::Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
    }
}

/// An argument's key: one of [`REPORT_ARGUMENT_KEYS`], or `None` for any other (compared where the
/// parser holds it, not copied).
struct ReportKey(Option<&'static str>);

impl<'de> Deserialize<'de> for ReportKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(ReportKeyVisitor)
    }
}

struct ReportKeyVisitor;

impl<'de> serde::de::Visitor<'de> for ReportKeyVisitor {
    type Value = ReportKey;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an argument's name")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ReportKey, E> {
        Ok(ReportKey(REPORT_ARGUMENT_KEYS.iter().find(|k| **k == v).copied()))
    }
}

/// Parse one line of a trial file without its transcript.
pub fn parse_without_transcript(line: &[u8]) -> serde_json::Result<Trial> {
    parse_as(Reading::WithoutTranscript, line)
}

/// Parse one line of a trial file for a report of a scored run: without the transcript, and without
/// the call arguments only scoring reads (all but the navigation ones). The record is fit for every
/// report but not for scoring: when its score is not of the current scorer, parse the line again
/// with [`parse_without_transcript`] to score it.
///
/// Of a run without judgements (`judged` false), the claims and answers are left out too: only
/// judging reads them.
pub fn parse_for_report(line: &[u8], judged: bool) -> serde_json::Result<Trial> {
    parse_as(if judged { Reading::ForReport } else { Reading::ForUnjudgedReport }, line)
}

fn parse_as(how: Reading, line: &[u8]) -> serde_json::Result<Trial> {
    // Checked as UTF-8 once, as a whole: parsing from bytes checks every string on its own, which
    // cost more than the check of the line (a line that is not UTF-8 is parsed from bytes, for the
    // parser's error with its column).
    reading_as(how, || match std::str::from_utf8(line) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(line),
    })
}

/// Run `f` with trial records read without their transcripts (on this thread).
pub fn without_transcripts<T>(f: impl FnOnce() -> T) -> T {
    reading_as(Reading::WithoutTranscript, f)
}

fn reading_as<T>(how: Reading, f: impl FnOnce() -> T) -> T {
    let before = READING.with(|r| r.replace(how));
    let out = f();
    READING.with(|r| r.set(before));
    out
}

impl Trial {
    /// `true` when the trial is in no rate: the backend failed for infrastructure reasons, or a
    /// provider's limit refused the request.
    pub fn is_error(&self) -> bool {
        matches!(self.stop_reason, StopReason::BackendError | StopReason::ProviderLimit)
    }
}

/// Stream trials from a JSONL file, one at a time; a bad line is an error naming file and line.
pub fn read_trials(path: &Path, mut each: impl FnMut(Trial) -> Result<()>) -> Result<()> {
    let mut lines = super::lines::JsonLines::open(path, "trial file")?;
    while let Some(line) = lines.next_line()? {
        if line.is_blank() {
            continue;
        }
        let trial: Trial = serde_json::from_slice(line.text).map_err(|e| {
            crate::error::InputError::new(path, format!("not a trial record: {e}"))
                .at_line(line.number)
        })?;
        each(trial)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record with a navigation call (its servers kept for diagnostics), an executed call, the
    /// declared parameters and an inline transcript (format 1).
    const LINE: &str = concat!(
        r#"{"trial_id":"d/good/progressive/m/t1#0","dataset":"d","catalog":"c","variant":"good","#,
        r#""layout":"progressive","backend":"m","task_id":"t1","trial":0,"matrix_index":3,"#,
        r#""seed":7,"kind":"single","category":"code","tags":["a"],"query":"Get repo x","#,
        r#""expected":[{"tool":"s/code/get_repo","arguments":{"name":["x"]}}],"#,
        r#""declared":{"s/code/get_repo":{"name":{"type":["string"],"required":true}}},"#,
        r#""calls":[{"record":{"step":1,"name":"discover_server_categories_or_actions","#,
        r#""status":"navigated","arguments":{"user_query":"repo","server_names":["s"]},"#,
        r#""revealed":["s/code/get_repo"]},"read_only":true},{"record":{"step":2,"#,
        r#""name":"execute_action","status":"executed","tool_id":"s/code/get_repo","#,
        r#""arguments":{"name":"x","n":[1,{"deep":null}]}},"read_only":true},{"record":{"step":3,"#,
        r#""name":"x","status":"malformed","arguments":"not json"},"read_only":false}],"steps":3,"#,
        r#""stop_reason":"answered","tokens":{"definitions_upfront":10,"tool_context_total":30},"#,
        r#""score":{"pass":true,"selection_correct":true,"abstention_correct":true,"scorer":2},"#,
        r#""claims":["x is got"],"reference_answer":"x","final_answer":"x","#,
        r#""transcript":[{"role":"user","content":"Get repo x"}]}"#,
    );

    #[test]
    fn a_report_reads_everything_but_the_transcript_and_the_arguments_only_scoring_reads() {
        let full: Trial = serde_json::from_str(LINE).unwrap();
        assert!(!full.transcript.is_empty() && !full.declared.is_empty(), "the fixture has both");
        let light = parse_for_report(LINE.as_bytes(), true).unwrap();
        assert!(light.transcript.is_empty());
        let args: Vec<_> = light.calls.iter().map(|c| c.record.arguments.clone()).collect();
        assert_eq!(args[0], Some(serde_json::json!({"server_names": ["s"]})));
        assert_eq!(args[1], Some(serde_json::json!({})));
        let whole = Some(serde_json::json!("not json"));
        assert_eq!(args[2], whole, "a value that is no object is kept whole");
        // Apart from those, the two parses agree field by field.
        let mut rest = full.clone();
        rest.transcript.clear();
        for (c, a) in rest.calls.iter_mut().zip(args) {
            c.record.arguments = a;
        }
        assert_eq!(light, rest);
        // Without judgements, nor what only judging reads.
        assert!(!full.claims.is_empty());
        assert!(full.reference_answer.is_some() && full.final_answer.is_some());
        let unjudged = parse_for_report(LINE.as_bytes(), false).unwrap();
        assert!(unjudged.claims.is_empty());
        assert_eq!((unjudged.reference_answer, unjudged.final_answer), (None, None));
        rest.claims.clear();
        rest.reference_answer = None;
        rest.final_answer = None;
        assert_eq!(parse_for_report(LINE.as_bytes(), false).unwrap(), rest);
        // The other readers on this thread still read whole records.
        assert_eq!(serde_json::from_str::<Trial>(LINE).unwrap(), full);
        assert_eq!(parse_without_transcript(LINE.as_bytes()).unwrap().declared, full.declared);
    }

    #[test]
    fn a_bad_record_is_an_error_in_every_reading() {
        let bad = LINE.replace(r#""steps":3"#, r#""steps":"three""#);
        let errors = [
            parse_for_report(bad.as_bytes(), true),
            parse_for_report(bad.as_bytes(), false),
            parse_without_transcript(bad.as_bytes()),
        ];
        for e in errors.map(Result::unwrap_err) {
            assert!(e.to_string().contains("invalid type: string \"three\""), "{e}");
        }
        let bad_arguments = LINE.replace(r#""server_names":["s"]"#, r#""server_names":["s""#);
        assert!(parse_for_report(bad_arguments.as_bytes(), false).is_err());
        let bad_answer = LINE.replace(r#""final_answer":"x""#, r#""final_answer":"x"#);
        assert!(parse_for_report(bad_answer.as_bytes(), false).is_err(), "skipped, still checked");
    }
}
