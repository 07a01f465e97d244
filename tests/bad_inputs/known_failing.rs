//! The generated cases that fail on this branch, by id, grouped by the defect class they show and the
//! branch fixing it. `tests/bad_inputs.rs` fails on a failing case missing from this list and on a
//! listed case that passes: add a class's cases while its fix is on another branch, remove them when
//! the fix is merged. Empty: every generated case passes.

pub const KNOWN_FAILING: &[&str] = &[];
