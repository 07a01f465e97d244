//! One Messages attempt and its answer: the request sent with the shared HTTP stack, the answer checked
//! against the shape of the protocol's `Message` (an assistant message with content blocks and usage),
//! then read into an [`AssistantTurn`] — `tool_use` blocks as calls, `stop_reason` as toolpick's
//! [`Finish`], usage normalised (the protocol's `input_tokens` excludes the cache reads and writes,
//! toolpick's `prompt_tokens` includes them).
//!
//! Its own file because it decides how the model's answer is scored, apart from how the request was
//! built.

use super::AnthropicBackend;
use crate::agent::backends::http::{Failure, ReadAnswer};
use crate::agent::backends::limits;
use crate::protocol::{AssistantTurn, Finish, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;

/// The part of the protocol's `Message` toolpick reads, for the shape check: a response without these
/// is not a Messages answer, whatever its status.
#[derive(Deserialize)]
#[allow(dead_code)] // Read by the check only: the turn is read from the JSON value itself.
struct MessageShape {
    id: String,
    #[serde(rename = "type")]
    kind: MessageKind,
    role: AssistantRole,
    content: Vec<BlockShape>,
    stop_reason: Option<String>,
    usage: UsageShape,
}

#[derive(Deserialize)]
enum MessageKind {
    #[serde(rename = "message")]
    Message,
}

#[derive(Deserialize)]
enum AssistantRole {
    #[serde(rename = "assistant")]
    Assistant,
}

/// A content block: `text` and `tool_use` are read; every other type (thinking, server tools' blocks)
/// is allowed and left out of the turn.
#[derive(Deserialize)]
#[serde(tag = "type")]
#[allow(dead_code)]
enum BlockShape {
    #[serde(rename = "text")]
    Text { text: String },
    #[serde(rename = "tool_use")]
    ToolUse { id: String, name: String, input: serde_json::Map<String, Value> },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct UsageShape {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl AnthropicBackend {
    pub(super) async fn attempt(&self, body: &[u8]) -> Result<Value, Failure> {
        // The model's output rejected by the server's own parser (llama-server answers its Messages
        // route with the same words as its chat route) is set apart there: an answer, not a failure.
        let value = self.http.post_answer(&self.url, body).await?;
        if let Err(e) = serde_json::from_value::<MessageShape>(value.clone()) {
            return Err(Failure {
                kind: "invalid_body",
                message: format!("not a Messages answer: {e}"),
                retryable: true,
                retry_after: None,
            });
        }
        // The context window filled up: the prompt did not fit, whatever was written so far.
        if let Some(f) = limits::anthropic_stop(&value) {
            return Err(f);
        }
        Ok(value)
    }

    /// Turn a (checked) Messages answer into an assistant turn.
    pub(super) fn turn(&self, value: &Value, turn_no: usize) -> AssistantTurn {
        let blocks = value["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect();
        let content = (!texts.is_empty()).then(|| texts.concat());
        let tool_calls: Vec<ToolCall> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .enumerate()
            .map(|(i, b)| ToolCall {
                id: b["id"]
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .unwrap_or_else(|| format!("call_{turn_no}_{i}")),
                name: b["name"].as_str().unwrap_or_default().to_string(),
                arguments: b["input"].to_string(),
            })
            .collect();
        let usage = normalised_usage(&value["usage"]);
        let finish = finish(value["stop_reason"].as_str());
        let mut truncated_call_ids = Vec::new();
        // Cut off by the token limit while writing a call: the protocol says so by ending the content
        // on that `tool_use` block (its `input` is whatever was complete, always an object).
        if finish == Finish::Length
            && blocks.last().is_some_and(|b| b["type"] == "tool_use")
            && let Some(last) = tool_calls.last()
        {
            truncated_call_ids.push(last.id.clone());
        }
        let mut turn = ReadAnswer { content, tool_calls, usage, finish, truncated_call_ids }
            .into_turn(self.spec().parse_text_calls, turn_no);
        turn.server_searches = server_searches(blocks);
        turn
    }
}

/// The searches the API ran with its own tool search (`native-search`): each `server_tool_use` block
/// of a search tool, with the tools its `tool_search_tool_result` referenced, in order. A search whose
/// result is an error (or missing) returned nothing.
pub(crate) fn server_searches(blocks: &[Value]) -> Vec<crate::protocol::ServerSearch> {
    blocks
        .iter()
        .filter(|b| b["type"] == "server_tool_use")
        .filter_map(|b| {
            let name = b["name"].as_str().filter(|n| crate::record::nav::is_provider_search(n))?;
            let id = b["id"].as_str().unwrap_or_default();
            let result = blocks
                .iter()
                .find(|r| r["type"] == "tool_search_tool_result" && r["tool_use_id"] == id);
            let tools = result
                .and_then(|r| r["content"]["tool_references"].as_array())
                .into_iter()
                .flatten()
                .filter_map(|t| t["tool_name"].as_str().map(String::from))
                .collect();
            Some(crate::protocol::ServerSearch {
                id: id.to_string(),
                name: name.to_string(),
                arguments: b["input"].to_string(),
                tools,
            })
        })
        .collect()
}

/// `stop_reason` as toolpick reads it: `max_tokens` and `model_context_window_exceeded` cut the message
/// off (`Length`, the episode's `truncated`); `refusal` withholds it (`ContentFilter`); `end_turn`,
/// `stop_sequence`, `tool_use`, `pause_turn` and an absent or unknown reason are a complete message.
pub(crate) fn finish(stop_reason: Option<&str>) -> Finish {
    match stop_reason {
        Some("max_tokens" | "model_context_window_exceeded") => Finish::Length,
        Some("refusal") => Finish::ContentFilter,
        _ => Finish::Complete,
    }
}

/// The protocol's usage in toolpick's fields: `prompt_tokens` = `input_tokens` +
/// `cache_creation_input_tokens` + `cache_read_input_tokens` (the protocol's `input_tokens` excludes
/// both), `cached_tokens` = the reads, `cache_write_tokens` = the writes, `completion_tokens` =
/// `output_tokens` (thinking included: the protocol does not count it apart, so `reasoning_tokens`
/// stays 0).
pub(crate) fn normalised_usage(u: &Value) -> Usage {
    let n = |field: &str| u[field].as_u64().unwrap_or(0);
    let (reads, writes) = (n("cache_read_input_tokens"), n("cache_creation_input_tokens"));
    Usage {
        prompt_tokens: n("input_tokens") + reads + writes,
        completion_tokens: n("output_tokens"),
        cached_tokens: reads,
        cache_write_tokens: writes,
        reasoning_tokens: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::spec::ModelSpec;
    use serde_json::json;

    fn backend() -> AnthropicBackend {
        AnthropicBackend::new(ModelSpec::baseline("anthropic"), None).unwrap()
    }

    #[test]
    fn usage_counts_cache_reads_and_writes_as_input() {
        let u = normalised_usage(
            &json!({"input_tokens": 12, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 4000, "output_tokens": 9}),
        );
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 4312,
                completion_tokens: 9,
                cached_tokens: 4000,
                cache_write_tokens: 300,
                reasoning_tokens: 0
            }
        );
        // Nulls (as the SDK writes absent counts) are zero.
        let u = normalised_usage(
            &json!({"input_tokens": 5, "cache_creation_input_tokens": null, "cache_read_input_tokens": null, "output_tokens": 1}),
        );
        assert_eq!((u.prompt_tokens, u.cached_tokens, u.cache_write_tokens), (5, 0, 0));
    }

    #[test]
    fn stop_reasons_map_to_toolpicks() {
        for (reason, want) in [
            ("end_turn", Finish::Complete),
            ("tool_use", Finish::Complete),
            ("stop_sequence", Finish::Complete),
            ("pause_turn", Finish::Complete),
            ("max_tokens", Finish::Length),
            ("model_context_window_exceeded", Finish::Length),
            ("refusal", Finish::ContentFilter),
        ] {
            assert_eq!(finish(Some(reason)), want, "{reason}");
        }
        assert_eq!(finish(None), Finish::Complete);
    }

    #[test]
    fn tool_use_blocks_become_calls_and_a_call_cut_by_max_tokens_is_marked() {
        let b = backend();
        let answer = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "Let me check."},
                        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}}],
            "stop_reason": "max_tokens", "stop_sequence": null,
            "usage": {"input_tokens": 3, "output_tokens": 4}});
        let turn = b.turn(&answer, 1);
        assert_eq!(turn.content.as_deref(), Some("Let me check."));
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].id, "toolu_1");
        let args: Value = serde_json::from_str(&turn.tool_calls[0].arguments).unwrap();
        assert_eq!(args, json!({"city": "Oslo"}));
        assert_eq!(turn.finish, Finish::Length);
        assert_eq!(turn.truncated_call_ids, vec!["toolu_2".to_string()]);
        // Ended on text: the calls before it were complete.
        let mut answer = answer;
        answer["content"].as_array_mut().unwrap().push(json!({"type": "text", "text": "and"}));
        assert!(b.turn(&answer, 1).truncated_call_ids.is_empty());
    }
}
