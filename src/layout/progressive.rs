//! The progressive-discovery layout: six meta-tools with which an agent drills down
//! servers → categories → actions → details → execute (the hosted Klavis Strata design; names and
//! parameters are Strata's exactly).
//!
//! How much `discover_server_categories_or_actions` reveals per server is the explicit, reported
//! [`DiscoveryRule`]: full details for tiny servers, categories with their actions for small ones,
//! categories only for the rest.

use super::{
    CallOutcome, CallRecord, CallStatus, Layout, LayoutKind, dispatch_rejected, error_json,
    execute_tool, json_kind, parse_arguments, record, resolve_dispatch,
};
use crate::catalog::degrade::provider_text;
use crate::catalog::{Catalog, Category, Server, Tool};
use crate::exec::Executor;
use crate::protocol::{FunctionDef, ToolCall};
use crate::text::{Analyzer, Bm25};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
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

    /// Field-weighted BM25 ranking of a server's actions for a query (the OSS discovery).
    fn rank_actions<'a>(&self, server: &'a Server, query: &str) -> Vec<&'a Tool> {
        let tools: Vec<(&Category, &Tool)> =
            server.categories.iter().flat_map(|c| c.tools.iter().map(move |t| (c, t))).collect();
        let fields: [(f32, Vec<Vec<String>>); 3] = [
            (
                30.0,
                tools
                    .iter()
                    .map(|(c, t)| {
                        self.analyzer.tool_terms(
                            &t.name,
                            &t.id,
                            &format!("{} {} {}", t.description, server.name, c.name),
                        )
                    })
                    .collect(),
            ),
            (
                15.0,
                tools
                    .iter()
                    .map(|(_, t)| {
                        let params: Vec<String> = t
                            .properties()
                            .map(|(k, v)| {
                                format!(
                                    "{k} {}",
                                    v.get("description").and_then(Value::as_str).unwrap_or("")
                                )
                            })
                            .collect();
                        self.analyzer.terms(&params.join(" "))
                    })
                    .collect(),
            ),
            (
                5.0,
                tools
                    .iter()
                    .map(|(_, t)| {
                        let out: Vec<String> = t
                            .output_schema
                            .as_ref()
                            .and_then(|o| o.get("properties"))
                            .and_then(Value::as_object)
                            .map(|p| p.keys().cloned().collect())
                            .unwrap_or_default();
                        self.analyzer.terms(&out.join(" "))
                    })
                    .collect(),
            ),
        ];
        let q = self.analyzer.query_terms(query);
        let mut total = vec![0f32; tools.len()];
        for (w, docs) in &fields {
            for (i, s) in Bm25::new(docs).scores(&q).into_iter().enumerate() {
                total[i] += w * s;
            }
        }
        let mut order: Vec<usize> = (0..tools.len()).collect();
        order.sort_by(|a, b| total[*b].total_cmp(&total[*a]).then(a.cmp(b)));
        order.into_iter().take(OSS_TOP_ACTIONS).map(|i| tools[i].1).collect()
    }

    fn discover_oss(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let query = args.get("user_query").and_then(Value::as_str).unwrap_or_default();
        let names = string_list(args, "server_names")?;
        if names.is_empty() {
            return Err(format!(
                "server_names is empty. Available servers: {}",
                self.server_list()
            ));
        }
        let mut out = Vec::new();
        for name in names {
            let Some(server) = self.catalog.server(&name) else {
                return Err(format!(
                    "Unknown server '{name}'. Available servers: {}",
                    self.server_list()
                ));
            };
            let actions: Vec<&str> =
                self.rank_actions(server, query).into_iter().map(|t| t.name.as_str()).collect();
            out.push(json!({"server": server.name, "actions": actions}));
        }
        Ok(json!({"servers": out}))
    }

    /// Find an action from `category_name` + `action_name`, or (OSS) `server_name` + `action_name`.
    fn locate(
        &self,
        args: &Map<String, Value>,
    ) -> Result<(&Server, &Category, &Tool), (CallStatus, String)> {
        let action =
            required_str(args, "action_name").map_err(|e| (CallStatus::NavigationError, e))?;
        if let Ok(category) = required_str(args, "category_name") {
            return self.find_action(category, action);
        }
        if !self.oss {
            return Err((CallStatus::NavigationError, "'category_name' is required".into()));
        }
        let server_name =
            required_str(args, "server_name").map_err(|e| (CallStatus::NavigationError, e))?;
        let Some(server) = self.catalog.server(server_name) else {
            return Err((
                CallStatus::NavigationError,
                format!(
                    "Unknown server '{server_name}'. Available servers: {}",
                    self.server_list()
                ),
            ));
        };
        for c in &server.categories {
            if let Some(t) = c.tools.iter().find(|t| t.name == action) {
                return Ok((server, c, t));
            }
        }
        let exists_elsewhere = self.catalog.tools().any(|t| t.tool.name == action);
        let status =
            if exists_elsewhere { CallStatus::NavigationError } else { CallStatus::Invented };
        Err((
            status,
            format!(
                "Action '{action}' is not an action of server '{server_name}'. Call discover_server_actions to list them."
            ),
        ))
    }

    pub fn rule(&self) -> DiscoveryRule {
        self.rule
    }

    fn discover(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let names = string_list(args, "server_names")?;
        if names.is_empty() {
            return Err(format!(
                "server_names is empty. Available servers: {}",
                self.server_list()
            ));
        }
        let mut servers = Vec::new();
        for name in names {
            let Some(server) = self.catalog.server(&name) else {
                return Err(format!(
                    "Unknown server '{name}'. Available servers: {}",
                    self.server_list()
                ));
            };
            let mode = self.rule.mode(server.tool_count());
            let categories: Vec<Value> = server
                .categories
                .iter()
                .map(|c| {
                    let mut v = json!({"name": c.name, "description": c.description});
                    match mode {
                        "full_details" => {
                            v["actions"] = c.tools.iter().map(action_details_json).collect()
                        }
                        "categories_and_actions" => {
                            v["actions"] = c.tools.iter().map(action_summary).collect()
                        }
                        _ => {}
                    }
                    v
                })
                .collect();
            servers.push(json!({"server": server.name, "description": server.description, "detail": mode, "categories": categories}));
        }
        Ok(json!({"servers": servers}))
    }

    fn category_actions(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let names = string_list(args, "category_names")?;
        if names.is_empty() {
            return Err("category_names is empty; pass category names returned by discover_server_categories_or_actions".into());
        }
        let mut out = Vec::new();
        for name in names {
            let Some((server, cat)) = self.catalog.category(&name) else {
                return Err(format!(
                    "Unknown category '{name}'. Call discover_server_categories_or_actions first to list categories."
                ));
            };
            out.push(json!({"server": server.name, "category": cat.name, "actions": cat.tools.iter().map(action_summary).collect::<Vec<_>>()}));
        }
        Ok(json!({"categories": out}))
    }

    fn find_action(
        &self,
        category: &str,
        action: &str,
    ) -> Result<(&Server, &Category, &Tool), (CallStatus, String)> {
        let Some((server, cat)) = self.catalog.category(category) else {
            return Err((
                CallStatus::NavigationError,
                format!(
                    "Unknown category '{category}'. Call discover_server_categories_or_actions to list categories."
                ),
            ));
        };
        match cat.tools.iter().find(|t| t.name == action) {
            Some(t) => Ok((server, cat, t)),
            None => {
                let names: Vec<&str> = cat.tools.iter().map(|t| t.name.as_str()).collect();
                let exists_elsewhere = self.catalog.tools().any(|t| t.tool.name == action);
                let status = if exists_elsewhere {
                    CallStatus::NavigationError
                } else {
                    CallStatus::Invented
                };
                Err((
                    status,
                    format!(
                        "Action '{action}' is not in category '{category}'. Its actions are: {}.",
                        names.join(", ")
                    ),
                ))
            }
        }
    }

    fn search(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let query = required_str(args, "query")?;
        let server_name = required_str(args, "server_name")?;
        let max = match args.get("max_results") {
            None | Some(Value::Null) => 5,
            Some(v) => {
                v.as_u64().filter(|n| *n >= 1).ok_or("max_results must be a positive integer")?
                    as usize
            }
        };
        let Some(server) = self.catalog.server(server_name) else {
            return Err(format!(
                "Unknown server '{server_name}'. Available servers: {}",
                self.server_list()
            ));
        };
        let entries: Vec<(&Category, &Tool)> =
            server.categories.iter().flat_map(|c| c.tools.iter().map(move |t| (c, t))).collect();
        let docs: Vec<Vec<String>> = entries
            .iter()
            .map(|(c, t)| {
                self.analyzer.tool_terms(&t.name, &t.id, &format!("{} {}", t.description, c.name))
            })
            .collect();
        let index = Bm25::new(&docs);
        let results: Vec<Value> = index
            .ranked(&self.analyzer.query_terms(query))
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .take(max)
            .map(|(i, s)| {
                let (c, t) = entries[i];
                json!({"category": c.name, "action": t.name, "description": t.description, "score": (s * 1000.0).round() / 1000.0})
            })
            .collect();
        Ok(json!({"server": server.name, "results": results}))
    }

    /// Tool ids a successful navigation call shows the agent (for per-layer diagnostics). A merged
    /// tool counts as revealing every tool it dispatches to.
    fn revealed_by(&self, name: &str, args: &Map<String, Value>) -> Vec<String> {
        let ids = |t: &Tool| -> Vec<String> {
            match &t.dispatch {
                Some(d) => d.targets.values().cloned().collect(),
                None => vec![t.id.clone()],
            }
        };
        match name {
            DISCOVER => string_list(args, "server_names")
                .unwrap_or_default()
                .iter()
                .filter_map(|s| self.catalog.server(s))
                .filter(|s| self.rule.mode(s.tool_count()) != "categories_only")
                .flat_map(|s| s.categories.iter().flat_map(|c| c.tools.iter().flat_map(ids)))
                .collect(),
            CATEGORY_ACTIONS => string_list(args, "category_names")
                .unwrap_or_default()
                .iter()
                .filter_map(|c| self.catalog.category(c))
                .flat_map(|(_, c)| c.tools.iter().flat_map(ids))
                .collect(),
            ACTION_DETAILS => self.locate(args).map(|(_, _, t)| ids(t)).unwrap_or_default(),
            _ => vec![],
        }
    }

    fn server_list(&self) -> String {
        self.catalog.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    fn execute(&self, call: &ToolCall, args: Map<String, Value>, step: usize) -> CallOutcome {
        let nav_err = |status: CallStatus, msg: String| CallOutcome {
            content: error_json(&msg),
            record: record(step, &call.name, status, Some(Value::Object(args.clone()))),
        };
        let server_name = match required_str(&args, "server_name") {
            Ok(s) => s,
            Err(e) => return nav_err(CallStatus::NavigationError, e),
        };
        let (server, category, tool) = match self.locate(&args) {
            Ok(found) => found,
            Err((status, msg)) => return nav_err(status, msg),
        };
        if server.name != server_name {
            return nav_err(
                CallStatus::NavigationError,
                format!(
                    "Category '{}' belongs to server '{}', not '{server_name}'.",
                    category.name, server.name
                ),
            );
        }
        // path_params, query_params and body_schema are JSON strings merged into one argument object.
        let mut merged = Map::new();
        for key in ["path_params", "query_params", "body_schema"] {
            let part = match args.get(key) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => match parse_arguments(s) {
                    Ok(m) => m,
                    Err(e) => return malformed(call, step, &tool.id, format!("{key}: {e}")),
                },
                Some(Value::Object(m)) => m.clone(),
                Some(other) => {
                    return malformed(
                        call,
                        step,
                        &tool.id,
                        format!(
                            "{key} must be a JSON string of an object, got {}",
                            json_kind(other)
                        ),
                    );
                }
            };
            for (k, v) in part {
                if merged.contains_key(&k) {
                    return malformed(
                        call,
                        step,
                        &tool.id,
                        format!("parameter '{k}' is given twice (in {key} and before)"),
                    );
                }
                merged.insert(k, v);
            }
        }
        let fields: Option<Vec<String>> = args
            .get("include_output_fields")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect());
        let max_chars =
            args.get("maximum_output_characters").and_then(Value::as_u64).map(|n| n as usize);
        let (target, merged) =
            match resolve_dispatch(tool.dispatch.as_ref(), &tool.id, Value::Object(merged)) {
                Ok(resolved) => resolved,
                Err((kind, message)) => {
                    return dispatch_rejected(
                        step,
                        &call.name,
                        &tool.id,
                        Value::Null,
                        kind,
                        &message,
                    );
                }
            };
        execute_tool(&self.executor, &target, merged, &call.name, step, move |response| {
            let response = match (fields, response) {
                (Some(f), Value::Object(m)) if !f.is_empty() => {
                    Value::Object(m.into_iter().filter(|(k, _)| f.contains(k)).collect())
                }
                (_, r) => r,
            };
            let text = response.to_string();
            match max_chars {
                Some(n) if text.chars().count() > n => text.chars().take(n).collect(),
                _ => text,
            }
        })
    }
}

