//! Which tool took the call: per expected call of a trial, the tool the agent called in its place, and
//! the calls that answered no expected call. Aggregated (in `report`), these give the confusion matrix
//! (expected tool → tool called) and per-tool precision, recall and F1.
//!
//! - `single`: the expected tool against the first attempt, as selection accuracy reads it: its tool
//!   (an alternative counts as the expected tool), [`INVENTED`] for a name no offered tool has,
//!   [`UNREADABLE`] for a call whose tool could not be resolved, [`NOTHING`] when no call was attempted.
//!   Later attempts are extra calls.
//! - `multi` / `parallel`: each expected call is paired with an attempt to a tool it accepts by an
//!   optimal (maximum) matching on tools; an expected call left over takes the next attempt left over
//!   (in call order) to a tool the task does not expect — the call made in its place — or [`NOTHING`]
//!   (expected `[a, b]`, called `[a, a]`: `b` → nothing; the second `a` took no call of `b`'s). The
//!   attempts still left over are extra calls.
//! - `abstain` / `refuse`: no expected call; every attempt is an extra call.
//! - `relevant`: no ground truth of which tool: nothing is counted.
//!
//! An extra call to a tool the trial expects (a retry, a duplicate, the right tool after a wrong one)
//! is not counted as extra: it takes no other tool's call. Navigation meta-tools are not attempts.

use super::matcher::optimal_assignment;
use crate::dataset::{ExpectedCall, Kind};
use crate::record::{CallStatus, ScoredCall};

/// The agent attempted no call in place of the expected one.
pub const NOTHING: &str = "(nothing)";
/// The agent called a name that no offered tool has.
pub const INVENTED: &str = "(invented)";
/// The agent called something whose tool could not be resolved (unreadable call).
pub const UNREADABLE: &str = "(unreadable)";

/// A trial's pairing: `(expected tool, tool called)` per expected call, and the tools of extra calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pairing {
    pub pairs: Vec<(String, String)>,
    pub extra: Vec<String>,
}

fn is_attempt(c: &ScoredCall) -> bool {
    matches!(
        c.record.status,
        CallStatus::Executed | CallStatus::Rejected | CallStatus::Malformed | CallStatus::Invented
    )
}

/// What an attempt called, as the matrix names it.
fn called(c: &ScoredCall) -> String {
    match (&c.record.status, &c.record.tool_id) {
        (CallStatus::Invented, _) => INVENTED.to_string(),
        (_, Some(t)) => t.clone(),
        (_, None) => UNREADABLE.to_string(),
    }
}

