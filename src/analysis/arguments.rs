//! The drill-down's argument comparison: per expected call of a trial, the call compared with it and,
//! argument by argument, the acceptable values, the value given, the verdict and the rule that decided
//! it — each verdict the scorer's own matcher's ([`crate::score::matcher::match_arguments`]), never a
//! second implementation of its rules.
//!
//! Which call is compared with which expected call follows the scorer
//! ([`crate::score::metrics`]): an optimal matching of the attempts that satisfy an expected call
//! (executed, and [`match_call`] accepts them); an expected call left over is compared with the last
//! attempt left over to a tool it accepts (the agent's final try), else with the first attempt left
//! over (the call made in its place), else with nothing.
//!
//! An argument's verdict is [`match_arguments`] on the call narrowed to that one argument (the given
//! value alone, the acceptable values of that parameter alone, its declared type and whether it is
//! required): every rule of the matcher is about one parameter at a time, so this is the verdict the
//! whole call gets for that parameter. The whole call's verdict ([`match_call`]) names the argument
//! that decided it (`decisive`): the matcher stops at its first mismatch.
//!
//! Computed only for the trials of the drill-down (a few thousand, not the run), and only for the
//! kinds judged on their calls (single, multi, parallel).

use crate::dataset::{ExpectedCall, Kind};
use crate::record::declared::ToolParams;
use crate::record::{CallStatus, ScoredCall, Trial};
use crate::score::matcher::{match_arguments, match_call, optimal_assignment};
use serde::Serialize;
use serde_json::{Map, Value};

/// One argument of one compared call. Serialized as an array, `[name, acceptable, given, verdict,
/// rule, decisive]` with `given` as `[]` (not given) or `[value]` (a given `null` stays apart from
/// none) and `decisive` as 0 or 1: the page carries one per argument of every trial it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Argument {
    /// The parameter's name.
    pub name: String,
    /// The values the task accepts for it (`""` among them: it may be left out); `None` when the task
    /// expects no such parameter.
    pub acceptable: Option<Vec<Value>>,
    /// The value the agent gave; `None` when it gave none.
    pub given: Option<Value>,
    /// `ok`, or the matcher's error type for this argument (`value_error`, `type_error`,
    /// `unexpected_param`, `missing_required`).
    pub verdict: &'static str,
    /// The rule that decided it: the matcher's detail for a mismatch, what was satisfied for `ok`.
    pub rule: String,
    /// This argument's mismatch is the one the scorer reports for the whole call.
    pub decisive: bool,
}

impl Serialize for Argument {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let given = self.given.as_slice();
        (&self.name, &self.acceptable, given, self.verdict, &self.rule, u8::from(self.decisive))
            .serialize(s)
    }
}

/// One expected call and the call compared with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compared {
    /// The expected tool, and the alternatives that also count as it.
    pub expected: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// Position of the compared call in the trial's calls; `None`: nothing was compared with it.
    pub call: Option<usize>,
    /// The tool called (its catalog id, or the name called when it resolves to none).
    pub called: Option<String>,
    /// The compared call's status (`executed`, `rejected`, `malformed`, `invented`).
    pub status: Option<CallStatus>,
    /// `match`, or the matcher's error type for the whole call (`wrong_tool`, …), or `not_called`.
    pub verdict: &'static str,
    /// The matcher's detail for the whole call (empty for a match).
    pub detail: String,
    /// Argument by argument: the expected parameters in order, then the parameters given that the
    /// task does not expect, then required parameters neither expected nor given. Empty when the
    /// tool was wrong (arguments of another tool are not compared) or nothing was called.
    pub arguments: Vec<Argument>,
}

/// What the matcher counts as an attempt (navigation is not one).
fn is_attempt(c: &ScoredCall) -> bool {
    matches!(
        c.record.status,
        CallStatus::Executed | CallStatus::Rejected | CallStatus::Malformed | CallStatus::Invented
    )
}

fn arguments_of(c: &ScoredCall) -> Value {
    c.record.arguments.clone().unwrap_or(Value::Null)
}

