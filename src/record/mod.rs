//! The trial record: the one contract between producing trials (`run`, `agent`, `layout`, `exec`) and
//! reading them (`score`, `report`, `compare`). This module owns the format of a run directory's trial
//! file and nothing else, so readers never import a producer (the rule `tests/module_deps.rs` checks):
//!
//! - here: the vocabulary of a record — the layout label, how a call ended ([`CallStatus`],
//!   [`CallRecord`], [`Rejection`]), why an episode stopped ([`StopReason`]), the meta-tools' names
//!   ([`nav`], so per-layer diagnostics read them from the record), and [`stable_hash`];
//! - [`trial`]: the [`Trial`] itself with its token figures, and the streaming reader;
//! - [`outcome`]: what scoring writes into it ([`TrialScore`], [`ErrorType`], [`ScoredCall`]);
//! - [`limit`]: a provider's limit that refused a request ([`limit::LimitHit`], [`StopReason::ProviderLimit`]);
//! - [`judgement`]: `judgements.jsonl`, a judge's verdicts on the trials' final answers;
//! - [`live`]: what a run against a real MCP server adds (per call and per trial);
//! - [`declared`]: the expected tools' declared parameters, kept in the record so scoring needs no catalog;
//! - [`shared`]: record parts many records repeat (expected calls, declared parameters), parsed once;
//! - [`transcripts`]: `transcripts.jsonl`, the messages of every trial (format 2), read only for the
//!   trials a drill-down shows;
//! - [`store`]: appending, scanning and compacting `trials.jsonl` and `transcripts.jsonl` (torn
//!   lines, matrix order);
//! - [`guard`]: the run directory's lock and the leftovers of killed writers;
//! - [`lines`]: a JSON Lines file read line by line with each line's number and offset;
//! - [`meta`]: `run.json` ([`meta::RunMeta`], typed and versioned), the trial id and the cell key;
//!   the directory's file names are the constants below.
//!
//! Producers re-export these types where they used to live (`agent::StopReason`,
//! `layout::{LayoutKind, CallStatus, CallRecord}`, `exec::Rejection`); their serialised forms are part
//! of the trial file format (`docs/formats.md`) and do not change.

pub mod declared;
pub mod guard;
pub mod judgement;
pub mod limit;
pub mod lines;
pub mod live;
pub mod meta;
pub mod outcome;
pub mod shared;
pub mod store;
pub mod transcripts;
pub mod trial;

pub use limit::{LimitHit, LimitKind};
pub use outcome::{ErrorType, ScoredCall, TrialScore};
pub use trial::{Tokens, Trial};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the run made and how (`run.json`, [`meta::RunMeta`]).
pub const RUN_JSON: &str = "run.json";
/// The trial records, one JSON line each ([`Trial`]).
pub const TRIALS: &str = "trials.jsonl";
/// Per trial, how long its episode and requests took (measured, so not byte-identical between runs).
pub const TIMINGS: &str = "timings.jsonl";
/// The functions each cell offered, by `dataset/variant/layout`.
pub const TOOLS: &str = "tools.json";
/// Lint findings of every variant catalog.
pub const LINT: &str = "lint.json";
/// Records the importers skipped or repaired.
pub const DEFECTS: &str = "defects.json";

/// The meta-tools' names, as calls to them appear in a record. A layout offers them; diagnostics read
/// them back (which layer a navigation call opened) without importing the layout that offered them.
pub mod nav {
    /// Hosted Strata's discovery (`progressive`): servers → categories or actions.
    pub const DISCOVER: &str = "discover_server_categories_or_actions";
    /// The open-source Strata's discovery tool (`progressive-oss`).
    pub const DISCOVER_OSS: &str = "discover_server_actions";
    pub const CATEGORY_ACTIONS: &str = "get_category_actions";
    pub const ACTION_DETAILS: &str = "get_action_details";
    pub const EXECUTE: &str = "execute_action";
    pub const SEARCH_DOCS: &str = "search_documentation";
    pub const AUTH_FAILURE: &str = "handle_auth_failure";
    /// The `search` layout's one meta-tool, and the search tool toolpick answers in
    /// `native-search-client`.
    pub const SEARCH_TOOLS: &str = "search_tools";
    /// The providers' own search tools (`native-search`): Anthropic's BM25 and regex tool search, and
    /// the Responses API's `tool_search`. A search the provider ran is recorded as a navigation call
    /// under its tool's name.
    pub const PROVIDER_SEARCH: [&str; 3] =
        ["tool_search_tool_bm25", "tool_search_tool_regex", "tool_search"];

