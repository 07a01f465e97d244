//! Interval estimates. Statistics are computed here and only rendered by `report`.

use serde::{Deserialize, Serialize};

/// A rate with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub successes: u64,
    pub n: u64,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// z for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

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

/// Significance level of every test here; the intervals are the matching 95 % ones.
pub const ALPHA: f64 = 0.05;

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

/// Percentile bootstrap 95 % interval of a mean, with a seeded generator (same seed, same interval).
pub fn bootstrap_mean(values: &[f64], resamples: usize, seed: u64) -> (f64, f64, f64) {
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};
    if values.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = values.len() as u64;
    let mut means: Vec<f64> = (0..resamples.max(1))
        .map(|_| (0..n).map(|_| values[(rng.next_u64() % n) as usize]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (means.len() - 1) as f64).round() as usize).min(means.len() - 1)];
    (mean, at(0.025), at(0.975))
}

/// Above this many values a mean's 95 % interval is the normal one, `mean ± z·s/√n`: the bootstrap
/// percentile interval converges to it (central limit theorem), and resampling a million values a
/// thousand times would be the slowest step of a large report.
pub const BOOTSTRAP_MAX_N: usize = 5_000;

/// 95 % interval of a mean: seeded percentile bootstrap up to [`BOOTSTRAP_MAX_N`] values, the normal
/// interval beyond.
pub fn mean_interval(values: &[f64], resamples: usize, seed: u64) -> (f64, f64, f64) {
    if values.len() <= BOOTSTRAP_MAX_N {
        return bootstrap_mean(values, resamples, seed);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    let half = Z95 * (var / n).sqrt();
    (mean, mean - half, mean + half)
}

/// Cohen's κ of two raters on a yes/no question, from the 2×2 table `[[both yes, first yes & second
/// no], [first no & second yes, both no]]`, with the large-sample 95 % interval
/// κ ± z·√(p_o(1 − p_o) / (n (1 − p_e)²)) (Cohen 1960), clamped to [−1, 1]. `None` when there are no
/// items, or when chance agreement is 1 (both raters gave one answer throughout: κ is undefined).
pub fn cohen_kappa(table: [[u64; 2]; 2]) -> Option<(f64, f64, f64)> {
    let n = (table[0][0] + table[0][1] + table[1][0] + table[1][1]) as f64;
    if n == 0.0 {
        return None;
    }
    let po = (table[0][0] + table[1][1]) as f64 / n;
    let first_yes = (table[0][0] + table[0][1]) as f64 / n;
    let second_yes = (table[0][0] + table[1][0]) as f64 / n;
    let pe = first_yes * second_yes + (1.0 - first_yes) * (1.0 - second_yes);
    if (1.0 - pe).abs() < 1e-12 {
        return None;
    }
    let kappa = (po - pe) / (1.0 - pe);
    let se = (po * (1.0 - po) / (n * (1.0 - pe) * (1.0 - pe))).sqrt();
    Some((kappa, (kappa - Z95 * se).max(-1.0), (kappa + Z95 * se).min(1.0)))
}

/// z for 80 % power (one-sided 0.8 quantile of the standard normal).
pub const Z80: f64 = 0.841_621_233_572_914;

/// One task's flip rate from repeated trials: the probability that two distinct trials of it disagree,
/// estimated without bias as `2c(n−c) / (n(n−1))` (the unbiased estimate of `2p(1−p)`). `None` for n < 2.
pub fn task_flip_rate(n: u64, c: u64) -> Option<f64> {
    if n < 2 || c > n {
        return None;
    }
    Some(2.0 * c as f64 * (n - c) as f64 / (n as f64 * (n as f64 - 1.0)))
}

/// How big a difference between two single runs of this cell means something.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoiseFloor {
    /// Tasks with at least two scored trials (the ones the estimate uses).
    pub tasks: u64,
    /// Mean per-task flip rate: the share of tasks expected to flip between two identical runs.
    pub flip_rate: f64,
    /// Half-width of the 95 % range of `rate(run 1) − rate(run 2)` for two single runs of the same
    /// configuration on these tasks: `z₀.₉₇₅ · √(flip / tasks)`. Deltas inside it are noise.
    pub noise_95: f64,
    /// Smallest true difference a paired comparison of two single runs detects with 80 % power at
    /// α = 0.05: `(z₀.₉₇₅ + z₀.₈) · √(flip / tasks)`.
    pub min_detectable: f64,
}

