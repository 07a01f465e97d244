//! Run-vs-run comparison: the same cells in two runs, paired task by task.
//!
//! For each cell present in both runs, every task that needs a call ([`crate::dataset::Kind::needs_call`],
//! the tasks of the headline figures) scored in both is a pair; its outcome in a run is its per-task
//! pass rate (0 or 1 with one trial, the share of passing trials with several). The difference is the
//! mean of `b − a` over pairs, tested by [`paired_test`]: McNemar's exact test on the discordant tasks
//! with the interval that inverts it when every outcome is 0 or 1, else a seeded paired bootstrap (its
//! interval and its p-value). p-value and interval come from the same test, so the interval excludes 0
//! exactly when the raw p is below [`ALPHA`]. Across the matched cells (the family, per metric) the
//! p-values are Holm–Bonferroni adjusted; "significant" (`--significant-only`, the regression mark)
//! means adjusted p < α, because a run compares many cells at once. Tasks whose rate changed are listed
//! as flips. Tasks scored in one run only (a task subset, an edited dataset) are not paired but listed
//! per cell, and runs with different task subsets (`run.json`'s `config.subset`) are flagged, so a subset
//! run never compares silently with a full one. This module computes; [`render`] draws.

pub mod confusion;
pub mod links;
pub mod render;

use crate::analysis::RunAnalysis;
use crate::analysis::cells::CellSummary;
use crate::analysis::rows::ScoreRows;
use crate::record::stable_hash;
use crate::score::stats::{NoiseFloor, PairedTest, holm, paired_test};
use serde::Serialize;
use std::collections::BTreeMap;

/// Significance level for `--significant-only` gates and for marking a regression in the comparison
/// (applied to Holm-adjusted p-values).
pub const ALPHA: f64 = crate::score::stats::ALPHA;

/// Bootstrap resamples per interval (seeded by the cell key, so intervals are reproducible).
pub const RESAMPLES: usize = 2000;

/// Cell fields a pair must agree on.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchOn(pub Vec<String>);

impl MatchOn {
    pub const FIELDS: [&'static str; 5] = ["dataset", "catalog", "variant", "layout", "backend"];

    /// Default: everything but the catalog, so two versions of a catalog compare cell by cell.
    pub fn default_fields() -> MatchOn {
        MatchOn(["dataset", "variant", "layout", "backend"].map(String::from).to_vec())
    }

    pub fn parse(list: &str) -> Result<MatchOn, String> {
        let fields: Vec<String> =
            list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        for f in &fields {
            if !Self::FIELDS.contains(&f.as_str()) {
                return Err(format!("unknown field `{f}`; use any of {}", Self::FIELDS.join(", ")));
            }
        }
        if fields.is_empty() {
            return Err("name at least one field".into());
        }
        Ok(MatchOn(fields))
    }

    fn field<'a>(
        &self,
        name: &str,
        dataset: &'a str,
        catalog: &'a str,
        variant: &'a str,
        layout: &'a str,
        backend: &'a str,
    ) -> &'a str {
        match name {
            "dataset" => dataset,
            "catalog" => catalog,
            "variant" => variant,
            "layout" => layout,
            _ => backend,
        }
    }

    fn key(
        &self,
        dataset: &str,
        catalog: &str,
        variant: &str,
        layout: &str,
        backend: &str,
    ) -> String {
        self.0
            .iter()
            .map(|f| self.field(f, dataset, catalog, variant, layout, backend))
            .collect::<Vec<_>>()
            .join("/")
    }

    pub fn cell_key(&self, c: &CellSummary) -> String {
        self.key(&c.dataset, &c.catalog, &c.variant, &c.layout, &c.backend)
    }

    /// The key of row `i` of a run's scored rows.
    pub fn row_key(&self, r: &ScoreRows, i: usize) -> String {
        self.key(
            r.str(r.dataset[i]),
            r.str(r.catalog[i]),
            r.str(r.variant[i]),
            r.str(r.layout[i]),
            r.str(r.backend[i]),
        )
    }
}

/// One metric of one cell in both runs: per-task rates (same task order) paired and tested, the
/// bootstrap seeded by `seed` (`p_adjusted` = `p_value` until [`adjust`] sets it).
fn paired(a: &[f64], b: &[f64], seed: u64) -> PairedTest {
    paired_test(a, b, RESAMPLES, seed)
}

