//! The tool-count curve as `curve.csv` and as SVG charts: the lines the analysis regrouped
//! ([`crate::analysis::curve`]), one chart per dataset, variant and backend.

use super::{Exporter, ReportData, pct};
use crate::analysis::curve::Line;

pub struct CurveCsv;

impl Exporter for CurveCsv {
    fn file_name(&self) -> &'static str {
        "curve.csv"
    }

    fn render(&self, data: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "dataset",
            "variant",
            "layout",
            "backend",
            "distractors",
            "n",
            "selection_accuracy",
            "selection_low",
            "selection_high",
            "pass_at_1",
            "pass_low",
            "pass_high",
            "mean_tokens_upfront",
        ])?;
        let f = |x: f64| super::fixed_or_empty(x, 6);
        for l in &data.analysis.curve {
            for p in &l.points {
                w.write_record([
                    l.dataset.clone(),
                    l.variant.clone(),
                    l.layout.clone(),
                    l.backend.clone(),
                    p.distractors.to_string(),
                    p.n.to_string(),
                    f(p.selection.rate),
                    f(p.selection.low),
                    f(p.selection.high),
                    f(p.pass.rate),
                    f(p.pass.low),
                    f(p.pass.high),
                    super::fixed_or_empty(p.tokens_upfront, 1),
                ])?;
            }
        }
        Ok(w.into_inner()?)
    }
}

/// One SVG chart per (dataset, variant, backend): selection accuracy against distractors, a line per
/// layout, 95 % whiskers; levels are spaced evenly (they are usually geometric).
pub struct Chart {
    pub title: String,
    pub svg_paths: Vec<(String, String, &'static str)>,
    pub whiskers: Vec<(f64, f64, f64)>,
    pub ticks: Vec<(f64, String)>,
    pub legend: Vec<(String, &'static str)>,
}

const COLORS: [&str; 4] = ["#6c8ebf", "#d6893b", "#82b366", "#b85450"];

/// Upper bound of the width of one character of the 11 px tick labels (digits are 7 px), and the free
/// space kept between two.
const TICK_CHAR_W: f64 = 7.5;
const TICK_GAP: f64 = 6.0;

impl Chart {
    /// The x-axis labels the page shows: `ticks` thinned so that no two touch (also for the history
    /// trend, whose ticks are dates and commits).
    pub fn tick_labels(&self) -> Vec<(f64, String)> {
        thin_ticks(self.ticks.clone())
    }
}

/// Ticks (x, label) sorted by x, without those whose labels would touch a kept neighbour's (many
/// levels on 400 px): the first and the last tick are always kept.
fn thin_ticks(ticks: Vec<(f64, String)>) -> Vec<(f64, String)> {
    let half = |t: &(f64, String)| t.1.chars().count() as f64 * TICK_CHAR_W / 2.0;
    let clear =
        |a: &(f64, String), b: &(f64, String)| (b.0 - a.0).abs() >= half(a) + half(b) + TICK_GAP;
    let Some(last) = ticks.last().cloned() else { return ticks };
    let mut kept: Vec<(f64, String)> = Vec::new();
    for t in ticks {
        if kept.last().is_none_or(|k| clear(k, &t)) {
            kept.push(t);
        }
    }
    // The last level is always labelled: drop kept ticks too close to it (never the first).
    if kept.last() != Some(&last) {
        while kept.len() > 1 && kept.last().is_some_and(|k| !clear(k, &last)) {
            kept.pop();
        }
        kept.push(last);
    }
    kept
}

pub fn charts(all: &[Line]) -> Vec<Chart> {
    let mut groups: Vec<(String, String, String)> =
        all.iter().map(|l| (l.dataset.clone(), l.variant.clone(), l.backend.clone())).collect();
    groups.dedup();
    let mut out = Vec::new();
    for (dataset, variant, backend) in groups {
        let ls: Vec<&Line> = all
            .iter()
            .filter(|l| l.dataset == dataset && l.variant == variant && l.backend == backend)
            .collect();
        let mut levels: Vec<usize> =
            ls.iter().flat_map(|l| l.points.iter().map(|p| p.distractors)).collect();
        levels.sort_unstable();
        levels.dedup();
        let x = |lvl: usize| {
            50.0 + 400.0 * levels.iter().position(|l| *l == lvl).unwrap_or(0) as f64
                / (levels.len().max(2) - 1) as f64
        };
        let y = |r: f64| 20.0 + 160.0 * (1.0 - if r.is_nan() { 0.0 } else { r });
        let mut chart = Chart {
            title: format!(
                "{backend} on {dataset}, {variant}: selection accuracy vs. distractor tools"
            ),
            svg_paths: vec![],
            whiskers: vec![],
            ticks: levels.iter().map(|l| (x(*l), l.to_string())).collect(),
            legend: vec![],
        };
        for (i, l) in ls.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let d: Vec<String> = l
                .points
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    format!(
                        "{}{:.1},{:.1}",
                        if j == 0 { "M" } else { "L" },
                        x(p.distractors),
                        y(p.selection.rate)
                    )
                })
                .collect();
            chart.svg_paths.push((d.join(" "), l.layout.clone(), color));
            for p in &l.points {
                chart.whiskers.push((x(p.distractors), y(p.selection.low), y(p.selection.high)));
            }
            let last = l.points.last().map(|p| pct(p.selection.rate)).unwrap_or_default();
            chart.legend.push((format!("{} (last: {last} %)", l.layout), color));
        }
        out.push(chart);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_too_close_to_label_are_dropped_but_the_first_and_last_stay() {
        let ticks: Vec<(f64, String)> = (0..30)
            .map(|i| (50.0 + 400.0 * i as f64 / 29.0, format!("12{i:02} abcdef1")))
            .collect();
        let kept = thin_ticks(ticks.clone());
        assert_eq!(kept.first(), ticks.first());
        assert_eq!(kept.last(), ticks.last());
        for w in kept.windows(2) {
            assert!(w[1].0 - w[0].0 >= 12.0 * TICK_CHAR_W + TICK_GAP, "{w:?}");
        }
        // Short labels far apart are all kept.
        let few: Vec<(f64, String)> = [0, 10, 50, 100]
            .iter()
            .enumerate()
            .map(|(i, l)| (50.0 + 400.0 * i as f64 / 3.0, l.to_string()))
            .collect();
        assert_eq!(thin_ticks(few.clone()), few);
    }
}
