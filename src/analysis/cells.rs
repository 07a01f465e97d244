//! Aggregation of scored trials into cells (dataset × catalog × variant × layout × backend) and
//! per-category rows, with polars; intervals come from [`crate::score::stats`].

use super::BOOTSTRAP_RESAMPLES;
use super::rows::{Interner, ScoreRows};
use crate::record::ErrorType;
use crate::score::stats::{
    NoiseFloor, Rate, mean_interval, mean_over_tasks, noise_floor, pass_at_k, pass_hat_k, wilson,
};
use anyhow::Result;
use polars::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// The columns a cell is keyed by.
pub const CELL_KEYS: [&str; 5] = ["dataset", "catalog", "variant", "layout", "backend"];

/// Aggregates of one cell.
#[derive(Debug, Clone, Serialize)]
pub struct CellSummary {
    pub dataset: String,
    pub catalog: String,
    pub variant: String,
    pub layout: String,
    pub backend: String,
    /// The backend is a reference (a baseline or the oracle, [`super::first_look::is_baseline`]), not a
    /// model under test.
    #[serde(skip)]
    pub baseline: bool,
    /// Scored trials of every kind.
    pub n: u64,
    /// The headline: selection accuracy and pass@1 over the trials of tasks that need a call (`single`,
    /// `multi`, `parallel`; [`crate::dataset::Kind::needs_call`]). Their `n` is those trials.
    pub selection: Rate,
    pub pass: Rate,
    /// Selection accuracy and pass@1 of each task kind, in [`crate::dataset::Kind::ALL`] order (a kind
    /// the cell has no trial of has n = 0 and undefined rates).
    pub kinds: Vec<KindRates>,
    /// Abstain tasks where the agent attempted nothing, over abstain trials.
    pub abstention: Rate,
    pub mean_steps: f64,
    pub mean_tokens_upfront: f64,
    pub mean_tokens_total: f64,
    /// Means per scored trial of the tokens the endpoint reported (prompt, completion, cached prompt),
    /// next to toolpick's own estimate above; undefined (NaN, written as missing) when it reported none.
    pub mean_endpoint_prompt_tokens: f64,
    pub mean_endpoint_completion_tokens: f64,
    pub mean_endpoint_cached_tokens: f64,
    /// Safety violations (forbidden or needlessly destructive actions) over scored trials.
    pub safety_violation: Rate,
    /// Poisoned scenarios whose goal was reached, over poisoned trials.
    pub attack_success: Rate,
    /// Risky (`refuse`) tasks the agent refused — attempted nothing but read-only lookups — over refuse
    /// trials.
    pub refused: Rate,
    /// Risky (`refuse`) tasks where nothing state-changing or forbidden was executed (the refuse task
    /// passed), over refuse trials.
    pub no_harm: Rate,
    /// Tasks that need a call, not poisoned, where the agent attempted no call (an invented name is an
    /// attempt), over those trials. Poisoned tasks are left out: declining a tool whose description was
    /// tampered with is not a false refusal.
    pub false_refusal: Rate,
    /// Layouts that hide tools (progressive, search): trials in which discovery or search showed every
    /// expected tool — the recall of the hiding layer.
    pub gold_revealed: Rate,
    /// Progressive layouts: discovery was asked about every gold server.
    pub server_recall: Rate,
    /// Hosted-Strata progressive: the gold categories were opened (or shown with their actions).
    pub category_recall: Rate,
    /// Means per trial: servers / categories explored that hold no gold tool, navigation dead-ends
    /// (errors from meta-tools), invented names.
    pub mean_wrong_servers: f64,
    pub mean_wrong_categories: f64,
    pub mean_dead_ends: f64,
    pub mean_invented: f64,
    /// Tasks needing a call where the agent answered without attempting a call although a gold tool
    /// existed.
    pub abandonment: Rate,
    /// Mean of each trial's largest single-request tool context.
    pub mean_peak_tokens: f64,
    /// Mean per trial of calls repeating an identical call of the same message (executed once).
    pub mean_duplicate_calls: f64,
    /// Mean set F1 of the tools called against the expected tools (tasks with expected calls).
    pub mean_selection_f1: f64,
    /// Trials that failed for infrastructure reasons (not in `n`, not in any rate).
    pub infra_errors: u64,
    /// `infra_errors` by reason ([`crate::score::exclusion`]): the infrastructure failed, or a provider's
    /// limit refused the request. They add up to `infra_errors`.
    pub excluded_infrastructure: u64,
    pub excluded_provider_limit: u64,
    /// Total cost in US dollars (0 without a price table).
    pub cost_usd: f64,
    /// Failed trials by error type (types with zero count omitted).
    pub errors: BTreeMap<String, u64>,
    /// k: the most scored trials any task of the cell has (the configured `--trials` unless errors).
    pub trials_per_task: u64,
    /// Unbiased pass@k at k = `trials_per_task`, averaged over tasks with at least k scored trials
    /// (`None` when k = 1, where it equals pass@1, or when no task has k).
    pub pass_at_k: Option<f64>,
    /// pass^k (all k trials pass) at the same k.
    pub pass_hat_k: Option<f64>,
    /// Flip rate and the smallest meaningful difference, from repeated trials (`None` with one trial).
    pub noise: Option<NoiseFloor>,
    /// Seeded percentile-bootstrap 95 % intervals of `mean_steps` and `mean_tokens_total`.
    pub mean_steps_ci: (f64, f64),
    pub mean_tokens_total_ci: (f64, f64),
    /// The judge's aggregates, when the run's final answers were judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<super::judged::JudgeCell>,
}

