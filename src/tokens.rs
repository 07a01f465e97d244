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
