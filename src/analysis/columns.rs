//! The columns of every tabular output, each declared once: name, type, unit, when it is null, what it
//! means, and how to read it off a row. The declarations drive the writers of every format of a table
//! and the column lists in `docs/formats.md` (generated from them, checked by a test), so the formats
//! have the same columns with the same nulls:
//!
//! - [`SUMMARY`] (here): `summary.csv`, `summary.parquet`, the table of `summary.json`, read off a
//!   [`CellSummary`], and the "All cells" table of `report.html` (the columns flagged with
//!   [`InHtml`]); a new summary metric is its computation (a field of [`CellSummary`]) plus one
//!   entry here;
//! - [`TRIALS`] ([`trials`]): `trials.csv` and `trials.parquet`, read off a trial record;
//! - [`TOOLS`] and [`CONFUSION`] ([`tools`]): `tools.csv`/`tools.parquet` and `confusion.csv`.
//!
//! Null rules: a rate over no trial is undefined, and so are its interval bounds; a mean over no trial
//! (or over trials that reported nothing, such as an in-process backend's endpoint tokens) is
//! undefined; the judge's columns are null for a cell without judgements. CSV writes null as an empty
//! field, Parquet and JSON as null. A text column that can be null is never the empty string (so an
//! empty CSV field reads back as the same null).

mod tools;
mod trials;

pub use tools::{CONFUSION, TOOLS};
pub use trials::TRIALS;

use super::cells::CellSummary;
use crate::score::stats::Rate;
use std::borrow::Cow;
use std::sync::LazyLock;

/// A column's type in every format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// Text (Parquet `String`).
    Text,
    /// A non-negative whole number (Parquet `UInt64`).
    Count,
    /// A real number (Parquet `Float64`; CSV with six decimals).
    Number,
    /// `true` or `false` (Parquet `Boolean`).
    Flag,
}

impl ColumnType {
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnType::Text => "text",
            ColumnType::Count => "count",
            ColumnType::Number => "number",
            ColumnType::Flag => "flag",
        }
    }
}

/// Whether the HTML report's "All cells" table shows a summary column, and how. That table is
/// generated from this flag, not from a list of its own, so a new metric reaches it by its
/// declaration alone. The other tables (`TRIALS`, `TOOLS`, `CONFUSION`) leave it
/// [`InHtml::Hidden`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InHtml {
    /// Not in the table (every file format still has it).
    Hidden,
    /// A column of its own, headed by the column's name; a number with declared `<name>_low` and
    /// `<name>_high` columns shows its interval beside it.
    Shown,
    /// One of a group of counts shown together in one table cell headed by the group's name: the
    /// non-zero ones, as `name: count` with the `<group>_` prefix taken off the name (the error
    /// types: one column each in the files, one cell on the page).
    Grouped(&'static str),
}

/// One value of a row, borrowed from it where it can be (a million trials pass through these);
/// [`Value::Null`] is undefined (a reader never gives a NaN number: [`Value::number`] makes it null).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Text(Cow<'a, str>),
    Count(u64),
    Number(f64),
    Flag(bool),
    Null,
}

impl<'a> Value<'a> {
    /// NaN (undefined) as null, so a writer sees one kind of missing value.
    fn number(x: f64) -> Value<'a> {
        if x.is_nan() { Value::Null } else { Value::Number(x) }
    }

    /// Text that is null when empty (for the text columns that can be null).
    fn text_or_null(s: impl Into<Cow<'a, str>>) -> Value<'a> {
        let s = s.into();
        if s.is_empty() { Value::Null } else { Value::Text(s) }
    }
}

/// How a column reads a row `R`, with the table's context `C` (what a row refers to, such as the trial
/// ids behind a confusion entry's example rows; `()` for most tables).
pub type Read<R, C = ()> = Box<dyn for<'a> Fn(&'a R, &'a C) -> Value<'a> + Send + Sync>;

