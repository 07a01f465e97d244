//! `execute_action` in the progressive layouts: the action located, its arguments merged from the
//! JSON strings `path_params`, `query_params` and `body_schema` (a parameter given twice is
//! malformed), a merged tool's dispatch resolved, and the result filtered to
//! `include_output_fields` and cut to `maximum_output_characters`.
//!
//! Its own file because it is the one meta-tool that runs a tool; the others only show the catalog.

use super::ProgressiveLayout;
use super::navigation::required_str;
use crate::layout::{
    CallOutcome, CallRecord, CallStatus, dispatch_rejected, error_json, execute_tool, json_kind,
    parse_arguments, record, resolve_dispatch,
};
use crate::protocol::ToolCall;
use serde_json::{Map, Value};

impl ProgressiveLayout {
    pub(super) fn execute(
        &self,
        call: &ToolCall,
        args: Map<String, Value>,
        step: usize,
    ) -> CallOutcome {
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
                    "Category '{}' belongs to server '{}', not '{}'.",
                    category.name,
                    server.name,
                    crate::text::echo(server_name)
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
                        format!(
                            "parameter '{}' is given twice (in {key} and before)",
                            crate::text::echo(&k)
                        ),
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
