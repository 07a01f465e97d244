//! The `openai` backend's reading of an answer: a validated chat completion turned into an
//! [`AssistantTurn`] — tool calls with ids, usage, the finish reason, a call cut off by the token
//! limit, calls written as text (when the model spec asks for it), and a provider's "could not parse
//! the call" finish reason as the turn's `unparsed`.
//!
//! Its own file because it decides how the model's answer is scored, apart from how it was fetched.

use super::OpenAiBackend;
use super::serving_errors;
use super::wire::complete_json;
use crate::agent::backends::http::ReadAnswer;
use crate::protocol::{AssistantTurn, Finish, ToolCall, Usage};
use serde_json::Value;

impl OpenAiBackend {
    /// Turn a (validated) response into an assistant turn.
    pub(super) fn turn(&self, value: &Value, turn_no: usize) -> AssistantTurn {
        let message = &value["choices"][0]["message"];
        let content = message["content"].as_str().map(String::from);
        let tool_calls: Vec<ToolCall> = message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: c["id"]
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .unwrap_or_else(|| format!("call_{turn_no}_{i}")),
                name: c["function"]["name"].as_str().unwrap_or_default().to_string(),
                arguments: match &c["function"]["arguments"] {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                },
            })
            .collect();
        let reason = value["choices"][0]["finish_reason"].as_str();
        let u = &value["usage"];
        let usage = Usage {
            prompt_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
            completion_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            cached_tokens: u["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0),
            reasoning_tokens: u["completion_tokens_details"]["reasoning_tokens"]
                .as_u64()
                .unwrap_or(0),
            ..Default::default()
        };
        // The provider says the model's call could not be parsed (Gemini's `MALFORMED_FUNCTION_CALL`):
        // whatever else the message holds is not the call the model meant.
        if let Some((entry, reason)) =
            reason.and_then(|r| Some((serving_errors::classify_finish(r)?, r)))
        {
            return AssistantTurn {
                unparsed: Some(serving_errors::describe_finish(entry, reason)),
                usage,
                ..Default::default()
            };
        }
        let finish = reason.map(Finish::from_wire).unwrap_or_default();
        let mut truncated_call_ids = Vec::new();
        // Cut off by the token limit: the last call is the one being written when the limit hit; it is
        // cut when its arguments are not a whole JSON value (or it has no name yet).
        if finish == Finish::Length
            && let Some(last) = tool_calls.last()
            && (last.name.is_empty() || !complete_json(&last.arguments))
        {
            truncated_call_ids.push(last.id.clone());
        }
        ReadAnswer { content, tool_calls, usage, finish, truncated_call_ids }
            .into_turn(self.spec().parse_text_calls, turn_no)
    }
}

#[cfg(test)]
mod tests {
    use crate::agent::backends::openai::OpenAiBackend;
    use crate::agent::spec::ModelSpec;
    use serde_json::json;

    #[test]
    fn usage_reads_cached_prompt_and_reasoning_tokens() {
        let b = OpenAiBackend::new(ModelSpec::baseline("openai"), None).unwrap();
        let answer = json!({"id": "c1", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 45, "total_tokens": 165,
                "prompt_tokens_details": {"cached_tokens": 64},
                "completion_tokens_details": {"reasoning_tokens": 32}}});
        let u = b.turn(&answer, 1).usage;
        assert_eq!((u.prompt_tokens, u.completion_tokens), (120, 45));
        assert_eq!((u.cached_tokens, u.reasoning_tokens, u.cache_write_tokens), (64, 32, 0));
        // A server that reports no details (llama.cpp, vLLM): no reasoning, nothing cached.
        let bare = json!({"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2}});
        let u = b.turn(&bare, 1).usage;
        assert_eq!((u.cached_tokens, u.reasoning_tokens), (0, 0));
    }
}