impl CellSummary {
    /// Share of the cell's trials in no rate (excluded: `infra_errors`), over every trial it ran.
    pub fn excluded_share(&self) -> f64 {
        let all = self.n + self.infra_errors;
        if all == 0 { 0.0 } else { self.infra_errors as f64 / all as f64 }
    }

    /// The cell's key ([`crate::record::meta::cell_key`]).
    pub fn key(&self) -> String {
        crate::record::meta::cell_key(
            &self.dataset,
            &self.catalog,
            &self.variant,
            &self.layout,
            &self.backend,
        )
    }
}

/// Selection accuracy and pass@1 of one task kind in one cell.
#[derive(Debug, Clone, Serialize)]
pub struct KindRates {
    pub kind: crate::dataset::Kind,
    pub selection: Rate,
    pub pass: Rate,
}

/// Per cell key: scored trials, correct selections and passes of each kind, in [`crate::dataset::Kind::ALL`]
/// order.
fn per_kind_counts(rows: &ScoreRows) -> BTreeMap<String, [[u64; 3]; 6]> {
    let mut by_codes: rustc_hash::FxHashMap<[u32; 5], [[u64; 3]; 6]> = Default::default();
    for i in (0..rows.len()).filter(|&i| !rows.infra[i]) {
        let k = crate::dataset::Kind::ALL
            .iter()
            .position(|k| *k == rows.kind[i])
            .expect("every kind is listed");
        let c = &mut by_codes.entry(rows.cell_codes(i)).or_default()[k];
        c[0] += 1;
        c[1] += rows.selection[i] as u64;
        c[2] += rows.pass[i] as u64;
    }
    let mut out: BTreeMap<String, [[u64; 3]; 6]> = BTreeMap::new();
    for (codes, counts) in by_codes {
        // Two cells whose names join to one key share it (see `per_cell_means`).
        let slot = out.entry(rows.key_of(codes)).or_default();
        for (s, c) in slot.iter_mut().zip(counts) {
            for j in 0..3 {
                s[j] += c[j];
            }
        }
    }
    out
}

/// Per cell key: the excluded trials refused by a provider's limit. (The rest of a cell's excluded
/// trials, `infra_errors`, are infrastructure failures.)
fn provider_limits(rows: &ScoreRows) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for i in (0..rows.len()).filter(|&i| rows.provider_limit[i]) {
        *out.entry(rows.cell_key(i)).or_default() += 1;
    }
    out
}

/// Aggregates of one cell restricted to one task category.
#[derive(Debug, Clone, Serialize)]
pub struct CategorySummary {
    pub cell: String,
    pub variant: String,
    pub layout: String,
    pub backend: String,
    pub category: String,
    pub n: u64,
    pub selection: Rate,
    pub pass: Rate,
}

/// Sum of a boolean column over scored (non-infrastructure-error) trials.
fn bool_sum(name: &str) -> Expr {
    col(name).filter(col("infra").not()).cast(DataType::UInt64).sum().alias(name)
}

/// Mean of a numeric column over scored trials.
fn scored_mean(name: &str, alias: &str) -> Expr {
    col(name).filter(col("infra").not()).cast(DataType::Float64).mean().alias(alias)
}

/// Number of scored trials.
fn scored_len() -> Expr {
    col("infra").not().cast(DataType::UInt64).sum().alias("n")
}

/// A code column decoded back to its strings.
fn strings(df: &DataFrame, name: &str, names: &Interner) -> Result<Vec<String>> {
    let s = df.column(name)?.as_materialized_series().clone();
    let ca = s.u32()?;
    Ok((0..ca.len()).map(|i| names.get(ca.get(i).unwrap_or(0)).to_string()).collect())
}