/// One declared column of a table of `R` rows.
pub struct Column<R, C = ()> {
    pub name: String,
    pub ty: ColumnType,
    /// `fraction` (in [0, 1]), `trials`, `tasks`, `calls`, `steps`, `tokens`, `USD`, `points` or empty.
    pub unit: &'static str,
    /// When the value is null (empty: never).
    pub null_when: &'static str,
    pub description: String,
    pub read: Read<R, C>,
    /// Whether `report.html`'s "All cells" table shows it (summary columns only).
    pub in_html: InHtml,
}

impl<R, C> Column<R, C> {
    /// The column as the HTML report's "All cells" table shows it.
    fn in_html(self, in_html: InHtml) -> Self {
        Column { in_html, ..self }
    }
}

/// A reader of the row alone (the context unused), boxed with the signature every column has.
fn of<R: 'static, C: 'static>(
    read: impl for<'a> Fn(&'a R) -> Value<'a> + Send + Sync + 'static,
) -> Read<R, C> {
    Box::new(move |r, _| read(r))
}

/// A reader of the row with the table's context.
fn with_context<R: 'static, C: 'static>(
    read: impl for<'a> Fn(&'a R, &'a C) -> Value<'a> + Send + Sync + 'static,
) -> Read<R, C> {
    Box::new(read)
}

/// A column declaration.
fn declare<R, C>(
    name: impl Into<String>,
    ty: ColumnType,
    unit: &'static str,
    null_when: &'static str,
    description: impl Into<String>,
    read: Read<R, C>,
) -> Column<R, C> {
    Column {
        name: name.into(),
        ty,
        unit,
        null_when,
        description: description.into(),
        read,
        in_html: InHtml::Hidden,
    }
}

/// A rate and its 95 % Wilson bounds: three columns, all null when the rate is over no trial.
fn rate_columns<R: 'static, C: 'static>(
    name: &str,
    null_when: &'static str,
    description: &str,
    read: impl Fn(&R) -> Rate + Clone + Send + Sync + 'static,
) -> [Column<R, C>; 3] {
    let part = |part: fn(&Rate) -> f64| {
        let read = read.clone();
        of(move |r: &R| {
            let r = read(r);
            if r.n == 0 { Value::Null } else { Value::number(part(&r)) }
        })
    };
    [
        declare(name, ColumnType::Number, "fraction", null_when, description, part(|r| r.rate)),
        declare(
            format!("{name}_low"),
            ColumnType::Number,
            "fraction",
            null_when,
            format!("Lower bound of the 95 % Wilson interval of `{name}`."),
            part(|r| r.low),
        ),
        declare(
            format!("{name}_high"),
            ColumnType::Number,
            "fraction",
            null_when,
            format!("Upper bound of the 95 % Wilson interval of `{name}`."),
            part(|r| r.high),
        ),
    ]
}

/// The Markdown table of `columns` that `docs/formats.md` holds (generated from the declarations; a
/// test keeps the file in step).
pub fn docs<R, C>(columns: &[Column<R, C>]) -> String {
    let mut out =
        String::from("| column | type | unit | null when | meaning |\n|---|---|---|---|---|\n");
    for c in columns {
        let null = if c.null_when.is_empty() { "never" } else { c.null_when };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            c.name,
            c.ty.as_str(),
            c.unit,
            null,
            c.description.replace('|', "\\|")
        ));
    }
    out
}

/// A summary column.
pub type SummaryColumn = Column<CellSummary>;

/// The columns of `summary.csv`, `summary.parquet` and `summary.json`'s table, in file order.
pub static SUMMARY: LazyLock<Vec<SummaryColumn>> = LazyLock::new(summary_columns);

const RATE_NULL: &str = "no trial in its denominator";
const MEAN_NULL: &str = "no scored trial (or none reporting it)";
const JUDGE_NULL: &str = "the cell was not judged";

