//! `summary.json`: the cells and per-category rows, for programs.

use super::{Exporter, ReportData};
use anyhow::Result;

pub struct SummaryJson;

impl Exporter for SummaryJson {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let v = serde_json::json!({"config": data.analysis.config, "cells": data.analysis.cells, "categories": data.analysis.categories});
        // NaN (undefined rates) is not JSON: serde_json writes null for it.
        let mut out = serde_json::to_vec_pretty(&v)?;
        out.push(b'\n');
        Ok(out)
    }
}
