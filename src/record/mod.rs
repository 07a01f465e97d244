//! The ground floor of the trial record format: the vocabulary that producers (`run`, `agent`,
//! `layout`, `exec`) write into trial records and readers (`score`, `report`, `compare`) read out of
//! them, so that readers never import a producer (the rule `tests/module_deps.rs` checks).
//!
//! The producers re-export these types where they used to live (`agent::StopReason`,
//! `layout::{LayoutKind, CallStatus, CallRecord}`, `exec::Rejection`, `layout::flat::stable_hash`); their serialised forms are
//! part of the trial file format and do not change.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// FNV-1a, 64 bit: a stable hash whose value never changes between builds or platforms.
pub fn stable_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayoutKind {
    Flat,
    Progressive,
    /// One `search_tools` meta-tool; found tools become callable.
    Search,
    /// The open-source Strata: five meta-tools, discovery returns ranked action names per server.
    ProgressiveOss,
}

impl LayoutKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayoutKind::Flat => "flat",
            LayoutKind::Progressive => "progressive",
            LayoutKind::Search => "search",
            LayoutKind::ProgressiveOss => "progressive-oss",
        }
    }
    pub fn parse(s: &str) -> Option<LayoutKind> {
        match s {
            "flat" => Some(LayoutKind::Flat),
            "progressive" => Some(LayoutKind::Progressive),
            "search" => Some(LayoutKind::Search),
            "progressive-oss" => Some(LayoutKind::ProgressiveOss),
            _ => None,
        }
    }
}

/// Why a call was rejected, in the scoring taxonomy's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejection {
    MissingRequired,
    UnexpectedParam,
    TypeError,
    ValueError,
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
    /// The last message was cut off by the token limit (`finish_reason: length`) and held nothing that
    /// could run: no call, or only a call cut mid-way (recorded as truncated).
    Truncated,
    /// The provider's content filter stopped the last message (`finish_reason: content_filter`);
    /// nothing in it was run.
    ContentFilter,
    /// The model made the same calls (names and arguments) in too many turns in a row.
    RepeatedCall,
}

/// What happened to one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// A catalog tool ran with valid arguments.
    Executed,
    /// A catalog tool was addressed but its arguments failed validation.
    Rejected,
    /// The arguments were not a JSON object (or a JSON-string parameter did not parse).
    Malformed,
    /// The name (or action) does not exist.
    Invented,
    /// A navigation meta-tool answered (progressive layout only).
    Navigated,
    /// A navigation meta-tool was misused (unknown server/category, missing parameter).
    NavigationError,
}

/// The scoring-relevant record of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Assistant turn (1-based) that issued the call.
    pub step: usize,
    /// The function name as the model called it.
    pub name: String,
    pub status: CallStatus,
    /// The catalog tool the call resolved to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    /// The (merged) arguments passed to the tool, if they parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
    /// The call was parsed from the model's text (`content`), not its `tool_calls`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_text: bool,
    /// Catalog tools this (navigation) call revealed to the agent — for layouts that hide tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revealed: Vec<String>,
    /// For an executed call: whether its result was the tool's mock response rendered for these
    /// arguments (`templated`) or upstream data returned verbatim (`static`, every imported tool — such a
    /// result may name things the call did not). Absent for calls that did not execute, and in records
    /// written before results were templated (those were all static).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock: Option<crate::catalog::MockMode>,
    /// The token limit cut the call off mid-way (`finish_reason: length`): it was not executed and
    /// scores as `malformed_call` ("cut off by max_tokens"), an attempt rather than an abstention.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The same call (name and arguments) appeared earlier in the same message: it was not executed
    /// again and copies that call's record; scoring still counts it as a call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub duplicate: bool,
}
