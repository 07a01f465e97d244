//! `toolpick lint`: checks a catalog against the tool-design rules.
//!
//! Each rule has an id, a severity (`info`, `warn`, `block`), a message that says what to change and,
//! where the fix is mechanical, a suggested rewrite. This file holds the rule table, the finding and
//! the driver; each family of rules has its own file: [`names`] (and namespace consistency),
//! [`descriptions`], [`schemas`], [`annotations`], [`structure`] (servers and categories) and tool
//! poisoning ([`poison`]). Output formats live in [`output`]. The degrade operators of
//! [`crate::catalog::variant`] each violate one of these rules, and a test checks that the linter
//! catches every one.

mod annotations;
mod descriptions;
mod names;
pub mod output;
pub mod poison;
mod schemas;
mod structure;

use crate::catalog::{Catalog, ToolRef};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Block,
}

impl Severity {
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warn" => Some(Severity::Warn),
            "block" => Some(Severity::Block),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Block => "block",
        }
    }
}

/// A rule's identity, for reports and SARIF.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RuleInfo {
    pub id: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
}

pub const RULES: &[RuleInfo] = &[
    RuleInfo {
        id: "TP-N001",
        name: "snake-case-name",
        severity: Severity::Warn,
        summary: "Tool names are snake_case.",
    },
    RuleInfo {
        id: "TP-N002",
        name: "verb-noun-name",
        severity: Severity::Info,
        summary: "Tool names start with a verb and name the object (verb_noun).",
    },
    RuleInfo {
        id: "TP-N003",
        name: "tense-in-name",
        severity: Severity::Warn,
        summary: "Tool names use the imperative, not a past tense.",
    },
    RuleInfo {
        id: "TP-N004",
        name: "argument-in-name",
        severity: Severity::Warn,
        summary: "Arguments belong in parameters, not in the tool name.",
    },
    RuleInfo {
        id: "TP-N005",
        name: "namespace-consistency",
        severity: Severity::Info,
        summary: "Inside a large server, tools share a consistent naming prefix.",
    },
    RuleInfo {
        id: "TP-N006",
        name: "unique-name",
        severity: Severity::Warn,
        summary: "Tool names are unique across the catalog.",
    },
    RuleInfo {
        id: "TP-D001",
        name: "description-too-short",
        severity: Severity::Warn,
        summary: "Descriptions have at least 40 characters.",
    },
    RuleInfo {
        id: "TP-D002",
        name: "description-too-long",
        severity: Severity::Warn,
        summary: "Descriptions stay within 1024 characters (providers truncate longer ones).",
    },
    RuleInfo {
        id: "TP-D003",
        name: "missing-disambiguation",
        severity: Severity::Warn,
        summary: "A tool with a similar sibling says \"Use when…\" and \"Do not use for…\".",
    },
    RuleInfo {
        id: "TP-D004",
        name: "describes-other-tool",
        severity: Severity::Info,
        summary: "A description does not describe another tool's job.",
    },
    RuleInfo {
        id: "TP-D005",
        name: "missing-format-hint",
        severity: Severity::Info,
        summary: "Date, time, e-mail and id parameters say their format.",
    },
    RuleInfo {
        id: "TP-D006",
        name: "description-without-content-words",
        severity: Severity::Warn,
        summary: "A description has content words (not blank, not only stop words), so search and discovery can match it.",
    },
    RuleInfo {
        id: "TP-S001",
        name: "closed-set-without-enum",
        severity: Severity::Warn,
        summary: "A closed set of values is an enum.",
    },
    RuleInfo {
        id: "TP-S002",
        name: "required-list",
        severity: Severity::Warn,
        summary: "The schema has a required list, and it is minimal.",
    },
    RuleInfo {
        id: "TP-S003",
        name: "id-without-pattern",
        severity: Severity::Warn,
        summary: "Id parameters are typed with a pattern.",
    },
    RuleInfo {
        id: "TP-S004",
        name: "untyped-parameter",
        severity: Severity::Warn,
        summary: "Every parameter has a type.",
    },
    RuleInfo {
        id: "TP-S005",
        name: "undocumented-parameter",
        severity: Severity::Warn,
        summary: "Every parameter has a description.",
    },
    RuleInfo {
        id: "TP-S006",
        name: "monolithic-action",
        severity: Severity::Warn,
        summary: "One tool per behaviour, not an `action` parameter dispatching several.",
    },
    RuleInfo {
        id: "TP-A001",
        name: "missing-annotations",
        severity: Severity::Warn,
        summary: "Tools declare their annotations.",
    },
    RuleInfo {
        id: "TP-A002",
        name: "destructive-without-hint",
        severity: Severity::Warn,
        summary: "Destructive tools set destructiveHint: true.",
    },
    RuleInfo {
        id: "TP-A003",
        name: "read-only-without-hint",
        severity: Severity::Warn,
        summary: "Read-only tools set readOnlyHint: true.",
    },
    RuleInfo {
        id: "TP-A004",
        name: "contradictory-annotations",
        severity: Severity::Block,
        summary: "A tool is not both read-only and destructive.",
    },
    RuleInfo {
        id: "TP-C001",
        name: "single-server-catalog",
        severity: Severity::Info,
        summary: "A catalog of one server gives progressive discovery's first step nothing to choose between: its result rests on the server's description.",
    },
];

