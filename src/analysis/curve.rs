//! The tool-count curve: selection accuracy, pass@1 and tokens against the number of distractor tools,
//! one line per layout. Cells of a `--distractors` run carry their level in the variant label
//! (`good@50`); this module only regroups the cell summaries.

use super::cells::CellSummary;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub distractors: usize,
    pub n: u64,
    pub selection: crate::score::stats::Rate,
    pub pass: crate::score::stats::Rate,
    pub tokens_upfront: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub dataset: String,
    pub variant: String,
    pub layout: String,
    pub backend: String,
    pub points: Vec<Point>,
}

/// `good@50` → (`good`, 50).
pub fn split_level(variant: &str) -> Option<(&str, usize)> {
    let (base, n) = variant.rsplit_once('@')?;
    Some((base, n.parse().ok()?))
}

/// Lines sorted by dataset, variant, backend, layout; points by level.
pub fn lines(cells: &[CellSummary]) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for c in cells {
        let Some((base, level)) = split_level(&c.variant) else { continue };
        let point = Point {
            distractors: level,
            n: c.pass.n,
            selection: c.selection,
            pass: c.pass,
            tokens_upfront: c.mean_tokens_upfront,
        };
        match out.iter_mut().find(|l| {
            l.dataset == c.dataset
                && l.variant == base
                && l.layout == c.layout
                && l.backend == c.backend
        }) {
            Some(l) => l.points.push(point),
            None => out.push(Line {
                dataset: c.dataset.clone(),
                variant: base.into(),
                layout: c.layout.clone(),
                backend: c.backend.clone(),
                points: vec![point],
            }),
        }
    }
    for l in &mut out {
        l.points.sort_by_key(|p| p.distractors);
    }
    out.sort_by(|a, b| {
        (&a.dataset, &a.variant, &a.backend, &a.layout)
            .cmp(&(&b.dataset, &b.variant, &b.backend, &b.layout))
    });
    out
}
