//! Agent episodes: one query, one layout, one backend, up to a step limit.
//!
//! The loop is the chat-completions loop every real agent runs: send the conversation and the layout's
//! functions, execute every returned call through the layout, append the results, repeat until the model
//! answers without a call or the step limit is hit. Backends only see what a model would see (messages
//! and functions); the oracle alone is also handed the answer key, to prove the plumbing (the replay
//! backend reads only its tool addresses, to translate recorded names).

pub mod backends;
pub mod cache;
pub mod clauses;
pub mod extract;
pub mod spec;
pub mod textcalls;

use crate::dataset::Task;
use crate::layout::{CallRecord, Layout, LayoutKind};
use crate::protocol::{AssistantTurn, Finish, FunctionDef, Message, ToolCall, TurnTiming, Usage};
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
    /// Tools to send deferred (`defer_loading`) for the provider to load: the native layouts only
    /// ([`crate::layout::Layout::deferred`]).
    pub deferred: &'a [FunctionDef],
    /// The catalog's functions grouped by server ([`crate::layout::Layout::groups`]); read only by a
    /// backend whose model sends groups (`namespaces`).
    pub groups: &'a [crate::protocol::ToolGroup],
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
    /// Number of assistant turns so far: the assistant messages after the query (the last user
    /// message), so that assistant messages of a task's history are not counted as the agent's turns.
    pub fn turn(&self) -> usize {
        let after_query = self
            .messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
            .map_or(0, |p| p + 1);
        self.messages[after_query..]
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count()
    }

    /// The calls of the last assistant turn with their results, in order.
    pub fn last_results(&self) -> Vec<(&str, &str, &str)> {
        let Some(pos) = self.messages.iter().rposition(|m| matches!(m, Message::Assistant { .. }))
        else {
            return vec![];
        };
        let Message::Assistant { tool_calls, .. } = &self.messages[pos] else { unreachable!() };
        tool_calls
            .iter()
            .map(|c| {
                let result = self.messages[pos..]
                    .iter()
                    .find_map(|m| match m {
                        Message::Tool { tool_call_id, content, .. } if *tool_call_id == c.id => {
                            Some(content.as_str())
                        }
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
    fn respond<'a>(
        &'a self,
        ctx: &'a TurnContext<'a>,
    ) -> BoxFuture<'a, anyhow::Result<AssistantTurn>>;
    /// Endpoint counters for `run.json`, if the backend talks to one.
    fn stats(&self) -> Option<serde_json::Value> {
        None
    }
    /// Price table entry, to turn usage into cost.
    fn price(&self) -> Option<spec::Price> {
        None
    }
    /// The episode with this seed is over (however it ended): release what it held.
    fn end_episode(&self, _seed: u64) {}
}

impl<P: Policy> Backend for P {
    fn name(&self) -> &str {
        Policy::name(self)
    }
    fn respond<'a>(
        &'a self,
        ctx: &'a TurnContext<'a>,
    ) -> BoxFuture<'a, anyhow::Result<AssistantTurn>> {
        Box::pin(std::future::ready(self.decide(ctx)))
    }
}

pub use crate::record::StopReason;

/// How far an episode may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most assistant turns.
    pub max_steps: usize,
    /// Stop after this many consecutive turns making the same calls (0: never).
    pub repeat_limit: usize,
}

/// The default of [`Limits::repeat_limit`]: a third identical turn in a row is a loop.
pub const DEFAULT_REPEAT_LIMIT: usize = 3;

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
    /// The provider's limit that refused a request (`stop_reason: provider_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_limit: Option<crate::record::LimitHit>,
    /// Token usage summed over the turns, as reported by the endpoint.
    pub usage: Usage,
    /// Each request's usage object as the provider wrote it, in order (HTTP backends).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_usage: Vec<serde_json::Value>,
    /// Timing of every model request (not deterministic; written apart from trial records).
    #[serde(skip)]
    pub timings: Vec<TurnTiming>,
}

/// toolpick's own system prompt, for a task that brings none.
pub const SYSTEM_PROMPT: &str = "You are an assistant that can use tools. Use the tools to do what the user asks. \
If none of the tools can do it, say so and do not call any tool.";