/// The rule `validate` also reports: a description without content words leaves tool search nothing
/// but the name to match.
pub const NO_CONTENT_WORDS: &str = "TP-D006";

/// Poisoning found in a parameter's description gets its own rule id, so reviewers see where it hid.
pub const PARAM_POISON: RuleInfo = RuleInfo {
    id: "TP-P14",
    name: "instruction-in-parameter",
    severity: Severity::Block,
    summary: "Parameter descriptions carry no instructions to the model.",
};

/// All rule infos, poisoning included (for SARIF's rule table).
pub fn all_rules() -> Vec<RuleInfo> {
    let mut v: Vec<RuleInfo> = RULES.to_vec();
    v.extend(poison::RULES.iter().map(|p| RuleInfo {
        id: p.id,
        name: p.name,
        severity: Severity::Block,
        summary: p.message,
    }));
    v.push(PARAM_POISON);
    v
}

pub(crate) fn rule(id: &str) -> RuleInfo {
    *RULES.iter().find(|r| r.id == id).expect("known rule")
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// Tool id; for a finding about a server or a category, `server:<name>` or `category:<server>/<name>`.
    pub tool: String,
    /// Field within the tool, e.g. `inputSchema.properties.city`.
    pub field: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    #[serde(skip)]
    pub file: std::path::PathBuf,
    #[serde(skip)]
    pub line: usize,
}

fn finding(
    r: RuleInfo,
    t: &ToolRef<'_>,
    field: impl Into<String>,
    message: String,
    suggestion: Option<String>,
) -> Finding {
    Finding {
        rule: r.id,
        name: r.name,
        severity: r.severity,
        tool: t.tool.id.clone(),
        field: field.into(),
        message,
        suggestion,
        file: t.tool.origin.file.clone(),
        line: t.tool.origin.line,
    }
}

/// Lint a whole catalog. Findings come in catalog order, by tool, then by rule.
pub fn lint(catalog: &Catalog) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut name_count: HashMap<&str, usize> = HashMap::new();
    for t in catalog.tools() {
        *name_count.entry(t.tool.name.as_str()).or_default() += 1;
    }
    let all_names: Vec<&str> = catalog.tools().map(|t| t.tool.name.as_str()).collect();
    for t in catalog.tools() {
        lint_tool(&t, catalog, &name_count, &all_names, &mut out);
    }
    names::lint_namespaces(catalog, &mut out);
    structure::lint_structure(catalog, &mut out);
    out
}

/// The per-tool rules, family by family; findings keep this order (names, descriptions, schemas,
/// annotations, then poisoning found in the description).
fn lint_tool(
    t: &ToolRef<'_>,
    catalog: &Catalog,
    name_count: &HashMap<&str, usize>,
    all_names: &[&str],
    out: &mut Vec<Finding>,
) {
    names::lint_name(t, name_count, out);
    descriptions::lint_description(t, catalog, all_names, out);
    schemas::lint_parameters(t, out);
    annotations::lint_annotations(t, out);
    // Poisoning in the description; a parameter's is reported by `schemas` under its own rule id.
    let tool = t.tool;
    for pr in poison::scan(&tool.description) {
        out.push(Finding {
            rule: pr.id,
            name: pr.name,
            severity: Severity::Block,
            tool: tool.id.clone(),
            field: "description".into(),
            message: pr.message.into(),
            suggestion: None,
            file: tool.origin.file.clone(),
            line: tool.origin.line,
        });
    }
}

/// Highest severity among findings.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}