/// The pairing of one trial (see the module docs).
pub fn pairing(kind: Kind, expected: &[ExpectedCall], calls: &[ScoredCall]) -> Pairing {
    let attempts: Vec<&ScoredCall> = calls.iter().filter(|c| is_attempt(c)).collect();
    let mut out = Pairing::default();
    // What the expected call counts as when the agent called `tool`: the expected tool for an
    // alternative it accepts, else the tool itself.
    let name = |e: &ExpectedCall, c: &ScoredCall| {
        let t = called(c);
        if e.accepts(&t) { e.tool.clone() } else { t }
    };
    let expects = |t: &str| expected.iter().any(|e| e.accepts(t));
    let mut used = vec![false; attempts.len()];
    match kind {
        Kind::Relevant => return out,
        Kind::Abstain | Kind::Refuse => {}
        Kind::Single => {
            if let Some(e) = expected.first() {
                match attempts.first() {
                    Some(c) => {
                        out.pairs.push((e.tool.clone(), name(e, c)));
                        used[0] = true;
                    }
                    None => out.pairs.push((e.tool.clone(), NOTHING.to_string())),
                }
            }
        }
        Kind::Multi | Kind::Parallel => {
            let tool_ok = |e: usize, a: usize| {
                attempts[a].record.status != CallStatus::Invented
                    && attempts[a].record.tool_id.as_deref().is_some_and(|t| expected[e].accepts(t))
            };
            let assignment = optimal_assignment(expected.len(), attempts.len(), tool_ok);
            for a in assignment.iter().flatten() {
                used[*a] = true;
            }
            for (e, a) in assignment.iter().enumerate() {
                let taken = match a {
                    Some(a) => name(&expected[e], attempts[*a]),
                    // The call made in its place: the next attempt left over that is not one more call
                    // to a tool the task expects (a repeat or a retry takes no other tool's call).
                    None => match (0..attempts.len())
                        .find(|&u| !used[u] && !expects(&called(attempts[u])))
                    {
                        Some(u) => {
                            used[u] = true;
                            name(&expected[e], attempts[u])
                        }
                        None => NOTHING.to_string(),
                    },
                };
                out.pairs.push((expected[e].tool.clone(), taken));
            }
        }
    }
    for (a, c) in attempts.iter().enumerate() {
        let t = called(c);
        if !used[a] && !expects(&t) {
            out.extra.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::CallRecord;
    use serde_json::json;

    fn exp(tool: &str) -> ExpectedCall {
        serde_json::from_value(json!({"tool": tool})).unwrap()
    }

    fn call(status: CallStatus, tool: Option<&str>) -> ScoredCall {
        let mut r = CallRecord::unresolved(1, tool.unwrap_or("x"), status, Some(json!({})));
        r.tool_id = tool.map(String::from);
        ScoredCall { record: r, read_only: true, destructive: false }
    }

    fn pairs(p: &Pairing) -> Vec<(&str, &str)> {
        p.pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
    }

    #[test]
    fn single_tasks_pair_the_first_attempt() {
        let e = [exp("s/c/a")];
        let p = pairing(
            Kind::Single,
            &e,
            &[
                call(CallStatus::Navigated, None),
                call(CallStatus::Rejected, Some("s/c/b")),
                call(CallStatus::Executed, Some("s/c/a")),
            ],
        );
        assert_eq!(pairs(&p), [("s/c/a", "s/c/b")]);
        assert_eq!(
            p.extra,
            Vec::<String>::new(),
            "the later call to the expected tool is not another tool's call"
        );
        assert_eq!(pairs(&pairing(Kind::Single, &e, &[])), [("s/c/a", NOTHING)]);
        assert_eq!(
            pairs(&pairing(Kind::Single, &e, &[call(CallStatus::Invented, None)])),
            [("s/c/a", INVENTED)]
        );
        assert_eq!(
            pairs(&pairing(Kind::Single, &e, &[call(CallStatus::Malformed, None)])),
            [("s/c/a", UNREADABLE)]
        );
        let alt: Vec<ExpectedCall> = vec![
            serde_json::from_value(json!({"tool": "s/c/a", "alternatives": ["s/c/a2"]})).unwrap(),
        ];
        assert_eq!(
            pairs(&pairing(Kind::Single, &alt, &[call(CallStatus::Executed, Some("s/c/a2"))])),
            [("s/c/a", "s/c/a")]
        );
    }

    #[test]
    fn multi_tasks_pair_by_an_optimal_matching_then_by_order() {
        let e = [exp("s/c/a"), exp("s/c/b"), exp("s/c/c")];
        // b was called, a was replaced by x, c by nothing; y is one call too many.
        let calls =
            [call(CallStatus::Executed, Some("s/c/x")), call(CallStatus::Executed, Some("s/c/b"))];
        let p = pairing(Kind::Multi, &e, &calls);
        assert_eq!(pairs(&p), [("s/c/a", "s/c/x"), ("s/c/b", "s/c/b"), ("s/c/c", NOTHING)]);
        assert!(p.extra.is_empty());
        let calls = [
            call(CallStatus::Executed, Some("s/c/a")),
            call(CallStatus::Executed, Some("s/c/b")),
            call(CallStatus::Executed, Some("s/c/c")),
            call(CallStatus::Executed, Some("s/c/y")),
        ];
        let p = pairing(Kind::Parallel, &e, &calls);
        assert_eq!(pairs(&p), [("s/c/a", "s/c/a"), ("s/c/b", "s/c/b"), ("s/c/c", "s/c/c")]);
        assert_eq!(p.extra, ["s/c/y"]);
    }

    #[test]
    fn a_repeated_call_to_an_expected_tool_takes_no_other_tools_call() {
        // Every arrangement of expected tools {a, b} (and {a, a, b}) against calls that repeat expected
        // tools: no expected call is "taken by" a tool the task expects elsewhere, and nothing is extra.
        let expected_sets: [&[&str]; 3] =
            [&["s/c/a", "s/c/b"], &["s/c/a", "s/c/a", "s/c/b"], &["s/c/b", "s/c/a"]];
        for want in expected_sets {
            let e: Vec<ExpectedCall> = want.iter().map(|t| exp(t)).collect();
            for calls in [
                vec!["s/c/a", "s/c/a"],
                vec!["s/c/a", "s/c/a", "s/c/a"],
                vec!["s/c/b", "s/c/b"],
                vec!["s/c/a", "s/c/b", "s/c/b", "s/c/a"],
            ] {
                let calls: Vec<ScoredCall> =
                    calls.iter().map(|t| call(CallStatus::Executed, Some(t))).collect();
                for kind in [Kind::Multi, Kind::Parallel] {
                    let p = pairing(kind, &e, &calls);
                    for (expected, took) in &p.pairs {
                        assert!(
                            took == expected || took == NOTHING,
                            "{want:?} {kind:?}: {expected} taken by {took}"
                        );
                    }
                    assert!(p.extra.is_empty(), "{want:?} {kind:?}: extra {:?}", p.extra);
                }
            }
        }
        // The example, spelled out: expected [rerun_ci_run, add_pull_request_comment].
        let e = [exp("g/ci/rerun_ci_run"), exp("g/pr/add_pull_request_comment")];
        let p = pairing(
            Kind::Multi,
            &e,
            &[
                call(CallStatus::Executed, Some("g/ci/rerun_ci_run")),
                call(CallStatus::Executed, Some("g/ci/rerun_ci_run")),
            ],
        );
        assert_eq!(
            pairs(&p),
            [
                ("g/ci/rerun_ci_run", "g/ci/rerun_ci_run"),
                ("g/pr/add_pull_request_comment", NOTHING)
            ]
        );
        // A call to an unexpected tool still takes the call it was made in place of.
        let p = pairing(
            Kind::Multi,
            &e,
            &[
                call(CallStatus::Executed, Some("g/ci/rerun_ci_run")),
                call(CallStatus::Executed, Some("g/ci/rerun_ci_run")),
                call(CallStatus::Executed, Some("g/pr/list")),
            ],
        );
        assert_eq!(
            pairs(&p),
            [
                ("g/ci/rerun_ci_run", "g/ci/rerun_ci_run"),
                ("g/pr/add_pull_request_comment", "g/pr/list")
            ]
        );
    }

    #[test]
    fn abstain_tasks_count_every_attempt_as_extra_and_relevant_tasks_nothing() {
        let calls = [call(CallStatus::Executed, Some("s/c/a")), call(CallStatus::Invented, None)];
        let p = pairing(Kind::Abstain, &[], &calls);
        assert!(p.pairs.is_empty());
        assert_eq!(p.extra, ["s/c/a", INVENTED]);
        assert_eq!(pairing(Kind::Relevant, &[], &calls), Pairing::default());
    }
}
