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
}
