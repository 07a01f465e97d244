//! The history trend charts: each current cell's headline metrics over the last runs recorded with
//! `--history` ([`crate::analysis::history`]), drawn as SVG paths.

use super::curve::Chart;
use crate::analysis::cells::CellSummary;
use crate::analysis::history::{HistoryCell, HistoryEntry};

const COLORS: [&str; 8] = ["#6c8ebf", "#d6893b", "#82b366", "#b85450", "#9673a6", "#3b9e9e", "#7f7f7f", "#c9a227"];
/// Points per chart: the most recent runs.
pub const MAX_POINTS: usize = 30;
/// Lines per chart: the first cells of the current run.
pub const MAX_LINES: usize = 8;

/// A headline metric of a cell: (value, low, high).
type Metric = fn(&HistoryCell) -> (f64, f64, f64);

/// One chart per headline metric: each current cell's value over the last runs, with 95 % whiskers.
pub fn charts(history: &[HistoryEntry], current: &[CellSummary]) -> Vec<Chart> {
    let recent = &history[history.len().saturating_sub(MAX_POINTS)..];
    if recent.len() < 2 {
        return Vec::new();
    }
    let x = |i: usize| 50.0 + 400.0 * i as f64 / (recent.len() - 1) as f64;
    let y = |r: f64| 20.0 + 160.0 * (1.0 - r);
    let ticks: Vec<(f64, String)> = recent
        .iter()
        .enumerate()
        .filter(|(i, _)| recent.len() <= 8 || i % recent.len().div_ceil(8) == 0 || *i == recent.len() - 1)
        .map(|(i, e)| (x(i), format!("{}{}", &e.date_utc.get(4..8).unwrap_or(""), e.git_sha.as_deref().map(|s| format!(" {}", &s[..s.len().min(7)])).unwrap_or_default())))
        .collect();
    let metrics: [(&str, Metric); 2] =
        [("pass@1", |c| (c.pass, c.pass_low, c.pass_high)), ("selection accuracy", |c| (c.selection, c.selection_low, c.selection_high))];
    metrics
        .iter()
        .map(|(name, get)| {
            let mut chart = Chart { title: format!("{name} over the last {} runs", recent.len()), svg_paths: vec![], whiskers: vec![], ticks: ticks.clone(), legend: vec![] };
            for (li, cell) in current.iter().take(MAX_LINES).enumerate() {
                let color = COLORS[li % COLORS.len()];
                let key = cell.key();
                let mut d = Vec::new();
                for (i, e) in recent.iter().enumerate() {
                    let Some(c) = e.cells.iter().find(|c| c.key == key) else { continue };
                    let (v, lo, hi) = get(c);
                    if v < 0.0 {
                        continue;
                    }
                    d.push(format!("{}{:.1},{:.1}", if d.is_empty() { "M" } else { "L" }, x(i), y(v)));
                    chart.whiskers.push((x(i), y(lo.max(0.0)), y(hi.max(0.0))));
                }
                if !d.is_empty() {
                    chart.svg_paths.push((d.join(" "), key.clone(), color));
                    chart.legend.push((key, color));
                }
            }
            chart
        })
        .collect()
}
