//! `toolpick lint`: checks a catalog against the tool-design rules.
//!
//! Each rule has an id, a severity (`info`, `warn`, `block`), a message that says what to change and,
//! where the fix is mechanical, a suggested rewrite. Rules cover names, descriptions, schemas,
//! annotations and tool poisoning ([`poison`]). Output formats live in [`output`]. The degrade operators
//! of [`crate::catalog::variant`] each violate one of these rules, and a test checks that the linter
//! catches every one.

pub mod output;
pub mod poison;

use crate::catalog::variant::name_words;
use crate::catalog::{Catalog, Tool, ToolRef};
use serde::Serialize;
use serde_json::Value;
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

fn rule(id: &str) -> RuleInfo {
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

const VERBS: &[&str] = &[
    "add",
    "apply",
    "approve",
    "archive",
    "assign",
    "book",
    "cancel",
    "capture",
    "charge",
    "check",
    "close",
    "comment",
    "compare",
    "copy",
    "create",
    "delete",
    "download",
    "edit",
    "export",
    "find",
    "forward",
    "geocode",
    "get",
    "import",
    "invite",
    "issue",
    "link",
    "list",
    "log",
    "lookup",
    "mark",
    "merge",
    "move",
    "open",
    "pause",
    "pin",
    "post",
    "publish",
    "read",
    "refund",
    "remove",
    "rename",
    "reopen",
    "reply",
    "request",
    "rerun",
    "respond",
    "restore",
    "resume",
    "retry",
    "reverse",
    "run",
    "save",
    "schedule",
    "search",
    "send",
    "set",
    "share",
    "start",
    "stop",
    "submit",
    "transition",
    "trash",
    "unpin",
    "unshare",
    "update",
    "upload",
    "void",
    "watch",
    "fetch",
    "calculate",
    "convert",
    "estimate",
    "plan",
    "preview",
    "record",
    "register",
    "release",
    "reset",
    "revoke",
    "tag",
    "trigger",
    "verify",
    "view",
    "change",
    "transfer",
    "claim",
    "clone",
    "complete",
    "decline",
    "accept",
    "dismiss",
    "enable",
    "disable",
];
const PAST: &[&str] = &[
    "sent", "got", "made", "ran", "did", "built", "found", "wrote", "deleted", "created",
    "updated", "removed", "added", "listed", "searched", "fetched",
];
const DESTRUCTIVE: &[&str] = &[
    "delete", "remove", "drop", "destroy", "purge", "trash", "cancel", "void", "refund", "revoke",
    "wipe", "erase",
];
const READ_ONLY: &[&str] = &[
    "get", "list", "search", "find", "lookup", "check", "read", "fetch", "view", "preview",
    "compare", "estimate",
];
const GUIDANCE: &[&str] =
    &["use when", "use this when", "do not use", "don't use", "not for", "instead", "prefer"];

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

fn snake_case(name: &str) -> String {
    name_words(name).join("_")
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
    lint_namespaces(catalog, &mut out);
    lint_structure(catalog, &mut out);
    out
}

/// Servers and categories: a description without content words leaves progressive discovery (which
/// ranks servers and categories by their descriptions) nothing to match (TP-D006); a catalog of one
/// server makes discovery's first step a formality (TP-C001). Reported at the server's file, at its
/// first tool's line for a category.
fn lint_structure(catalog: &Catalog, out: &mut Vec<Finding>) {
    let structural =
        |r: RuleInfo, tool: String, field: &str, message: String, at: Option<&Tool>| Finding {
            rule: r.id,
            name: r.name,
            severity: r.severity,
            tool,
            field: field.into(),
            message,
            suggestion: None,
            file: at.map(|t| t.origin.file.clone()).unwrap_or_default(),
            line: at.map(|t| t.origin.line).unwrap_or(0),
        };
    let no_words = |d: &str| {
        if crate::text::words(d).is_empty() { "has no words" } else { "has only stop words" }
    };
    for server in &catalog.servers {
        let first = server.categories.iter().flat_map(|c| c.tools.first()).next();
        if !crate::text::has_content_word(&server.description) {
            let message = format!(
                "the description of server `{}` {}: progressive discovery ranks servers by it and has nothing to match; say what the server is for",
                server.name,
                no_words(&server.description)
            );
            out.push(Finding {
                line: first.map_or(0, |_| 1),
                ..structural(
                    rule(NO_CONTENT_WORDS),
                    format!("server:{}", server.name),
                    "description",
                    message,
                    first,
                )
            });
        }
        for category in &server.categories {
            if !crate::text::has_content_word(&category.description) {
                let message = format!(
                    "the description of category `{}` {}: discovery lists categories by it and has nothing to match; say what its tools do",
                    category.name,
                    no_words(&category.description)
                );
                out.push(structural(
                    rule(NO_CONTENT_WORDS),
                    format!("category:{}/{}", server.name, category.name),
                    "description",
                    message,
                    category.tools.first(),
                ));
            }
        }
    }
    if let [server] = catalog.servers.as_slice() {
        let first = server.categories.iter().flat_map(|c| c.tools.first()).next();
        let message = format!(
            "`{}` is the catalog's only server: progressive discovery's first step has nothing to choose between, and the layout's result rests on how the server is described",
            server.name
        );
        out.push(Finding {
            line: first.map_or(0, |_| 1),
            ..structural(rule("TP-C001"), format!("server:{}", server.name), "", message, first)
        });
    }
}

fn lint_tool(
    t: &ToolRef<'_>,
    catalog: &Catalog,
    name_count: &HashMap<&str, usize>,
    all_names: &[&str],
    out: &mut Vec<Finding>,
) {
    let tool = t.tool;
    let name = tool.name.as_str();
    let words = name_words(name);
    // --- names
    let is_snake = crate::catalog::load::is_valid_name(name);
    if !is_snake {
        out.push(finding(
            rule("TP-N001"),
            t,
            "name",
            format!("`{name}` is not snake_case"),
            Some(snake_case(name)),
        ));
    }
    let first = words.first().map(String::as_str).unwrap_or("");
    if PAST.contains(&first)
        || (first.ends_with("ed") && first.len() > 4 && !VERBS.contains(&first))
    {
        out.push(finding(
            rule("TP-N003"),
            t,
            "name",
            format!("`{name}` starts with a past tense (`{first}`); use the imperative"),
            None,
        ));
    } else if words.len() < 2 || !VERBS.contains(&first) {
        out.push(finding(
            rule("TP-N002"),
            t,
            "name",
            format!(
                "`{name}` does not read as verb_noun (first word `{first}` is not a known verb)"
            ),
            None,
        ));
    }
    if let Some(arg) = argument_in_name(&words, tool) {
        out.push(finding(
            rule("TP-N004"),
            t,
            "name",
            format!("`{name}` bakes the argument `{arg}` into the name; make it a parameter"),
            None,
        ));
    }
    if name_count.get(name).copied().unwrap_or(0) > 1 {
        out.push(finding(
            rule("TP-N006"),
            t,
            "name",
            format!(
                "`{name}` is used by more than one tool; qualify it (e.g. `{}_{name}`)",
                t.server.name
            ),
            None,
        ));
    }
    // --- descriptions
    let d = tool.description.as_str();
    let len = d.chars().count();
    if len < 40 {
        out.push(finding(rule("TP-D001"), t, "description", format!("description has {len} characters; say what the tool does, when to use it and what it returns"), None));
    }
    if len > 1024 {
        out.push(finding(
            rule("TP-D002"),
            t,
            "description",
            format!("description has {len} characters; providers truncate at 1024"),
            None,
        ));
    }
    if !crate::text::has_content_word(d) {
        let what = if crate::text::words(d).is_empty() {
            "description has no words"
        } else {
            "description has only stop words"
        };
        let reach = if crate::text::has_content_word(name) {
            "search and discovery can match this tool only on its name and parameter names"
                .to_string()
        } else {
            format!("its name `{name}` has none either, so search finds it only by its exact name")
        };
        out.push(finding(
            rule(NO_CONTENT_WORDS),
            t,
            "description",
            format!("{what}: no content word to search on; {reach}; say what the tool does"),
            None,
        ));
    }
    let lower = d.to_lowercase();
    if let Some(sib) = similar_sibling(t, catalog)
        && !GUIDANCE.iter().any(|g| lower.contains(g))
    {
        out.push(finding(
            rule("TP-D003"),
            t,
            "description",
            format!("`{sib}` is similar; add \"Use when …\" and \"Do not use for … (use {sib})\""),
            None,
        ));
    }
    for other in all_names.iter().filter(|o| **o != name && o.len() > 6) {
        if let Some(pos) = d.find(*other) {
            let sentence_start = d[..pos].rfind(['.', '!', '?']).map(|p| p + 1).unwrap_or(0);
            let sentence = d[sentence_start..pos].to_lowercase();
            let referral = [
                "use ", "not ", "instead", "prefer", "see ", "(", "than ", "with ", "after ",
                "before ", "from ", "by ",
            ]
            .iter()
            .any(|k| sentence.contains(k));
            if !referral {
                out.push(finding(rule("TP-D004"), t, "description", format!("describes `{other}`; refer to other tools only to disambiguate (\"Do not use for …, use {other}\")"), None));
            }
        }
    }
    // --- schemas
    let props = tool.input_schema.get("properties").and_then(Value::as_object);
    if let Some(props) = props {
        if !props.is_empty() && tool.input_schema.get("required").is_none() {
            out.push(finding(
                rule("TP-S002"),
                t,
                "inputSchema.required",
                "no `required` list; list the parameters the tool cannot work without".into(),
                None,
            ));
        }
        for (p, schema) in props {
            let field = format!("inputSchema.properties.{p}");
            let pdesc = schema.get("description").and_then(Value::as_str).unwrap_or("");
            let has_type = schema.get("type").is_some()
                || schema.get("enum").is_some()
                || schema.get("const").is_some()
                || schema.get("anyOf").is_some()
                || schema.get("oneOf").is_some()
                || schema.get("$ref").is_some();
            if !has_type {
                out.push(finding(rule("TP-S004"), t, &field, format!("`{p}` has no type"), None));
            }
            if pdesc.is_empty() {
                out.push(finding(
                    rule("TP-S005"),
                    t,
                    &field,
                    format!("`{p}` has no description; say what it means and its format"),
                    None,
                ));
            }
            let is_string = schema.get("type").and_then(Value::as_str) == Some("string");
            let pw = name_words(p);
            if is_string
                && (p == "id" || pw.last().is_some_and(|w| w == "id" || w == "key"))
                && schema.get("pattern").is_none()
                && schema.get("enum").is_none()
                && schema.get("format").is_none()
            {
                out.push(finding(
                    rule("TP-S003"),
                    t,
                    &field,
                    format!("id parameter `{p}` has no `pattern`; type it (e.g. \"^OPS-[0-9]+$\")"),
                    None,
                ));
            }
            if is_string && schema.get("enum").is_none() && closed_set_hint(pdesc) {
                out.push(finding(
                    rule("TP-S001"),
                    t,
                    &field,
                    format!("`{p}`'s description lists a closed set of values; make it an `enum`"),
                    None,
                ));
            }
            let datey = pw.iter().any(|w| {
                ["date", "time", "email", "day", "at", "timestamp", "deadline"]
                    .contains(&w.as_str())
            });
            if is_string
                && datey
                && schema.get("format").is_none()
                && schema.get("pattern").is_none()
                && !pdesc.contains("e.g.")
                && !pdesc.to_lowercase().contains("format")
                && !pdesc.contains("YYYY")
            {
                out.push(finding(
                    rule("TP-D005"),
                    t,
                    &field,
                    format!("`{p}` looks like a date/time/e-mail but gives no format"),
                    None,
                ));
            }
            if ["action", "operation", "command", "op"].contains(&p.as_str()) {
                let n = schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|a| a.len())
                    .unwrap_or(usize::MAX);
                if n > 3 {
                    out.push(finding(rule("TP-S006"), t, &field, format!("`{p}` dispatches several behaviours; split the tool into one tool per behaviour"), None));
                }
            }
            for pr in poison::scan(pdesc) {
                out.push(Finding {
                    message: format!("{} (in the description of `{p}`)", pr.message),
                    ..finding(PARAM_POISON, t, &field, String::new(), None)
                });
            }
        }
    }
    // --- annotations
    let a = &tool.annotations;
    if !tool.origin.annotations_given {
        let ro = READ_ONLY.contains(&first);
        out.push(finding(
            rule("TP-A001"),
            t,
            "annotations",
            "no annotations; declare readOnlyHint, destructiveHint, idempotentHint and openWorldHint".into(),
            Some(format!("{{\"readOnlyHint\": {ro}, \"destructiveHint\": {}, \"idempotentHint\": {ro}, \"openWorldHint\": false}}", DESTRUCTIVE.contains(&first))),
        ));
    } else {
        if DESTRUCTIVE.contains(&first) && !a.destructive_hint {
            out.push(finding(
                rule("TP-A002"),
                t,
                "annotations.destructiveHint",
                format!("`{first}` is destructive; set destructiveHint: true"),
                None,
            ));
        }
        if READ_ONLY.contains(&first) && !a.read_only_hint {
            out.push(finding(
                rule("TP-A003"),
                t,
                "annotations.readOnlyHint",
                format!("`{first}` reads only; set readOnlyHint: true"),
                None,
            ));
        }
        if a.read_only_hint && a.destructive_hint {
            out.push(finding(
                rule("TP-A004"),
                t,
                "annotations",
                "readOnlyHint and destructiveHint are both true".into(),
                None,
            ));
        }
    }
    // --- poisoning in the description
    for pr in poison::scan(d) {
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

/// A word of the name that is really an argument: after a preposition (`get_weather_in_tokyo`), a
/// number, or one of the tool's own enum values.
fn argument_in_name(words: &[String], tool: &crate::catalog::Tool) -> Option<String> {
    for (i, w) in words.iter().enumerate().skip(1) {
        if w.chars().any(|c| c.is_ascii_digit()) {
            return Some(w.clone());
        }
        if ["in", "for", "at", "from", "of", "on"].contains(&w.as_str())
            && i + 1 < words.len()
            && i + 2 == words.len()
        {
            return Some(words[i + 1].clone());
        }
    }
    for (_, schema) in tool.properties() {
        for v in schema.get("enum").and_then(Value::as_array).into_iter().flatten() {
            if let Some(s) = v.as_str() {
                let vw = name_words(s);
                if vw.len() == 1 && vw[0].len() > 3 && words.iter().skip(1).any(|w| *w == vw[0]) {
                    return Some(vw[0].clone());
                }
            }
        }
    }
    None
}

/// A sibling in the same server whose name shares the object words.
fn similar_sibling(t: &ToolRef<'_>, catalog: &Catalog) -> Option<String> {
    let words = name_words(&t.tool.name);
    let objects: Vec<&String> = words.iter().skip(1).filter(|w| w.len() > 2).collect();
    let server = catalog.server(&t.server.name)?;
    server
        .categories
        .iter()
        .flat_map(|c| c.tools.iter())
        .filter(|o| o.id != t.tool.id)
        .find(|o| {
            let ow = name_words(&o.name);
            objects.iter().any(|w| ow.iter().skip(1).any(|x| x == *w))
        })
        .map(|o| o.name.clone())
}

/// "one of a, b or c", "either x or y", "a | b | c".
fn closed_set_hint(desc: &str) -> bool {
    let l = desc.to_lowercase();
    l.contains("one of ")
        || l.contains("one of:")
        || l.contains("either ")
        || l.matches(" | ").count() >= 1
        || l.matches('|').count() >= 2
}

/// Namespace consistency in servers with ≥ 10 tools: a token used by ≥ 60 % of the names should be used
/// by all (or none).
fn lint_namespaces(catalog: &Catalog, out: &mut Vec<Finding>) {
    for server in &catalog.servers {
        let tools: Vec<ToolRef<'_>> =
            catalog.tools().filter(|t| t.server.name == server.name).collect();
        if tools.len() < 10 {
            continue;
        }
        let mut count: HashMap<String, usize> = HashMap::new();
        for t in &tools {
            let mut ws = stems(&t.tool.name);
            ws.sort();
            ws.dedup();
            for w in ws {
                *count.entry(w).or_default() += 1;
            }
        }
        let mut common: Vec<(String, usize)> = count
            .into_iter()
            .filter(|(w, n)| *n * 10 >= tools.len() * 6 && *n < tools.len() && w.len() > 2)
            .collect();
        common.sort();
        for (word, _) in common {
            for t in tools.iter().filter(|t| !stems(&t.tool.name).contains(&word)) {
                out.push(finding(
                    rule("TP-N005"),
                    t,
                    "name",
                    format!(
                        "most tools of `{}` carry `{word}` in their name; `{}` does not",
                        server.name, t.tool.name
                    ),
                    None,
                ));
            }
        }
    }
}

/// Name words with a plural `s` dropped, so `page` and `pages` count as one namespace token.
fn stems(name: &str) -> Vec<String> {
    name_words(name)
        .into_iter()
        .map(|w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                w[..w.len() - 1].to_string()
            } else {
                w
            }
        })
        .collect()
}

/// Highest severity among findings.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}