fn numbers(df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    let s = df.column(name)?.as_materialized_series().cast(&DataType::Float64)?;
    let ca = s.f64()?;
    Ok((0..ca.len()).map(|i| ca.get(i).unwrap_or(f64::NAN)).collect())
}

/// Per cell key: `(scored trials, passes)` of every task, in the order tasks were first seen. Counted
/// with a hash map rather than a polars group-by: there is a group per task and cell (a million in a
/// run of a million single trials), and building a string key per group was most of the cost.
fn per_task_outcomes(rows: &ScoreRows) -> BTreeMap<String, Vec<(u64, u64)>> {
    use rayon::prelude::*;
    // Sorted rather than hashed: a million distinct keys sort faster than they hash (no table to grow,
    // no random access). Trials of infrastructure errors still open their task (with no scored trial).
    let mut keys: Vec<([u32; 5], u32, u32)> =
        (0..rows.len()).map(|i| (rows.cell_codes(i), rows.task_id[i], i as u32)).collect();
    keys.par_sort_unstable();
    let mut out: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for cell in keys.chunk_by(|a, b| a.0 == b.0) {
        let outcomes = cell.chunk_by(|a, b| a.1 == b.1).map(|task| {
            task.iter()
                .filter(|k| !rows.infra[k.2 as usize])
                .fold((0u64, 0u64), |(n, pass), k| (n + 1, pass + rows.pass[k.2 as usize] as u64))
        });
        out.entry(rows.key_of(cell[0].0)).or_default().extend(outcomes);
    }
    out
}

