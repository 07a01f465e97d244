//! The matcher: does a call the agent made satisfy an expected call?
//!
//! BFCL's AST rules — exact tool, the schema's required parameters present, nothing outside the ground
//! truth, types checked against the tool's declared types ([`super::declared`]) with int accepted for
//! float and the items of arrays checked against their declared type (BFCL's `type_error:nested`; toolpick
//! checks nested objects' declared properties the same way, and a whole-number float is no integer at any
//! depth), numbers compared by value, strings compared after BFCL's normalisation, lists in order,
//! omission allowed only where `""` is acceptable (leaving out an optional parameter the ground truth
//! wants is a value error) — with three of its known flaws fixed:
//! 1. int → float widening applies inside arrays and objects too (BFCL only widened top-level values);
//! 2. several calls are paired by an optimal (maximum bipartite) matching, not greedy first-fit, so the
//!    order in which the agent issued them can't turn a correct answer into a failure;
//! 3. "abstained" (no call at all) is kept distinct from "attempted a malformed call" (see [`super::metrics`]).

use crate::dataset::ExpectedCall;
use crate::record::ErrorType;
use crate::record::declared::{Declared, ParamDecl, ToolParams, kind};
use serde_json::Value;

/// A mismatch between one actual call and one expected call.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub error: ErrorType,
    pub detail: String,
}

fn mismatch(error: ErrorType, detail: String) -> Mismatch {
    Mismatch { error, detail }
}

/// BFCL's string normalisation: drop spaces and `, . / - _ * ^`, lower-case, and read `'` as `"`.
pub fn normalize(s: &str) -> String {
    normalized(s).collect()
}

/// [`normalize`]'s characters, without building the string (values are compared for every call of
/// every trial).
fn normalized(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\'' { '"' } else { c })
}

/// Is `actual`'s type acceptable where `expected` is the reference value? Recurses into containers.
/// Used only when the tool's declared types are unknown (trial records written before they were kept).
fn type_compatible(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Array(a), Value::Array(e)) => {
            // Compare element types against the first reference element (arrays are homogeneous in practice).
            match e.first() {
                Some(e0) => a.iter().all(|x| type_compatible(x, e0)),
                None => true,
            }
        }
        (Value::Object(_), Value::Object(_)) => true,
        _ => {
            let (ka, ke) = (kind(actual), kind(expected));
            ka == ke || (ka == "integer" && ke == "number")
        }
    }
}

/// Does `actual` equal the acceptable value `expected` under the matcher's rules? Numbers compare by
/// value (`10.0 == 10`, as in BFCL; whether a float may stand for an integer is the type check's
/// business), strings after [`normalize`], lists in order and objects key by key, recursively.
pub fn value_matches(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::String(a), Value::String(e)) => a == e || normalized(a).eq(normalized(e)),
        (Value::Number(a), Value::Number(e)) => {
            match (a.as_i64(), e.as_i64(), a.as_u64(), e.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => a.as_f64().zip(e.as_f64()).is_some_and(|(x, y)| x == y),
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            a.len() == e.len() && a.iter().zip(e).all(|(x, y)| value_matches(x, y))
        }
        (Value::Object(a), Value::Object(e)) => {
            a.len() == e.len()
                && a.iter().all(|(k, v)| e.get(k).is_some_and(|ev| value_matches(v, ev)))
        }
        _ => actual == expected,
    }
}

/// Is `value` of an acceptable type for `param`? Against the declared types when the tool declares
/// them, at every depth (an array's items, a nested object's properties: BFCL's `type_error:nested`);
/// a ground-truth literal that does not itself fit the declared type stands for "a variable", as in
/// BFCL, and a value of that literal's type is accepted. Without declared types (older trial records),
/// against the ground-truth literals. `Err` carries the mismatch's detail.
fn type_check(
    param: &str,
    value: &Value,
    acceptable: &[Value],
    declared: Option<&ParamDecl>,
) -> Result<(), String> {
    let real: Vec<&Value> = acceptable.iter().filter(|v| v.as_str() != Some("")).collect();
    match declared {
        Some(d) if !d.types.is_empty() => {
            let Some(m) = d.misfit(value) else { return Ok(()) };
            if real.iter().any(|e| kind(e) == kind(value) && !d.fits(e)) {
                return Ok(());
            }
            let like = m.expected.join(" or ");
            if m.is_nested() {
                return Err(format!(
                    "`{param}{}` = {} inside `{param}` has the wrong type (expected {like}; a nested type error)",
                    m.path, m.found
                ));
            }
            Err(format!("`{param}` = {value} has the wrong type (expected {like})"))
        }
        _ if real.is_empty() || real.iter().any(|e| type_compatible(value, e)) => Ok(()),
        _ => {
            let like = real.first().map(|v| v.to_string()).unwrap_or_default();
            Err(format!("`{param}` = {value} has the wrong type (expected {like})"))
        }
    }
}

