//! `toolpick judge-check`: how far to trust a judge. A small set of answers labelled by people (task,
//! answer, human verdict: solved or unsolved) is judged with the configured judge, and the judge's
//! "done" is compared with the human verdict: accuracy, Cohen's κ with its interval, and the confusion
//! matrix. With a second judge, the two judges' agreement with each other too.
//!
//! Labels are JSONL, one answer per line: `{"id": "…", "task": "<task id>", "answer": "…",
//! "human": "solved" | "unsolved", "process": "…" (optional), "note": "…" (optional)}`. The task's query and
//! claims come from the dataset (`--dataset`), so a label file stays small and the judge sees what it
//! would see in a run (the claims only under the claims method).

use super::{JudgeClient, JudgeConfig, Pending};
use crate::agent::cache::Cache;
use crate::dataset::Dataset;
use crate::error::{InputError, InputErrors};
use crate::record::judgement::{Judgement, answer_digest};
use crate::score::stats::cohen_kappa;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Human {
    Solved,
    Unsolved,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    pub id: String,
    pub task: String,
    pub answer: String,
    pub human: Human,
    #[serde(default)]
    pub process: Option<String>,
    #[serde(default)]
    pub note: String,
    #[serde(skip)]
    pub line: usize,
}

/// Parse a label file; every bad line (and a task id the dataset lacks) is reported with its line.
pub fn load_labels(path: &Path, dataset: &Dataset) -> Result<Vec<Label>, InputErrors> {
    let text = crate::error::read_text(path, "labels").map_err(|e| InputErrors(vec![e]))?;
    let mut errors = Vec::new();
    let mut labels = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        match crate::error::json_line::<Label>(path, i + 1, trimmed) {
            Ok(mut l) => {
                l.line = i + 1;
                if !seen.insert(l.id.clone()) {
                    errors.push(
                        InputError::new(path, format!("duplicate label id `{}`", l.id))
                            .at_line(i + 1)
                            .field("id"),
                    );
                } else if !dataset.tasks.iter().any(|t| t.id == l.task) {
                    errors.push(
                        InputError::new(
                            path,
                            format!(
                                "task `{}` is not in dataset {}",
                                l.task,
                                dataset.path.display()
                            ),
                        )
                        .at_line(i + 1)
                        .field("task"),
                    );
                } else {
                    labels.push(l);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if labels.is_empty() && errors.is_empty() {
        errors.push(InputError::new(path, "no labels"));
    }
    InputErrors(errors).into_result()?;
    Ok(labels)
}

/// One judge's agreement with the human labels (or with another judge).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Agreement {
    /// Items both sides gave a verdict on.
    pub n: u64,
    pub accuracy: f64,
    /// Cohen's κ and its 95 % interval; `None` when undefined (one answer throughout).
    pub kappa: Option<(f64, f64, f64)>,
    /// `[[both done, first done / second not], [first not / second done, both not]]` — the first side
    /// is the humans (or judge A), the second the judge (or judge B).
    pub confusion: [[u64; 2]; 2],
}

/// Agreement of two lists of verdicts (`None`: no verdict, left out).
pub fn agreement(first: &[Option<bool>], second: &[Option<bool>]) -> Agreement {
    let mut table = [[0u64; 2]; 2];
    for (a, b) in first.iter().zip(second) {
        if let (Some(a), Some(b)) = (a, b) {
            table[(!a) as usize][(!b) as usize] += 1;
        }
    }
    let n = table.iter().flatten().sum::<u64>();
    let accuracy = if n == 0 { f64::NAN } else { (table[0][0] + table[1][1]) as f64 / n as f64 };
    Agreement { n, accuracy, kappa: cohen_kappa(table), confusion: table }
}

/// One judge's verdicts on the labels.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeVerdicts {
    pub judge: String,
    pub prompts: String,
    pub judgements: Vec<Judgement>,
    pub errors: usize,
    pub agreement: Agreement,
}

/// Judge every label's answer with `config` and compare with the humans.
pub async fn judge_labels(
    labels: &[Label],
    dataset: &Dataset,
    config: &JudgeConfig,
    cache: Option<Arc<Cache>>,
) -> Result<JudgeVerdicts> {
    let client = Arc::new(JudgeClient::new(&config.spec, cache)?);
    let limit = Arc::new(tokio::sync::Semaphore::new(config.spec.concurrency.max(1)));
    let config = Arc::new(config.clone());
    let mut set = tokio::task::JoinSet::new();
    for (i, l) in labels.iter().enumerate() {
        let task = dataset.tasks.iter().find(|t| t.id == l.task).expect("checked when loaded");
        let method = config
            .method_for(&dataset.name, task.kind, !task.claims.is_empty())
            .ok_or_else(|| {
                InputError::new(
                    &dataset.path,
                    format!(
                        "label `{}`: task `{}` ({}) is not judged by the configured method",
                        l.id,
                        task.id,
                        task.kind.as_str()
                    ),
                )
                .at_line(l.line)
            })?;
        let p = Pending {
            trial_id: l.id.clone(),
            matrix_index: i,
            method,
            query: task.query.clone(),
            answer: Some(l.answer.clone()),
            claims: task.claims.clone(),
            process: l.process.clone().unwrap_or_else(|| "(not recorded)".into()),
            digest: answer_digest(Some(&l.answer), &task.claims),
        };
        let (client, config, limit) = (client.clone(), config.clone(), limit.clone());
        set.spawn(async move {
            let _permit = limit.acquire_owned().await.expect("semaphore");
            super::judge_one(&client, &config, &p, &config.spec.name).await
        });
    }
    let mut judgements = Vec::new();
    while let Some(j) = set.join_next().await {
        judgements.push(j?);
    }
    judgements.sort_by_key(|j| j.matrix_index);
    let human: Vec<Option<bool>> = labels.iter().map(|l| Some(l.human == Human::Solved)).collect();
    let judged: Vec<Option<bool>> = judgements.iter().map(|j| j.done).collect();
    Ok(JudgeVerdicts {
        judge: config.spec.name.clone(),
        prompts: config.prompts.digest.clone(),
        errors: judgements.iter().filter(|j| j.is_error()).count(),
        agreement: agreement(&human, &judged),
        judgements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_counts_the_table_and_skips_missing_verdicts() {
        let human = [Some(true), Some(true), Some(false), Some(false), Some(true)];
        let judge = [Some(true), Some(false), Some(false), Some(true), None];
        let a = agreement(&human, &judge);
        assert_eq!(a.n, 4);
        assert_eq!(a.confusion, [[1, 1], [1, 1]]);
        assert!((a.accuracy - 0.5).abs() < 1e-12);
        assert_eq!(a.kappa.map(|k| k.0), Some(0.0));
    }
}
