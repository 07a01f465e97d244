//! The chat-completions shapes every part speaks: messages, tool calls, function definitions.
//!
//! They mirror the OpenAI-compatible wire format (role-tagged messages; tool calls whose `arguments` are a
//! JSON *string*), so the deterministic backends and a real model see exactly the same conversation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A function the model may call, as sent in the `tools` array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDef {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl FunctionDef {
    /// The `{"type":"function","function":{...}}` wire form.
    pub fn to_wire(&self) -> Value {
        serde_json::json!({"type": "function", "function": self})
    }

    /// The text a lexical search indexes besides the name: the description, then the top-level
    /// parameter names (the BM25 search layout and the lexical baseline index the same words).
    pub fn search_text(&self) -> String {
        let params: Vec<&str> = self
            .parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        format!("{} {}", self.description, params.join(" "))
    }
}

/// A call the model asked for. `arguments` is the raw JSON text the model produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
    },
}

/// Token usage as an endpoint reports it, normalised across protocols (docs/models.md,
/// "Normalisation across protocols"): `prompt_tokens` is every input token, cache reads and writes
/// included, whatever the provider counts apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache, when reported.
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache, when reported (Anthropic's
    /// `cache_creation_input_tokens`). Absent (0) from records of protocols that do not report it,
    /// so their records are unchanged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Completion tokens the model spent reasoning (thinking), part of `completion_tokens`, when
    /// reported (Responses `output_tokens_details.reasoning_tokens`, Gemini `thoughtsTokenCount`, chat
    /// completions `completion_tokens_details.reasoning_tokens`). Absent (0) from records of
    /// protocols and answers that do not report it, so their records are unchanged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// How one model request went on the wire (timings are measurements, kept out of trial records).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TurnTiming {
    /// Latency of every HTTP attempt, in milliseconds, including failed ones.
    pub attempt_ms: Vec<f64>,
    /// Time spent waiting for rate limits and retry back-off, in milliseconds.
    pub waited_ms: f64,
    /// Served from the on-disk cache (no request made).
    pub cached: bool,
}

/// Why the model stopped writing a message (`finish_reason`), as far as the episode cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Finish {
    /// It finished on its own (`stop`, `tool_calls`, or no reason given).
    #[default]
    Complete,
    /// Cut off by the completion token limit (`length`; Anthropic's `max_tokens`, Gemini's `MAX_TOKENS`).
    Length,
    /// Stopped by the provider's content filter (`content_filter`; Gemini's `SAFETY`, `RECITATION`, …).
    ContentFilter,
}

impl Finish {
    /// Read a provider's `finish_reason` (any case). Unknown reasons are `Complete`: the message is
    /// taken as written, as before finish reasons were read.
    pub fn from_wire(reason: &str) -> Finish {
        match reason.to_ascii_lowercase().as_str() {
            "length" | "max_tokens" | "max_output_tokens" | "model_length" | "token_limit" => {
                Finish::Length
            }
            "content_filter" | "safety" | "recitation" | "blocklist" | "prohibited_content"
            | "spii" | "image_safety" | "refusal" => Finish::ContentFilter,
            _ => Finish::Complete,
        }
    }

    /// The OpenAI spelling (what the chat-completions schema accepts).
    pub fn wire(self) -> &'static str {
        match self {
            Finish::Complete => "stop",
            Finish::Length => "length",
            Finish::ContentFilter => "content_filter",
        }
    }
}

/// What a backend answers for one turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantTurn {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// Ids of calls that were parsed out of `content` rather than `tool_calls`.
    pub text_call_ids: Vec<String>,
    pub timing: Option<TurnTiming>,
    /// Why the message ended.
    pub finish: Finish,
    /// Ids of calls the token limit cut off mid-way (their arguments are incomplete): recorded as
    /// truncated, never executed.
    pub truncated_call_ids: Vec<String>,
    /// The serving side could not parse what the model wrote as a tool call (its own parser failed:
    /// `crate::agent::backends::serving_errors`), in the server's words: the turn holds nothing usable
    /// and is recorded as one malformed call.
    pub unparsed: Option<String>,
    /// Searches the provider ran on its side during this turn (`native-search`), in order, before the
    /// turn's calls.
    pub server_searches: Vec<ServerSearch>,
    /// The answer's usage object exactly as the provider wrote it (HTTP backends), beside `usage`.
    pub provider_usage: Option<Value>,
}

/// One search a provider ran with its own search tool: its call and the tools it loaded, best first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerSearch {
    /// The provider's id of the search call.
    pub id: String,
    /// The provider's search tool (`crate::record::nav::PROVIDER_SEARCH`).
    pub name: String,
    /// The search's arguments as JSON text (`{"query": …}`).
    pub arguments: String,
    /// The function names the search returned, in the provider's order.
    pub tools: Vec<String>,
}

impl ServerSearch {
    /// The search as the conversation keeps it: a call to the provider's tool, and its result in the
    /// `search` layout's shape (`{"tools": [{"name": …}, …]}`), so a transcript shows what was found.
    pub fn as_messages(&self) -> (ToolCall, Message) {
        let call = ToolCall {
            id: self.id.clone(),
            name: self.name.clone(),
            arguments: self.arguments.clone(),
        };
        let tools: Vec<serde_json::Value> =
            self.tools.iter().map(|n| serde_json::json!({ "name": n })).collect();
        let result = Message::Tool {
            tool_call_id: self.id.clone(),
            name: self.name.clone(),
            content: serde_json::json!({ "tools": tools }).to_string(),
        };
        (call, result)
    }
}

/// The catalog tools of one server as a protocol that groups functions may send them (the Responses
/// API's `namespace` tools, [`crate::agent::spec::ModelSpec::namespaces`]): the group's name, valid
/// as a function name is, its description, and the names of its functions as the layout offers them.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolGroup {
    pub name: String,
    pub description: String,
    pub functions: Vec<String>,
}

/// `true` when `name` is a valid function name for chat-completions APIs.
pub fn is_valid_function_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
