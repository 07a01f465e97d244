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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
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
    fn empty_cells_are_undefined_not_zero() {
        let r = wilson(0, 0);
        assert!(r.rate.is_nan());
        assert_eq!((r.low, r.high), (0.0, 1.0));
    }
}
