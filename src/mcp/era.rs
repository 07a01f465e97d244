//! The two MCP protocol eras toolpick speaks, as client and as server, and how the client picks one.
//!
//! - **2025-11-25** (and the revisions before it): the `initialize` handshake opens a session;
//!   the server asks the client for input (elicitation, sampling) with requests of its own.
//! - **2026-07-28**: stateless. No handshake: the client probes `server/discover`, then every
//!   request carries `_meta` `io.modelcontextprotocol/protocolVersion`, `…/clientInfo` and
//!   `…/clientCapabilities` (over HTTP the `MCP-Protocol-Version` header too); a server that needs
//!   input answers a call with an `input_required` result (`inputRequests`, `requestState`) and the
//!   client sends the call again with its answers (multi round-trip requests, MRTR).
//!
//! The client follows the 2026-07-28 specification's backward-compatibility rule
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions>):
//! probe with `server/discover` first; a JSON-RPC error that is not one of the new era's own
//! refusals (a legacy server answers −32601 "Method not found"), or no answer within rmcp's 10 s
//! probe limit, means a legacy server, and the `initialize` handshake follows on the same
//! connection. rmcp 3.11 implements that rule ([`rmcp::service::ClientLifecycleMode::Auto`]); this
//! module chooses its settings, so the choice reads in one place.

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;

/// The stateless revision, tried first.
pub const STATELESS: &str = "2026-07-28";
/// The newest revision with the `initialize` handshake, the fallback.
pub const HANDSHAKE: &str = "2025-11-25";

/// `input_required` rounds one `tools/call` may take. Each round's questions go to the same
/// responder as a legacy server's own requests, which refuses them past the trial's cap (16 in a
/// live run), so a server that keeps asking is stopped there first; this bound only ends a server
/// that keeps answering `input_required` without asking anything.
pub const MAX_INPUT_ROUNDS: usize = 20;

/// How a client session starts: `server/discover` for 2026-07-28, else `initialize` with 2025-11-25.
pub fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// Whether `version` (as negotiated) is of the stateless era: 2026-07-28 or a later revision.
/// Versions are dates, so they compare as text; anything not date-shaped counts as legacy.
pub fn is_stateless(version: &str) -> bool {
    let date_shaped = version.len() == 10
        && version
            .bytes()
            .enumerate()
            .all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    date_shaped && version >= STATELESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dates_from_the_stateless_revision_on_are_stateless() {
        assert!(is_stateless("2026-07-28"));
        assert!(is_stateless("2027-01-01"));
        assert!(!is_stateless("2025-11-25"));
        assert!(!is_stateless("2024-11-05"));
        // Text that sorts after the date but is not one is not taken for a newer revision.
        assert!(!is_stateless("zzz"));
        assert!(!is_stateless("2026-07-28x"));
        assert!(!is_stateless(""));
    }

    #[test]
    fn the_client_prefers_the_stateless_revision_and_falls_back_to_the_handshake() {
        let ClientLifecycleMode::Auto { preferred_versions, legacy_version } = lifecycle() else {
            panic!("the client must probe server/discover and fall back")
        };
        assert_eq!(preferred_versions, vec![ProtocolVersion::V_2026_07_28]);
        assert_eq!(legacy_version.map(|v| v.to_string()), Some(HANDSHAKE.to_string()));
        assert_eq!(ProtocolVersion::V_2026_07_28.to_string(), STATELESS);
    }
}
