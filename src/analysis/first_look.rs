//! "What to look at first": the few sentences a schema designer reads before any table — the biggest
//! effect of a description variant and of a layout on selection accuracy (with the difference's 95 %
//! interval), the top confusions between tools, and any safety violation. Each names its number and
//! the section that shows it. The oracle is left out: it selects perfectly by construction.

use super::ablation::Effect;
use super::cells::CellSummary;
use super::confusion::Entry;
use super::rows::ScoreRows;
use crate::score::stats::Diff;

/// One sentence and the page section (`id`) it points to. Names in the text are in backticks (as
/// Markdown reads them; [`Finding::parts`] splits them out for the HTML page).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub text: String,
    pub anchor: &'static str,
}

impl Finding {
    /// The text as `(piece, is_a_name)`: the pieces between backticks are names.
    pub fn parts(&self) -> Vec<(String, bool)> {
        self.text.split('`').enumerate().filter(|(_, p)| !p.is_empty()).map(|(i, p)| (p.to_string(), i % 2 == 1)).collect()
    }
}

fn points(d: &Diff) -> String {
    format!("{:+.1} points [{:+.1}, {:+.1}]", d.diff * 100.0, d.low * 100.0, d.high * 100.0)
}

/// The findings, in reading order (an empty run gives none).
/// `top_confusions` are the confusions between tools, most frequent first ([`super::confusion::top_between_tools`]).
pub fn findings(all_cells: &[CellSummary], rows: &ScoreRows, effects: &[Effect], matrix: &[Entry], top_confusions: &[usize]) -> Vec<Finding> {
    let mut out = Vec::new();
    let cells: Vec<&CellSummary> = all_cells.iter().filter(|c| c.backend != "oracle" && c.n > 0).collect();
    // Variants: every non-good variant against good, same dataset, layout and backend.
    let variant = effects
        .iter()
        .filter(|e| e.backend != "oracle" && !e.selection_delta.diff.is_nan())
        .max_by(|a, b| a.selection_delta.diff.abs().total_cmp(&b.selection_delta.diff.abs()).then_with(|| (&b.dataset, &b.layout, &b.backend, &b.variant).cmp(&(&a.dataset, &a.layout, &a.backend, &a.variant))));
    if let Some(e) = variant {
        out.push(Finding {
            text: format!(
                "Descriptions: the `{}` variant changes selection accuracy by {} against `good` ({}, {} layout, {}).",
                e.variant,
                points(&e.selection_delta),
                e.backend,
                e.layout,
                e.dataset
            ),
            anchor: "all-cells",
        });
    }
    // Layouts: every layout against flat, same dataset, variant and backend — paired task by task over
    // the tasks that need a call, as the ablation's effects are (the layouts run the same tasks).
    let per_cell = super::ablation::outcomes(rows);
    let empty = Default::default();
    let mut best: Option<(Diff, &CellSummary, &CellSummary)> = None;
    for c in &cells {
        if c.layout == "flat" {
            continue;
        }
        let Some(flat) = cells.iter().find(|f| f.layout == "flat" && f.dataset == c.dataset && f.variant == c.variant && f.backend == c.backend && f.catalog == c.catalog) else {
            continue;
        };
        let [_, selection] = super::ablation::pairs(per_cell.get(&c.key()).unwrap_or(&empty), per_cell.get(&flat.key()).unwrap_or(&empty));
        let d = super::ablation::effect_of(&selection.0, &selection.1, crate::record::stable_hash(c.key().as_bytes())).delta;
        if !d.diff.is_nan() && best.as_ref().is_none_or(|(b, _, _)| d.diff.abs() > b.diff.abs()) {
            best = Some((d, c, flat));
        }
    }
    if let Some((d, c, _)) = best {
        out.push(Finding {
            text: format!(
                "Layouts: `{}` changes selection accuracy by {} against `flat` ({}, `{}` descriptions, {}).",
                c.layout,
                points(&d),
                c.backend,
                c.variant,
                c.dataset
            ),
            anchor: "all-cells",
        });
    }
    // Confusions between tools (not "nothing called"), in cells other than the oracle's.
    let tool_pairs: Vec<&Entry> = top_confusions.iter().map(|&i| &matrix[i]).take(3).collect();
    for e in tool_pairs {
        let share = crate::score::stats::wilson(e.count, e.row_total);
        out.push(Finding {
            text: format!(
                "Confusion: `{}` took `{}`'s call {} time{} ({:.0} % [{:.0}, {:.0}] of the calls expected of `{}`; {}, `{}`, {}).",
                e.called,
                e.expected,
                e.count,
                if e.count == 1 { "" } else { "s" },
                100.0 * share.rate,
                100.0 * share.low,
                100.0 * share.high,
                e.expected,
                e.parts[4],
                e.parts[2],
                e.parts[3]
            ),
            anchor: "confusions",
        });
    }
    // Safety: any violation in any cell, the worst cell named.
    let violations: u64 = all_cells.iter().map(|c| c.safety_violation.successes).sum();
    let worst = all_cells.iter().filter(|c| c.safety_violation.successes > 0).max_by(|a, b| a.safety_violation.rate.total_cmp(&b.safety_violation.rate));
    out.push(Finding {
        text: match worst {
            Some(w) => format!(
                "Safety: {violations} trial{} executed a forbidden or needlessly destructive tool; worst cell {} / `{}` / {}: {:.1} % [{:.1}, {:.1}].",
                if violations == 1 { "" } else { "s" },
                w.backend,
                w.variant,
                w.layout,
                w.safety_violation.rate * 100.0,
                w.safety_violation.low * 100.0,
                w.safety_violation.high * 100.0
            ),
            None => "Safety: no trial executed a forbidden or needlessly destructive tool.".to_string(),
        },
        anchor: "safety",
    });
    out
}
