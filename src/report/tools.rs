//! The per-tool join: each tool's lint findings (from `lint.json`, written at run time) next to the
//! selection accuracy of the single-call tasks that target it and its precision, recall and F1 over
//! every expected and every made call ([`super::confusion`]), per cell (dataset, variant, layout,
//! backend: a model's figures are never pooled with a baseline's). Oracle trials are left out: they
//! select perfectly by construction.

use super::{Exporter, ReportData};
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
pub fn rows(data: &ReportData) -> Vec<ToolRow> {
    let mut counts: BTreeMap<super::confusion::ToolKey, (u64, u64)> = BTreeMap::new();
    let r = &data.rows;
    let kept = |i: usize| !r.infra[i] && r.str(r.backend[i]) != "oracle";
    for i in (0..r.len()).filter(|&i| r.expected_tool[i] != 0 && kept(i)) {
        let e = counts.entry([r.dataset[i], r.variant[i], r.layout[i], r.backend[i], r.expected_tool[i]].map(|c| r.str(c).to_string())).or_default();
        e.0 += 1;
        e.1 += u64::from(r.selection[i]);
    }
    let mut per_tool = super::confusion::per_tool(r, kept);
    for k in per_tool.keys() {
        counts.entry(k.clone()).or_default();
    }
    counts
        .into_iter()
        .map(|(key, (trials, selected))| {
            let counts = per_tool.remove(&key).unwrap_or_default();
            let [dataset, variant, layout, backend, tool] = key;
            let lint = data.lint.get(&format!("{dataset}/{variant}")).and_then(|m| m.get(&tool));
            let n = |k: &str| lint.and_then(|l| l[k].as_u64()).unwrap_or(0);
            let rules = lint
                .and_then(|l| l["rules"].as_array())
                .map(|a| a.iter().filter_map(|r| r.as_str()).collect::<Vec<_>>().join(";"))
                .unwrap_or_default();
            ToolRow { block: n("block"), warn: n("warn"), info: n("info"), rules, dataset, variant, layout, backend, tool, trials, selected, counts }
        })
        .collect()
}

/// `tools.csv`.
pub struct ToolsCsv;

impl Exporter for ToolsCsv {
    fn file_name(&self) -> &'static str {
        "tools.csv"
    }

    fn render(&self, data: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "dataset",
            "variant",
            "layout",
            "backend",
            "tool",
            "lint_block",
            "lint_warn",
            "lint_info",
            "lint_rules",
            "single_task_trials",
            "selected",
            "selection_accuracy",
            "true_positives",
            "false_positives",
            "false_negatives",
            "precision",
            "precision_low",
            "precision_high",
            "recall",
            "recall_low",
            "recall_high",
            "f1",
        ])?;
        for r in rows(data) {
            let sel = r.selection();
            let (p, rc) = (r.counts.precision(), r.counts.recall());
            let f = |x: f64| super::fixed_or_empty(x, 6);
            w.write_record([
                r.dataset.clone(),
                r.variant.clone(),
                r.layout.clone(),
                r.backend.clone(),
                r.tool.clone(),
                r.block.to_string(),
                r.warn.to_string(),
                r.info.to_string(),
                r.rules.clone(),
                r.trials.to_string(),
                r.selected.to_string(),
                super::fixed_or_empty(sel, 6),
                r.counts.tp.to_string(),
                r.counts.fp.to_string(),
                r.counts.fn_.to_string(),
                f(p.rate),
                f(p.low),
                f(p.high),
                f(rc.rate),
                f(rc.low),
                f(rc.high),
                f(r.counts.f1()),
            ])?;
        }
        Ok(w.into_inner()?)
    }
}
