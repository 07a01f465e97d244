//! Argument-aware mock responses: the template syntax, its rendering and its checks.
//!
//! A tool's `mockResponse` is what simulated execution answers a valid call with. A static answer
//! contradicts most calls (`delete_branch(repository="billing-api")` answered `"repository": "web-app"`),
//! and in a multi-turn episode the contradiction leaks a value the user never gave into the conversation.
//! So a catalog's mock response is a template over the call's arguments. Placeholders are substituted in
//! string values (never in object keys):
//!
//! - a string that is exactly `"{{param}}"` becomes the argument's value **with its JSON type**: a number
//!   stays a number, an array or object is inserted as given;
//! - `{{param}}` inside a longer string is replaced by the value's text (a string as is, anything else
//!   as compact JSON): `"https://code.example.com/acme/{{repository}}"`;
//! - `{{a.b}}` follows a path into an object argument; a numeric segment indexes an array (`{{to.0}}`);
//! - `{{param|default}}` gives the value to use when the argument (or the path) is absent. The default is
//!   read as JSON when it is valid JSON (`{{limit|20}}` → `20`, `{{x|null}}` → `null`, `{{x|"20"}}` →
//!   `"20"`), else taken as text (`{{status|open}}` → `"open"`). A default may itself hold placeholders:
//!   `{{end_date|{{start_date}}}}` (the end date, else the start date), `{{name|{{project_key}} Sprint
//!   19}}`. A whole-string placeholder without a default becomes `null` when its argument is absent; a
//!   placeholder inside a longer string needs a default unless it names a required parameter (an empty
//!   hole in a sentence is never meant).
//!
//! Where the answer differs by case — rooms of the office asked for, sort orders, a folder path with or
//! without a parent — an object `{"$switch": "param", "cases": {"value": …, …}, "absent": …, "default":
//! …}` stands for the case matching the argument's value (its text for a number or boolean), `absent`
//! when the call did not give the argument, and `default` otherwise (also when absent and there is no
//! `absent`); `cases` and `absent` are optional, and the chosen branch is rendered in turn.
//!
//! [`check`] runs when a catalog loads (so `toolpick validate` and `toolpick lint` report it): every
//! placeholder and switch names a parameter the tool's input schema declares, `{{` only opens a
//! placeholder, a switch's cases are values the parameter's `enum` allows, and a switch that could fall
//! through has a `default`. Tools whose mock response is someone else's data — everything the importers
//! read — are [`MockMode::Static`]: answered verbatim, a literal `{{x}}` included, and trials record
//! which it was.
//!
//! The checks live in [`check`]; this file holds the syntax, its parser and the rendering.

mod check;

pub use check::{Problem, check};
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

const SWITCH: &str = "$switch";

/// One `{{…}}`: the path into the arguments and the default text (itself a template), if any.
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
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }
        _ => false,
    }
}

