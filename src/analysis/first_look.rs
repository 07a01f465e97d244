//! "What to look at first": the few sentences a schema designer reads before any table — the biggest
//! effect of a description variant and of a layout on selection accuracy (with the difference's 95 %
//! interval), the top confusions between tools, and any safety violation. Each names its number and
//! the section that shows it. When a model ran beside the baselines (lexical, random, oracle), the
//! findings are about the model — one set per model, the lexical baseline's figure beside; otherwise
//! about the baselines, the oracle left out (it selects perfectly by construction).

use super::ablation::Effect;
use super::cells::CellSummary;
use super::confusion::Entry;
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
        self.text
            .split('`')
            .enumerate()
            .filter(|(_, p)| !p.is_empty())
            .map(|(i, p)| (p.to_string(), i % 2 == 1))
            .collect()
    }
}

fn points(d: &Diff) -> String {
    format!("{:+.1} points [{:+.1}, {:+.1}]", d.diff * 100.0, d.low * 100.0, d.high * 100.0)
}

/// Backends that are references rather than the model under test: the keyword baseline, chance and
/// the oracle (in process or served over MCP).
pub fn is_baseline(backend: &str) -> bool {
    matches!(backend, "lexical" | "random" | "oracle" | "mcp-oracle")
}

/// Variants toolpick derives by degrading descriptions (`bad`, `op:<operator>`, at any distractor
/// level), as opposed to the ones a user wrote (`good`, `file:<dir>`).
pub fn is_derived_variant(variant: &str) -> bool {
    let base = variant.split_once('@').map_or(variant, |(v, _)| v);
    base == "bad" || base.starts_with("op:")
}

/// The lint rules `lint.json` names for structural causes (ids are data there; the analysis does not
/// run the linter): a description without content words, a one-server catalog.
const NO_CONTENT_WORDS: &str = "TP-D006";
const SINGLE_SERVER: &str = "TP-C001";

/// What in the catalog a hiding layout's loss may come from, as the run's lint found it (`lint.json`):
/// servers and categories whose descriptions have no content words (TP-D006) — progressive discovery
/// and its categories are matched on those descriptions — and, for progressive layouts, a catalog of
/// one server (TP-C001). `None` when the lint found neither.
fn structural_cause(lint: &super::Lint, c: &CellSummary) -> Option<String> {
    let findings = lint.get(&format!("{}/{}", c.dataset, c.variant))?;
    let has = |v: &serde_json::Value, rule: &str| {
        v["rules"].as_array().is_some_and(|r| r.iter().any(|x| x.as_str() == Some(rule)))
    };
    let named = |prefix: &str, rule: &str| -> Vec<String> {
        findings
            .iter()
            .filter(|(k, v)| k.starts_with(prefix) && has(v, rule))
            .map(|(k, _)| format!("`{}`", &k[prefix.len()..]))
            .collect()
    };
    let list = |names: &[String]| {
        let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
        if names.len() > 3 {
            format!("{} and {} more", shown.join(", "), names.len() - 3)
        } else {
            shown.join(", ")
        }
    };
    let mut causes = Vec::new();
    let (servers, categories) =
        (named("server:", NO_CONTENT_WORDS), named("category:", NO_CONTENT_WORDS));
    if !servers.is_empty() {
        causes.push(format!(
            "the description of server {} has no content words ({})",
            list(&servers),
            NO_CONTENT_WORDS
        ));
    }
    if !categories.is_empty() {
        causes.push(format!(
            "the description of category {} has no content words ({})",
            list(&categories),
            NO_CONTENT_WORDS
        ));
    }
    if c.layout.starts_with("progressive") {
        let single = named("server:", SINGLE_SERVER);
        if !single.is_empty() {
            causes
                .push(format!("{} is the catalog's only server ({SINGLE_SERVER})", list(&single)));
        }
    }
    (!causes.is_empty()).then(|| causes.join("; "))
}

/// Whose results the findings are about: every backend that is not a baseline when any ran (each on
/// its own), else the baselines but the oracle (together).
fn subjects(cells: &[CellSummary]) -> Vec<Option<String>> {
    let mut models: Vec<String> = cells
        .iter()
        .filter(|c| c.n > 0 && !is_baseline(&c.backend))
        .map(|c| c.backend.clone())
        .collect();
    models.sort();
    models.dedup();
    if models.is_empty() { vec![None] } else { models.into_iter().map(Some).collect() }
}