/// Check one actual call's arguments against one expected call (same tool assumed), in BFCL's order:
/// parameters the schema requires are present; then, argument by argument in the order given, it is
/// expected, of a declared type, and an acceptable value; then no parameter the ground truth wants was
/// left out. `declared` is the called tool's declared parameters, when known.
pub fn match_arguments(
    actual: &Value,
    expected: &ExpectedCall,
    declared: Option<&ToolParams>,
) -> Result<(), Mismatch> {
    if expected.any_arguments {
        return Ok(());
    }
    let empty = serde_json::Map::new();
    let args = actual.as_object().unwrap_or(&empty);
    for (param, _) in declared.into_iter().flatten().filter(|(_, d)| d.required) {
        if !args.contains_key(param) {
            return Err(mismatch(
                ErrorType::MissingRequired,
                format!("`{param}` is required and missing"),
            ));
        }
    }
    for (param, value) in args {
        let Some(acceptable) = expected.arguments.get(param) else {
            return Err(mismatch(ErrorType::UnexpectedParam, format!("`{param}` is not expected")));
        };
        if let Err(detail) =
            type_check(param, value, acceptable, declared.and_then(|d| d.get(param)))
        {
            return Err(mismatch(ErrorType::TypeError, detail));
        }
        if !acceptable.iter().any(|e| value_matches(value, e)) {
            let shown: Vec<String> = acceptable.iter().map(Value::to_string).collect();
            return Err(mismatch(
                ErrorType::ValueError,
                format!("`{param}` = {value} is not one of [{}]", shown.join(", ")),
            ));
        }
    }
    for (param, acceptable) in &expected.arguments {
        if args.contains_key(param) || ExpectedCall::may_omit(acceptable) {
            continue;
        }
        // The schema lets the caller leave it out, but the ground truth wants a value: a value mismatch
        // (BFCL's "optional parameter not provided"), not a missing required parameter.
        let optional = declared.and_then(|d| d.get(param)).is_some_and(|d| !d.required);
        return Err(if optional {
            mismatch(
                ErrorType::ValueError,
                format!("optional `{param}` was left out; the task needs one of its values"),
            )
        } else {
            mismatch(ErrorType::MissingRequired, format!("`{param}` is missing"))
        });
    }
    Ok(())
}

/// Check a call (tool id + arguments) against an expected call; `declared` is what the catalog
/// declares about the tools' parameters, by tool id (empty when unknown).
pub fn match_call(
    tool_id: &str,
    arguments: &Value,
    expected: &ExpectedCall,
    declared: &Declared,
) -> Result<(), Mismatch> {
    if !expected.accepts(tool_id) {
        return Err(mismatch(
            ErrorType::WrongTool,
            format!("called `{tool_id}`, expected `{}`", expected.tool),
        ));
    }
    match_arguments(arguments, expected, declared.get(tool_id))
}

