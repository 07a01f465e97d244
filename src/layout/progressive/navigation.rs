//! Resolving the names a progressive-layout agent passes: which action a `category_name` (or, in the
//! OSS variant, `server_name`) plus `action_name` designate, whether a wrong name is a navigation
//! error or an invented action, which tool ids a navigation call revealed, and the argument readers
//! every meta-tool shares.
//!
//! Its own file because these rules decide how a call is scored (navigation error against invented),
//! apart from what the listings show and how an action is executed.

use super::{ACTION_DETAILS, CATEGORY_ACTIONS, DISCOVER, ProgressiveLayout};
use crate::catalog::{Category, Server, Tool};
use crate::layout::{CallStatus, json_kind};
use crate::text::echo;
use serde_json::{Map, Value};

impl ProgressiveLayout {
    /// Find an action from `category_name` + `action_name`, or (OSS) `server_name` + `action_name`.
    pub(super) fn locate(
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
        let server =
            self.server_named(server_name).map_err(|e| (CallStatus::NavigationError, e))?;
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
                "Action '{}' is not an action of server '{}'. Call discover_server_actions to list them.",
                echo(action),
                echo(server_name)
            ),
        ))
    }

    pub(super) fn find_action(
        &self,
        category: &str,
        action: &str,
    ) -> Result<(&Server, &Category, &Tool), (CallStatus, String)> {
        let Some((server, cat)) = self.catalog.category(category) else {
            return Err((
                CallStatus::NavigationError,
                format!(
                    "Unknown category '{}'. Call discover_server_categories_or_actions to list categories.",
                    echo(category)
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
                        "Action '{}' is not in category '{}'. Its actions are: {}.",
                        echo(action),
                        echo(category),
                        names.join(", ")
                    ),
                ))
            }
        }
    }

    /// Tool ids a successful navigation call shows the agent (for per-layer diagnostics). A merged
    /// tool counts as revealing every tool it dispatches to.
    pub(super) fn revealed_by(&self, name: &str, args: &Map<String, Value>) -> Vec<String> {
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

    /// The servers `server_names` names, in order; an empty list or an unknown name is an error
    /// that lists the servers there are.
    pub(super) fn named_servers(&self, args: &Map<String, Value>) -> Result<Vec<&Server>, String> {
        let names = string_list(args, "server_names")?;
        if names.is_empty() {
            return Err(format!(
                "server_names is empty. Available servers: {}",
                self.server_list()
            ));
        }
        names.iter().map(|name| self.server_named(name)).collect()
    }

    /// The server called `name`, or the error that lists the servers there are.
    pub(super) fn server_named(&self, name: &str) -> Result<&Server, String> {
        self.catalog.server(name).ok_or_else(|| {
            format!("Unknown server '{}'. Available servers: {}", echo(name), self.server_list())
        })
    }

    pub(super) fn server_list(&self) -> String {
        self.catalog.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
    }
}

pub(super) fn required_str<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match args.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(other) if !other.is_string() => {
            Err(format!("'{key}' must be a string, got {}", json_kind(other)))
        }
        _ => Err(format!("'{key}' is required")),
    }
}

pub(super) fn string_list(args: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
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
