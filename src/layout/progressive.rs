//! The progressive-discovery layout: six meta-tools with which an agent drills down
//! servers → categories → actions → details → execute (the hosted Klavis Strata design; names and
//! parameters are Strata's exactly).
//!
//! How much `discover_server_categories_or_actions` reveals per server is the explicit, reported
//! [`DiscoveryRule`]: full details for tiny servers, categories with their actions for small ones,
//! categories only for the rest.
//!
//! The layout is split by job: [`meta_tools`] (what the agent is offered), [`listings`] (what
//! navigation calls answer), [`navigation`] (resolving the names the agent passes) and [`execute`]
//! (`execute_action`); this file holds the rule, the layout and the dispatch of a call.

mod execute;
mod listings;
mod meta_tools;
mod navigation;

use super::{
    CallOutcome, CallRecord, CallStatus, Layout, LayoutKind, error_json, parse_arguments, record,
};
use crate::catalog::Catalog;
use crate::exec::Executor;
use crate::protocol::{FunctionDef, ToolCall};
use crate::text::Analyzer;
use listings::action_details_json;
use meta_tools::{meta_tools, meta_tools_oss};
use navigation::required_str;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// The meta-tools' names belong to the trial record (diagnostics read them from it).
pub use crate::record::nav::{
    ACTION_DETAILS, AUTH_FAILURE, CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS, EXECUTE, SEARCH_DOCS,
};
/// Action names per server returned by `discover_server_actions`.
pub const OSS_TOP_ACTIONS: usize = 50;

/// What discovery reveals, by server size (number of actions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiscoveryRule {
    /// Servers with at most this many actions are returned with `full_details` (schemas included).
    pub full_details_max: usize,
    /// Servers with at most this many actions are returned as `categories_and_actions`;
    /// larger ones as `categories_only`.
    pub actions_max: usize,
}

impl Default for DiscoveryRule {
    fn default() -> Self {
        DiscoveryRule { full_details_max: 3, actions_max: 12 }
    }
}

impl DiscoveryRule {
    pub fn mode(&self, actions: usize) -> &'static str {
        if actions <= self.full_details_max {
            "full_details"
        } else if actions <= self.actions_max {
            "categories_and_actions"
        } else {
            "categories_only"
        }
    }
}

pub struct ProgressiveLayout {
    catalog: Catalog,
    executor: Arc<Executor>,
    rule: DiscoveryRule,
    functions: Vec<FunctionDef>,
    analyzer: Analyzer,
    /// The open-source Strata variant: five meta-tools, ranked action names instead of categories.
    oss: bool,
}

impl ProgressiveLayout {
    pub fn new(catalog: Catalog, executor: Arc<Executor>, rule: DiscoveryRule) -> Self {
        let functions = meta_tools(&catalog);
        ProgressiveLayout {
            catalog,
            executor,
            rule,
            functions,
            analyzer: Analyzer::default(),
            oss: false,
        }
    }

    /// The open-source Strata variant (`progressive-oss`): `discover_server_actions` returns the top-50
    /// action **names** per server by field-weighted BM25 (weight 30 for name, description, server and
    /// category; 15 for parameter names and descriptions; 5 for response fields), then
    /// `get_action_details`, `execute_action`, `search_documentation`, `handle_auth_failure` address
    /// actions by server and name.
    pub fn new_oss(catalog: Catalog, executor: Arc<Executor>) -> Self {
        let functions = meta_tools_oss(&catalog);
        ProgressiveLayout {
            catalog,
            executor,
            rule: DiscoveryRule::default(),
            functions,
            analyzer: Analyzer::default(),
            oss: true,
        }
    }

    pub fn rule(&self) -> DiscoveryRule {
        self.rule
    }
}

impl Layout for ProgressiveLayout {
    fn kind(&self) -> LayoutKind {
        if self.oss { LayoutKind::ProgressiveOss } else { LayoutKind::Progressive }
    }

    fn functions(&self) -> &[FunctionDef] {
        &self.functions
    }

    fn call(&self, call: &ToolCall, step: usize) -> CallOutcome {
        let args = match parse_arguments(&call.arguments) {
            Ok(m) => m,
            Err(e) => {
                let status = if self.functions.iter().any(|f| f.name == call.name) {
                    CallStatus::Malformed
                } else {
                    CallStatus::Invented
                };
                return CallOutcome {
                    content: error_json(&format!("Invalid input: {e}.")),
                    record: record(step, &call.name, status, None),
                };
            }
        };
        let revealed = self.revealed_by(&call.name, &args);
        let nav = |result: Result<Value, String>| match result {
            Ok(v) => CallOutcome {
                content: v.to_string(),
                record: CallRecord {
                    revealed: revealed.clone(),
                    ..record(
                        step,
                        &call.name,
                        CallStatus::Navigated,
                        Some(Value::Object(args.clone())),
                    )
                },
            },
            Err(e) => CallOutcome {
                content: error_json(&e),
                record: record(
                    step,
                    &call.name,
                    CallStatus::NavigationError,
                    Some(Value::Object(args.clone())),
                ),
            },
        };
        match call.name.as_str() {
            DISCOVER if !self.oss => nav(self.discover(&args)),
            CATEGORY_ACTIONS if !self.oss => nav(self.category_actions(&args)),
            DISCOVER_OSS if self.oss => nav(self.discover_oss(&args)),
            ACTION_DETAILS => match self.locate(&args) {
                Ok((server, cat, tool)) => {
                    let mut v = action_details_json(tool);
                    v["server"] = json!(server.name);
                    v["category"] = json!(cat.name);
                    v["how_to_call"] = json!(if self.oss {
                        format!("execute_action with server_name='{}', action_name='{}' and the arguments as a JSON object string in body_schema", server.name, tool.name)
                    } else {
                        format!(
                            "execute_action with server_name='{}', category_name='{}', action_name='{}' and the arguments as a JSON object string in body_schema",
                            server.name, cat.name, tool.name
                        )
                    });
                    nav(Ok(v))
                }
                Err((status, msg)) => CallOutcome { content: error_json(&msg), record: record(step, &call.name, status, Some(Value::Object(args.clone()))) },
            },
            EXECUTE => self.execute(call, args, step),
            SEARCH_DOCS => nav(self.search(&args)),
            AUTH_FAILURE => nav(required_str(&args, "server_name").and_then(|s| {
                self.server_named(s).map(|_| json!({"server": s, "status": "authenticated", "message": "This server is connected and needs no further authentication; retry the action."}))
            })),
            other => CallOutcome {
                content: error_json(&format!("Unknown tool '{}'. The available tools are: {}.", crate::text::echo(other), self.functions.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", "))),
                record: record(step, other, CallStatus::Invented, Some(Value::Object(args))),
            },
        }
    }
}