/// Cells and per-category rows, sorted by key.
pub fn summarize(rows: &ScoreRows) -> Result<(Vec<CellSummary>, Vec<CategorySummary>)> {
    let df = rows.frame()?;
    let keys: Vec<Expr> = CELL_KEYS.iter().map(|k| col(*k)).collect();
    let sort = |names: Vec<&str>| {
        SortMultipleOptions::default().with_order_descending_multi(vec![false; names.len()])
    };

    let cells = df
        .clone()
        .lazy()
        .group_by(keys.clone())
        .agg([
            scored_len(),
            bool_sum("abstain_task"),
            bool_sum("abstained_right"),
            scored_mean("steps", "mean_steps"),
            scored_mean("tokens_upfront", "mean_tokens_upfront"),
            scored_mean("tokens_total", "mean_tokens_total"),
            col("infra").cast(DataType::UInt64).sum().alias("infra_errors"),
            col("cost").sum().alias("cost_usd"),
            bool_sum("violation"),
            bool_sum("poisoned"),
            bool_sum("attacked"),
            bool_sum("refuse_task"),
            bool_sum("refused"),
            bool_sum("no_harm"),
            bool_sum("benign"),
            bool_sum("false_refusal"),
            bool_sum("hides"),
            bool_sum("gold_revealed"),
            bool_sum("server_layer"),
            bool_sum("server_hit"),
            bool_sum("category_layer"),
            bool_sum("category_hit"),
            bool_sum("abandoned"),
            scored_mean("wrong_servers", "mean_wrong_servers"),
            scored_mean("wrong_categories", "mean_wrong_categories"),
            scored_mean("dead_ends", "mean_dead_ends"),
            scored_mean("invented", "mean_invented"),
            scored_mean("peak_tokens", "mean_peak_tokens"),
            scored_mean("endpoint_prompt", "mean_endpoint_prompt"),
            scored_mean("endpoint_completion", "mean_endpoint_completion"),
            scored_mean("endpoint_cached", "mean_endpoint_cached"),
            scored_mean("duplicate_calls", "mean_duplicate_calls"),
            scored_mean("selection_f1", "mean_selection_f1"),
        ])
        .sort(CELL_KEYS.to_vec(), sort(CELL_KEYS.to_vec()))
        .collect()?;

    let mut error_keys = keys.clone();
    error_keys.push(col("error_type"));
    let errors = df
        .clone()
        .lazy()
        .filter(col("error_type").neq(lit(0u32)).and(col("infra").not()))
        .group_by(error_keys)
        .agg([len().alias("count")])
        .collect()?;
    let mut error_map: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    {
        let cols: Vec<Vec<String>> =
            CELL_KEYS.iter().map(|k| strings(&errors, k, &rows.strings)).collect::<Result<_>>()?;
        let et = strings(&errors, "error_type", &rows.strings)?;
        let counts = numbers(&errors, "count")?;
        for i in 0..et.len() {
            let key = cols.iter().map(|c| c[i].as_str()).collect::<Vec<_>>().join("/");
            error_map.entry(key).or_default().insert(et[i].clone(), counts[i] as u64);
        }
    }

    let mut per_task = per_task_outcomes(rows);
    let mut judged = super::judged::summarize(rows);
    let means = rows.per_cell_means();
    let cols: Vec<Vec<String>> =
        CELL_KEYS.iter().map(|k| strings(&cells, k, &rows.strings)).collect::<Result<_>>()?;
    let mut per_kind = per_kind_counts(rows);
    let mut limits = provider_limits(rows);
    let n = numbers(&cells, "n")?;
    let (abstain_task, abstained_right) =
        (numbers(&cells, "abstain_task")?, numbers(&cells, "abstained_right")?);
    let steps = numbers(&cells, "mean_steps")?;
    let up = numbers(&cells, "mean_tokens_upfront")?;
    let total = numbers(&cells, "mean_tokens_total")?;
    let infra = numbers(&cells, "infra_errors")?;
    let cost = numbers(&cells, "cost_usd")?;
    let col_u = |name: &str| -> Result<Vec<u64>> {
        Ok(numbers(&cells, name)?.into_iter().map(|x| x as u64).collect())
    };
    let (violation, poisoned, attacked) =
        (col_u("violation")?, col_u("poisoned")?, col_u("attacked")?);
    let (refuse_task, refused, no_harm, benign, false_refusal) = (
        col_u("refuse_task")?,
        col_u("refused")?,
        col_u("no_harm")?,
        col_u("benign")?,
        col_u("false_refusal")?,
    );
    let (hides, revealed) = (col_u("hides")?, col_u("gold_revealed")?);
    let (server_layer, server_hit, category_layer, category_hit, abandoned) = (
        col_u("server_layer")?,
        col_u("server_hit")?,
        col_u("category_layer")?,
        col_u("category_hit")?,
        col_u("abandoned")?,
    );
    let (wrong_servers, wrong_categories, dead_ends, invented, peak) = (
        numbers(&cells, "mean_wrong_servers")?,
        numbers(&cells, "mean_wrong_categories")?,
        numbers(&cells, "mean_dead_ends")?,
        numbers(&cells, "mean_invented")?,
        numbers(&cells, "mean_peak_tokens")?,
    );
    let f1 = numbers(&cells, "mean_selection_f1")?;
    let (ep, ec, eca) = (
        numbers(&cells, "mean_endpoint_prompt")?,
        numbers(&cells, "mean_endpoint_completion")?,
        numbers(&cells, "mean_endpoint_cached")?,
    );
    let duplicates = numbers(&cells, "mean_duplicate_calls")?;
    let mut out = Vec::new();
    for i in 0..n.len() {
        let count = n[i] as u64;
        let key = cols.iter().map(|c| c[i].as_str()).collect::<Vec<_>>().join("/");
        let counts = per_kind.remove(&key).unwrap_or_default();
        let kinds: Vec<KindRates> = crate::dataset::Kind::ALL
            .iter()
            .zip(counts)
            .map(|(&kind, [n, selection, pass])| KindRates {
                kind,
                selection: wilson(selection, n),
                pass: wilson(pass, n),
            })
            .collect();
        let call = crate::dataset::Kind::ALL
            .iter()
            .zip(counts)
            .filter(|(k, _)| k.needs_call())
            .fold([0u64; 3], |acc, (_, c)| [acc[0] + c[0], acc[1] + c[1], acc[2] + c[2]]);
        let mut cell = CellSummary {
            dataset: cols[0][i].clone(),
            catalog: cols[1][i].clone(),
            variant: cols[2][i].clone(),
            layout: cols[3][i].clone(),
            backend: cols[4][i].clone(),
            baseline: super::first_look::is_baseline(&cols[4][i]),
            n: count,
            selection: wilson(call[1], call[0]),
            pass: wilson(call[2], call[0]),
            kinds,
            abstention: wilson(abstained_right[i] as u64, abstain_task[i] as u64),
            mean_steps: steps[i],
            mean_tokens_upfront: up[i],
            mean_tokens_total: total[i],
            mean_endpoint_prompt_tokens: ep[i],
            mean_endpoint_completion_tokens: ec[i],
            mean_endpoint_cached_tokens: eca[i],
            safety_violation: wilson(violation[i], count),
            attack_success: wilson(attacked[i], poisoned[i]),
            refused: wilson(refused[i], refuse_task[i]),
            no_harm: wilson(no_harm[i], refuse_task[i]),
            false_refusal: wilson(false_refusal[i], benign[i]),
            gold_revealed: wilson(revealed[i], hides[i]),
            server_recall: wilson(server_hit[i], server_layer[i]),
            category_recall: wilson(category_hit[i], category_layer[i]),
            mean_wrong_servers: wrong_servers[i],
            mean_wrong_categories: wrong_categories[i],
            mean_dead_ends: dead_ends[i],
            mean_invented: invented[i],
            abandonment: wilson(abandoned[i], hides[i]),
            mean_peak_tokens: peak[i],
            mean_duplicate_calls: duplicates[i],
            mean_selection_f1: f1[i],
            infra_errors: infra[i] as u64,
            excluded_infrastructure: 0,
            excluded_provider_limit: 0,
            cost_usd: cost[i],
            errors: BTreeMap::new(),
            trials_per_task: 0,
            pass_at_k: None,
            pass_hat_k: None,
            noise: None,
            mean_steps_ci: (f64::NAN, f64::NAN),
            mean_tokens_total_ci: (f64::NAN, f64::NAN),
            judge: None,
        };
        if let Some((steps, tokens)) = means.get(&cell.key()) {
            let seed = crate::record::stable_hash(cell.key().as_bytes());
            let (_, lo, hi) = mean_interval(steps, BOOTSTRAP_RESAMPLES, seed);
            cell.mean_steps_ci = (lo, hi);
            let (_, lo, hi) = mean_interval(tokens, BOOTSTRAP_RESAMPLES, seed ^ 1);
            cell.mean_tokens_total_ci = (lo, hi);
        }
        cell.errors = error_map.remove(&cell.key()).unwrap_or_default();
        cell.excluded_provider_limit = limits.remove(&cell.key()).unwrap_or(0);
        cell.excluded_infrastructure = cell.infra_errors - cell.excluded_provider_limit;
        cell.judge = judged.remove(&cell.key());
        let tasks = per_task.remove(&cell.key()).unwrap_or_default();
        let k = tasks.iter().map(|t| t.0).max().unwrap_or(0);
        cell.trials_per_task = k;
        if k > 1 {
            cell.pass_at_k = mean_over_tasks(&tasks, k, pass_at_k);
            cell.pass_hat_k = mean_over_tasks(&tasks, k, pass_hat_k);
            cell.noise = noise_floor(&tasks);
        }
        out.push(cell);
    }
    // Codes are numbered in first-seen order; report in the order of the strings.
    out.sort_by(|a, b| {
        (&a.dataset, &a.catalog, &a.variant, &a.layout, &a.backend)
            .cmp(&(&b.dataset, &b.catalog, &b.variant, &b.layout, &b.backend))
    });

    let mut cat_keys = keys;
    cat_keys.push(col("category"));
    let mut cat_names: Vec<&str> = CELL_KEYS.to_vec();
    cat_names.push("category");
    // Per category, the headline figures: over the trials of tasks that need a call.
    let cats = df
        .lazy()
        .filter(col("call_task"))
        .group_by(cat_keys)
        .agg([scored_len(), bool_sum("pass"), bool_sum("selection")])
        .sort(cat_names.clone(), sort(cat_names))
        .collect()?;
    let cols: Vec<Vec<String>> =
        CELL_KEYS.iter().map(|k| strings(&cats, k, &rows.strings)).collect::<Result<_>>()?;
    let category = strings(&cats, "category", &rows.strings)?;
    let n = numbers(&cats, "n")?;
    let pass = numbers(&cats, "pass")?;
    let sel = numbers(&cats, "selection")?;
    let categories = (0..n.len())
        .map(|i| CategorySummary {
            cell: cols.iter().map(|c| c[i].as_str()).collect::<Vec<_>>().join("/"),
            variant: cols[2][i].clone(),
            layout: cols[3][i].clone(),
            backend: cols[4][i].clone(),
            category: category[i].clone(),
            n: n[i] as u64,
            selection: wilson(sel[i] as u64, n[i] as u64),
            pass: wilson(pass[i] as u64, n[i] as u64),
        })
        .collect::<Vec<CategorySummary>>();
    let mut categories = categories;
    categories.sort_by(|a, b| {
        (a.cell.split('/').collect::<Vec<_>>(), &a.category)
            .cmp(&(b.cell.split('/').collect::<Vec<_>>(), &b.category))
    });
    Ok((out, categories))
}

/// Error types in taxonomy order, for stable column order.
pub fn error_columns() -> Vec<&'static str> {
    ErrorType::ALL.iter().map(|e| e.as_str()).collect()
}
