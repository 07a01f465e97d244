//! What every HTTP backend does around its protocol's own request and answer: one turn answered from
//! the cache or by the retried request ([`HttpEndpoint::answer_turn`]), one attempt's `POST` read up
//! to a JSON body with the server's "could not parse the model's call" answer set apart
//! ([`HttpEndpoint::post_answer`]), the preflight ([`HttpEndpoint::preflight`]), and the turn built
//! from what a protocol read out of its answer, calls written as text included ([`ReadAnswer`]).
//!
//! Its own file because these steps are the same whatever the protocol (they differed only in a
//! field name between the `openai` and `anthropic` backends): each backend passes its body, its
//! answer check and its reading as closures.

use super::{Failure, HttpEndpoint, NOT_IMPLEMENTED, UNPARSED};
use crate::agent::TurnContext;
use crate::agent::backends::{limits, serving_errors};
use crate::agent::cache::{self, Cache};
use crate::agent::textcalls::{cut_call, parse_text_calls};
use crate::protocol::{AssistantTurn, Finish, ToolCall, TurnTiming, Usage};
use anyhow::anyhow;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// The cache entry of an answer in which the server could not parse the model's call
/// ([`serving_errors`]): the model's answer to that request, cached like any other (a rerun served
/// from the cache scores it the same way). No protocol's answer has this key.
pub(crate) const UNPARSED_ENTRY: &str = "toolpick_unparsed_call";

/// `turn` with the usage object of `answer` as the provider wrote it (`usage` for chat completions,
/// Messages and Responses; `usageMetadata` for Gemini), kept beside toolpick's normalised figures.
fn with_provider_usage(mut turn: AssistantTurn, answer: &Value) -> AssistantTurn {
    turn.provider_usage = answer
        .get("usage")
        .or_else(|| answer.get("usageMetadata"))
        .filter(|u| u.is_object())
        .cloned();
    turn
}

impl HttpEndpoint {
    /// The turn answering `body`: from `cache` when it holds the answer (keyed by `scope`, the body
    /// and the trial), else by `attempt` with the runner's retries, the answer cached and read by
    /// `read(answer, turn number)`. A server's parse failure of the model's call is the turn's
    /// `unparsed` (and cached); any other failure is the error, the key removed.
    pub(crate) async fn answer_turn<A, Fut>(
        &self,
        cache: Option<&Cache>,
        scope: &str,
        body: &[u8],
        ctx: &TurnContext<'_>,
        attempt: A,
        read: impl Fn(&Value, usize) -> AssistantTurn,
    ) -> anyhow::Result<AssistantTurn>
    where
        A: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<Value, Failure>>,
    {
        let key = cache::key(scope, body, ctx.trial);
        if let Some(hit) = cache.and_then(|c| c.get(&key)) {
            self.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
            let mut turn = match hit[UNPARSED_ENTRY].as_str() {
                Some(message) => {
                    AssistantTurn { unparsed: Some(message.to_string()), ..Default::default() }
                }
                None => with_provider_usage(read(&hit, ctx.turn() + 1), &hit),
            };
            turn.timing = Some(TurnTiming { cached: true, ..Default::default() });
            return Ok(turn);
        }
        let estimate = (body.len() / 4) as u64 + self.spec.max_tokens.unwrap_or(256) as u64;
        let mut timing = TurnTiming::default();
        match self.retrying(ctx.seed, estimate, true, &mut timing, attempt).await {
            Ok(value) => {
                if let Some(c) = cache {
                    c.put(&key, &value)?;
                }
                let mut turn = with_provider_usage(read(&value, ctx.turn() + 1), &value);
                turn.timing = Some(timing);
                Ok(turn)
            }
            Err((f, _)) if f.kind == UNPARSED => {
                let message = self.redactor.redact(&f.message).into_owned();
                if let Some(c) = cache {
                    c.put(&key, &json!({ UNPARSED_ENTRY: message }))?;
                }
                Ok(AssistantTurn {
                    unparsed: Some(message),
                    timing: Some(timing),
                    ..Default::default()
                })
            }
            // A provider's limit: the trial records it as `provider_limit`, not as a failure.
            Err((f, _)) if let Some(hit) = limits::into_error(self, &f) => Err(hit),
            Err((f, attempts)) => Err(anyhow!(
                "{} after {attempts} attempt(s): {}",
                f.kind,
                self.redactor.redact(&f.message)
            )),
        }
    }

