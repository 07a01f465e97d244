//! The noise floor of a cell: how far two single runs of the same configuration differ by chance,
//! from each task's flip rate over repeated trials.

use serde::{Deserialize, Serialize};

use super::Z95;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::stats::close;

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
}