/// The messages an episode opens with: the task's [`Task::history`] verbatim, in order, then its query.
///
/// [`SYSTEM_PROMPT`] goes first only when the history has no `system` message. A benchmark's own system
/// prompt takes its place rather than joining it: BFCL sends a record's messages as given (in
/// function-calling mode it adds nothing of its own), facts in that prompt are part of the task, and
/// several chat templates accept only one system message, at the start. toolpick's prompt says nothing a
/// layout needs (every layout explains itself in its functions), so no layout loses anything by it.
pub fn opening_messages(task: &Task) -> Vec<Message> {
    let mut messages = Vec::with_capacity(task.history.len() + 2);
    if !task.history.iter().any(|m| m.role == crate::dataset::Role::System) {
        messages.push(Message::System { content: SYSTEM_PROMPT.into() });
    }
    for m in &task.history {
        let content = m.content.clone();
        messages.push(match m.role {
            crate::dataset::Role::System => Message::System { content },
            crate::dataset::Role::User => Message::User { content },
            crate::dataset::Role::Assistant => {
                Message::Assistant { content: Some(content), tool_calls: vec![] }
            }
        });
    }
    messages.push(Message::User { content: task.query.clone() });
    messages
}

/// The task as one text, for channels that carry a single string (an MCP server's `instructions`): the
/// query alone when the task has no history; otherwise every history message (system text verbatim,
/// earlier turns labelled `User:` / `Assistant:`) and then the query, separated by blank lines.
pub fn instructions_text(task: &Task) -> String {
    if task.history.is_empty() {
        return task.query.clone();
    }
    let mut parts: Vec<String> = task
        .history
        .iter()
        .map(|m| match m.role {
            crate::dataset::Role::System => m.content.clone(),
            crate::dataset::Role::User => format!("User: {}", m.content),
            crate::dataset::Role::Assistant => format!("Assistant: {}", m.content),
        })
        .collect();
    let labelled = task.history.iter().any(|m| m.role != crate::dataset::Role::System);
    parts.push(if labelled { format!("User: {}", task.query) } else { task.query.clone() });
    parts.join("\n\n")
}

/// What a call is, for telling repeats apart: its name and its arguments as parsed JSON (key order
/// and spacing do not matter), or as trimmed text when they do not parse.
#[derive(Debug, Clone, PartialEq)]
struct CallKey {
    name: String,
    arguments: Result<serde_json::Value, String>,
}

impl CallKey {
    fn of(call: &ToolCall) -> CallKey {
        let text = call.arguments.trim();
        let arguments = match serde_json::from_str(if text.is_empty() { "{}" } else { text }) {
            Ok(v) => Ok(v),
            Err(_) => Err(text.to_string()),
        };
        CallKey { name: call.name.clone(), arguments }
    }
}

/// What the model is told about a call the token limit cut off.
const CUT_OFF: &str = "Your message was cut off by the max_tokens limit while writing this call, so it was not executed. \
Write a shorter call.";

