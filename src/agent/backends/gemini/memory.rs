//! The model's own parts, kept to be sent back unchanged. Gemini's thinking models sign their turns:
//! a part may carry a `thoughtSignature` (and thought parts their summaries), and the API wants every
//! such part back, as it was, in the history of the next request (a function call's turn without its
//! signature is refused by the models that require it). toolpick's conversation keeps a turn as text
//! and calls only, so the backend remembers the parts of each answer that carried more than that,
//! keyed by a digest of the turn as the conversation keeps it (its text and its calls, ids included),
//! and [`wire`](super::wire) sends them in place of the rebuilt turn.
//!
//! Answers that carry nothing beyond text and calls are not kept (the rebuilt turn is the same). The
//! ids toolpick makes for calls without one include a digest of the answer ([`super::response`]), so
//! two episodes' turns that differ only in their signatures never share a key. Kept for the run, in
//! memory; a turn not found (a cached answer of another run is read again, so it is found too) is
//! rebuilt from its text and calls.

use crate::protocol::ToolCall;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub(super) struct Memory {
    parts: Mutex<HashMap<u64, Vec<Value>>>,
}

/// The key of a turn: FNV-1a over its text and calls.
pub(super) fn key(content: Option<&str>, calls: &[ToolCall]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes.iter().chain([0xff].iter()) {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(content.unwrap_or_default().as_bytes());
    for c in calls {
        eat(c.id.as_bytes());
        eat(c.name.as_bytes());
        eat(c.arguments.as_bytes());
    }
    h
}

/// `true` when a part carries something a rebuilt turn would lose: a signature, or a thought.
pub(super) fn carries_more(part: &Value) -> bool {
    part.get("thoughtSignature").is_some() || part["thought"] == true
}

impl Memory {
    /// Keep `parts` (the answer's, as sent) for the turn read from them, when any carries more than
    /// text and calls.
    pub(super) fn keep(&self, content: Option<&str>, calls: &[ToolCall], parts: &[Value]) {
        if parts.iter().any(carries_more) {
            let mut map = self.parts.lock().expect("memory lock");
            map.insert(key(content, calls), parts.to_vec());
        }
    }

    /// The parts kept for this turn, if any.
    pub(super) fn parts(&self, content: Option<&str>, calls: &[ToolCall]) -> Option<Vec<Value>> {
        self.parts.lock().expect("memory lock").get(&key(content, calls)).cloned()
    }
}
