//! A benchmark's own system prompt reaches the model: BFCL records whose turn starts with `system`
//! messages are run through the real binary against a local endpoint started here, which records every
//! request body; each request, in every layout and on every turn, must open with the record's messages
//! verbatim (and a record without one with toolpick's own prompt). The other ways a task leaves toolpick
//! — an `mcp-agent` process, a served session's `instructions` — carry it too.

mod common;
use common::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const LAYOUTS: [&str; 4] = ["flat", "progressive", "progressive-oss", "search"];

/// BFCL's single-turn records as (id, messages before the query, query), read from the raw files with
/// serde_json alone.
fn bfcl_records() -> Vec<(String, Vec<Value>, String)> {
    let dir = shared("bfcl");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("BFCL_"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines().filter(|l| !l.trim().is_empty())
        {
            let record: Value = serde_json::from_str(line).unwrap();
            let turns = record["question"].as_array().unwrap();
            if turns.len() != 1 {
                continue;
            }
            let messages: Vec<Value> = turns[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| json!({"role": m["role"], "content": m["content"]}))
                .collect();
            let last_user = messages.iter().rposition(|m| m["role"] == "user").unwrap();
            out.push((
                record["id"].as_str().unwrap().to_string(),
                messages[..last_user].to_vec(),
                messages[last_user]["content"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// The records with a system prompt, and every 37th record without one (the control group).
fn chosen() -> Vec<(String, Vec<Value>, String)> {
    let records = bfcl_records();
    let with: Vec<_> = records
        .iter()
        .filter(|(_, lead, _)| lead.iter().any(|m| m["role"] == "system"))
        .cloned()
        .collect();
    assert!(!with.is_empty(), "the BFCL slice has records with a system prompt");
    let without: Vec<_> = records
        .iter()
        .filter(|(_, lead, _)| lead.is_empty())
        .step_by(37)
        .take(with.len())
        .cloned()
        .collect();
    with.into_iter().chain(without).collect()
}

/// What a conversation must open with for a record: its own leading messages, or toolpick's prompt.
fn opening(lead: &[Value], query: &str) -> Vec<Value> {
    let mut want = if lead.iter().any(|m| m["role"] == "system") {
        vec![]
    } else {
        vec![json!({"role": "system", "content": toolpick::agent::SYSTEM_PROMPT})]
    };
    want.extend(lead.iter().cloned());
    want.push(json!({"role": "user", "content": query}));
    want
}

/// Check that `messages` (a request's or a transcript's) open as the record with their query must; returns
/// whether that record has a system prompt of its own.
fn check_opening(
    messages: &[Value],
    records: &HashMap<String, (Vec<Value>, String)>,
    what: &str,
) -> bool {
    let query = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("{what}: no user message"));
    let matching: Vec<&(Vec<Value>, String)> =
        records.values().filter(|(_, q)| q == query).collect();
    assert!(!matching.is_empty(), "{what}: a query of no chosen record: {query:?}");
    let fits = |(lead, q): &&&(Vec<Value>, String)| {
        let want = opening(lead, q);
        let got: Vec<Value> = messages
            .iter()
            .take(want.len())
            .map(|m| json!({"role": m["role"], "content": m["content"]}))
            .collect();
        got == want
    };
    let found = matching.iter().find(fits).unwrap_or_else(|| {
        panic!(
            "{what}: does not open with its record's messages: {:?}",
            &messages[..messages.len().min(3)]
        )
    });
    // Exactly one system message, first: the benchmark's prompt replaces toolpick's, never joins it.
    assert_eq!(
        messages.iter().filter(|m| m["role"] == "system").count(),
        found.0.iter().filter(|m| m["role"] == "system").count().max(1),
        "{what}"
    );
    assert_eq!(messages[0]["role"], "system", "{what}");
    found.0.iter().any(|m| m["role"] == "system")
}

/// A chat-completions endpoint that keeps every request body. It calls the first function offered (with
/// `{}`) until a tool result has come back, then answers in text: every episode makes two requests.
struct Capture {
    _rt: tokio::runtime::Runtime,
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

fn reply(body: &Value) -> Value {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let answered = messages.last().is_some_and(|m| m["role"] == "tool");
    let first = body["tools"]
        .as_array()
        .and_then(|t| t.first())
        .and_then(|t| t["function"]["name"].as_str());
    let (message, finish) = match first {
        Some(name) if !answered => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}]}),
            "tool_calls",
        ),
        _ => (json!({"role": "assistant", "content": "Done."}), "stop"),
    };
    json!({"id": "chatcmpl-capture", "object": "chat.completion", "created": 0, "model": body["model"],
           "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
}

fn capture() -> Capture {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let kept = bodies.clone();
    let url = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
                let kept = kept.clone();
                async move {
                    let answer = reply(&body);
                    kept.lock().unwrap().push(body);
                    axum::Json(answer)
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/v1")
    });
    Capture { _rt: rt, url, bodies }
}

#[test]
fn bfcl_system_prompts_reach_the_wire_first_in_every_layout_and_on_every_turn() {
    let chosen = chosen();
    let records: HashMap<String, (Vec<Value>, String)> =
        chosen.iter().map(|(id, lead, q)| (id.clone(), (lead.clone(), q.clone()))).collect();
    let ids: Vec<&str> = chosen.iter().map(|(id, _, _)| id.as_str()).collect();
    let endpoint = capture();
    let tmp = tempfile::tempdir().unwrap();
    let spec = format!("bfcl:{}", shared("bfcl").display());
    let o = toolpick(
        &argv_with(
            "run --dataset {} --tasks {} --variants good --layouts {} --backends openai \
             --model capture --base-url {} --no-preflight --no-cache --out {} --run-id sys -q",
            &[
                &spec,
                &ids.join(","),
                &LAYOUTS.join(","),
                &endpoint.url,
                tmp.path().to_str().unwrap(),
            ],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bodies = endpoint.bodies.lock().unwrap().clone();
    // Two requests per episode: the opening one and the one after the call's result.
    assert_eq!(bodies.len(), ids.len() * LAYOUTS.len() * 2, "requests made");
    let mut own = 0;
    for (i, body) in bodies.iter().enumerate() {
        let messages = body["messages"].as_array().unwrap();
        if check_opening(messages, &records, &format!("request {i}")) {
            own += 1;
        }
    }
    let with_system = chosen.iter().filter(|(_, lead, _)| !lead.is_empty()).count();
    assert_eq!(
        own,
        with_system * LAYOUTS.len() * 2,
        "every request of a record with a system prompt opened with it"
    );
    // The transcripts show what was sent.
    let trials = trials_with_transcripts(&tmp.path().join("sys"));
    assert_eq!(trials.len(), ids.len() * LAYOUTS.len());
    for t in &trials {
        let id = t["task_id"].as_str().unwrap();
        let transcript = t["transcript"].as_array().unwrap();
        let (lead, query) = &records[id];
        let want = opening(lead, query);
        assert_eq!(&transcript[..want.len()], want.as_slice(), "{}", t["trial_id"]);
        assert_eq!(
            t["query"].as_str(),
            Some(query.as_str()),
            "the record's query is its last user message"
        );
    }
}

#[test]
fn an_mcp_agent_is_handed_the_opening_messages_and_the_query_in_every_layout() {
    let chosen = chosen();
    let records: HashMap<String, (Vec<Value>, String)> =
        chosen.iter().map(|(id, lead, q)| (id.clone(), (lead.clone(), q.clone()))).collect();
    let ids: Vec<&str> = chosen.iter().map(|(id, _, _)| id.as_str()).collect();
    let tmp = tempfile::tempdir().unwrap();
    let seen = tmp.path().join("seen");
    std::fs::create_dir(&seen).unwrap();
    // An agent that only writes down what it was given, then answers without a call.
    let agent = tmp.path().join("agent.sh");
    std::fs::write(&agent, "#!/bin/sh\nf=$(mktemp \"$SEEN_DIR/episode.XXXXXX\")\nprintf '%s' \"$TOOLPICK_MESSAGES\" > \"$f.messages\"\ncat > \"$f.stdin\"\necho 'Nothing to do.'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = format!("bfcl:{}", shared("bfcl").display());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args([
            "run",
            "--dataset",
            &spec,
            "--tasks",
            &ids.join(","),
            "--variants",
            "good",
            "--layouts",
            &LAYOUTS.join(","),
            "--backends",
            &format!("mcp-agent:{}", agent.display()),
            "--out",
            tmp.path().to_str().unwrap(),
            "--run-id",
            "agent",
            "-q",
        ])
        .env("SEEN_DIR", &seen)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut episodes = 0;
    let mut own = 0;
    for entry in std::fs::read_dir(&seen).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("messages") {
            continue;
        }
        episodes += 1;
        let messages: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if check_opening(&messages, &records, &path.display().to_string()) {
            own += 1;
        }
        // Standard input is still the query alone.
        let stdin = std::fs::read_to_string(path.with_extension("stdin")).unwrap();
        assert_eq!(
            Some(stdin.as_str()),
            messages.last().and_then(|m| m["content"].as_str()),
            "{}",
            path.display()
        );
    }
    assert_eq!(episodes, ids.len() * LAYOUTS.len());
    assert_eq!(own, chosen.iter().filter(|(_, lead, _)| !lead.is_empty()).count() * LAYOUTS.len());
}

#[test]
fn a_served_task_sessions_instructions_carry_its_system_prompt_then_its_query() {
    use toolpick::run::serving::presentation::Presentation;
    use toolpick::run::serving::sessions::ServedSpec;
    for (id, lead, query) in chosen() {
        for layout in [toolpick::layout::LayoutKind::Flat, toolpick::layout::LayoutKind::Search] {
            let spec = ServedSpec {
                catalog: "unused".into(),
                dataset: format!("bfcl:{}", shared("bfcl").display()).into(),
                variant: "good".into(),
                layout,
                distractors: None,
                seed: 0,
            };
            let served =
                Presentation::new(spec.config(vec![], Default::default()), Some(&id), None)
                    .unwrap();
            let text = served.task_instructions().unwrap();
            match lead.first() {
                None => assert_eq!(
                    text, query,
                    "{id}: without a history the instructions are the query"
                ),
                Some(system) => {
                    assert!(
                        text.starts_with(system["content"].as_str().unwrap()),
                        "{id}: the system prompt comes first, verbatim: {text:?}"
                    );
                    assert!(
                        text.ends_with(&query) && text.len() > query.len(),
                        "{id}: then the query: {text:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_bad_history_stops_validate_and_run_with_exit_2_naming_file_line_and_field_and_writes_nothing()
{
    let tmp = tempfile::tempdir().unwrap();
    write_small_catalog(&tmp.path().join("cat"));
    let good = r#"{"id": "ok", "query": "What is the weather in Oslo?", "kind": "abstain", "history": [{"role": "system", "content": "Be brief."}]}"#;
    for (history, field) in [
        (r#""Be brief.""#, "history"),
        (r#"[{"role": "tool", "content": "{}"}]"#, "history[0].role"),
        (
            r#"[{"role": "system", "content": "ok"}, {"role": "user", "content": 3}]"#,
            "history[1].content",
        ),
        (r#"[{"role": "system", "content": "ok", "tool_calls": []}]"#, "history[0].tool_calls"),
    ] {
        let bad =
            format!(r#"{{"id": "bad", "query": "q", "kind": "abstain", "history": {history}}}"#);
        std::fs::write(tmp.path().join("ds.jsonl"), format!("{good}\n{bad}\n")).unwrap();
        let want = format!("ds.jsonl:2: field `{field}`");
        let o = toolpick(&["validate", "--catalog", "cat", "--dataset", "ds.jsonl"], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{history}: {}", stderr(&o));
        assert!(stderr(&o).contains(&want), "{history}: wanted {want:?} in {}", stderr(&o));
        let o = toolpick(
            &argv("run --catalog cat --dataset ds.jsonl --backends oracle --out out --run-id r -q"),
            tmp.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{history}: {}", stderr(&o));
        assert!(stderr(&o).contains(&want), "{history}: {}", stderr(&o));
        assert!(!tmp.path().join("out/r").exists(), "{history}: nothing written");
    }
    std::fs::write(tmp.path().join("ds.jsonl"), format!("{good}\n")).unwrap();
    let o = toolpick(&["validate", "--catalog", "cat", "--dataset", "ds.jsonl"], tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
}
