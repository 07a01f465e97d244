//! Exact tests on binomial counts: McNemar's test on discordant pairs and the Clopper–Pearson
//! interval that inverts the same tails.

use super::ALPHA;

/// McNemar's exact test on discordant pairs: `b` tasks passed only under A, `c` only under B.
/// Two-sided p-value `min(1, 2 · P(X ≤ min(b, c)))` for X ~ Binomial(b + c, 1/2).
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // Sum binomial probabilities in log space to stay exact enough for large n.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// `P(X ≥ k)` for X ~ Binomial(n, π), summed in log space (exact enough for large n).
pub fn binomial_upper_tail(n: u64, k: u64, pi: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || pi <= 0.0 {
        return 0.0;
    }
    if pi >= 1.0 {
        return 1.0;
    }
    let (ln_p, ln_q) = (pi.ln(), (1.0 - pi).ln());
    // ln C(n, k), then each further term from the one before it.
    let ln_choose_k: f64 = (1..=k).map(|i| ((n - k + i) as f64).ln() - (i as f64).ln()).sum();
    let mut ln_term = ln_choose_k + k as f64 * ln_p + (n - k) as f64 * ln_q;
    let mut terms = Vec::with_capacity((n - k + 1) as usize);
    terms.push(ln_term);
    for i in (k + 1)..=n {
        ln_term += ((n - i + 1) as f64).ln() - (i as f64).ln() + ln_p - ln_q;
        terms.push(ln_term);
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (top.exp() * terms.iter().map(|t| (t - top).exp()).sum::<f64>()).min(1.0)
}

/// Clopper–Pearson ("exact") 95 % interval of a binomial proportion, `k` successes of `n`: the π whose
/// one-sided tail probabilities are α/2. It inverts the same binomial tails as [`mcnemar_exact`], so for
/// McNemar's discordant counts the interval excludes ½ exactly when the test's p-value is below α.
/// `(0, 1)` when n = 0.
pub fn clopper_pearson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    // The lower bound solves P(X ≥ k | π) = α/2 (increasing in π); the upper, P(X ≤ k | π) = α/2.
    let solve = |f: &dyn Fn(f64) -> f64| {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if f(mid) < ALPHA / 2.0 { lo = mid } else { hi = mid }
        }
        0.5 * (lo + hi)
    };
    let low = if k == 0 { 0.0 } else { solve(&|pi| binomial_upper_tail(n, k, pi)) };
    // P(X ≤ k | π) = P(n − X ≥ n − k | 1 − π): the lower bound of the failures, mirrored.
    let high = if k == n { 1.0 } else { 1.0 - solve(&|q| binomial_upper_tail(n, n - k, q)) };
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::stats::close;

    #[test]
    fn mcnemar_exact_matches_hand_computed_values() {
        // b=1, c=9: 2 · (1 + 10) / 1024 = 0.021484375
        assert!(close(mcnemar_exact(1, 9), 0.021484375));
        assert!(close(mcnemar_exact(9, 1), 0.021484375), "symmetric");
        assert_eq!(mcnemar_exact(5, 5), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // b=0, c=6: 2 / 64 = 0.03125
        assert!(close(mcnemar_exact(0, 6), 0.03125));
    }

    #[test]
    fn clopper_pearson_matches_published_values() {
        // Closed forms at the ends: 0 of n → [0, 1 − 0.025^(1/n)], n of n → [0.025^(1/n), 1].
        let (lo, hi) = clopper_pearson(0, 10);
        assert_eq!(lo, 0.0);
        assert!((hi - (1.0 - 0.025f64.powf(0.1))).abs() < 1e-9, "{hi}");
        let (lo, hi) = clopper_pearson(10, 10);
        assert!((lo - 0.025f64.powf(0.1)).abs() < 1e-9 && hi == 1.0, "{lo}");
        // 5 of 10: [0.187086, 0.812914] (the textbook exact interval).
        let (lo, hi) = clopper_pearson(5, 10);
        assert!((lo - 0.187086).abs() < 1e-5 && (hi - 0.812914).abs() < 1e-5, "{lo} {hi}");
        // 3 of 20: [0.032071, 0.378927].
        let (lo, hi) = clopper_pearson(3, 20);
        assert!((lo - 0.032071).abs() < 1e-5 && (hi - 0.378927).abs() < 1e-5, "{lo} {hi}");
        assert_eq!(clopper_pearson(0, 0), (0.0, 1.0));
    }
}
