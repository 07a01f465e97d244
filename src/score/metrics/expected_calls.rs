//! Task success for the kinds that are judged on their calls — `single`, `multi`, `parallel` — and
//! for `abstain`: attempts are paired with the expected calls by an optimal matching
//! ([`crate::score::matcher::optimal_assignment`]), retries are set aside, and what the matching left
//! over names the trial's error. Its own file because this pairing is the one intricate rule of
//! [`super::score_trial`]; the parent keeps the kind dispatch, the refuse and relevant kinds and the
//! safety side.

use super::{attempt_status, failed, is_attempt, no_call, passed, predicted, ran, unreadable};
use crate::dataset::{ExpectedCall, Kind};
use crate::record::declared::Declared;
use crate::record::{CallStatus, ErrorType, Rejection, ScoredCall, StopReason, TrialScore};
use crate::score::matcher::{Mismatch, match_call, optimal_assignment};
use std::collections::BTreeSet;

fn rejection_error(r: Rejection) -> ErrorType {
    match r {
        Rejection::MissingRequired => ErrorType::MissingRequired,
        Rejection::UnexpectedParam => ErrorType::UnexpectedParam,
        Rejection::TypeError => ErrorType::TypeError,
        Rejection::ValueError => ErrorType::ValueError,
    }
}

/// Why an attempt that was not matched failed to be `expected`.
fn attempt_error(c: &ScoredCall, expected: &ExpectedCall, declared: &Declared) -> Mismatch {
    let tool = c.record.tool_id.as_deref().unwrap_or_default();
    let args = c.record.arguments.clone().unwrap_or(serde_json::Value::Null);
    match c.record.status {
        CallStatus::Invented => Mismatch {
            error: ErrorType::InventedTool,
            detail: format!("called unknown `{}`", c.record.name),
        },
        // Cut off while naming the expected tool (or before its name could be read): an attempt whose
        // arguments never arrived. A cut call to another tool is a wrong tool first, like any call.
        _ if c.record.truncated
            && c.record.tool_id.as_deref().is_none_or(|t| expected.accepts(t)) =>
        {
            Mismatch {
                error: ErrorType::MalformedCall,
                detail: format!("call to `{}` was cut off by max_tokens", c.record.name),
            }
        }
        _ if c.record.tool_id.is_none() => {
            Mismatch { error: ErrorType::MalformedCall, detail: unreadable(c) }
        }
        _ if !expected.accepts(tool) => {
            match_call(tool, &args, expected, declared).expect_err("a wrong tool never matches")
        }
        CallStatus::Malformed => Mismatch {
            error: ErrorType::MalformedCall,
            detail: format!("arguments of `{}` were not a JSON object", c.record.name),
        },
        CallStatus::Rejected => match match_call(tool, &args, expected, declared) {
            Err(m) => m,
            Ok(()) => Mismatch {
                error: c.record.rejection.map(rejection_error).unwrap_or(ErrorType::ValueError),
                detail: format!("call to `{tool}` was rejected by its schema"),
            },
        },
        _ => match_call(tool, &args, expected, declared).err().unwrap_or_else(|| Mismatch {
            error: ErrorType::WrongCount,
            detail: format!("`{tool}` was called more often than expected"),
        }),
    }
}

