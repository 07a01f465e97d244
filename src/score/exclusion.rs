//! Why a trial is in no rate: the reasons a trial is *excluded* rather than scored, read from its
//! record. Every rate and mean is over scored trials; a cell's excluded trials are counted beside its
//! `n` by reason ([`Exclusion`]), so a rate computed on fewer trials than were run says so.
//!
//! A trial is excluded when the backend failed ([`crate::record::Trial::is_error`]); its `error` says
//! why, in the runner's words: the failure class first (`rate_limited after 5 attempt(s): HTTP 429: …`,
//! `episode_timeout: …`, `client_error after 1 attempt(s): HTTP 400: …`), then what the endpoint said.
//! Failures that are the model's (a server that could not parse its call) are never excluded: they are
//! scored as `malformed_call` (`crate::agent::backends::serving_errors`).

use crate::record::Trial;

/// Why an excluded trial is in no rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Exclusion {
    /// The endpoint or the harness failed: unreachable, timed out, 5xx after every attempt, an answer
    /// that is no chat completion, a live server that did not start.
    Infrastructure,
    /// The provider refused the request for one of its limits: requests or tokens per minute or a quota
    /// (429 after every attempt), the request's size (413), the model's context window, the number of
    /// tools. Rerunning later, or with a smaller request, may succeed; the model was never asked.
    ProviderLimit,
}

impl Exclusion {
    pub const ALL: [Exclusion; 2] = [Exclusion::Infrastructure, Exclusion::ProviderLimit];

    pub fn as_str(self) -> &'static str {
        match self {
            Exclusion::Infrastructure => "infrastructure",
            Exclusion::ProviderLimit => "provider limit",
        }
    }
}

/// Words in an endpoint's error that name a limit of the provider (case-insensitive): OpenAI's error
/// codes `context_length_exceeded`, `insufficient_quota`, `array_above_max_length` (more than 128
/// tools) and `rate_limit_exceeded`; vLLM's "maximum context length"; llama.cpp's
/// `exceed_context_size_error` ("exceeds the available context size"); Gemini's `RESOURCE_EXHAUSTED`.
pub const LIMIT_MARKERS: [&str; 8] = [
    "context_length_exceeded",
    "maximum context length",
    "exceed_context_size_error",
    "exceeds the available context size",
    "insufficient_quota",
    "array_above_max_length",
    "rate_limit_exceeded",
    "resource_exhausted",
];

/// The reason of an excluded trial's `error` text.
pub fn classify(error: &str) -> Exclusion {
    let class =
        error.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or_default();
    let lower = error.to_ascii_lowercase();
    if class == "rate_limited"
        || lower.contains("http 413")
        || LIMIT_MARKERS.iter().any(|m| lower.contains(m))
    {
        Exclusion::ProviderLimit
    } else {
        Exclusion::Infrastructure
    }
}

/// Why `t` is in no rate, or `None` when it is scored. A trial that stopped for a provider's limit
/// (`stop_reason: provider_limit`) says so itself; an older record's backend error is read from its
/// words ([`classify`]).
pub fn of(t: &Trial) -> Option<Exclusion> {
    if t.stop_reason == crate::record::StopReason::ProviderLimit {
        return Some(Exclusion::ProviderLimit);
    }
    t.is_error().then(|| classify(t.error.as_deref().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_of_the_provider_are_told_apart_from_failures_of_the_infrastructure() {
        // Errors as the runner writes them: the class, the attempts, what the endpoint said.
        let limits = [
            "rate_limited after 5 attempt(s): HTTP 429: {\"error\":{\"message\":\"slow down\"}}",
            "client_error after 1 attempt(s): HTTP 413: payload too large",
            "client_error after 1 attempt(s): HTTP 400: {\"error\":{\"code\":\"context_length_exceeded\"}}",
            "client_error after 1 attempt(s): HTTP 400: This model's maximum context length is 8192 tokens",
            "client_error after 1 attempt(s): HTTP 400: {\"error\":{\"code\":400,\"message\":\"request (9000 tokens) exceeds the available context size (8192 tokens)\",\"type\":\"exceed_context_size_error\"}}",
            "client_error after 1 attempt(s): HTTP 400: Invalid 'tools': array too long. Expected an array with maximum length 128 (array_above_max_length)",
            "server_error after 2 attempt(s): HTTP 503: RESOURCE_EXHAUSTED",
            "client_error after 1 attempt(s): HTTP 402: insufficient_quota",
        ];
        for e in limits {
            assert_eq!(classify(e), Exclusion::ProviderLimit, "{e}");
        }
        let infrastructure = [
            "connection after 5 attempt(s): cannot connect: Connection refused (os error 111)",
            "timeout after 2 attempt(s): no answer within 60 s (request timeout)",
            "server_error after 5 attempt(s): HTTP 500: internal error",
            "client_error after 1 attempt(s): HTTP 404: model not found",
            "invalid_body after 5 attempt(s): response is not JSON (truncated?)",
            "episode_timeout: the episode took longer than 600 s",
            "mcp_server: the trial's server did not start: exit status 1",
            "",
        ];
        for e in infrastructure {
            assert_eq!(classify(e), Exclusion::Infrastructure, "{e}");
        }
    }
}
