//! Task fields for live runs (`--execute live`): the sandbox a trial starts from, how the scripted user
//! answers a server's elicitation requests, the final state the task expects, and the interactions it
//! expects from the server. A simulated run ignores them.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The `live` object of a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveTask {
    /// A directory, relative to the dataset file, copied into each trial's fresh sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    /// Files written into the sandbox (after `fixture`): path relative to the sandbox → text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Answers to the server's elicitation requests, used in order; once they run out, requests are
    /// declined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elicitation: Vec<ElicitAnswer>,
    /// Checks on the sandbox once the episode has ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect_state: Vec<StateExpectation>,
    /// Interactions the server must have had with the client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interactions: Vec<ExpectedInteraction>,
}

/// How the scripted user answers one elicitation request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElicitAnswer {
    pub action: ElicitAction,
    /// The form content sent with `accept` (ignored for URL mode, which carries none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitAction {
    Accept,
    Decline,
    Cancel,
}

impl ElicitAction {
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// One check on the sandbox after the episode. `path` is relative to the sandbox; exactly one of the
/// other fields says what must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateExpectation {
    pub path: String,
    /// The file's whole text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// Texts the file must contain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    /// The path must not exist (deleted or moved away).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
    /// A JSON Lines file (a memory server's graph): some line must contain this object (every key
    /// given, with the value given; arrays must contain the listed items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_record: Option<Value>,
    /// A JSON Lines file: no line may contain this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lacks_record: Option<Value>,
}

impl StateExpectation {
    /// How many of the alternatives are given (a valid check gives exactly one).
    pub fn kinds(&self) -> usize {
        [
            self.equals.is_some(),
            !self.contains.is_empty(),
            self.absent,
            self.has_record.is_some(),
            self.lacks_record.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }
}

/// An interaction the server must have with the client during the episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedInteraction {
    pub kind: InteractionKind,
    /// It must happen during a call made before the first call of this tool id (e.g. the user is asked
    /// before anything is deleted). Without it, any time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InteractionKind {
    /// An `elicitation/create` request (form or URL mode).
    Elicitation,
    /// A `sampling/createMessage` request.
    Sampling,
    /// A `notifications/progress`.
    Progress,
}

impl InteractionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            InteractionKind::Elicitation => "elicitation",
            InteractionKind::Sampling => "sampling",
            InteractionKind::Progress => "progress",
        }
    }
}
