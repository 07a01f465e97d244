//! Paired differences over the same tasks: one test gives both the p-value and the 95 % interval
//! (McNemar's exact test, a seeded paired bootstrap, or the normal test), and Holm's adjustment
//! across a family of such tests.

use serde::{Deserialize, Serialize};

use super::binomial::{clopper_pearson, mcnemar_exact};
use super::means::BOOTSTRAP_MAX_N;
use super::{ALPHA, Z95};

/// Which test a paired difference's p-value and interval come from. Both always come from the same
/// one, so the 95 % interval excludes 0 exactly when p < [`ALPHA`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedMethod {
    /// Every per-task outcome is 0 or 1: McNemar's exact test on the discordant tasks, and the
    /// interval that inverts it ([`clopper_pearson`] on the tasks that changed, conditional on how many
    /// changed).
    McnemarExact,
    /// Per-task rates (several trials): a seeded paired bootstrap of the per-task differences, its
    /// percentile interval and the two-sided p-value read off the same resamples.
    Bootstrap,
    /// Per-task rates over more than [`BOOTSTRAP_MAX_N`] tasks: the normal interval of the mean
    /// difference and its z-test.
    Normal,
}

impl PairedMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            PairedMethod::McnemarExact => "mcnemar_exact",
            PairedMethod::Bootstrap => "paired_bootstrap",
            PairedMethod::Normal => "normal",
        }
    }
}

/// A paired difference `mean(b − a)` over the same tasks, tested: one metric of one cell in two
/// runs (`compare`, which serialises it in this field order), or of a variant against `good`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedTest {
    /// Tasks paired.
    pub tasks: u64,
    /// Mean per-task rate under A and under B over those tasks (NaN without tasks).
    pub a: f64,
    pub b: f64,
    /// `mean(b − a)` with its 95 % interval (NaN without tasks).
    pub diff: f64,
    pub low: f64,
    pub high: f64,
    /// Tasks better under A, tasks better under B (the discordant pairs).
    pub a_better: u64,
    pub b_better: u64,
    /// Two-sided p-value of "no difference" (1 without tasks), from `method`.
    pub p_value: f64,
    /// `p_value` Holm–Bonferroni adjusted across the family the caller tests together (a
    /// comparison's matched cells, per metric); equal to `p_value` until the caller adjusts it, and
    /// for a test that is its own family (the pooled `overall` row).
    pub p_adjusted: f64,
    pub method: PairedMethod,
}

impl PairedTest {
    /// Significant at `alpha`: some task paired and the Holm-adjusted p below `alpha` (unadjusted,
    /// the same as "the interval excludes 0" at [`ALPHA`]).
    pub fn significant(&self, alpha: f64) -> bool {
        self.tasks > 0 && self.p_adjusted < alpha
    }

    /// The interval excludes 0 (the same as raw p < [`ALPHA`]: one test gives both).
    pub fn interval_excludes_zero(&self) -> bool {
        self.tasks > 0 && (self.low > 0.0 || self.high < 0.0)
    }
}

