//! `ablation.csv`: every variant's paired effect against `good` ([`crate::analysis::ablation::Effect`]), as
//! the analysis ranked them.

use super::{Exporter, ReportData};

/// `ablation.csv`.
pub struct AblationCsv;

impl Exporter for AblationCsv {
    fn file_name(&self) -> &'static str {
        "ablation.csv"
    }

    fn render(&self, data: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "dataset",
            "layout",
            "backend",
            "rank",
            "variant",
            "rule",
            "n",
            "tasks",
            "selection_accuracy",
            "selection_delta",
            "selection_delta_low",
            "selection_delta_high",
            "selection_p_value",
            "selection_p_holm",
            "pass_at_1",
            "pass_delta",
            "pass_delta_low",
            "pass_delta_high",
            "pass_p_value",
            "pass_p_holm",
            "selection_test",
            "pass_test",
        ])?;
        let f = |x: f64| super::fixed_or_empty(x, 6);
        for e in &data.analysis.effects {
            w.write_record([
                e.dataset.clone(),
                e.layout.clone(),
                e.backend.clone(),
                e.rank.to_string(),
                e.variant.clone(),
                e.rule.clone(),
                e.n.to_string(),
                e.tasks.to_string(),
                f(e.selection),
                f(e.selection_delta.diff),
                f(e.selection_delta.low),
                f(e.selection_delta.high),
                f(e.selection_effect.p_value),
                f(e.selection_effect.p_holm),
                f(e.pass),
                f(e.pass_delta.diff),
                f(e.pass_delta.low),
                f(e.pass_delta.high),
                f(e.pass_effect.p_value),
                f(e.pass_effect.p_holm),
                e.selection_effect.method.as_str().to_string(),
                e.pass_effect.method.as_str().to_string(),
            ])?;
        }
        Ok(w.into_inner()?)
    }
}
