//! BFCL's schema dialect to JSON Schema: `dict`→`object`, `float`→`number`, `tuple`→`array`,
//! `any`→no type, `optional` dropped, `null` admitted where an optional parameter defaults to it; and
//! dotted function names mapped reversibly. Its own file because it is the one place that knows
//! BFCL's dialect, used for the tools and for checking the ground truth's nulls.

use serde_json::{Map, Value, json};

/// Original BFCL name → valid, reversible function name.
pub fn map_name(name: &str) -> String {
    name.replace('.', "__")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect()
}

/// Convert one BFCL schema to JSON Schema; `repairs` collects what had to change.
pub fn convert_schema(schema: &Value, repairs: &mut Vec<String>) -> Value {
    let Some(obj) = schema.as_object() else { return schema.clone() };
    let mut out = Map::new();
    for (k, v) in obj {
        match k.as_str() {
            "optional" => {}
            "type" => match v.as_str() {
                Some("dict") => {
                    out.insert(k.clone(), json!("object"));
                }
                Some("float") => {
                    out.insert(k.clone(), json!("number"));
                }
                Some("tuple") => {
                    out.insert(k.clone(), json!("array"));
                }
                Some("any") => {}
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            },
            "properties" => {
                let props: Map<String, Value> = v
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(p, s)| (p.clone(), convert_schema(s, repairs)))
                    .collect();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" => {
                out.insert(k.clone(), convert_schema(v, repairs));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(req) = out.get("required").and_then(Value::as_array).cloned() {
        let props = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = req
            .iter()
            .filter(|r| r.as_str().is_some_and(|r| props.is_some_and(|p| p.contains_key(r))))
            .cloned()
            .collect();
        if kept.len() != req.len() {
            repairs.push("dropped `required` names that are not properties".into());
            out.insert("required".into(), Value::Array(kept));
        }
    }
    admit_null_defaults(&mut out);
    Value::Object(out)
}

/// An optional property whose `default` is `null` takes an explicit `null`: its type becomes `[type,
/// "null"]`. BFCL's checker passes `null` there when the ground truth lists it (as `["", null]`), and a
/// schema that rejected it would fail a call BFCL counts as correct.
fn admit_null_defaults(schema: &mut Map<String, Value>) {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    let Some(Value::Object(props)) = schema.get_mut("properties") else { return };
    for (_, prop) in props.iter_mut().filter(|(name, _)| !required.contains(name)) {
        let Some(prop) = prop.as_object_mut().filter(|p| p.get("default") == Some(&Value::Null))
        else {
            continue;
        };
        if let Some(Value::String(t)) = prop.get("type").cloned().filter(|t| t != "null") {
            prop.insert("type".into(), json!([t, "null"]));
        }
    }
}

/// Does a (converted) schema accept `null`? Only when it has no type or lists `null` among its types.
pub(super) fn admits_null(schema: &Value) -> bool {
    match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_reversibly() {
        assert_eq!(map_name("math.factorial"), "math__factorial");
        assert_eq!(map_name("aws.lexv2_models.list_exports"), "aws__lexv2_models__list_exports");
        assert_eq!(map_name("math__factorial".replace("__", ".").as_str()), "math__factorial");
    }

    #[test]
    fn dialect_converts_to_json_schema() {
        let mut r = vec![];
        let s = convert_schema(
            &json!({"type": "dict", "properties": {"x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "any"}}, "o": {"type": "string", "optional": true}}, "required": ["x", "ghost"]}),
            &mut r,
        );
        assert_eq!(
            s,
            json!({"type": "object", "properties": {"x": {"type": "number"}, "t": {"type": "array", "items": {}}, "o": {"type": "string"}}, "required": ["x"]})
        );
        assert_eq!(r.len(), 1);
        assert!(jsonschema::draft202012::meta::is_valid(&s));
    }

    #[test]
    fn optional_parameters_defaulting_to_null_admit_null_at_every_level() {
        for (bfcl, json_type) in [
            ("string", "string"),
            ("integer", "integer"),
            ("float", "number"),
            ("boolean", "boolean"),
            ("array", "array"),
            ("dict", "object"),
        ] {
            let p = |default: Value| json!({"type": bfcl, "default": default});
            let nested = json!({"type": "dict", "properties": {"inner": p(Value::Null)}});
            let s = convert_schema(
                &json!({"type": "dict", "properties": {"opt": p(Value::Null), "req": p(Value::Null), "other": p(json!("x")), "d": nested}, "required": ["req"]}),
                &mut vec![],
            );
            let props = &s["properties"];
            assert_eq!(props["opt"]["type"], json!([json_type, "null"]), "{bfcl}");
            assert_eq!(
                props["req"]["type"],
                json!(json_type),
                "a required parameter does not take null ({bfcl})"
            );
            assert_eq!(
                props["other"]["type"],
                json!(json_type),
                "a non-null default changes nothing ({bfcl})"
            );
            assert_eq!(
                props["d"]["properties"]["inner"]["type"],
                json!([json_type, "null"]),
                "nested ({bfcl})"
            );
            let v = jsonschema::draft202012::new(&s).unwrap();
            assert!(
                v.is_valid(&json!({"req": example(json_type), "opt": null, "d": {"inner": null}})),
                "{bfcl}"
            );
            assert!(!v.is_valid(&json!({"req": null})), "{bfcl}");
        }
    }

    fn example(json_type: &str) -> Value {
        match json_type {
            "string" => json!("x"),
            "integer" => json!(1),
            "number" => json!(1.5),
            "boolean" => json!(true),
            "array" => json!([]),
            _ => json!({}),
        }
    }
}
