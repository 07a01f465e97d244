//! Agreement of two raters beyond chance (Cohen's κ), as the judge's calibration reports it.

use super::Z95;

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

#[cfg(test)]
mod tests {
    use super::*;

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