fn malformed(call: &ToolCall, step: usize, tool_id: &str, msg: String) -> CallOutcome {
    CallOutcome {
        content: error_json(&format!(
            "Invalid input: {msg}. Put the action's arguments in body_schema as a JSON object string."
        )),
        record: CallRecord {
            tool_id: Some(tool_id.to_string()),
            ..CallRecord::unresolved(step, &call.name, CallStatus::Malformed, None)
        },
    }
}

fn action_summary(t: &Tool) -> Value {
    json!({"name": t.name, "description": provider_text(&t.description)})
}

fn action_details_json(t: &Tool) -> Value {
    let mut v = json!({"name": t.name, "description": provider_text(&t.description), "inputSchema": t.input_schema});
    if let Some(o) = &t.output_schema {
        v["outputSchema"] = o.clone();
    }
    v
}

fn required_str<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match args.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(other) if !other.is_string() => {
            Err(format!("'{key}' must be a string, got {}", json_kind(other)))
        }
        _ => Err(format!("'{key}' is required")),
    }
}

fn string_list(args: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match args.get(key) {
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(String::from)
                    .ok_or_else(|| format!("'{key}' must be an array of strings"))
            })
            .collect(),
        // Models often send a single name instead of a one-element list; accept it.
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(other) => {
            Err(format!("'{key}' must be an array of strings, got {}", json_kind(other)))
        }
        None => Err(format!("'{key}' is required")),
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
                self.catalog.server(s).map(|_| json!({"server": s, "status": "authenticated", "message": "This server is connected and needs no further authentication; retry the action."}))
                    .ok_or_else(|| format!("Unknown server '{s}'. Available servers: {}", self.server_list()))
            })),
            other => CallOutcome {
                content: error_json(&format!("Unknown tool '{other}'. The available tools are: {}.", self.functions.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", "))),
                record: record(step, other, CallStatus::Invented, Some(Value::Object(args))),
            },
        }
    }
}

