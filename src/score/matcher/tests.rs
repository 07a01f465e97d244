//! Tests of the matcher: BFCL's AST rules and the three flaws fixed. A file of its own because the
//! matcher is one cohesive job whose tests outweigh it (declared types at every depth, the variable
//! rule, optional and null parameters).

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
    assert_eq!(check(json!({"amount": 10.0, "count": 3})), None, "10.0 is a number and equals 10");
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
        let e = expected("t", json!({"o": [{"k": good, "name": "x"}], "rows": [[{"k": good}]]}));
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
    assert_eq!(match_arguments(&json!({"when": "today", "ids": ["a", "b"]}), &e, Some(&p)), Ok(()));
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
            match_arguments(&json!({"q": "x", "opt": null}), &without, Some(&p)).unwrap_err().error,
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
