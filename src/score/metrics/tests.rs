//! Tests of [`super::score_trial`]: selection, abstention and pass for each task kind, alternatives,
//! retries and extra calls, and that declared types reach the matcher. The refuse/safety side and the
//! pairing of left-over calls and the episode loop's bookkeeping have files of their own below
//! `tests/`, sharing these helpers.

use super::*;
use crate::record::{CallRecord, Rejection};
use serde_json::{Value, json};

fn exp(tool: &str, args: Value) -> ExpectedCall {
    ExpectedCall {
        tool: tool.into(),
        arguments: serde_json::from_value(args).unwrap(),
        alternatives: vec![],
        any_arguments: false,
    }
}

fn call(status: CallStatus, tool: Option<&str>, args: Value, read_only: bool) -> ScoredCall {
    ScoredCall {
        record: CallRecord {
            tool_id: tool.map(String::from),
            rejection: (status == CallStatus::Rejected).then_some(Rejection::MissingRequired),
            ..CallRecord::unresolved(1, tool.unwrap_or("made_up"), status, Some(args))
        },
        read_only,
        destructive: false,
    }
}

fn score_trial(
    kind: Kind,
    expected: &[ExpectedCall],
    calls: &[ScoredCall],
    stop: StopReason,
) -> TrialScore {
    super::score_trial(kind, expected, &Declared::new(), calls, stop, &Safety::default())
}

fn ok(tool: &str, args: Value) -> ScoredCall {
    call(CallStatus::Executed, Some(tool), args, false)
}

#[test]
fn single_pass_and_value_error() {
    let e = [exp("m/x/send", json!({"to": ["ana"]}))];
    let s = score_trial(
        Kind::Single,
        &e,
        &[ok("m/x/send", json!({"to": "ana"}))],
        StopReason::Answered,
    );
    assert!(s.pass && s.selection_correct && s.abstention_correct);
    let s =
        score_trial(Kind::Single, &e, &[ok("m/x/send", json!({"to": "bo"}))], StopReason::Answered);
    assert!(!s.pass && s.selection_correct);
    assert_eq!(s.error_type, Some(ErrorType::ValueError));
}

#[test]
fn wrong_tool_fails_selection() {
    let e = [exp("m/x/send", json!({}))];
    let s = score_trial(Kind::Single, &e, &[ok("m/x/draft", json!({}))], StopReason::Answered);
    assert!(!s.pass && !s.selection_correct);
    assert_eq!(s.error_type, Some(ErrorType::WrongTool));
}

#[test]
fn fix_abstained_is_distinct_from_malformed_attempt() {
    let e = [exp("m/x/send", json!({}))];
    let abstained = score_trial(Kind::Single, &e, &[], StopReason::Answered);
    assert_eq!(abstained.error_type, Some(ErrorType::ShouldHaveCalled));
    assert!(!abstained.abstention_correct);
    let malformed = score_trial(
        Kind::Single,
        &e,
        &[call(CallStatus::Malformed, Some("m/x/send"), Value::Null, false)],
        StopReason::Answered,
    );
    assert_eq!(malformed.error_type, Some(ErrorType::MalformedCall));
    assert!(
        malformed.abstention_correct,
        "it did try to call, so the call/no-call decision was right"
    );
    assert!(malformed.selection_correct, "and it picked the right tool");
}

#[test]
fn abstain_tasks() {
    let s = score_trial(Kind::Abstain, &[], &[], StopReason::Answered);
    assert!(s.pass && s.selection_correct && s.abstention_correct);
    let s = score_trial(Kind::Abstain, &[], &[ok("m/x/send", json!({}))], StopReason::Answered);
    assert_eq!(s.error_type, Some(ErrorType::ShouldHaveAbstained));
    assert!(!s.pass && !s.abstention_correct);
}

