//! `summary.json`: the cells and per-category rows, for programs, and `table`: the rows of
//! `summary.csv` with their declared columns ([`crate::analysis::columns::SUMMARY`]), nulls as null.

use super::{Exporter, ReportData};
use crate::analysis::columns::{SUMMARY, Value};
use anyhow::Result;

pub struct SummaryJson;

impl Exporter for SummaryJson {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>> {
        let columns: Vec<serde_json::Value> =
            SUMMARY.iter().map(|col| serde_json::json!({"name": col.name, "type": col.ty.as_str(), "unit": col.unit})).collect();
        let rows: Vec<Vec<serde_json::Value>> = data
            .analysis
            .cells
            .iter()
            .map(|c| {
                SUMMARY
                    .iter()
                    .map(|col| match (col.read)(c, &()) {
                        Value::Text(s) => s.into_owned().into(),
                        Value::Count(n) => n.into(),
                        Value::Number(x) => x.into(),
                        Value::Flag(b) => b.into(),
                        Value::Null => serde_json::Value::Null,
                    })
                    .collect()
            })
            .collect();
        let v = serde_json::json!({"config": data.analysis.config, "cells": data.analysis.cells, "categories": data.analysis.categories, "table": {"columns": columns, "rows": rows}});
        // NaN (undefined rates) is not JSON: serde_json writes null for it.
        let mut out = serde_json::to_vec_pretty(&v)?;
        out.push(b'\n');
        Ok(out)
    }
}
