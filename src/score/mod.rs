//! Scoring: pure functions from trial records to per-trial scores and summary statistics.
//!
//! - [`declared`]: what a tool declares about its parameters (types, required), kept in the trial;
//! - [`matcher`]: does a call satisfy an expected call (BFCL AST rules, fixed);
//! - [`metrics`]: pass, selection, abstention and the error type of one trial;
//! - [`live`]: the execution, final-state and interaction checks of a live run;
//! - [`stats`]: intervals for rates (Wilson).
//!
//! Nothing here reads files or renders anything, so a run can be re-scored at any time.

/// Moved to the trial record (it is stored in every trial); kept here under its old name.
pub use crate::record::declared;
pub mod confusion;
pub mod diagnostics;
pub mod live;
pub mod matcher;
pub mod metrics;
pub mod stats;

pub use crate::record::ErrorType;
pub use metrics::{TrialScore, score_trial};

use crate::record::Trial;
use metrics::Safety;

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
