//! The progressive layouts' meta-tools as the agent is offered them: the six of the hosted Strata
//! and the five of the open-source one, with their descriptions and parameter schemas.
//!
//! Its own file because it is data, not behaviour: the text here is what a model reads, fixed across
//! description variants, and changes to it are changes to the benchmark's prompt.

use super::{
    ACTION_DETAILS, AUTH_FAILURE, CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS, EXECUTE,
    OSS_TOP_ACTIONS, SEARCH_DOCS,
};
use crate::catalog::Catalog;
use crate::protocol::FunctionDef;
use serde_json::{Value, json};

/// The open-source Strata's five meta-tools.
pub(super) fn meta_tools_oss(catalog: &Catalog) -> Vec<FunctionDef> {
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
        discovery_tool(
            catalog,
            DISCOVER_OSS,
            &format!(
                "Find the actions of the given servers that fit the user's request: returns up to {OSS_TOP_ACTIONS} action names per server, best first."
            ),
            "Servers to search.",
        ),
    );
    tools
}

/// The six meta-tools. Their text is fixed (not varied by description variant); the server list in the
/// discovery tool comes from the catalog.
pub(super) fn meta_tools(catalog: &Catalog) -> Vec<FunctionDef> {
    vec![
        discovery_tool(
            catalog,
            DISCOVER,
            "Discover what the given servers can do. Start here for every request: pass the user's request and the servers that may serve it. Returns each server's categories; small servers also list their actions (or full details).",
            "Servers to explore.",
        ),
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

/// The discovery meta-tool of either variant: `purpose`, then the catalog's servers one per line as
/// `- name: description` (the list an agent — and the lexical baseline — reads the servers from),
/// taking the user's request and the servers to look at (`servers_are` says what they are for).
fn discovery_tool(catalog: &Catalog, name: &str, purpose: &str, servers_are: &str) -> FunctionDef {
    let servers: Vec<Value> = catalog.servers.iter().map(|s| json!(s.name)).collect();
    let server_lines: Vec<String> =
        catalog.servers.iter().map(|s| format!("- {}: {}", s.name, s.description)).collect();
    FunctionDef {
        name: name.into(),
        description: format!("{purpose} Available servers:\n{}", server_lines.join("\n")),
        parameters: json!({"type": "object", "properties": {
            "user_query": {"type": "string", "description": "The user's request, in their words."},
            "server_names": {"type": "array", "items": {"type": "string", "enum": servers}, "description": servers_are}
        }, "required": ["user_query", "server_names"]}),
    }
}