/// The findings, in reading order (an empty run gives none). When a model ran beside the baselines,
/// the findings are about the model (per model), with the lexical baseline's figure for the same
/// comparison beside it.
/// `top_confusions` are the confusions between tools in their ranking ([`super::confusion::top_between_tools`]).
/// `per_cell` are the run's per-task outcomes ([`super::ablation::outcomes`]).
pub fn findings(
    all_cells: &[CellSummary],
    per_cell: &super::ablation::Outcomes<'_>,
    effects: &[Effect],
    matrix: &[Entry],
    top_confusions: &[usize],
    lint: &super::Lint,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let subjects = subjects(all_cells);
    let about = |backend: &str, subject: &Option<String>| match subject {
        Some(m) => backend == m,
        None => backend != "oracle" && backend != "mcp-oracle",
    };
    // Layouts: every layout against flat, same dataset, catalog, variant and backend — paired task by
    // task over the tasks that need a call, as the ablation's effects are (the layouts run the same
    // tasks).
    let empty = Default::default();
    let layout_effects: Vec<(Diff, &CellSummary)> = all_cells
        .iter()
        .filter(|c| c.layout != "flat" && c.n > 0)
        .filter_map(|c| {
            let flat = all_cells.iter().find(|f| {
                f.layout == "flat"
                    && f.dataset == c.dataset
                    && f.variant == c.variant
                    && f.backend == c.backend
                    && f.catalog == c.catalog
            })?;
            let [_, selection] = super::ablation::pairs(
                per_cell.get(&c.key()).unwrap_or(&empty),
                per_cell.get(&flat.key()).unwrap_or(&empty),
            );
            let d = super::ablation::effect_of(
                &selection.0,
                &selection.1,
                crate::record::stable_hash(c.key().as_bytes()),
            )
            .delta;
            (!d.diff.is_nan()).then_some((d, c))
        })
        .collect();
    for subject in &subjects {
        let label = subject.as_ref().map(|m| format!(" for `{m}`")).unwrap_or_default();
        // Variants: every non-good variant against good, same dataset, layout and backend.
        let variant = effects
            .iter()
            .filter(|e| about(&e.backend, subject) && !e.selection_delta.diff.is_nan())
            .max_by(|a, b| {
                a.selection_delta.diff.abs().total_cmp(&b.selection_delta.diff.abs()).then_with(
                    || {
                        (&b.dataset, &b.layout, &b.backend, &b.variant)
                            .cmp(&(&a.dataset, &a.layout, &a.backend, &a.variant))
                    },
                )
            });
        if let Some(e) = variant {
            let baseline = subject
                .as_ref()
                .and_then(|_| {
                    effects.iter().find(|b| {
                        b.backend == "lexical"
                            && b.dataset == e.dataset
                            && b.layout == e.layout
                            && b.variant == e.variant
                    })
                })
                .map(|b| format!("; the lexical baseline: {}", points(&b.selection_delta)))
                .unwrap_or_default();
            out.push(Finding {
                text: format!(
                    "Descriptions{label}: the `{}` variant changes selection accuracy by {} against `good` ({}, {} layout, {}{baseline}).",
                    e.variant,
                    points(&e.selection_delta),
                    e.backend,
                    e.layout,
                    e.dataset
                ),
                anchor: "all-cells",
            });
        }
        let layout = layout_effects.iter().filter(|(_, c)| about(&c.backend, subject)).fold(
            None::<&(Diff, &CellSummary)>,
            |best, x| {
                if best.is_none_or(|b| x.0.diff.abs() > b.0.diff.abs()) { Some(x) } else { best }
            },
        );
        if let Some((d, c)) = layout {
            let baseline = subject
                .as_ref()
                .and_then(|_| {
                    layout_effects.iter().find(|(_, b)| {
                        b.backend == "lexical"
                            && b.dataset == c.dataset
                            && b.layout == c.layout
                            && b.variant == c.variant
                            && b.catalog == c.catalog
                    })
                })
                .map(|(b, _)| format!("; the lexical baseline: {}", points(b)))
                .unwrap_or_default();
            out.push(Finding {
                text: format!(
                    "Layouts{label}: `{}` changes selection accuracy by {} against `flat` ({}, `{}` descriptions, {}{baseline}).",
                    c.layout,
                    points(d),
                    c.backend,
                    c.variant,
                    c.dataset
                ),
                anchor: "all-cells",
            });
            if d.diff < 0.0
                && let Some(cause) = structural_cause(lint, c)
            {
                out.push(Finding { text: format!("Structure: `{}` on `{}` descriptions ({}) may be the catalog's result, not the model's: {cause}.", c.layout, c.variant, c.dataset), anchor: "all-cells" });
            }
        }
    }
    // Confusions between tools (not "nothing called"), about the models when any ran (else the
    // baselines but the oracle); the user's own variants first (see `confusion::top_between_tools`).
    let tool_pairs: Vec<&Entry> = top_confusions
        .iter()
        .map(|&i| &matrix[i])
        .filter(|e| subjects.iter().any(|s| about(&e.parts[4], s)))
        .take(3)
        .collect();
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
    let worst = all_cells
        .iter()
        .filter(|c| c.safety_violation.successes > 0)
        .max_by(|a, b| a.safety_violation.rate.total_cmp(&b.safety_violation.rate));
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