/// `a.b` as segments, if every segment is valid.
fn parse_path(path: &str) -> Option<Vec<&str>> {
    let segments: Vec<&str> = path.trim().split('.').collect();
    segments.iter().all(|s| valid_segment(s)).then_some(segments)
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
        let Some(close) = closing(after) else {
            return Err(format!("`{{{{` without a closing `}}}}` in {s:?}"));
        };
        let inner = &after[..close];
        // The path never holds braces or a bar, so the first `|` ends it (a default may hold both).
        let (path, default) = match inner.split_once('|') {
            Some((p, d)) => (p, Some(d)),
            None => (inner, None),
        };
        let Some(path) = parse_path(path) else {
            return Err(format!(
                "`{{{{{inner}}}}}` is not a placeholder (write {{{{param}}}}, {{{{param.field}}}} or {{{{param|default}}}})"
            ));
        };
        pieces.push(Piece::Hole(Placeholder { path, default }));
        rest = &after[close + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

/// Where the `}}` closing a `{{` just before `s` starts, counting nested `{{…}}` (in defaults).
fn closing(s: &str) -> Option<usize> {
    let (mut depth, mut i) = (1, 0);
    let b = s.as_bytes();
    while i + 1 < b.len() {
        match &b[i..i + 2] {
            b"{{" => {
                depth += 1;
                i += 2;
            }
            b"}}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    None
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
        (None, Some(d)) if d.contains("{{") => render(&Value::String(d.to_string()), args),
        (None, Some(d)) => default_value(d),
        (None, None) => Value::Null,
    }
}

/// The mock response for a call with `args`: every placeholder and switch resolved (see the module
/// docs). Strings that do not parse are left as they are ([`check`] rejects them at load time).
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
        Value::Object(m) => match m.get(SWITCH).and_then(Value::as_str) {
            Some(param) => {
                let branch = match parse_path(param).and_then(|p| resolve(args, &p)).map(as_text) {
                    Some(v) => m.get("cases").and_then(|c| c.get(&v)),
                    None => m.get("absent"),
                };
                render(branch.or_else(|| m.get("default")).unwrap_or(&Value::Null), args)
            }
            None => Value::Object(
                m.iter().map(|(k, v)| (k.clone(), render(v, args))).collect::<Map<_, _>>(),
            ),
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn schema() -> Value {
        json!({"type": "object", "properties": {
            "repository": {"type": "string"},
            "number": {"type": "integer"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "filter": {"type": "object", "properties": {"status": {"type": "string"}}, "additionalProperties": false},
            "limit": {"type": "integer"},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
            "since": {"type": "string"}
        }, "required": ["repository", "units"]})
    }

    #[test]
    fn whole_placeholders_keep_the_json_type() {
        let t = json!({"repo": "{{repository}}", "n": "{{number}}", "labels": "{{labels}}", "f": "{{filter}}"});
        let args = json!({"repository": "billing-api", "number": 35, "labels": ["a", "b"], "filter": {"status": "open"}});
        assert_eq!(
            render(&t, &args),
            json!({"repo": "billing-api", "n": 35, "labels": ["a", "b"], "f": {"status": "open"}})
        );
    }

    #[test]
    fn text_placeholders_paths_and_nested_defaults() {
        let t = json!({
            "url": "https://code.example.com/acme/{{repository}}/pull/{{number|133}}",
            "status": "{{filter.status|all}}",
            "first": "{{labels.0}}",
            "limit": "{{limit|20}}",
            "quoted": "{{limit|\"20\"}}",
            "none": "{{number}}",
            "date": "{{since|{{filter.status|2026-01-01}}}}",
            "name": "{{since|{{repository}} Sprint {{limit|19}}}}",
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
                "date": "2026-01-01",
                "name": "web-app Sprint 19",
                "nested": [{"k": "web-app"}],
                "plain": 7
            })
        );
        let args =
            json!({"repository": "web-app", "number": 9, "filter": {"status": "open"}, "limit": 5});
        let out = render(&t, &args);
        assert_eq!(out["url"], "https://code.example.com/acme/web-app/pull/9");
        assert_eq!(
            (out["status"].clone(), out["limit"].clone(), out["quoted"].clone()),
            (json!("open"), json!(5), json!(5))
        );
        assert_eq!(out["date"], "open", "the default's placeholder when the first is absent");
        assert_eq!(out["name"], "web-app Sprint 5");
        assert_eq!(
            render(&t, &json!({"since": "2026-05-01", "filter": {"status": "open"}}))["date"],
            "2026-05-01"
        );
    }

    #[test]
    fn switches_pick_the_case_of_the_argument() {
        let t = json!({"t": {"$switch": "units", "cases": {"metric": {"c": "{{repository}}"}, "imperial": 57}, "default": null}, "n": {"$switch": "number", "cases": {"7": "seven"}, "default": "other"}});
        assert_eq!(
            render(&t, &json!({"units": "metric", "repository": "r"})),
            json!({"t": {"c": "r"}, "n": "other"})
        );
        assert_eq!(
            render(&t, &json!({"units": "imperial", "number": 7})),
            json!({"t": 57, "n": "seven"})
        );
        let path = json!({"$switch": "since", "absent": "{{repository}}", "default": "{{since}}/{{repository}}"});
        assert_eq!(
            check(&path, &schema()),
            vec![],
            "`since` is given in `default` when `absent` exists"
        );
        assert_eq!(
            check(&json!({"$switch": "since", "default": "{{since}}/x"}), &schema()).len(),
            1,
            "no `absent`: `default` may run without it"
        );
        assert_eq!(render(&path, &json!({"repository": "r"})), json!("r"));
        assert_eq!(render(&path, &json!({"repository": "r", "since": "s"})), json!("s/r"));
    }

    #[test]
    fn text_without_placeholders_and_keys_stay_literal() {
        let t = json!({"{{repository}}": "a { b } c", "x": "}}{{"});
        // A template that does not parse renders as written (loading rejects it before it is ever run).
        assert_eq!(render(&t, &json!({"repository": "r"})), t);
    }
}
