//! What a tool declares about its parameters, reduced to what the matcher needs: each parameter's JSON
//! Schema type(s), the item type of arrays, and whether the schema requires it.
//!
//! BFCL checks an argument's type against the function's declared type, not against the type of the
//! ground-truth literal (`10.0` is a fine `number` even when the acceptable value is written `10`), and
//! tells a missing *required* parameter apart from an *optional* one that the ground truth wanted
//! anyway. The run fills this in from the catalog for every expected tool and stores it in the trial
//! record, so scoring stays a pure function of the record. Records written before it existed have none;
//! the matcher then falls back to the ground-truth literals.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One parameter's declared shape.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParamDecl {
    /// JSON Schema type names (`string`, `integer`, `number`, `boolean`, `array`, `object`, `null`);
    /// empty when the schema allows any type.
    #[serde(rename = "type", default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<String>,
    /// The declared type of an array's items, when the schema gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<ParamDecl>>,
    /// Listed in the schema's `required`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// A tool's parameters by name.
pub type ToolParams = BTreeMap<String, ParamDecl>;

/// Declared parameters by tool id (the expected tools of one trial, and their alternatives).
pub type Declared = BTreeMap<String, ToolParams>;

/// The declared parameters of a tool's input schema (`{"type": "object", "properties": …, "required": …}`).
pub fn tool_params(input_schema: &Value) -> ToolParams {
    let required: Vec<&str> = input_schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    input_schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, schema)| (name.clone(), decl(schema, required.contains(&name.as_str()))))
        .collect()
}

fn decl(schema: &Value, required: bool) -> ParamDecl {
    let items = match schema.get("items") {
        Some(items @ Value::Object(_)) => Some(Box::new(decl(items, false))).filter(|d| !d.types.is_empty() || d.items.is_some()),
        _ => None,
    };
    ParamDecl { types: types_of(schema), items, required }
}

/// The type names a schema allows; empty = any. `anyOf`/`oneOf` contribute the union of their branches
/// (any branch without a type makes the whole parameter untyped).
fn types_of(schema: &Value) -> Vec<String> {
    let mut out: Vec<String> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(String::from).collect(),
        _ => {
            let branches = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array);
            let Some(branches) = branches else {
                return vec![];
            };
            let mut union = Vec::new();
            for b in branches {
                let t = types_of(b);
                if t.is_empty() {
                    return vec![];
                }
                union.extend(t);
            }
            union
        }
    };
    out.sort();
    out.dedup();
    out
}

/// JSON type names for type checking; integers are their own type so they can widen to numbers.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl ParamDecl {
    /// Does `value` have a declared type? An integer is a `number` (BFCL accepts a Python int for a
    /// float), at every depth: toolpick widens inside arrays too, where BFCL only widens top-level
    /// values. A float is not an `integer`, even with no fractional part (`10.0`), as in BFCL.
    pub fn fits(&self, value: &Value) -> bool {
        if self.types.is_empty() {
            return true;
        }
        let k = kind(value);
        let type_ok = self.types.iter().any(|t| t == k || (k == "integer" && t == "number"));
        if !type_ok {
            return false;
        }
        match (value, &self.items) {
            (Value::Array(xs), Some(items)) => xs.iter().all(|x| items.fits(x)),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_types_items_and_required() {
        let p = tool_params(&json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "xs": {"type": "array", "items": {"type": "number"}},
                "u": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "free": {"description": "no type"}
            },
            "required": ["n"]
        }));
        assert!(p["n"].required && !p["xs"].required);
        assert_eq!(p["n"].types, vec!["integer"]);
        assert_eq!(p["xs"].items.as_ref().unwrap().types, vec!["number"]);
        assert_eq!(p["u"].types, vec!["null", "string"]);
        assert!(p["free"].types.is_empty());
    }

    #[test]
    fn integers_widen_to_numbers_at_every_depth_but_floats_are_not_integers() {
        let number = ParamDecl { types: vec!["number".into()], ..Default::default() };
        let integer = ParamDecl { types: vec!["integer".into()], ..Default::default() };
        assert!(number.fits(&json!(10)) && number.fits(&json!(10.5)));
        assert!(integer.fits(&json!(10)));
        assert!(!integer.fits(&json!(10.0)));
        assert!(!number.fits(&json!("10")));
        let floats = ParamDecl { types: vec!["array".into()], items: Some(Box::new(number)), required: false };
        assert!(floats.fits(&json!([1, 2.5])));
        assert!(!floats.fits(&json!([1, "2"])));
        assert!(!floats.fits(&json!("1, 2")));
        assert!(ParamDecl::default().fits(&json!({"any": "thing"})));
    }
}
