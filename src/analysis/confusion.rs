//! The confusion view: per cell, expected tool → tool called, counted over every expected call of the
//! scored trials ([`crate::score::confusion`] pairs them), and per-tool precision, recall and F1.
//!
//! A tool is *relevant* where a task expects it and *predicted* where it is called: an expected call
//! taken by its own tool is a true positive of that tool; taken by another tool (or by nothing), a false
//! negative of the expected tool and a false positive of the tool called; an extra call (one that
//! answers no expected call: abstain tasks, one call too many) a false positive of its tool.
//! `confusion.csv` holds the whole matrix; the HTML shows the top confusions with links to trials.

use super::rows::ScoreRows;
use crate::score::stats::{Rate, wilson};
use std::collections::BTreeMap;

/// Trials kept per entry as examples (links in the HTML, ids in the CSV).
pub const EXAMPLES: usize = 5;

/// One entry of a cell's matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `dataset/catalog/variant/layout/backend`.
    pub cell: String,
    /// The cell's dataset, catalog, variant, layout and backend.
    pub parts: [String; 5],
    pub expected: String,
    pub called: String,
    pub count: u64,
    /// Expected calls of `expected` in the cell (the row's total).
    pub row_total: u64,
    /// Rows (trial indices) of the first trials with this pair, in matrix order.
    pub examples: Vec<usize>,
}

impl Entry {
    pub fn correct(&self) -> bool {
        self.expected == self.called
    }
}

/// Every cell's matrix, sorted by cell, expected tool, tool called.
pub fn matrix(rows: &ScoreRows) -> Vec<Entry> {
    // Counted by the interned codes (a million pairs, a few thousand entries), then named: building
    // the names per pair was most of the analysis' time at scale.
    type Counted = (u64, Vec<usize>);
    let mut by_codes: rustc_hash::FxHashMap<([u32; 5], u32, u32), Counted> = Default::default();
    for &[row, e, c] in &rows.pairs {
        let entry = by_codes.entry((rows.cell_codes(row as usize), e, c)).or_default();
        entry.0 += 1;
        if entry.1.len() < EXAMPLES {
            entry.1.push(row as usize);
        }
    }
    let mut counts: BTreeMap<(String, String, String), Counted> = BTreeMap::new();
    for ((cell, e, c), (n, examples)) in by_codes {
        // Two cells whose names join to one key share it (see `ScoreRows::per_cell_means`): their
        // counts add up and the examples are the first rows of both, in matrix order.
        let key = (rows.key_of(cell), rows.str(e).to_string(), rows.str(c).to_string());
        let entry = counts.entry(key).or_default();
        entry.0 += n;
        entry.1.extend(examples);
        entry.1.sort_unstable();
        entry.1.truncate(EXAMPLES);
    }
    let mut totals: BTreeMap<(String, String), u64> = BTreeMap::new();
    for ((cell, e, _), (n, _)) in &counts {
        *totals.entry((cell.clone(), e.clone())).or_default() += n;
    }
    counts
        .into_iter()
        .map(|((cell, expected, called), (count, examples))| {
            let row_total = totals[&(cell.clone(), expected.clone())];
            let r = examples[0];
            let parts = [
                rows.dataset[r],
                rows.catalog[r],
                rows.variant[r],
                rows.layout[r],
                rows.backend[r],
            ]
            .map(|c| rows.str(c).to_string());
            Entry { cell, parts, expected, called, count, row_total, examples }
        })
        .collect()
}

/// The order of the top confusions: the models' before the baselines', the user's own variants before
/// derived ones (`bad`, `op:` — a `bad` variant's merged tools confuse by construction), then most
/// frequent first, ties by the expected tool's calls (fewer first: the larger share), then by cell,
/// expected, called (stable).
fn top_order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    use super::first_look::{is_baseline, is_derived_variant};
    let rank = |e: &Entry| {
        (
            is_baseline(&e.parts[4]),
            is_derived_variant(&e.parts[2]),
            std::cmp::Reverse(e.count),
            e.row_total,
        )
    };
    rank(a)
        .cmp(&rank(b))
        .then_with(|| (&a.cell, &a.expected, &a.called).cmp(&(&b.cell, &b.expected, &b.called)))
}

/// The off-diagonal entries (a tool that took another's call), in [`top_order`].
pub fn top(entries: &[Entry], n: usize) -> Vec<&Entry> {
    let mut off: Vec<&Entry> = entries.iter().filter(|e| !e.correct()).collect();
    off.sort_by(|a, b| top_order(a, b));
    off.truncate(n);
    off
}

/// The confusions between tools ([`is_tool`]: not "nothing called") outside the oracle's cells, in
/// [`top`]'s order, as positions in `entries`: the page's top list and the first look read them.
pub fn top_between_tools(entries: &[Entry]) -> Vec<usize> {
    let mut off: Vec<usize> = (0..entries.len())
        .filter(|&i| {
            !entries[i].correct()
                && is_tool(&entries[i].called)
                && !matches!(entries[i].parts[4].as_str(), "oracle" | "mcp-oracle")
        })
        .collect();
    off.sort_by(|&a, &b| top_order(&entries[a], &entries[b]));
    off
}