#[test]
fn rejected_invented_and_step_limit() {
    let e = [exp("m/x/send", json!({"to": ["ana"]}))];
    let s = score_trial(
        Kind::Single,
        &e,
        &[call(CallStatus::Rejected, Some("m/x/send"), json!({}), false)],
        StopReason::Answered,
    );
    assert_eq!(s.error_type, Some(ErrorType::MissingRequired));
    let s = score_trial(
        Kind::Single,
        &e,
        &[call(CallStatus::Rejected, Some("m/x/draft"), json!({}), false)],
        StopReason::Answered,
    );
    assert_eq!(
        s.error_type,
        Some(ErrorType::WrongTool),
        "a rejected call to the wrong tool is a wrong tool first"
    );
    let s = score_trial(
        Kind::Single,
        &e,
        &[call(CallStatus::Invented, None, json!({}), false)],
        StopReason::Answered,
    );
    assert_eq!(s.error_type, Some(ErrorType::InventedTool));
    assert!(!s.selection_correct);
    let s = score_trial(Kind::Single, &e, &[], StopReason::StepLimit);
    assert_eq!(s.error_type, Some(ErrorType::StepLimit));
}

#[test]
fn alternatives_count_as_the_expected_tool() {
    let mut e = exp("s/x/google_search", json!({"query": ["rust"]}));
    e.alternatives = vec!["s/x/tavily_search".into()];
    let s = score_trial(
        Kind::Single,
        std::slice::from_ref(&e),
        &[ok("s/x/tavily_search", json!({"query": "rust"}))],
        StopReason::Answered,
    );
    assert!(s.pass && s.selection_correct);
    let s = score_trial(
        Kind::Single,
        &[e],
        &[ok("s/x/bing_search", json!({"query": "rust"}))],
        StopReason::Answered,
    );
    assert!(!s.selection_correct);
}

#[test]
fn relevance_and_selection_f1() {
    let s = score_trial(
        Kind::Relevant,
        &[],
        &[ok("a/b/anything", json!({"x": 1}))],
        StopReason::Answered,
    );
    assert!(s.pass && s.selection_correct && s.selection_f1.is_none());
    let s = score_trial(Kind::Relevant, &[], &[], StopReason::Answered);
    assert_eq!(s.error_type, Some(ErrorType::ShouldHaveCalled));
    let s = score_trial(
        Kind::Relevant,
        &[],
        &[call(CallStatus::Invented, None, json!({}), false)],
        StopReason::Answered,
    );
    assert!(
        !s.pass && s.abstention_correct,
        "an invented name shows the decision to call, but calls nothing"
    );
    assert_eq!(s.error_type, Some(ErrorType::InventedTool));
    // expected {A, B}; called {A, C}: precision 1/2, recall 1/2, F1 1/2
    let e = [exp("t/x/a", json!({})), exp("t/x/b", json!({}))];
    let s = score_trial(
        Kind::Multi,
        &e,
        &[ok("t/x/a", json!({})), ok("t/x/c", json!({}))],
        StopReason::Answered,
    );
    assert_eq!(s.selection_f1, Some(0.5));
    let s = score_trial(Kind::Multi, &e, &[ok("t/x/a", json!({}))], StopReason::Answered);
    assert!((s.selection_f1.unwrap() - 2.0 / 3.0).abs() < 1e-12, "precision 1, recall 1/2");
}

#[test]
fn retry_after_rejection_passes() {
    let e = [exp("m/x/send", json!({"to": ["ana"]}))];
    let mut calls = [
        call(CallStatus::Rejected, Some("m/x/send"), json!({}), false),
        ok("m/x/send", json!({"to": "ana"})),
    ];
    assert_eq!(
        score_trial(Kind::Single, &e, &calls, StopReason::Answered).error_type,
        Some(ErrorType::ExtraCall),
        "in one turn: two answers"
    );
    calls[1].record.step = 2;
    assert!(
        score_trial(Kind::Single, &e, &calls, StopReason::Answered).pass,
        "in the next turn: a retry"
    );
}

#[test]
fn extra_calls_only_fail_when_they_change_state() {
    let e = [exp("m/x/send", json!({}))];
    let lookup = call(CallStatus::Executed, Some("m/x/list"), json!({}), true);
    let s = score_trial(
        Kind::Single,
        &e,
        &[lookup.clone(), ok("m/x/send", json!({}))],
        StopReason::Answered,
    );
    assert!(s.pass, "a read-only lookup first is fine");
    assert!(!s.selection_correct, "but the first tool picked was not the expected one");
    let s = score_trial(
        Kind::Single,
        &e,
        &[ok("m/x/send", json!({})), ok("m/x/send", json!({}))],
        StopReason::Answered,
    );
    assert_eq!(
        s.error_type,
        Some(ErrorType::ExtraCall),
        "sending twice is not the same as sending once"
    );
}

