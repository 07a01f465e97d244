//! The flat layout: every tool is handed to the model as one function.
//!
//! Function names must match `^[a-zA-Z0-9_-]{1,64}$`. A tool's name is used as is when it is valid and
//! unique; otherwise it is qualified with its server (`server__name`), sanitised, and — only if still too
//! long or taken — shortened with a hash of the tool id. The mapping is a bijection checked at build time:
//! two tools can never end up behind one name (the gorilla #1091 failure, where truncation silently merged
//! functions).

use super::{
    CallOutcome, CallStatus, Layout, LayoutKind, dispatch_rejected, error_json, execute_tool,
    parse_arguments, record, resolve_dispatch,
};
use crate::catalog::degrade::provider_text;
use crate::catalog::{Catalog, Dispatch};
use crate::exec::Executor;
use crate::protocol::{FunctionDef, ToolCall, ToolGroup};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub struct FlatLayout {
    functions: Vec<FunctionDef>,
    name_to_id: HashMap<String, String>,
    id_to_name: HashMap<String, String>,
    dispatch: HashMap<String, Dispatch>,
    executor: Arc<Executor>,
    /// The functions grouped by server, for protocols that send groups ([`group_names`]).
    groups: Vec<ToolGroup>,
}

use crate::protocol::is_valid_function_name;

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect()
}

pub use crate::record::stable_hash;

/// Assign a unique valid function name to each `(tool_id, server, name)`, in order.
pub fn function_names(tools: &[(String, String, String)]) -> Vec<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, _, name) in tools {
        *count.entry(name.as_str()).or_default() += 1;
    }
    let mut used = HashSet::new();
    let mut out = Vec::with_capacity(tools.len());
    for (id, server, name) in tools {
        let candidate = if count[name.as_str()] == 1 {
            sanitize(name)
        } else {
            sanitize(&format!("{server}__{name}"))
        };
        out.push(claim_name(candidate, id, &mut used));
    }
    out
}

/// `candidate` (already sanitised) when it is a valid function name not in `used`; otherwise its
/// readable prefix made unique with `key`'s hash (17 chars: '_' + 16 hex). The name is added to `used`.
/// The one shortening rule of function and group names.
fn claim_name(candidate: String, key: &str, used: &mut HashSet<String>) -> String {
    let name = if !is_valid_function_name(&candidate) || used.contains(&candidate) {
        let suffix = format!("_{:016x}", stable_hash(key.as_bytes()));
        let keep: String = candidate.chars().take(64 - suffix.len()).collect();
        format!("{keep}{suffix}")
    } else {
        candidate
    };
    assert!(used.insert(name.clone()), "name collision for {key}");
    name
}

/// Names the meta-tools of the layouts take at the top level of a request (toolpick's `search_tools`,
/// the Responses API's `tool_search`): no group is named like one.
const TOP_LEVEL_NAMES: [&str; 2] = [super::search::SEARCH_TOOLS, "tool_search"];

/// A unique valid group name for each server name, in order: the name with every character outside
/// `[a-zA-Z0-9_-]` replaced by `_`; when that is empty, longer than 64 characters, a top-level
/// meta-tool's name or another server's group name, its first 47 characters followed by `_` and 16
/// hex digits of the server name's hash (as [`function_names`] shortens names).
pub fn group_names(servers: &[&str]) -> Vec<String> {
    let mut used: HashSet<String> = TOP_LEVEL_NAMES.iter().map(|n| n.to_string()).collect();
    servers.iter().map(|server| claim_name(sanitize(server), server, &mut used)).collect()
}

impl FlatLayout {
    pub fn new(catalog: &Catalog, executor: Arc<Executor>) -> Self {
        let keys: Vec<(String, String, String)> = catalog
            .tools()
            .map(|t| (t.tool.id.clone(), t.server.name.clone(), t.tool.name.clone()))
            .collect();
        let names = function_names(&keys);
        let mut functions = Vec::new();
        let mut name_to_id = HashMap::new();
        let mut id_to_name = HashMap::new();
        let mut dispatch = HashMap::new();
        for (t, name) in catalog.tools().zip(names) {
            functions.push(FunctionDef {
                name: name.clone(),
                description: provider_text(&t.tool.description),
                parameters: t.tool.input_schema.clone(),
            });
            if let Some(d) = &t.tool.dispatch {
                dispatch.insert(t.tool.id.clone(), d.clone());
            }
            name_to_id.insert(name.clone(), t.tool.id.clone());
            id_to_name.insert(t.tool.id.clone(), name);
        }
        let servers: Vec<&str> = catalog.servers.iter().map(|s| s.name.as_str()).collect();
        let groups = catalog
            .servers
            .iter()
            .zip(group_names(&servers))
            .map(|(server, name)| ToolGroup {
                name,
                description: match provider_text(&server.description) {
                    d if d.trim().is_empty() => server.name.clone(),
                    d => d,
                },
                functions: server
                    .categories
                    .iter()
                    .flat_map(|c| c.tools.iter())
                    .filter_map(|t| id_to_name.get(&t.id).cloned())
                    .collect(),
            })
            .filter(|g| !g.functions.is_empty())
            .collect();
        FlatLayout { functions, name_to_id, id_to_name, dispatch, executor, groups }
    }

