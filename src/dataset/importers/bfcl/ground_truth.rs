//! BFCL's ground truth to expected calls: names mapped, repairs for parameters the function does not
//! define or requires, nulls dropped where the schema does not admit them, and per-key dict values
//! expanded into the literal dicts they accept. Its own file because these repairs are what decides
//! whether toolpick's scores agree with BFCL's checker.

use super::Registry;
use super::schema::admits_null;
use crate::dataset::ExpectedCall;
use crate::dataset::importers::fields;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

pub(super) fn expected_calls(
    gt: &Value,
    names: &HashMap<String, String>,
    registry: &Registry,
    server: &str,
    repairs: &mut Vec<String>,
) -> Result<Vec<ExpectedCall>, String> {
    let mut out = Vec::new();
    for (ci, call) in fields::as_array(gt, "ground_truth", "an array of calls")?.iter().enumerate()
    {
        let path = format!("ground_truth[{ci}]");
        let obj = fields::as_object(call, &path)?;
        let Some((fname, args)) = obj.iter().next().filter(|_| obj.len() == 1) else {
            return Err(format!(
                "`{path}` has {} keys, expected exactly one (the function name)",
                obj.len()
            ));
        };
        let apath = fields::join(&path, fname);
        let args = fields::as_object(args, &apath)?;
        let Some(tool_id) = names.get(fname) else {
            return Err(format!(
                "ground truth calls `{fname}`, which is not among the record's functions"
            ));
        };
        let tool_name = tool_id.rsplit('/').next().unwrap_or_default();
        let tool = &registry.tools[server][tool_name].1;
        let props = tool.input_schema.get("properties").and_then(Value::as_object);
        let required = tool.required();
        let mut arguments = BTreeMap::new();
        for (param, values) in args {
            let mut values: Vec<Value> = fields::as_array(
                values,
                &fields::join(&apath, param),
                "an array of acceptable values",
            )?
            .clone();
            if values.iter().any(is_per_key) {
                let before = values.len();
                values =
                    expand_per_key(&values).map_err(|e| format!("`{param}` of `{fname}`: {e}"))?;
                repairs.push(format!(
                    "`{param}` of `{fname}` gives a dict's acceptable values key by key: expanded to its {} acceptable dict(s) (from {before} entries)",
                    values.len()
                ));
            }
            let Some(schema) = props.and_then(|p| p.get(param)) else {
                repairs.push(format!("ground-truth parameter `{param}` of `{fname}` is not in its doc: dropped (it cannot be passed)"));
                continue;
            };
            // BFCL's checker takes `null` for a typed parameter as "a variable" and accepts it; a JSON
            // Schema validator (and a real tool) rejects it. Keep the record with its other values.
            if values.iter().any(Value::is_null) && !admits_null(schema) {
                values.retain(|v| !v.is_null());
                if values.is_empty() {
                    return Err(format!(
                        "`{param}` of `{fname}` accepts only null, which its type does not allow"
                    ));
                }
                repairs.push(format!(
                    "acceptable value null of `{param}` of `{fname}` does not fit its type: dropped"
                ));
            }
            if required.contains(&param.as_str()) && values.iter().any(|v| v.as_str() == Some("")) {
                values.retain(|v| v.as_str() != Some(""));
                repairs.push(format!("required `{param}` of `{fname}` listed \"\" (may omit): dropped, since the function requires it"));
            }
            arguments.insert(param.clone(), values);
        }
        out.push(ExpectedCall {
            tool: tool_id.clone(),
            arguments,
            alternatives: vec![],
            any_arguments: false,
        });
    }
    if out.is_empty() {
        return Err("`ground_truth` is an empty array: no expected call".into());
    }
    Ok(out)
}

/// BFCL writes a dict-typed argument's acceptable value as a dict of per-key lists of acceptable values
/// (`{"min": [300000], "unit": ["usd", ""]}`, `""` = the key may be left out).
fn is_per_key(v: &Value) -> bool {
    v.as_object().is_some_and(|o| !o.is_empty() && o.values().all(Value::is_array))
}

/// The most dicts one per-key value may expand to; beyond it the record is skipped with the reason.
const MAX_DICT_EXPANSION: usize = 256;

/// Expand per-key dicts into the literal dicts they accept (every combination of the keys' values, a
/// `""` meaning the key is absent); other acceptable values are kept as they are. The matcher then
/// compares dicts key by key, with BFCL's string normalisation, as BFCL's `dict_checker` does.
fn expand_per_key(values: &[Value]) -> Result<Vec<Value>, String> {
    let mut out: Vec<Value> = Vec::new();
    for v in values {
        let Some(keys) = v.as_object().filter(|_| is_per_key(v)) else {
            out.push(v.clone());
            continue;
        };
        let mut combos: Vec<Map<String, Value>> = vec![Map::new()];
        for (key, choices) in keys {
            let choices = choices.as_array().expect("per-key values are arrays");
            if choices.is_empty() {
                return Err(format!("key `{key}` lists no acceptable value"));
            }
            let mut next = Vec::new();
            for combo in &combos {
                for choice in choices {
                    let mut c = combo.clone();
                    if choice.as_str() != Some("") {
                        c.insert(key.clone(), choice.clone());
                    }
                    next.push(c);
                }
            }
            if next.len() > MAX_DICT_EXPANSION {
                return Err(format!(
                    "its per-key acceptable values make more than {MAX_DICT_EXPANSION} dicts"
                ));
            }
            combos = next;
        }
        for c in combos {
            let c = Value::Object(c);
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn per_key_dicts_expand_to_every_acceptable_dict() {
        let values = vec![json!({"min": [1, 2], "unit": ["usd", ""]}), json!("")];
        let got = expand_per_key(&values).unwrap();
        let want = vec![
            json!({"min": 1, "unit": "usd"}),
            json!({"min": 1}),
            json!({"min": 2, "unit": "usd"}),
            json!({"min": 2}),
            json!(""),
        ];
        assert_eq!(got, want);
        let huge: Map<String, Value> = (0..9).map(|i| (format!("k{i}"), json!([1, 2]))).collect();
        assert!(expand_per_key(&[Value::Object(huge)]).unwrap_err().contains("more than 256"));
        assert!(expand_per_key(&[json!({"k": []})]).is_err());
    }
}
