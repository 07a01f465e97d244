//! Tests of how [`crate::score::metrics::score_trial`] names the error of a multi or parallel answer:
//! which left-over call pairs with which missing expected call, what is a retry, and stray attempts.

use super::*;

#[test]
fn a_broken_call_in_a_parallel_answer_reports_its_own_error() {
    let e =
        [exp("w/x/get", json!({"city": ["Paris"]})), exp("w/x/get", json!({"city": ["London"]}))];
    let paris = ok("w/x/get", json!({"city": "Paris"}));
    let mut rejected = call(CallStatus::Rejected, Some("w/x/get"), json!({"city": 7}), false);
    rejected.record.rejection = Some(Rejection::TypeError);
    let cases = [
        (
            call(CallStatus::Invented, None, json!({"city": "London"}), false),
            ErrorType::InventedTool,
        ),
        (
            call(CallStatus::Malformed, Some("w/x/get"), Value::Null, false),
            ErrorType::MalformedCall,
        ),
        (rejected, ErrorType::TypeError),
        (ok("w/x/get", json!({"city": "London", "days": 2})), ErrorType::UnexpectedParam),
        (ok("w/x/other", json!({"city": "London"})), ErrorType::WrongTool),
    ];
    for (broken, want) in cases {
        for kind in [Kind::Parallel, Kind::Multi] {
            let s = score_trial(kind, &e, &[paris.clone(), broken.clone()], StopReason::Answered);
            assert!(!s.pass);
            assert_eq!(s.error_type, Some(want), "{kind:?} with {:?}", broken.record.status);
        }
    }
}

#[test]
fn each_left_over_call_pairs_with_its_own_expected_call() {
    // Expected [A, B]; the only call is a broken B: the trial reports B's own error, not "A missing"
    // and not "called B where A was expected".
    let e = [exp("t/x/a", json!({})), exp("t/x/b", json!({"q": ["x"]}))];
    let mut broken_b = call(CallStatus::Rejected, Some("t/x/b"), json!({}), false);
    broken_b.record.rejection = Some(Rejection::MissingRequired);
    let s = score_trial(Kind::Multi, &e, &[broken_b], StopReason::Answered);
    assert_eq!(s.error_type, Some(ErrorType::MissingRequired));
    // Expected [A(1), B]; calls A(1) and A(2): the second A was made in B's place.
    let e = [exp("t/x/a", json!({"n": [1]})), exp("t/x/b", json!({}))];
    let s = score_trial(
        Kind::Parallel,
        &e,
        &[ok("t/x/a", json!({"n": 1})), ok("t/x/a", json!({"n": 2}))],
        StopReason::Answered,
    );
    assert_eq!(s.error_type, Some(ErrorType::WrongTool));
}

#[test]
fn a_failed_call_retried_successfully_is_not_the_pair_of_a_missing_one() {
    // Sends to A failed, then succeeded; B was never called: B is missing, not "A was malformed".
    let e = [exp("t/x/a", json!({})), exp("t/x/b", json!({}))];
    let mut later = ok("t/x/a", json!({}));
    later.record.step = 2;
    let calls = [call(CallStatus::Malformed, Some("t/x/a"), Value::Null, false), later];
    assert_eq!(
        score_trial(Kind::Multi, &e, &calls, StopReason::Answered).error_type,
        Some(ErrorType::WrongCount)
    );
}

#[test]
fn a_failed_call_is_no_retry_when_made_in_the_same_turn_or_when_its_tool_is_still_owed_a_call() {
    // Two plays expected; a broken play and a good play in one turn: the broken one is the second
    // answer, and its own error is reported.
    let e = [
        exp("m/x/play", json!({"artist": ["Maroon 5"]})),
        exp("m/x/play", json!({"artist": ["Taylor Swift"]})),
    ];
    let mut broken = call(CallStatus::Rejected, Some("m/x/play"), json!({"duration": 20}), false);
    broken.record.rejection = Some(Rejection::MissingRequired);
    let good = ok("m/x/play", json!({"artist": "Maroon 5"}));
    let s = score_trial(Kind::Parallel, &e, &[broken.clone(), good.clone()], StopReason::Answered);
    assert_eq!(s.error_type, Some(ErrorType::UnexpectedParam), "the broken call's own mismatch");
    // Even in a later turn, play is owed two calls and got two: the broken one is not a retry.
    let mut later = good;
    later.record.step = 2;
    let s = score_trial(Kind::Parallel, &e, &[broken, later], StopReason::Answered);
    assert_eq!(s.error_type, Some(ErrorType::UnexpectedParam));
}

