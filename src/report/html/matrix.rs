//! The page's confusion matrices, one per cell, for its heatmap: the analysis' entries
//! ([`crate::analysis::confusion::Entry`]: expected tool → tool called, counted over every expected call
//! of the cell's scored trials) grouped by cell, with each tool's precision and recall and their
//! intervals ([`crate::analysis::tools::ToolRow`]; the oracle's cells have none). Nothing is counted
//! here: the page draws what the analysis counted.

use super::super::{ReportData, pct};
use crate::score::stats::Rate;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One cell's matrix.
#[derive(Serialize)]
pub(super) struct CellMatrix {
    /// `dataset/catalog/variant/layout/backend`.
    key: String,
    dataset: String,
    variant: String,
    layout: String,
    backend: String,
    /// `[expected, called, count, [example trial ids]]`, sorted by expected tool, then tool called.
    entries: Vec<Value>,
    /// Per tool: `[tp, fp, fn, precision, recall]`, the rates as "x [low–high]" percentages.
    tools: BTreeMap<String, Value>,
}

fn rate(r: &Rate) -> String {
    if r.rate.is_nan() {
        "n/a".into()
    } else {
        format!("{} [{}–{}]", pct(r.rate), pct(r.low), pct(r.high))
    }
}

/// Every cell's matrix, in the analysis' order (by cell key).
pub(super) fn matrices(data: &ReportData) -> Vec<CellMatrix> {
    let mut out: Vec<CellMatrix> = vec![];
    for e in &data.analysis.confusion {
        if out.last().is_none_or(|m| m.key != e.cell) {
            let [dataset, _, variant, layout, backend] = e.parts.clone();
            out.push(CellMatrix {
                key: e.cell.clone(),
                dataset,
                variant,
                layout,
                backend,
                entries: vec![],
                tools: BTreeMap::new(),
            });
        }
        let examples: Vec<String> =
            e.examples.iter().map(|&r| data.analysis.rows.trial_id(r)).collect();
        let m = out.last_mut().expect("pushed above");
        m.entries.push(json!([e.expected, e.called, e.count, examples]));
    }
    let at: BTreeMap<[&str; 4], usize> = out
        .iter()
        .enumerate()
        .map(|(i, m)| ([&*m.dataset, &*m.variant, &*m.layout, &*m.backend], i))
        .collect();
    let mut tools: Vec<(usize, String, Value)> = vec![];
    for t in &data.analysis.tools {
        let Some(&i) = at.get(&[&*t.dataset, &*t.variant, &*t.layout, &*t.backend]) else {
            continue;
        };
        let c = &t.counts;
        tools.push((
            i,
            t.tool.clone(),
            json!([c.tp, c.fp, c.fn_, rate(&c.precision()), rate(&c.recall())]),
        ));
    }
    for (i, tool, v) in tools {
        out[i].tools.insert(tool, v);
    }
    out
}
