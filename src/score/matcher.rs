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
mod tests;