/// Every kind of stray attempt that did not run, as the episode records it.
fn strays() -> Vec<(&'static str, ScoredCall)> {
    let mut rejected = call(CallStatus::Rejected, Some("m/x/send"), json!({"to": 7}), false);
    rejected.record.rejection = Some(Rejection::TypeError);
    let mut missing = call(CallStatus::Rejected, Some("m/x/send"), json!({}), false);
    missing.record.rejection = Some(Rejection::MissingRequired);
    let mut other_rejected =
        call(CallStatus::Rejected, Some("m/x/list"), json!({"limit": "x"}), true);
    other_rejected.record.rejection = Some(Rejection::TypeError);
    let mut truncated = call(CallStatus::Malformed, Some("m/x/send"), Value::Null, false);
    truncated.record.truncated = true;
    let mut refused = ok("m/x/wipe", json!({}));
    refused.record.live = Some(crate::record::live::LiveCall {
        refused: true,
        detail: "destructive".into(),
        ..Default::default()
    });
    vec![
        ("rejected", rejected),
        ("rejected", missing),
        ("rejected", other_rejected),
        ("malformed", call(CallStatus::Malformed, Some("m/x/send"), Value::Null, false)),
        ("malformed", call(CallStatus::Malformed, None, Value::Null, false)),
        ("truncated", truncated),
        ("invented", call(CallStatus::Invented, None, json!({"to": "ana"}), false)),
        ("refused", refused),
        ("executed state-changing", ok("m/x/archive", json!({}))),
    ]
}

#[test]
fn a_correct_answer_with_a_stray_attempt_in_the_same_turn_fails_as_an_extra_call() {
    // Single, multi and parallel tasks; the stray before, between and after the correct calls; every
    // status of a call that did not run. BFCL's checker fails every one of these responses.
    let single = vec![exp("m/x/send", json!({"to": ["ana"]}))];
    let multi = vec![exp("m/x/send", json!({"to": ["ana"]})), exp("m/x/list", json!({}))];
    let good = |e: &ExpectedCall| {
        ok(
            &e.tool,
            json!({"to": "ana"})
                .as_object()
                .filter(|_| e.tool.ends_with("send"))
                .cloned()
                .map(Value::Object)
                .unwrap_or(json!({})),
        )
    };
    for (kind, expected) in
        [(Kind::Single, &single), (Kind::Multi, &multi), (Kind::Parallel, &multi)]
    {
        let correct: Vec<ScoredCall> = expected.iter().map(good).collect();
        assert!(
            score_trial(kind, expected, &correct, StopReason::Answered).pass,
            "{kind:?}: the correct answer alone passes"
        );
        for (status, stray) in strays() {
            for at in 0..=correct.len() {
                let mut calls = correct.clone();
                calls.insert(at, stray.clone());
                let s = score_trial(kind, expected, &calls, StopReason::Answered);
                assert!(!s.pass, "{kind:?}: a stray {status} call at {at} must fail");
                assert_eq!(
                    s.error_type,
                    Some(ErrorType::ExtraCall),
                    "{kind:?} {status} at {at}: {}",
                    s.error_detail
                );
                assert!(
                    s.error_detail.contains(status),
                    "{kind:?}: the detail names the status `{status}`: {}",
                    s.error_detail
                );
                assert!(
                    s.selection_f1.unwrap() < 1.0
                        || stray
                            .record
                            .tool_id
                            .as_deref()
                            .is_some_and(|t| expected.iter().any(|e| e.accepts(t))),
                    "{kind:?} {status}: F1 counts the stray"
                );
            }
        }
    }
}

#[test]
fn a_failed_attempt_corrected_in_a_later_turn_is_a_retry() {
    // The retry rule: a call to an expected tool that did not run, followed in a later turn by a call
    // to the same tool that matched. Invented and unreadable names are no retry (they name no tool).
    let e = [exp("m/x/send", json!({"to": ["ana"]}))];
    let mut fixed = ok("m/x/send", json!({"to": "ana"}));
    fixed.record.step = 2;
    for (status, stray) in strays() {
        let retryable = stray.record.tool_id.as_deref() == Some("m/x/send")
            && stray.record.status != CallStatus::Invented;
        let s =
            score_trial(Kind::Single, &e, &[stray.clone(), fixed.clone()], StopReason::Answered);
        assert_eq!(
            s.pass, retryable,
            "{status} {:?} then the right call a turn later: {}",
            stray.record.tool_id, s.error_detail
        );
        if !retryable {
            assert_eq!(s.error_type, Some(ErrorType::ExtraCall), "{status}");
        }
    }
    // A read-only lookup that ran is no extra call, before or after.
    let lookup = call(CallStatus::Executed, Some("m/x/list"), json!({}), true);
    assert!(score_trial(Kind::Single, &e, &[fixed.clone(), lookup], StopReason::Answered).pass);
}

#[test]
fn selection_f1_counts_invented_and_unreadable_calls_as_predictions() {
    let e = [exp("m/x/send", json!({}))];
    for stray in [
        call(CallStatus::Invented, None, json!({}), false),
        call(CallStatus::Malformed, None, Value::Null, false),
    ] {
        let s = score_trial(
            Kind::Single,
            &e,
            &[stray, ok("m/x/send", json!({}))],
            StopReason::Answered,
        );
        // precision 1/2, recall 1: F1 2/3
        assert!((s.selection_f1.unwrap() - 2.0 / 3.0).abs() < 1e-12, "{:?}", s.selection_f1);
        assert!(!s.selection_correct, "the first pick was not the expected tool");
    }
    // Two different invented names are two wrong predictions: precision 1/3.
    let mut other = call(CallStatus::Invented, None, json!({}), false);
    other.record.name = "another_made_up".into();
    let s = score_trial(
        Kind::Single,
        &e,
        &[call(CallStatus::Invented, None, json!({}), false), other, ok("m/x/send", json!({}))],
        StopReason::Answered,
    );
    assert!((s.selection_f1.unwrap() - 0.5).abs() < 1e-12, "{:?}", s.selection_f1);
}