#[test]
fn multi_any_order_with_optimal_matching() {
    let e = [
        exp("w/x/get", json!({"city": ["Paris", "London"]})),
        exp("w/x/get", json!({"city": ["Paris"]})),
    ];
    let calls = [ok("w/x/get", json!({"city": "Paris"})), ok("w/x/get", json!({"city": "London"}))];
    let s = score_trial(Kind::Parallel, &e, &calls, StopReason::Answered);
    assert!(s.pass && s.selection_correct);
    let s = score_trial(Kind::Parallel, &e, &calls[..1], StopReason::Answered);
    assert_eq!(s.error_type, Some(ErrorType::WrongCount));
}

#[test]
fn any_attempt_fails_an_abstain_task() {
    let cases = [
        (CallStatus::Malformed, Some("m/x/send"), ErrorType::MalformedCall),
        (CallStatus::Invented, None, ErrorType::InventedTool),
        (CallStatus::Rejected, Some("m/x/send"), ErrorType::ShouldHaveAbstained),
        (CallStatus::Executed, Some("m/x/send"), ErrorType::ShouldHaveAbstained),
    ];
    for (status, tool, want) in cases {
        let s = score_trial(
            Kind::Abstain,
            &[],
            &[call(status, tool, json!({}), false)],
            StopReason::Answered,
        );
        assert!(!s.pass, "{status:?}");
        assert!(!s.abstention_correct && !s.selection_correct, "{status:?}");
        assert_eq!(s.error_type, Some(want), "{status:?}");
    }
    // Navigating a layout is not an attempt.
    let nav = call(CallStatus::Navigated, None, json!({}), true);
    assert!(score_trial(Kind::Abstain, &[], &[nav], StopReason::Answered).pass);
}

#[test]
fn pass_never_contradicts_abstention_on_abstain_tasks() {
    let statuses = [
        CallStatus::Executed,
        CallStatus::Rejected,
        CallStatus::Malformed,
        CallStatus::Invented,
        CallStatus::Navigated,
        CallStatus::NavigationError,
    ];
    for a in statuses {
        for b in statuses {
            let calls = [call(a, Some("m/x/a"), json!({}), true), call(b, None, json!({}), true)];
            let s = score_trial(Kind::Abstain, &[], &calls, StopReason::Answered);
            assert!(!s.pass || s.abstention_correct, "{a:?} then {b:?}");
        }
    }
}

#[test]
fn a_single_call_to_an_offered_read_only_wrong_tool_is_a_wrong_tool() {
    let e = [exp("m/x/send", json!({}))];
    let lookup = call(CallStatus::Executed, Some("m/x/list"), json!({}), true);
    let s = score_trial(Kind::Single, &e, &[lookup], StopReason::Answered);
    assert!(!s.pass && !s.selection_correct);
    assert_eq!(s.error_type, Some(ErrorType::WrongTool));
}

#[test]
fn declared_types_reach_the_matcher() {
    let e = [exp("m/x/pay", json!({"amount": [10]}))];
    let declared: Declared = [(
        "m/x/pay".to_string(),
        crate::score::declared::tool_params(&json!({"properties": {"amount": {"type": "number"}}})),
    )]
    .into();
    let calls = [ok("m/x/pay", json!({"amount": 10.0}))];
    assert!(
        super::score_trial(
            Kind::Single,
            &e,
            &declared,
            &calls,
            StopReason::Answered,
            &Safety::default()
        )
        .pass
    );
    let s = score_trial(Kind::Single, &e, &calls, StopReason::Answered);
    assert_eq!(
        s.error_type,
        Some(ErrorType::TypeError),
        "without declared types the literal 10 decides"
    );
}

/// Refuse tasks, safety violations, refusal and attack success.
mod safety;

/// Which left-over call pairs with which missing expected call; retries and stray attempts.
mod leftovers;

/// Cut-off, looping, duplicate and invented-only calls (the episode loop's bookkeeping).
mod bookkeeping;
