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

/// `a − b` with Newcombe's hybrid score interval (method 10, from the two Wilson intervals). It treats
/// the samples as independent; for the same tasks under two variants (positively correlated) it is
/// conservative — wider than a paired interval.
pub fn newcombe_diff(a: &Rate, b: &Rate) -> Diff {
    if a.n == 0 || b.n == 0 {
        return Diff { diff: f64::NAN, low: -1.0, high: 1.0 };
    }
    let d = a.rate - b.rate;
    let low = d - ((a.rate - a.low).powi(2) + (b.high - b.rate).powi(2)).sqrt();
    let high = d + ((a.high - a.rate).powi(2) + (b.rate - b.low).powi(2)).sqrt();
    Diff { diff: d, low: low.max(-1.0), high: high.min(1.0) }
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

/// Paired 95 % interval of mean(a − b) over the same tasks (per-task success rates): a bootstrap of the
/// differences ([`mean_interval`]).
pub fn paired_bootstrap_diff(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> (f64, f64, f64) {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    mean_interval(&diffs, resamples, seed)
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
pub fn mean_over_tasks(per_task: &[(u64, u64)], k: u64, estimator: fn(u64, u64, u64) -> Option<f64>) -> Option<f64> {
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
        assert!(close(mean_over_tasks(&[(3, 1), (3, 3), (1, 1)], 2, pass_at_k).unwrap(), 5.0 / 6.0));
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
    fn newcombe_matches_hand_computed_values() {
        // Newcombe (1998), example (a): 56/70 vs 48/80 → d = 0.2000, 95 % CI [0.0524, 0.3339].
        let d = newcombe_diff(&wilson(56, 70), &wilson(48, 80));
        assert!(close(d.diff, 0.2));
        assert!((d.low - 0.0524).abs() < 5e-4, "{}", d.low);
        assert!((d.high - 0.3339).abs() < 5e-4, "{}", d.high);
        assert!(newcombe_diff(&wilson(1, 0), &wilson(1, 2)).diff.is_nan());
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
        let (d, dlo, dhi) = paired_bootstrap_diff(&[1.0, 1.0, 1.0, 0.0], &[0.0, 0.0, 1.0, 0.0], 2000, 1);
        assert!(close(d, 0.5));
        assert!((0.0..0.5).contains(&dlo) && dhi > 0.5 && dhi <= 1.0, "diffs are 0 or 1: {dlo} {dhi}");
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
        assert!((hi - k - 1.959_963_984_540_054 * 0.129_614_813_968_157_2).abs() < 1e-9, "{lo} {hi}");
        assert_eq!(cohen_kappa([[10, 0], [0, 10]]).map(|k| k.0), Some(1.0));
        assert_eq!(cohen_kappa([[7, 0], [0, 0]]), None, "one answer throughout: undefined");
        assert_eq!(cohen_kappa([[0, 0], [0, 0]]), None);
    }
}
