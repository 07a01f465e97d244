//! Token counts with a real tokenizer (tiktoken's `o200k_base`, the GPT-4o/o-series encoding).
//!
//! Counts are of the JSON text sent to a model, without the few framing tokens a provider adds per
//! message; they compare layouts and variants, they do not predict a bill to the token.

use crate::protocol::FunctionDef;

/// Tokens in `text` (`o200k_base`, special tokens treated as text).
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len()
}

/// Tokens of the tool definitions as sent in a request's `tools` array.
pub fn count_functions(functions: &[FunctionDef]) -> usize {
    let wire: Vec<serde_json::Value> = functions.iter().map(FunctionDef::to_wire).collect();
    count(&serde_json::to_string(&wire).unwrap_or_default())
}

/// Token counts of `tools` arrays assembled from per-function counts, for runs that present many
/// subsets of one catalog (a tool-count curve builds a presentation per task): each function's JSON is
/// encoded once per run instead of once per episode.
///
/// The count is exact, not an estimate. `o200k_base` encodes a text chunk by chunk, and its pre-tokenizer
/// cuts the array `[f0,f1,…]` so that the only chunks spanning two functions are the punctuation runs
/// where they meet: `f0`'s trailing punctuation (`"]}}}`), the comma, and `f1`'s leading `{"`. So the
/// array's count is the sum of the functions' counts, minus their edge chunks counted alone, plus the
/// joints counted whole. A function whose edges do not have that shape (its JSON ends in whitespace or a
/// non-ASCII character before the closing braces) makes the whole array count the slow way.
#[derive(Default)]
pub struct FunctionTokens {
    memo: std::sync::RwLock<std::collections::HashMap<String, Edges>>,
    joints: std::sync::RwLock<std::collections::HashMap<String, usize>>,
}

/// One function's JSON: its tokens, and its trailing punctuation run with that run's own tokens.
#[derive(Clone)]
struct Edges {
    tokens: usize,
    tail: String,
    tail_tokens: usize,
}

/// The opening of every function's JSON (`{"type":…`) as the pre-tokenizer cuts it.
const HEAD: &str = "{\"";

impl FunctionTokens {
    /// Tokens of `functions` as sent in a request's `tools` array: equal to [`count_functions`].
    pub fn count(&self, functions: &[FunctionDef]) -> usize {
        if functions.is_empty() {
            return count_functions(functions);
        }
        let mut edges = Vec::with_capacity(functions.len());
        for f in functions {
            let wire = f.to_wire().to_string();
            let known = self.memo.read().expect("token memo").get(&wire).cloned();
            let e = match known {
                Some(e) => e,
                None => match Self::edges(&wire) {
                    Some(e) => {
                        self.memo.write().expect("token memo").insert(wire, e.clone());
                        e
                    }
                    None => return count_functions(functions),
                },
            };
            edges.push(e);
        }
        let head = count(HEAD);
        let mut total = self.joint(&format!("[{HEAD}"));
        for (i, e) in edges.iter().enumerate() {
            total += e.tokens - e.tail_tokens - head;
            total += match edges.get(i + 1) {
                Some(_) => self.joint(&format!("{},{HEAD}", e.tail)),
                None => self.joint(&format!("{}]", e.tail)),
            };
        }
        total
    }

    fn joint(&self, text: &str) -> usize {
        if let Some(n) = self.joints.read().expect("token memo").get(text) {
            return *n;
        }
        let n = count(text);
        self.joints.write().expect("token memo").insert(text.to_string(), n);
        n
    }

    /// A function's edges, when they have the shape the assembly relies on: the JSON opens with `{"`
    /// and a letter, and its trailing run of ASCII punctuation follows an ASCII letter or digit.
    fn edges(wire: &str) -> Option<Edges> {
        let bytes = wire.as_bytes();
        if !wire.starts_with(HEAD) || !bytes.get(2).is_some_and(u8::is_ascii_alphabetic) {
            return None;
        }
        let is_punct = |b: &u8| b.is_ascii_punctuation();
        let start = bytes.len() - bytes.iter().rev().take_while(|b| is_punct(b)).count();
        if start <= HEAD.len() || !bytes[start - 1].is_ascii_alphanumeric() {
            return None;
        }
        let tail = wire[start..].to_string();
        Some(Edges { tokens: count(wire), tail_tokens: count(&tail), tail })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        // Reference values from OpenAI's tiktoken (o200k_base).
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        assert!(count("send_email to ana@example.com") > count("send_email"));
    }
}
