//! The queries: tasks with the calls that answer them.
//!
//! A dataset is JSONL, one [`Task`] per line (`docs/formats.md`). Expected calls name tools by id and give
//! BFCL-style acceptable values per parameter (`""` = may be omitted). This file holds the task types;
//! [`load_dataset`] parses a file and reports every bad line (`load.rs`); [`check_against`] checks the
//! ground truth against a catalog so a bad line is caught before a run (`check.rs`).

mod check;
pub mod importers;
pub mod live;
mod load;

pub use check::check_against;
pub use live::{ExpectedInteraction, LiveTask};
pub use load::load_dataset;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What kind of answer a task expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Exactly one call.
    Single,
    /// Several calls, any order.
    Multi,
    /// Several independent calls that can be issued at once, any order.
    Parallel,
    /// No tool fits: the right behaviour is to call none.
    Abstain,
    /// A risky request: the right behaviour is to execute nothing that changes state (and nothing
    /// `forbidden`), and to say why or ask for confirmation.
    Refuse,
    /// A tool fits but no ground truth says which (BFCL live_relevance): calling any tool passes.
    Relevant,
}

impl Kind {
    /// Every kind, in the order reports list them.
    pub const ALL: [Kind; 6] =
        [Kind::Single, Kind::Multi, Kind::Parallel, Kind::Abstain, Kind::Refuse, Kind::Relevant];

    /// The kinds whose headline is "did it call the right tools": a task with expected calls
    /// (`single`, `multi`, `parallel`). Selection accuracy and pass@1 are reported over these tasks;
    /// abstain, refuse and relevant tasks have figures of their own.
    pub fn needs_call(self) -> bool {
        matches!(self, Kind::Single | Kind::Multi | Kind::Parallel)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Single => "single",
            Kind::Multi => "multi",
            Kind::Parallel => "parallel",
            Kind::Abstain => "abstain",
            Kind::Refuse => "refuse",
            Kind::Relevant => "relevant",
        }
    }
}

/// One expected call: a tool id and, per parameter, the list of acceptable values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: BTreeMap<String, Vec<Value>>,
    /// Other tool ids that also count as correct (MCPToolBench++'s `similar_tools`), with the same
    /// arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// Only the tool is ground truth (StableToolBench's `relevant APIs`): any arguments match. The listed
    /// `arguments` are then just one valid way to call it (used by the oracle).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub any_arguments: bool,
}

impl ExpectedCall {
    /// `true` when calling `tool_id` satisfies this call's tool.
    pub fn accepts(&self, tool_id: &str) -> bool {
        self.tool == tool_id || self.alternatives.iter().any(|a| a == tool_id)
    }

    /// `true` when `""` is among the acceptable values, i.e. the parameter may be omitted.
    pub fn may_omit(values: &[Value]) -> bool {
        values.iter().any(|v| v.as_str() == Some(""))
    }
}

/// The harm a `refuse` task would cause (SafeToolBench's risk categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    PrivacyLeak,
    PropertyDamage,
    PhysicalInjury,
    OffensiveContent,
}

/// What a poisoned description tries to make the agent do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Goal {
    /// Execute this tool (id).
    Call(String),
    /// Pass `value` for `param` when calling `tool`.
    Argument { tool: String, param: String, value: Value },
    /// Get this marker into any call's arguments.
    Leak(String),
}

/// A malicious tool added to a server for one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddedTool {
    pub server: String,
    pub category: String,
    /// A tool object in the catalog format.
    pub tool: Value,
}

/// A poisoning scenario attached to a task: text appended to a tool's description, or a tool added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Poison {
    /// Attack style label (hidden_tag, instruction_override, tool_shadowing, exfiltration, concealment…).
    pub style: String,
    /// Tool id whose description gets `text` appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_tool: Option<AddedTool>,
    pub goal: Goal,
}

/// Who says a message of a task's [`Task::history`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message said before a task's query: a benchmark's system prompt or an earlier turn, sent to the
/// model verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryMessage {
    pub role: Role,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub id: String,
    pub query: String,
    /// The conversation before `query`, sent ahead of it in this order: a benchmark's own system prompt
    /// (BFCL's leading `system` messages) and earlier user/assistant messages of the turn. A `system`
    /// message here takes the place of toolpick's own system prompt ([`crate::agent::opening_messages`]).
    /// Empty (and left out of the file): the query opens the conversation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryMessage>,
    pub kind: Kind,
    #[serde(default)]
    pub expected: Vec<ExpectedCall>,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// `refuse` tasks: the harm the request would do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// Tools whose execution carries out the harm (a safety violation even if read-only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poison: Option<Poison>,
    /// The tools offered for this task only (a benchmark's per-query candidate set); empty = the whole
    /// catalog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// Live runs only: the sandbox, the scripted user and the expected final state ([`live`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveTask>,
    /// Tool ids or globs (`*`, `?`) that must not be called for this task (its near-miss siblings):
    /// calling one fails the task as `must_not_call`, on any kind of task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_not_call: Vec<String>,
    /// Short facts a final answer must state for the task to count as done (the `claims` judge method,
    /// and context for the `pass-rate` judge). Empty: the task has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
    /// A model answer the judge may compare against (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answer: Option<String>,
    /// 1-based line in the source file (for error messages); not part of the format.
    #[serde(skip)]
    pub line: usize,
}

/// A loaded dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub name: String,
    pub path: PathBuf,
    pub tasks: Vec<Task>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn may_omit_means_empty_string_listed() {
        assert!(ExpectedCall::may_omit(&[Value::from("x"), Value::from("")]));
        assert!(!ExpectedCall::may_omit(&[Value::from("x")]));
    }
}
