//! Scoring: pure functions from trial records to per-trial scores and summary statistics.
//!
//! - [`declared`]: what a tool declares about its parameters (types, required), kept in the trial;
//! - [`matcher`]: does a call satisfy an expected call (BFCL AST rules, fixed);
//! - [`metrics`]: pass, selection, abstention and the error type of one trial;
//! - [`stats`]: intervals for rates (Wilson).
//!
//! Nothing here reads files or renders anything, so a run can be re-scored at any time.

pub mod declared;
pub mod diagnostics;
pub mod matcher;
pub mod metrics;
pub mod stats;

pub use matcher::ErrorType;
pub use metrics::{TrialScore, score_trial};