/// Noise floor from per-task `(trials, successes)`. Per task, the difference of two independent
/// single-trial outcomes has variance `2p(1−p)`, which is its flip probability, so the mean difference
/// over N tasks has standard deviation `√(mean flip / N)`. `None` when no task has two trials.
pub fn noise_floor(per_task: &[(u64, u64)]) -> Option<NoiseFloor> {
    let flips: Vec<f64> = per_task.iter().filter_map(|&(n, c)| task_flip_rate(n, c)).collect();
    if flips.is_empty() {
        return None;
    }
    let tasks = flips.len() as u64;
    let flip_rate = flips.iter().sum::<f64>() / tasks as f64;
    let sd = (flip_rate / tasks as f64).sqrt();
    Some(NoiseFloor { tasks, flip_rate, noise_95: Z95 * sd, min_detectable: (Z95 + Z80) * sd })
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

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn large_samples_use_the_normal_interval() {
        // 6 000 values alternating 0 and 1: mean 0.5, s² = 6000·0.25/5999, half = 1.96·√(s²/6000).
        let v: Vec<f64> = (0..6000).map(|i| (i % 2) as f64).collect();
        let (m, lo, hi) = mean_interval(&v, 1000, 1);
        let half = Z95 * (0.25f64 / 5999.0).sqrt();
        assert!(close(m, 0.5) && close(hi - m, half) && close(m - lo, half), "{lo} {m} {hi}");
        // At or below the threshold it is the bootstrap.
        let small: Vec<f64> = v[..BOOTSTRAP_MAX_N].to_vec();
        assert_eq!(mean_interval(&small, 200, 3), bootstrap_mean(&small, 200, 3));
    }

    #[test]
    fn flip_rate_and_noise_floor_match_hand_computed_values() {
        // 2 of 4: 2·2·2/(4·3) = 8/12; 0 of 4 and 4 of 4 never flip; one trial says nothing.
        assert!(close(task_flip_rate(4, 2).unwrap(), 8.0 / 12.0));
        assert_eq!(task_flip_rate(4, 0), Some(0.0));
        assert_eq!(task_flip_rate(4, 4), Some(0.0));
        assert_eq!(task_flip_rate(1, 1), None);
        // Tasks (4,2), (4,0), (2,1) and a single-trial task (ignored): flips 2/3, 0, 1 → mean 5/9 over 3.
        let nf = noise_floor(&[(4, 2), (4, 0), (2, 1), (1, 0)]).unwrap();
        assert_eq!(nf.tasks, 3);
        assert!(close(nf.flip_rate, 5.0 / 9.0));
        let sd = (5.0f64 / 27.0).sqrt(); // 0.430331
        assert!(close(nf.noise_95, 1.959964 * sd), "{}", nf.noise_95);
        assert!(close(nf.min_detectable, 2.801585 * sd), "{}", nf.min_detectable);
        assert_eq!(noise_floor(&[(1, 1), (1, 0)]), None);
        // A deterministic cell: every task always passes or always fails → zero floor.
        assert_eq!(noise_floor(&[(3, 3), (3, 0)]).unwrap().noise_95, 0.0);
    }

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
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let v: Vec<f64> = (0..50).map(|i| (i % 7) as f64).collect();
        let (m, lo, hi) = bootstrap_mean(&v, 2000, 42);
        assert!(lo <= m && m <= hi && lo < hi);
        assert_eq!(bootstrap_mean(&v, 2000, 42), (m, lo, hi), "same seed, same interval");
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

    #[test]
    fn empty_cells_are_undefined_not_zero() {
        let r = wilson(0, 0);
        assert!(r.rate.is_nan());
        assert_eq!((r.low, r.high), (0.0, 1.0));
    }

    #[test]
    fn cohen_kappa_matches_hand_computed_values() {
        // 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no (n = 50): p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5,
        // κ = 0.4, se = √(0.7·0.3 / (50·0.25)) = 0.1296.
        let (k, lo, hi) = cohen_kappa([[20, 5], [10, 15]]).unwrap();
        assert!((k - 0.4).abs() < 1e-12, "{k}");
        assert!(
            (hi - k - 1.959_963_984_540_054 * 0.129_614_813_968_157_2).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(cohen_kappa([[10, 0], [0, 10]]).map(|k| k.0), Some(1.0));
        assert_eq!(cohen_kappa([[7, 0], [0, 0]]), None, "one answer throughout: undefined");
        assert_eq!(cohen_kappa([[0, 0], [0, 0]]), None);
    }
}
