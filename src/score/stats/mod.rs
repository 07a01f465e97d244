//! Interval estimates. Statistics are computed here and only rendered by `report`.
//!
//! One file per kind of estimate; everything is re-exported here, so callers name `score::stats::X`:
//! - `rates`: a rate with its Wilson interval, pass@k and pass^k;
//! - `means`: intervals of a mean (seeded bootstrap, normal beyond a size);
//! - `binomial`: exact binomial tests (McNemar, Clopper–Pearson);
//! - `paired`: paired differences with one test for p-value and interval, and Holm's adjustment;
//! - `noise`: the noise floor of a cell from per-task flip rates;
//! - `agreement`: Cohen's κ.

mod agreement;
mod binomial;
mod means;
mod noise;
mod paired;
mod rates;

pub use agreement::cohen_kappa;
pub use binomial::{binomial_upper_tail, clopper_pearson, mcnemar_exact};
pub use means::{BOOTSTRAP_MAX_N, bootstrap_mean, mean_interval};
pub use noise::{NoiseFloor, Z80, noise_floor, task_flip_rate};
pub use paired::{PairedMethod, PairedTest, holm, paired_test};
pub use rates::{Diff, Rate, mean_over_tasks, pass_at_k, pass_hat_k, wilson};

/// z for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Significance level of every test here; the intervals are the matching 95 % ones.
pub const ALPHA: f64 = 0.05;

/// Equal to the precision the tests' hand-computed values are written to.
#[cfg(test)]
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 5e-5
}
