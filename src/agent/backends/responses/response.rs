//! One Responses attempt and its answer: the request sent with the shared HTTP stack, the answer
//! checked against the shape of the protocol's `Response` (`object: "response"`, `status`, `output`
//! items), then read into an [`AssistantTurn`]. There is no finish reason: `status: "incomplete"` with
//! `incomplete_details.reason` `max_output_tokens` is a message cut off (`Length`), `content_filter`
//! a filtered one; a `refusal` content part is a refusal (`ContentFilter`, as Messages' `refusal`).
//! Usage: `input_tokens` already includes `input_tokens_details.cached_tokens`.

use super::ResponsesBackend;
use crate::agent::backends::http::{Failure, ReadAnswer};
use crate::protocol::{AssistantTurn, Finish, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;

/// The part of the protocol's `Response` toolpick reads, for the shape check.
#[derive(Deserialize)]
#[allow(dead_code)] // Read by the check only: the turn is read from the JSON value itself.
struct ResponseShape {
    id: String,
    object: ResponseObject,
    status: Option<String>,
    output: Vec<Value>,
}

#[derive(Deserialize)]
enum ResponseObject {
    #[serde(rename = "response")]
    Response,
}

impl ResponsesBackend {
    pub(super) async fn attempt(&self, body: &[u8]) -> Result<Value, Failure> {
        let value = self.http.post_answer(&self.url, body).await?;
        if let Err(e) = serde_json::from_value::<ResponseShape>(value.clone()) {
            return Err(Failure {
                kind: "invalid_body",
                message: format!("not a Responses answer: {e}"),
                retryable: true,
                retry_after: None,
            });
        }
        Ok(value)
    }

    /// Turn a (checked) Responses answer into an assistant turn. A `function_call` with a `namespace`
    /// calls the function of that name in the group of that name (`groups`: the ones sent): the
    /// function's own name, as if called top level; a pair that names no function sent is read as the
    /// name `namespace.name`, which no function has, so it is answered as an unknown function is.
    pub(super) fn turn(
        &self,
        value: &Value,
        turn_no: usize,
        groups: Option<&[crate::protocol::ToolGroup]>,
    ) -> AssistantTurn {
        let items = value["output"].as_array().map(Vec::as_slice).unwrap_or_default();
        let parts: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "message")
            .flat_map(|i| i["content"].as_array().into_iter().flatten())
            .collect();
        let texts: Vec<&str> = parts
            .iter()
            .filter(|p| p["type"] == "output_text")
            .filter_map(|p| p["text"].as_str())
            .collect();
        let refused = parts.iter().any(|p| p["type"] == "refusal");
        let content = (!texts.is_empty()).then(|| texts.concat());
        // The model's calls, in order: function calls, and searches the client is to run
        // (`native-search-client`), which toolpick answers as its `search_tools`.
        let tool_calls: Vec<ToolCall> = items
            .iter()
            .filter(|i| {
                i["type"] == "function_call"
                    || (i["type"] == "tool_search_call" && i["execution"] == "client")
            })
            .enumerate()
            .map(|(n, c)| {
                let client_search = c["type"] == "tool_search_call";
                ToolCall {
                    id: c["call_id"]
                        .as_str()
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .unwrap_or_else(|| format!("call_{turn_no}_{n}")),
                    name: if client_search {
                        crate::record::nav::SEARCH_TOOLS.to_string()
                    } else {
                        called_name(c, groups)
                    },
                    arguments: match &c["arguments"] {
                        Value::String(text) => text.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    },
                }
            })
            .collect();
        let finish = if refused {
            Finish::ContentFilter
        } else {
            finish(value["status"].as_str(), value["incomplete_details"]["reason"].as_str())
        };
        let mut truncated_call_ids = Vec::new();
        // Cut off while writing a call: the output ends on that `function_call`, its arguments not
        // a whole JSON value.
        if finish == Finish::Length
            && items.last().is_some_and(|i| i["type"] == "function_call")
            && let Some(last) = tool_calls.last()
            && serde_json::from_str::<Value>(&last.arguments).is_err()
        {
            truncated_call_ids.push(last.id.clone());
        }
        let usage = normalised_usage(&value["usage"]);
        let mut turn = ReadAnswer { content, tool_calls, usage, finish, truncated_call_ids }
            .into_turn(self.spec().parse_text_calls, turn_no);
        turn.server_searches = server_searches(items, turn_no);
        turn
    }
}

/// The function a `function_call` item names: its `name`, or with a `namespace` the function of that
/// name in the group of that name, else `namespace.name` (no function's name holds a `.`).
fn called_name(call: &Value, groups: Option<&[crate::protocol::ToolGroup]>) -> String {
    let name = call["name"].as_str().unwrap_or_default();
    let Some(namespace) = call["namespace"].as_str() else {
        return name.to_string();
    };
    let known = groups
        .into_iter()
        .flatten()
        .any(|g| g.name == namespace && g.functions.iter().any(|f| f == name));
    if known { name.to_string() } else { format!("{namespace}.{name}") }
}

