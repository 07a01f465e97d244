//! `tools.csv`: the per-tool join ([`crate::analysis::tools::ToolRow`]), as the analysis made it, in the
//! declared columns ([`TOOLS`]).

use super::{Exporter, ReportData};
use crate::analysis::columns::TOOLS;

/// `tools.csv`.
pub struct ToolsCsv;

impl Exporter for ToolsCsv {
    fn file_name(&self) -> &'static str {
        "tools.csv"
    }

    fn render(&self, data: &ReportData) -> anyhow::Result<Vec<u8>> {
        super::csv::table(&TOOLS, &data.analysis.tools, &())
    }
}
