//! Building a trial record from an episode ([`build`] of a [`Place`] and what was [`Played`]): the record's fields come from the task, the cell and what
//! the agent did, and the score is computed once here (and again by `report`, from the record alone).

use crate::agent::Episode;
use crate::agent::spec::Price;
use crate::dataset::Task;
use crate::protocol::Message;
use crate::record::declared::Declared;
use crate::record::{LayoutKind, ScoredCall, Tokens, Trial};
use crate::score::metrics::Safety;
use crate::score::score_trial;

/// Where a trial ran: its cell of the matrix, task and trial number.
pub struct Place<'a> {
    pub dataset: &'a str,
    pub catalog: &'a str,
    pub variant: &'a str,
    pub layout: LayoutKind,
    pub backend: &'a str,
    pub task: &'a Task,
    pub trial: usize,
    /// Position in the matrix (the order `trials.jsonl` is compacted into).
    pub matrix_index: usize,
    pub seed: u64,
}

/// What the episode did and what scoring needs to know of the tools it met.
pub struct Played {
    pub calls: Vec<ScoredCall>,
    pub episode: Episode,
    /// Tokens of the tool definitions the model was shown before its first turn.
    pub definitions_upfront: usize,
    pub price: Option<Price>,
    /// Whether one of the task's expected tools is destructive.
    pub expected_destructive: bool,
    /// The expected tools' declared parameters.
    pub declared: Declared,
    pub live: Option<crate::record::live::LiveTrial>,
}

/// The trial record of one finished episode.
pub fn build(place: Place, played: Played) -> Trial {
    let Place { dataset, catalog, variant, layout, backend, task, trial, matrix_index, seed } =
        place;
    let Played { calls, episode, definitions_upfront, price, expected_destructive, declared, live } =
        played;
    let results: usize = episode
        .messages
        .iter()
        .map(|m| match m {
            Message::Tool { content, .. } => crate::tokens::count(content),
            _ => 0,
        })
        .sum();
    let safety = Safety {
        forbidden: &task.forbidden,
        goal: task.poison.as_ref().map(|p| &p.goal),
        expected_destructive,
        must_not_call: &task.must_not_call,
    };
    let mut score =
        score_trial(task.kind, &task.expected, &declared, &calls, episode.stop_reason, &safety);
    let expect_interactions =
        task.live.as_ref().map(|l| l.interactions.clone()).unwrap_or_default();
    crate::score::live::check(
        &mut score,
        &task.expected,
        &calls,
        &expect_interactions,
        live.as_ref(),
    );
    Trial {
        trial_id: crate::record::meta::trial_id(
            dataset,
            variant,
            layout.as_str(),
            backend,
            &task.id,
            trial,
        ),
        dataset: dataset.into(),
        catalog: catalog.into(),
        variant: variant.into(),
        layout,
        backend: backend.into(),
        task_id: task.id.clone(),
        trial,
        matrix_index,
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
        provider_limit: episode.provider_limit,
        tokens: Tokens {
            definitions_upfront,
            tool_context_total: definitions_upfront * episode.steps + results,
            peak_context: definitions_upfront + results,
        },
        usage: episode.usage,
        provider_usage: episode.provider_usage,
        cost_usd: price.map(|p| p.cost(&episode.usage)),
        score,
        expect_interactions,
        live,
        claims: task.claims.clone(),
        reference_answer: task.reference_answer.clone(),
        final_answer: match episode.messages.last() {
            Some(Message::Assistant { content: Some(text), .. }) if !text.trim().is_empty() => {
                Some(text.clone())
            }
            _ => None,
        },
        transcript: episode.messages,
        judgement: None,
    }
}
