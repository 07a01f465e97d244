//! A gate's verdict on one subject: what `crate::gate` decides and `crate::compare::render` shows.

use serde::Serialize;

/// One gate applied to one subject (the gates themselves are in `crate::gate`, which judges cells and
/// comparisons; the verdict is defined here, below both, so the comparison report can show it).
#[derive(Debug, Clone, Serialize)]
pub struct GateResult {
    /// The flag, e.g. `--min-pass-rate`.
    pub gate: String,
    /// A cell key or `overall`.
    pub subject: String,
    /// The measured value (percent, or points of drop).
    pub value: f64,
    pub threshold: f64,
    pub passed: bool,
    /// Why, in a sentence.
    pub detail: String,
}
