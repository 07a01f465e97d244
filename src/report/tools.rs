//! The per-tool join: each tool's lint findings (from `lint.json`, written at run time) next to the
//! selection accuracy of the single-call tasks that target it, per variant. Oracle trials are left out:
//! they select perfectly by construction.

use super::{Exporter, ReportData};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct ToolRow {
    pub dataset: String,
    pub variant: String,
    pub tool: String,
    pub block: u64,
    pub warn: u64,
    pub info: u64,
    pub rules: String,
    pub trials: u64,
    pub selected: u64,
}

impl ToolRow {
    pub fn selection(&self) -> f64 {
        if self.trials == 0 { f64::NAN } else { self.selected as f64 / self.trials as f64 }
    }
}

/// Rows sorted by dataset, variant, tool.
pub fn rows(data: &ReportData) -> Vec<ToolRow> {
    let mut counts: BTreeMap<(String, String, String), (u64, u64)> = BTreeMap::new();
    let r = &data.rows;
    for i in (0..r.len()).filter(|&i| r.expected_tool[i] != 0 && !r.infra[i] && r.str(r.backend[i]) != "oracle") {
        let e = counts.entry((r.str(r.dataset[i]).to_string(), r.str(r.variant[i]).to_string(), r.str(r.expected_tool[i]).to_string())).or_default();
        e.0 += 1;
        e.1 += u64::from(r.selection[i]);
    }
    counts
        .into_iter()
        .map(|((dataset, variant, tool), (trials, selected))| {
            let lint = data.lint.get(&format!("{dataset}/{variant}")).and_then(|m| m.get(&tool));
            let n = |k: &str| lint.and_then(|l| l[k].as_u64()).unwrap_or(0);
            let rules = lint
                .and_then(|l| l["rules"].as_array())
                .map(|a| a.iter().filter_map(|r| r.as_str()).collect::<Vec<_>>().join(";"))
                .unwrap_or_default();
            ToolRow { block: n("block"), warn: n("warn"), info: n("info"), rules, dataset, variant, tool, trials, selected }
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
        w.write_record(["dataset", "variant", "tool", "lint_block", "lint_warn", "lint_info", "lint_rules", "single_task_trials", "selected", "selection_accuracy"])?;
        for r in rows(data) {
            let sel = r.selection();
            w.write_record([
                r.dataset.clone(),
                r.variant.clone(),
                r.tool.clone(),
                r.block.to_string(),
                r.warn.to_string(),
                r.info.to_string(),
                r.rules.clone(),
                r.trials.to_string(),
                r.selected.to_string(),
                super::fixed_or_empty(sel, 6),
            ])?;
        }
        Ok(w.into_inner()?)
    }
}