/// Maximum bipartite matching between expected calls (left) and actual calls (right), where
/// `ok(e, a)` says whether actual `a` satisfies expected `e`. Returns, per expected call, the index of
/// the actual call it is matched with. Kuhn's augmenting paths: optimal, O(E·V), tiny inputs.
pub fn optimal_assignment(
    n_expected: usize,
    n_actual: usize,
    ok: impl Fn(usize, usize) -> bool,
) -> Vec<Option<usize>> {
    let adj: Vec<Vec<usize>> =
        (0..n_expected).map(|e| (0..n_actual).filter(|&a| ok(e, a)).collect()).collect();
    let mut owner: Vec<Option<usize>> = vec![None; n_actual];
    fn augment(
        e: usize,
        adj: &[Vec<usize>],
        seen: &mut [bool],
        owner: &mut [Option<usize>],
    ) -> bool {
        for &a in &adj[e] {
            if seen[a] {
                continue;
            }
            seen[a] = true;
            if owner[a].is_none_or(|other| augment(other, adj, seen, owner)) {
                owner[a] = Some(e);
                return true;
            }
        }
        false
    }
    for e in 0..n_expected {
        let mut seen = vec![false; n_actual];
        augment(e, &adj, &mut seen, &mut owner);
    }
    let mut out = vec![None; n_expected];
    for (a, e) in owner.iter().enumerate() {
        if let Some(e) = e {
            out[*e] = Some(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn expected(tool: &str, args: Value) -> ExpectedCall {
        let arguments: BTreeMap<String, Vec<Value>> =
            serde_json::from_value(args).expect("arguments map to lists");
        ExpectedCall { tool: tool.into(), arguments, alternatives: vec![], any_arguments: false }
    }

    fn err(actual: Value, exp: &ExpectedCall) -> Option<ErrorType> {
        match_arguments(&actual, exp, None).err().map(|m| m.error)
    }

    #[test]
    fn exact_tool_name_required() {
        let e = expected("a/b/send_email", json!({}));
        assert_eq!(
            match_call("a/b/save_draft", &json!({}), &e, &Declared::new()).unwrap_err().error,
            ErrorType::WrongTool
        );
        assert!(match_call("a/b/send_email", &json!({}), &e, &Declared::new()).is_ok());
    }

    #[test]
    fn required_parameters_must_be_present_unless_empty_string_acceptable() {
        let e = expected("t", json!({"city": ["Paris"], "units": ["", "metric"]}));
        assert_eq!(err(json!({"units": "metric"}), &e), Some(ErrorType::MissingRequired));
        assert_eq!(err(json!({"city": "Paris"}), &e), None);
        assert_eq!(err(json!({"city": "Paris", "units": "metric"}), &e), None);
    }

    #[test]
    fn parameters_outside_ground_truth_are_rejected() {
        let e = expected("t", json!({"city": ["Paris"]}));
        assert_eq!(err(json!({"city": "Paris", "days": 3}), &e), Some(ErrorType::UnexpectedParam));
    }

    #[test]
    fn int_accepted_for_float_but_not_float_for_int() {
        let e = expected("t", json!({"amount": [5.0], "count": [3]}));
        assert_eq!(err(json!({"amount": 5, "count": 3}), &e), None);
        assert_eq!(err(json!({"amount": 5.0, "count": 3.0}), &e), Some(ErrorType::TypeError));
        assert_eq!(err(json!({"amount": 6, "count": 3}), &e), Some(ErrorType::ValueError));
    }

    #[test]
    fn fix_int_to_float_widening_inside_arrays() {
        let e = expected("t", json!({"coords": [[1.5, 2.0]], "nested": [{"w": [1.0]}]}));
        assert_eq!(err(json!({"coords": [1.5, 2], "nested": {"w": [1]}}), &e), None);
    }

    #[test]
    fn strings_are_normalised_like_bfcl() {
        assert_eq!(normalize("Release-Eng, Q3/Plan_*^."), "releaseengq3plan");
        let e = expected("t", json!({"channel": ["#release-eng"]}));
        assert_eq!(err(json!({"channel": "#Release Eng"}), &e), None);
        assert_eq!(err(json!({"channel": "release-eng"}), &e), Some(ErrorType::ValueError));
    }

    #[test]
    fn lists_compare_in_order() {
        let e = expected("t", json!({"to": [["a@x.com", "b@x.com"]]}));
        assert_eq!(err(json!({"to": ["a@x.com", "b@x.com"]}), &e), None);
        assert_eq!(err(json!({"to": ["b@x.com", "a@x.com"]}), &e), Some(ErrorType::ValueError));
        assert_eq!(err(json!({"to": ["a@x.com"]}), &e), Some(ErrorType::ValueError));
    }

    #[test]
    fn tool_only_ground_truth_accepts_any_arguments() {
        let mut e = expected("t", json!({"q": ["x"]}));
        e.any_arguments = true;
        assert_eq!(err(json!({"q": "something else", "extra": 1}), &e), None);
        assert_eq!(
            match_call("u", &json!({}), &e, &Declared::new()).unwrap_err().error,
            ErrorType::WrongTool
        );
    }

    #[test]
    fn wrong_type_is_a_type_error_not_a_value_error() {
        let e = expected("t", json!({"days": [3], "to": [["a@x.com"]]}));
        assert_eq!(err(json!({"days": "3", "to": ["a@x.com"]}), &e), Some(ErrorType::TypeError));
        assert_eq!(err(json!({"days": 3, "to": "a@x.com"}), &e), Some(ErrorType::TypeError));
    }

    #[test]
    fn fix_optimal_matching_beats_greedy_first_fit() {
        // Expected A accepts Paris or London; expected B accepts only Paris. Calls: Paris, London.
        // Greedy first-fit gives Paris to A and then fails B; the optimal matching pairs both.
        let exp = [
            expected("w", json!({"city": ["Paris", "London"]})),
            expected("w", json!({"city": ["Paris"]})),
        ];
        let actual = [json!({"city": "Paris"}), json!({"city": "London"})];
        let m = optimal_assignment(2, 2, |e, a| {
            match_call("w", &actual[a], &exp[e], &Declared::new()).is_ok()
        });
        assert_eq!(m, vec![Some(1), Some(0)]);
        // and it reports unmatched expected calls when no assignment exists
        let m = optimal_assignment(2, 1, |e, a| {
            match_call("w", &actual[a], &exp[e], &Declared::new()).is_ok()
        });
        assert_eq!(m.iter().filter(|x| x.is_some()).count(), 1);
    }

    fn params(schema: Value) -> ToolParams {
        super::super::declared::tool_params(&schema)
    }

    #[test]
    fn types_come_from_the_schema_and_numbers_compare_by_value() {
        let e = expected("t", json!({"amount": [10], "count": [3]}));
        let p = params(
            json!({"properties": {"amount": {"type": "number"}, "count": {"type": "integer"}}, "required": ["amount", "count"]}),
        );
        let check = |v: Value| match_arguments(&v, &e, Some(&p)).err().map(|m| m.error);
        assert_eq!(
            check(json!({"amount": 10.0, "count": 3})),
            None,
            "10.0 is a number and equals 10"
        );
        assert_eq!(
            check(json!({"amount": 10, "count": 3.0})),
            Some(ErrorType::TypeError),
            "a float is not an integer"
        );
        assert_eq!(check(json!({"amount": "10", "count": 3})), Some(ErrorType::TypeError));
        assert_eq!(check(json!({"amount": 10.5, "count": 3})), Some(ErrorType::ValueError));
        // Without declared types, the literal decides (older trial records): 10.0 against 10 is a type error.
        assert_eq!(err(json!({"amount": 10.0, "count": 3}), &e), Some(ErrorType::TypeError));
    }

    #[test]
    fn a_ground_truth_literal_of_another_type_is_accepted_like_a_bfcl_variable() {
        let e = expected("t", json!({"when": ["today"]}));
        let p = params(json!({"properties": {"when": {"type": "integer"}}}));
        assert_eq!(
            match_arguments(&json!({"when": "today"}), &e, Some(&p)).err().map(|m| m.error),
            None
        );
    }

    #[test]
    fn strings_normalise_single_quotes_to_double_like_bfcl() {
        assert_eq!(normalize("It's"), "it\"s");
        let e = expected("t", json!({"title": ["It\"s here"]}));
        assert_eq!(err(json!({"title": "it's here"}), &e), None);
    }

    #[test]
    fn omitted_optional_parameter_is_a_value_error_and_omitted_required_is_missing() {
        let e = expected("t", json!({"city": ["Paris"], "units": ["metric"]}));
        let p = params(
            json!({"properties": {"city": {"type": "string"}, "units": {"type": "string"}}, "required": ["city"]}),
        );
        let check = |v: Value| match_arguments(&v, &e, Some(&p)).err().map(|m| m.error);
        assert_eq!(check(json!({"city": "Paris"})), Some(ErrorType::ValueError));
        assert_eq!(check(json!({"units": "metric"})), Some(ErrorType::MissingRequired));
        assert_eq!(check(json!({"city": "Paris", "units": "metric"})), None);
    }

    /// For each declared scalar type: a value of that type, and values of other types.
    fn typed_samples() -> Vec<(&'static str, Value, Vec<Value>)> {
        vec![
            (
                "integer",
                json!(4),
                vec![json!("4"), json!(4.0), json!(4.5), json!(true), json!([4]), json!({"v": 4})],
            ),
            ("number", json!(2.5), vec![json!("2.5"), json!(false), json!([2.5]), json!(null)]),
            (
                "string",
                json!("Paris"),
                vec![json!(4), json!(2.5), json!(true), json!(["Paris"]), json!(null)],
            ),
            ("boolean", json!(true), vec![json!("true"), json!(1), json!(0.0), json!([true])]),
        ]
    }

    #[test]
    fn a_wrong_type_inside_an_array_is_a_nested_type_error_for_every_item_type() {
        for (t, good, wrongs) in typed_samples() {
            let p = params(json!({"properties": {"xs": {"type": "array", "items": {"type": t}}}}));
            for wrong in wrongs {
                for at in 0..3 {
                    let mut xs = vec![good.clone(); 3];
                    xs[at] = wrong.clone();
                    let e = expected("t", json!({"xs": [[good, good, good]]}));
                    let m = match_arguments(&json!({"xs": xs}), &e, Some(&p))
                        .expect_err("a wrong item type fails");
                    assert_eq!(
                        m.error,
                        ErrorType::TypeError,
                        "{wrong} at [{at}] of an array of {t}: {}",
                        m.detail
                    );
                    assert!(
                        m.detail.contains(&format!("`xs[{at}]`")) && m.detail.contains("nested"),
                        "{}",
                        m.detail
                    );
                }
            }
            // The right types at every position pass (and a wrong value is a value error, not a type error).
            let e = expected("t", json!({"xs": [[good, good]]}));
            assert_eq!(match_arguments(&json!({"xs": [good, good]}), &e, Some(&p)), Ok(()));
            assert_eq!(
                match_arguments(&json!({"xs": [good]}), &e, Some(&p)).unwrap_err().error,
                ErrorType::ValueError
            );
        }
    }

    #[test]
    fn a_wrong_type_inside_a_nested_object_is_a_nested_type_error_for_every_property_type() {
        for (t, good, wrongs) in typed_samples() {
            let p = params(json!({"properties": {
                "o": {"type": "object", "properties": {"k": {"type": t}, "name": {"type": "string"}}},
                "rows": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": t}}}}
            }}));
            let e =
                expected("t", json!({"o": [{"k": good, "name": "x"}], "rows": [[{"k": good}]]}));
            assert_eq!(
                match_arguments(
                    &json!({"o": {"k": good, "name": "x"}, "rows": [{"k": good}]}),
                    &e,
                    Some(&p)
                ),
                Ok(())
            );
            for wrong in wrongs {
                let m = match_arguments(&json!({"o": {"k": wrong, "name": "x"}}), &e, Some(&p))
                    .unwrap_err();
                assert_eq!(
                    (m.error, m.detail.contains("`o.k`")),
                    (ErrorType::TypeError, true),
                    "{t}: {}",
                    m.detail
                );
                let m = match_arguments(
                    &json!({"o": {"k": good, "name": "x"}, "rows": [{"k": wrong}]}),
                    &e,
                    Some(&p),
                )
                .unwrap_err();
                assert_eq!(
                    (m.error, m.detail.contains("`rows[0].k`")),
                    (ErrorType::TypeError, true),
                    "{t}: {}",
                    m.detail
                );
            }
        }
    }

    #[test]
    fn whole_number_floats_fail_as_integers_at_the_top_in_arrays_and_in_objects() {
        let p = params(json!({"properties": {
            "n": {"type": "integer"},
            "ns": {"type": "array", "items": {"type": "integer"}},
            "o": {"type": "object", "properties": {"n": {"type": "integer"}}}
        }}));
        let e = expected("t", json!({"n": [3], "ns": [[1, 2, 3]], "o": [{"n": 3}]}));
        let check = |v: Value| match_arguments(&v, &e, Some(&p)).err().map(|m| m.error);
        assert_eq!(check(json!({"n": 3, "ns": [1, 2, 3], "o": {"n": 3}})), None);
        for at in 0..3 {
            let mut ns = vec![json!(1), json!(2), json!(3)];
            ns[at] = json!(ns[at].as_i64().unwrap() as f64);
            assert_eq!(
                check(json!({"n": 3, "ns": ns, "o": {"n": 3}})),
                Some(ErrorType::TypeError),
                "{ns:?}"
            );
        }
        assert_eq!(
            check(json!({"n": 3.0, "ns": [1, 2, 3], "o": {"n": 3}})),
            Some(ErrorType::TypeError)
        );
        assert_eq!(
            check(json!({"n": 3, "ns": [1, 2, 3], "o": {"n": 3.0}})),
            Some(ErrorType::TypeError)
        );
        // while an integer is a number everywhere
        let p = params(
            json!({"properties": {"xs": {"type": "array", "items": {"type": "number"}}, "o": {"type": "object", "properties": {"x": {"type": "number"}}}}}),
        );
        let e = expected("t", json!({"xs": [[1.0, 2.5]], "o": [{"x": 2.0}]}));
        assert_eq!(match_arguments(&json!({"xs": [1, 2.5], "o": {"x": 2}}), &e, Some(&p)), Ok(()));
    }

    #[test]
    fn the_variable_rule_still_applies_to_literals_that_do_not_fit_the_declared_type() {
        // BFCL reads a ground-truth literal of another type than the declared one as "a variable"; a
        // value of the literal's type is accepted, at the top and for whole arrays.
        let p = params(
            json!({"properties": {"when": {"type": "integer"}, "ids": {"type": "array", "items": {"type": "integer"}}}}),
        );
        let e = expected("t", json!({"when": ["today"], "ids": [["a", "b"]]}));
        assert_eq!(
            match_arguments(&json!({"when": "today", "ids": ["a", "b"]}), &e, Some(&p)),
            Ok(())
        );
        // but a literal that fits does not excuse a value that does not
        let e = expected("t", json!({"ids": [[1, 2]]}));
        assert_eq!(
            match_arguments(&json!({"ids": ["1", 2]}), &e, Some(&p)).unwrap_err().error,
            ErrorType::TypeError
        );
    }

    #[test]
    fn explicit_null_passes_where_the_schema_admits_null_and_the_ground_truth_lists_it() {
        // How the BFCL importer declares an optional parameter whose default is null: its type or null.
        for t in ["string", "integer", "number", "boolean", "array", "object"] {
            let p = params(
                json!({"properties": {"q": {"type": "string"}, "opt": {"type": [t, "null"]}}, "required": ["q"]}),
            );
            let with_null = expected("t", json!({"q": ["x"], "opt": ["", null]}));
            assert_eq!(
                match_arguments(&json!({"q": "x", "opt": null}), &with_null, Some(&p)),
                Ok(()),
                "{t}"
            );
            assert_eq!(match_arguments(&json!({"q": "x"}), &with_null, Some(&p)), Ok(()), "{t}");
            // null is a fine type there, but not an acceptable value when the ground truth does not list it
            let without = expected("t", json!({"q": ["x"], "opt": [""]}));
            assert_eq!(
                match_arguments(&json!({"q": "x", "opt": null}), &without, Some(&p))
                    .unwrap_err()
                    .error,
                ErrorType::ValueError,
                "{t}"
            );
            // and where the schema does not admit null, null is a type error
            let strict = params(
                json!({"properties": {"q": {"type": "string"}, "opt": {"type": t}}, "required": ["q"]}),
            );
            assert_eq!(
                match_arguments(&json!({"q": "x", "opt": null}), &without, Some(&strict))
                    .unwrap_err()
                    .error,
                ErrorType::TypeError,
                "{t}"
            );
        }
    }

    #[test]
    fn required_parameters_are_checked_before_the_arguments_given() {
        // BFCL's order: a missing required parameter is reported even when another argument is also wrong.
        let e = expected("t", json!({"a": [1], "b": [2]}));
        let p = params(
            json!({"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
        );
        assert_eq!(
            match_arguments(&json!({"a": "x"}), &e, Some(&p)).unwrap_err().error,
            ErrorType::MissingRequired
        );
    }
}
