//! "Which rule matters most": every variant compared with `good` in the same dataset, layout and
//! backend, ranked by its effect on selection accuracy (most harmful first).
//!
//! The variants run the same tasks, so each effect is paired task by task over the tasks that need a
//! call (the headline's tasks, [`crate::dataset::Kind::needs_call`]): a task's outcome is its per-task
//! rate (0 or 1 with one trial), and [`paired_test`] gives the difference, its 95 % interval and its
//! p-value from one test (McNemar's exact test and the interval inverting it for 0/1 outcomes, a seeded
//! paired bootstrap for rates). An operator that changed no task's outcome has an effect of exactly 0
//! with the interval [0, 0] and p = 1. Within a dataset/layout/backend group the variants are a family:
//! their p-values are Holm–Bonferroni adjusted (step-down), per metric, and reported next to the raw ones.

use super::cells::CellSummary;
use super::rows::ScoreRows;
use crate::catalog::variant::Degrade;
use crate::record::stable_hash;
use crate::score::stats::{Diff, PairedMethod, holm, paired_test};
use serde::Serialize;
use std::collections::BTreeMap;

/// Bootstrap resamples per effect (used only with several trials per task; seeded by the cell key).
const RESAMPLES: usize = 2000;

/// One metric's paired effect of a variant against `good`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PairedEffect {
    /// `variant − good` over the paired tasks, with the 95 % interval of `method`.
    pub delta: Diff,
    /// Tasks better under `good`, tasks better under the variant.
    pub good_better: u64,
    pub variant_better: u64,
    pub p_value: f64,
    /// Holm–Bonferroni adjusted across the variants of the group (this metric).
    pub p_holm: f64,
    pub method: PairedMethod,
}

impl PairedEffect {
    /// `−4.0 [−7.1, −1.2], p 0.012 (Holm 0.096)` in points, for the report's tables.
    pub fn text(&self) -> String {
        if self.delta.diff.is_nan() {
            return "n/a".into();
        }
        let p = |x: f64| if x < 0.001 { "<0.001".to_string() } else { format!("{x:.3}") };
        format!(
            "{:+.1} [{:+.1}, {:+.1}], p {} (Holm {})",
            self.delta.diff * 100.0,
            self.delta.low * 100.0,
            self.delta.high * 100.0,
            p(self.p_value),
            p(self.p_holm)
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Effect {
    pub dataset: String,
    pub layout: String,
    pub backend: String,
    pub variant: String,
    /// The lint rule an `op:` variant violates (empty for other variants).
    pub rule: String,
    /// The variant's scored trials (its cell's `n`).
    pub n: u64,
    /// Tasks that need a call scored under both the variant and `good` (the pairs).
    pub tasks: u64,
    /// The variant's headline rates (its cell's).
    pub selection: f64,
    pub selection_delta: Diff,
    pub selection_effect: PairedEffect,
    pub pass: f64,
    pub pass_delta: Diff,
    pub pass_effect: PairedEffect,
    /// 1 = the largest drop in selection accuracy within its dataset/layout/backend.
    pub rank: usize,
}

/// Per cell key, per task: (trials, passes, selections), over scored trials of tasks that need a call.
/// A task's scored trials, passes and correct selections.
type Counts = (u64, u64, u64);

/// Per cell key, its tasks' (trials, passed, selected) counts, sorted by task id (one entry a task).
pub(crate) type Outcomes<'a> = BTreeMap<String, Vec<(&'a str, (u64, u64, u64))>>;

pub(crate) fn outcomes(rows: &ScoreRows) -> Outcomes<'_> {
    // Counted by the rows' codes (no string built per row: a run may have a million trials), then keyed
    // by the cell key and the task id.
    let mut by_codes: rustc_hash::FxHashMap<([u32; 5], u32), Counts> = Default::default();
    for i in (0..rows.len()).filter(|&i| !rows.infra[i] && rows.kind[i].needs_call()) {
        let codes =
            [rows.dataset[i], rows.catalog[i], rows.variant[i], rows.layout[i], rows.backend[i]];
        let o = by_codes.entry((codes, rows.task_id[i])).or_default();
        o.0 += 1;
        o.1 += rows.pass[i] as u64;
        o.2 += rows.selection[i] as u64;
    }
    let mut per_cell: rustc_hash::FxHashMap<[u32; 5], Vec<(u32, Counts)>> = Default::default();
    for ((codes, task), counts) in by_codes {
        per_cell.entry(codes).or_default().push((task, counts));
    }
    let mut out: Outcomes = BTreeMap::new();
    for (codes, tasks) in per_cell {
        // Two cells whose names join to one key share it (see `summary::per_cell_means`).
        let cell = out.entry(codes.map(|s| rows.str(s)).join("/")).or_default();
        cell.extend(tasks.into_iter().map(|(task, counts)| (rows.str(task), counts)));
    }
    // A sorted list per cell rather than a map: a large run has a hundred thousand tasks a cell, and
    // sorting once then pairing two cells in one merge costs less than a tree's inserts and lookups.
    for tasks in out.values_mut() {
        tasks.sort_unstable_by(|a, b| a.0.cmp(b.0));
        tasks.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1.0 += later.1.0;
                kept.1.1 += later.1.1;
                kept.1.2 += later.1.2;
            }
            same
        });
    }
    out
}

