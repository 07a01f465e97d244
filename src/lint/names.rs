//! Naming rules (TP-N001 to TP-N006): snake_case, verb_noun in the imperative, no argument baked into
//! the name, names unique across servers, and one namespace token used by all of a server's tools or
//! none. Its own file because the verb list and the namespace count are a family of their own.

use super::{Finding, finding, rule};
use crate::catalog::variant::name_words;
use crate::catalog::{Catalog, ToolRef};
use serde_json::Value;
use std::collections::HashMap;

/// Verbs a tool name may start with.
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
/// Past tenses that are no imperative.
const PAST: &[&str] = &[
    "sent", "got", "made", "ran", "did", "built", "found", "wrote", "deleted", "created",
    "updated", "removed", "added", "listed", "searched", "fetched",
];
fn snake_case(name: &str) -> String {
    name_words(name).join("_")
}

/// The name of one tool: snake_case, verb_noun, no argument in it, unique.
pub(super) fn lint_name(
    t: &ToolRef<'_>,
    name_count: &HashMap<&str, usize>,
    out: &mut Vec<Finding>,
) {
    let tool = t.tool;
    let name = tool.name.as_str();
    let words = name_words(name);
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

/// Namespace consistency in servers with ≥ 10 tools: a token used by ≥ 60 % of the names should be used
/// by all (or none).
pub(super) fn lint_namespaces(catalog: &Catalog, out: &mut Vec<Finding>) {
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
