//! Serving-side failures that are the model's: an endpoint whose own tool-call parser gave up on what
//! the model wrote answers with an error (or a finish reason) instead of a message. That is the model's
//! malformed call, not an infrastructure failure: excluding it from the rates would drop a model's worst
//! answers from its score, and more of them for the layout that makes it fail loudest.
//!
//! [`TABLE`] is the one list of such answers (`docs/models.md`, "Serving-side parse failures", shows the same
//! table; a test checks it lists every entry). An answer that matches an entry becomes one
//! `malformed_call` attempt of the episode ([`crate::agent::run_episode`]) with the server's words kept
//! in the call record; it is never retried (a second request is a second sample of the model, and a
//! sample that happened to parse would hide the failure), never an infrastructure error and never
//! counted by the circuit breaker. Every other failure is what it always was.
//!
//! Matching is on the HTTP status and a marker the server writes in its error body (case-insensitive),
//! or on the finish reason of a successful response. A status alone never matches: a 500 or 400 without
//! the marker stays an infrastructure error.

use serde_json::Value;

/// What an entry is matched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// An HTTP error status in `low..=high` whose body contains the marker.
    Http { low: u16, high: u16 },
    /// A successful response whose `finish_reason` is the marker.
    FinishReason,
}

/// One serving-side answer that means "the model's output could not be parsed as a tool call".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Who answers this way.
    pub server: &'static str,
    pub signal: Signal,
    /// Text the server writes (in the error body, or as the finish reason), matched case-insensitively.
    pub marker: &'static str,
    /// What it means, for the documentation.
    pub means: &'static str,
}

/// Every serving-side answer toolpick reads as the model's malformed call.
pub const TABLE: [Entry; 6] = [
    Entry {
        server: "llama.cpp `llama-server`",
        signal: Signal::Http { low: 500, high: 500 },
        marker: "Failed to parse tool call arguments as JSON",
        means: "the arguments of a tool call the model wrote are not JSON (nlohmann `parse_error`)",
    },
    Entry {
        server: "llama.cpp `llama-server`",
        signal: Signal::Http { low: 500, high: 500 },
        marker: "Failed to parse input at pos",
        means: "the chat parser built from the model's template could not place what the model wrote (a fenced or half-written call)",
    },
    Entry {
        server: "Ollama",
        signal: Signal::Http { low: 500, high: 500 },
        marker: "error parsing tool call",
        means: "the model's tool call is not valid JSON (`raw='…', err=…`)",
    },
    Entry {
        server: "vLLM",
        signal: Signal::Http { low: 400, high: 599 },
        marker: "Error in extracting tool call from response",
        means: "the `--tool-call-parser` failed on the model's output (vLLM usually logs this and returns the text; builds and proxies that surface it answer with an error)",
    },
    Entry {
        server: "Groq (and providers with its error shape)",
        signal: Signal::Http { low: 400, high: 400 },
        marker: "tool_use_failed",
        means: "the model's function call could not be parsed (`failed_generation` holds what it wrote)",
    },
    Entry {
        server: "Gemini (`finishReason`, also through OpenAI-compatible gateways)",
        signal: Signal::FinishReason,
        marker: "MALFORMED_FUNCTION_CALL",
        means: "the model produced a function call that could not be parsed; the message holds no call",
    },
];

/// Longest server message kept in a call record, in characters.
pub const MESSAGE_MAX: usize = 300;

fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// The entry an HTTP error answer matches, if it is the model's parse failure.
pub fn classify_http(status: u16, body: &str) -> Option<&'static Entry> {
    TABLE.iter().find(|e| match e.signal {
        Signal::Http { low, high } => {
            (low..=high).contains(&status) && contains_ignoring_case(body, e.marker)
        }
        Signal::FinishReason => false,
    })
}

/// The entry a successful response's finish reason matches, if the model's call could not be parsed.
pub fn classify_finish(reason: &str) -> Option<&'static Entry> {
    TABLE
        .iter()
        .find(|e| e.signal == Signal::FinishReason && reason.trim().eq_ignore_ascii_case(e.marker))
}

