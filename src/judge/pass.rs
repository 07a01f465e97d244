//! Judging a whole run directory ([`judge_run`]): which trials still need a verdict, the judge's
//! preflight, the verdicts appended to `judgements.jsonl` as they arrive and the file rewritten in
//! matrix order at the end, and the judge named in `run.json`. Apart from [`super`] (how one answer
//! is judged: prompts, rounds, verdicts) because this is the bookkeeping of a pass over a run.

use super::{JudgeClient, JudgeConfig, Pending, config, judge_one, process_text};
use crate::agent::cache::Cache;
use crate::error::InputError;
use crate::protocol::Usage;
use crate::record::Trial;
use crate::record::judgement::{self, Judgement, Method};
use crate::record::meta::RunMeta;
use anyhow::{Result, anyhow};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// What a judging did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct JudgeOutcome {
    /// Trials judged now.
    pub judged: usize,
    /// Judgements kept from an earlier judging.
    pub kept: usize,
    /// Judgements (now or kept) that are errors.
    pub errors: usize,
    /// Judged now without asking (empty answers, give-ups).
    pub short_circuited: usize,
    pub usage: Usage,
    pub cost_usd: f64,
}

/// Judge every trial of the run in `dir` that has no valid judgement yet (with `retry_errors`, also
/// those whose judgement failed), write `judgements.jsonl` and record the judge in `run.json`. The
/// caller holds the run directory's lock.
///
/// Once the judge's endpoint has answered its preflight, the file is rewritten with the judgements
/// that are kept and `run.json` names this judge, so the file only ever holds this judge's verdicts;
/// then each new judgement is appended as it is received. At the end the file is rewritten sorted.
pub async fn judge_run(
    dir: &Path,
    config: &JudgeConfig,
    cache: Option<Arc<Cache>>,
    retry_errors: bool,
) -> Result<JudgeOutcome> {
    let trials_path = dir.join(crate::record::TRIALS);
    let mut trials: Vec<Trial> = Vec::new();
    crate::record::trial::read_trials(&trials_path, |t| {
        trials.push(t);
        Ok(())
    })?;
    // A method for a dataset the run does not have would be ignored (`report --judge-method`): refused before any request.
    let datasets: Vec<String> = trials
        .iter()
        .map(|t| t.dataset.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    config::check_method_datasets(
        None,
        None,
        config.methods.keys().map(String::as_str),
        &datasets,
    )?;
    let earlier: BTreeMap<String, Judgement> =
        judgement::read(dir)?.into_iter().map(|j| (j.trial_id.clone(), j)).collect();
    let mut outcome = JudgeOutcome::default();
    let mut all: Vec<Judgement> = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    for t in &trials {
        if t.is_error() {
            continue;
        }
        let Some(method) = config.method_for(&t.dataset, t.kind, !t.claims.is_empty()) else {
            continue;
        };
        let digest = judgement::answer_digest(t.final_answer.as_deref(), &t.claims);
        if let Some(j) = earlier.get(&t.trial_id)
            && config.still_valid(j, method, &digest)
            && !(retry_errors && j.is_error())
        {
            let mut j = j.clone();
            j.matrix_index = t.matrix_index;
            all.push(j);
            outcome.kept += 1;
            continue;
        }
        pending.push(Pending {
            trial_id: t.trial_id.clone(),
            matrix_index: t.matrix_index,
            method,
            query: t.query.clone(),
            answer: t.final_answer.clone(),
            claims: t.claims.clone(),
            process: if t.transcript.is_empty() {
                String::new()
            } else {
                process_text(&t.transcript)
            },
            digest,
        });
    }
    drop(trials);
    // The processes of the pending pass-rate trials (format 2 keeps them in transcripts.jsonl).
    let wanted: rustc_hash::FxHashMap<String, usize> = pending
        .iter()
        .enumerate()
        .filter(|(_, p)| p.method == Method::PassRate && p.process.is_empty())
        .map(|(i, p)| (p.trial_id.clone(), i))
        .collect();
    if !wanted.is_empty() {
        let mut found: Vec<(usize, String)> = Vec::new();
        crate::record::transcripts::read(
            dir,
            |id| wanted.contains_key(id),
            |id, messages| found.push((wanted[&id], process_text(&messages))),
        )?;
        for (i, text) in found {
            pending[i].process = text;
        }
    }
    if !pending.is_empty() {
        let client = Arc::new(JudgeClient::new(&config.spec, cache)?);
        if config.spec.preflight {
            client.preflight().await.map_err(|e| {
                InputError::new("--judge", format!("the judge's endpoint does not answer: {e}"))
            })?;
        }
        // From here on the file holds this judge's verdicts only: those kept, then each new one.
        judgement::write(dir, &mut all)?;
        record_in_run_json(dir, config)?;
        let mut appender = crate::record::store::Appender::open(&dir.join(judgement::FILE))?
            .with_crash_point("judge-append");
        let redactor = crate::redact::global();
        let mut keep = |j: &Judgement| -> Result<()> {
            appender.append(&redactor.redact_bytes(&serde_json::to_vec(j)?))
        };
        let limit = Arc::new(tokio::sync::Semaphore::new(config.spec.concurrency.max(1)));
        let config = Arc::new(config.clone());
        let mut set = tokio::task::JoinSet::new();
        let mut finish = |j: Judgement, outcome: &mut JudgeOutcome| -> Result<()> {
            keep(&j)?;
            outcome.judged += 1;
            outcome.short_circuited += j.short_circuit.is_some() as usize;
            all.push(j);
            Ok(())
        };
        // A permit is taken before a judgement is started, so at most `concurrency` are in flight
        // (not one task per trial of a large run).
        for p in pending {
            let permit = limit.clone().acquire_owned().await.expect("semaphore");
            let (client, config) = (client.clone(), config.clone());
            set.spawn(async move {
                let _permit = permit;
                judge_one(&client, &config, &p, &config.spec.name).await
            });
            while let Some(done) = set.try_join_next() {
                finish(done.map_err(|e| anyhow!("a judging task failed: {e}"))?, &mut outcome)?;
            }
        }
        while let Some(done) = set.join_next().await {
            finish(done.map_err(|e| anyhow!("a judging task failed: {e}"))?, &mut outcome)?;
        }
    }
    for j in &all {
        outcome.errors += j.is_error() as usize;
        outcome.usage.add(&j.usage);
        outcome.cost_usd += j.cost_usd.unwrap_or(0.0);
    }
    judgement::write(dir, &mut all)?;
    record_in_run_json(dir, config)?;
    Ok(outcome)
}

/// `run.json` gains (or has replaced) its `judge` entry.
fn record_in_run_json(dir: &Path, config: &JudgeConfig) -> Result<()> {
    let mut meta = RunMeta::read_if_present(dir)?.unwrap_or_default();
    meta.judge = Some(config.describe());
    meta.write(dir)
}
