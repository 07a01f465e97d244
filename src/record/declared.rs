//! What a tool declares about its parameters, reduced to what the matcher needs: each parameter's JSON
//! Schema type(s), the declared types inside it (an array's items, a nested object's properties, at any
//! depth), and whether the schema requires it.
//!
//! BFCL checks an argument's type against the function's declared type, not against the type of the
//! ground-truth literal (`10.0` is a fine `number` even when the acceptable value is written `10`), checks
//! the items of an array against the declared item type (`type_error:nested`), and tells a missing
//! *required* parameter apart from an *optional* one that the ground truth wanted anyway. The run fills
//! this in from the catalog for every expected tool and stores it in the trial record, so scoring stays a
//! pure function of the record. Records written before it existed have none; the matcher then falls back
//! to the ground-truth literals. Records written before nested object properties were kept simply have
//! none (serde defaults): their objects are checked as objects only, as they were then.

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
    /// The declared types of a nested object's properties (only those that declare something); empty
    /// when the schema gives none, and in records written before they were kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, ParamDecl>,
    /// Listed in the schema's `required` (top-level parameters only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// A tool's parameters by name.
pub type ToolParams = BTreeMap<String, ParamDecl>;

/// Declared parameters by tool id (the expected tools of one trial, and their alternatives).
pub type Declared = BTreeMap<String, ToolParams>;

/// The declared parameters of a tool's input schema (`{"type": "object", "properties": …, "required": …}`).
pub fn tool_params(input_schema: &Value) -> ToolParams {
    let required: Vec<&str> = input_schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
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
        Some(items @ Value::Object(_)) => {
            Some(Box::new(decl(items, false))).filter(|d| d.declares_something())
        }
        _ => None,
    };
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, s)| (name.clone(), decl(s, false)))
        .filter(|(_, d)| d.declares_something())
        .collect();
    ParamDecl { types: types_of(schema), items, properties, required }
}

/// The type names a schema allows; empty = any. `anyOf`/`oneOf` contribute the union of their branches
/// (any branch without a type makes the whole parameter untyped).
fn types_of(schema: &Value) -> Vec<String> {
    let mut out: Vec<String> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(String::from).collect(),
        _ => {
            let branches =
                schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array);
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

/// Where a value breaks its declared type: the path inside the parameter (empty at the top, else like
/// `[1]` or `.unit` or `[0].unit`), the type names declared there and the value found there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misfit {
    pub path: String,
    pub expected: Vec<String>,
    pub found: Value,
}

impl Misfit {
    /// Inside the parameter (an array item or a nested object's property), not the parameter itself.
    pub fn is_nested(&self) -> bool {
        !self.path.is_empty()
    }
}

impl ParamDecl {
    /// Does this declare anything the matcher checks (a type here or deeper)?
    fn declares_something(&self) -> bool {
        !self.types.is_empty() || self.items.is_some() || !self.properties.is_empty()
    }

    /// Does `value` have a declared type, at every depth? See [`ParamDecl::misfit`].
    pub fn fits(&self, value: &Value) -> bool {
        self.misfit(value).is_none()
    }

