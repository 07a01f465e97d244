//! `lint.json`: the lint findings of every variant catalog a run showed, per tool, in the shape the
//! report joins with each tool's selection accuracy (written once per run, beside the trials).

use super::plan::Prepared;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Lint findings of every variant catalog, by written tool id (a merged tool's findings count for every
/// tool it dispatches to): `{"<dataset>/<variant>": {"<tool id>": {"block": n, "warn": n, "info": n,
/// "rules": [...]}}}`. The report joins them with each tool's selection accuracy.
pub(super) fn lint_variants(p: &Prepared) -> BTreeMap<String, BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for s in &p.suites {
        for cell in &s.cells {
            let key = format!("{}/{}", s.dataset.name, cell.variant);
            if out.contains_key(&key) {
                continue;
            }
            let mut per_tool: BTreeMap<String, (u64, u64, u64, std::collections::BTreeSet<&str>)> =
                BTreeMap::new();
            for f in crate::lint::lint(&cell.shown) {
                let ids: Vec<String> =
                    match cell.shown.get(&f.tool).and_then(|t| t.tool.dispatch.clone()) {
                        Some(d) => d.targets.values().cloned().collect(),
                        None => vec![f.tool.clone()],
                    };
                for id in ids {
                    let e = per_tool.entry(id).or_default();
                    match f.severity {
                        crate::lint::Severity::Block => e.0 += 1,
                        crate::lint::Severity::Warn => e.1 += 1,
                        crate::lint::Severity::Info => e.2 += 1,
                    }
                    e.3.insert(f.rule);
                }
            }
            let v = per_tool
                .into_iter()
                .map(|(id, (b, w, i, r))| {
                    (id, json!({"block": b, "warn": w, "info": i, "rules": r}))
                })
                .collect();
            out.insert(key, v);
        }
    }
    out
}
