//! "Which rule matters most": every variant compared with `good` in the same dataset, layout and
//! backend, ranked by its effect on selection accuracy (most harmful first). Computed from the cell
//! summaries only; intervals come from [`crate::score::stats::newcombe_diff`].

use super::summary::CellSummary;
use crate::catalog::variant::Degrade;
use crate::score::stats::{Diff, newcombe_diff};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Effect {
    pub dataset: String,
    pub layout: String,
    pub backend: String,
    pub variant: String,
    /// The lint rule an `op:` variant violates (empty for other variants).
    pub rule: String,
    pub n: u64,
    pub selection: f64,
    pub selection_delta: Diff,
    pub pass: f64,
    pub pass_delta: Diff,
    /// 1 = the largest drop in selection accuracy within its dataset/layout/backend.
    pub rank: usize,
}

/// Effects of every non-`good` variant, grouped by dataset/layout/backend, ranked within each group.
pub fn effects(cells: &[CellSummary]) -> Vec<Effect> {
    let mut out = Vec::new();
    let mut groups: Vec<(&str, &str, &str)> = cells.iter().map(|c| (c.dataset.as_str(), c.layout.as_str(), c.backend.as_str())).collect();
    groups.sort();
    groups.dedup();
    for (dataset, layout, backend) in groups {
        let in_group: Vec<&CellSummary> = cells.iter().filter(|c| c.dataset == dataset && c.layout == layout && c.backend == backend).collect();
        let Some(good) = in_group.iter().find(|c| c.variant == "good") else { continue };
        let mut group: Vec<Effect> = in_group
            .iter()
            .filter(|c| c.variant != "good")
            .map(|c| Effect {
                dataset: dataset.into(),
                layout: layout.into(),
                backend: backend.into(),
                variant: c.variant.clone(),
                rule: c.variant.strip_prefix("op:").and_then(Degrade::from_name).map(|d| d.rule().to_string()).unwrap_or_default(),
                n: c.n,
                selection: c.selection.rate,
                selection_delta: newcombe_diff(&c.selection, &good.selection),
                pass: c.pass.rate,
                pass_delta: newcombe_diff(&c.pass, &good.pass),
                rank: 0,
            })
            .collect();
        group.sort_by(|a, b| {
            a.selection_delta.diff.total_cmp(&b.selection_delta.diff).then(a.pass_delta.diff.total_cmp(&b.pass_delta.diff)).then(a.variant.cmp(&b.variant))
        });
        for (i, e) in group.iter_mut().enumerate() {
            e.rank = i + 1;
        }
        out.extend(group);
    }
    out
}

/// `ablation.csv`.
pub struct AblationCsv;

impl super::Exporter for AblationCsv {
    fn file_name(&self) -> &'static str {
        "ablation.csv"
    }

    fn render(&self, data: &super::ReportData) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "dataset", "layout", "backend", "rank", "variant", "rule", "n", "selection_accuracy", "selection_delta", "selection_delta_low",
            "selection_delta_high", "pass_at_1", "pass_delta", "pass_delta_low", "pass_delta_high",
        ])?;
        let f = |x: f64| super::fixed_or_empty(x, 6);
        for e in effects(&data.cells) {
            w.write_record([
                e.dataset.clone(),
                e.layout.clone(),
                e.backend.clone(),
                e.rank.to_string(),
                e.variant.clone(),
                e.rule.clone(),
                e.n.to_string(),
                f(e.selection),
                f(e.selection_delta.diff),
                f(e.selection_delta.low),
                f(e.selection_delta.high),
                f(e.pass),
                f(e.pass_delta.diff),
                f(e.pass_delta.low),
                f(e.pass_delta.high),
            ])?;
        }
        Ok(w.into_inner()?)
    }
}
