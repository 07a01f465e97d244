//! Typed access to a record's fields, with reasons that say what is actually wrong
//! ("`id` is a number, expected a string") instead of treating a wrong type as absent.
//!
//! Field paths are written as in the benchmark's own JSON (`function[1].name`, `output.used_app[0]`).
//! A missing optional field is `Ok(None)`; `null` counts as missing for optional fields only.

use serde_json::{Map, Value};

/// What a JSON value is, for a reason: "a string", "an object", "null".
use crate::error::json_kind;

/// "`path` is a number, expected a string" (or "record is …" for the record itself).
pub fn wrong(path: &str, v: &Value, expected: &str) -> String {
    if path.is_empty() {
        format!("record is {}, expected {expected}", json_kind(v))
    } else {
        format!("`{path}` is {}, expected {expected}", json_kind(v))
    }
}

/// `parent.key` as a field path.
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() { key.to_string() } else { format!("{parent}.{key}") }
}

/// `parent[i]` as a field path.
pub fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// The value itself as an object (`path` names it; empty = the record).
pub fn as_object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, String> {
    v.as_object().ok_or_else(|| wrong(path, v, "an object"))
}

/// The value itself as an array.
pub fn as_array<'a>(v: &'a Value, path: &str, expected: &str) -> Result<&'a Vec<Value>, String> {
    v.as_array().ok_or_else(|| wrong(path, v, expected))
}

/// The value itself as a string.
pub fn as_str<'a>(v: &'a Value, path: &str) -> Result<&'a str, String> {
    v.as_str().ok_or_else(|| wrong(path, v, "a string"))
}

fn present<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn missing(parent: &str, key: &str) -> String {
    format!("`{}` is missing", join(parent, key))
}

/// Optional string field `key` of `obj` (whose path is `parent`).
pub fn opt_str<'a>(obj: &'a Value, parent: &str, key: &str) -> Result<Option<&'a str>, String> {
    present(obj, key).map(|v| as_str(v, &join(parent, key))).transpose()
}

/// Required string field.
pub fn req_str<'a>(obj: &'a Value, parent: &str, key: &str) -> Result<&'a str, String> {
    match obj.get(key) {
        None => Err(missing(parent, key)),
        Some(v) => as_str(v, &join(parent, key)),
    }
}

/// Optional array field; `expected` describes it ("an array of objects").
pub fn opt_array<'a>(
    obj: &'a Value,
    parent: &str,
    key: &str,
    expected: &str,
) -> Result<Option<&'a Vec<Value>>, String> {
    present(obj, key).map(|v| as_array(v, &join(parent, key), expected)).transpose()
}

/// Required array field.
pub fn req_array<'a>(
    obj: &'a Value,
    parent: &str,
    key: &str,
    expected: &str,
) -> Result<&'a Vec<Value>, String> {
    match obj.get(key) {
        None => Err(missing(parent, key)),
        Some(v) => as_array(v, &join(parent, key), expected),
    }
}

/// Optional object field.
pub fn opt_object<'a>(
    obj: &'a Value,
    parent: &str,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, String> {
    present(obj, key).map(|v| as_object(v, &join(parent, key))).transpose()
}

/// Required object field.
pub fn req_object<'a>(
    obj: &'a Value,
    parent: &str,
    key: &str,
) -> Result<&'a Map<String, Value>, String> {
    match obj.get(key) {
        None => Err(missing(parent, key)),
        Some(v) => as_object(v, &join(parent, key)),
    }
}

/// Every element of an array as an object; the first that is not names itself.
pub fn objects<'a>(items: &'a [Value], path: &str) -> Result<Vec<&'a Value>, String> {
    items.iter().enumerate().map(|(i, v)| as_object(v, &index(path, i)).map(|_| v)).collect()
}

/// Every element of an array as a string.
pub fn strings<'a>(items: &'a [Value], path: &str) -> Result<Vec<&'a str>, String> {
    items.iter().enumerate().map(|(i, v)| as_str(v, &index(path, i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reasons_name_the_field_its_type_and_what_was_expected() {
        let r = json!({"id": 7, "query_id": {"a": 1}, "function": "f", "tools": [{"name": "x"}, 3], "n": null});
        assert_eq!(req_str(&r, "", "id").unwrap_err(), "`id` is a number, expected a string");
        assert_eq!(
            req_array(&r, "", "function", "an array of objects").unwrap_err(),
            "`function` is a string, expected an array of objects"
        );
        assert_eq!(req_str(&r, "", "query").unwrap_err(), "`query` is missing");
        assert_eq!(opt_str(&r, "", "n").unwrap(), None, "null is absent for an optional field");
        assert_eq!(req_str(&r, "", "n").unwrap_err(), "`n` is null, expected a string");
        let tools = req_array(&r, "", "tools", "an array").unwrap();
        assert_eq!(
            objects(tools, "tools").unwrap_err(),
            "`tools[1]` is a number, expected an object"
        );
        assert_eq!(
            req_str(&tools[0], "tools[0]", "description").unwrap_err(),
            "`tools[0].description` is missing"
        );
        assert_eq!(
            as_object(&json!("s"), "").unwrap_err(),
            "record is a string, expected an object"
        );
        assert_eq!(
            wrong("query_id", &r["query_id"], "a string or number"),
            "`query_id` is an object, expected a string or number"
        );
    }
}
