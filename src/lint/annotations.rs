//! Annotation rules (TP-A001 to TP-A004): annotations declared, and consistent with what the name's
//! verb says the tool does (destructive, read-only).

use super::{Finding, finding, rule};
use crate::catalog::ToolRef;
use crate::catalog::variant::name_words;

/// Verbs of tools that destroy something.
const DESTRUCTIVE: &[&str] = &[
    "delete", "remove", "drop", "destroy", "purge", "trash", "cancel", "void", "refund", "revoke",
    "wipe", "erase",
];
/// Verbs of tools that only read.
const READ_ONLY: &[&str] = &[
    "get", "list", "search", "find", "lookup", "check", "read", "fetch", "view", "preview",
    "compare", "estimate",
];
/// The annotations of one tool, against the first word of its name.
pub(super) fn lint_annotations(t: &ToolRef<'_>, out: &mut Vec<Finding>) {
    let tool = t.tool;
    let words = name_words(&tool.name);
    let first = words.first().map(String::as_str).unwrap_or("");
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
}