/// The open-source Strata's five meta-tools.
fn meta_tools_oss(catalog: &Catalog) -> Vec<FunctionDef> {
    let servers: Vec<Value> = catalog.servers.iter().map(|s| json!(s.name)).collect();
    let server_lines: Vec<String> =
        catalog.servers.iter().map(|s| format!("- {}: {}", s.name, s.description)).collect();
    let mut tools = meta_tools(catalog);
    tools.retain(|f| f.name != DISCOVER && f.name != CATEGORY_ACTIONS);
    for f in &mut tools {
        match f.name.as_str() {
            ACTION_DETAILS => {
                f.description = "Get the full details of one action of a server: description and input schema. Call before execute_action.".into();
                f.parameters = json!({"type": "object", "properties": {
                    "server_name": {"type": "string", "description": "The action's server."},
                    "action_name": {"type": "string", "description": "The action's name."}
                }, "required": ["server_name", "action_name"]});
            }
            EXECUTE => {
                if let Some(p) = f.parameters.get_mut("properties").and_then(Value::as_object_mut) {
                    p.remove("category_name");
                }
                f.parameters["required"] = json!(["server_name", "action_name"]);
            }
            _ => {}
        }
    }
    tools.insert(
        0,
        FunctionDef {
            name: DISCOVER_OSS.into(),
            description: format!(
                "Find the actions of the given servers that fit the user's request: returns up to {OSS_TOP_ACTIONS} action names per server, best first. Available servers:\n{}",
                server_lines.join("\n")
            ),
            parameters: json!({"type": "object", "properties": {
                "user_query": {"type": "string", "description": "The user's request, in their words."},
                "server_names": {"type": "array", "items": {"type": "string", "enum": servers}, "description": "Servers to search."}
            }, "required": ["user_query", "server_names"]}),
        },
    );
    tools
}

