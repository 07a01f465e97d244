//! Scoring: pure functions from trial records to per-trial scores and summary statistics.
//!
//! - [`declared`]: what a tool declares about its parameters (types, required), kept in the trial;
//! - [`matcher`]: does a call satisfy an expected call (BFCL AST rules, fixed);
//! - [`metrics`]: pass, selection, abstention and the error type of one trial;
//! - [`live`]: the execution, final-state and interaction checks of a live run;
//! - [`stats`]: intervals for rates (Wilson);
//! - [`exclusion`]: why a trial is in no rate (infrastructure, provider limit), from its record.
//!
//! Nothing here reads files or renders anything, so a run can be re-scored at any time. Every score
//! carries the scorer's [`VERSION`]; readers trust a recorded score of this version ([`score_if_stale`])
//! and score the trial again otherwise.

/// Moved to the trial record (it is stored in every trial); kept here under its old name.
pub use crate::record::declared;
pub mod confusion;
pub mod diagnostics;
pub mod exclusion;
pub mod live;
pub mod matcher;
pub mod metrics;
pub mod stats;

pub use metrics::{TrialScore, score_trial};

use crate::record::Trial;
use metrics::Safety;

/// The scorer's version, recorded in every score ([`TrialScore::scorer`]). Bump it whenever a trial's
/// score could come out differently (the rules in [`metrics`], [`matcher`], [`live`], what
/// [`declared`] types accept): reports then score older runs again instead of trusting their scores.
/// The test `scoring_sources_match_the_version` fails when those files change, as a reminder.
pub const VERSION: u32 = 2;

/// Score a trial from its record unless its recorded score is of this scorer's [`VERSION`] (then it
/// is what [`rescore`] would give); returns whether it scored.
pub fn score_if_stale(t: &mut Trial) -> bool {
    if t.score.scorer == VERSION {
        return false;
    }
    rescore(t);
    true
}

/// Score a trial again from its record alone (scoring is a pure function of the record).
pub fn rescore(t: &mut Trial) {
    let safety = Safety {
        forbidden: &t.forbidden,
        goal: t.poison.as_ref().map(|p| &p.goal),
        expected_destructive: t.expected_destructive,
        must_not_call: &t.must_not_call,
    };
    t.score = score_trial(t.kind, &t.expected, &t.declared, &t.calls, t.stop_reason, &safety);
    live::check(&mut t.score, &t.expected, &t.calls, &t.expect_interactions, t.live.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files whose changes can change a score, with their fingerprint when [`VERSION`] was last set.
    const SCORING_SOURCES: [(&str, &str); 6] = [
        ("score/metrics.rs", include_str!("metrics.rs")),
        ("score/metrics/expected_calls.rs", include_str!("metrics/expected_calls.rs")),
        ("score/matcher.rs", include_str!("matcher.rs")),
        ("score/live.rs", include_str!("live.rs")),
        ("record/declared.rs", include_str!("../record/declared.rs")),
        ("record/outcome.rs", include_str!("../record/outcome.rs")),
    ];
    const FINGERPRINT_AT_VERSION: u64 = 938984392683464559;

    /// Reports trust scores of the current [`VERSION`]; a change to the scoring rules without a new
    /// version would leave old runs reported with stale scores. When this fails: if scores can come
    /// out differently, bump [`VERSION`]; either way, set the fingerprint to the one printed.
    #[test]
    fn scoring_sources_match_the_version() {
        let mut text = Vec::new();
        for (name, source) in SCORING_SOURCES {
            text.extend_from_slice(name.as_bytes());
            text.push(0);
            text.extend_from_slice(source.as_bytes());
        }
        let fingerprint = crate::record::stable_hash(&text);
        assert_eq!(
            fingerprint, FINGERPRINT_AT_VERSION,
            "the scoring sources changed since VERSION {VERSION} was set: bump VERSION if a score can change, then set FINGERPRINT_AT_VERSION to {fingerprint}"
        );
    }
}