    /// The catalog's functions grouped by server, in catalog order.
    pub fn tool_groups(&self) -> &[ToolGroup] {
        &self.groups
    }

    /// The function name a tool id is offered under.
    pub fn function_name(&self, tool_id: &str) -> Option<&str> {
        self.id_to_name.get(tool_id).map(String::as_str)
    }

    /// The tool id behind a function name.
    pub fn tool_id(&self, name: &str) -> Option<&str> {
        self.name_to_id.get(name).map(String::as_str)
    }

    /// The written tools a function stands for: itself, or every tool a merged tool dispatches to.
    pub fn tools_behind(&self, name: &str) -> Vec<String> {
        let Some(id) = self.tool_id(name) else {
            return vec![];
        };
        match self.dispatch.get(id) {
            Some(d) => d.targets.values().cloned().collect(),
            None => vec![id.to_string()],
        }
    }
}

impl Layout for FlatLayout {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Flat
    }

    fn functions(&self) -> &[FunctionDef] {
        &self.functions
    }

    fn groups(&self) -> &[ToolGroup] {
        &self.groups
    }

    fn call(&self, call: &ToolCall, step: usize) -> CallOutcome {
        let Some(tool_id) = self.name_to_id.get(&call.name) else {
            return CallOutcome {
                content: error_json(&format!(
                    "Unknown tool '{}'. Call one of the tools you were given, by its exact name.",
                    crate::text::echo(&call.name)
                )),
                record: record(step, &call.name, CallStatus::Invented, None),
            };
        };
        let args = match parse_arguments(&call.arguments) {
            Ok(m) => Value::Object(m),
            Err(e) => {
                let mut r = record(step, &call.name, CallStatus::Malformed, None);
                r.tool_id = Some(tool_id.clone());
                return CallOutcome {
                    content: error_json(&format!(
                        "Invalid input: {e}. Send the arguments as one JSON object."
                    )),
                    record: r,
                };
            }
        };
        match resolve_dispatch(self.dispatch.get(tool_id), tool_id, args.clone()) {
            Ok((target, args)) => {
                execute_tool(&self.executor, &target, args, &call.name, step, |v| v.to_string())
            }
            Err((kind, message)) => {
                dispatch_rejected(step, &call.name, tool_id, args, kind, &message)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, server: &str, name: &str) -> (String, String, String) {
        (id.into(), server.into(), name.into())
    }

    #[test]
    fn group_names_are_valid_unique_and_readable() {
        let long = "s".repeat(70);
        let servers =
            ["weather", "my server!", "search_tools", "my_server_", "", long.as_str(), "weather"];
        let names = group_names(&servers);
        assert_eq!(names[0], "weather");
        assert_eq!(names[1], "my_server_", "invalid characters become `_`");
        let hashed = |i: usize, prefix: &str| {
            let suffix = format!("_{:016x}", stable_hash(servers[i].as_bytes()));
            assert_eq!(names[i], format!("{prefix}{suffix}"), "{}", servers[i]);
        };
        hashed(2, "search_tools");
        hashed(3, "my_server_");
        hashed(4, "");
        hashed(5, &"s".repeat(47));
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());
        for n in &names {
            assert!(
                n.len() <= 64 && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-".contains(&b)),
                "{n}"
            );
        }
    }

    #[test]
    fn unique_valid_names_are_kept() {
        let names = function_names(&[
            key("a/c/send_email", "a", "send_email"),
            key("a/c/sndEml", "a", "sndEml"),
        ]);
        assert_eq!(names, vec!["send_email", "sndEml"]);
    }

    #[test]
    fn colliding_names_are_qualified_by_server() {
        let names = function_names(&[
            key("mail/m/search", "mail", "search"),
            key("chat/c/search", "chat", "search"),
        ]);
        assert_eq!(names, vec!["mail__search", "chat__search"]);
    }

    #[test]
    fn long_names_that_share_a_64_char_prefix_stay_distinct() {
        let long = "x".repeat(70);
        let a = format!("{long}_alpha");
        let b = format!("{long}_beta");
        let names = function_names(&[key("s/c/a", "s", &a), key("s/c/b", "s", &b)]);
        assert_ne!(names[0], names[1]);
        for n in &names {
            assert!(is_valid_function_name(n), "{n}");
        }
    }

    #[test]
    fn invalid_characters_are_sanitised() {
        let names = function_names(&[key("s/c/t", "s", "get.weather now")]);
        assert_eq!(names, vec!["get_weather_now"]);
        assert!(is_valid_function_name(&names[0]));
    }
}
