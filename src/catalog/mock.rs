//! Argument-aware mock responses: the placeholder syntax, its rendering and its checks.
//!
//! A tool's `mockResponse` is what simulated execution answers a valid call with. A static answer
//! contradicts most calls (`delete_branch(repository="billing-api")` answered `"repository": "web-app"`),
//! and in a multi-turn episode the contradiction leaks a value the user never gave into the conversation.
//! So a catalog's mock response may refer to the call's arguments with placeholders, substituted in
//! string values (never in object keys):
//!
//! - a string that is exactly `"{{param}}"` becomes the argument's value **with its JSON type**: a number
//!   stays a number, an array or object is inserted as given;
//! - `{{param}}` inside a longer string is replaced by the value's text (a string as is, anything else
//!   as compact JSON): `"https://code.example.com/acme/{{repository}}"`;
//! - `{{a.b}}` follows a path into an object argument; a numeric segment indexes an array (`{{to.0}}`);
//! - `{{param|default}}` gives the value to use when the argument (or the path) is absent. The default is
//!   read as JSON when it is valid JSON (`{{limit|20}}` → `20`, `{{x|null}}` → `null`, `{{x|"20"}}` →
//!   `"20"`), else taken as text (`{{status|open}}` → `"open"`). A whole-string placeholder without a
//!   default becomes `null` when its argument is absent; a placeholder inside a longer string needs a
//!   default unless it names a required parameter (an empty hole in a sentence is never meant).
//!
//! [`check`] runs when a catalog loads (so `toolpick validate` and `toolpick lint` report it): every
//! placeholder must name a parameter the tool's input schema declares, and `{{` may only open a
//! placeholder. Tools whose mock response is someone else's data — everything the importers read — are
//! [`MockMode::Static`]: answered verbatim, a literal `{{x}}` included, and trials record which it was.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Whether a tool's mock response is a template over the call's arguments or fixed data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MockMode {
    /// Placeholders are substituted from the call's arguments (the default for a catalog file).
    #[default]
    Templated,
    /// Returned verbatim, never read for placeholders (imported upstream data).
    Static,
}

impl MockMode {
    pub fn as_str(self) -> &'static str {
        match self {
            MockMode::Templated => "templated",
            MockMode::Static => "static",
        }
    }
}

/// One `{{…}}`: the path into the arguments and the default text, if any.
#[derive(Debug, Clone, PartialEq)]
struct Placeholder<'a> {
    path: Vec<&'a str>,
    default: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq)]
enum Piece<'a> {
    Text(&'a str),
    Hole(Placeholder<'a>),
}

/// A path segment: a parameter-like name or an array index.
fn valid_segment(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_digit() => s.chars().all(|c| c.is_ascii_digit()),
        Some(c) if c.is_ascii_alphabetic() || c == '_' => chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        _ => false,
    }
}