    /// The first place where `value` breaks its declared types, if any. An integer is a `number` (BFCL
    /// accepts a Python int for a float), at every depth: toolpick widens inside arrays and objects too,
    /// where BFCL only widens top-level values. A float is never an `integer`, even with no fractional
    /// part (`10.0`), at the top as in BFCL and, for the same reason, inside arrays (BFCL's
    /// `type_error:nested`) and nested objects (where BFCL compares by Python equality and so takes `3.0`
    /// for `3`: a deliberate difference the parity run counts). Items are checked in order, properties in
    /// name order; a property the schema does not declare is not checked here.
    pub fn misfit(&self, value: &Value) -> Option<Misfit> {
        let k = kind(value);
        if !self.types.is_empty()
            && !self.types.iter().any(|t| t == k || (k == "integer" && t == "number"))
        {
            return Some(Misfit {
                path: String::new(),
                expected: self.types.clone(),
                found: value.clone(),
            });
        }
        match value {
            Value::Array(xs) => self.items.as_deref().and_then(|items| {
                xs.iter().enumerate().find_map(|(i, x)| {
                    items.misfit(x).map(|m| Misfit { path: format!("[{i}]{}", m.path), ..m })
                })
            }),
            Value::Object(o) => self.properties.iter().find_map(|(name, d)| {
                o.get(name)
                    .and_then(|x| d.misfit(x))
                    .map(|m| Misfit { path: format!(".{name}{}", m.path), ..m })
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_types_items_nested_properties_and_required() {
        let p = tool_params(&json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "xs": {"type": "array", "items": {"type": "number"}},
                "u": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "free": {"description": "no type"},
                "o": {"type": "object", "properties": {"k": {"type": "integer"}, "any": {"description": "untyped"},
                      "deep": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "boolean"}}}}}}
            },
            "required": ["n"]
        }));
        assert!(p["n"].required && !p["xs"].required);
        assert_eq!(p["n"].types, vec!["integer"]);
        assert_eq!(p["xs"].items.as_ref().unwrap().types, vec!["number"]);
        assert_eq!(p["u"].types, vec!["null", "string"]);
        assert!(p["free"].types.is_empty());
        assert_eq!(p["o"].properties["k"].types, vec!["integer"]);
        assert!(
            !p["o"].properties.contains_key("any"),
            "an untyped property declares nothing and is not stored"
        );
        assert_eq!(
            p["o"].properties["deep"].items.as_ref().unwrap().properties["b"].types,
            vec!["boolean"]
        );
    }

    #[test]
    fn a_schema_without_nested_declarations_serialises_as_before() {
        // Records of tools with no nested object properties keep their bytes: the new field is skipped.
        let p = tool_params(
            &json!({"properties": {"n": {"type": "integer"}, "xs": {"type": "array", "items": {"type": "string"}}}, "required": ["n"]}),
        );
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"n":{"type":["integer"],"required":true},"xs":{"type":["array"],"items":{"type":["string"]}}}"#
        );
        // and an older record (no `properties`) reads back with none.
        let old: ParamDecl = serde_json::from_str(r#"{"type":["object"]}"#).unwrap();
        assert!(old.properties.is_empty() && old.fits(&json!({"k": "anything"})));
    }

    /// One value of each JSON type, with the declared type names it satisfies.
    fn samples() -> Vec<(Value, &'static [&'static str])> {
        vec![
            (json!(3), &["integer", "number"]),
            (json!(3.0), &["number"]),
            (json!(2.5), &["number"]),
            (json!("3"), &["string"]),
            (json!(true), &["boolean"]),
            (json!(null), &["null"]),
            (json!([1]), &["array"]),
            (json!({"a": 1}), &["object"]),
        ]
    }

    const TYPES: [&str; 7] = ["integer", "number", "string", "boolean", "null", "array", "object"];

    fn typed(t: &str) -> ParamDecl {
        ParamDecl { types: vec![t.into()], ..Default::default() }
    }

    #[test]
    fn every_type_at_the_top_in_arrays_and_in_nested_objects() {
        for t in TYPES {
            for (v, fits) in samples() {
                let want = fits.contains(&t);
                // top level
                assert_eq!(typed(t).misfit(&v).is_none(), want, "{v} as {t}");
                // as the second item of an array of `t`, after a fitting first item
                let good = samples().into_iter().find(|(_, f)| f.contains(&t)).unwrap().0;
                let array = ParamDecl { items: Some(Box::new(typed(t))), ..typed("array") };
                let got = array.misfit(&json!([good, v]));
                assert_eq!(got.is_none(), want, "[{good}, {v}] as array of {t}");
                if !want {
                    assert_eq!(
                        got.unwrap(),
                        Misfit { path: "[1]".into(), expected: vec![t.into()], found: v.clone() }
                    );
                }
                // as a property of a nested object, and of an object inside an array
                let object = ParamDecl {
                    properties: [("k".to_string(), typed(t))].into(),
                    ..typed("object")
                };
                let got = object.misfit(&json!({"k": v, "other": "x"}));
                assert_eq!(got.is_none(), want, "{{k: {v}}} with k: {t}");
                if !want {
                    assert!(got.as_ref().unwrap().is_nested());
                    assert_eq!(got.unwrap().path, ".k");
                }
                let rows = ParamDecl { items: Some(Box::new(object.clone())), ..typed("array") };
                assert_eq!(
                    rows.misfit(&json!([{"k": good}, {"k": v}])).map(|m| m.path),
                    (!want).then(|| "[1].k".to_string())
                );
            }
        }
    }

    #[test]
    fn whole_number_floats_are_not_integers_at_any_depth_and_integers_widen_everywhere() {
        let ints = ParamDecl { items: Some(Box::new(typed("integer"))), ..typed("array") };
        let floats = ParamDecl { items: Some(Box::new(typed("number"))), ..typed("array") };
        for whole in [0.0, 1.0, 2.0, -7.0, 1e3] {
            assert!(!typed("integer").fits(&json!(whole)));
            assert!(!ints.fits(&json!([1, whole])), "[1, {whole}] as integers");
            assert!(!ints.fits(&json!([whole])), "[{whole}] as integers");
            assert!(floats.fits(&json!([1, whole, 2])));
        }
        assert!(ints.fits(&json!([1, 2, 3])) && ints.fits(&json!([])));
        assert!(!floats.fits(&json!("1, 2")));
        assert!(ParamDecl::default().fits(&json!({"any": "thing"})));
    }

    #[test]
    fn undeclared_properties_and_absent_keys_are_not_checked() {
        let object = ParamDecl {
            properties: [("k".to_string(), typed("integer"))].into(),
            ..typed("object")
        };
        assert!(object.fits(&json!({})));
        assert!(object.fits(&json!({"other": [true, "x"]})));
        assert_eq!(object.misfit(&json!({"k": "1"})).unwrap().expected, vec!["integer"]);
    }
}