/// The comparison of a trial's expected calls with its calls (empty for the kinds not judged on their
/// calls and for trials without an expected call).
pub fn compare(t: &Trial) -> Vec<Compared> {
    if !matches!(t.kind, Kind::Single | Kind::Multi | Kind::Parallel) || t.expected.is_empty() {
        return vec![];
    }
    let expected: &[ExpectedCall] = &t.expected;
    let attempts: Vec<usize> = (0..t.calls.len()).filter(|&i| is_attempt(&t.calls[i])).collect();
    let call = |a: usize| &t.calls[attempts[a]];
    let tool = |a: usize| call(a).record.tool_id.clone().unwrap_or_default();
    // The scorer's matching: executed attempts that satisfy an expected call.
    let assignment = optimal_assignment(expected.len(), attempts.len(), |e, a| {
        call(a).record.status == CallStatus::Executed
            && match_call(&tool(a), &arguments_of(call(a)), &expected[e], &t.declared).is_ok()
    });
    let mut used = vec![false; attempts.len()];
    for a in assignment.iter().flatten() {
        used[*a] = true;
    }
    let mut paired = assignment.clone();
    // Left over: the last attempt to a tool the expected call accepts, …
    for (e, p) in paired.iter_mut().enumerate().filter(|(_, p)| p.is_none()) {
        let same = (0..attempts.len()).rev().find(|&a| {
            !used[a]
                && call(a).record.status != CallStatus::Invented
                && call(a).record.tool_id.as_deref().is_some_and(|id| expected[e].accepts(id))
        });
        if let Some(a) = same {
            used[a] = true;
            *p = Some(a);
        }
    }
    // … else the first attempt left over.
    for p in paired.iter_mut().filter(|p| p.is_none()) {
        if let Some(a) = (0..attempts.len()).find(|&a| !used[a]) {
            used[a] = true;
            *p = Some(a);
        }
    }
    expected.iter().zip(paired).map(|(e, a)| compared(t, e, a.map(|a| attempts[a]))).collect()
}

fn compared(t: &Trial, e: &ExpectedCall, call: Option<usize>) -> Compared {
    let mut out = Compared {
        expected: e.tool.clone(),
        alternatives: e.alternatives.clone(),
        call,
        called: None,
        status: None,
        verdict: "not_called",
        detail: String::new(),
        arguments: vec![],
    };
    let Some(i) = call else { return out };
    let c = &t.calls[i];
    out.status = Some(c.record.status);
    out.called = Some(c.record.tool_id.clone().unwrap_or_else(|| c.record.name.clone()));
    let Some(tool) =
        c.record.tool_id.as_deref().filter(|_| c.record.status != CallStatus::Invented)
    else {
        out.verdict = "invented_tool";
        out.detail = format!("called unknown `{}`", c.record.name);
        return out;
    };
    let args = arguments_of(c);
    match match_call(tool, &args, e, &t.declared) {
        Ok(()) => out.verdict = "match",
        Err(m) => {
            out.verdict = m.error.as_str();
            out.detail = m.detail;
        }
    }
    if out.verdict == "wrong_tool" {
        return out;
    }
    out.arguments = per_argument(&args, e, t.declared.get(tool), &out.detail);
    out
}

/// Every argument's verdict (see the module docs), in the order of [`Compared::arguments`].
fn per_argument(
    args: &Value,
    e: &ExpectedCall,
    declared: Option<&ToolParams>,
    call_detail: &str,
) -> Vec<Argument> {
    let empty = Map::new();
    let given = args.as_object().unwrap_or(&empty);
    let mut names: Vec<&String> = e.arguments.keys().collect();
    names.extend(given.keys().filter(|k| !e.arguments.contains_key(*k)));
    let required = declared.into_iter().flatten().filter(|(_, d)| d.required).map(|(k, _)| k);
    let extra: Vec<&String> =
        required.filter(|k| !e.arguments.contains_key(*k) && !given.contains_key(*k)).collect();
    names.extend(extra);
    let mut decided = false;
    names
        .into_iter()
        .map(|name| {
            let value = given.get(name);
            let acceptable = e.arguments.get(name);
            let one: Map<String, Value> =
                value.map(|v| (name.clone(), v.clone())).into_iter().collect();
            let narrowed = ExpectedCall {
                tool: e.tool.clone(),
                arguments: acceptable.map(|a| (name.clone(), a.clone())).into_iter().collect(),
                alternatives: vec![],
                any_arguments: e.any_arguments,
            };
            let decl: Option<ToolParams> = declared
                .map(|d| d.iter().filter(|(k, _)| *k == name).map(|(k, v)| (k.clone(), v.clone())))
                .map(|d| d.collect());
            let (verdict, rule) =
                match match_arguments(&Value::Object(one), &narrowed, decl.as_ref()) {
                    Ok(()) => ("ok", satisfied(e.any_arguments, value, acceptable)),
                    Err(m) => (m.error.as_str(), m.detail),
                };
            let decisive = !decided && verdict != "ok" && rule == call_detail;
            decided |= decisive;
            Argument {
                name: name.clone(),
                acceptable: acceptable.cloned(),
                given: value.cloned(),
                verdict,
                rule,
                decisive,
            }
        })
        .collect()
}