/// Split a string into text and placeholders; `Err` names the first malformed `{{…}}`.
fn parse(s: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find("{{") {
        if open > 0 {
            pieces.push(Piece::Text(&rest[..open]));
        }
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            return Err(format!("`{{{{` without a closing `}}}}` in {s:?}"));
        };
        let inner = &after[..close];
        let (path, default) = match inner.split_once('|') {
            Some((p, d)) => (p.trim(), Some(d)),
            None => (inner.trim(), None),
        };
        let segments: Vec<&str> = path.split('.').collect();
        if !segments.iter().all(|seg| valid_segment(seg)) {
            return Err(format!("`{{{{{inner}}}}}` is not a placeholder (write {{{{param}}}}, {{{{param.field}}}} or {{{{param|default}}}})"));
        }
        pieces.push(Piece::Hole(Placeholder { path: segments, default }));
        rest = &after[close + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

/// The value at `path` in the arguments, if present.
fn resolve<'v>(args: &'v Value, path: &[&str]) -> Option<&'v Value> {
    let mut at = args;
    for seg in path {
        at = match at {
            Value::Object(m) => m.get(*seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

fn default_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn fill(p: &Placeholder<'_>, args: &Value) -> Value {
    match (resolve(args, &p.path), p.default) {
        (Some(v), _) => v.clone(),
        (None, Some(d)) => default_value(d),
        (None, None) => Value::Null,
    }
}

/// The mock response for a call with `args`: every placeholder replaced (see the module docs).
/// Strings that do not parse are left as they are ([`check`] rejects them at load time).
pub fn render(template: &Value, args: &Value) -> Value {
    match template {
        Value::String(s) if s.contains("{{") => match parse(s) {
            Ok(pieces) => match pieces.as_slice() {
                [Piece::Hole(p)] => fill(p, args),
                _ => Value::String(
                    pieces
                        .iter()
                        .map(|piece| match piece {
                            Piece::Text(t) => (*t).to_string(),
                            Piece::Hole(p) => as_text(&fill(p, args)),
                        })
                        .collect(),
                ),
            },
            Err(_) => template.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| render(v, args)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), render(v, args))).collect::<Map<_, _>>()),
        other => other.clone(),
    }
}

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

fn check_string(s: &str, schema: &Value, field: String, out: &mut Vec<Problem>) {
    if !s.contains("{{") {
        return;
    }
    let pieces = match parse(s) {
        Ok(p) => p,
        Err(e) => {
            out.push(Problem {
                field,
                message: format!("{e}; to return this text verbatim, mark the tool \"mockMode\": \"static\""),
                needle: s.chars().take(40).collect(),
            });
            return;
        }
    };
    let whole = pieces.len() == 1;
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    for piece in &pieces {
        let Piece::Hole(p) = piece else { continue };
        let shown = format!("{{{{{}}}}}", p.path.join("."));
        let needle = format!("{{{{{}", p.path.join("."));
        let Some(param) = props.and_then(|m| m.get(p.path[0])) else {
            let names: Vec<&str> = props.map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
            let names = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            out.push(Problem { field, message: format!("placeholder `{shown}` names no parameter of the tool (its parameters: {names})"), needle });
            return;
        };
        if let Some(bad) = undeclared_segment(param, &p.path[1..]) {
            out.push(Problem { field, message: format!("placeholder `{shown}`: `{bad}` is not declared in the schema of parameter `{}`", p.path[0]), needle });
            return;
        }
        let always_there = p.path.len() == 1 && required.contains(&p.path[0]);
        if !whole && p.default.is_none() && !always_there {
            out.push(Problem {
                field,
                message: format!("placeholder `{shown}` inside text names an optional value: give a default, e.g. `{{{{{}|…}}}}`", p.path.join(".")),
                needle,
            });
            return;
        }
    }
}

/// The first segment of `rest` the parameter's schema rules out, if the schema says enough to tell.
fn undeclared_segment<'a>(schema: &Value, rest: &[&'a str]) -> Option<&'a str> {
    let mut at = schema;
    for seg in rest {
        if seg.chars().all(|c| c.is_ascii_digit()) {
            match at.get("items") {
                Some(items) => at = items,
                None if at.get("type").and_then(Value::as_str).is_some_and(|t| t != "array") => return Some(seg),
                None => return None,
            }
        } else {
            match at.get("properties").and_then(Value::as_object).and_then(|p| p.get(*seg)) {
                Some(s) => at = s,
                None if at.get("additionalProperties") == Some(&Value::Bool(false)) => return Some(seg),
                None if at.get("type").and_then(Value::as_str).is_some_and(|t| t != "object") => return Some(seg),
                None => return None,
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "repository": {"type": "string"},
            "number": {"type": "integer"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "filter": {"type": "object", "properties": {"status": {"type": "string"}}, "additionalProperties": false},
            "limit": {"type": "integer"}
        }, "required": ["repository"]})
    }

    #[test]
    fn whole_placeholders_keep_the_json_type() {
        let t = json!({"repo": "{{repository}}", "n": "{{number}}", "labels": "{{labels}}", "f": "{{filter}}"});
        let args = json!({"repository": "billing-api", "number": 35, "labels": ["a", "b"], "filter": {"status": "open"}});
        assert_eq!(render(&t, &args), json!({"repo": "billing-api", "n": 35, "labels": ["a", "b"], "f": {"status": "open"}}));
    }

    #[test]
    fn text_placeholders_paths_and_defaults() {
        let t = json!({
            "url": "https://code.example.com/acme/{{repository}}/pull/{{number|133}}",
            "status": "{{filter.status|all}}",
            "first": "{{labels.0}}",
            "limit": "{{limit|20}}",
            "quoted": "{{limit|\"20\"}}",
            "none": "{{number}}",
            "nested": [{"k": "{{repository}}"}],
            "plain": 7
        });
        let args = json!({"repository": "web-app", "labels": ["x"]});
        assert_eq!(
            render(&t, &args),
            json!({
                "url": "https://code.example.com/acme/web-app/pull/133",
                "status": "all",
                "first": "x",
                "limit": 20,
                "quoted": "20",
                "none": null,
                "nested": [{"k": "web-app"}],
                "plain": 7
            })
        );
        let args = json!({"repository": "web-app", "number": 9, "filter": {"status": "open"}, "limit": 5});
        let out = render(&t, &args);
        assert_eq!(out["url"], "https://code.example.com/acme/web-app/pull/9");
        assert_eq!((out["status"].clone(), out["limit"].clone(), out["quoted"].clone()), (json!("open"), json!(5), json!(5)));
    }

    #[test]
    fn text_without_placeholders_and_keys_stay_literal() {
        let t = json!({"{{repository}}": "a { b } c", "x": "}}{{"});
        // A template that does not parse renders as written (loading rejects it before it is ever run).
        assert_eq!(render(&t, &json!({"repository": "r"})), t);
    }

    #[test]
    fn checks_name_the_problem() {
        let ok = json!({"a": "{{repository}}", "b": "PR {{number|1}} of {{repository}}", "c": "{{filter.status}}", "d": ["{{labels.0}}"], "e": "{{limit}}"});
        assert_eq!(check(&ok, &schema()), vec![]);
        let msgs = |t: Value| check(&t, &schema()).into_iter().map(|p| format!("{}: {}", p.field, p.message)).collect::<Vec<_>>();
        assert_eq!(
            msgs(json!({"x": ["{{repo}}"]})),
            [".x[0]: placeholder `{{repo}}` names no parameter of the tool (its parameters: repository, number, labels, filter, limit)"]
        );
        assert_eq!(msgs(json!({"x": "{{filter.state}}"})), [".x: placeholder `{{filter.state}}`: `state` is not declared in the schema of parameter `filter`"]);
        assert_eq!(msgs(json!({"x": "{{number.0}}"})), [".x: placeholder `{{number.0}}`: `0` is not declared in the schema of parameter `number`"]);
        assert_eq!(msgs(json!({"x": "PR {{number}}"})), [".x: placeholder `{{number}}` inside text names an optional value: give a default, e.g. `{{number|…}}`"]);
        assert_eq!(msgs(json!({"{{x}}": 1})), [".{{x}}: placeholders are substituted in string values only, not in keys (`{{x}}`)"]);
        let bad = msgs(json!({"x": "{{ not a name }}", "y": "open {{repository"}));
        assert_eq!(bad.len(), 2);
        assert!(bad[0].starts_with(".x: `{{ not a name }}` is not a placeholder"), "{}", bad[0]);
        assert!(bad[1].starts_with(".y: `{{` without a closing `}}`") && bad[1].ends_with("mark the tool \"mockMode\": \"static\""), "{}", bad[1]);
    }
}