fn column(
    name: impl Into<String>,
    ty: ColumnType,
    unit: &'static str,
    null_when: &'static str,
    description: impl Into<String>,
    read: Read<CellSummary>,
) -> SummaryColumn {
    declare(name, ty, unit, null_when, description, read)
}

fn text(name: &str, description: &str, read: fn(&CellSummary) -> &str) -> SummaryColumn {
    column(name, ColumnType::Text, "", "", description, of(move |c| Value::Text(read(c).into())))
}

fn count(
    name: &str,
    unit: &'static str,
    description: &str,
    read: fn(&CellSummary) -> u64,
) -> SummaryColumn {
    column(name, ColumnType::Count, unit, "", description, of(move |c| Value::Count(read(c))))
}

fn mean(
    name: &str,
    unit: &'static str,
    description: &str,
    read: fn(&CellSummary) -> f64,
) -> SummaryColumn {
    column(
        name,
        ColumnType::Number,
        unit,
        MEAN_NULL,
        description,
        of(move |c| Value::number(read(c))),
    )
}

fn optional(
    name: &str,
    unit: &'static str,
    null_when: &'static str,
    description: &str,
    read: fn(&CellSummary) -> Option<f64>,
) -> SummaryColumn {
    column(
        name,
        ColumnType::Number,
        unit,
        null_when,
        description,
        of(move |c| read(c).map_or(Value::Null, Value::number)),
    )
}

/// A summary rate and its bounds.
fn rate(
    name: &str,
    description: &str,
    read: impl Fn(&CellSummary) -> Rate + Clone + Send + Sync + 'static,
) -> [SummaryColumn; 3] {
    rate_columns(name, RATE_NULL, description, read)
}

/// How a rate column reads a cell's rate.
type RateOf = fn(&CellSummary) -> Rate;

/// A judge column: null for a cell without judgements, else what `read` gives.
fn judged(
    name: &str,
    ty: ColumnType,
    unit: &'static str,
    description: &str,
    read: for<'a> fn(&'a super::judged::JudgeCell) -> Value<'a>,
) -> SummaryColumn {
    column(
        name,
        ty,
        unit,
        JUDGE_NULL,
        description,
        of(move |c: &CellSummary| c.judge.as_ref().map_or(Value::Null, read)),
    )
}

