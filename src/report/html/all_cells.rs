//! The "All cells" table of `report.html`, generated from the summary's column declarations
//! ([`SUMMARY`]): a column shows on the page when its declaration flags it ([`InHtml`]), so a new
//! metric reaches the page with no edit here.

use crate::analysis::cells::CellSummary;
use crate::analysis::columns::{ColumnType, InHtml, SUMMARY, SummaryColumn, Value as ColumnValue};
use crate::report::{fixed, pct};

/// The "All cells" table: the summary columns declared [`InHtml::Shown`] (and the groups of those
/// declared [`InHtml::Grouped`]), in declared order, so a new metric reaches the page by its
/// declaration alone (issue 30).
pub struct AllCells {
    pub header: Vec<Heading>,
    pub rows: Vec<Vec<Figure>>,
}

/// A column heading: the declared name (the group's, for a group) with spaces for underscores, so a
/// heading wraps between words within the window, then its unit; the title gives the name as the
/// files spell it and its description.
pub struct Heading {
    pub name: String,
    pub title: String,
}

/// A table cell's text; `numeric` cells are right-aligned.
pub struct Figure {
    pub text: String,
    pub numeric: bool,
}

/// One column of [`AllCells`]: a shown column with its declared bounds (both or none), or a group.
enum AllCellsColumn {
    Shown { column: &'static SummaryColumn, bounds: Option<[&'static SummaryColumn; 2]> },
    Grouped { group: &'static str, members: Vec<&'static SummaryColumn> },
}

/// How a declared number shows on the page: fractions in %, tokens whole, other means with two
/// decimals, money with four.
fn number(column: &SummaryColumn, x: f64) -> String {
    match column.unit {
        "fraction" => pct(x),
        "tokens" => fixed(x, 0),
        "USD" => fixed(x, 4),
        _ => fixed(x, 2),
    }
}

/// What a value shows: "n/a" for null (undefined, never 0).
fn figure(column: &SummaryColumn, value: &ColumnValue<'_>) -> String {
    match value {
        ColumnValue::Text(t) => t.to_string(),
        ColumnValue::Count(n) => n.to_string(),
        ColumnValue::Number(x) => number(column, *x),
        ColumnValue::Flag(b) => b.to_string(),
        ColumnValue::Null => "n/a".into(),
    }
}

/// The table of `cells`.
pub fn all_cells(cells: &[CellSummary]) -> AllCells {
    let declared = |name: &str| SUMMARY.iter().find(|c| c.name == name);
    let mut columns: Vec<AllCellsColumn> = Vec::new();
    for column in SUMMARY.iter() {
        match column.in_html {
            InHtml::Hidden => {}
            InHtml::Shown => {
                let low = declared(&format!("{}_low", column.name));
                let high = declared(&format!("{}_high", column.name));
                let bounds = low.zip(high).map(|(low, high)| [low, high]);
                columns.push(AllCellsColumn::Shown { column, bounds });
            }
            InHtml::Grouped(group) => match columns.last_mut() {
                Some(AllCellsColumn::Grouped { group: g, members }) if *g == group => {
                    members.push(column)
                }
                _ => columns.push(AllCellsColumn::Grouped { group, members: vec![column] }),
            },
        }
    }
    let header = columns
        .iter()
        .map(|c| match c {
            AllCellsColumn::Shown { column, bounds } => {
                let unit = if column.unit == "fraction" { " %" } else { "" };
                let interval = if bounds.is_some() { " [95 % CI]" } else { "" };
                let name = column.name.replace('_', " ");
                let title = format!("{}: {}", column.name, column.description);
                Heading { name: format!("{name}{unit}{interval}"), title }
            }
            AllCellsColumn::Grouped { group, .. } => {
                let title =
                    format!("{group}_*: the non-zero ones of these columns of summary.csv.");
                Heading { name: group.replace('_', " "), title }
            }
        })
        .collect();
    let rows = cells
        .iter()
        .map(|cell| {
            let value = |c: &SummaryColumn| (c.read)(cell, &());
            columns
                .iter()
                .map(|c| match c {
                    AllCellsColumn::Shown { column, bounds } => {
                        let v = value(column);
                        let mut text = figure(column, &v);
                        if let (Some([low, high]), ColumnValue::Number(_)) = (bounds, &v) {
                            let sep = if column.unit == "fraction" { "–" } else { ", " };
                            let (low, high) =
                                (figure(low, &value(low)), figure(high, &value(high)));
                            text = format!("{text} [{low}{sep}{high}]");
                        }
                        // Rates (with their intervals) stay left-aligned as in the other tables.
                        let numeric = column.ty != ColumnType::Text && column.unit != "fraction";
                        Figure { text, numeric }
                    }
                    AllCellsColumn::Grouped { group, members } => {
                        let prefix = format!("{group}_");
                        let shown: Vec<String> = members
                            .iter()
                            .filter_map(|m| match value(m) {
                                ColumnValue::Count(0) | ColumnValue::Null => None,
                                v => Some(format!(
                                    "{}: {}",
                                    m.name.strip_prefix(&prefix).unwrap_or(&m.name),
                                    figure(m, &v)
                                )),
                            })
                            .collect();
                        Figure { text: shown.join(", "), numeric: false }
                    }
                })
                .collect()
        })
        .collect();
    AllCells { header, rows }
}