/// The searches the API ran itself (`native-search`): each `tool_search_call` executed by the server,
/// with the function names its `tool_search_output` loaded (inside namespaces too), in order.
pub(crate) fn server_searches(
    items: &[Value],
    turn_no: usize,
) -> Vec<crate::protocol::ServerSearch> {
    items
        .iter()
        .filter(|i| i["type"] == "tool_search_call" && i["execution"] != "client")
        .enumerate()
        .map(|(n, c)| {
            let id = c["call_id"]
                .as_str()
                .or(c["id"].as_str())
                .filter(|s| !s.is_empty())
                .map(String::from)
                .unwrap_or_else(|| format!("search_{turn_no}_{n}"));
            let output = items.iter().find(|o| {
                o["type"] == "tool_search_output"
                    && o["execution"] != "client"
                    && (o["call_id"] == c["call_id"] || c["call_id"].is_null())
            });
            let mut tools = Vec::new();
            for t in output.and_then(|o| o["tools"].as_array()).into_iter().flatten() {
                match t["type"].as_str() {
                    Some("namespace") => tools.extend(
                        t["tools"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|f| f["name"].as_str().map(String::from)),
                    ),
                    _ => tools.extend(t["name"].as_str().map(String::from)),
                }
            }
            crate::protocol::ServerSearch {
                id,
                name: "tool_search".into(),
                arguments: match &c["arguments"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
                tools,
            }
        })
        .collect()
}

/// `status` and `incomplete_details.reason` as toolpick reads them: `incomplete` for
/// `max_output_tokens` is `Length` (stop reason `truncated`), for `content_filter` `ContentFilter`;
/// anything else is a complete message.
pub(crate) fn finish(status: Option<&str>, reason: Option<&str>) -> Finish {
    match (status, reason) {
        (Some("incomplete"), Some("max_output_tokens")) => Finish::Length,
        (Some("incomplete"), Some("content_filter")) => Finish::ContentFilter,
        _ => Finish::Complete,
    }
}

/// The protocol's usage in toolpick's fields: `prompt_tokens` = `input_tokens` (cached ones
/// included, as chat completions count them), `cached_tokens` = `input_tokens_details.cached_tokens`,
/// `cache_write_tokens` = `input_tokens_details.cache_write_tokens` (both part of `input_tokens`),
/// `completion_tokens` = `output_tokens` (reasoning tokens included), `reasoning_tokens` =
/// `output_tokens_details.reasoning_tokens`.
pub(crate) fn normalised_usage(u: &Value) -> Usage {
    Usage {
        prompt_tokens: u["input_tokens"].as_u64().unwrap_or(0),
        completion_tokens: u["output_tokens"].as_u64().unwrap_or(0),
        cached_tokens: u["input_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0),
        cache_write_tokens: u["input_tokens_details"]["cache_write_tokens"].as_u64().unwrap_or(0),
        reasoning_tokens: u["output_tokens_details"]["reasoning_tokens"].as_u64().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::spec::ModelSpec;
    use serde_json::json;

    #[test]
    fn status_and_incomplete_reason_map_to_toolpicks_stop_reasons() {
        assert_eq!(finish(Some("completed"), None), Finish::Complete);
        assert_eq!(finish(Some("incomplete"), Some("max_output_tokens")), Finish::Length);
        assert_eq!(finish(Some("incomplete"), Some("content_filter")), Finish::ContentFilter);
        assert_eq!(finish(None, None), Finish::Complete);
    }

    #[test]
    fn function_calls_refusals_and_usage_are_read() {
        let b = ResponsesBackend::new(ModelSpec::baseline("openai-responses"), None).unwrap();
        let answer = json!({"id": "resp_1", "object": "response", "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get_weather", "arguments": "{\"ci"}],
            "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 15},
                      "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 150}});
        let turn = b.turn(&answer, 1, None);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].id, "call_a");
        assert_eq!(turn.finish, Finish::Length);
        assert_eq!(turn.truncated_call_ids, vec!["call_b".to_string()]);
        assert_eq!((turn.usage.prompt_tokens, turn.usage.cached_tokens), (120, 100));
        assert_eq!((turn.usage.completion_tokens, turn.usage.cache_write_tokens), (30, 15));
        assert_eq!(turn.usage.reasoning_tokens, 20);
        let refusal = json!({"id": "resp_2", "object": "response", "status": "completed", "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}]});
        assert_eq!(b.turn(&refusal, 1, None).finish, Finish::ContentFilter);
    }

    #[test]
    fn a_namespaced_call_names_the_grouped_function_and_an_unknown_pair_no_function() {
        let b = ResponsesBackend::new(ModelSpec::baseline("openai-responses"), None).unwrap();
        let groups = [crate::protocol::ToolGroup {
            name: "mail".into(),
            description: "Mail".into(),
            functions: vec!["send_email".into()],
        }];
        let call = |ns: &str, name: &str| json!({"type": "function_call", "call_id": "c", "namespace": ns, "name": name, "arguments": "{}"});
        let answer = json!({"id": "r", "object": "response", "status": "completed", "output": [
            call("mail", "send_email"), call("files", "send_email"), call("mail", "read_email"),
            {"type": "function_call", "call_id": "d", "name": "send_email", "arguments": "{}"}]});
        let names = |turn: AssistantTurn| -> Vec<String> {
            turn.tool_calls.into_iter().map(|c| c.name).collect()
        };
        assert_eq!(
            names(b.turn(&answer, 1, Some(&groups))),
            ["send_email", "files.send_email", "mail.read_email", "send_email"]
        );
        // No group was sent: every namespace names none.
        assert_eq!(names(b.turn(&answer, 1, None))[0], "mail.send_email");
    }
}