/// Paired per-task (pass, selection) rates of `variant` and `good` over the tasks both scored, in task
/// order (both lists are sorted by task id: [`outcomes`]).
pub(crate) fn pairs(
    variant: &[(&str, (u64, u64, u64))],
    good: &[(&str, (u64, u64, u64))],
) -> [(Vec<f64>, Vec<f64>); 2] {
    let (mut pass, mut selection) = ((vec![], vec![]), (vec![], vec![]));
    let rate = |k: u64, n: u64| k as f64 / n as f64;
    let (mut v, mut g) = (variant.iter().peekable(), good.iter().peekable());
    while let (Some((vt, vc)), Some((gt, gc))) = (v.peek(), g.peek()) {
        match vt.cmp(gt) {
            std::cmp::Ordering::Less => {
                v.next();
            }
            std::cmp::Ordering::Greater => {
                g.next();
            }
            std::cmp::Ordering::Equal => {
                pass.0.push(rate(gc.1, gc.0));
                pass.1.push(rate(vc.1, vc.0));
                selection.0.push(rate(gc.2, gc.0));
                selection.1.push(rate(vc.2, vc.0));
                v.next();
                g.next();
            }
        }
    }
    [pass, selection]
}

pub(crate) fn effect_of(good: &[f64], variant: &[f64], seed: u64) -> PairedEffect {
    let t = paired_test(good, variant, RESAMPLES, seed);
    PairedEffect {
        delta: Diff { diff: t.diff, low: t.low, high: t.high },
        good_better: t.a_better,
        variant_better: t.b_better,
        p_value: t.p_value,
        p_holm: t.p_value,
        method: t.method,
    }
}

