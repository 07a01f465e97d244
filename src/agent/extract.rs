//! Argument extraction for the baselines: fill a call's arguments from the query text alone.
//!
//! Deliberately simple and documented, so the baseline's argument errors are explainable:
//! - `enum` parameters: the first allowed value whose words all appear in the query;
//! - dates (`format: date` or a date-shaped pattern): `YYYY-MM-DD` strings in the query, in order;
//! - e-mail addresses (`format: email`): addresses in the query;
//! - strings with a `pattern`: query tokens matching it (ids such as `PR-42`);
//! - integers and numbers: numbers in the query, in order (required parameters only);
//! - other required strings: quoted text (`"…"`, `'…'`, `“…”`), in order.
//!
//! Optional parameters are filled only from confident evidence (enum, pattern, date, e-mail). Each piece
//! of evidence is used once.

use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::OnceLock;

struct Evidence {
    quoted: Vec<String>,
    dates: Vec<String>,
    emails: Vec<String>,
    numbers: Vec<String>,
    tokens: Vec<String>,
    words: HashSet<String>,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex"))
}

fn evidence(query: &str) -> Evidence {
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    static DATE: OnceLock<Regex> = OnceLock::new();
    static EMAIL: OnceLock<Regex> = OnceLock::new();
    static NUMBER: OnceLock<Regex> = OnceLock::new();
    let quoted = re(&QUOTED, r#""([^"]+)"|“([^”]+)”|(?:^|\s)'([^']+)'"#)
        .captures_iter(query)
        .filter_map(|c| c.get(1).or(c.get(2)).or(c.get(3)).map(|m| m.as_str().to_string()))
        .collect();
    let dates: Vec<String> = re(&DATE, r"\b\d{4}-\d{2}-\d{2}\b")
        .find_iter(query)
        .map(|m| m.as_str().to_string())
        .collect();
    let emails: Vec<String> = re(&EMAIL, r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
        .find_iter(query)
        .map(|m| m.as_str().to_string())
        .collect();
    let tokens: Vec<String> = query
        .split_whitespace()
        .map(|t| {
            t.trim_matches(|c: char| {
                !(c.is_alphanumeric()
                    || c == '#'
                    || c == '@'
                    || c == '_'
                    || c == '-'
                    || c == '/'
                    || c == '.')
            })
        })
        .map(|t| t.trim_end_matches('.').to_string())
        .filter(|t| !t.is_empty())
        .collect();
    // Numbers that stand alone (not inside dates, ids or addresses).
    let numbers = tokens
        .iter()
        .filter(|t| re(&NUMBER, r"^-?\d+(?:\.\d+)?$").is_match(t.trim_start_matches('$')))
        .map(|t| t.trim_start_matches('$').to_string())
        .collect();
    let words = crate::text::words(query).into_iter().collect();
    Evidence { quoted, dates, emails, numbers, tokens, words }
}

fn type_of(schema: &Value) -> &str {
    schema.get("type").and_then(Value::as_str).unwrap_or(if schema.get("enum").is_some() {
        "string"
    } else {
        ""
    })
}

fn is_date(schema: &Value) -> bool {
    schema.get("format").and_then(Value::as_str) == Some("date")
        || schema
            .get("pattern")
            .and_then(Value::as_str)
            .is_some_and(|p| p.contains(r"\d{4}-\d{2}-\d{2}"))
}

fn is_email(schema: &Value) -> bool {
    schema.get("format").and_then(Value::as_str) == Some("email")
}

/// The first unused item of `pool` accepted by `ok`.
fn take(pool: &[String], used: &mut HashSet<String>, ok: impl Fn(&str) -> bool) -> Option<String> {
    let found = pool.iter().find(|v| !used.contains(*v) && ok(v))?.clone();
    used.insert(found.clone());
    Some(found)
}

fn enum_match(schema: &Value, ev: &Evidence) -> Option<Value> {
    schema
        .get("enum")?
        .as_array()?
        .iter()
        .find(|v| match v {
            Value::String(s) => {
                let w = crate::text::words(s);
                !w.is_empty() && w.iter().all(|x| ev.words.contains(x))
            }
            _ => false,
        })
        .cloned()
}

fn pattern_regex(schema: &Value) -> Option<Regex> {
    Regex::new(schema.get("pattern")?.as_str()?).ok()
}

/// One scalar value for `schema`, or `None`. `confident_only` skips numbers and quoted text.
fn scalar(
    schema: &Value,
    ev: &Evidence,
    used: &mut HashSet<String>,
    confident_only: bool,
) -> Option<Value> {
    if let Some(v) = enum_match(schema, ev) {
        return Some(v);
    }
    if schema.get("enum").is_some() {
        return None;
    }
    match type_of(schema) {
        "string" => {
            if is_date(schema) {
                return take(&ev.dates, used, |_| true).map(Value::String);
            }
            if is_email(schema) {
                return take(&ev.emails, used, |_| true).map(Value::String);
            }
            if let Some(rx) = pattern_regex(schema) {
                return take(&ev.tokens, used, |t| rx.is_match(t)).map(Value::String);
            }
            if confident_only {
                return None;
            }
            take(&ev.quoted, used, |_| true).map(Value::String)
        }
        "integer" if !confident_only => take(&ev.numbers, used, |n| n.parse::<i64>().is_ok())
            .and_then(|n| n.parse::<i64>().ok())
            .map(Value::from),
        "number" if !confident_only => take(&ev.numbers, used, |n| n.parse::<f64>().is_ok())
            .and_then(|n| serde_json::from_str::<Value>(&n).ok()),
        _ => None,
    }
}

/// Fill the arguments of a tool with input schema `schema` from `query`.
pub fn extract_arguments(query: &str, schema: &Value) -> Map<String, Value> {
    let ev = evidence(query);
    let mut used = HashSet::new();
    let required: HashSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return out };
    // Required parameters first, so they get first pick of the evidence.
    let order = props
        .iter()
        .filter(|(k, _)| required.contains(k.as_str()))
        .chain(props.iter().filter(|(k, _)| !required.contains(k.as_str())));
    for (name, prop) in order {
        let confident_only = !required.contains(name.as_str());
        let value = if type_of(prop) == "array" {
            let items = prop.get("items").cloned().unwrap_or(Value::Null);
            let mut values = Vec::new();
            while let Some(v) = scalar(&items, &ev, &mut used, true) {
                if values.contains(&v) {
                    break;
                }
                values.push(v);
            }
            (!values.is_empty()).then_some(Value::Array(values))
        } else {
            scalar(prop, &ev, &mut used, confident_only)
        };
        if let Some(v) = value {
            out.insert(name.clone(), v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","properties":{
            "pr":{"type":"string","pattern":"^PR-[0-9]+$"},
            "title":{"type":"string"},
            "due":{"type":"string","format":"date"},
            "priority":{"type":"string","enum":["low","high","very high"]},
            "count":{"type":"integer"},
            "to":{"type":"array","items":{"type":"string","format":"email"}},
            "note":{"type":"string"}
        },"required":["pr","title","count"]})
    }

    #[test]
    fn extracts_each_kind_of_evidence() {
        let q = "Retitle PR-42 to \"Fix login\" by 2026-12-03, high priority, 3 reviewers, cc ana@example.com and bo@example.com";
        let args = extract_arguments(q, &schema());
        assert_eq!(
            Value::Object(args),
            json!({"pr":"PR-42","title":"Fix login","count":3,"due":"2026-12-03","priority":"high","to":["ana@example.com","bo@example.com"]})
        );
    }

    #[test]
    fn optional_params_need_confident_evidence_and_missing_stays_missing() {
        let args = extract_arguments("look at PR-7 please", &schema());
        assert_eq!(Value::Object(args), json!({"pr":"PR-7"}));
    }

    #[test]
    fn multiword_enum_values_need_all_words() {
        let s = json!({"type":"object","properties":{"p":{"type":"string","enum":["very high","low"]}}});
        assert_eq!(Value::Object(extract_arguments("very urgent", &s)), json!({}));
        assert_eq!(
            Value::Object(extract_arguments("it is very high", &s)),
            json!({"p":"very high"})
        );
    }
}
