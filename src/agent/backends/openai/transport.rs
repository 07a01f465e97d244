//! The `openai` backend's attempt: one chat-completions request sent with the shared HTTP stack
//! ([`crate::agent::backends::http`]: client, redaction, retries, limits), the answer checked
//! against the client library's response type, and a server's "could not parse the model's call"
//! answer turned into the turn's `unparsed`.
//!
//! Its own file because this is what the chat-completions protocol adds to the shared transport;
//! the retry policy itself lives in `http`, apart from what a request holds and how an answer becomes
//! a turn.

use super::OpenAiBackend;
use super::wire::openai_finish_reasons;
use crate::agent::backends::http::Failure;
use async_openai::types::chat::CreateChatCompletionResponse;
use serde_json::Value;

impl OpenAiBackend {
    pub(super) async fn attempt(&self, body: &[u8]) -> Result<Value, Failure> {
        // A server's parse failure of the model's output is set apart there: an answer, not a failure.
        let value = self.http.post_answer(&self.url, body).await?;
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
