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
    System { content: String },
    User { content: String },
    Assistant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool { tool_call_id: String, name: String, content: String },
}

/// What a backend answers for one turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantTurn {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
}