/// Holm-adjust one metric's p-values across the cells (cells without paired tasks are outside the
/// family).
fn adjust(cells: &mut [CellComparison], metric: fn(&mut CellComparison) -> &mut PairedTest) {
    let raw: Vec<f64> = cells
        .iter_mut()
        .map(metric)
        .map(|d| if d.tasks == 0 { f64::NAN } else { d.p_value })
        .collect();
    for (c, p) in cells.iter_mut().zip(holm(&raw)) {
        let d = metric(c);
        d.p_adjusted = if p.is_nan() { d.p_value } else { p };
    }
}

/// Cells in the Holm family of a comparison (matched cells with at least one paired task).
pub fn family_size(cmp: &Comparison) -> usize {
    cmp.cells.iter().filter(|c| c.pass.tasks > 0).count()
}

/// Direction of a flip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Worse in B (a regression when A is the baseline).
    PassToFail,
    /// Better in B.
    FailToPass,
}

/// A task whose pass rate changed between the runs.
#[derive(Debug, Clone, Serialize)]
pub struct Flip {
    pub task_id: String,
    pub direction: Direction,
    pub a_rate: f64,
    pub b_rate: f64,
    /// The trial to look at in each run: in the worse run a failing trial, in the better a passing one.
    pub a_trial: String,
    pub b_trial: String,
    /// B's error type for a regression (A's for an improvement), for a first look without clicking.
    pub error_type: String,
    pub query: String,
}

/// One cell in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct CellComparison {
    /// The cell key over the matched fields.
    pub key: String,
    pub a_cell: String,
    pub b_cell: String,
    pub pass: PairedTest,
    pub selection: PairedTest,
    /// Noise floor from repeated trials (B's, else A's); `None` with one trial per task in both.
    pub noise: Option<NoiseFloor>,
    pub flips: Vec<Flip>,
    /// Tasks scored in this cell of one run only (not paired), sorted.
    pub only_a_tasks: Vec<String>,
    pub only_b_tasks: Vec<String>,
    /// The paired tasks' rates, kept so that cells can be pooled ([`Comparison::pooled`]).
    #[serde(skip)]
    pub pairs: Pairs,
}

/// Per-task rates of the paired tasks of a cell, in A and in B: pass@1 (`pa`, `pb`) and selection
/// (`sa`, `sb`), in task order.
#[derive(Debug, Clone, Default)]
pub struct Pairs {
    pa: Vec<f64>,
    pb: Vec<f64>,
    sa: Vec<f64>,
    sb: Vec<f64>,
}

/// `cells` pooled into one comparison (their task pairs together, their flips and unpaired tasks in
/// order), labelled `overall`; `None` when there is no cell.
fn pool<'a>(cells: impl IntoIterator<Item = &'a CellComparison>) -> Option<CellComparison> {
    let mut pooled: Option<CellComparison> = None;
    for c in cells {
        let o = pooled.get_or_insert_with(|| CellComparison {
            key: "overall".into(),
            a_cell: "overall".into(),
            b_cell: "overall".into(),
            pass: paired(&[], &[], 0),
            selection: paired(&[], &[], 1),
            noise: None,
            flips: vec![],
            only_a_tasks: vec![],
            only_b_tasks: vec![],
            pairs: Pairs::default(),
        });
        o.pairs.pa.extend(&c.pairs.pa);
        o.pairs.pb.extend(&c.pairs.pb);
        o.pairs.sa.extend(&c.pairs.sa);
        o.pairs.sb.extend(&c.pairs.sb);
        o.flips.extend(c.flips.iter().cloned());
        o.only_a_tasks.extend(c.only_a_tasks.iter().cloned());
        o.only_b_tasks.extend(c.only_b_tasks.iter().cloned());
    }
    if let Some(o) = pooled.as_mut() {
        o.pass = paired(&o.pairs.pa, &o.pairs.pb, 0);
        o.selection = paired(&o.pairs.sa, &o.pairs.sb, 1);
    }
    pooled
}

impl Comparison {
    /// The matched cells `keep` selects, pooled as `overall` pools them all (`--gate-scope overall` with
    /// `--gate-cells`); `None` when it selects none.
    pub fn pooled(&self, keep: impl Fn(&CellComparison) -> bool) -> Option<CellComparison> {
        pool(self.cells.iter().filter(|c| keep(c)))
    }
}

