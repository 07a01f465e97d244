//! The headline charts of `report.html`: bar geometry in SVG coordinates, computed from the cells
//! the analysis handed over (the page's template only draws what it is given). Its own file because
//! the layout rules (label widths, pitches, whiskers) are a job apart from filling the page.

use super::super::{ReportData, pct};
use std::collections::BTreeSet;

/// One bar with its interval, in SVG coordinates.
pub struct Bar {
    pub label: String,
    pub metric: &'static str,
    pub x: f64,
    pub y: f64,
    pub height: f64,
    pub whisker_low: f64,
    pub whisker_high: f64,
    pub value: String,
    pub class: &'static str,
    /// Centre line of the bar: the whisker and the value label (written vertically, upwards from
    /// `value_y`, so labels of adjacent bars never touch whatever their values).
    pub centre: f64,
    pub value_y: f64,
}

/// The two-line label under a group of bars: `variant` and `layout` as shown (cut to
/// [`GROUP_LABEL_MAX_CHARS`] with "…"), `title` the full text.
pub struct GroupLabel {
    pub x: f64,
    pub variant: String,
    pub layout: String,
    pub title: String,
}

/// One headline chart, in SVG coordinates: the plot spans `plot_top` (100 %) to `plot_bottom` (0 %)
/// right of the axis at `axis_x`; the group labels sit on `label_y` and `label_y + LABEL_LINE`.
pub struct Chart {
    pub backend: String,
    pub dataset: String,
    pub width: f64,
    pub height: f64,
    pub axis_x: f64,
    pub plot_top: f64,
    pub plot_bottom: f64,
    pub label_y: f64,
    pub label_line: f64,
    pub bars: Vec<Bar>,
    pub groups: Vec<GroupLabel>,
}

/// Height of the 0–100 % plot area of a headline chart.
const PLOT_H: f64 = 160.0;
/// Space above the plot: a value label of a 100 % bar is written vertically above its whisker.
const TOP: f64 = 40.0;
/// x of the value axis; the axis labels (100, 50, 0) sit left of it.
const AXIS_X: f64 = 34.0;
/// Bars: width, and the step from one bar to the next in a group (two bars per group).
const BAR_W: f64 = 22.0;
const BAR_STEP: f64 = 26.0;
/// Narrowest distance between the centres of two groups.
const GROUP_PITCH_MIN: f64 = 96.0;
/// Free space between the group labels of two neighbouring groups.
const GROUP_LABEL_GAP: f64 = 6.0;
/// Group labels longer than this are cut ("…") and carry their full text as a tooltip.
const GROUP_LABEL_MAX_CHARS: usize = 20;
/// Upper bound of the width of one character of the 11 px label font (most are ~6 px, digits 7 px), and
/// of one wide (non-ASCII) character.
const LABEL_CHAR_W: f64 = 7.5;
const LABEL_WIDE_CHAR_W: f64 = 11.0;
/// Baseline distance between the two lines of a group label (the font's boxes are 13 px high).
const LABEL_LINE: f64 = 15.0;

/// `s` cut to [`GROUP_LABEL_MAX_CHARS`] characters, the last one "…".
fn short_label(s: &str) -> String {
    if s.chars().count() <= GROUP_LABEL_MAX_CHARS {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(GROUP_LABEL_MAX_CHARS - 1).collect::<String>())
    }
}

/// A generous estimate of a label's rendered width in px.
fn label_width(s: &str) -> f64 {
    s.chars().map(|c| if c.is_ascii() { LABEL_CHAR_W } else { LABEL_WIDE_CHAR_W }).sum()
}

pub(super) fn charts(data: &ReportData) -> Vec<Chart> {
    // The models under test first, the baselines (references) after them; then by dataset and name.
    let groups: BTreeSet<(bool, String, String)> = data
        .analysis
        .cells
        .iter()
        .map(|c| (c.baseline, c.dataset.clone(), c.backend.clone()))
        .collect();
    let mut out = Vec::new();
    for (_, dataset, backend) in groups {
        let mut cells: Vec<_> = data
            .analysis
            .cells
            .iter()
            .filter(|c| c.dataset == dataset && c.backend == backend)
            .collect();
        // good before bad, flat before progressive: the 2×2 reads left to right.
        cells.sort_by_key(|c| {
            (c.variant != "good", c.variant.clone(), c.layout != "flat", c.layout.clone())
        });
        let labels: Vec<(String, String)> =
            cells.iter().map(|c| (short_label(&c.variant), short_label(&c.layout))).collect();
        // One pitch for the whole chart, wide enough that no two group labels touch.
        let widest =
            labels.iter().map(|(v, l)| label_width(v).max(label_width(l))).fold(0.0, f64::max);
        let pitch = GROUP_PITCH_MIN.max(widest + GROUP_LABEL_GAP);
        let mut bars = Vec::new();
        let mut groups = Vec::new();
        for (i, (c, (variant, layout))) in cells.iter().zip(labels).enumerate() {
            let centre = AXIS_X + pitch * (i as f64 + 0.5);
            let n = format!("n {}, excluded {}", c.pass.n, crate::report::terminal::excluded(c));
            groups.push(GroupLabel {
                x: centre,
                variant,
                layout,
                title: format!("{} · {} ({n})", c.variant, c.layout),
            });
            let mut x = centre - (BAR_STEP + BAR_W) / 2.0;
            for (metric, r, class) in
                [("selection", &c.selection, "sel"), ("pass@1", &c.pass, "pass")]
            {
                let v = if r.rate.is_nan() { 0.0 } else { r.rate };
                let whisker_high = TOP + PLOT_H * (1.0 - r.high);
                bars.push(Bar {
                    label: format!("{} · {}", c.variant, c.layout),
                    metric,
                    x,
                    y: TOP + PLOT_H * (1.0 - v),
                    height: PLOT_H * v,
                    whisker_low: TOP + PLOT_H * (1.0 - r.low),
                    whisker_high,
                    value: pct(r.rate),
                    class,
                    centre: x + BAR_W / 2.0,
                    value_y: whisker_high - 4.0,
                });
                x += BAR_STEP;
            }
        }
        let plot_bottom = TOP + PLOT_H;
        out.push(Chart {
            backend,
            dataset,
            width: AXIS_X + pitch * cells.len() as f64 + 6.0,
            height: plot_bottom + 16.0 + LABEL_LINE + 9.0,
            axis_x: AXIS_X,
            plot_top: TOP,
            plot_bottom,
            label_y: plot_bottom + 16.0,
            label_line: LABEL_LINE,
            bars,
            groups,
        });
    }
    out
}
