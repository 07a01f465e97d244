//! The mock endpoint's answer to one chat request: request-level faults (rate limit, errors, delays,
//! down), the conversation read back from the request body, a judge request answered by
//! [`judge::reply`](super::judge::reply), otherwise the lexical baseline (or, with sampling noise,
//! the chance baseline) deciding over the tools sent, then the answer-level faults applied and the
//! chat-completion body written.
//!
//! Its own file because it is what the double answers; the parent module is the server around it
//! (configuration, routes, keys and their echo).

use super::{
    DUPLICATES, Fault, MockState, Wire, authorized, echo, error, gemini, judge, messages, native,
    responses, sent_key, unauthorized,
};
use crate::agent::{Addressing, Policy, TurnContext};
use crate::dataset::{Kind, importers};
use crate::layout::LayoutKind;
use crate::layout::progressive::DISCOVER;
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::{FunctionDef, Message, ToolCall};
use axum::Json;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The answer to one request, `body` in chat-completions shape (a Messages request is read into it
/// first, [`messages::chat_body`]), written in the `wire` protocol.
pub(super) async fn answer(
    s: &MockState,
    headers: &HeaderMap,
    body: Value,
    wire: Wire,
) -> Response {
    let n = s.requests.fetch_add(1, Ordering::SeqCst) + 1;
    if !authorized(s, headers) {
        return unauthorized(s, headers);
    }
    if n > s.down_after.load(Ordering::SeqCst) {
        return error(StatusCode::SERVICE_UNAVAILABLE, "down (mock)");
    }
    // A request over one of the provider's limits is refused as the provider refuses it.
    if let Some(r) = super::limits::refusal(s, &body, wire) {
        return r;
    }
    let fault = s.config.faults.iter().find(|(_, every)| n.is_multiple_of(*every)).map(|(f, _)| *f);
    if let Some(f) = fault {
        *s.injected.lock().expect("lock").entry(f.name()).or_default() += 1;
    }
    tokio::time::sleep(s.config.latency).await;
    match fault {
        Some(Fault::RateLimit) => {
            let mut r = error(StatusCode::TOO_MANY_REQUESTS, "rate limited (mock)");
            r.headers_mut()
                .insert("retry-after", s.config.retry_after_s.to_string().parse().expect("header"));
            return r;
        }
        Some(Fault::ServerError) => {
            return error(StatusCode::INTERNAL_SERVER_ERROR, "internal error (mock)");
        }
        Some(Fault::Unavailable) => {
            return error(StatusCode::SERVICE_UNAVAILABLE, "overloaded (mock)");
        }
        Some(Fault::Unauthorized) => return unauthorized(s, headers),
        Some(Fault::Slow) => tokio::time::sleep(s.config.slow).await,
        Some(Fault::Timeout) => tokio::time::sleep(Duration::from_secs(3600)).await,
        _ => {}
    }

    let messages = messages_from(&body);
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let last_user = messages.iter().rev().find_map(|m| {
        if let Message::User { content } = m { Some(content.as_str()) } else { None }
    });
    if !offers_tools && let Some(verdict) = last_user.and_then(judge::reply) {
        return completion(
            &body,
            n,
            json!({"role": "assistant", "content": verdict}),
            "stop",
            fault,
            wire,
        );
    }
    let functions: Vec<FunctionDef> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| serde_json::from_value(t["function"].clone()).ok())
        .collect();
    // The query is the last user message: a task's history may hold earlier user turns before it.
    let query = last_user.unwrap_or_default().to_string();
    // A provider's own search over deferred tools (native-search): the baseline walks it as the
    // search layout, the mock answering its searches ([`native`]).
    let server_search = body["server_search"].as_str();
    // The layout, from the meta-tools offered (the lexical baseline walks each its own way).
    let layout = if functions.iter().any(|f| f.name == DISCOVER) {
        LayoutKind::Progressive
    } else if server_search.is_some() || functions.iter().any(|f| f.name == SEARCH_TOOLS) {
        LayoutKind::Search
    } else {
        LayoutKind::Flat
    };
    let task = importers::task("mock".into(), query, Kind::Single, vec![], String::new(), 0);
    let addressing = Addressing::new();
    let ctx = TurnContext {
        task: &task,
        messages: &messages,
        functions: &functions,
        deferred: &[],
        groups: &[],
        layout,
        addressing: &addressing,
        seed: 0,
        trial: 0,
    };
    let temperature = body["temperature"].as_f64().unwrap_or(1.0).max(0.0);
    let mut turn = if s.config.sampling_noise > 0.0 && temperature > 0.0 {
        use rand_chacha::rand_core::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            s.config.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let draw = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if draw < (s.config.sampling_noise * temperature).min(1.0) {
            let ctx = TurnContext { seed: rng.next_u64(), ..ctx };
            crate::agent::backends::RandomBackend.decide(&ctx).unwrap_or_default()
        } else {
            s.lexical.decide(&ctx).unwrap_or_default()
        }
    } else {
        s.lexical.decide(&ctx).unwrap_or_default()
    };

    let mut server_searches = Vec::new();
    if let Some(tool) = server_search
        && let Some((conversation, searches)) =
            native::server_round(tool, &native::deferred(&body), &messages, &turn.tool_calls, n)
    {
        turn =
            s.lexical.decide(&TurnContext { messages: &conversation, ..ctx }).unwrap_or_default();
        server_searches = searches;
    }
    let mut calls: Vec<Value> = turn
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
        .collect();
    let mut content = turn.content.clone();
    let mut finish = None;
    match fault {
        Some(Fault::MalformedArgs) => {
            for c in &mut calls {
                let a = c["function"]["arguments"].as_str().unwrap_or("{}").to_string();
                c["function"]["arguments"] = json!(a[..a.len() / 2].to_string());
            }
        }
        Some(Fault::InventedTool) if !calls.is_empty() => {
            calls[0]["function"]["name"] = json!("do_what_i_mean")
        }
        Some(Fault::TextCalls) if !calls.is_empty() => {
            let c = &turn.tool_calls[0];
            let args: Value = serde_json::from_str(&c.arguments).unwrap_or(json!({}));
            content = Some(json!({"name": c.name, "arguments": args}).to_string());
            calls.clear();
        }
        Some(Fault::CutOff) => {
            finish = Some(s.config.length_reason.clone());
            match calls.last_mut() {
                Some(c) => {
                    let a = c["function"]["arguments"].as_str().unwrap_or("{}").to_string();
                    c["function"]["arguments"] = json!(half(&a));
                }
                None => content = content.as_deref().map(half),
            }
        }
        Some(Fault::CutOffText) => {
            finish = Some(s.config.length_reason.clone());
            if let Some(c) = turn.tool_calls.first() {
                let args: Value = serde_json::from_str(&c.arguments).unwrap_or(json!({}));
                content = Some(json!({"name": c.name, "arguments": args}).to_string());
                calls.clear();
            }
            content = content.as_deref().map(half);
        }
        Some(Fault::ContentFilter) => {
            finish = Some("content_filter".into());
            content = None;
            calls.clear();
        }
        Some(Fault::RepeatCall) => {
            let previous = messages.iter().rev().find_map(|m| match m {
                Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                    Some(tool_calls.clone())
                }
                _ => None,
            });
            if let Some(previous) = previous {
                calls = previous
                    .iter()
                    .enumerate()
                    .map(|(i, c)| json!({"id": format!("call_{n}_{i}"), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
                content = None;
            }
        }
        Some(Fault::DuplicateCalls) if !calls.is_empty() => {
            let first = calls[0].clone();
            calls = (0..DUPLICATES)
                .map(|i| {
                    let mut c = first.clone();
                    c["id"] = json!(format!("{}_{i}", first["id"].as_str().unwrap_or("call")));
                    c
                })
                .collect();
        }
        _ => {}
    }
    if s.config.echo_key && calls.is_empty() {
        content = Some(format!(
            "{} (answered for key {})",
            content.unwrap_or_default(),
            echo::text(&sent_key(headers))
        ));
    }
    let prompt_tokens =
        (body["messages"].to_string().len() + body["tools"].to_string().len()) as u64 / 4;
    let completion_tokens = (content.as_deref().unwrap_or("").len()
        + calls.iter().map(|c| c.to_string().len()).sum::<usize>())
        as u64
        / 4
        + 1;
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    if !server_searches.is_empty() {
        message["server_searches"] = json!(server_searches);
    }
    let finish =
        finish.unwrap_or_else(|| if calls.is_empty() { "stop" } else { "tool_calls" }.to_string());
    respond(&body, n, message, &finish, fault, prompt_tokens, completion_tokens, wire)
}

/// A completion for a judge request (tokens estimated like the agent's).
fn completion(
    body: &Value,
    n: u64,
    message: Value,
    finish: &str,
    fault: Option<Fault>,
    wire: Wire,
) -> Response {
    let prompt_tokens = body["messages"].to_string().len() as u64 / 4;
    let completion_tokens = message["content"].as_str().unwrap_or_default().len() as u64 / 4 + 1;
    respond(body, n, message, finish, fault, prompt_tokens, completion_tokens, wire)
}

/// The response body around one message, with the response-level faults applied.
#[allow(clippy::too_many_arguments)]
fn respond(
    body: &Value,
    n: u64,
    message: Value,
    finish: &str,
    fault: Option<Fault>,
    prompt_tokens: u64,
    completion_tokens: u64,
    wire: Wire,
) -> Response {
    let response = match wire {
        Wire::Messages => messages::message(
            body,
            n,
            &message,
            finish,
            fault == Some(Fault::EmptyChoices),
            prompt_tokens,
            completion_tokens,
        ),
        Wire::Responses => responses::response(
            body,
            n,
            &message,
            finish,
            fault == Some(Fault::EmptyChoices),
            prompt_tokens,
            completion_tokens,
        ),
        Wire::Gemini => gemini::response(
            body,
            n,
            &message,
            finish,
            fault == Some(Fault::EmptyChoices),
            fault == Some(Fault::MalformedArgs),
            prompt_tokens,
            completion_tokens,
        ),
        Wire::Chat => {
            let choices = if fault == Some(Fault::EmptyChoices) {
                json!([])
            } else {
                json!([{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}])
            };
            json!({
                "id": format!("chatcmpl-mock-{n}"), "object": "chat.completion", "created": 0,
                "model": body["model"].as_str().unwrap_or("mock"),
                "choices": choices,
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
            })
        }
    };
    if fault == Some(Fault::Truncated) {
        let text = response.to_string();
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            text[..text.len() / 2].to_string(),
        )
            .into_response();
    }
    Json(response).into_response()
}

fn messages_from(body: &Value) -> Vec<Message> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let content = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => {
                    parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("")
                }
                _ => String::new(),
            };
            Some(match m["role"].as_str()? {
                "system" | "developer" => Message::System { content },
                "user" => Message::User { content },
                "assistant" => Message::Assistant {
                    content: (!content.is_empty()).then_some(content),
                    tool_calls: m["tool_calls"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|c| ToolCall {
                            id: c["id"].as_str().unwrap_or_default().into(),
                            name: c["function"]["name"].as_str().unwrap_or_default().into(),
                            arguments: c["function"]["arguments"]
                                .as_str()
                                .unwrap_or_default()
                                .into(),
                        })
                        .collect(),
                },
                "tool" => Message::Tool {
                    tool_call_id: m["tool_call_id"].as_str().unwrap_or_default().into(),
                    name: String::new(),
                    content,
                },
                _ => return None,
            })
        })
        .collect()
}

/// The first half of `text` (on a character boundary): what a token limit leaves of it.
fn half(text: &str) -> String {
    text.chars().take(text.chars().count() / 2).collect()
}
