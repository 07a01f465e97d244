//! Task subsets: run some of a dataset's tasks (`--tasks`, `--filter`, `--sample`, `--limit`, or the
//! same keys in the experiment file).
//!
//! The selection applies to every dataset of the run, before the matrix is built, in a fixed order:
//! task-id globs, then filters, then the seeded sample, then the limit. It is part of the run's matrix
//! (resuming with another selection is refused) and is recorded in `run.json` with the number of tasks
//! each dataset kept, so a subset run is never mistaken for a full one.
//!
//! - `tasks`: ids with `*` (any run of characters) and `?` (one character); a task is kept when any
//!   pattern matches its id.
//! - `filter`: `kind=…`, `category=…`, `tag=…`, exact values. Filters on different keys must all hold;
//!   several values of one key are alternatives (`kind=single --filter kind=multi` keeps both kinds).
//! - `sample N`: N tasks, stratified by kind with proportional allocation by largest remainder (each
//!   kind gets ⌊N·n_k/n⌋, the leftover seats go to the largest remainders, ties to the kind listed first
//!   in [`KINDS`]); within a kind the tasks with the smallest `stable_hash("<seed>|sample|<task id>")`,
//!   so the same seed keeps the same tasks. N at least the tasks left keeps them all.
//! - `limit N`: the first N tasks left, in dataset order.
//!
//! Every pattern and filter must match some task of some dataset (a typo is an error, not an empty or
//! silently smaller run), and a selection that keeps no task of a dataset is an error naming the step.

use crate::dataset::{Dataset, Kind, Task};
use crate::error::InputError;
use crate::layout::flat::stable_hash;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Task kinds in the order strata are listed (and sample ties broken).
pub const KINDS: [Kind; 6] =
    [Kind::Single, Kind::Multi, Kind::Parallel, Kind::Abstain, Kind::Refuse, Kind::Relevant];

/// Keys `--filter` accepts.
pub const FILTER_KEYS: [&str; 3] = ["kind", "category", "tag"];

/// The selection of tasks a run uses. Empty: every task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subset {
    /// Task-id globs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<String>,
    /// `key=value` filters (checked by [`Filter::parse`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filter: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// One `key=value` filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub key: &'static str,
    pub value: String,
}

impl Filter {
    /// Parse `key=value`; the error names the valid keys (and kinds).
    pub fn parse(s: &str) -> Result<Filter, String> {
        let Some((key, value)) = s.split_once('=') else {
            return Err(format!("`{s}` is not key=value; use {}=VALUE", FILTER_KEYS.join("|")));
        };
        let (key, value) = (key.trim(), value.trim());
        let Some(key) = FILTER_KEYS.iter().find(|k| **k == key) else {
            return Err(format!(
                "unknown filter key `{key}`; use one of {}",
                FILTER_KEYS.join(", ")
            ));
        };
        if value.is_empty() {
            return Err(format!("`{s}` has no value; use {key}=VALUE"));
        }
        if *key == "kind" && !KINDS.iter().any(|k| k.as_str() == value) {
            let kinds: Vec<&str> = KINDS.iter().map(|k| k.as_str()).collect();
            return Err(format!("unknown kind `{value}`; use one of {}", kinds.join(", ")));
        }
        Ok(Filter { key, value: value.to_string() })
    }

    fn matches(&self, t: &Task) -> bool {
        match self.key {
            "kind" => t.kind.as_str() == self.value,
            "category" => t.category == self.value,
            _ => t.tags.contains(&self.value),
        }
    }

    fn spelled(&self) -> String {
        format!("{}={}", self.key, self.value)
    }
}

pub use crate::text::glob;

/// Proportional allocation of `n` seats to strata of `sizes` by largest remainder (ties to the first).
pub fn allocate(n: usize, sizes: &[usize]) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    if n >= total {
        return sizes.to_vec();
    }
    let mut seats: Vec<usize> = sizes.iter().map(|s| n * s / total).collect();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    // Integer remainders n·s mod total: exact, no floating-point ties.
    order.sort_by_key(|&k| std::cmp::Reverse(n * sizes[k] % total));
    let left = n - seats.iter().sum::<usize>();
    for &k in order.iter().take(left) {
        seats[k] += 1;
    }
    seats
}