    /// One attempt's `POST url` up to its JSON body (redacted): an error status is a [`Failure`] — a
    /// provider's limit ([`limits::http_failure`], never retried), [`UNPARSED`] when it is the server's own parser rejecting the model's call (an answer, never
    /// retried), else classified by [`HttpEndpoint::http_failure`]. The protocol checks the body's
    /// shape itself.
    pub(crate) async fn post_answer(&self, url: &str, body: &[u8]) -> Result<Value, Failure> {
        let (status, headers, text) = self.send(self.post_json(url, body)).await?;
        if !status.is_success() {
            // A provider's limit (tool count, names, context window): never retried.
            if let Some(f) = limits::http_failure(status.as_u16(), &text) {
                return Err(f);
            }
            if let Some(entry) = serving_errors::classify_http(status.as_u16(), &text) {
                let message = serving_errors::describe_http(entry, status.as_u16(), &text);
                return Err(Failure {
                    kind: UNPARSED,
                    message,
                    retryable: false,
                    retry_after: None,
                });
            }
            return Err(self.http_failure(status, &headers, &text));
        }
        self.json_body(&text)
    }

    /// One cheap request before a run: `GET models`, or — when the server does not implement it
    /// (404, 405, 501) — the one-token request `ping` (to `ping_url`, named in the messages), with the
    /// normal retries and timeouts. Never cached and not counted in the endpoint's stats. `Ok`: what
    /// answered; `Err`: one line saying what was tried, what came back and what to check, the key
    /// removed.
    pub(crate) async fn preflight<P, Fut>(
        &self,
        models: &str,
        ping_url: &str,
        ping: P,
    ) -> Result<String, String>
    where
        P: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<Value, Failure>>,
    {
        let mut timing = TurnTiming::default();
        let tried = match self.retrying(0, 1, false, &mut timing, || self.get_json(models)).await {
            Ok(_) => return Ok(format!("GET {models}")),
            Err((f, _)) if f.kind == NOT_IMPLEMENTED => {
                format!("GET {models} → {}, then ", f.message)
            }
            Err((f, n)) => return Err(self.preflight_failure(&format!("GET {models}"), f, n)),
        };
        let tried = format!("{tried}POST {ping_url} (one token)");
        match self.retrying(0, 16, false, &mut timing, ping).await {
            Ok(_) => Ok(tried),
            Err((f, n)) => Err(self.preflight_failure(&tried, f, n)),
        }
    }
}

/// What a protocol read out of one answer, before the calls written as text are looked for.
pub(crate) struct ReadAnswer {
    pub(crate) content: Option<String>,
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) usage: Usage,
    pub(crate) finish: Finish,
    /// The calls the protocol says were cut off by the token limit.
    pub(crate) truncated_call_ids: Vec<String>,
}

impl ReadAnswer {
    /// The turn: when the answer holds no call and `parse_text_calls` is on, the calls written in its
    /// text (ids `text_call_{turn_no}_{i}`), a call cut off by the token limit last and marked.
    pub(crate) fn into_turn(self, parse_text_calls_on: bool, turn_no: usize) -> AssistantTurn {
        let ReadAnswer { content, mut tool_calls, usage, finish, mut truncated_call_ids } = self;
        let mut text_call_ids = Vec::new();
        if tool_calls.is_empty()
            && parse_text_calls_on
            && let Some(text) = &content
        {
            let cut = if finish == Finish::Length { cut_call(text) } else { None };
            let was_cut = cut.is_some();
            for (i, c) in parse_text_calls(text).into_iter().chain(cut).enumerate() {
                let id = format!("text_call_{turn_no}_{i}");
                text_call_ids.push(id.clone());
                tool_calls.push(ToolCall { id, name: c.name, arguments: c.arguments });
            }
            // The cut call comes last, after every complete one.
            if was_cut && let Some(last) = tool_calls.last() {
                truncated_call_ids.push(last.id.clone());
            }
        }
        AssistantTurn {
            content,
            tool_calls,
            usage,
            text_call_ids,
            timing: None,
            finish,
            truncated_call_ids,
            unparsed: None,
            server_searches: Vec::new(),
            provider_usage: None,
        }
    }
}