/// Two runs, compared.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub cells: Vec<CellComparison>,
    /// Every matched cell pooled (task pairs of all cells together; the flips of every cell).
    pub overall: Option<CellComparison>,
    /// Cells present in only one run.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Each run's task subset as flags (`all tasks` for a full run).
    pub subset_a: String,
    pub subset_b: String,
    /// Each run's judges and prompt-set digests (`judge (prompts digest)`), empty when not judged.
    pub judged_a: Vec<String>,
    pub judged_b: Vec<String>,
    /// Confusions between tools whose count changed, per matched cell: the pairs that got worse
    /// (more calls taken) first, then those that got better.
    pub confusion_changes: Vec<confusion::ConfusionChange>,
}

/// The judges and prompt sets a run's cells were judged with, as `judge (prompts digest)`, sorted.
fn judged_with(cells: &[CellSummary]) -> Vec<String> {
    let mut out: Vec<String> = cells
        .iter()
        .filter_map(|c| c.judge.as_ref())
        .flat_map(|j| {
            j.judges.iter().flat_map(move |judge| {
                j.prompts.iter().map(move |p| format!("{judge} (prompts {p})"))
            })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Comparison {
    /// What makes the pairing partial, one sentence each: different task subsets, unpaired tasks.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.subset_a != self.subset_b {
            out.push(format!("the runs ran different task subsets (A: {}; B: {}); only tasks run in both are paired", self.subset_a, self.subset_b));
        }
        if !self.judged_a.is_empty() && !self.judged_b.is_empty() && self.judged_a != self.judged_b
        {
            out.push(format!(
                "the runs' final answers were judged by different judges or prompt sets (A: {}; B: {}); their judged figures (SoPR, coverage) do not compare",
                self.judged_a.join(", "),
                self.judged_b.join(", ")
            ));
        }
        let (a, b) = self
            .cells
            .iter()
            .fold((0, 0), |(a, b), c| (a + c.only_a_tasks.len(), b + c.only_b_tasks.len()));
        if a + b > 0 {
            out.push(format!("{a} task(s) scored only in A and {b} only in B (over the matched cells) are not paired; see compare.md"));
        }
        out
    }
}

/// A run's task subset (`run.json` `config.subset`) as the flags that select it; `all tasks` without.
pub fn describe_subset(config: &serde_json::Value) -> String {
    let s = &config["subset"];
    let list = |k: &str| {
        s[k].as_array()
            .map(|v| v.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let mut parts = Vec::new();
    if !list("tasks").is_empty() {
        parts.push(format!("--tasks {}", list("tasks").join(",")));
    }
    parts.extend(list("filter").iter().map(|f| format!("--filter {f}")));
    for k in ["sample", "limit"] {
        if let Some(n) = s[k].as_u64() {
            parts.push(format!("--{k} {n}"));
        }
    }
    if parts.is_empty() { "all tasks".into() } else { parts.join(" ") }
}

/// Per task in one cell: trials, passes, selections, and the rows of a failing and a passing trial.
/// Only tasks that need a call are paired (the headline's tasks).
#[derive(Default)]
struct TaskOutcome {
    n: u64,
    pass: u64,
    selection: u64,
    first_fail: Option<usize>,
    first_pass: Option<usize>,
}

fn outcomes<'a>(
    r: &'a ScoreRows,
    on: &MatchOn,
) -> BTreeMap<String, BTreeMap<&'a str, TaskOutcome>> {
    let mut out: BTreeMap<String, BTreeMap<&str, TaskOutcome>> = BTreeMap::new();
    for i in (0..r.len()).filter(|&i| !r.infra[i] && r.kind[i].needs_call()) {
        let o = out.entry(on.row_key(r, i)).or_default().entry(r.str(r.task_id[i])).or_default();
        o.n += 1;
        o.pass += r.pass[i] as u64;
        o.selection += r.selection[i] as u64;
        if r.pass[i] {
            o.first_pass.get_or_insert(i);
        } else {
            o.first_fail.get_or_insert(i);
        }
    }
    out
}

/// Compare run B against run A (the baseline), pairing cells on `on`.
pub fn compare(a: &RunAnalysis, b: &RunAnalysis, on: &MatchOn) -> Comparison {
    let (ta, tb) = (outcomes(&a.rows, on), outcomes(&b.rows, on));
    let cells_a: BTreeMap<String, &CellSummary> =
        a.cells.iter().map(|c| (on.cell_key(c), c)).collect();
    let cells_b: BTreeMap<String, &CellSummary> =
        b.cells.iter().map(|c| (on.cell_key(c), c)).collect();
    let only_a: Vec<String> =
        cells_a.keys().filter(|k| !cells_b.contains_key(*k)).cloned().collect();
    let only_b: Vec<String> =
        cells_b.keys().filter(|k| !cells_a.contains_key(*k)).cloned().collect();
    let empty = BTreeMap::new();
    let mut cells = Vec::new();
    for (key, ca) in &cells_a {
        let Some(cb) = cells_b.get(key) else { continue };
        let (oa, ob) = (ta.get(key).unwrap_or(&empty), tb.get(key).unwrap_or(&empty));
        let (mut pa, mut pb, mut sa, mut sb) = (vec![], vec![], vec![], vec![]);
        let mut flips = Vec::new();
        let only_a_tasks: Vec<String> =
            oa.keys().filter(|t| !ob.contains_key(*t)).map(|t| t.to_string()).collect();
        let only_b_tasks: Vec<String> =
            ob.keys().filter(|t| !oa.contains_key(*t)).map(|t| t.to_string()).collect();
        for (task, x) in oa {
            let Some(y) = ob.get(task) else { continue };
            let rate = |k: u64, n: u64| k as f64 / n as f64;
            let (ra, rb) = (rate(x.pass, x.n), rate(y.pass, y.n));
            pa.push(ra);
            pb.push(rb);
            sa.push(rate(x.selection, x.n));
            sb.push(rate(y.selection, y.n));
            if ra != rb {
                let regression = rb < ra;
                // In the worse run a failing trial, in the better a passing one (rows of A or B).
                let (worse, better) = if regression { (y, x) } else { (x, y) };
                let (worse_rows, better_rows) =
                    if regression { (&b.rows, &a.rows) } else { (&a.rows, &b.rows) };
                let fail = worse.first_fail.or(worse.first_pass);
                let pass = better.first_pass.or(better.first_fail);
                let id =
                    |r: &ScoreRows, i: Option<usize>| i.map(|i| r.trial_id(i)).unwrap_or_default();
                let (a_trial, b_trial) = if regression {
                    (id(better_rows, pass), id(worse_rows, fail))
                } else {
                    (id(worse_rows, fail), id(better_rows, pass))
                };
                flips.push(Flip {
                    task_id: task.to_string(),
                    direction: if regression {
                        Direction::PassToFail
                    } else {
                        Direction::FailToPass
                    },
                    a_rate: ra,
                    b_rate: rb,
                    a_trial,
                    b_trial,
                    error_type: fail
                        .map(|i| worse_rows.str(worse_rows.error_type[i]).to_string())
                        .unwrap_or_default(),
                    query: fail
                        .map(|i| worse_rows.str(worse_rows.query[i]).to_string())
                        .unwrap_or_default(),
                });
            }
        }
        let seed = stable_hash(key.as_bytes());
        let cmp = CellComparison {
            key: key.clone(),
            a_cell: ca.key(),
            b_cell: cb.key(),
            pass: paired(&pa, &pb, seed),
            selection: paired(&sa, &sb, seed ^ 1),
            noise: cb.noise.or(ca.noise),
            flips,
            only_a_tasks,
            only_b_tasks,
            pairs: Pairs { pa, pb, sa, sb },
        };
        cells.push(cmp);
    }
    // Pooled before the Holm adjustment: the pooled row is a test of its own.
    let overall = pool(&cells);
    adjust(&mut cells, |c| &mut c.pass);
    adjust(&mut cells, |c| &mut c.selection);
    let confusion_changes = confusion::changes(a, b, &cells);
    Comparison {
        cells,
        overall,
        only_a,
        only_b,
        subset_a: describe_subset(&a.config),
        subset_b: describe_subset(&b.config),
        judged_a: judged_with(&a.cells),
        judged_b: judged_with(&b.cells),
        confusion_changes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_diff_counts_discordant_tasks_and_tests_them() {
        // 10 tasks: A passes 0..8, B passes 0..5 and 9 → A better on 5,6,7; B better on 9.
        let a: Vec<f64> = (0..10).map(|i| if i < 8 { 1.0 } else { 0.0 }).collect();
        let b: Vec<f64> = (0..10).map(|i| if i < 5 || i == 9 { 1.0 } else { 0.0 }).collect();
        let d = paired(&a, &b, 7);
        assert_eq!((d.a_better, d.b_better, d.tasks), (3, 1, 10));
        assert!((d.diff - (-0.2)).abs() < 1e-12);
        // McNemar exact, b=3, c=1: 2 · (1 + 4) / 16 = 0.625.
        assert!((d.p_value - 0.625).abs() < 1e-12);
        assert!(d.low <= d.diff && d.diff <= d.high);
        assert!(!d.significant(0.05));
    }

    fn cell(key: &str, pass: PairedTest) -> CellComparison {
        CellComparison {
            key: key.into(),
            a_cell: key.into(),
            b_cell: key.into(),
            pass,
            selection: pass,
            noise: None,
            flips: vec![],
            only_a_tasks: vec![],
            only_b_tasks: vec![],
            pairs: Pairs::default(),
        }
    }

    #[test]
    fn significance_uses_the_holm_adjusted_p_across_cells() {
        // Three cells of 40 tasks; B loses 6, 7 and 0 tasks (A never loses): raw McNemar p = 2/2⁶,
        // 2/2⁷ and 1; the Holm family is those three cells (a fourth without tasks is outside): m = 3.
        let drop = |lost: usize| {
            let a = vec![1.0; 40];
            let b: Vec<f64> = (0..40).map(|i| if i < lost { 0.0 } else { 1.0 }).collect();
            paired(&a, &b, 3)
        };
        let mut cells = vec![
            cell("x", drop(6)),
            cell("y", drop(7)),
            cell("z", drop(0)),
            cell("empty", paired(&[], &[], 1)),
        ];
        adjust(&mut cells, |c| &mut c.pass);
        let (p6, p7) = (2.0 / 64.0, 2.0 / 128.0);
        assert!(
            (cells[0].pass.p_value - p6).abs() < 1e-12
                && (cells[1].pass.p_value - p7).abs() < 1e-12
                && cells[2].pass.p_value == 1.0
        );
        // Sorted p7 < p6 < 1: 3·p7 = 0.046875, 2·p6 = 0.0625, 1·1 = 1; the empty cell is outside the family.
        assert!((cells[1].pass.p_adjusted - 3.0 * p7).abs() < 1e-12);
        assert!((cells[0].pass.p_adjusted - 2.0 * p6).abs() < 1e-12);
        assert_eq!(cells[2].pass.p_adjusted, 1.0);
        assert_eq!(cells[3].pass.p_adjusted, 1.0);
        // x: its interval excludes 0 (raw p < 0.05) yet it is not significant after adjustment; y is.
        assert!(cells[0].pass.interval_excludes_zero() && !cells[0].pass.significant(ALPHA));
        assert!(cells[1].pass.interval_excludes_zero() && cells[1].pass.significant(ALPHA));
        assert!(
            !cells[2].pass.interval_excludes_zero()
                && (cells[2].pass.low, cells[2].pass.high) == (0.0, 0.0)
        );
        assert!(!cells[3].pass.significant(ALPHA), "no tasks, nothing significant");
    }

    #[test]
    fn subsets_are_described_as_flags() {
        assert_eq!(describe_subset(&serde_json::json!({"seed": 0})), "all tasks");
        assert_eq!(describe_subset(&serde_json::Value::Null), "all tasks");
        let c = serde_json::json!({"subset": {"tasks": ["dev-*", "x?"], "filter": ["kind=single", "tag=enum"], "sample": 24, "limit": 5}});
        assert_eq!(
            describe_subset(&c),
            "--tasks dev-*,x? --filter kind=single --filter tag=enum --sample 24 --limit 5"
        );
    }

    #[test]
    fn match_fields_are_checked() {
        assert!(MatchOn::parse("dataset,layout").is_ok());
        assert!(MatchOn::parse("dataset,colour").unwrap_err().contains("colour"));
        assert!(MatchOn::parse("").is_err());
    }
}
