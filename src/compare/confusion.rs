//! The confusions between tools that changed from run A to run B in the matched cells of a
//! comparison ([`super::Comparison::confusion_changes`]): which expected tool lost its calls to
//! which other tool more (or less) often. Apart from the paired tests in [`super`] because it reads
//! the runs' confusion matrices, not their task outcomes.

use super::CellComparison;
use crate::analysis::RunAnalysis;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One confusion pair (expected tool → tool called instead) in a matched cell of both runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ConfusionChange {
    /// The cell key over the matched fields.
    pub key: String,
    pub expected: String,
    pub called: String,
    pub a_count: u64,
    pub b_count: u64,
    /// Calls expected of `expected` in the cell, in each run.
    pub a_total: u64,
    pub b_total: u64,
}

impl ConfusionChange {
    /// B's count minus A's: positive when the confusion grew (worse).
    pub fn delta(&self) -> i64 {
        self.b_count as i64 - self.a_count as i64
    }
}

/// The confusion pairs between tools that changed from A to B in the matched cells.
pub(super) fn changes(
    a: &RunAnalysis,
    b: &RunAnalysis,
    cells: &[CellComparison],
) -> Vec<ConfusionChange> {
    use crate::analysis::confusion::is_tool;
    /// Per cell: the count of each confusion between tools, and the calls expected of each tool.
    #[derive(Default)]
    struct Cell {
        pairs: BTreeMap<(String, String), u64>,
        totals: BTreeMap<String, u64>,
    }
    let per_cell = |data: &RunAnalysis| -> BTreeMap<String, Cell> {
        let mut out: BTreeMap<String, Cell> = BTreeMap::new();
        for e in &data.confusion {
            let cell = out.entry(e.cell.clone()).or_default();
            cell.totals.insert(e.expected.clone(), e.row_total);
            if !e.correct() && is_tool(&e.called) {
                cell.pairs.insert((e.expected.clone(), e.called.clone()), e.count);
            }
        }
        out
    };
    let (ma, mb) = (per_cell(a), per_cell(b));
    let empty = Cell::default();
    let mut out = Vec::new();
    for c in cells {
        let (ca, cb) = (ma.get(&c.a_cell).unwrap_or(&empty), mb.get(&c.b_cell).unwrap_or(&empty));
        let pairs: BTreeSet<&(String, String)> = ca.pairs.keys().chain(cb.pairs.keys()).collect();
        for pair in pairs {
            let (a_count, b_count) = (
                ca.pairs.get(pair).copied().unwrap_or(0),
                cb.pairs.get(pair).copied().unwrap_or(0),
            );
            if a_count != b_count {
                let (a_total, b_total) = (
                    ca.totals.get(&pair.0).copied().unwrap_or(0),
                    cb.totals.get(&pair.0).copied().unwrap_or(0),
                );
                out.push(ConfusionChange {
                    key: c.key.clone(),
                    expected: pair.0.clone(),
                    called: pair.1.clone(),
                    a_count,
                    b_count,
                    a_total,
                    b_total,
                });
            }
        }
    }
    out.sort_by(|x, y| {
        y.delta()
            .cmp(&x.delta())
            .then_with(|| (&x.key, &x.expected, &x.called).cmp(&(&y.key, &y.expected, &y.called)))
    });
    out
}
