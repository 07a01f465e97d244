//! Intervals of a mean: the seeded percentile bootstrap, and the normal interval for large samples.

use super::Z95;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::stats::close;

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
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let v: Vec<f64> = (0..50).map(|i| (i % 7) as f64).collect();
        let (m, lo, hi) = bootstrap_mean(&v, 2000, 42);
        assert!(lo <= m && m <= hi && lo < hi);
        assert_eq!(bootstrap_mean(&v, 2000, 42), (m, lo, hi), "same seed, same interval");
    }
}
