//! The columns of `tools.csv`/`tools.parquet` (one row per cell and tool, [`ToolRow`]) and of
//! `confusion.csv` (one row per entry of a cell's confusion matrix, [`Entry`]; its example trials are
//! looked up in the run's [`ScoreRows`]).

use super::super::confusion::Entry;
use super::super::rows::ScoreRows;
use super::super::tools::ToolRow;
use super::{Column, ColumnType, Value, declare, of, rate_columns, with_context};
use std::sync::LazyLock;

/// The columns of `tools.csv` and `tools.parquet`, in file order.
pub static TOOLS: LazyLock<Vec<Column<ToolRow>>> = LazyLock::new(tool_columns);

/// The columns of `confusion.csv`, in file order (read with the run's rows, for the example trials).
pub static CONFUSION: LazyLock<Vec<Column<Entry, ScoreRows>>> = LazyLock::new(confusion_columns);

fn tool_text(name: &str, description: &str, read: fn(&ToolRow) -> &str) -> Column<ToolRow> {
    declare(name, ColumnType::Text, "", "", description, of(move |r| Value::Text(read(r).into())))
}

fn tool_count(
    name: &str,
    unit: &'static str,
    description: &str,
    read: fn(&ToolRow) -> u64,
) -> Column<ToolRow> {
    declare(name, ColumnType::Count, unit, "", description, of(move |r| Value::Count(read(r))))
}

fn tool_columns() -> Vec<Column<ToolRow>> {
    let mut out = vec![
        tool_text("dataset", "Dataset name.", |r| &r.dataset),
        tool_text("variant", "Description variant.", |r| &r.variant),
        tool_text("layout", "Layout.", |r| &r.layout),
        tool_text(
            "backend",
            "Backend (model) label: figures are per cell, never pooled across backends or layouts.",
            |r| &r.backend,
        ),
        tool_text("tool", "Tool id (`server/category/tool`).", |r| &r.tool),
        tool_count(
            "lint_block",
            "",
            "Lint findings of severity `block` on the tool in this variant's catalog.",
            |r| r.block,
        ),
        tool_count("lint_warn", "", "Lint findings of severity `warn`.", |r| r.warn),
        tool_count("lint_info", "", "Lint findings of severity `info`.", |r| r.info),
        tool_text(
            "lint_rules",
            "The lint rules that fired on the tool, `;`-separated (empty: none).",
            |r| &r.rules,
        ),
        tool_count(
            "single_task_trials",
            "trials",
            "Scored trials of single-call tasks that expect this tool (oracle trials left out).",
            |r| r.trials,
        ),
        tool_count("selected", "trials", "Of those, trials whose selection was correct.", |r| {
            r.selected
        }),
        declare(
            "selection_accuracy",
            ColumnType::Number,
            "fraction",
            "no single-call task expects the tool",
            "`selected` over `single_task_trials`.",
            of(|r: &ToolRow| Value::number(r.selection())),
        ),
        tool_count(
            "true_positives",
            "calls",
            "Expected calls of the tool taken by the tool (over every task kind).",
            |r| r.counts.tp,
        ),
        tool_count(
            "false_positives",
            "calls",
            "Calls of the tool that answer no expected call of it.",
            |r| r.counts.fp,
        ),
        tool_count(
            "false_negatives",
            "calls",
            "Expected calls of the tool taken by another tool, or by nothing.",
            |r| r.counts.fn_,
        ),
    ];
    out.extend(rate_columns(
        "precision",
        "the tool was never called",
        "`true_positives` over the tool's calls.",
        |r: &ToolRow| r.counts.precision(),
    ));
    out.extend(rate_columns(
        "recall",
        "the tool was never expected",
        "`true_positives` over the tool's expected calls.",
        |r: &ToolRow| r.counts.recall(),
    ));
    out.push(declare(
        "f1",
        ColumnType::Number,
        "fraction",
        "the tool was neither expected nor called",
        "2·tp / (2·tp + fp + fn).",
        of(|r: &ToolRow| Value::number(r.counts.f1())),
    ));
    out
}

fn confusion_columns() -> Vec<Column<Entry, ScoreRows>> {
    let part = |name: &str, description: &str, i: usize| {
        declare(
            name,
            ColumnType::Text,
            "",
            "",
            description,
            of(move |e: &Entry| Value::Text(e.parts[i].as_str().into())),
        )
    };
    vec![
        part("dataset", "Dataset name.", 0),
        part("catalog", "Catalog name.", 1),
        part("variant", "Description variant.", 2),
        part("layout", "Layout.", 3),
        part("backend", "Backend (model) label.", 4),
        declare(
            "expected_tool",
            ColumnType::Text,
            "",
            "",
            "The tool an expected call named.",
            of(|e: &Entry| Value::Text(e.expected.as_str().into())),
        ),
        declare(
            "called_tool",
            ColumnType::Text,
            "",
            "",
            "The tool that took the call: a tool id, `(nothing)`, `(invented)` or `(unreadable)`.",
            of(|e: &Entry| Value::Text(e.called.as_str().into())),
        ),
        declare(
            "correct",
            ColumnType::Flag,
            "",
            "",
            "`expected_tool` and `called_tool` are the same.",
            of(|e: &Entry| Value::Flag(e.correct())),
        ),
        declare(
            "count",
            ColumnType::Count,
            "calls",
            "",
            "Expected calls of `expected_tool` taken by `called_tool` in the cell.",
            of(|e: &Entry| Value::Count(e.count)),
        ),
        declare(
            "share_of_expected",
            ColumnType::Number,
            "fraction",
            "",
            "`count` over the expected calls of `expected_tool` in the cell.",
            of(|e: &Entry| Value::number(e.count as f64 / e.row_total as f64)),
        ),
        declare(
            "example_trials",
            ColumnType::Text,
            "",
            "",
            "Ids of the first trials (in matrix order, at most 5) with this pair, `;`-separated.",
            with_context(|e: &Entry, rows: &ScoreRows| {
                Value::Text(
                    e.examples
                        .iter()
                        .map(|&r| rows.trial_id(r))
                        .collect::<Vec<_>>()
                        .join(";")
                        .into(),
                )
            }),
        ),
    ]
}