/// Test `b − a` over paired per-task outcomes (same task order): McNemar's exact test and its inverted
/// interval when every outcome is 0 or 1, else the paired bootstrap (seeded; the normal interval beyond
/// [`BOOTSTRAP_MAX_N`] tasks). Tasks that did not change contribute zero; so when no task changed, the
/// difference and its interval are exactly 0 and p = 1.
pub fn paired_test(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> PairedTest {
    let tasks = a.len().min(b.len());
    let (a, b) = (&a[..tasks], &b[..tasks]);
    let a_better = a.iter().zip(b).filter(|(x, y)| x > y).count() as u64;
    let b_better = a.iter().zip(b).filter(|(x, y)| y > x).count() as u64;
    let n = tasks as f64;
    let average = |v: &[f64]| if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / n };
    let base = PairedTest {
        tasks: tasks as u64,
        a: average(a),
        b: average(b),
        diff: f64::NAN,
        low: f64::NAN,
        high: f64::NAN,
        a_better,
        b_better,
        p_value: 1.0,
        p_adjusted: 1.0,
        method: PairedMethod::McnemarExact,
    };
    if tasks == 0 {
        return base;
    }
    let binary = a.iter().chain(b).all(|x| *x == 0.0 || *x == 1.0);
    if binary {
        let changed = a_better + b_better;
        let (lo, hi) = clopper_pearson(b_better, changed);
        // The difference is (share of tasks that changed) × (2θ − 1), θ the share of changes in B's
        // favour. McNemar's test is conditional on the changes, so θ's exact interval decides the sign
        // of each end (the interval excludes 0 exactly when p < α). The share of tasks that changed is
        // uncertain too: each end is scaled by the end of its own exact interval that moves it outward,
        // which never changes its sign — so a one-directional change does not show an end equal to the
        // estimate (−13.0 [−13.0, −10.6] becomes an interval around −13.0).
        let (share_lo, share_hi) = clopper_pearson(changed, tasks as u64);
        let outward_low = |x: f64| if x < 0.0 { x * share_hi } else { x * share_lo };
        let outward_high = |x: f64| if x > 0.0 { x * share_hi } else { x * share_lo };
        let (low, high) = if changed == 0 {
            (0.0, 0.0)
        } else {
            (outward_low(2.0 * lo - 1.0), outward_high(2.0 * hi - 1.0))
        };
        let p = mcnemar_exact(a_better, b_better);
        return PairedTest {
            diff: (b_better as f64 - a_better as f64) / n,
            low,
            high,
            p_value: p,
            p_adjusted: p,
            ..base
        };
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let mean = diffs.iter().sum::<f64>() / n;
    if diffs.len() > BOOTSTRAP_MAX_N {
        let var = diffs.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / (n - 1.0);
        let se = (var / n).sqrt();
        if se == 0.0 {
            let p = if mean == 0.0 { 1.0 } else { 0.0 };
            return PairedTest {
                diff: mean,
                low: mean,
                high: mean,
                p_value: p,
                p_adjusted: p,
                method: PairedMethod::Normal,
                ..base
            };
        }
        let z = (mean / se).abs();
        let mut p = erfc(z / std::f64::consts::SQRT_2).min(1.0);
        // erfc is accurate to ~1e-7: within that of the boundary, let the interval (|z| against z₀.₉₇₅)
        // decide, so p and interval never disagree.
        if (z > Z95) != (p < ALPHA) {
            p = if z > Z95 { ALPHA - 1e-9 } else { ALPHA };
        }
        let (low, high) = (mean - Z95 * se, mean + Z95 * se);
        return PairedTest {
            diff: mean,
            low,
            high,
            p_value: p,
            p_adjusted: p,
            method: PairedMethod::Normal,
            ..base
        };
    }
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};
    let r = resamples.max(40);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let len = diffs.len() as u64;
    let mut means: Vec<f64> = (0..r)
        .map(|_| (0..len).map(|_| diffs[(rng.next_u64() % len) as usize]).sum::<f64>() / n)
        .collect();
    means.sort_by(f64::total_cmp);
    // Order statistic k = ⌈R/40⌉ − 1 from each end (the 2.5 % points): the lower end is above 0 exactly
    // when at most k resampled means are ≤ 0, i.e. when 2·#(≤ 0)/R < 0.05, which is the p-value below.
    let k = r.div_ceil(40) - 1;
    let (low, high) = (means[k], means[r - 1 - k]);
    let at_or_below = means.iter().filter(|m| **m <= 0.0).count();
    let at_or_above = means.iter().filter(|m| **m >= 0.0).count();
    let p = (2.0 * at_or_below.min(at_or_above) as f64 / r as f64).min(1.0);
    PairedTest {
        diff: mean,
        low,
        high,
        p_value: p,
        p_adjusted: p,
        method: PairedMethod::Bootstrap,
        ..base
    }
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, fractional error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Holm–Bonferroni adjusted p-values (step-down, controls the family-wise error rate): sorted
/// ascending, the i-th smallest of m becomes `max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎)`. NaN entries
/// are outside the family (m counts the others) and stay NaN.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]).then(i.cmp(&j)));
    let m = order.len();
    let mut out = vec![f64::NAN; p.len()];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::stats::bootstrap_mean;

    /// 0/1 outcomes of `n` tasks: the first `a_only` pass only under A, the next `b_only` only under B,
    /// the next `both` under both, the rest under neither.
    fn binary_pairs(n: usize, a_only: usize, b_only: usize, both: usize) -> (Vec<f64>, Vec<f64>) {
        let a = (0..n)
            .map(|i| {
                (i < a_only || (a_only + b_only..a_only + b_only + both).contains(&i)) as u8 as f64
            })
            .collect();
        let b =
            (0..n).map(|i| ((a_only..a_only + b_only + both).contains(&i)) as u8 as f64).collect();
        (a, b)
    }

    #[test]
    fn with_0_1_outcomes_the_interval_excludes_zero_exactly_when_mcnemar_is_significant() {
        // Every split of up to 60 discordant tasks among 80: the interval (inverting McNemar's exact
        // test) and its p-value never disagree, the estimate lies inside, and p is McNemar's.
        let mut checked = 0;
        for a_only in 0..=30 {
            for b_only in 0..=30 {
                let (a, b) = binary_pairs(80, a_only, b_only, 10);
                let t = paired_test(&a, &b, 200, 7);
                assert_eq!(t.method, PairedMethod::McnemarExact);
                assert_eq!((t.a_better, t.b_better), (a_only as u64, b_only as u64));
                assert!((t.diff - (b_only as f64 - a_only as f64) / 80.0).abs() < 1e-12);
                assert_eq!(t.p_value, mcnemar_exact(a_only as u64, b_only as u64));
                let excludes = t.low > 0.0 || t.high < 0.0;
                assert_eq!(
                    t.significant(ALPHA),
                    excludes,
                    "{a_only} vs {b_only}: p {} [{}, {}]",
                    t.p_value,
                    t.low,
                    t.high
                );
                assert!(
                    t.low <= t.diff && t.diff <= t.high,
                    "{a_only} vs {b_only}: {} [{}, {}]",
                    t.diff,
                    t.low,
                    t.high
                );
                // Some tasks changed but not all: the share that changed is uncertain, so neither end
                // sits on the estimate, even when every change went one way.
                if a_only + b_only > 0 {
                    assert!(
                        t.low < t.diff && t.diff < t.high,
                        "{a_only} vs {b_only}: {} [{}, {}]",
                        t.diff,
                        t.low,
                        t.high
                    );
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 31 * 31);
    }

    #[test]
    fn pairs_where_the_old_bootstrap_and_mcnemar_disagreed_now_agree() {
        // The old report paired a percentile bootstrap interval with McNemar's p: with few discordant
        // tasks among many, the bootstrap interval excludes 0 while McNemar says "not significant".
        // Generate such pairs and check that they exist and that the new test is consistent on each.
        let mut disagreed = 0;
        for n in [50usize, 100, 200, 400] {
            for b_only in 1..=8 {
                for a_only in 0..=1 {
                    let (a, b) = binary_pairs(n, a_only, b_only, n / 4);
                    let diffs: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
                    let (_, lo, hi) = bootstrap_mean(&diffs, 2000, n as u64);
                    let p = mcnemar_exact(a_only as u64, b_only as u64);
                    if (lo > 0.0 || hi < 0.0) != (p < ALPHA) {
                        disagreed += 1;
                    }
                    let t = paired_test(&a, &b, 2000, n as u64);
                    assert_eq!(
                        t.significant(ALPHA),
                        t.low > 0.0 || t.high < 0.0,
                        "n {n}, {a_only} vs {b_only}"
                    );
                }
            }
        }
        assert!(disagreed > 0, "the defect class is generated");
    }

    #[test]
    fn with_rates_the_bootstrap_interval_and_p_value_agree() {
        use rand_chacha::ChaCha8Rng;
        use rand_chacha::rand_core::{Rng, SeedableRng};
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut significant = 0;
        for case in 0..300u64 {
            // Per-task rates out of 3 trials, B shifted by a case-dependent amount.
            let n = 10 + (rng.next_u64() % 60) as usize;
            let shift = case % 7;
            let a: Vec<f64> = (0..n).map(|_| (rng.next_u64() % 4) as f64 / 3.0).collect();
            let b: Vec<f64> = a
                .iter()
                .map(|x| if rng.next_u64() % 10 < shift { (x + 1.0 / 3.0).min(1.0) } else { *x })
                .collect();
            let t = paired_test(&a, &b, 500, case);
            assert_eq!(t.method, PairedMethod::Bootstrap);
            assert_eq!(
                t.significant(ALPHA),
                t.low > 0.0 || t.high < 0.0,
                "case {case}: p {} [{}, {}]",
                t.p_value,
                t.low,
                t.high
            );
            assert_eq!(paired_test(&a, &b, 500, case), t, "seeded");
            significant += t.significant(ALPHA) as usize;
        }
        assert!(significant > 0 && significant < 300, "both outcomes occur: {significant}");
        // Nothing changed: exactly 0, interval [0, 0], p = 1, in every method.
        let rates: Vec<f64> = (0..40).map(|i| (i % 3) as f64 / 2.0).collect();
        let big: Vec<f64> = (0..BOOTSTRAP_MAX_N + 10).map(|i| (i % 3) as f64 / 2.0).collect();
        let (ones, _) = binary_pairs(40, 0, 0, 20);
        for v in [&rates, &big, &ones] {
            let t = paired_test(v, v, 300, 1);
            assert_eq!((t.diff, t.low, t.high, t.p_value), (0.0, 0.0, 0.0, 1.0), "{:?}", t.method);
        }
    }

    #[test]
    fn above_the_bootstrap_limit_rates_use_the_normal_test() {
        // 6 000 tasks; B is 1/3 better on every 10th: mean 1/30, s² from the 0/(1/3) mixture.
        let n = 6000;
        let a: Vec<f64> = (0..n).map(|i| ((i % 3) as f64) / 3.0).collect();
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, x)| if i % 10 == 0 { x + 1.0 / 3.0 } else { *x })
            .collect();
        let t = paired_test(&a, &b, 100, 1);
        assert_eq!(t.method, PairedMethod::Normal);
        let mean = 1.0 / 30.0;
        let var = (600.0 * (1.0f64 / 3.0 - mean).powi(2) + 5400.0 * mean * mean) / 5999.0;
        let se = (var / 6000.0).sqrt();
        assert!((t.diff - mean).abs() < 1e-12 && (t.high - t.diff - Z95 * se).abs() < 1e-12);
        // z ≈ 13.6: p far below α, and erfc at z₀.₉₇₅ gives 0.05.
        assert!(t.p_value < 1e-10 && t.significant(ALPHA));
        assert!((erfc(Z95 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-6);
        assert!((erfc(0.0) - 1.0).abs() < 1e-7 && (erfc(-1.0) - 1.842_700_79).abs() < 1e-6);
    }

    #[test]
    fn holm_matches_hand_computed_values() {
        // Sorted 0.005, 0.01, 0.03, 0.04 (m = 4): ×4 = 0.02, ×3 = 0.03, ×2 = 0.06, ×1 = 0.04 → 0.06 (monotone).
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        assert!(adj.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-12), "{adj:?}");
        // NaN is outside the family (m = 2 here), and adjusted values are capped at 1.
        let adj = holm(&[0.02, f64::NAN, 0.7]);
        assert!(
            (adj[0] - 0.04).abs() < 1e-12 && adj[1].is_nan() && (adj[2] - 0.7).abs() < 1e-12,
            "{adj:?}"
        );
        assert_eq!(holm(&[0.6, 0.6]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
        // Never below the raw p, never above m·p.
        let raw = [0.001, 0.2, 0.049, 0.5, 0.013];
        for (r, a) in raw.iter().zip(holm(&raw)) {
            assert!(a >= *r && a <= (5.0 * r).min(1.0) + 1e-12);
        }
    }
}
