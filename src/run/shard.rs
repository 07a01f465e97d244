//! `--shard i/n`: a stable split of a run's matrix over n machines.
//!
//! Trial ids are sorted and dealt round-robin: the trial at sorted position p belongs to shard
//! `p mod n + 1`. The split depends only on the set of trial ids (not on job order, thread count or
//! timing), and dealing round-robin spreads every cell over all shards so they finish together.
//! `toolpick merge` puts the shards back together ([`super::merge`]).

/// The shard type is part of the run directory's record (`run.json`'s `shard`); choosing trials is
/// the runner's, here.
pub use crate::record::meta::Shard;

impl Shard {
    /// Parse `i/n` with 1 ≤ i ≤ n.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("`{s}` is not i/n (e.g. 2/4)"))?;
        let parse =
            |x: &str| x.trim().parse::<usize>().map_err(|_| format!("`{s}` is not i/n (e.g. 2/4)"));
        let (index, count) = (parse(i)?, parse(n)?);
        if count == 0 || index == 0 || index > count {
            return Err(format!("`{s}`: need 1 ≤ i ≤ n"));
        }
        Ok(Shard { index, count })
    }

    /// For each id (in any order), whether it belongs to this shard.
    pub fn select(&self, ids: &[String]) -> Vec<bool> {
        let mut sorted: Vec<(&String, usize)> = ids.iter().zip(0..).collect();
        sorted.sort();
        let mut mine = vec![false; ids.len()];
        for (p, (_, i)) in sorted.into_iter().enumerate() {
            mine[i] = p % self.count + 1 == self.index;
        }
        mine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_ids_whatever_their_order() {
        let ids: Vec<String> = ["d", "a", "c", "e", "b"].map(String::from).to_vec();
        let picks: Vec<Vec<bool>> =
            (1..=2).map(|i| Shard { index: i, count: 2 }.select(&ids)).collect();
        // sorted a b c d e → shard 1 gets a c e, shard 2 gets b d
        assert_eq!(picks[0], vec![false, true, true, true, false]);
        assert_eq!(picks[1], vec![true, false, false, false, true]);
        let mut reversed = ids.clone();
        reversed.reverse();
        let r = Shard { index: 1, count: 2 }.select(&reversed);
        let chosen = |ids: &[String], m: &[bool]| -> Vec<String> {
            let mut v: Vec<String> =
                ids.iter().zip(m).filter(|(_, m)| **m).map(|(i, _)| i.clone()).collect();
            v.sort();
            v
        };
        assert_eq!(chosen(&reversed, &r), chosen(&ids, &picks[0]));
    }

    #[test]
    fn parse_checks_the_range() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert!(
            Shard::parse("0/4").is_err()
                && Shard::parse("5/4").is_err()
                && Shard::parse("1/0").is_err()
                && Shard::parse("x").is_err()
        );
    }
}
