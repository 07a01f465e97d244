//! Layouts: how a catalog is shown to the agent.
//!
//! - [`flat`]: every tool is one function.
//! - [`progressive`]: six meta-tools (the Klavis Strata design) to drill down servers → categories →
//!   actions → details → execute.
//! - [`search`]: one `search_tools` meta-tool; the tools it finds become callable.
//! - [`native`]: every tool deferred behind a provider's own search (`native-search`) or behind
//!   toolpick's search in the provider's form (`native-search-client`).
//!
//! All are projections of the same variant catalog and both execute through the same [`Executor`], so the
//! only difference between them is presentation. Every call is answered with text for the model and a
//! [`CallRecord`] for scoring.

pub mod flat;
pub mod native;
pub mod progressive;
pub mod search;

use crate::exec::{Execution, Executor, Rejection};
use crate::protocol::{FunctionDef, ToolCall};
use serde_json::Value;

pub use flat::FlatLayout;
pub use native::NativeLayout;
pub use progressive::{DiscoveryRule, ProgressiveLayout};
pub use search::SearchLayout;

pub use crate::record::LayoutKind;

pub use crate::record::{CallRecord, CallStatus};

/// The answer to one call: text for the model, a record for scoring.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    pub content: String,
    pub record: CallRecord,
}

/// A way of presenting a catalog to an agent.
pub trait Layout: Send + Sync {
    fn kind(&self) -> LayoutKind;
    /// The functions offered on the first turn.
    fn functions(&self) -> &[FunctionDef];
    /// The functions offered given the conversation so far (layouts that load tools on demand grow it).
    fn offered(
        &self,
        _messages: &[crate::protocol::Message],
    ) -> std::borrow::Cow<'_, [FunctionDef]> {
        std::borrow::Cow::Borrowed(self.functions())
    }
    /// Tools sent deferred (`defer_loading`), for the provider to load when a search finds them: the
    /// native layouts only. They are not in the prompt, so they are not in [`Layout::functions`].
    fn deferred(&self) -> &[FunctionDef] {
        &[]
    }
    /// The catalog's functions grouped by server, for a protocol that sends groups (the Responses
    /// API's namespaces): the layouts that send catalog tools as functions (`flat`, the native
    /// layouts' deferred tools); none for those that show meta-tools (`progressive`, `search`).
    fn groups(&self) -> &[crate::protocol::ToolGroup] {
        &[]
    }
    /// The catalog tool ids behind the function names a provider's own search returned, in order.
    fn revealed_by(&self, _names: &[String]) -> Vec<String> {
        Vec::new()
    }
    /// Answer one call made at assistant turn `step`.
    fn call(&self, call: &ToolCall, step: usize) -> CallOutcome;
    /// Answer a call knowing the conversation (default: it does not matter).
    fn call_in(
        &self,
        call: &ToolCall,
        step: usize,
        _messages: &[crate::protocol::Message],
    ) -> CallOutcome {
        self.call(call, step)
    }
}

/// The layout `kind` of `catalog`, every call executed by `executor`. `terms` are the search index's
/// analysed tools, shared by the layouts a run builds (see [`search::SearchTerms`]).
pub fn build(
    kind: LayoutKind,
    catalog: crate::catalog::Catalog,
    executor: std::sync::Arc<Executor>,
    discovery: DiscoveryRule,
    terms: &search::SearchTerms,
) -> Box<dyn Layout> {
    match kind {
        LayoutKind::Flat => Box::new(FlatLayout::new(&catalog, executor)),
        LayoutKind::Progressive => Box::new(ProgressiveLayout::new(catalog, executor, discovery)),
        LayoutKind::ProgressiveOss => Box::new(ProgressiveLayout::new_oss(catalog, executor)),
        LayoutKind::Search => Box::new(SearchLayout::with_terms(&catalog, executor, terms)),
        LayoutKind::NativeSearch => {
            Box::new(NativeLayout::Server(FlatLayout::new(&catalog, executor)))
        }
        LayoutKind::NativeSearchClient => {
            Box::new(NativeLayout::Client(SearchLayout::with_terms(&catalog, executor, terms)))
        }
    }
}

