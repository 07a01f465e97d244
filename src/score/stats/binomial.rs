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
    UpperTail::new(n, k).at(pi)
}

/// `P(X ≥ k)` for X ~ Binomial(n, π) at many π (the Clopper–Pearson bisection asks for ~60): the
/// π-independent log coefficients — ln C(n, k) and each term's step ln((n − i + 1) / i) — are computed
/// once, not on every step, and the terms past the mode that are too small to change the sum are never
/// computed. The arithmetic is otherwise the same, term by term and in the same order, so every tail is
/// bit-identical to summing all n − k + 1 terms.
struct UpperTail {
    n: u64,
    k: u64,
    ln_choose_k: f64,
    /// `steps[j]` = ln(n − i + 1) − ln(i) for i = k + 1 + j, filled as far as a tail has needed.
    steps: std::cell::RefCell<Vec<f64>>,
}

/// A term this far (in log space) below the largest is `exp` = 0 exactly (`exp` underflows below about
/// −745.1), so adding it changes nothing; the margin covers rounding in the running log term.
const NEGLIGIBLE: f64 = 750.0;

impl UpperTail {
    fn new(n: u64, k: u64) -> UpperTail {
        let ln_choose_k = if k == 0 || k > n {
            0.0
        } else {
            (1..=k).map(|i| ((n - k + i) as f64).ln() - (i as f64).ln()).sum()
        };
        UpperTail { n, k, ln_choose_k, steps: Default::default() }
    }

    fn at(&self, pi: f64) -> f64 {
        let (n, k) = (self.n, self.k);
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
        let mut steps = self.steps.borrow_mut();
        // ln C(n, k) π^k (1 − π)^(n − k), then each further term from the one before it.
        let mut ln_term = self.ln_choose_k + k as f64 * ln_p + (n - k) as f64 * ln_q;
        let mut terms = Vec::with_capacity(64);
        terms.push(ln_term);
        let mut top = ln_term;
        for i in (k + 1)..=n {
            let j = (i - k - 1) as usize;
            if j == steps.len() {
                steps.push(((n - i + 1) as f64).ln() - (i as f64).ln());
            }
            ln_term += steps[j] + ln_p - ln_q;
            // The terms rise to the mode, then fall: a term below an earlier one is past the mode, so
            // once one is negligible against the largest, so is every one after it.
            if ln_term < top - NEGLIGIBLE {
                break;
            }
            top = top.max(ln_term);
            terms.push(ln_term);
        }
        (top.exp() * terms.iter().map(|t| (t - top).exp()).sum::<f64>()).min(1.0)
    }
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
    let low = if k == 0 {
        0.0
    } else {
        let tail = UpperTail::new(n, k);
        solve(&|pi| tail.at(pi))
    };
    // P(X ≤ k | π) = P(n − X ≥ n − k | 1 − π): the lower bound of the failures, mirrored.
    let high = if k == n {
        1.0
    } else {
        let tail = UpperTail::new(n, n - k);
        1.0 - solve(&|q| tail.at(q))
    };
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
    fn upper_tails_match_exact_sums() {
        // n = 10, π = ½: P(X ≥ 3) = (1024 − 1 − 10 − 45) / 1024, P(X ≥ 9) = 11 / 1024.
        assert!((binomial_upper_tail(10, 3, 0.5) - 968.0 / 1024.0).abs() < 1e-15);
        assert!((binomial_upper_tail(10, 9, 0.5) - 11.0 / 1024.0).abs() < 1e-15);
        // n = 4, π = 0.1: P(X ≥ 2) = 6·0.01·0.81 + 4·0.001·0.9 + 0.0001 = 0.0523.
        assert!((binomial_upper_tail(4, 2, 0.1) - 0.0523).abs() < 1e-15);
        assert_eq!(binomial_upper_tail(4, 0, 0.3), 1.0);
        assert_eq!(binomial_upper_tail(4, 5, 0.3), 0.0);
    }

    #[test]
    fn a_large_tail_and_its_mirror_add_up_to_one() {
        // P(X ≥ k | π) + P(X ≥ n − k + 1 | 1 − π) = P(X ≥ k) + P(X ≤ k − 1) = 1: the terms left out as
        // negligible (most of the 100 001 here) must not be ones that count, on either side of the
        // mode, asked in any order of π (the coefficients are kept between calls).
        let n = 100_000;
        let (up, down) = (UpperTail::new(n, 50_100), UpperTail::new(n, n - 50_100 + 1));
        for pi in [0.5, 0.49, 0.501, 0.3, 0.7, 0.5005] {
            let total = up.at(pi) + down.at(1.0 - pi);
            assert!((total - 1.0).abs() < 1e-9, "π = {pi}: {total}");
            assert_eq!(up.at(pi), binomial_upper_tail(n, 50_100, pi), "kept coefficients agree");
        }
        assert!(up.at(0.3) < 1e-300 && up.at(0.7) > 1.0 - 1e-9);
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