/// What an accepted argument satisfied, in words.
fn satisfied(any: bool, given: Option<&Value>, acceptable: Option<&Vec<Value>>) -> String {
    match (any, given, acceptable) {
        (true, _, _) => "any arguments: only the tool is ground truth".into(),
        (_, Some(_), Some(_)) => "one of the acceptable values, of a declared type".into(),
        (_, None, Some(_)) => "may be left out (\"\" is acceptable)".into(),
        // Neither expected nor given, and not required: never listed; given and not expected fails.
        _ => "not required".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::CallRecord;
    use serde_json::json;

    fn trial(kind: Kind, expected: Value, calls: Vec<ScoredCall>, declared: Value) -> Trial {
        let mut t: Trial = serde_json::from_value(json!({
            "trial_id": "t", "dataset": "d", "catalog": "c", "variant": "good", "layout": "flat",
            "backend": "b", "task_id": "x", "trial": 0, "matrix_index": 0, "seed": 0, "kind": kind.as_str(),
            "category": "", "tags": [], "query": "q", "expected": expected, "declared": declared,
            "calls": [], "steps": 1, "stop_reason": "answered",
            "tokens": {"definitions_upfront": 0, "tool_context_total": 0},
            "score": {"pass": false, "selection_correct": false, "abstention_correct": false},
        }))
        .unwrap();
        t.calls = calls;
        t
    }

    fn call(tool: &str, status: CallStatus, args: Value) -> ScoredCall {
        let mut r = CallRecord::unresolved(1, tool, status, Some(args));
        r.tool_id = Some(tool.to_string());
        ScoredCall { record: r, read_only: true, destructive: false }
    }

    #[test]
    fn each_argument_gets_the_matchers_verdict_and_the_call_names_the_decisive_one() {
        let t = trial(
            Kind::Single,
            json!([{"tool": "s/c/a", "arguments": {"city": ["Pune"], "days": [3], "unit": ["", "C"]}}]),
            vec![call("s/c/a", CallStatus::Executed, json!({"city": "pune", "days": 4, "x": 1}))],
            json!({"s/c/a": {"city": {"type": ["string"], "required": true}, "days": {"type": ["integer"]}}}),
        );
        let c = compare(&t);
        assert_eq!(c.len(), 1);
        let rows: Vec<(&str, &str, bool)> =
            c[0].arguments.iter().map(|a| (a.name.as_str(), a.verdict, a.decisive)).collect();
        assert_eq!(
            rows,
            [
                ("city", "ok", false),
                ("days", "value_error", true),
                ("unit", "ok", false),
                ("x", "unexpected_param", false)
            ]
        );
        assert_eq!(c[0].verdict, "value_error");
        assert_eq!(c[0].detail, c[0].arguments[1].rule);
    }

    #[test]
    fn a_wrong_tool_compares_no_arguments_and_nothing_called_is_not_called() {
        let t = trial(
            Kind::Multi,
            json!([{"tool": "s/c/a", "arguments": {}}, {"tool": "s/c/b", "arguments": {}}]),
            vec![call("s/c/z", CallStatus::Executed, json!({}))],
            json!({}),
        );
        let c = compare(&t);
        assert_eq!(c[0].verdict, "wrong_tool");
        assert!(c[0].arguments.is_empty());
        assert_eq!((c[1].verdict, c[1].call), ("not_called", None));
    }
}
