//! The load-time checks of a templated mock response (see the parent module for the syntax): every
//! placeholder and `$switch` names a parameter the tool's input schema declares, `{{` only opens a
//! placeholder, a text placeholder without a default names a required parameter, a switch's cases
//! are values the parameter's `enum` allows, and a switch that could fall through has a `default`.
//!
//! Its own file because checking is a separate job from rendering: it runs once when a catalog
//! loads (for `validate` and `lint`), rendering on every simulated call.

use super::{Piece, SWITCH, as_text, parse, parse_path};
use serde_json::{Map, Value};

/// A problem with a mock response: where (a field suffix like `.branches[0].name`), what, and the text
/// to locate in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub field: String,
    pub message: String,
    pub needle: String,
}

/// Check a templated mock response against the tool's input schema (see the module docs).
pub fn check(template: &Value, input_schema: &Value) -> Vec<Problem> {
    let mut out = Vec::new();
    walk(template, input_schema, String::new(), &mut out);
    out
}

fn walk(v: &Value, schema: &Value, field: String, out: &mut Vec<Problem>) {
    match v {
        Value::String(s) => check_string(s, schema, field, out),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, schema, format!("{field}[{i}]"), out);
            }
        }
        Value::Object(m) if m.contains_key(SWITCH) => check_switch(m, schema, field, out),
        Value::Object(m) => {
            for (k, item) in m {
                if k.contains("{{") {
                    out.push(Problem {
                        field: format!("{field}.{k}"),
                        message: format!("placeholders are substituted in string values only, not in keys (`{k}`)"),
                        needle: k.clone(),
                    });
                }
                walk(item, schema, format!("{field}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// The schema of the parameter at `path`, or why the path names nothing the schema declares.
fn declared<'s>(schema: &'s Value, path: &[&str], shown: &str) -> Result<&'s Value, String> {
    let props = schema.get("properties").and_then(Value::as_object);
    let Some(param) = props.and_then(|m| m.get(path[0])) else {
        let names: Vec<&str> =
            props.map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
        let names = if names.is_empty() { "none".to_string() } else { names.join(", ") };
        return Err(format!("`{shown}` names no parameter of the tool (its parameters: {names})"));
    };
    let mut at = param;
    for seg in &path[1..] {
        let next = if seg.chars().all(|c| c.is_ascii_digit()) {
            match at.get("items") {
                Some(items) => Some(items),
                None if at.get("type").and_then(Value::as_str).is_some_and(|t| t != "array") => {
                    None
                }
                None => return Ok(&Value::Null),
            }
        } else {
            match at.get("properties").and_then(Value::as_object).and_then(|p| p.get(*seg)) {
                Some(s) => Some(s),
                None if at.get("additionalProperties") == Some(&Value::Bool(false)) => None,
                None if at.get("type").and_then(Value::as_str).is_some_and(|t| t != "object") => {
                    None
                }
                None => return Ok(&Value::Null),
            }
        };
        match next {
            Some(s) => at = s,
            None => {
                return Err(format!(
                    "`{shown}`: `{seg}` is not declared in the schema of parameter `{}`",
                    path[0]
                ));
            }
        }
    }
    Ok(at)
}

fn is_required(schema: &Value, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(name)))
}

fn check_string(s: &str, schema: &Value, field: String, out: &mut Vec<Problem>) {
    if !s.contains("{{") {
        return;
    }
    let pieces = match parse(s) {
        Ok(p) => p,
        Err(e) => {
            out.push(Problem {
                field,
                message: format!(
                    "{e}; to return this text verbatim, mark the tool \"mockMode\": \"static\""
                ),
                needle: s.chars().take(40).collect(),
            });
            return;
        }
    };
    let whole = pieces.len() == 1;
    for piece in &pieces {
        let Piece::Hole(p) = piece else { continue };
        let path = p.path.join(".");
        let shown = format!("{{{{{path}}}}}");
        let needle = format!("{{{{{path}");
        if let Err(e) = declared(schema, &p.path, &shown) {
            out.push(Problem { field, message: format!("placeholder {e}"), needle });
            return;
        }
        let always_there = p.path.len() == 1 && is_required(schema, p.path[0]);
        if !whole && p.default.is_none() && !always_there {
            out.push(Problem {
                field,
                message: format!("placeholder `{shown}` inside text names an optional value: give a default, e.g. `{{{{{path}|…}}}}`"),
                needle,
            });
            return;
        }
        if let Some(d) = p.default.filter(|d| d.contains("{{")) {
            let before = out.len();
            check_string(d, schema, field.clone(), out);
            if out.len() > before {
                return;
            }
        }
    }
}

