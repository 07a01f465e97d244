//! Provider limits, declared once per wire protocol: how many tools one request may carry and which
//! tool names the provider accepts; and the provider's words for a request refused because of them
//! (or because the prompt does not fit the model's context window), read into a
//! [`LimitHit`](crate::record::LimitHit) so the trial records a `provider_limit`, not a model miss, a
//! retried infrastructure error or a breaker trip.
//!
//! A backend's registry entry ([`super::Entry::limits`]) names its protocol's [`ProtocolLimits`]; the
//! run checks every cell against them before the first request (`run::provider_limits`). The figures
//! and their sources are in docs/models.md ("Provider limits").
//!
//! Its own file because the limits are facts about the protocols, apart from how each backend builds
//! its requests; the error readers of each backend call [`http_failure`] and [`into_error`] here.

use super::http::{Failure, HttpEndpoint};
use crate::protocol::TurnTiming;
use crate::record::LimitHit;
pub use crate::record::LimitKind;

/// Which characters a protocol accepts in a tool name, and how long one may be.
#[derive(Debug, Clone, Copy)]
pub struct NameRule {
    pub max_len: usize,
    /// The rule as the provider documents it (a regular expression), for messages.
    pub pattern: &'static str,
    first: fn(char) -> bool,
    rest: fn(char) -> bool,
}

impl NameRule {
    /// Why `name` breaks the rule, or `None` when the provider accepts it.
    pub fn check(&self, name: &str) -> Option<String> {
        let len = name.chars().count();
        if len == 0 {
            return Some("it is empty".into());
        }
        if len > self.max_len {
            return Some(format!("{len} characters, more than {}", self.max_len));
        }
        let mut chars = name.chars();
        let bad =
            chars.next().filter(|c| !(self.first)(*c)).or_else(|| chars.find(|c| !(self.rest)(*c)));
        bad.map(|c| format!("`{}` does not match `{}`", c.escape_debug(), self.pattern))
    }
}

fn word_or_dash(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn gemini_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn gemini_rest(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}

/// What one wire protocol accepts in a request's tools.
#[derive(Debug, Clone, Copy)]
pub struct ProtocolLimits {
    /// The protocol, as messages name it.
    pub protocol: &'static str,
    /// Most tools (function declarations) one request may carry; `None`: no documented limit.
    pub max_tools: Option<usize>,
    pub names: NameRule,
    /// The host of the provider's own API, where these limits hold by default; servers that only
    /// speak the protocol (llama.cpp, vLLM) have their own, and are checked against them only when
    /// `provider_limits` says so.
    pub api_host: &'static str,
}

/// OpenAI chat completions and Responses: at most 128 tools (HTTP 400 `array_above_max_length`),
/// function names `^[a-zA-Z0-9_-]{1,64}$` (the API reference's `FunctionObject.name`).
pub const OPENAI: ProtocolLimits = ProtocolLimits {
    protocol: "OpenAI (chat completions and Responses)",
    api_host: "api.openai.com",
    max_tools: Some(128),
    names: NameRule {
        max_len: 64,
        pattern: "^[a-zA-Z0-9_-]{1,64}$",
        first: word_or_dash,
        rest: word_or_dash,
    },
};

/// Anthropic Messages: names `^[a-zA-Z0-9_-]{1,128}$`, no documented tool count; a `tool_reference`
/// (client-side tool search) names at most [`ANTHROPIC_TOOL_REFERENCE_MAX`] characters.
pub const ANTHROPIC: ProtocolLimits = ProtocolLimits {
    protocol: "Anthropic Messages",
    api_host: "api.anthropic.com",
    max_tools: None,
    names: NameRule {
        max_len: 128,
        pattern: "^[a-zA-Z0-9_-]{1,128}$",
        first: word_or_dash,
        rest: word_or_dash,
    },
};

/// The longest tool name an Anthropic `tool_reference` block may carry.
pub const ANTHROPIC_TOOL_REFERENCE_MAX: usize = 64;

/// Gemini `generateContent`: at most 512 function declarations, names of at most 128 characters
/// matching `[a-zA-Z_][a-zA-Z0-9_.:-]*` (the `gemini` backend's; both read in `google-genai` 3.3.0's
/// `types.py`, `Tool.function_declarations` and `FunctionDeclaration.name`).
pub const GEMINI: ProtocolLimits = ProtocolLimits {
    protocol: "Gemini generateContent",
    api_host: "generativelanguage.googleapis.com",
    max_tools: Some(512),
    names: NameRule {
        max_len: 128,
        pattern: "^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$",
        first: gemini_first,
        rest: gemini_rest,
    },
};

/// The limits of a provider by the name `provider_limits` gives it (`none`, or any other: none).
pub fn by_name(name: &str) -> Option<&'static ProtocolLimits> {
    match name {
        "openai" => Some(&OPENAI),
        "anthropic" => Some(&ANTHROPIC),
        "gemini" => Some(&GEMINI),
        _ => None,
    }
}

