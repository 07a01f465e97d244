//! One `generateContent` attempt and its answer: the request sent with the shared HTTP stack, the
//! answer checked against the shape of the protocol's `GenerateContentResponse` (`candidates`, or a
//! `promptFeedback` saying why there are none), then the first candidate read into an
//! [`AssistantTurn`]: its text parts (thoughts left out) as the text, its `functionCall` parts as calls
//! (`args` an object; a call without an `id` gets one made from the turn, its place and a digest of
//! the answer, so the same answer always gets the same ids), `finishReason` as toolpick's stop
//! reasons ([`finish`]), `usageMetadata` normalised ([`normalised_usage`]). The answer's parts are
//! kept for the next request when they carry signatures ([`super::memory`]).

use super::GeminiBackend;
use super::wire::MADE_ID;
use crate::agent::backends::http::{Failure, ReadAnswer};
use crate::agent::backends::serving_errors;
use crate::protocol::{AssistantTurn, Finish, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;

/// The part of the protocol's `GenerateContentResponse` toolpick reads, for the shape check.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Read by the check only: the turn is read from the JSON value itself.
struct ResponseShape {
    candidates: Option<Vec<CandidateShape>>,
    prompt_feedback: Option<serde_json::Map<String, Value>>,
    usage_metadata: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct CandidateShape {
    content: Option<ContentShape>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct ContentShape {
    role: Option<String>,
    parts: Option<Vec<serde_json::Map<String, Value>>>,
}

/// How toolpick reads a `finishReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// A message, ended as [`Finish`] says.
    Message(Finish),
    /// The API refused the model's calls (malformed, unexpected, too many): recorded as the server's
    /// parse failure (stop reason `unparsed`).
    Refused,
}

/// `finishReason` as toolpick reads it: `STOP`, absent and unknown reasons (`OTHER`, `LANGUAGE`, …)
/// are a complete message; `MAX_TOKENS` is cut off (`Length`, stop reason `truncated`); `SAFETY`,
/// `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `IMAGE_SAFETY` are the content filter;
/// `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL` and `TOO_MANY_TOOL_CALLS` are the API refusing
/// the model's calls (stop reason `unparsed`).
pub(crate) fn finish(reason: Option<&str>) -> Reading {
    match reason {
        Some(r) if serving_errors::classify_finish(r).is_some() => Reading::Refused,
        Some("UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS") => Reading::Refused,
        Some(r) => Reading::Message(Finish::from_wire(r)),
        None => Reading::Message(Finish::Complete),
    }
}

/// `usageMetadata` in toolpick's fields: `prompt_tokens` = `promptTokenCount` (cached content
/// included) + `toolUsePromptTokenCount`; `cached_tokens` = `cachedContentTokenCount`;
/// `completion_tokens` = `candidatesTokenCount` + `thoughtsTokenCount` (as OpenAI counts reasoning
/// in its output tokens), `reasoning_tokens` = `thoughtsTokenCount`. `totalTokenCount` is their sum.
pub(crate) fn normalised_usage(u: &Value) -> Usage {
    let n = |field: &str| u[field].as_u64().unwrap_or(0);
    Usage {
        prompt_tokens: n("promptTokenCount") + n("toolUsePromptTokenCount"),
        completion_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
        cached_tokens: n("cachedContentTokenCount"),
        cache_write_tokens: 0,
        reasoning_tokens: n("thoughtsTokenCount"),
    }
}

/// A 32-bit FNV-1a digest of `text`, for the ids made for calls without one.
fn digest(text: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

impl GeminiBackend {
    pub(super) async fn attempt(&self, body: &[u8]) -> Result<Value, Failure> {
        let value = self.http.post_answer(&self.url, body).await?;
        let shape = serde_json::from_value::<ResponseShape>(value.clone());
        let why = match shape {
            Err(e) => Some(e.to_string()),
            Ok(s) if s.candidates.is_none() && s.prompt_feedback.is_none() => {
                Some("neither `candidates` nor `promptFeedback`".to_string())
            }
            Ok(_) => None,
        };
        if let Some(why) = why {
            return Err(Failure {
                kind: "invalid_body",
                message: format!("not a generateContent answer: {why}"),
                retryable: true,
                retry_after: None,
            });
        }
        Ok(value)
    }

    /// Turn a (checked) `generateContent` answer into an assistant turn.
    pub(super) fn turn(&self, value: &Value, turn_no: usize) -> AssistantTurn {
        let candidate = &value["candidates"][0];
        let parts = candidate["content"]["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
        let usage = normalised_usage(&value["usageMetadata"]);
        let reason = candidate["finishReason"].as_str();
        // No candidate, the prompt blocked: the provider withheld the answer.
        if candidate.is_null() && value["promptFeedback"]["blockReason"].is_string() {
            return AssistantTurn { usage, finish: Finish::ContentFilter, ..Default::default() };
        }
        let finish = match finish(reason) {
            Reading::Message(f) => f,
            Reading::Refused => {
                let reason = reason.unwrap_or_default();
                let said = candidate["finishMessage"].as_str().unwrap_or_default();
                let message = match serving_errors::classify_finish(reason) {
                    Some(entry) => serving_errors::describe_finish(entry, reason),
                    None => format!("Gemini, finishReason {reason}"),
                };
                let message = if said.is_empty() {
                    message
                } else {
                    format!("{message}: {}", crate::text::one_line(said, 200))
                };
                return AssistantTurn { unparsed: Some(message), usage, ..Default::default() };
            }
        };
        let texts: Vec<&str> = parts
            .iter()
            .filter(|p| p["thought"] != true)
            .filter_map(|p| p["text"].as_str())
            .collect();
        let content = (!texts.is_empty()).then(|| texts.concat());
        let answer_digest = digest(&candidate["content"].to_string());
        let tool_calls: Vec<ToolCall> = parts
            .iter()
            .filter_map(|p| p.get("functionCall"))
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: c["id"]
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .unwrap_or_else(|| format!("{MADE_ID}{turn_no}_{i}_{answer_digest:08x}")),
                name: c["name"].as_str().unwrap_or_default().to_string(),
                arguments: match &c["args"] {
                    Value::Null => "{}".to_string(),
                    args => args.to_string(),
                },
            })
            .collect();
        self.memory.keep(content.as_deref(), &tool_calls, parts);
        let mut truncated_call_ids = Vec::new();
        // Cut off by the token limit while writing a call: the parts end on that call (its `args`
        // is whatever was complete, always an object).
        if finish == Finish::Length
            && parts.last().is_some_and(|p| p.get("functionCall").is_some())
            && let Some(last) = tool_calls.last()
        {
            truncated_call_ids.push(last.id.clone());
        }
        ReadAnswer { content, tool_calls, usage, finish, truncated_call_ids }
            .into_turn(self.spec().parse_text_calls, turn_no)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::spec::ModelSpec;
    use serde_json::json;

    fn backend() -> GeminiBackend {
        GeminiBackend::new(ModelSpec::baseline("gemini"), None).unwrap()
    }

    #[test]
    fn finish_reasons_map_to_toolpicks_stop_reasons() {
        use Reading::*;
        for (reason, want) in [
            ("STOP", Message(Finish::Complete)),
            ("FINISH_REASON_UNSPECIFIED", Message(Finish::Complete)),
            ("OTHER", Message(Finish::Complete)),
            ("LANGUAGE", Message(Finish::Complete)),
            ("MAX_TOKENS", Message(Finish::Length)),
            ("SAFETY", Message(Finish::ContentFilter)),
            ("RECITATION", Message(Finish::ContentFilter)),
            ("BLOCKLIST", Message(Finish::ContentFilter)),
            ("PROHIBITED_CONTENT", Message(Finish::ContentFilter)),
            ("SPII", Message(Finish::ContentFilter)),
            ("IMAGE_SAFETY", Message(Finish::ContentFilter)),
            ("MALFORMED_FUNCTION_CALL", Refused),
            ("UNEXPECTED_TOOL_CALL", Refused),
            ("TOO_MANY_TOOL_CALLS", Refused),
        ] {
            assert_eq!(finish(Some(reason)), want, "{reason}");
        }
        assert_eq!(finish(None), Message(Finish::Complete));
    }

    #[test]
    fn usage_counts_tool_use_prompts_as_input_and_thoughts_as_output() {
        let u = normalised_usage(&json!({"promptTokenCount": 100, "cachedContentTokenCount": 60,
            "toolUsePromptTokenCount": 5, "candidatesTokenCount": 9, "thoughtsTokenCount": 20,
            "totalTokenCount": 134}));
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 105,
                completion_tokens: 29,
                cached_tokens: 60,
                cache_write_tokens: 0,
                reasoning_tokens: 20
            }
        );
        assert_eq!(normalised_usage(&Value::Null), Usage::default());
    }

    #[test]
    fn calls_without_ids_get_stable_ids_and_a_cut_call_is_marked() {
        let b = backend();
        let answer = json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "I think…", "thought": true},
                {"text": "Let me check."},
                {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"id": "given", "name": "get_weather", "args": {}}}]},
            "finishReason": "MAX_TOKENS"}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4}});
        let turn = b.turn(&answer, 2);
        assert_eq!(turn.content.as_deref(), Some("Let me check."), "thoughts are not the answer");
        assert_eq!(turn.tool_calls.len(), 2);
        assert!(turn.tool_calls[0].id.starts_with("gemini_call_2_0_"), "{}", turn.tool_calls[0].id);
        assert_eq!(turn.tool_calls[0].id, b.turn(&answer, 2).tool_calls[0].id, "stable");
        let mut other = answer.clone();
        other["candidates"][0]["content"]["parts"][2]["thoughtSignature"] = json!("b3RoZXI=");
        assert_ne!(turn.tool_calls[0].id, b.turn(&other, 2).tool_calls[0].id);
        assert_eq!(turn.tool_calls[1].id, "given");
        assert_eq!(turn.tool_calls[0].arguments, r#"{"city":"Oslo"}"#);
        assert_eq!(turn.finish, Finish::Length);
        assert_eq!(turn.truncated_call_ids, vec!["given".to_string()]);
        // The signed parts are kept for the next request.
        let kept = b.memory.parts(turn.content.as_deref(), &turn.tool_calls).unwrap();
        assert_eq!(kept.len(), 4);
    }

    #[test]
    fn refused_calls_and_blocked_prompts_are_read_as_such() {
        let b = backend();
        let malformed = json!({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL",
            "finishMessage": "Malformed function call: print(get_weather(city='Os"}]});
        let turn = b.turn(&malformed, 1);
        let words = turn.unparsed.unwrap();
        assert!(
            words.contains("MALFORMED_FUNCTION_CALL") && words.contains("get_weather"),
            "{words}"
        );
        let unexpected = json!({"candidates": [{"finishReason": "UNEXPECTED_TOOL_CALL"}]});
        assert!(b.turn(&unexpected, 1).unparsed.unwrap().contains("UNEXPECTED_TOOL_CALL"));
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        assert_eq!(b.turn(&blocked, 1).finish, Finish::ContentFilter);
        let filtered = json!({"candidates": [{"finishReason": "SAFETY"}]});
        let turn = b.turn(&filtered, 1);
        assert_eq!((turn.finish, turn.tool_calls.len()), (Finish::ContentFilter, 0));
    }
}