fn check_switch(m: &Map<String, Value>, schema: &Value, field: String, out: &mut Vec<Problem>) {
    let mut problem = |message: String| {
        out.push(Problem { field: field.clone(), message, needle: SWITCH.to_string() })
    };
    if let Some(k) =
        m.keys().find(|k| !matches!(k.as_str(), SWITCH | "cases" | "absent" | "default"))
    {
        return problem(format!(
            "a `$switch` object has only `$switch`, `cases`, `absent` and `default`, not `{k}`"
        ));
    }
    let Some(path) = m[SWITCH].as_str().and_then(parse_path) else {
        return problem(format!(
            "`$switch` names a parameter, e.g. \"$switch\": \"units\" (got {})",
            m[SWITCH]
        ));
    };
    let shown = path.join(".");
    let param = match declared(schema, &path, &shown) {
        Ok(p) => p,
        Err(e) => return problem(format!("switch on {e}")),
    };
    let empty = Map::new();
    let cases = match m.get("cases") {
        None => &empty,
        Some(Value::Object(c)) => c,
        Some(_) => {
            return problem(format!(
                "`cases` of the `$switch` on `{shown}` is an object from the parameter's values to results"
            ));
        }
    };
    let allowed: Option<Vec<String>> =
        param.get("enum").and_then(Value::as_array).map(|e| e.iter().map(as_text).collect());
    if let Some(allowed) = &allowed
        && let Some(bad) = cases.keys().find(|k| !allowed.contains(k))
    {
        return problem(format!(
            "the `$switch` on `{shown}` has case `{bad}`, which is not one of its values ({})",
            allowed.join(", ")
        ));
    }
    let covered = allowed.as_ref().is_some_and(|a| a.iter().all(|v| cases.contains_key(v)));
    let absence_covered =
        m.contains_key("absent") || (path.len() == 1 && is_required(schema, path[0]));
    let falls_through = !(covered && absence_covered);
    if falls_through && !m.contains_key("default") {
        return problem(format!(
            "the `$switch` on `{shown}` needs a `default`: the argument may be absent or match no case"
        ));
    }
    // Inside a case, and in `default` when `absent` exists, the switched argument is given: text
    // placeholders naming it need no default there.
    let mut given = schema.clone();
    if path.len() == 1 {
        if let Some(Value::Array(r)) = given.get_mut("required") {
            r.push(Value::String(path[0].to_string()));
        } else if let Some(o) = given.as_object_mut() {
            o.insert("required".into(), Value::Array(vec![Value::String(path[0].to_string())]));
        }
    }
    for (k, v) in cases {
        walk(v, &given, format!("{field}.cases.{k}"), out);
    }
    if let Some(d) = m.get("absent") {
        walk(d, schema, format!("{field}.absent"), out);
    }
    if let Some(d) = m.get("default") {
        walk(
            d,
            if m.contains_key("absent") { &given } else { schema },
            format!("{field}.default"),
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::mock::tests::schema;
    use serde_json::json;

    fn messages(t: Value) -> Vec<String> {
        check(&t, &schema()).into_iter().map(|p| format!("{}: {}", p.field, p.message)).collect()
    }

    #[test]
    fn checks_name_the_problem() {
        let ok = json!({
            "a": "{{repository}}", "b": "PR {{number|1}} of {{repository}}", "c": "{{filter.status}}", "d": ["{{labels.0}}"],
            "e": "{{limit}}", "f": "since {{since|{{repository}}}}",
            "g": {"$switch": "units", "cases": {"metric": 1, "imperial": 2}}, "h": {"$switch": "limit", "cases": {"5": 1}, "default": 0}
        });
        assert_eq!(check(&ok, &schema()), vec![]);
        // One problem each: the template and the message naming it.
        let cases = [
            (
                json!({"x": ["{{repo}}"]}),
                ".x[0]: placeholder `{{repo}}` names no parameter of the tool (its parameters: repository, number, labels, filter, limit, units, since)",
            ),
            (
                json!({"x": "{{filter.state}}"}),
                ".x: placeholder `{{filter.state}}`: `state` is not declared in the schema of parameter `filter`",
            ),
            (
                json!({"x": "{{number.0}}"}),
                ".x: placeholder `{{number.0}}`: `0` is not declared in the schema of parameter `number`",
            ),
            (
                json!({"x": "PR {{number}}"}),
                ".x: placeholder `{{number}}` inside text names an optional value: give a default, e.g. `{{number|…}}`",
            ),
            (
                json!({"{{x}}": 1}),
                ".{{x}}: placeholders are substituted in string values only, not in keys (`{{x}}`)",
            ),
            (
                json!({"x": "{{since|{{nope}}}}"}),
                ".x: placeholder `{{nope}}` names no parameter of the tool (its parameters: repository, number, labels, filter, limit, units, since)",
            ),
            (
                json!({"x": "{{since|after {{limit}}}}"}),
                ".x: placeholder `{{limit}}` inside text names an optional value: give a default, e.g. `{{limit|…}}`",
            ),
            (
                json!({"s": {"$switch": "unit", "cases": {}}}),
                ".s: switch on `unit` names no parameter of the tool (its parameters: repository, number, labels, filter, limit, units, since)",
            ),
            (
                json!({"s": {"$switch": "units", "cases": {"kelvin": 1}, "default": 0}}),
                ".s: the `$switch` on `units` has case `kelvin`, which is not one of its values (metric, imperial)",
            ),
            (
                json!({"s": {"$switch": "units", "cases": {"metric": 1}}}),
                ".s: the `$switch` on `units` needs a `default`: the argument may be absent or match no case",
            ),
            (
                json!({"s": {"$switch": "limit", "cases": {"5": 1}}}),
                ".s: the `$switch` on `limit` needs a `default`: the argument may be absent or match no case",
            ),
            (
                json!({"s": {"$switch": "units", "case": {}}}),
                ".s: a `$switch` object has only `$switch`, `cases`, `absent` and `default`, not `case`",
            ),
            (
                json!({"s": {"$switch": "limit", "cases": {"5": 1, "6": 2}, "absent": 0}}),
                ".s: the `$switch` on `limit` needs a `default`: the argument may be absent or match no case",
            ),
            (
                json!({"s": {"$switch": "since", "absent": "{{since}}", "default": "{{nope}}"}}),
                ".s.default: placeholder `{{nope}}` names no parameter of the tool (its parameters: repository, number, labels, filter, limit, units, since)",
            ),
            (
                json!({"s": {"$switch": "units", "cases": {"metric": "{{nope}}", "imperial": 1}}}),
                ".s.cases.metric: placeholder `{{nope}}` names no parameter of the tool (its parameters: repository, number, labels, filter, limit, units, since)",
            ),
        ];
        for (template, expected) in cases {
            assert_eq!(messages(template.clone()), [expected], "{template}");
        }
        let bad = messages(json!({"x": "{{ not a name }}", "y": "open {{repository"}));
        assert_eq!(bad.len(), 2);
        assert!(bad[0].starts_with(".x: `{{ not a name }}` is not a placeholder"), "{}", bad[0]);
        assert!(
            bad[1].starts_with(".y: `{{` without a closing `}}`")
                && bad[1].ends_with("mark the tool \"mockMode\": \"static\""),
            "{}",
            bad[1]
        );
    }
}