/// Effects of every non-`good` variant, grouped by dataset/layout/backend, ranked within each group.
/// `per_cell` are the run's per-task outcomes ([`outcomes`]), which the effects pair.
pub fn effects(cells: &[CellSummary], per_cell: &Outcomes<'_>) -> Vec<Effect> {
    use rayon::prelude::*;
    let empty = Vec::new();
    let mut out = Vec::new();
    let mut groups: Vec<(&str, &str, &str)> =
        cells.iter().map(|c| (c.dataset.as_str(), c.layout.as_str(), c.backend.as_str())).collect();
    groups.sort();
    groups.dedup();
    for (dataset, layout, backend) in groups {
        let in_group: Vec<&CellSummary> = cells
            .iter()
            .filter(|c| c.dataset == dataset && c.layout == layout && c.backend == backend)
            .collect();
        let Some(good) = in_group.iter().find(|c| c.variant == "good") else { continue };
        let good_tasks = per_cell.get(&good.key()).unwrap_or(&empty);
        // Each variant's tests depend on its own pairs and seed alone, so they run side by side
        // (the exact intervals of a large run's pairs are the analysis's largest serial part); the
        // collected order is the cells' order, as before.
        let mut group: Vec<Effect> = in_group
            .par_iter()
            .filter(|c| c.variant != "good")
            .map(|c| {
                let key = c.key();
                let [pass, selection] = pairs(per_cell.get(&key).unwrap_or(&empty), good_tasks);
                let seed = stable_hash(key.as_bytes());
                let (pass_effect, selection_effect) = (
                    effect_of(&pass.0, &pass.1, seed),
                    effect_of(&selection.0, &selection.1, seed ^ 1),
                );
                Effect {
                    dataset: dataset.into(),
                    layout: layout.into(),
                    backend: backend.into(),
                    variant: c.variant.clone(),
                    rule: c
                        .variant
                        .strip_prefix("op:")
                        .and_then(Degrade::from_name)
                        .map(|d| d.rule().to_string())
                        .unwrap_or_default(),
                    n: c.n,
                    tasks: pass.0.len() as u64,
                    selection: c.selection.rate,
                    selection_delta: selection_effect.delta,
                    selection_effect,
                    pass: c.pass.rate,
                    pass_delta: pass_effect.delta,
                    pass_effect,
                    rank: 0,
                }
            })
            .collect();
        // Holm across the group's variants, per metric (effects without paired tasks are outside).
        let metrics: [fn(&mut Effect) -> &mut PairedEffect; 2] =
            [|e| &mut e.selection_effect, |e| &mut e.pass_effect];
        for metric in metrics {
            let raw: Vec<f64> = group
                .iter_mut()
                .map(|e| if e.tasks == 0 { f64::NAN } else { metric(e).p_value })
                .collect();
            for (e, p) in group.iter_mut().zip(holm(&raw)) {
                let m = metric(e);
                m.p_holm = if p.is_nan() { m.p_value } else { p };
            }
        }
        group.sort_by(|a, b| {
            a.selection_delta
                .diff
                .total_cmp(&b.selection_delta.diff)
                .then(a.pass_delta.diff.total_cmp(&b.pass_delta.diff))
                .then(a.variant.cmp(&b.variant))
        });
        for (i, e) in group.iter_mut().enumerate() {
            e.rank = i + 1;
        }
        out.extend(group);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated pairs of cells (random task subsets of a shared pool): every task the two cells share
    /// is paired with itself once, in task order, and no other task is. A task's counts encode it
    /// (one success in `index + 1` trials in both cells), so a pair of two tasks shows as unequal rates.
    #[test]
    fn each_shared_task_is_paired_with_itself_in_task_order() {
        let pool: Vec<String> = (0..40).map(|i| format!("task-{:02}", (i * 7) % 40)).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200 {
            let (variant_density, good_density) = (next() % 101, next() % 101);
            let mut cell = |density: u64| {
                let mut tasks: Vec<(&str, (u64, u64, u64))> = pool
                    .iter()
                    .filter(|_| next() % 100 < density)
                    .map(|t| {
                        let index: u64 = t[5..].parse().unwrap();
                        (t.as_str(), (index + 1, 1, 1))
                    })
                    .collect();
                tasks.sort_unstable_by(|a, b| a.0.cmp(b.0));
                tasks
            };
            let (variant, good) = (cell(variant_density), cell(good_density));
            let shared: Vec<&str> =
                variant.iter().map(|v| v.0).filter(|t| good.iter().any(|g| g.0 == *t)).collect();
            let [pass, selection] = pairs(&variant, &good);
            assert_eq!(pass.0.len(), shared.len());
            assert_eq!(pass.0, pass.1, "a task paired with another");
            assert_eq!(selection.0, selection.1);
            let expected: Vec<f64> =
                shared.iter().map(|t| 1.0 / (t[5..].parse::<u64>().unwrap() + 1) as f64).collect();
            assert_eq!(pass.0, expected, "not the shared tasks in task order");
        }
    }
}
