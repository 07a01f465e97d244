//! The per-tool join: each tool's lint findings (from `lint.json`, written at run time) next to the
//! selection accuracy of the single-call tasks that target it and its precision, recall and F1 over
//! every expected and every made call ([`super::confusion`]), per cell (dataset, variant, layout,
//! backend: a model's figures are never pooled with a baseline's). Oracle trials are left out: they
//! select perfectly by construction.

use super::Lint;
use super::rows::ScoreRows;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct ToolRow {
    pub dataset: String,
    pub variant: String,
    pub layout: String,
    pub backend: String,
    pub tool: String,
    pub block: u64,
    pub warn: u64,
    pub info: u64,
    pub rules: String,
    pub trials: u64,
    pub selected: u64,
    /// True/false positives and false negatives of the tool (calls, over all task kinds).
    pub counts: super::confusion::ToolCounts,
}

impl ToolRow {
    pub fn selection(&self) -> f64 {
        if self.trials == 0 { f64::NAN } else { self.selected as f64 / self.trials as f64 }
    }
}

/// Rows sorted by dataset, variant, layout, backend, tool: every tool a single-call task targets, or
/// that was expected or called at all, in each cell.
pub fn rows(r: &ScoreRows, lint: &Lint) -> Vec<ToolRow> {
    use super::confusion::{tool_codes, tool_key};
    // Counted by the interned codes, then named once per key (distinct codes are distinct names).
    let mut by_codes: rustc_hash::FxHashMap<[u32; 5], (u64, u64)> = Default::default();
    let kept = |i: usize| !r.infra[i] && !matches!(r.str(r.backend[i]), "oracle" | "mcp-oracle");
    for i in (0..r.len()).filter(|&i| r.expected_tool[i] != 0 && kept(i)) {
        let e = by_codes.entry(tool_codes(r, i, r.expected_tool[i])).or_default();
        e.0 += 1;
        e.1 += u64::from(r.selection[i]);
    }
    let mut counts: BTreeMap<super::confusion::ToolKey, (u64, u64)> =
        by_codes.into_iter().map(|(codes, n)| (tool_key(r, codes), n)).collect();
    let mut per_tool = super::confusion::per_tool(r, kept);
    for k in per_tool.keys() {
        counts.entry(k.clone()).or_default();
    }
    counts
        .into_iter()
        .map(|(key, (trials, selected))| {
            let counts = per_tool.remove(&key).unwrap_or_default();
            let [dataset, variant, layout, backend, tool] = key;
            let lint = lint.get(&format!("{dataset}/{variant}")).and_then(|m| m.get(&tool));
            let n = |k: &str| lint.and_then(|l| l[k].as_u64()).unwrap_or(0);
            let rules = lint
                .and_then(|l| l["rules"].as_array())
                .map(|a| a.iter().filter_map(|r| r.as_str()).collect::<Vec<_>>().join(";"))
                .unwrap_or_default();
            ToolRow {
                block: n("block"),
                warn: n("warn"),
                info: n("info"),
                rules,
                dataset,
                variant,
                layout,
                backend,
                tool,
                trials,
                selected,
                counts,
            }
        })
        .collect()
}
