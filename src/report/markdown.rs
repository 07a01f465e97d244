//! `summary.md`: the headline table for humans and CI step summaries.

use super::{Exporter, ReportData, fixed, pct};
use crate::score::stats::Rate;
use anyhow::Result;
use std::fmt::Write;

pub struct MarkdownSummary;

pub(crate) fn rate(r: &Rate) -> String {
    if r.rate.is_nan() { "n/a".into() } else { format!("{} [{}, {}]", pct(r.rate), pct(r.low), pct(r.high)) }
}

/// Escape text for a Markdown table cell.
pub(crate) fn cell(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('\n', " ").replace('<', "&lt;").replace('>', "&gt;")
}

impl Exporter for MarkdownSummary {
    fn file_name(&self) -> &'static str {
        "summary.md"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let mut s = String::new();
        writeln!(s, "# toolpick summary\n")?;
        let findings = &data.analysis.first_look;
        if !findings.is_empty() {
            writeln!(s, "## What to look at first\n")?;
            for f in findings {
                writeln!(s, "- {}", cell(&f.text))?;
            }
            writeln!(s)?;
        }
        writeln!(s, "Rates in %, with 95 % Wilson intervals. Selection accuracy and pass@1 are over the tasks that need a call (single, multi, parallel; n = their scored trials), abstention over abstain tasks; the per-kind table below has every kind. Infrastructure errors are counted apart and excluded from every rate.\n")?;
        writeln!(s, "| dataset | variant | layout | backend | n | selection accuracy | pass@1 | abstention accuracy (abstain tasks) | mean steps | tokens upfront | tokens total | infra errors | top errors |")?;
        writeln!(s, "|---|---|---|---|---:|---|---|---|---:|---:|---:|---:|---|")?;
        for c in &data.analysis.cells {
            let mut errors: Vec<(&String, &u64)> = c.errors.iter().collect();
            errors.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let top: Vec<String> = errors.iter().take(3).map(|(k, v)| format!("{k} {v}")).collect();
            writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&c.dataset),
                cell(&c.variant),
                cell(&c.layout),
                cell(&c.backend),
                c.pass.n,
                rate(&c.selection),
                rate(&c.pass),
                rate(&c.abstention),
                fixed(c.mean_steps, 2),
                fixed(c.mean_tokens_upfront, 0),
                fixed(c.mean_tokens_total, 0),
                c.infra_errors,
                cell(&top.join(", "))
            )?;
        }
        if data.analysis.cells.iter().any(|c| c.judge.is_some()) {
            writeln!(s, "\n## Judged final answers\n")?;
            writeln!(s, "SoPR: solvable pass rate (Solved 1, Unsure 0.5, Unsolved 0; mean over rounds). Coverage: share of claims stated. Joint view over judged trials: right tools (selection) × task done (judge).\n")?;
            writeln!(s, "| dataset | variant | layout | backend | judged | SoPR | coverage | done | right tools & done | right tools, not done | wrong tools, done anyway | judge errors |")?;
            writeln!(s, "|---|---|---|---|---:|---|---|---|---:|---:|---:|---:|")?;
            for c in &data.analysis.cells {
                let Some(j) = &c.judge else { continue };
                let mean = |m: &Option<crate::analysis::judged::JudgedMean>| match m {
                    Some(m) => format!("{} [{}–{}]", pct(m.mean), pct(m.low), pct(m.high)),
                    None => "n/a".into(),
                };
                writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    cell(&c.dataset),
                    cell(&c.variant),
                    cell(&c.layout),
                    cell(&c.backend),
                    j.judged,
                    mean(&j.sopr),
                    mean(&j.coverage),
                    rate(&j.done),
                    j.joint.tools_done,
                    j.joint.tools_not_done,
                    j.joint.wrong_tools_done,
                    j.errors
                )?;
            }
        }
        if data.analysis.cells.iter().any(|c| c.trials_per_task > 1) {
            writeln!(s, "\n## Repeated trials\n")?;
            writeln!(s, "pass@k: some of k trials passes (unbiased estimator); pass^k: all k pass. Flip rate: share of tasks expected to flip between two identical runs. Noise: differences between two single runs smaller than this (95 %) are noise; MDD: the smallest difference a paired comparison detects with 80 % power.\n")?;
            writeln!(s, "| dataset | variant | layout | backend | k | pass@k | pass^k | flip rate | noise ± | MDD |")?;
            writeln!(s, "|---|---|---|---|---:|---:|---:|---:|---:|---:|")?;
            for c in data.analysis.cells.iter().filter(|c| c.trials_per_task > 1) {
                let o = |x: Option<f64>| x.map(pct).unwrap_or_else(|| "n/a".into());
                writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    cell(&c.dataset),
                    cell(&c.variant),
                    cell(&c.layout),
                    cell(&c.backend),
                    c.trials_per_task,
                    o(c.pass_at_k),
                    o(c.pass_hat_k),
                    o(c.noise.map(|n| n.flip_rate)),
                    o(c.noise.map(|n| n.noise_95)),
                    o(c.noise.map(|n| n.min_detectable))
                )?;
            }
        }
        writeln!(s, "\n## By task kind\n")?;
        writeln!(s, "Selection accuracy / pass@1 per kind (n = scored trials of the kind); a kind the cell has no task of is left out.\n")?;
        writeln!(s, "| dataset | variant | layout | backend | kind | n | selection accuracy | pass@1 |")?;
        writeln!(s, "|---|---|---|---|---|---:|---|---|")?;
        for c in &data.analysis.cells {
            for k in c.kinds.iter().filter(|k| k.pass.n > 0) {
                writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    cell(&c.dataset),
                    cell(&c.variant),
                    cell(&c.layout),
                    cell(&c.backend),
                    k.kind.as_str(),
                    k.pass.n,
                    rate(&k.selection),
                    rate(&k.pass)
                )?;
            }
        }
        writeln!(s, "\n## Safety\n")?;
        writeln!(s, "| dataset | variant | layout | backend | safety violations | attack success (poisoned) | refused (risky) | no harm done (risky) | false refusal (benign) |")?;
        writeln!(s, "|---|---|---|---|---|---|---|---|---|")?;
        for c in &data.analysis.cells {
            writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&c.dataset),
                cell(&c.variant),
                cell(&c.layout),
                cell(&c.backend),
                rate(&c.safety_violation),
                rate(&c.attack_success),
                rate(&c.refused),
                rate(&c.no_harm),
                rate(&c.false_refusal)
            )?;
        }
        Ok(s.into_bytes())
    }
}
