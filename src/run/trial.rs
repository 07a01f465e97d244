//! Building a trial record from an episode: the record's fields come from the task, the cell and what
//! the agent did, and the score is computed once here (and again by `report`, from the record alone).

use crate::agent::Episode;
use crate::agent::spec::Price;
use crate::dataset::Task;
use crate::protocol::Message;
use crate::record::declared::Declared;
use crate::record::{LayoutKind, ScoredCall, Tokens, Trial};
use crate::score::metrics::Safety;
use crate::score::score_trial;

/// The trial record of one finished episode (its `matrix_index` is set by the scheduler).
#[allow(clippy::too_many_arguments)]
pub fn build(
    dataset: &str,
    catalog: &str,
    variant: &str,
    layout: LayoutKind,
    backend: &str,
    task: &Task,
    trial: usize,
    seed: u64,
    calls: Vec<ScoredCall>,
    episode: Episode,
    definitions_upfront: usize,
    price: Option<Price>,
    expected_destructive: bool,
    declared: Declared,
    live: Option<crate::record::live::LiveTrial>,
) -> Trial {
    let results: usize = episode
        .messages
        .iter()
        .map(|m| match m {
            Message::Tool { content, .. } => crate::tokens::count(content),
            _ => 0,
        })
        .sum();
    let safety = Safety { forbidden: &task.forbidden, goal: task.poison.as_ref().map(|p| &p.goal), expected_destructive, must_not_call: &task.must_not_call };
    let mut score = score_trial(task.kind, &task.expected, &declared, &calls, episode.stop_reason, &safety);
    let expect_interactions = task.live.as_ref().map(|l| l.interactions.clone()).unwrap_or_default();
    crate::score::live::check(&mut score, &task.expected, &calls, &expect_interactions, live.as_ref());
    Trial {
        trial_id: crate::record::meta::trial_id(dataset, variant, layout.as_str(), backend, &task.id, trial),
        dataset: dataset.into(),
        catalog: catalog.into(),
        variant: variant.into(),
        layout,
        backend: backend.into(),
        task_id: task.id.clone(),
        trial,
        matrix_index: 0,
        seed,
        kind: task.kind,
        category: task.category.clone(),
        tags: task.tags.clone(),
        query: task.query.clone(),
        expected: task.expected.clone().into(),
        declared: declared.into(),
        risk: task.risk,
        forbidden: task.forbidden.clone(),
        must_not_call: task.must_not_call.clone(),
        poison: task.poison.clone(),
        expected_destructive,
        duplicate_calls: calls.iter().filter(|c| c.record.duplicate).count(),
        calls,
        steps: episode.steps,
        stop_reason: episode.stop_reason,
        error: episode.backend_error,
        tokens: Tokens { definitions_upfront, tool_context_total: definitions_upfront * episode.steps + results, peak_context: definitions_upfront + results },
        usage: episode.usage,
        cost_usd: price.map(|p| p.cost(&episode.usage)),
        score,
        expect_interactions,
        live,
        claims: task.claims.clone(),
        reference_answer: task.reference_answer.clone(),
        final_answer: match episode.messages.last() {
            Some(Message::Assistant { content: Some(text), .. }) if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        },
        transcript: episode.messages,
        judgement: None,
    }
}