    /// `true` when `name` is one of the providers' own search tools.
    pub fn is_provider_search(name: &str) -> bool {
        PROVIDER_SEARCH.contains(&name)
    }
}

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
    /// Every tool deferred (`defer_loading`) behind the provider's own search tool, which the
    /// provider runs (Anthropic's BM25 tool search, the Responses API's `tool_search`).
    NativeSearch,
    /// Every tool deferred, the search answered by toolpick's BM25 (`search_tools`): `tool_reference`
    /// blocks for Anthropic, a `tool_search_output` for the Responses API.
    NativeSearchClient,
}

impl LayoutKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayoutKind::Flat => "flat",
            LayoutKind::Progressive => "progressive",
            LayoutKind::Search => "search",
            LayoutKind::ProgressiveOss => "progressive-oss",
            LayoutKind::NativeSearch => "native-search",
            LayoutKind::NativeSearchClient => "native-search-client",
        }
    }
    /// `true` for the layouts only a provider's protocol can express (tools sent deferred).
    pub fn is_native(self) -> bool {
        matches!(self, LayoutKind::NativeSearch | LayoutKind::NativeSearchClient)
    }
    pub fn parse(s: &str) -> Option<LayoutKind> {
        match s {
            "flat" => Some(LayoutKind::Flat),
            "progressive" => Some(LayoutKind::Progressive),
            "search" => Some(LayoutKind::Search),
            "progressive-oss" => Some(LayoutKind::ProgressiveOss),
            "native-search" => Some(LayoutKind::NativeSearch),
            "native-search-client" => Some(LayoutKind::NativeSearchClient),
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
    /// The serving side could not parse the model's last message as a tool call (its own parser
    /// failed: llama.cpp's HTTP 500 `Failed to parse tool call arguments as JSON`, Gemini's
    /// `MALFORMED_FUNCTION_CALL`, …); it is recorded as one malformed call. Asking again would send the
    /// same conversation, so the episode ends.
    Unparsed,
    /// The provider refused the request for one of its limits (too many tools, a tool name it does not
    /// accept, a prompt over the context window; the trial's `provider_limit` says which): the model
    /// was never asked. Neither a model failure nor an infrastructure error; in no rate.
    ProviderLimit,
}

impl StopReason {
    /// The name the trial file writes (its serde name), without going through serde.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Answered => "answered",
            StopReason::StepLimit => "step_limit",
            StopReason::BackendError => "backend_error",
            StopReason::Truncated => "truncated",
            StopReason::ContentFilter => "content_filter",
            StopReason::RepeatedCall => "repeated_call",
            StopReason::Unparsed => "unparsed",
            StopReason::ProviderLimit => "provider_limit",
        }
    }
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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "trial::arguments_or_few"
    )]
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
    /// In a live run (`--execute live`): how the call went on the real server. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<live::LiveCall>,
    /// The serving side could not parse the model's output as a tool call and answered with an error
    /// instead of a message: its words (server, status, message; redacted, cut at 300 characters). Such
    /// a call has no name, no tool and no arguments, is `malformed` and scores as `malformed_call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_parse_error: Option<String>,
}

impl CallRecord {
    /// The record of a call that did not reach a catalog tool (navigation, an invented name, an
    /// unreadable call).
    pub fn unresolved(
        step: usize,
        name: &str,
        status: CallStatus,
        arguments: Option<Value>,
    ) -> CallRecord {
        CallRecord {
            step,
            name: name.into(),
            status,
            tool_id: None,
            arguments,
            rejection: None,
            from_text: false,
            revealed: vec![],
            mock: None,
            truncated: false,
            duplicate: false,
            live: None,
            server_parse_error: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reason_names_are_the_serde_names() {
        use StopReason::*;
        for r in [
            Answered,
            StepLimit,
            BackendError,
            Truncated,
            ContentFilter,
            RepeatedCall,
            Unparsed,
            ProviderLimit,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str(), "{r:?}");
        }
    }
}