/// The six meta-tools. Their text is fixed (not varied by description variant); the server list in the
/// discovery tool comes from the catalog.
fn meta_tools(catalog: &Catalog) -> Vec<FunctionDef> {
    let servers: Vec<Value> = catalog.servers.iter().map(|s| json!(s.name)).collect();
    let server_lines: Vec<String> =
        catalog.servers.iter().map(|s| format!("- {}: {}", s.name, s.description)).collect();
    vec![
        FunctionDef {
            name: DISCOVER.into(),
            description: format!(
                "Discover what the given servers can do. Start here for every request: pass the user's request and the servers that may serve it. Returns each server's categories; small servers also list their actions (or full details). Available servers:\n{}",
                server_lines.join("\n")
            ),
            parameters: json!({"type": "object", "properties": {
                "user_query": {"type": "string", "description": "The user's request, in their words."},
                "server_names": {"type": "array", "items": {"type": "string", "enum": servers}, "description": "Servers to explore."}
            }, "required": ["user_query", "server_names"]}),
        },
        FunctionDef {
            name: CATEGORY_ACTIONS.into(),
            description: "List the actions of one or more categories (names as returned by discover_server_categories_or_actions), with their descriptions.".into(),
            parameters: json!({"type": "object", "properties": {
                "category_names": {"type": "array", "items": {"type": "string"}, "description": "Category names."}
            }, "required": ["category_names"]}),
        },
        FunctionDef {
            name: ACTION_DETAILS.into(),
            description: "Get the full details of one action: description and input schema. Call before execute_action.".into(),
            parameters: json!({"type": "object", "properties": {
                "category_name": {"type": "string", "description": "The action's category."},
                "action_name": {"type": "string", "description": "The action's name."}
            }, "required": ["category_name", "action_name"]}),
        },
        FunctionDef {
            name: EXECUTE.into(),
            description: "Execute an action. Put its arguments, as one JSON object encoded as a string, in body_schema (path_params and query_params are merged with it).".into(),
            parameters: json!({"type": "object", "properties": {
                "server_name": {"type": "string", "description": "Server of the action."},
                "category_name": {"type": "string", "description": "Category of the action."},
                "action_name": {"type": "string", "description": "The action to run."},
                "path_params": {"type": "string", "description": "JSON object string of path parameters."},
                "query_params": {"type": "string", "description": "JSON object string of query parameters."},
                "body_schema": {"type": "string", "description": "JSON object string of the action's arguments, e.g. \"{\\\"city\\\": \\\"Pune\\\"}\"."},
                "include_output_fields": {"type": "array", "items": {"type": "string"}, "description": "Only return these top-level fields of the result."},
                "maximum_output_characters": {"type": "integer", "minimum": 1, "description": "Truncate the result to this many characters."}
            }, "required": ["server_name", "category_name", "action_name"]}),
        },
        FunctionDef {
            name: SEARCH_DOCS.into(),
            description: "Keyword search over one server's actions when you do not know which category holds what you need.".into(),
            parameters: json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "Keywords."},
                "server_name": {"type": "string", "description": "Server to search."},
                "max_results": {"type": "integer", "minimum": 1, "description": "Default 5."}
            }, "required": ["query", "server_name"]}),
        },
        FunctionDef {
            name: AUTH_FAILURE.into(),
            description: "Call when an action failed because of authentication, to get the server re-authenticated.".into(),
            parameters: json!({"type": "object", "properties": {
                "server_name": {"type": "string", "description": "Server whose authentication failed."},
                "intention": {"type": "string", "enum": ["get_auth_url", "save_auth_data"], "description": "What to do."},
                "auth_data": {"type": "object", "description": "Credentials to save, for save_auth_data."}
            }, "required": ["server_name", "intention"]}),
        },
    ]
}
