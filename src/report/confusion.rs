//! `confusion.csv`: every cell's confusion matrix ([`crate::analysis::confusion::Entry`]), as the analysis
//! counted it.

use super::{Exporter, ReportData};

/// `confusion.csv`: every cell's matrix.
pub struct ConfusionCsv;

impl Exporter for ConfusionCsv {
    fn file_name(&self) -> &'static str {
        "confusion.csv"
    }

    fn render(&self, data: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record(["dataset", "catalog", "variant", "layout", "backend", "expected_tool", "called_tool", "correct", "count", "share_of_expected", "example_trials"])?;
        for e in &data.analysis.confusion {
            let examples: Vec<String> = e.examples.iter().map(|&r| data.analysis.rows.trial_id(r)).collect();
            let mut record: Vec<String> = e.parts.to_vec();
            record.extend([
                e.expected.clone(),
                e.called.clone(),
                e.correct().to_string(),
                e.count.to_string(),
                super::fixed_or_empty(e.count as f64 / e.row_total as f64, 6),
                examples.join(";"),
            ]);
            w.write_record(&record)?;
        }
        Ok(w.into_inner()?)
    }
}