/// The limits a model's requests are checked against: the ones `chosen` names (`provider_limits`),
/// else the protocol's (`declared`, from the backend's registry entry) when `base_url` is the
/// provider's own API.
pub fn applying(
    declared: Option<&'static ProtocolLimits>,
    chosen: Option<&str>,
    base_url: &str,
) -> Option<&'static ProtocolLimits> {
    if let Some(name) = chosen {
        return by_name(name);
    }
    let declared = declared?;
    let host = reqwest::Url::parse(base_url).ok()?.host_str()?.to_ascii_lowercase();
    (host == declared.api_host).then_some(declared)
}

/// One limit a request would exceed, before it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breach {
    pub kind: LimitKind,
    /// The numbers: `150 tools, more than the 128 OpenAI … accepts`.
    pub what: String,
}

impl ProtocolLimits {
    /// The limits a request offering the functions `names` would exceed: the tool count, and the
    /// names the protocol refuses.
    pub fn check_tools<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<Breach> {
        let names: Vec<&str> = names.into_iter().collect();
        self.check_count(names.len()).into_iter().chain(self.check_names(names)).collect()
    }

    /// A request of `n` tools, when that is more than the protocol accepts.
    pub fn check_count(&self, n: usize) -> Option<Breach> {
        let max = self.max_tools.filter(|max| n > *max)?;
        Some(Breach {
            kind: LimitKind::ToolCount,
            what: format!(
                "{n} tools, more than the {max} {} accepts in one request",
                self.protocol
            ),
        })
    }

    /// The names the protocol refuses (the first few named, the rest counted), if any.
    pub fn check_names<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Option<Breach> {
        const SHOWN: usize = 3;
        let bad: Vec<String> = names
            .into_iter()
            .filter_map(|n| {
                self.names.check(n).map(|why| format!("`{}` ({why})", n.escape_debug()))
            })
            .collect();
        if bad.is_empty() {
            return None;
        }
        let mut what = format!(
            "{} tool name(s) {} refuses: {}",
            bad.len(),
            self.protocol,
            bad[..bad.len().min(SHOWN)].join(", ")
        );
        if bad.len() > SHOWN {
            what.push_str(&format!(" and {} more", bad.len() - SHOWN));
        }
        Some(Breach { kind: LimitKind::ToolName, what })
    }
}

/// The context-window limit a prompt of `estimate` tokens (toolpick's own estimate) would exceed.
pub fn check_context(estimate: usize, window: u64) -> Option<Breach> {
    (estimate as u64 > window).then(|| Breach {
        kind: LimitKind::Context,
        what: format!(
            "an estimated {estimate}-token prompt, more than the model's {window}-token context window"
        ),
    })
}

/// Failure kinds of a refusal for a limit, one per [`LimitKind`] (a [`Failure`]'s kind is static).
const FAILURE_KINDS: [(LimitKind, &str); 3] = [
    (LimitKind::ToolCount, "provider_limit_tool_count"),
    (LimitKind::ToolName, "provider_limit_tool_name"),
    (LimitKind::Context, "provider_limit_context"),
];