/// What a dataset kept, for `run.json` and the summary line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    pub dataset: String,
    pub catalog: String,
    /// Tasks in the dataset.
    pub available: usize,
    pub kept: usize,
}

impl Subset {
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
            && self.filter.is_empty()
            && self.sample.is_none()
            && self.limit.is_none()
    }

    fn filters(&self) -> Vec<Filter> {
        // Checked where they were read (flag parser, config file).
        self.filter
            .iter()
            .map(|f| Filter::parse(f).expect("filters are checked when read"))
            .collect()
    }

    /// Fail when a task pattern or a filter matches no task of any of `datasets` (whole datasets, before
    /// any other selection): a typo must not run a smaller experiment than intended.
    pub fn check_matches<'a>(
        &self,
        datasets: impl IntoIterator<Item = &'a Dataset> + Clone,
    ) -> Result<(), InputError> {
        let all = || datasets.clone().into_iter().flat_map(|d| d.tasks.iter());
        let names: BTreeSet<&str> = datasets.clone().into_iter().map(|d| d.name.as_str()).collect();
        let names = names.into_iter().collect::<Vec<_>>().join(", ");
        for p in &self.tasks {
            if !all().any(|t| glob(p, &t.id)) {
                return Err(InputError::new(
                    "--tasks",
                    format!(
                        "`{p}` matches no task id in dataset {names}; check the pattern (`*` any characters, `?` one)"
                    ),
                ));
            }
        }
        for f in self.filters() {
            if !all().any(|t| f.matches(t)) {
                let mut used: BTreeSet<String> = BTreeSet::new();
                for t in all() {
                    match f.key {
                        "kind" => drop(used.insert(t.kind.as_str().to_string())),
                        "category" => drop(used.insert(t.category.clone())),
                        _ => used.extend(t.tags.iter().cloned()),
                    }
                }
                let used: Vec<String> = used.into_iter().filter(|v| !v.is_empty()).collect();
                return Err(InputError::new(
                    "--filter",
                    format!(
                        "`{}` matches no task in dataset {names}; the {} values there are: {}",
                        f.spelled(),
                        f.key,
                        used.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Select the tasks of `dataset` (kept in dataset order). A step that leaves none is an error naming
    /// the step, what came before it and the dataset.
    pub fn apply(&self, dataset: &mut Dataset, seed: u64) -> Result<(), InputError> {
        if self.is_empty() {
            return Ok(());
        }
        let available = dataset.tasks.len();
        let mut tasks = std::mem::take(&mut dataset.tasks);
        let mut steps: Vec<String> = Vec::new();
        let emptied = |flag: &str, step: String, steps: &[String]| {
            let after = if steps.is_empty() {
                String::new()
            } else {
                format!(" (after {})", steps.join(" "))
            };
            InputError::new(
                flag,
                format!(
                    "`{step}`{after} keeps none of the {available} tasks of dataset {} ({}); loosen the selection or leave this dataset out",
                    dataset.name,
                    dataset.path.display()
                ),
            )
        };
        if !self.tasks.is_empty() {
            tasks.retain(|t| self.tasks.iter().any(|p| glob(p, &t.id)));
            let step = self.tasks.join(",");
            if tasks.is_empty() {
                return Err(emptied("--tasks", step, &steps));
            }
            steps.push(format!("--tasks {step}"));
        }
        let filters = self.filters();
        for key in FILTER_KEYS {
            let alternatives: Vec<&Filter> = filters.iter().filter(|f| f.key == key).collect();
            if alternatives.is_empty() {
                continue;
            }
            tasks.retain(|t| alternatives.iter().any(|f| f.matches(t)));
            let step = alternatives.iter().map(|f| f.spelled()).collect::<Vec<_>>().join(" or ");
            if tasks.is_empty() {
                return Err(emptied("--filter", step, &steps));
            }
            steps.push(format!("--filter {step}"));
        }
        // Sample and limit keep at least one of a non-empty list (both are at least 1).
        if let Some(n) = self.sample {
            tasks = sample(tasks, n, seed);
        }
        if let Some(n) = self.limit {
            tasks.truncate(n);
        }
        dataset.tasks = tasks;
        Ok(())
    }
}

/// `n` tasks stratified by kind (see the module docs), in their original order.
fn sample(tasks: Vec<Task>, n: usize, seed: u64) -> Vec<Task> {
    let sizes: Vec<usize> =
        KINDS.iter().map(|k| tasks.iter().filter(|t| t.kind == *k).count()).collect();
    let seats = allocate(n, &sizes);
    let mut keep = vec![false; tasks.len()];
    for (kind, seats) in KINDS.iter().zip(seats) {
        let mut stratum: Vec<(u64, usize)> = tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.kind == *kind)
            .map(|(i, t)| (stable_hash(format!("{seed}|sample|{}", t.id).as_bytes()), i))
            .collect();
        stratum.sort_unstable();
        for (_, i) in stratum.into_iter().take(seats) {
            keep[i] = true;
        }
    }
    tasks.into_iter().zip(keep).filter(|(_, k)| *k).map(|(t, _)| t).collect()
}

/// `key=value` filters of `--filter` / `filter` (see [`super::Filter`]); a rule of its own here
/// because it knows the filter keys, like the rules in `crate::rules`, kept as `key=value`.
pub mod filters {
    use serde::{Deserialize, Deserializer};
    pub fn parse(s: &str) -> Result<String, String> {
        super::Filter::parse(s).map(|f| format!("{}={}", f.key, f.value))
    }
    pub fn check(v: Vec<String>) -> Result<Vec<String>, String> {
        if v.is_empty() {
            return Err("list at least one key=value filter".into());
        }
        v.iter().map(|f| parse(f)).collect()
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
        Option::<Vec<String>>::deserialize(d)?
            .map(check)
            .transpose()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_rule_names_the_keys() {
        assert_eq!(super::filters::parse(" kind = single "), Ok("kind=single".into()));
        assert!(
            super::filters::check(vec!["tag=enum".into(), "colour=red".into()])
                .unwrap_err()
                .contains("colour")
        );
    }

    use super::*;

    #[test]
    fn globs_match_stars_and_single_characters() {
        for (p, t) in [
            ("dev-*", "dev-001"),
            ("*", ""),
            ("d?v-00?", "dev-001"),
            ("*-0*1", "dev-001"),
            ("a*b*c", "aXbYc"),
            ("a**", "a"),
            ("é?", "éx"),
        ] {
            assert!(glob(p, t), "{p} ~ {t}");
        }
        for (p, t) in [
            ("dev-*", "xdev-1"),
            ("dev-00?", "dev-0010"),
            ("a*b*c", "aXbY"),
            ("?", ""),
            ("abc", "abcd"),
        ] {
            assert!(!glob(p, t), "{p} !~ {t}");
        }
    }

    #[test]
    fn allocation_is_proportional_by_largest_remainder() {
        // 24 of 245/35/21/26/48 (n = 375): quotas 15.68, 2.24, 1.344, 1.664, 3.072 → floors 15,2,1,1,3 = 22;
        // the two largest remainders are single (.68) and abstain (.664).
        assert_eq!(allocate(24, &[245, 35, 21, 26, 48, 0]), vec![16, 2, 1, 2, 3, 0]);
        assert_eq!(allocate(3, &[1, 1, 1, 1]), vec![1, 1, 1, 0], "ties go to the first");
        assert_eq!(allocate(10, &[2, 3]), vec![2, 3], "more seats than tasks keeps all");
        assert_eq!(allocate(1, &[0, 5]), vec![0, 1]);
    }

    #[test]
    fn filters_name_the_valid_keys_and_kinds() {
        assert_eq!(
            Filter::parse("tag = enum").unwrap(),
            Filter { key: "tag", value: "enum".into() }
        );
        assert!(Filter::parse("colour=red").unwrap_err().contains("kind, category, tag"));
        assert!(Filter::parse("kind=singel").unwrap_err().contains("single, multi"));
        assert!(Filter::parse("kind").is_err() && Filter::parse("tag=").is_err());
    }
}
