//! `confusion.csv`: every cell's confusion matrix ([`crate::analysis::confusion::Entry`]), as the analysis
//! counted it, in the declared columns ([`CONFUSION`]).

use super::{Exporter, ReportData};
use crate::analysis::columns::CONFUSION;

/// `confusion.csv`: every cell's matrix.
pub struct ConfusionCsv;

impl Exporter for ConfusionCsv {
    fn file_name(&self) -> &'static str {
        "confusion.csv"
    }

    fn render(&self, data: &ReportData) -> anyhow::Result<Vec<u8>> {
        super::csv::table(&CONFUSION, &data.analysis.confusion, &data.analysis.rows)
    }
}
