//! `judgements.jsonl`: a judge's verdicts on the final answers of a run's trials, one line per judged
//! trial, in matrix order. It sits beside `trials.jsonl` as part of the run's records: the judge (a
//! producer, `crate::judge`) writes it; scoring and reports read it and join each line to its trial
//! by `trial_id`. A run judged again with another judge, method, prompt set or threshold gets a new
//! file; a line whose `answer_digest` no longer matches its trial (the trial was re-run) is stale and
//! ignored.
//!
//! A judgement that failed (the judge's endpoint failed after its retries, or its answers could not be
//! read) keeps `error` and has no score: it counts as a judge error, never as "Unsolved", and
//! `--retry-errors` judges it again.

use crate::protocol::Usage;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's name inside a run directory.
pub const FILE: &str = "judgements.jsonl";

/// How an answer is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// StableToolBench's solvable pass rate: answer status (then, when unsure, the process), N rounds,
    /// Solved = 1, Unsure = 0.5, Unsolved = 0.
    PassRate,
    /// One verdict per expected claim (fulfilled 1, partly 0.5, not 0); coverage = their mean.
    Claims,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::PassRate => "pass-rate",
            Method::Claims => "claims",
        }
    }
    pub fn parse(s: &str) -> Option<Method> {
        match s {
            "pass-rate" => Some(Method::PassRate),
            "claims" => Some(Method::Claims),
            _ => None,
        }
    }
}

/// A verdict on whether the task got done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Solved,
    Unsure,
    Unsolved,
}

impl Status {
    pub fn score(self) -> f64 {
        match self {
            Status::Solved => 1.0,
            Status::Unsure => 0.5,
            Status::Unsolved => 0.0,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::Unsure => "unsure",
            Status::Unsolved => "unsolved",
        }
    }
}

/// One round of the pass-rate method: the answer-status check and, when it was unsure, the check of
/// the process (calls and results) that led to the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The round's verdict: the process check's when there was one, else the answer check's.
    pub status: Status,
    pub answer_status: Status,
    pub answer_reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_reason: Option<String>,
}

/// A verdict on one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    Fulfilled,
    Partly,
    Not,
}

impl ClaimStatus {
    pub fn score(self) -> f64 {
        match self {
            ClaimStatus::Fulfilled => 1.0,
            ClaimStatus::Partly => 0.5,
            ClaimStatus::Not => 0.0,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Fulfilled => "fulfilled",
            ClaimStatus::Partly => "partly",
            ClaimStatus::Not => "not",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    pub claim: String,
    pub status: ClaimStatus,
    pub reason: String,
}

/// One judged trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub trial_id: String,
    pub matrix_index: usize,
    /// The judge's label (its model name, or `name` in `[judge]`).
    pub judge: String,
    pub method: Method,
    /// Digest of the prompt set the verdicts were asked with (also in `run.json`).
    pub prompts: String,
    /// Digest of what was judged (the final answer and the claims): a trial re-run with another answer
    /// no longer matches, and is judged again.
    pub answer_digest: String,
    /// Pass-rate: one entry per round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Round>,
    /// Claims: one entry per claim, in the task's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimVerdict>,
    /// Pass-rate: the mean of the rounds' scores; claims: the coverage. `None` on a judge error.
    pub score: Option<f64>,
    /// Task done: pass-rate, score above 0.5 (more Solved than not); claims, coverage at least the
    /// claim threshold. `None` on a judge error.
    pub done: Option<bool>,
    /// Pass-rate: the rounds asked for.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub round_count: usize,
    /// Claims: the threshold `done` was decided with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Decided without asking the judge: why (an empty answer, a give-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_circuit: Option<String>,
    /// Tokens the judge's endpoint reported for this trial's judgement (never the agent's).
    #[serde(default)]
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The judgement failed (endpoint, unreadable verdicts): no score; `--retry-errors` retries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Judgement {
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }
}

/// The digest [`Judgement::answer_digest`] holds for a final answer and claims.
pub fn answer_digest(final_answer: Option<&str>, claims: &[String]) -> String {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(final_answer.unwrap_or("\u{0}none").as_bytes());
    for c in claims {
        bytes.push(0x1f);
        bytes.extend_from_slice(c.as_bytes());
    }
    format!("{:016x}", super::stable_hash(&bytes))
}

/// Read `dir/judgements.jsonl`; an absent file is no judgements. A bad line is an error naming the file
/// and line, except a last line without its newline that does not parse: the judge appends verdicts as
/// they come, and a pass killed while appending one leaves it torn; it is reported on stderr and
/// skipped (that trial is judged again). Of several lines of one trial the caller keeps the last.
pub fn read(dir: &Path) -> Result<Vec<Judgement>> {
    let path = dir.join(FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(crate::error::InputError::new(&path, format!("cannot read: {e}")).into());
        }
    };
    let mut out = Vec::new();
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let j: Judgement = match serde_json::from_slice(line) {
            Ok(j) => j,
            // The piece after the last newline: a line whose writer was killed.
            Err(_) if i + 1 == lines.len() => {
                crate::messages::warning(format_args!(
                    "{}:{}: the last judgement is incomplete (a judge pass was killed while writing it); skipped",
                    path.display(),
                    i + 1
                ));
                continue;
            }
            Err(e) => {
                return Err(crate::error::InputError::new(
                    &path,
                    format!("not a judgement record: {e}"),
                )
                .at_line(i + 1)
                .into());
            }
        };
        out.push(j);
    }
    Ok(out)
}

/// Write every judgement, sorted by matrix index then trial id, to `dir/judgements.jsonl` at once
/// (a temporary file renamed into place: a crash leaves the previous file).
pub fn write(dir: &Path, judgements: &mut [Judgement]) -> Result<()> {
    judgements.sort_by(|a, b| (a.matrix_index, &a.trial_id).cmp(&(b.matrix_index, &b.trial_id)));
    let mut bytes = Vec::new();
    for j in judgements.iter() {
        serde_json::to_writer(&mut bytes, j)?;
        bytes.push(b'\n');
    }
    crate::files::write_atomic(&dir.join(FILE), &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_changes_with_answer_and_claims() {
        let a = answer_digest(Some("x"), &["c".into()]);
        assert_ne!(a, answer_digest(Some("y"), &["c".into()]));
        assert_ne!(a, answer_digest(Some("x"), &["d".into()]));
        assert_ne!(answer_digest(None, &[]), answer_digest(Some(""), &[]));
        assert_eq!(a, answer_digest(Some("x"), &["c".into()]));
    }
}