/// Task success for the non-refuse kinds.
pub(super) fn score_task(
    kind: Kind,
    expected: &[ExpectedCall],
    declared: &Declared,
    calls: &[ScoredCall],
    stop: StopReason,
) -> TrialScore {
    let attempts: Vec<&ScoredCall> = calls.iter().filter(|c| is_attempt(c)).collect();
    // What the agent addressed, in call order: the catalog tool of each attempt, or for an invented or
    // unreadable call a key that matches no expected tool (a wrong pick like any other).
    let picked: Vec<String> = attempts.iter().map(|c| predicted(c)).collect();
    let attempted: Vec<&str> = picked.iter().map(String::as_str).collect();

    let selection_correct = match kind {
        Kind::Abstain | Kind::Refuse => attempts.is_empty(),
        Kind::Relevant => !attempted.is_empty(),
        Kind::Single => attempted.first().is_some_and(|t| expected[0].accepts(t)),
        Kind::Multi | Kind::Parallel => {
            // An alternative counts as the expected tool it stands in for.
            let canonical = |t: &str| {
                expected
                    .iter()
                    .find(|e| e.accepts(t))
                    .map(|e| e.tool.as_str())
                    .unwrap_or(t)
                    .to_string()
            };
            let got: BTreeSet<String> = attempted.iter().map(|t| canonical(t)).collect();
            let want: BTreeSet<String> = expected.iter().map(|e| e.tool.clone()).collect();
            got == want
        }
    };
    let abstention_correct = (kind == Kind::Abstain) == attempts.is_empty();

    if stop == StopReason::BackendError {
        return failed(
            selection_correct,
            abstention_correct,
            ErrorType::BackendError,
            "the backend failed".into(),
        );
    }
    if stop == StopReason::ProviderLimit {
        return failed(
            selection_correct,
            abstention_correct,
            ErrorType::ProviderLimit,
            super::LIMIT_DETAIL.into(),
        );
    }
    if kind == Kind::Abstain {
        // Any attempt fails an abstain task, however it went: the decision to call was wrong.
        return match attempts.first() {
            None => passed(selection_correct, abstention_correct),
            Some(c) => {
                let (error, detail) = match c.record.status {
                    CallStatus::Malformed if c.record.truncated => (
                        ErrorType::MalformedCall,
                        format!("tried to call `{}` (cut off by max_tokens)", c.record.name),
                    ),
                    CallStatus::Malformed if c.record.server_parse_error.is_some() => (
                        ErrorType::MalformedCall,
                        format!("tried to call a tool: {}", unreadable(c)),
                    ),
                    CallStatus::Malformed => (
                        ErrorType::MalformedCall,
                        format!("tried to call `{}` (arguments unreadable)", c.record.name),
                    ),
                    CallStatus::Invented => (
                        ErrorType::InventedTool,
                        format!("tried to call unknown `{}`", c.record.name),
                    ),
                    CallStatus::Rejected => (
                        ErrorType::ShouldHaveAbstained,
                        format!(
                            "tried to call `{}`",
                            c.record.tool_id.as_deref().unwrap_or_default()
                        ),
                    ),
                    _ => (
                        ErrorType::ShouldHaveAbstained,
                        format!("executed `{}`", c.record.tool_id.as_deref().unwrap_or_default()),
                    ),
                };
                failed(selection_correct, abstention_correct, error, detail)
            }
        };
    }

    // Every attempt takes part in the matching; only an executed call can satisfy an expected one.
    let args = |c: &ScoredCall| c.record.arguments.clone().unwrap_or(serde_json::Value::Null);
    let id = |c: &ScoredCall| c.record.tool_id.clone().unwrap_or_default();
    let assignment = optimal_assignment(expected.len(), attempts.len(), |e, a| {
        attempts[a].record.status == CallStatus::Executed
            && match_call(&id(attempts[a]), &args(attempts[a]), &expected[e], declared).is_ok()
    });
    let matched: BTreeSet<usize> = assignment.iter().flatten().copied().collect();
    // Attempts left over by the matching, minus retries: a failed call to a tool that a call to the same
    // tool in a *later turn* then made good, when the tool was called more often than it is expected
    // (two calls in one turn are two answers, not a retry; nor is a failed call whose tool is still owed
    // a call).
    let attempts_to =
        |t: &str| attempts.iter().filter(|c| c.record.tool_id.as_deref() == Some(t)).count();
    let expected_of = |t: &str| expected.iter().filter(|e| e.accepts(t)).count();
    let retried = |i: usize| {
        let c = attempts[i];
        let Some(tool) = c.record.tool_id.as_deref() else {
            return false;
        };
        !ran(c)
            && attempts_to(tool) > expected_of(tool)
            && matched.iter().any(|&j| {
                attempts[j].record.tool_id == c.record.tool_id
                    && attempts[j].record.step > c.record.step
            })
    };
    let unmatched: Vec<&ScoredCall> = (0..attempts.len())
        .filter(|i| !matched.contains(i) && !retried(*i))
        .map(|i| attempts[i])
        .collect();

    let missing: Vec<usize> = (0..expected.len()).filter(|&e| assignment[e].is_none()).collect();
    if let Some(&first) = missing.first() {
        // Pair each expected call left over with an attempt left over: the last call to the same tool
        // first (the agent's final try; its own mismatch says what was wrong), then, in order, the calls
        // made in their place (a wrong tool, an invented name, an unreadable call, one call too many to
        // another expected tool). The trial reports the first pair that has a call; only when no call is
        // left over does it report an expected call that never came.
        let mut pair: Vec<Option<usize>> = vec![None; missing.len()];
        let mut used = vec![false; unmatched.len()];
        for (slot, &e) in missing.iter().enumerate() {
            let same = (0..unmatched.len()).rev().find(|&u| {
                let c = unmatched[u];
                !used[u]
                    && c.record.status != CallStatus::Invented
                    && c.record.tool_id.as_deref().is_some_and(|t| expected[e].accepts(t))
            });
            if let Some(u) = same {
                used[u] = true;
                pair[slot] = Some(u);
            }
        }
        for p in pair.iter_mut().filter(|p| p.is_none()) {
            if let Some(u) = (0..unmatched.len()).find(|&u| !used[u]) {
                used[u] = true;
                *p = Some(u);
            }
        }
        let m = match missing.iter().zip(&pair).find_map(|(&e, p)| p.map(|u| (e, u))) {
            Some((e, u)) => attempt_error(unmatched[u], &expected[e], declared),
            None => match stop {
                StopReason::StepLimit => Mismatch {
                    error: ErrorType::StepLimit,
                    detail: format!("step limit reached before calling `{}`", expected[first].tool),
                },
                // A loop stopped early is a step limit reached early.
                StopReason::RepeatedCall => Mismatch {
                    error: ErrorType::StepLimit,
                    detail: format!(
                        "stopped for repeating the same calls before calling `{}`",
                        expected[first].tool
                    ),
                },
                _ if attempts.is_empty() => Mismatch {
                    error: ErrorType::ShouldHaveCalled,
                    detail: no_call(stop, "answered without calling a tool"),
                },
                _ => Mismatch {
                    error: ErrorType::WrongCount,
                    detail: format!("`{}` was never called", expected[first].tool),
                },
            },
        };
        return failed(selection_correct, abstention_correct, m.error, m.detail);
    }
    // Every attempt left over (not matched, not a retry) fails the trial, except an executed read-only
    // call: a lookup that ran and changed nothing. A stray call that did not run — rejected, unreadable,
    // cut off, invented, refused by the live policy — is as wrong as BFCL's checker says it is
    // (`wrong_count` or a decoder failure there), and an extra state change is one too many.
    if let Some(c) = unmatched.iter().find(|c| !(ran(c) && c.read_only)) {
        let detail = match c.record.server_parse_error {
            Some(_) => format!("extra call: {}", unreadable(c)),
            None => format!("extra {} call to `{}`", attempt_status(c), c.record.name),
        };
        return failed(selection_correct, abstention_correct, ErrorType::ExtraCall, detail);
    }
    passed(selection_correct, abstention_correct)
}
