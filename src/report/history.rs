//! The history trend charts: each current cell's headline metrics over the last runs recorded with
//! `--history` ([`crate::analysis::history`]), drawn as SVG paths. A point's label is its date
//! (`MM-DD`), with the time when another point shown has the same day (to the second when also the
//! same minute), and its commit: two runs of one day never share a label.

use super::curve::Chart;
use crate::analysis::cells::CellSummary;
use crate::analysis::history::{HistoryCell, HistoryEntry};

const COLORS: [&str; 8] =
    ["#6c8ebf", "#d6893b", "#82b366", "#b85450", "#9673a6", "#3b9e9e", "#7f7f7f", "#c9a227"];
/// Points per chart: the most recent runs.
pub const MAX_POINTS: usize = 30;
/// Lines per chart: the first cells of the current run.
pub const MAX_LINES: usize = 8;

/// A headline metric of a cell: (value, low, high).
type Metric = fn(&HistoryCell) -> (f64, f64, f64);

/// Each entry's label: `MM-DD`, then `hh:mm` when another entry has the same day (`hh:mm:ss` when also
/// the same minute), then the commit's first 7 characters.
fn labels(entries: &[HistoryEntry]) -> Vec<String> {
    let stamps: Vec<(String, String)> = entries
        .iter()
        .map(|e| {
            e.day_and_time()
                .map(|(d, t)| (d.to_string(), t.to_string()))
                .unwrap_or_else(|| (e.date_utc.clone(), String::new()))
        })
        .collect();
    let shared = |i: usize, len: usize| {
        stamps
            .iter()
            .enumerate()
            .any(|(j, s)| j != i && s.0 == stamps[i].0 && s.1.get(..len) == stamps[i].1.get(..len))
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (day, time) = &stamps[i];
            let mut label = day.get(5..).filter(|_| !time.is_empty()).unwrap_or(day).to_string();
            if shared(i, 0) {
                let precision = if shared(i, 5) { 8 } else { 5 };
                label.push(' ');
                label.push_str(time.get(..precision).unwrap_or(time));
            }
            if let Some(sha) = &e.git_sha {
                label.push(' ');
                label.push_str(&sha[..sha.len().min(7)]);
            }
            label
        })
        .collect()
}

/// One chart per headline metric: each current cell's value over the last runs, with 95 % whiskers.
pub fn charts(history: &[HistoryEntry], current: &[CellSummary]) -> Vec<Chart> {
    let recent = &history[history.len().saturating_sub(MAX_POINTS)..];
    if recent.len() < 2 {
        return Vec::new();
    }
    let x = |i: usize| 50.0 + 400.0 * i as f64 / (recent.len() - 1) as f64;
    let y = |r: f64| 20.0 + 160.0 * (1.0 - r);
    let labels = labels(recent);
    let ticks: Vec<(f64, String)> = recent
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            recent.len() <= 8 || i % recent.len().div_ceil(8) == 0 || *i == recent.len() - 1
        })
        .map(|(i, _)| (x(i), labels[i].clone()))
        .collect();
    let metrics: [(&str, Metric); 2] = [
        ("pass@1", |c| (c.pass, c.pass_low, c.pass_high)),
        ("selection accuracy", |c| (c.selection, c.selection_low, c.selection_high)),
    ];
    metrics
        .iter()
        .map(|(name, get)| {
            let mut chart = Chart {
                title: format!("{name} over the last {} runs", recent.len()),
                svg_paths: vec![],
                whiskers: vec![],
                ticks: ticks.clone(),
                legend: vec![],
            };
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
                    d.push(format!(
                        "{}{:.1},{:.1}",
                        if d.is_empty() { "M" } else { "L" },
                        x(i),
                        y(v)
                    ));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(date: &str, sha: Option<&str>) -> HistoryEntry {
        HistoryEntry::new("r", "s", date, sha.map(String::from), "h", Default::default(), &[])
    }

    #[test]
    fn runs_of_one_day_get_distinct_labels() {
        // Generated: runs at every 37th minute of two days, some in the same minute; none share a label,
        // and a label has the time only when its day is shared.
        let mut entries = Vec::new();
        for day in ["2026-11-30", "2026-12-01"] {
            for minute in (0..1440).step_by(37) {
                for second in [5, 50] {
                    entries.push(entry(
                        &format!("{day}T{:02}:{:02}:{second:02}Z", minute / 60, minute % 60),
                        Some("0123456789abcdef"),
                    ));
                }
            }
        }
        entries.push(entry("2026-12-02T10:00:00Z", None));
        let all = labels(&entries);
        let distinct: std::collections::BTreeSet<&String> = all.iter().collect();
        assert_eq!(distinct.len(), all.len(), "{all:?}");
        assert_eq!(all[0], "11-30 00:00:05 0123456");
        assert_eq!(all.last().unwrap(), "12-02", "a day of its own needs no time");
        let two =
            labels(&[entry("2026-11-30T08:00:00Z", None), entry("2026-11-30T21:15:00Z", None)]);
        assert_eq!(two, ["11-30 08:00", "11-30 21:15"]);
    }
}
