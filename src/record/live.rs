//! What a live run (calls executed by a real MCP server, `--execute live`) adds to a trial record.
//!
//! Per call ([`LiveCall`]): whether the server answered `isError`, whether toolpick's policy refused
//! to send it, and what the server asked or told the client while the call was open (elicitations,
//! sampling requests, progress notifications). Per trial ([`LiveTrial`]): the results of the task's
//! final-state checks on the sandbox, and the tokens the server's sampling requests cost. Scoring reads
//! only these records, so a live run is re-scored like any other (`score::live`).

use crate::protocol::Usage;
use serde::{Deserialize, Serialize};

/// One elicitation request a server sent during a call, and how the task's script answered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Elicitation {
    /// `form` (structured input) or `url` (the user would be sent to a page; never opened).
    pub mode: String,
    /// `accept`, `decline` or `cancel`.
    pub action: String,
}

/// How a call went on the live server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveCall {
    /// The server's result had `isError: true` (or it answered with a JSON-RPC error).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// toolpick's live policy refused to send the call (a destructive or open-world tool without opt-in,
    /// or a denied tool); the server never saw it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// Why it was refused, or the start of the server's error text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Progress notifications received while the call was open.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub progress: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elicitations: Vec<Elicitation>,
    /// Sampling requests (`sampling/createMessage`) answered while the call was open.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samplings: usize,
}

impl LiveCall {
    /// The call ran on the server and succeeded.
    pub fn succeeded(&self) -> bool {
        !self.is_error && !self.refused
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One final-state check on a trial's sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateCheck {
    /// What was checked, in words (`notes/todo.txt equals the expected text`).
    pub check: String,
    pub ok: bool,
    /// What was found instead, when it failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// The live side of a trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveTrial {
    /// The server that answered (`serverInfo` name and version).
    pub server: String,
    /// The MCP protocol revision the session ran (`2026-07-28`, stateless, or `2025-11-25` after the
    /// `initialize` fallback: `mcp::era`). Absent in records written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state: Vec<StateCheck>,
    /// Tokens spent answering the server's sampling requests with the experiment's model: counted
    /// apart from the agent's own usage.
    #[serde(default, skip_serializing_if = "is_default_usage")]
    pub sampling_usage: Usage,
    /// What those tokens cost, from the model's price table (apart from the trial's `cost_usd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_cost_usd: Option<f64>,
}

fn is_default_usage(u: &Usage) -> bool {
    *u == Usage::default()
}
