//! Agent episodes: one query, one layout, one backend, up to a step limit.
//!
//! The loop is the chat-completions loop every real agent runs: send the conversation and the layout's
//! functions, execute every returned call through the layout, append the results, repeat until the model
//! answers without a call or the step limit is hit. Backends only see what a model would see (messages
//! and functions); the oracle alone is also handed the answer key, to prove the plumbing (the replay
//! backend reads only its tool addresses, to translate recorded names).

pub mod backends;
pub mod clauses;
pub mod extract;
pub mod textcalls;

use crate::dataset::Task;
use crate::layout::{CallRecord, Layout, LayoutKind};
use crate::protocol::{AssistantTurn, FunctionDef, Message, TurnTiming, Usage};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Where a tool id is addressed in the current variant and layout (the answer key's vocabulary).
#[derive(Debug, Clone, PartialEq)]
pub struct Address {
    /// Function name in the flat layout.
    pub function: String,
    pub server: String,
    pub category: String,
    /// Tool name in the current variant (the progressive layout's action name).
    pub action: String,
    /// For a merged tool: the dispatch parameter and the value that selects this tool.
    pub dispatch: Option<(String, String)>,
}

pub type Addressing = HashMap<String, Address>;

/// Everything a backend may look at to produce one turn.
pub struct TurnContext<'a> {
    pub task: &'a Task,
    pub messages: &'a [Message],
    pub functions: &'a [FunctionDef],
    pub layout: LayoutKind,
    /// Where every offered tool id is addressed. The oracle plays the answer key through it; the replay
    /// backend only translates recorded tool names with it. No other backend may use it.
    pub addressing: &'a Addressing,
    /// Seed for this episode (already mixed with the task and cell).
    pub seed: u64,
    /// Trial index (repeated trials of one task must not share cache entries).
    pub trial: usize,
}

impl TurnContext<'_> {
    /// Number of assistant turns so far.
    pub fn turn(&self) -> usize {
        self.messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count()
    }

    /// The calls of the last assistant turn with their results, in order.
    pub fn last_results(&self) -> Vec<(&str, &str, &str)> {
        let Some(pos) = self.messages.iter().rposition(|m| matches!(m, Message::Assistant { .. })) else {
            return vec![];
        };
        let Message::Assistant { tool_calls, .. } = &self.messages[pos] else { unreachable!() };
        tool_calls
            .iter()
            .map(|c| {
                let result = self.messages[pos..]
                    .iter()
                    .find_map(|m| match m {
                        Message::Tool { tool_call_id, content, .. } if *tool_call_id == c.id => Some(content.as_str()),
                        _ => None,
                    })
                    .unwrap_or("");
                (c.name.as_str(), c.arguments.as_str(), result)
            })
            .collect()
    }
}

/// A deterministic, in-process policy (the baselines): decides a turn synchronously.
pub trait Policy: Send + Sync {
    fn name(&self) -> &str;
    fn decide(&self, ctx: &TurnContext<'_>) -> anyhow::Result<AssistantTurn>;
}

pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Anything that produces assistant turns: a baseline policy or a model behind an endpoint.
pub trait Backend: Send + Sync {
    /// The label used in cells and reports.
    fn name(&self) -> &str;
    /// Most episodes a backend should run at once (an endpoint's concurrency limit).
    fn concurrency(&self) -> usize {
        usize::MAX
    }
    fn respond<'a>(&'a self, ctx: &'a TurnContext<'a>) -> BoxFuture<'a, anyhow::Result<AssistantTurn>>;
    /// Endpoint counters for `run.json`, if the backend talks to one.
    fn stats(&self) -> Option<serde_json::Value> {
        None
    }
    /// Price table entry, to turn usage into cost.
    fn price(&self) -> Option<crate::run::config::Price> {
        None
    }
}

impl<P: Policy> Backend for P {
    fn name(&self) -> &str {
        Policy::name(self)
    }
    fn respond<'a>(&'a self, ctx: &'a TurnContext<'a>) -> BoxFuture<'a, anyhow::Result<AssistantTurn>> {
        Box::pin(std::future::ready(self.decide(ctx)))
    }
}

/// Why an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without calling a tool.
    Answered,
    /// The step limit was reached while the model was still calling tools.
    StepLimit,
    /// The backend failed (infrastructure, not a model decision).
    BackendError,
}

/// The record of one episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub messages: Vec<Message>,
    pub calls: Vec<CallRecord>,
    /// Assistant turns taken.
    pub steps: usize,
    pub stop_reason: StopReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_error: Option<String>,
    /// Token usage summed over the turns, as reported by the endpoint.
    pub usage: Usage,
    /// Timing of every model request (not deterministic; written apart from trial records).
    #[serde(skip)]
    pub timings: Vec<TurnTiming>,
}

pub const SYSTEM_PROMPT: &str = "You are an assistant that can use tools. Use the tools to do what the user asks. \
If none of the tools can do it, say so and do not call any tool.";

/// Run one episode.
pub async fn run_episode(
    backend: &dyn Backend,
    layout: &dyn Layout,
    task: &Task,
    addressing: &Addressing,
    max_steps: usize,
    seed: u64,
    trial: usize,
) -> Episode {
    let mut messages =
        vec![Message::System { content: SYSTEM_PROMPT.into() }, Message::User { content: task.query.clone() }];
    let mut calls = Vec::new();
    let mut steps = 0;
    let mut stop_reason = StopReason::StepLimit;
    let mut backend_error = None;
    let mut usage = Usage::default();
    let mut timings = Vec::new();
    while steps < max_steps {
        let offered = layout.offered(&messages);
        let ctx = TurnContext {
            task,
            messages: &messages,
            functions: &offered,
            layout: layout.kind(),
            addressing,
            seed,
            trial,
        };
        let result = backend.respond(&ctx).await;
        drop(offered);
        let turn = match result {
            Ok(t) => t,
            Err(e) => {
                stop_reason = StopReason::BackendError;
                backend_error = Some(format!("{e:#}"));
                break;
            }
        };
        steps += 1;
        usage.add(&turn.usage);
        if let Some(t) = turn.timing.clone() {
            timings.push(t);
        }
        let done = turn.tool_calls.is_empty();
        messages.push(Message::Assistant { content: turn.content, tool_calls: turn.tool_calls.clone() });
        if done {
            stop_reason = StopReason::Answered;
            break;
        }
        for call in &turn.tool_calls {
            let mut outcome = layout.call_in(call, steps, &messages);
            outcome.record.from_text = turn.text_call_ids.contains(&call.id);
            messages.push(Message::Tool { tool_call_id: call.id.clone(), name: call.name.clone(), content: outcome.content });
            calls.push(outcome.record);
        }
    }
    Episode { messages, calls, steps, stop_reason, backend_error, usage, timings }
}