/// Parse a call's argument text into a JSON object.
pub(crate) fn parse_arguments(raw: &str) -> Result<serde_json::Map<String, Value>, String> {
    let text = if raw.trim().is_empty() { "{}" } else { raw };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(format!("arguments must be a JSON object, got {}", json_kind(&other))),
        Err(e) => Err(format!("arguments are not valid JSON ({e})")),
    }
}

pub(crate) use crate::error::json_kind;

/// Run a resolved catalog tool and build the outcome (shared by both layouts).
pub(crate) fn execute_tool(
    executor: &Executor,
    tool_id: &str,
    arguments: Value,
    name: &str,
    step: usize,
    transform: impl FnOnce(Value) -> String,
) -> CallOutcome {
    // Every outcome names the tool and keeps the arguments; the status and one field differ.
    let resolved = |status, arguments| CallRecord {
        tool_id: Some(tool_id.into()),
        ..CallRecord::unresolved(step, name, status, Some(arguments))
    };
    match executor.execute(tool_id, &arguments) {
        Execution::Ok { response, mock } => CallOutcome {
            content: transform(response),
            record: CallRecord { mock: Some(mock), ..resolved(CallStatus::Executed, arguments) },
        },
        Execution::Live { response, call } => CallOutcome {
            content: transform(response),
            record: CallRecord { live: Some(call), ..resolved(CallStatus::Executed, arguments) },
        },
        Execution::Rejected { kind, message } => CallOutcome {
            content: error_json(&message),
            record: CallRecord {
                rejection: Some(kind),
                ..resolved(CallStatus::Rejected, arguments)
            },
        },
    }
}

/// Route a call to a merged tool (`merge_siblings`) to the original tool it names. Returns the tool id
/// to execute and the arguments without the dispatch parameter, or a rejection to send back.
pub(crate) fn resolve_dispatch(
    dispatch: Option<&crate::catalog::Dispatch>,
    tool_id: &str,
    args: Value,
) -> Result<(String, Value), (Rejection, String)> {
    let Some(d) = dispatch else {
        return Ok((tool_id.to_string(), args));
    };
    let mut map = match args {
        Value::Object(m) => m,
        _ => {
            return Err((
                Rejection::TypeError,
                "Invalid input: arguments must be an object.".into(),
            ));
        }
    };
    let options: Vec<&str> = d.targets.keys().map(String::as_str).collect();
    match map.remove(&d.param) {
        None => Err((
            Rejection::MissingRequired,
            format!("Invalid input: '{}' is required. One of: {}.", d.param, options.join(", ")),
        )),
        Some(Value::String(v)) if d.targets.contains_key(&v) => {
            Ok((d.targets[&v].clone(), Value::Object(map)))
        }
        Some(other) => Err((
            Rejection::ValueError,
            format!(
                "Invalid input: '{}' = {} is not one of: {}.",
                d.param,
                crate::text::echo(&other.to_string()),
                options.join(", ")
            ),
        )),
    }
}

/// The outcome of a call whose dispatch failed.
pub(crate) fn dispatch_rejected(
    step: usize,
    name: &str,
    tool_id: &str,
    args: Value,
    kind: Rejection,
    message: &str,
) -> CallOutcome {
    CallOutcome {
        content: error_json(message),
        record: CallRecord {
            tool_id: Some(tool_id.into()),
            rejection: Some(kind),
            ..CallRecord::unresolved(step, name, CallStatus::Rejected, Some(args))
        },
    }
}

/// A tool-result error body.
pub(crate) fn error_json(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

/// A record for a call that did not reach a catalog tool.
pub(crate) fn record(
    step: usize,
    name: &str,
    status: CallStatus,
    arguments: Option<Value>,
) -> CallRecord {
    CallRecord::unresolved(step, name, status, arguments)
}
