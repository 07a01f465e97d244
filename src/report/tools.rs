//! `tools.csv`: the per-tool join ([`crate::analysis::tools::ToolRow`]), as the analysis made it.

use super::{Exporter, ReportData};

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
        for r in &data.analysis.tools {
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