/// The server's own words from an error body: `error.message` (OpenAI's shape) with Groq's
/// `error.failed_generation` after it, a plain `error` string (Ollama), or the body itself; on one line.
fn server_words(body: &str) -> String {
    let words = match serde_json::from_str::<Value>(body) {
        Ok(v) => match &v["error"] {
            Value::String(s) => s.clone(),
            Value::Object(e) => {
                let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
                match e.get("failed_generation").and_then(Value::as_str) {
                    Some(generated) => format!("{message} failed_generation: {generated}"),
                    None if message.is_empty() => body.to_string(),
                    None => message.to_string(),
                }
            }
            _ => body.to_string(),
        },
        Err(_) => body.to_string(),
    };
    words.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cut to [`MESSAGE_MAX`] characters, "…" marking a cut.
fn cut(text: String) -> String {
    if text.chars().count() <= MESSAGE_MAX {
        text
    } else {
        format!("{}…", text.chars().take(MESSAGE_MAX - 1).collect::<String>())
    }
}

/// What the call record keeps of an HTTP answer that matched `entry`: the server, the status and its
/// message, e.g. `llama.cpp \`llama-server\`, HTTP 500: Failed to parse tool call arguments as JSON: …`.
/// The body must already be redacted (the backend removes its key from everything an endpoint says).
pub fn describe_http(entry: &Entry, status: u16, body: &str) -> String {
    cut(format!("{}, HTTP {status}: {}", entry.server, server_words(body)))
}

/// What the call record keeps of a finish reason that matched `entry`.
pub fn describe_finish(entry: &Entry, reason: &str) -> String {
    cut(format!("{}, finish_reason {reason}", entry.server))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body each server writes for its entry (llama.cpp's is the one the issue quotes).
    fn body_of(e: &Entry) -> String {
        match e.marker {
            "Failed to parse tool call arguments as JSON" => r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 23: syntax error while parsing object - unexpected end of input; expected '}'","type":"server_error"}}"#.into(),
            "error parsing tool call" => r#"{"error":"error parsing tool call: raw='{\"city\": \"Pa', err=unexpected end of JSON input"}"#.into(),
            "tool_use_failed" => r#"{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=get_weather>{\"city\": \"Pa"}}"#.into(),
            m => format!(r#"{{"error":{{"message":"{m}: boom","type":"server_error"}}}}"#),
        }
    }

    #[test]
    fn every_http_entry_matches_its_body_in_any_case_and_only_at_its_status() {
        for e in TABLE.iter().filter(|e| matches!(e.signal, Signal::Http { .. })) {
            let Signal::Http { low, high } = e.signal else { unreachable!() };
            let body = body_of(e);
            for status in [low, high] {
                assert_eq!(
                    classify_http(status, &body).map(|m| m.marker),
                    Some(e.marker),
                    "{} at {status}",
                    e.marker
                );
                assert!(
                    classify_http(status, &body.to_uppercase()).is_some(),
                    "{}: case does not matter",
                    e.marker
                );
            }
            for status in
                [low - 1, high + 1, 200, 429, 503].into_iter().filter(|s| !(low..=high).contains(s))
            {
                assert_eq!(
                    classify_http(status, &body),
                    None,
                    "{} must not match HTTP {status}",
                    e.marker
                );
            }
        }
    }

    #[test]
    fn a_status_without_a_marker_stays_an_infrastructure_error() {
        for body in [
            "",
            "internal error",
            r#"{"error":{"code":500,"message":"failed to load model","type":"server_error"}}"#,
            "Failed to parse tools: type must be string",
        ] {
            for status in [400, 404, 500, 502, 503] {
                assert_eq!(classify_http(status, body), None, "HTTP {status}: {body}");
            }
        }
        assert_eq!(classify_finish("stop"), None);
        assert_eq!(classify_finish("length"), None);
    }

    #[test]
    fn the_record_keeps_the_servers_words_on_one_cut_line() {
        let llama = &TABLE[0];
        let d = describe_http(llama, 500, &body_of(llama));
        assert!(d.starts_with("llama.cpp `llama-server`, HTTP 500: Failed to parse tool call arguments as JSON: [json.exception.parse_error.101]"), "{d}");
        let groq = TABLE.iter().find(|e| e.marker == "tool_use_failed").unwrap();
        assert!(
            describe_http(groq, 400, &body_of(groq))
                .contains("failed_generation: <function=get_weather>")
        );
        let ollama = TABLE.iter().find(|e| e.server == "Ollama").unwrap();
        assert!(
            describe_http(ollama, 500, &body_of(ollama))
                .ends_with("err=unexpected end of JSON input")
        );
        let long = format!("Failed to parse input at pos 0: {}\n{}", "x".repeat(1000), "y");
        let d = describe_http(&TABLE[1], 500, &long);
        assert_eq!(d.chars().count(), MESSAGE_MAX);
        assert!(d.ends_with('…') && !d.contains('\n'));
        let gemini = classify_finish("malformed_function_call").expect("any case");
        assert_eq!(
            describe_finish(gemini, "MALFORMED_FUNCTION_CALL"),
            "Gemini (`finishReason`, also through OpenAI-compatible gateways), finish_reason MALFORMED_FUNCTION_CALL"
        );
    }
}
