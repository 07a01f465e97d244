//! The `openai` backend's attempt: one chat-completions request sent with the shared HTTP stack
//! ([`crate::agent::backends::http`]: client, redaction, retries, limits), the answer checked
//! against the client library's response type, and a server's "could not parse the model's call"
//! answer turned into the turn's `unparsed`.
//!
//! Its own file because this is what the chat-completions protocol adds to the shared transport;
//! the retry policy itself lives in `http`, apart from what a request holds and how an answer becomes
//! a turn.

use super::wire::openai_finish_reasons;
use super::{OpenAiBackend, serving_errors};
use crate::agent::backends::http::{Failure, UNPARSED};
use crate::agent::backends::limits;
use async_openai::types::chat::CreateChatCompletionResponse;
use serde_json::Value;

impl OpenAiBackend {
    pub(super) async fn attempt(&self, body: &[u8]) -> Result<Value, Failure> {
        let (status, headers, text) = self.http.send(self.http.post_json(&self.url, body)).await?;
        if !status.is_success() {
            // A provider's limit (tool count, names, context window): never retried.
            if let Some(f) = limits::http_failure(status.as_u16(), &text) {
                return Err(f);
            }
            // The model's output, rejected by the server's own parser: an answer, not a failure.
            if let Some(entry) = serving_errors::classify_http(status.as_u16(), &text) {
                let message = serving_errors::describe_http(entry, status.as_u16(), &text);
                return Err(Failure {
                    kind: UNPARSED,
                    message,
                    retryable: false,
                    retry_after: None,
                });
            }
            return Err(self.http.http_failure(status, &headers, &text));
        }
        let value = self.http.json_body(&text)?;
        if let Err(e) = serde_json::from_value::<CreateChatCompletionResponse>(
            openai_finish_reasons(value.clone()),
        ) {
            return Err(Failure {
                kind: "invalid_body",
                message: format!("not a chat completion: {e}"),
                retryable: true,
                retry_after: None,
            });
        }
        if value["choices"].as_array().is_none_or(|c| c.is_empty()) {
            return Err(Failure {
                kind: "empty_choices",
                message: "the response has no choices".into(),
                retryable: true,
                retry_after: None,
            });
        }
        Ok(value)
    }
}
