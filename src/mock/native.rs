//! The mock's side of the native layouts: tools a request sends deferred (`defer_loading`), which the
//! converters ([`super::messages::chat_body`], [`super::responses::chat_body`]) put in the chat-shaped
//! body's `deferred` apart from the tools shown; and the provider's own tool search (`native-search`),
//! which the mock runs itself, as the API would: the lexical baseline's search walk asks, the search
//! layout's BM25 over the deferred definitions answers ([`crate::layout::search::rank`], 5 results),
//! and the baseline decides again on what was loaded. The answer carries each search it ran
//! (`server_searches`), written by each protocol's writer in its own blocks or items.
//!
//! A client-executed search (`native-search-client`) is the baseline's ordinary `search_tools` walk:
//! the converters read the protocol's search call and output into a `search_tools` call and its
//! `{"tools": […]}` result, and the writers put a `search_tools` call back in the protocol's form.

use crate::layout::search::{DEFAULT_K, SEARCH_TOOLS, rank};
use crate::protocol::{FunctionDef, Message, ToolCall};
use serde_json::{Value, json};

/// The deferred tools of a chat-shaped body.
pub(super) fn deferred(chat: &Value) -> Vec<FunctionDef> {
    chat["deferred"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| serde_json::from_value(t.clone()).ok())
        .collect()
}

/// The definitions of the deferred tools named, in the order named (unknown names left out): what a
/// provider loads for references to them.
pub(super) fn loaded<'a>(
    deferred: &[FunctionDef],
    names: impl IntoIterator<Item = &'a str>,
) -> Value {
    let defs: Vec<&FunctionDef> =
        names.into_iter().filter_map(|n| deferred.iter().find(|f| f.name == n)).collect();
    json!({ "tools": defs })
}

/// The provider's search for one `search_tools` call of the baseline: the definitions found.
fn search(deferred: &[FunctionDef], call: &ToolCall) -> Vec<FunctionDef> {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let query = args["query"].as_str().unwrap_or_default();
    rank(deferred, query, DEFAULT_K).into_iter().map(|i| deferred[i].clone()).collect()
}

/// One server-side search round: when the baseline's turn is searches only, run them, and return the
/// conversation with them answered and the searches as the writers take them
/// (`{id, name, input, tools}`). `None` when the turn is not a search.
pub(super) fn server_round(
    tool: &str,
    deferred: &[FunctionDef],
    messages: &[Message],
    calls: &[ToolCall],
    n: u64,
) -> Option<(Vec<Message>, Vec<Value>)> {
    if calls.is_empty() || calls.iter().any(|c| c.name != SEARCH_TOOLS) {
        return None;
    }
    let mut conversation = messages.to_vec();
    conversation.push(Message::Assistant { content: None, tool_calls: calls.to_vec() });
    let mut searches = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let found = search(deferred, c);
        conversation.push(Message::Tool {
            tool_call_id: c.id.clone(),
            name: SEARCH_TOOLS.into(),
            content: json!({ "tools": found }).to_string(),
        });
        let input: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
        searches.push(json!({"id": format!("srvtoolu_mock_{n}_{i}"), "name": tool, "input": input, "tools": found}));
    }
    Some((conversation, searches))
}
