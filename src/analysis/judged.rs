//! Aggregates of the judge's verdicts per cell: the judged pass rate (SoPR) with its interval and its
//! spread over rounds, claim coverage, the judged "done" rate, and the joint view a schema designer
//! reads — right tools and task done, right tools and not done, wrong tools and done anyway. "Right
//! tools" is the trial's selection verdict (the expected tools and only those were called); "done" is
//! the judgement's (pass-rate: more Solved than not over the rounds; claims: coverage at the threshold).
//!
//! Only trials with a judgement count; a judge error is counted apart and in no rate, like an
//! infrastructure error of a trial. Judge tokens and cost are summed here, never into the agent's.

use super::BOOTSTRAP_RESAMPLES;
use super::rows::ScoreRows;
use crate::record::judgement::Method;
use crate::score::stats::{Rate, mean_interval, wilson};
use serde::Serialize;
use std::collections::BTreeMap;

/// A mean of per-trial judged scores with its 95 % interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JudgedMean {
    pub n: u64,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// Pass-rate: the standard deviation over rounds of the round means (`None` with one round).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_std: Option<f64>,
}

/// The joint view of tool choice and judged outcome, over trials with a verdict.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Joint {
    pub tools_done: u64,
    pub tools_not_done: u64,
    pub wrong_tools_done: u64,
    pub wrong_tools_not_done: u64,
}

/// The judge's aggregates of one cell.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JudgeCell {
    /// The judges' labels and prompt-set digests seen in the cell (one of each, unless mixed).
    pub judges: Vec<String>,
    pub prompts: Vec<String>,
    /// Trials with a verdict.
    pub judged: u64,
    /// Judgements that failed (no verdict).
    pub errors: u64,
    /// Judged without asking (empty answers, give-ups).
    pub short_circuited: u64,
    /// Pass-rate judgements: the solvable pass rate (SoPR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sopr: Option<JudgedMean>,
    /// Claims judgements: mean coverage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<JudgedMean>,
    /// Claims judgements: coverage at or above the threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claims_pass: Option<Rate>,
    /// Judged done, over trials with a verdict.
    pub done: Rate,
    pub joint: Joint,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
}

#[derive(Default)]
struct Acc {
    judges: Vec<String>,
    prompts: Vec<String>,
    errors: u64,
    short: u64,
    pass_rate: Vec<f64>,
    /// Per round: the scores of the pass-rate judgements that have that round.
    rounds: Vec<Vec<f64>>,
    coverage: Vec<f64>,
    claims_done: u64,
    done: u64,
    judged: u64,
    joint: Joint,
    prompt_tokens: u64,
    completion_tokens: u64,
    cost: f64,
}

fn note(list: &mut Vec<String>, s: &str) {
    if !list.iter().any(|x| x == s) {
        list.push(s.to_string());
    }
}

/// Per cell key, the judge's aggregates; cells without any judgement are absent.
pub fn summarize(rows: &ScoreRows) -> BTreeMap<String, JudgeCell> {
    let mut acc: BTreeMap<String, Acc> = BTreeMap::new();
    for (i, j) in rows.judgement.iter().enumerate() {
        let Some(j) = j else { continue };
        if rows.infra[i] {
            continue;
        }
        let a = acc.entry(rows.cell_key(i)).or_default();
        note(&mut a.judges, &j.judge);
        note(&mut a.prompts, &j.prompts);
        a.prompt_tokens += j.usage.prompt_tokens;
        a.completion_tokens += j.usage.completion_tokens;
        a.cost += j.cost_usd.unwrap_or(0.0);
        let (Some(score), Some(done)) = (j.score, j.done) else {
            a.errors += 1;
            continue;
        };
        a.short += j.short_circuit.is_some() as u64;
        a.judged += 1;
        a.done += done as u64;
        match j.method {
            Method::PassRate => {
                a.pass_rate.push(score);
                for (r, round) in j.rounds.iter().enumerate() {
                    if a.rounds.len() <= r {
                        a.rounds.push(Vec::new());
                    }
                    a.rounds[r].push(round.status.score());
                }
            }
            Method::Claims => {
                a.coverage.push(score);
                a.claims_done += done as u64;
            }
        }
        let right = rows.selection[i];
        match (right, done) {
            (true, true) => a.joint.tools_done += 1,
            (true, false) => a.joint.tools_not_done += 1,
            (false, true) => a.joint.wrong_tools_done += 1,
            (false, false) => a.joint.wrong_tools_not_done += 1,
        }
    }
    acc.into_iter()
        .map(|(key, a)| {
            let seed = crate::record::stable_hash(key.as_bytes()) ^ 0x6a75_6467;
            let mean_of = |v: &[f64], seed: u64, round_std: Option<f64>| {
                (!v.is_empty()).then(|| {
                    let (mean, low, high) = mean_interval(v, BOOTSTRAP_RESAMPLES, seed);
                    JudgedMean { n: v.len() as u64, mean, low, high, round_std }
                })
            };
            let round_means: Vec<f64> = a
                .rounds
                .iter()
                .filter(|r| !r.is_empty())
                .map(|r| r.iter().sum::<f64>() / r.len() as f64)
                .collect();
            let round_std = (round_means.len() > 1).then(|| {
                let m = round_means.iter().sum::<f64>() / round_means.len() as f64;
                (round_means.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
                    / (round_means.len() - 1) as f64)
                    .sqrt()
            });
            let cell = JudgeCell {
                judges: a.judges,
                prompts: a.prompts,
                judged: a.judged,
                errors: a.errors,
                short_circuited: a.short,
                sopr: mean_of(&a.pass_rate, seed, round_std),
                coverage: mean_of(&a.coverage, seed ^ 1, None),
                claims_pass: (!a.coverage.is_empty())
                    .then(|| wilson(a.claims_done, a.coverage.len() as u64)),
                done: wilson(a.done, a.judged),
                joint: a.joint,
                prompt_tokens: a.prompt_tokens,
                completion_tokens: a.completion_tokens,
                cost_usd: a.cost,
            };
            (key, cell)
        })
        .collect()
}