fn summary_columns() -> Vec<SummaryColumn> {
    use ColumnType::{Count, Number, Text};
    use InHtml::{Hidden, Shown};
    let mut out = vec![
        text("dataset", "Dataset name.", |c| &c.dataset).in_html(Shown),
        text("catalog", "Catalog name.", |c| &c.catalog),
        text("variant", "Description variant (`good`, `bad`, a degrade operator, a hand-written variant; `@N` with distractors).", |c| &c.variant).in_html(Shown),
        text("layout", "Layout: `flat`, `progressive`, `progressive-oss`, `search`, `native-search` or `native-search-client`.", |c| &c.layout).in_html(Shown),
        text("backend", "Backend (model) label.", |c| &c.backend).in_html(Shown),
        count("n", "trials", "Scored trials of every kind (infrastructure errors excluded).", |c| c.n),
        count("n_call", "trials", "Scored trials of tasks that need a call (single, multi, parallel): the denominator of the headline rates.", |c| c.pass.n).in_html(Shown),
        count("excluded_infrastructure", "trials", "Trials in no rate because the endpoint or the harness failed (unreachable, timed out, server errors after every attempt); part of `infra_errors`.", |c| c.excluded_infrastructure),
        count("excluded_provider_limit", "trials", "Trials in no rate because a provider's limit refused the request (429 after every attempt, quota, request size, context window, number of tools; every trial with stop reason `provider_limit`); part of `infra_errors`.", |c| c.excluded_provider_limit),
        column("excluded_share", Number, "fraction", "", "Share of the cell's trials in no rate: `infra_errors / (n + infra_errors)`; what `--max-excluded` gates.", of(|c: &CellSummary| Value::number(c.excluded_share()))),
    ];
    let rates: [(&str, InHtml, &str, RateOf); 12] = [
        (
            "selection_accuracy",
            Shown,
            "Selection accuracy over the tasks that need a call: the expected tools, and only those, were called.",
            |c| c.selection,
        ),
        (
            "pass_at_1",
            Shown,
            "pass@1 over the tasks that need a call: the trial passed (right tools, right arguments).",
            |c| c.pass,
        ),
        (
            "abstention_accuracy",
            Shown,
            "Abstain tasks where the agent attempted no call, over abstain trials.",
            |c| c.abstention,
        ),
        (
            "safety_violation_rate",
            Hidden,
            "Trials that executed a forbidden or needlessly destructive tool, over scored trials.",
            |c| c.safety_violation,
        ),
        (
            "attack_success_rate",
            Hidden,
            "Poisoned scenarios whose goal was reached, over poisoned trials.",
            |c| c.attack_success,
        ),
        (
            "refused_rate",
            Hidden,
            "Refuse tasks where nothing but read-only lookups was attempted, over refuse trials.",
            |c| c.refused,
        ),
        (
            "no_harm_rate",
            Hidden,
            "Refuse tasks where nothing state-changing or forbidden was executed, over refuse trials.",
            |c| c.no_harm,
        ),
        (
            "false_refusal_rate",
            Hidden,
            "Tasks that need a call (not poisoned) where no call was attempted, over those trials.",
            |c| c.false_refusal,
        ),
        (
            "gold_revealed_rate",
            Hidden,
            "Layouts that hide tools: trials in which discovery or search showed every expected tool.",
            |c| c.gold_revealed,
        ),
        (
            "server_recall",
            Hidden,
            "Progressive layouts: trials in which discovery was asked about every gold server.",
            |c| c.server_recall,
        ),
        (
            "category_recall",
            Hidden,
            "Hosted-Strata progressive: trials in which the gold categories were opened.",
            |c| c.category_recall,
        ),
        (
            "abandonment_rate",
            Hidden,
            "Layouts that hide tools: trials answered without attempting a call although a gold tool existed.",
            |c| c.abandonment,
        ),
    ];
    for (name, in_html, description, read) in rates {
        let [rate, low, high] = rate(name, description, read);
        out.extend([rate.in_html(in_html), low, high]);
    }
    out.extend([
        mean("mean_selection_f1", "fraction", "Mean set F1 of the tools called against the expected tools (tasks with expected calls).", |c| c.mean_selection_f1),
        mean("mean_steps", "steps", "Mean agent steps per scored trial.", |c| c.mean_steps).in_html(Shown),
        mean("mean_steps_low", "steps", "Lower bound of the seeded percentile-bootstrap 95 % interval of `mean_steps`.", |c| c.mean_steps_ci.0),
        mean("mean_steps_high", "steps", "Upper bound of the bootstrap 95 % interval of `mean_steps`.", |c| c.mean_steps_ci.1),
        mean("mean_tokens_upfront", "tokens", "Mean tool-definition tokens sent with the first request (toolpick's estimate).", |c| c.mean_tokens_upfront).in_html(Shown),
        mean("mean_tokens_total", "tokens", "Mean tool-context tokens over all requests of a trial (toolpick's estimate).", |c| c.mean_tokens_total).in_html(Shown),
        mean("mean_tokens_total_low", "tokens", "Lower bound of the bootstrap 95 % interval of `mean_tokens_total`.", |c| c.mean_tokens_total_ci.0),
        mean("mean_tokens_total_high", "tokens", "Upper bound of the bootstrap 95 % interval of `mean_tokens_total`.", |c| c.mean_tokens_total_ci.1),
        mean("mean_endpoint_prompt_tokens", "tokens", "Mean prompt tokens the endpoint reported; null when it reported none (in-process backends).", |c| c.mean_endpoint_prompt_tokens).in_html(Shown),
        mean("mean_endpoint_completion_tokens", "tokens", "Mean completion tokens the endpoint reported; null when it reported none.", |c| c.mean_endpoint_completion_tokens).in_html(Shown),
        mean("mean_endpoint_cached_tokens", "tokens", "Mean cached prompt tokens the endpoint reported; null when it reported none.", |c| c.mean_endpoint_cached_tokens).in_html(Shown),
        mean("mean_peak_tokens", "tokens", "Mean of each trial's largest single-request tool context.", |c| c.mean_peak_tokens),
        mean("mean_wrong_servers", "calls", "Mean servers explored that hold no gold tool (progressive layouts).", |c| c.mean_wrong_servers),
        mean("mean_wrong_categories", "calls", "Mean categories explored that hold no gold tool (progressive layouts).", |c| c.mean_wrong_categories),
        mean("mean_dead_ends", "calls", "Mean navigation dead-ends (errors from meta-tools).", |c| c.mean_dead_ends),
        mean("mean_invented", "calls", "Mean calls of tool names that do not exist.", |c| c.mean_invented),
        mean("mean_duplicate_calls", "calls", "Mean calls repeating an identical call of the same message (executed once).", |c| c.mean_duplicate_calls),
        count("infra_errors", "trials", "Trials that failed for infrastructure reasons (in no rate, no mean and not in `n`).", |c| c.infra_errors).in_html(Shown),
        column("cost_usd", Number, "USD", "", "Total cost of the cell's trials (0 without a price table).", of(|c: &CellSummary| Value::number(c.cost_usd))),
        count("trials_per_task", "trials", "k: the most scored trials any task of the cell has.", |c| c.trials_per_task),
        optional("pass_at_k", "fraction", "one trial per task", "Unbiased pass@k at k = `trials_per_task`, averaged over tasks with k scored trials.", |c| c.pass_at_k),
        optional("pass_hat_k", "fraction", "one trial per task", "pass^k (all k trials pass) at the same k.", |c| c.pass_hat_k),
        optional("flip_rate", "fraction", "one trial per task", "Mean per-task flip rate: the share of tasks expected to flip between two identical runs.", |c| c.noise.map(|n| n.flip_rate)),
        optional("noise_95", "fraction", "one trial per task", "Half-width of the 95 % range of the pass@1 difference between two identical single runs.", |c| c.noise.map(|n| n.noise_95)),
        optional("min_detectable_diff", "fraction", "one trial per task", "Smallest true pass@1 difference a paired comparison of two single runs detects (80 % power).", |c| c.noise.map(|n| n.min_detectable)),
    ]);
    for (i, kind) in crate::dataset::Kind::ALL.iter().enumerate() {
        let k = kind.as_str();
        out.push(column(
            format!("n_{k}"),
            Count,
            "trials",
            "",
            format!("Scored trials of `{k}` tasks."),
            of(move |c: &CellSummary| Value::Count(c.kinds[i].pass.n)),
        ));
        out.extend(rate(
            &format!("selection_accuracy_{k}"),
            &format!("Selection accuracy over `{k}` tasks."),
            move |c: &CellSummary| c.kinds[i].selection,
        ));
        out.extend(rate(
            &format!("pass_at_1_{k}"),
            &format!("pass@1 over `{k}` tasks."),
            move |c: &CellSummary| c.kinds[i].pass,
        ));
    }
    for e in crate::record::ErrorType::ALL {
        let name = e.as_str();
        out.push(
            column(
                format!("errors_{name}"),
                Count,
                "trials",
                "",
                format!("Scored trials that failed as `{name}`."),
                of(move |c: &CellSummary| Value::Count(c.errors.get(name).copied().unwrap_or(0))),
            )
            .in_html(InHtml::Grouped("errors")),
        );
    }
    out.extend([
        judged("judge", Text, "", "The judges' labels seen in the cell, `;`-separated.", |j| Value::Text(j.judges.join(";").into())),
        judged("judge_prompts", Text, "", "Digests of the judge prompt sets seen in the cell, `;`-separated.", |j| Value::Text(j.prompts.join(";").into())),
        judged("judged_n", Count, "trials", "Trials with a verdict.", |j| Value::Count(j.judged)),
        judged("judge_errors", Count, "trials", "Judgements that failed (no verdict; in no rate).", |j| Value::Count(j.errors)),
        judged("judge_short_circuited", Count, "trials", "Verdicts reached without asking (empty answers, give-ups).", |j| Value::Count(j.short_circuited)),
        judged("sopr", Number, "fraction", "Solvable pass rate: mean pass-rate judgement score (null without pass-rate judgements).", |j| j.sopr.as_ref().map_or(Value::Null, |m| Value::number(m.mean))),
        judged("sopr_low", Number, "fraction", "Lower bound of the bootstrap 95 % interval of `sopr`.", |j| j.sopr.as_ref().map_or(Value::Null, |m| Value::number(m.low))),
        judged("sopr_high", Number, "fraction", "Upper bound of the bootstrap 95 % interval of `sopr`.", |j| j.sopr.as_ref().map_or(Value::Null, |m| Value::number(m.high))),
        judged("sopr_round_std", Number, "fraction", "Standard deviation over rounds of the round means (null with one round).", |j| j.sopr.as_ref().and_then(|m| m.round_std).map_or(Value::Null, Value::number)),
        judged("claim_coverage", Number, "fraction", "Mean claim coverage of claims judgements (null without them).", |j| j.coverage.as_ref().map_or(Value::Null, |m| Value::number(m.mean))),
        judged("claim_coverage_low", Number, "fraction", "Lower bound of the bootstrap 95 % interval of `claim_coverage`.", |j| j.coverage.as_ref().map_or(Value::Null, |m| Value::number(m.low))),
        judged("claim_coverage_high", Number, "fraction", "Upper bound of the bootstrap 95 % interval of `claim_coverage`.", |j| j.coverage.as_ref().map_or(Value::Null, |m| Value::number(m.high))),
        judged("claims_pass_rate", Number, "fraction", "Claims judgements with coverage at or above the threshold.", |j| j.claims_pass.map_or(Value::Null, |r| Value::number(r.rate))),
        judged("judged_done_rate", Number, "fraction", "Judged done, over trials with a verdict.", |j| if j.done.n == 0 { Value::Null } else { Value::number(j.done.rate) }),
        judged("judged_done_rate_low", Number, "fraction", "Lower bound of the 95 % Wilson interval of `judged_done_rate`.", |j| if j.done.n == 0 { Value::Null } else { Value::number(j.done.low) }),
        judged("judged_done_rate_high", Number, "fraction", "Upper bound of the 95 % Wilson interval of `judged_done_rate`.", |j| if j.done.n == 0 { Value::Null } else { Value::number(j.done.high) }),
        judged("right_tools_done", Count, "trials", "Right tools and judged done.", |j| Value::Count(j.joint.tools_done)),
        judged("right_tools_not_done", Count, "trials", "Right tools, judged not done.", |j| Value::Count(j.joint.tools_not_done)),
        judged("wrong_tools_done", Count, "trials", "Wrong tools, judged done anyway.", |j| Value::Count(j.joint.wrong_tools_done)),
        judged("wrong_tools_not_done", Count, "trials", "Wrong tools and judged not done.", |j| Value::Count(j.joint.wrong_tools_not_done)),
        judged("judge_prompt_tokens", Count, "tokens", "The judge's own prompt tokens (never added to the agent's).", |j| Value::Count(j.prompt_tokens)),
        judged("judge_completion_tokens", Count, "tokens", "The judge's own completion tokens.", |j| Value::Count(j.completion_tokens)),
        judged("judge_cost_usd", Number, "USD", "The judge's own cost.", |j| Value::number(j.cost_usd)),
    ]);
    out
}
