//! A provider's limit, as a trial records it: the request was refused (or cut off) because of what it
//! presented — too many tools, a tool name the provider does not accept, a prompt larger than the
//! model's context window — so the model was never really asked. It is neither a model failure nor an
//! infrastructure error: the trial stops with [`super::StopReason::ProviderLimit`], keeps the kind and
//! the provider's words here, and is counted beside the rates (`excluded_provider_limit`), not in them.
//!
//! The backends return a [`LimitHit`] as their error; the episode loop recognises it by type.

use serde::{Deserialize, Serialize};

/// Which limit a provider enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// More tools than the protocol accepts in one request (OpenAI: 128).
    ToolCount,
    /// A tool name the protocol does not accept (length or characters).
    ToolName,
    /// The prompt does not fit the model's context window.
    Context,
}

impl LimitKind {
    pub const ALL: [LimitKind; 3] = [LimitKind::ToolCount, LimitKind::ToolName, LimitKind::Context];

    /// The name the trial file writes (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::ToolCount => "tool_count",
            LimitKind::ToolName => "tool_name",
            LimitKind::Context => "context",
        }
    }
}

/// One refusal for a limit: its kind and what the provider said (redacted, one line, cut short).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitHit {
    pub kind: LimitKind,
    pub message: String,
}

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "provider_limit ({}): {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for LimitHit {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_written_by_their_serde_names() {
        for k in LimitKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str(), "{k:?}");
            assert_eq!(serde_json::from_value::<LimitKind>(k.as_str().into()).unwrap(), k);
        }
    }

    #[test]
    fn a_hit_survives_an_anyhow_error_and_is_found_by_type() {
        let hit = LimitHit { kind: LimitKind::Context, message: "HTTP 400: too long".into() };
        let e = anyhow::Error::new(hit.clone()).context("turn 1");
        assert_eq!(e.downcast_ref::<LimitHit>(), Some(&hit));
        assert!(anyhow::anyhow!("connection: refused").downcast_ref::<LimitHit>().is_none());
    }

    /// A record as the writer writes it, without a provider limit (`{STOP}` and `{EXTRA}` filled in).
    const RECORD: &str = concat!(
        r#"{"trial_id":"d/good/flat/m/t1#0","dataset":"d","catalog":"c","variant":"good","#,
        r#""layout":"flat","backend":"m","task_id":"t1","trial":0,"matrix_index":0,"seed":7,"#,
        r#""kind":"single","category":"code","tags":[],"query":"Get repo x","#,
        r#""expected":[{"tool":"s/code/get_repo","arguments":{"name":["x"]}}],"expected_destructive":false,"#,
        r#""calls":[],"steps":0,"stop_reason":"{STOP}",{EXTRA}"#,
        r#""tokens":{"definitions_upfront":10,"tool_context_total":0,"peak_context":10},"#,
        r#""usage":{"prompt_tokens":0,"completion_tokens":0,"cached_tokens":0},"#,
        r#""score":{"pass":false,"selection_correct":false,"abstention_correct":false,"safety_violation":false,"scorer":2}}"#,
    );

    fn record(stop: &str, extra: &str) -> String {
        RECORD.replace("{STOP}", stop).replace("{EXTRA}", extra)
    }

    #[test]
    fn older_records_read_and_rewrite_byte_identical_and_new_ones_keep_their_kind() {
        let old = record("backend_error", r#""error":"connection after 5 attempt(s): refused","#);
        let trial: crate::record::Trial = serde_json::from_str(&old).unwrap();
        assert_eq!(trial.provider_limit, None);
        assert_eq!(serde_json::to_string(&trial).unwrap(), old, "re-written unchanged");
        let new = record(
            "provider_limit",
            r#""provider_limit":{"kind":"tool_count","message":"HTTP 400: array_above_max_length"},"#,
        );
        let trial: crate::record::Trial = serde_json::from_str(&new).unwrap();
        assert_eq!(trial.stop_reason, crate::record::StopReason::ProviderLimit);
        assert_eq!(trial.provider_limit.as_ref().map(|h| h.kind), Some(LimitKind::ToolCount));
        assert!(trial.is_error(), "in no rate");
        assert_eq!(serde_json::to_string(&trial).unwrap(), new);
    }
}