/// Run one episode.
pub async fn run_episode(
    backend: &dyn Backend,
    layout: &dyn Layout,
    task: &Task,
    addressing: &Addressing,
    limits: Limits,
    seed: u64,
    trial: usize,
) -> Episode {
    let mut messages = opening_messages(task);
    let mut calls: Vec<CallRecord> = Vec::new();
    let mut steps = 0;
    let mut stop_reason = StopReason::StepLimit;
    let mut backend_error = None;
    let mut provider_limit = None;
    let mut usage = Usage::default();
    let mut provider_usage = Vec::new();
    let mut timings = Vec::new();
    // The distinct calls of the last turn that made any, and in how many turns in a row they were made.
    let mut last_turn: Vec<CallKey> = Vec::new();
    let mut streak = 0;
    while steps < limits.max_steps {
        let offered = layout.offered(&messages);
        let ctx = TurnContext {
            task,
            messages: &messages,
            functions: &offered,
            deferred: layout.deferred(),
            groups: layout.groups(),
            layout: layout.kind(),
            addressing,
            seed,
            trial,
        };
        let result = backend.respond(&ctx).await;
        drop(offered);
        let turn = match result {
            Ok(t) => t,
            // A provider's limit refused the request: the model was never asked, and asking again
            // would send the same request.
            Err(e) if e.downcast_ref::<crate::record::LimitHit>().is_some() => {
                stop_reason = StopReason::ProviderLimit;
                provider_limit = e.downcast_ref::<crate::record::LimitHit>().cloned();
                break;
            }
            Err(e) => {
                stop_reason = StopReason::BackendError;
                backend_error = Some(format!("{e:#}"));
                break;
            }
        };
        steps += 1;
        usage.add(&turn.usage);
        provider_usage.extend(turn.provider_usage.clone());
        if let Some(t) = turn.timing.clone() {
            timings.push(t);
        }
        if let Some(words) = turn.unparsed {
            // The server's parser rejected what the model wrote: one malformed attempt, in the server's
            // words. The model's text never reached us, so no message joins the conversation, and
            // asking again would send the same conversation (a second sample, not a retry).
            let record =
                CallRecord::unresolved(steps, "", crate::layout::CallStatus::Malformed, None);
            calls.push(CallRecord { server_parse_error: Some(words), ..record });
            stop_reason = StopReason::Unparsed;
            break;
        }
        // Searches the provider ran (native-search) come first in the message, each answered by the
        // tools it loaded, and are recorded as navigation with what they revealed.
        let searched: Vec<(ToolCall, Message)> =
            turn.server_searches.iter().map(|s| s.as_messages()).collect();
        for (s, (call, _)) in turn.server_searches.iter().zip(&searched) {
            let arguments = serde_json::from_str(&call.arguments).ok();
            let record = CallRecord::unresolved(
                steps,
                &call.name,
                crate::layout::CallStatus::Navigated,
                arguments,
            );
            calls.push(CallRecord { revealed: layout.revealed_by(&s.tools), ..record });
        }
        let mut tool_calls: Vec<ToolCall> = searched.iter().map(|(c, _)| c.clone()).collect();
        tool_calls.extend(turn.tool_calls.iter().cloned());
        messages.push(Message::Assistant { content: turn.content.clone(), tool_calls });
        messages.extend(searched.into_iter().map(|(_, result)| result));
        if turn.finish == Finish::ContentFilter {
            // The provider withheld the message: nothing in it is acted on.
            stop_reason = StopReason::ContentFilter;
            break;
        }
        if turn.tool_calls.is_empty() {
            stop_reason = if turn.finish == Finish::Length {
                StopReason::Truncated
            } else {
                StopReason::Answered
            };
            break;
        }
        // Calls already made in this message, with the index of their record and their result.
        let mut made: Vec<(CallKey, usize, String)> = Vec::new();
        let mut ran = 0;
        for call in &turn.tool_calls {
            let from_text = turn.text_call_ids.contains(&call.id);
            let (record, content) = if turn.truncated_call_ids.contains(&call.id) {
                cut_off(layout, call, steps, &messages)
            } else {
                let key = CallKey::of(call);
                match made.iter().find(|(k, _, _)| *k == key) {
                    // The same call again in one message: answered like the first, executed once.
                    Some((_, first, content)) => {
                        (CallRecord { duplicate: true, ..calls[*first].clone() }, content.clone())
                    }
                    None => {
                        let outcome = layout.call_in(call, steps, &messages);
                        made.push((key, calls.len(), outcome.content.clone()));
                        ran += 1;
                        (outcome.record, outcome.content)
                    }
                }
            };
            messages.push(Message::Tool {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content,
            });
            calls.push(CallRecord { from_text, ..record });
        }
        if turn.finish == Finish::Length && ran == 0 {
            // Asking again with the same limit would most likely be cut off the same way.
            stop_reason = StopReason::Truncated;
            break;
        }
        let mut keys: Vec<CallKey> = Vec::new();
        for key in turn.tool_calls.iter().map(CallKey::of) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let same = keys.len() == last_turn.len() && keys.iter().all(|k| last_turn.contains(k));
        streak = if same { streak + 1 } else { 1 };
        last_turn = keys;
        if limits.repeat_limit > 0 && streak >= limits.repeat_limit {
            stop_reason = StopReason::RepeatedCall;
            break;
        }
    }
    Episode {
        messages,
        calls,
        steps,
        stop_reason,
        backend_error,
        provider_limit,
        usage,
        provider_usage,
        timings,
    }
}

/// The record of a call the token limit cut off: never executed (the layout is asked with arguments
/// that cannot parse, only to learn which tool the name addresses), `malformed` and `truncated`.
fn cut_off(
    layout: &dyn Layout,
    call: &ToolCall,
    step: usize,
    messages: &[Message],
) -> (CallRecord, String) {
    let probe = ToolCall { arguments: "\u{0}cut off".into(), ..call.clone() };
    let mut record = layout.call_in(&probe, step, messages).record;
    record.status = crate::layout::CallStatus::Malformed;
    record.arguments = None;
    record.rejection = None;
    record.revealed.clear();
    record.truncated = true;
    (record, crate::layout::error_json(CUT_OFF))
}

#[cfg(test)]
mod loop_tests;
