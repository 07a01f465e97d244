//! Rates and their intervals: a share of successes with its Wilson interval, and pass@k / pass^k over
//! repeated trials of a task.

use serde::{Deserialize, Serialize};

use super::Z95;

/// A rate with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub successes: u64,
    pub n: u64,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// Wilson score interval for `successes` out of `n` (95 %). For n = 0 the rate is undefined: NaN rate and
/// the uninformative interval [0, 1].
pub fn wilson(successes: u64, n: u64) -> Rate {
    if n == 0 {
        return Rate { successes, n, rate: f64::NAN, low: 0.0, high: 1.0 };
    }
    let nf = n as f64;
    let p = successes as f64 / nf;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / nf;
    let centre = (p + z2 / (2.0 * nf)) / denom;
    let half = Z95 * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
    Rate { successes, n, rate: p, low: (centre - half).max(0.0), high: (centre + half).min(1.0) }
}

/// A difference of two rates with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    pub diff: f64,
    pub low: f64,
    pub high: f64,
}

/// Unbiased pass@k for one task with `c` successes in `n` trials: `1 − C(n−c, k) / C(n, k)`, in the
/// numerically stable product form `1 − Π_{i=n−c+1}^{n} (1 − k/i)`. `None` (undefined, not zero) when
/// `n < k`.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if n < k || k == 0 {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    let prod: f64 = ((n - c + 1)..=n).map(|i| 1.0 - k as f64 / i as f64).product();
    Some(1.0 - prod)
}

/// pass^k for one task (all of k trials succeed): `C(c, k) / C(n, k) = Π_{i=0}^{k−1} (c−i)/(n−i)`.
/// `None` when `n < k`.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if n < k || k == 0 {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    Some((0..k).map(|i| (c - i) as f64 / (n - i) as f64).product())
}

/// Mean of per-task pass@k (or pass^k) over the tasks where it is defined; `None` when it is defined for
/// none (every task has fewer than k scored trials).
pub fn mean_over_tasks(
    per_task: &[(u64, u64)],
    k: u64,
    estimator: fn(u64, u64, u64) -> Option<f64>,
) -> Option<f64> {
    let values: Vec<f64> = per_task.iter().filter_map(|&(n, c)| estimator(n, c, k)).collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::stats::close;

    #[test]
    fn task_means_skip_tasks_with_too_few_trials() {
        // pass@2 of (3,1) = 1 − C(2,2)/C(3,2) = 2/3; of (3,3) = 1; (1,1) undefined → mean 5/6.
        assert!(close(
            mean_over_tasks(&[(3, 1), (3, 3), (1, 1)], 2, pass_at_k).unwrap(),
            5.0 / 6.0
        ));
        // pass^2 of (3,2) = C(2,2)/C(3,2) = 1/3; of (3,0) = 0 → 1/6.
        assert!(close(mean_over_tasks(&[(3, 2), (3, 0)], 2, pass_hat_k).unwrap(), 1.0 / 6.0));
        assert_eq!(mean_over_tasks(&[(1, 1)], 2, pass_at_k), None);
    }

    #[test]
    fn wilson_matches_hand_computed_values() {
        // 8/10: p=0.8, z²=3.8415; centre=(0.8+0.19207)/1.38415=0.71674; half=1.96*sqrt(0.016+0.0096)/1.38415=0.22649
        let r = wilson(8, 10);
        assert!(close(r.low, 0.49016), "{}", r.low);
        assert!(close(r.high, 0.94332), "{}", r.high);
        // 0/20: lower bound 0, upper = z²/n / (1+z²/n) = 0.19208/1.19208 = 0.16113
        let r = wilson(0, 20);
        assert_eq!(r.low, 0.0);
        assert!(close(r.high, 0.16113), "{}", r.high);
        // 20/20 mirrors it
        let r = wilson(20, 20);
        assert!(close(r.low, 1.0 - 0.16113));
        assert_eq!(r.high, 1.0);
    }

    #[test]
    fn pass_at_k_matches_the_combinatorial_form() {
        // n=5, c=2, k=2: 1 − C(3,2)/C(5,2) = 1 − 3/10 = 0.7
        assert!(close(pass_at_k(5, 2, 2).unwrap(), 0.7));
        // n=10, c=3, k=1 is the plain rate
        assert!(close(pass_at_k(10, 3, 1).unwrap(), 0.3));
        assert_eq!(pass_at_k(5, 4, 2), Some(1.0), "fewer failures than k: certain");
        assert_eq!(pass_at_k(5, 0, 2), Some(0.0));
        assert_eq!(pass_at_k(1, 1, 2), None, "undefined when n < k, not zero");
    }

    #[test]
    fn pass_hat_k_matches_the_combinatorial_form() {
        // n=5, c=3, k=2: C(3,2)/C(5,2) = 3/10
        assert!(close(pass_hat_k(5, 3, 2).unwrap(), 0.3));
        assert_eq!(pass_hat_k(5, 1, 2), Some(0.0));
        assert_eq!(pass_hat_k(4, 4, 4), Some(1.0));
        assert_eq!(pass_hat_k(2, 2, 3), None);
    }

    #[test]
    fn empty_cells_are_undefined_not_zero() {
        let r = wilson(0, 0);
        assert!(r.rate.is_nan());
        assert_eq!((r.low, r.high), (0.0, 1.0));
    }
}
