//! Parameter rules (TP-S001 to TP-S006, TP-D005, TP-P14): a `required` list, a type and a description
//! for every parameter, patterns for ids, enums for closed sets, formats for dates, no dispatching
//! `action` parameter, and no instructions hidden in a parameter's description.

use super::{Finding, PARAM_POISON, finding, poison, rule};
use crate::catalog::ToolRef;
use crate::catalog::variant::name_words;
use serde_json::Value;

/// The input schema of one tool, parameter by parameter.
pub(super) fn lint_parameters(t: &ToolRef<'_>, out: &mut Vec<Finding>) {
    let tool = t.tool;
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