/// A tool's true positives, false positives and false negatives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ToolCounts {
    pub tp: u64,
    pub fp: u64,
    pub fn_: u64,
}

impl ToolCounts {
    pub fn precision(&self) -> Rate {
        wilson(self.tp, self.tp + self.fp)
    }
    pub fn recall(&self) -> Rate {
        wilson(self.tp, self.tp + self.fn_)
    }
    /// 2·tp / (2·tp + fp + fn); undefined (NaN) for a tool neither expected nor called.
    pub fn f1(&self) -> f64 {
        let d = 2 * self.tp + self.fp + self.fn_;
        if d == 0 { f64::NAN } else { 2.0 * self.tp as f64 / d as f64 }
    }
}

/// `true` for the matrix's names that are not tools (nothing, invented, unreadable).
pub fn is_tool(name: &str) -> bool {
    !name.starts_with('(')
}

/// A tool in one cell: `[dataset, variant, layout, backend, tool]` (per-tool figures are per cell, so
/// a model's are never pooled with a baseline's or another layout's).
pub type ToolKey = [String; 5];

/// Per tool and cell ([`ToolKey`]): the counts over the rows `keep` accepts.
pub fn per_tool(rows: &ScoreRows, keep: impl Fn(usize) -> bool) -> BTreeMap<ToolKey, ToolCounts> {
    // Counted by the interned codes, then named once per key (distinct codes are distinct names).
    let mut out: rustc_hash::FxHashMap<[u32; 5], ToolCounts> = Default::default();
    let key = |row: usize, tool: u32| tool_codes(rows, row, tool);
    for &[row, e, c] in &rows.pairs {
        let row = row as usize;
        if !keep(row) {
            continue;
        }
        if e == c {
            out.entry(key(row, e)).or_default().tp += 1;
            continue;
        }
        out.entry(key(row, e)).or_default().fn_ += 1;
        if is_tool(rows.str(c)) {
            out.entry(key(row, c)).or_default().fp += 1;
        }
    }
    for &[row, t] in &rows.extras {
        let row = row as usize;
        if keep(row) && is_tool(rows.str(t)) {
            out.entry(key(row, t)).or_default().fp += 1;
        }
    }
    out.into_iter().map(|(codes, counts)| (tool_key(rows, codes), counts)).collect()
}

/// A row's cell and a tool, as codes: `[dataset, variant, layout, backend, tool]`.
pub(super) fn tool_codes(rows: &ScoreRows, row: usize, tool: u32) -> [u32; 5] {
    [rows.dataset[row], rows.variant[row], rows.layout[row], rows.backend[row], tool]
}

/// The [`ToolKey`] of [`tool_codes`].
pub(super) fn tool_key(rows: &ScoreRows, codes: [u32; 5]) -> ToolKey {
    codes.map(|c| rows.str(c).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        variant: &str,
        backend: &str,
        expected: &str,
        called: &str,
        count: u64,
        row_total: u64,
    ) -> Entry {
        let parts = ["d", "c", variant, "flat", backend].map(String::from);
        Entry {
            cell: parts.join("/"),
            parts,
            expected: expected.into(),
            called: called.into(),
            count,
            row_total,
            examples: vec![0],
        }
    }

    #[test]
    fn the_top_confusions_put_models_and_the_users_own_variants_first_then_count_then_the_expected_tools_calls()
     {
        // Every combination of (baseline?, derived variant?) with counts that would put it first by
        // count alone: the order is models before baselines, own variants before derived ones.
        let mut entries = vec![];
        for (backend, variant, count) in [
            ("lexical", "bad", 9),
            ("lexical", "good", 8),
            ("gpt-x", "op:merge_siblings", 7),
            ("gpt-x", "good", 1),
            ("gpt-x", "file:mine", 1),
            ("replay:r", "bad@20", 5),
        ] {
            entries.push(entry(variant, backend, "s/c/a", "s/c/b", count, 10));
        }
        entries.push(entry("good", "gpt-x", "s/c/a", "s/c/a", 50, 60)); // a correct pair is never a confusion
        let order: Vec<(String, String)> = top(&entries, usize::MAX)
            .iter()
            .map(|e| (e.parts[4].clone(), e.parts[2].clone()))
            .collect();
        let want = [
            ("gpt-x", "file:mine"),
            ("gpt-x", "good"),
            ("gpt-x", "op:merge_siblings"),
            ("replay:r", "bad@20"),
            ("lexical", "good"),
            ("lexical", "bad"),
        ];
        assert_eq!(order, want.map(|(b, v)| (b.to_string(), v.to_string())));
        // Ties on count: the expected tool with fewer calls (a larger share) first, then by name.
        let tied = [
            entry("good", "gpt-x", "s/c/z", "s/c/y", 2, 40),
            entry("good", "gpt-x", "s/c/a", "s/c/y", 2, 40),
            entry("good", "gpt-x", "s/c/m", "s/c/y", 2, 2),
        ];
        let order: Vec<&str> = top(&tied, 2).iter().map(|e| e.expected.as_str()).collect();
        assert_eq!(order, ["s/c/m", "s/c/a"]);
    }
}
