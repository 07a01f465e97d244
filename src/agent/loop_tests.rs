//! The episode loop's bookkeeping, with a scripted backend and a layout that counts executions:
//! duplicates within a message, repeated turns, messages cut off by the token limit or filtered, turns
//! the server could not parse.

use super::*;
use crate::layout::{CallOutcome, CallStatus, LayoutKind};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Answers turn `i` with `turns[i]`, then a plain answer.
struct Script(Vec<AssistantTurn>);

impl Policy for Script {
    fn name(&self) -> &str {
        "script"
    }
    fn decide(&self, ctx: &TurnContext<'_>) -> anyhow::Result<AssistantTurn> {
        Ok(self.0.get(ctx.turn()).cloned().unwrap_or_else(|| AssistantTurn {
            content: Some("Done.".into()),
            ..Default::default()
        }))
    }
}

/// Says the same calls every turn.
struct Forever(Vec<ToolCall>);

impl Policy for Forever {
    fn name(&self) -> &str {
        "forever"
    }
    fn decide(&self, _ctx: &TurnContext<'_>) -> anyhow::Result<AssistantTurn> {
        Ok(AssistantTurn { tool_calls: self.0.clone(), ..Default::default() })
    }
}

/// Every name is a tool; a call whose arguments parse is executed (counted) and answered with its
/// execution number, like the real layouts, which read the arguments before anything runs.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Layout for Counting {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Flat
    }
    fn functions(&self) -> &[FunctionDef] {
        &[]
    }
    fn call(&self, call: &ToolCall, step: usize) -> CallOutcome {
        let mut record = crate::layout::record(step, &call.name, CallStatus::Malformed, None);
        record.tool_id = Some(format!("s/c/{}", call.name));
        match crate::layout::parse_arguments(&call.arguments) {
            Ok(args) => {
                let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
                record.status = CallStatus::Executed;
                record.arguments = Some(serde_json::Value::Object(args));
                CallOutcome { content: format!("{{\"run\": {n}}}"), record }
            }
            Err(e) => CallOutcome { content: crate::layout::error_json(&e), record },
        }
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

fn run(backend: &dyn Backend, layout: &Counting, max_steps: usize, repeat_limit: usize) -> Episode {
    let task: Task =
        serde_json::from_value(serde_json::json!({"id": "t", "query": "q", "kind": "single"}))
            .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(run_episode(
        backend,
        layout,
        &task,
        &Addressing::new(),
        Limits { max_steps, repeat_limit },
        0,
        0,
    ))
}

fn results(e: &Episode) -> Vec<&str> {
    e.messages
        .iter()
        .filter_map(|m| {
            if let Message::Tool { content, .. } = m { Some(content.as_str()) } else { None }
        })
        .collect()
}

#[test]
fn identical_calls_in_one_message_run_once_and_are_recorded_as_duplicates() {
    // A(1,2) three times — once with the keys in another order and other spacing — and B once.
    let turn = AssistantTurn {
        tool_calls: vec![
            call("1", "a", r#"{"x": 1, "y": 2}"#),
            call("2", "a", r#"{"y":2,"x":1}"#),
            call("3", "b", r#"{"x": 1, "y": 2}"#),
            call("4", "a", r#" {"x": 1, "y": 2} "#),
            call("5", "a", r#"{"x": 1, "y": 3}"#),
        ],
        ..Default::default()
    };
    let layout = Counting::default();
    let e = run(&Script(vec![turn]), &layout, 8, DEFAULT_REPEAT_LIMIT);
    assert_eq!(
        layout.0.load(Ordering::SeqCst),
        3,
        "a(1,2), b(1,2), a(1,3) ran; the two copies of a(1,2) did not"
    );
    assert_eq!(e.calls.len(), 5, "every call is in the record");
    assert_eq!(
        e.calls.iter().map(|c| c.duplicate).collect::<Vec<_>>(),
        [false, true, false, true, false]
    );
    assert!(e.calls.iter().all(|c| c.status == CallStatus::Executed && c.step == 1));
    // Each copy is answered with the first one's result; every call id got an answer.
    assert_eq!(
        results(&e),
        [r#"{"run": 1}"#, r#"{"run": 1}"#, r#"{"run": 2}"#, r#"{"run": 1}"#, r#"{"run": 3}"#]
    );
    assert_eq!((e.stop_reason, e.steps), (StopReason::Answered, 2));
}

#[test]
fn the_same_calls_in_n_turns_in_a_row_stop_the_episode() {
    let same = Forever(vec![call("1", "a", r#"{"q": "x"}"#)]);
    let layout = Counting::default();
    let e = run(&same, &layout, 8, 3);
    assert_eq!((e.stop_reason, e.steps, e.calls.len()), (StopReason::RepeatedCall, 3, 3));
    assert_eq!(
        layout.0.load(Ordering::SeqCst),
        3,
        "the third call still ran; no fourth request was made"
    );
    let e = run(&same, &Counting::default(), 8, 2);
    assert_eq!((e.stop_reason, e.steps), (StopReason::RepeatedCall, 2));
    let e = run(&same, &Counting::default(), 8, 0);
    assert_eq!((e.stop_reason, e.steps), (StopReason::StepLimit, 8), "0 turns the check off");
    // The same calls with other spacing and without the copy are the same turn; other arguments are not.
    let turns = |args: [&str; 3]| {
        args.iter()
            .enumerate()
            .map(|(i, a)| AssistantTurn {
                tool_calls: vec![call("1", "a", a), call("2", "b", "{}"), call("3", "a", a)]
                    [..if i == 1 { 2 } else { 3 }]
                    .to_vec(),
                ..Default::default()
            })
            .collect::<Vec<_>>()
    };
    let e = run(
        &Script(turns([r#"{"q": 1}"#, r#"{ "q":1 }"#, r#"{"q": 1}"#])),
        &Counting::default(),
        8,
        3,
    );
    assert_eq!((e.stop_reason, e.steps), (StopReason::RepeatedCall, 3));
    let e = run(
        &Script(turns([r#"{"q": 1}"#, r#"{"q": 2}"#, r#"{"q": 1}"#])),
        &Counting::default(),
        8,
        3,
    );
    assert_eq!((e.stop_reason, e.steps), (StopReason::Answered, 4), "not in a row");
}

#[test]
fn a_call_cut_off_by_the_token_limit_is_recorded_truncated_and_never_runs() {
    // A complete call and a cut one in a cut-off message: the complete one runs, the episode goes on.
    let cut = AssistantTurn {
        tool_calls: vec![call("1", "a", r#"{"q": 1}"#), call("2", "b", r#"{"q": "Pu"#)],
        finish: Finish::Length,
        truncated_call_ids: vec!["2".into()],
        ..Default::default()
    };
    let layout = Counting::default();
    let e = run(&Script(vec![cut]), &layout, 8, 3);
    assert_eq!(layout.0.load(Ordering::SeqCst), 1);
    let b = &e.calls[1];
    assert!(b.truncated && b.status == CallStatus::Malformed && b.arguments.is_none());
    assert_eq!(b.tool_id.as_deref(), Some("s/c/b"), "the tool it addressed is kept, for selection");
    assert!(results(&e)[1].contains("cut off by the max_tokens limit"));
    assert_eq!((e.stop_reason, e.steps), (StopReason::Answered, 2));

    // Only a cut call — even one whose arguments had not started — nothing runs and the episode ends.
    for args in [r#"{"q": "Pu"#, ""] {
        let only = AssistantTurn {
            tool_calls: vec![call("1", "a", args)],
            finish: Finish::Length,
            truncated_call_ids: vec!["1".into()],
            ..Default::default()
        };
        let layout = Counting::default();
        let e = run(&Script(vec![only]), &layout, 8, 3);
        assert_eq!(layout.0.load(Ordering::SeqCst), 0, "{args:?}");
        assert_eq!((e.stop_reason, e.steps, e.calls.len()), (StopReason::Truncated, 1, 1));
        assert!(e.calls[0].truncated);
    }
    // Cut-off text without a call: the episode ends as truncated, not answered.
    let text = AssistantTurn {
        content: Some("Let me".into()),
        finish: Finish::Length,
        ..Default::default()
    };
    let e = run(&Script(vec![text]), &Counting::default(), 8, 3);
    assert_eq!((e.stop_reason, e.calls.len()), (StopReason::Truncated, 0));
}

#[test]
fn a_filtered_message_ends_the_episode_and_nothing_in_it_runs() {
    let filtered = AssistantTurn {
        tool_calls: vec![call("1", "a", "{}")],
        finish: Finish::ContentFilter,
        ..Default::default()
    };
    let layout = Counting::default();
    let e = run(&Script(vec![filtered]), &layout, 8, 3);
    assert_eq!(layout.0.load(Ordering::SeqCst), 0);
    assert_eq!((e.stop_reason, e.steps, e.calls.len()), (StopReason::ContentFilter, 1, 0));
}

#[test]
fn a_turn_the_server_could_not_parse_is_one_malformed_call_and_ends_the_episode() {
    let words = "llama.cpp `llama-server`, HTTP 500: Failed to parse tool call arguments as JSON";
    let unparsed = || AssistantTurn {
        unparsed: Some(words.into()),
        usage: crate::protocol::Usage { prompt_tokens: 7, ..Default::default() },
        ..Default::default()
    };
    // On the first turn, and after turns that ran calls: the earlier calls stay as they were.
    for before in 0..3 {
        let mut turns: Vec<AssistantTurn> = (0..before)
            .map(|i| AssistantTurn {
                tool_calls: vec![call(&i.to_string(), "a", &format!("{{\"q\": {i}}}"))],
                ..Default::default()
            })
            .collect();
        turns.push(unparsed());
        let layout = Counting::default();
        let e = run(&Script(turns), &layout, 8, 0);
        assert_eq!(
            (e.stop_reason, e.steps, e.calls.len()),
            (StopReason::Unparsed, before + 1, before + 1),
            "after {before} turns"
        );
        assert_eq!(layout.0.load(Ordering::SeqCst), before, "the earlier calls ran, nothing more");
        let last = e.calls.last().unwrap();
        assert_eq!(
            (last.status, last.step, last.tool_id.as_deref(), last.name.as_str()),
            (CallStatus::Malformed, before + 1, None, "")
        );
        assert_eq!(last.server_parse_error.as_deref(), Some(words));
        assert!(
            e.calls[..before]
                .iter()
                .all(|c| c.status == CallStatus::Executed && c.server_parse_error.is_none())
        );
        // The model's text never arrived: no message of that turn joins the conversation.
        let assistant =
            e.messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
        assert_eq!(assistant, before);
        assert_eq!(e.usage.prompt_tokens, 7, "the endpoint's usage of that turn is counted");
    }
}

#[test]
fn stop_reasons_keep_their_names_and_older_records_still_read() {
    for (r, s) in [
        (StopReason::Answered, "answered"),
        (StopReason::StepLimit, "step_limit"),
        (StopReason::BackendError, "backend_error"),
        (StopReason::Truncated, "truncated"),
        (StopReason::ContentFilter, "content_filter"),
        (StopReason::RepeatedCall, "repeated_call"),
        (StopReason::Unparsed, "unparsed"),
        (StopReason::ProviderLimit, "provider_limit"),
    ] {
        assert_eq!(serde_json::to_value(r).unwrap(), s);
        assert_eq!(serde_json::from_value::<StopReason>(s.into()).unwrap(), r);
    }
    // A call record written before `truncated` and `duplicate` existed.
    let old: CallRecord =
        serde_json::from_str(r#"{"step": 1, "name": "a", "status": "executed"}"#).unwrap();
    assert!(!old.truncated && !old.duplicate);
}

#[test]
fn finish_reasons_of_every_provider_are_read() {
    for r in ["length", "max_tokens", "MAX_TOKENS", "max_output_tokens"] {
        assert_eq!(Finish::from_wire(r), Finish::Length, "{r}");
    }
    for r in ["content_filter", "SAFETY", "RECITATION", "refusal"] {
        assert_eq!(Finish::from_wire(r), Finish::ContentFilter, "{r}");
    }
    for r in ["stop", "tool_calls", "end_turn", "STOP", "function_call", "eos"] {
        assert_eq!(Finish::from_wire(r), Finish::Complete, "{r}");
    }
}

#[test]
fn a_tasks_history_opens_the_episode_verbatim_and_its_assistant_messages_are_not_the_agents_turns()
{
    let say = |role: &str, content: &str| serde_json::json!({"role": role, "content": content});
    // Every mix of roles a history can hold, with and without a system message, in several positions.
    let histories = [
        vec![say("system", "\nDefault the date to 2024-01-01.  ")],
        vec![say("system", "A"), say("system", "B")],
        vec![say("user", "hi"), say("assistant", "hello, what do you need?")],
        vec![say("system", "S"), say("user", "earlier"), say("assistant", "noted")],
        vec![say("user", "u"), say("system", "late system"), say("assistant", "a")],
    ];
    for history in histories {
        let task: Task = serde_json::from_value(serde_json::json!({"id": "t", "query": "the query", "kind": "single", "history": history})).unwrap();
        let first = AssistantTurn { tool_calls: vec![call("1", "a", "{}")], ..Default::default() };
        let e = run_task(&Script(vec![first]), &task);
        let has_system = history.iter().any(|m| m["role"] == "system");
        let mut want: Vec<serde_json::Value> = Vec::new();
        if !has_system {
            want.push(serde_json::json!({"role": "system", "content": SYSTEM_PROMPT}));
        }
        want.extend(history.iter().cloned());
        want.push(say("user", "the query"));
        let got: Vec<serde_json::Value> =
            e.messages[..want.len()].iter().map(|m| serde_json::to_value(m).unwrap()).collect();
        assert_eq!(got, want, "{history:?}");
        // The script's first turn (a call) was played first: history assistant messages are not turns.
        assert_eq!(
            (e.calls.len(), e.steps, e.stop_reason),
            (1, 2, StopReason::Answered),
            "{history:?}"
        );
    }
}

fn run_task(backend: &dyn Backend, task: &Task) -> Episode {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(run_episode(
        backend,
        &Counting::default(),
        task,
        &Addressing::new(),
        Limits { max_steps: 8, repeat_limit: 3 },
        0,
        0,
    ))
}

#[test]
fn instructions_text_is_the_query_alone_without_history_and_carries_every_history_message_with_it()
{
    let task = |history: serde_json::Value| -> Task {
        serde_json::from_value(
            serde_json::json!({"id": "t", "query": "Q?", "kind": "abstain", "history": history}),
        )
        .unwrap()
    };
    assert_eq!(instructions_text(&task(serde_json::json!([]))), "Q?");
    assert_eq!(
        instructions_text(&task(serde_json::json!([{"role": "system", "content": " sys\n"}]))),
        " sys\n\n\nQ?"
    );
    assert_eq!(
        instructions_text(&task(
            serde_json::json!([{"role": "system", "content": "S"}, {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}])
        )),
        "S\n\nUser: u\n\nAssistant: a\n\nUser: Q?"
    );
}