/// Which limit an HTTP error answer names, from the provider's own error codes and words
/// (case-insensitive): llama.cpp `exceed_context_size_error`; OpenAI `context_length_exceeded`,
/// `array_above_max_length` on `tools`, a tool name that "does not match pattern"; Anthropic's
/// "prompt is too long" and a tool name that "should match pattern"; vLLM's "maximum context length";
/// Gemini's "The input token count (N) exceeds the maximum number of tokens allowed (M).".
/// Only client errors (400, 413) are read: a limit is never a server's failure.
pub fn classify_http(status: u16, body: &str) -> Option<LimitKind> {
    if !matches!(status, 400 | 413) {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let has = |w: &str| lower.contains(w);
    if has("exceed_context_size_error")
        || has("context_length_exceeded")
        || has("model_context_window_exceeded")
        || has("prompt is too long")
        || has("maximum context length")
        || has("exceeds the available context size")
        || has("exceeds the maximum number of tokens allowed")
    {
        Some(LimitKind::Context)
    } else if has("array_above_max_length") && has("tools") {
        Some(LimitKind::ToolCount)
    } else if has("name") && (has("does not match pattern") || has("should match pattern")) {
        Some(LimitKind::ToolName)
    } else {
        None
    }
}

/// An HTTP error answer that names a limit, as the attempt's failure: never retried (the same request
/// would be refused again).
pub(crate) fn http_failure(status: u16, body: &str) -> Option<Failure> {
    let kind = classify_http(status, body)?;
    Some(limit_failure(kind, format!("HTTP {status}: {}", crate::text::one_line(body, 300))))
}

/// A successful Messages answer that stopped because the context window is full (`stop_reason:
/// model_context_window_exceeded`): the prompt did not fit, whatever the model wrote so far.
pub(crate) fn anthropic_stop(value: &serde_json::Value) -> Option<Failure> {
    (value["stop_reason"] == "model_context_window_exceeded").then(|| {
        limit_failure(
            LimitKind::Context,
            "stop_reason: model_context_window_exceeded (the model's context window is full)"
                .into(),
        )
    })
}

fn limit_failure(kind: LimitKind, message: String) -> Failure {
    let tag = FAILURE_KINDS.iter().find(|(k, _)| *k == kind).map(|(_, t)| *t).expect("every kind");
    Failure { kind: tag, message, retryable: false, retry_after: None }
}

/// The limit a failure stands for, if it is a refusal for one.
pub(crate) fn kind_of(f: &Failure) -> Option<LimitKind> {
    FAILURE_KINDS.iter().find(|(_, t)| *t == f.kind).map(|(k, _)| *k)
}

/// A refusal for a limit as the turn's error: the episode loop finds the [`LimitHit`] by type and
/// stops the trial with `provider_limit`. The message is redacted like any endpoint's words.
pub(crate) fn into_error(http: &HttpEndpoint, f: &Failure) -> Option<anyhow::Error> {
    let kind = kind_of(f)?;
    Some(anyhow::Error::new(LimitHit {
        kind,
        message: http.redactor.redact(&f.message).into_owned(),
    }))
}

/// The context window a llama.cpp server was started with (`-c`): `GET {root}/props`,
/// `default_generation_settings.n_ctx` (older servers: top-level `n_ctx`). `None` when the server has
/// no such route or answers something else: the check then needs `context_window`.
pub(crate) async fn llama_cpp_n_ctx(http: &HttpEndpoint, base_url: &str) -> Option<u64> {
    let root = base_url.trim_end_matches('/');
    let root = root.strip_suffix("/v1").unwrap_or(root);
    let url = format!("{root}/props");
    let mut timing = TurnTiming::default();
    let props = http.retrying(0, 1, false, &mut timing, || http.get_json(&url)).await.ok()?;
    props["default_generation_settings"]["n_ctx"]
        .as_u64()
        .or_else(|| props["n_ctx"].as_u64())
        .filter(|n| *n > 0)
}

/// The model's context window behind an OpenAI-protocol endpoint (chat completions or Responses):
/// `context_window` when configured, else an OpenAI-compatible llama.cpp server's `n_ctx`
/// (`GET /props`); `None` when neither is known (a server without `/props`, or OpenAI's own API,
/// which has no `/props` and publishes its windows elsewhere, so it is not asked).
pub(crate) async fn openai_context_window(
    http: &HttpEndpoint,
    endpoint: &str,
) -> Option<(u64, String)> {
    if let Some(n) = http.spec.context_window {
        return Some((n as u64, "context_window".into()));
    }
    if applying(Some(&OPENAI), None, endpoint).is_some() {
        return None;
    }
    let n = llama_cpp_n_ctx(http, endpoint).await?;
    Some((n, "the server's /props n_ctx".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of `len` characters, every one `c`.
    fn name(c: char, len: usize) -> String {
        std::iter::repeat_n(c, len).collect()
    }

    #[test]
    fn tool_counts_around_each_limit() {
        for (limits, max) in [(OPENAI, 128), (GEMINI, 512)] {
            for n in [0, 1, max - 1, max, max + 1, max + 22, 2 * max] {
                let names: Vec<String> = (0..n).map(|i| format!("tool_{i}")).collect();
                let breaches = limits.check_tools(names.iter().map(String::as_str));
                let over = breaches.iter().find(|b| b.kind == LimitKind::ToolCount);
                assert_eq!(over.is_some(), n > max, "{} with {n} tools", limits.protocol);
                if let Some(b) = over {
                    assert!(b.what.starts_with(&format!("{n} tools")), "{}", b.what);
                    assert!(b.what.contains(&max.to_string()), "{}", b.what);
                }
            }
        }
        let many: Vec<String> = (0..5000).map(|i| format!("t{i}")).collect();
        assert!(ANTHROPIC.check_tools(many.iter().map(String::as_str)).is_empty());
    }

    #[test]
    fn the_providers_own_api_gets_its_limits_and_compatible_servers_only_when_asked() {
        let openai = Some(&OPENAI);
        let named = |l: Option<&ProtocolLimits>| l.map(|l| l.protocol);
        let cases = [
            (openai, None, "https://api.openai.com/v1", Some(OPENAI.protocol)),
            (openai, None, "https://API.OpenAI.com/v1/", Some(OPENAI.protocol)),
            (openai, None, "http://127.0.0.1:8080/v1", None),
            (openai, None, "https://api.openai.com.example.net/v1", None),
            (openai, Some("openai"), "http://127.0.0.1:8080/v1", Some(OPENAI.protocol)),
            (openai, Some("gemini"), "http://127.0.0.1:8080/v1", Some(GEMINI.protocol)),
            (openai, Some("none"), "https://api.openai.com/v1", None),
            (Some(&ANTHROPIC), None, "https://api.anthropic.com", Some(ANTHROPIC.protocol)),
            (None, None, "https://api.openai.com/v1", None),
            (openai, None, "not a url", None),
        ];
        for (declared, chosen, url, want) in cases {
            assert_eq!(named(applying(declared, chosen, url)), want, "{chosen:?} {url}");
        }
    }

    #[test]
    fn names_at_and_past_each_length_limit() {
        for (limits, max) in [(OPENAI, 64), (ANTHROPIC, 128), (GEMINI, 128)] {
            for len in [1, max - 1, max, max + 1, 2 * max] {
                let n = name('a', len);
                assert_eq!(
                    limits.names.check(&n).is_some(),
                    len > max,
                    "{}: a {len}-character name",
                    limits.protocol
                );
            }
            assert!(limits.names.check("").is_some(), "{}: an empty name", limits.protocol);
        }
    }

    #[test]
    fn characters_each_pattern_refuses_or_accepts() {
        // (name, OpenAI, Anthropic, Gemini): accepted?
        let cases = [
            ("get_weather", true, true, true),
            ("get-weather", true, true, true),
            ("Get_Weather2", true, true, true),
            ("9lives", true, true, false),
            ("-dash_first", true, true, false),
            ("_underscore", true, true, true),
            ("files.read", false, false, true),
            ("ns:tool", false, false, true),
            ("has space", false, false, false),
            ("slash/tool", false, false, false),
            ("ünïcode", false, false, false),
            ("tab\tname", false, false, false),
        ];
        for (n, openai, anthropic, gemini) in cases {
            assert_eq!(OPENAI.names.check(n).is_none(), openai, "OpenAI: `{n}`");
            assert_eq!(ANTHROPIC.names.check(n).is_none(), anthropic, "Anthropic: `{n}`");
            assert_eq!(GEMINI.names.check(n).is_none(), gemini, "Gemini: `{n}`");
        }
        let b = OPENAI.check_tools(["ok", "a b", "c/d", "e.f", "g h"]);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].kind, LimitKind::ToolName);
        assert!(
            b[0].what.starts_with("4 tool name(s)") && b[0].what.ends_with("and 1 more"),
            "{}",
            b[0].what
        );
    }

    #[test]
    fn context_sizes_around_the_estimate() {
        for (estimate, window, over) in [
            (13_216, 8_192, true),
            (13_216, 13_216, false),
            (13_217, 13_216, true),
            (0, 1, false),
            (16_384, 16_384, false),
        ] {
            let b = check_context(estimate, window);
            assert_eq!(b.is_some(), over, "{estimate} tokens in {window}");
            if let Some(b) = b {
                assert_eq!(b.kind, LimitKind::Context);
                assert!(
                    b.what.contains(&estimate.to_string()) && b.what.contains(&window.to_string())
                );
            }
        }
    }

    #[test]
    fn providers_refusals_are_read_as_their_limit() {
        let cases = [
            // llama.cpp's server (tools/server/utils.hpp, format_error_response).
            (
                400,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":13216,"n_ctx":8192}}"#,
                Some(LimitKind::Context),
            ),
            // OpenAI.
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                Some(LimitKind::Context),
            ),
            (
                400,
                r#"{"error":{"message":"Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 150 instead.","type":"invalid_request_error","param":"tools","code":"array_above_max_length"}}"#,
                Some(LimitKind::ToolCount),
            ),
            (
                400,
                r#"{"error":{"message":"Invalid 'tools[3].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.","type":"invalid_request_error","param":"tools[3].function.name","code":"invalid_value"}}"#,
                Some(LimitKind::ToolName),
            ),
            // Anthropic.
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
                Some(LimitKind::Context),
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"}}"#,
                Some(LimitKind::ToolName),
            ),
            // Not limits: other client errors, and the same words from a server that failed.
            (
                400,
                r#"{"error":{"message":"Invalid value for 'temperature'","code":"invalid_value"}}"#,
                None,
            ),
            (401, r#"{"error":{"code":"context_length_exceeded"}}"#, None),
            (500, r#"{"error":{"type":"exceed_context_size_error"}}"#, None),
            (400, r#"{"error":{"code":"array_above_max_length","param":"messages"}}"#, None),
        ];
        for (status, body, want) in cases {
            assert_eq!(classify_http(status, body), want, "{status} {body}");
            let f = http_failure(status, body);
            assert_eq!(f.as_ref().and_then(kind_of), want, "{status} {body}");
            if let Some(f) = f {
                assert!(!f.retryable, "a limit is never retried");
            }
        }
        let stopped = serde_json::json!({"stop_reason": "model_context_window_exceeded"});
        assert_eq!(anthropic_stop(&stopped).as_ref().and_then(kind_of), Some(LimitKind::Context));
        assert!(anthropic_stop(&serde_json::json!({"stop_reason": "max_tokens"})).is_none());
    }
}
