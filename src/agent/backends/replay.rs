//! The replay backend: plays back answers recorded elsewhere (another harness, a real model's log, a
//! generated mutation), so toolpick scores exactly the calls someone else's checker saw.
//!
//! `--backends replay:<FILE>`; FILE is JSONL, one line per task:
//! `{"id": "<task id>", "calls": [{"name": "<function>", "arguments": {…} | "<raw JSON text>"}], "content": "<text>"}`.
//!
//! - First turn: exactly the recorded calls. A string `arguments` is passed through verbatim, so
//!   malformed JSON reaches the layout and is recorded as a malformed call; `arguments` left out means `{}`.
//! - Next turn: `content` (or `Done.`) and no call. `calls: []`, and a task with no line at all, answer
//!   without a call on the first turn.
//! - Names: a function offered this turn is used as is; otherwise a catalog tool id, tool name or
//!   original name (the tool's title, e.g. BFCL's dotted `math.factorial`) of an offered tool is
//!   translated to the function that tool is offered under (with its dispatch value for a merged
//!   tool); anything else is sent unchanged and is an invented tool, as it should be.
//! - Flat layout only: the other layouts reveal tools through meta-tools, which recorded flat calls
//!   never went through (checked in [`crate::run::prepare`]).
//! - The whole file is checked before anything runs: a line that is not a JSON object of this shape, a
//!   duplicate id, or an id that matches no task is an error naming the file, line and field.

use super::answer;
use crate::agent::{Policy, TurnContext};
use crate::error::InputError;
use crate::protocol::{AssistantTurn, ToolCall};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One recorded call: the name as recorded and the argument text to send.
#[derive(Debug, Clone, PartialEq)]
struct RecordedCall {
    name: String,
    arguments: String,
}

#[derive(Debug, Clone, PartialEq)]
struct Recorded {
    calls: Vec<RecordedCall>,
    content: Option<String>,
}

/// A catalog tool the backend can resolve recorded names to: `(id, name, title)`.
pub type ToolNames<'a> = (&'a str, &'a str, Option<&'a str>);

pub struct ReplayBackend {
    name: String,
    answers: HashMap<String, Recorded>,
    /// Tool id, name or title → tool ids, in catalog order.
    aliases: HashMap<String, Vec<String>>,
    /// Stable hash of the file's bytes.
    digest: String,
}

const DONE: &str = "Done.";

fn parse_line(path: &Path, ln: usize, line: &str) -> Result<(String, Recorded), InputError> {
    let err =
        |field: &str, msg: String| InputError::new(path, msg).at_line(ln).field(field.to_string());
    let value: Value = serde_json::from_str(line)
        .map_err(|e| InputError::new(path, format!("not a JSON object: {e}")).at_line(ln))?;
    let Value::Object(obj) = value else {
        return Err(InputError::new(
            path,
            "a line must be a JSON object {\"id\", \"calls\", \"content\"}",
        )
        .at_line(ln));
    };
    if let Some(k) = obj.keys().find(|k| !["id", "calls", "content"].contains(&k.as_str())) {
        return Err(err(
            k,
            format!("unknown key `{k}`; a line has `id`, `calls` and optionally `content`"),
        ));
    }
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(other) => {
            return Err(err(
                "id",
                format!("must be a non-empty string (the task id), got {other}"),
            ));
        }
        None => return Err(err("id", "missing: the task id this answer is for".into())),
    };
    let content = match obj.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(err("content", format!("must be a string, got {other}"))),
    };
    let items = match obj.get("calls") {
        Some(Value::Array(a)) => a,
        Some(other) => return Err(err("calls", format!("must be an array of calls, got {other}"))),
        None => return Err(err("calls", "missing: use `[]` for an answer without a call".into())),
    };
    let mut calls = Vec::with_capacity(items.len());
    for (i, c) in items.iter().enumerate() {
        let at = |k: &str| format!("calls[{i}].{k}");
        let Value::Object(c) = c else {
            return Err(err(
                &format!("calls[{i}]"),
                "must be an object {\"name\", \"arguments\"}".into(),
            ));
        };
        if let Some(k) = c.keys().find(|k| !["name", "arguments"].contains(&k.as_str())) {
            return Err(err(
                &at(k),
                format!("unknown key `{k}`; a call has `name` and `arguments`"),
            ));
        }
        let name = match c.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(other) => {
                return Err(err(&at("name"), format!("must be a non-empty string, got {other}")));
            }
            None => return Err(err(&at("name"), "missing: the function called".into())),
        };
        let arguments = match c.get("arguments") {
            None => "{}".to_string(),
            Some(v @ Value::Object(_)) => v.to_string(),
            // Raw argument text, as a model produced it: sent verbatim, even when it is not valid JSON.
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(err(
                    &at("arguments"),
                    format!("must be a JSON object or a string of raw argument text, got {other}"),
                ));
            }
        };
        calls.push(RecordedCall { name, arguments });
    }
    Ok((id, Recorded { calls, content }))
}

impl ReplayBackend {
    /// Read and check a replay file against the tasks of the run and the catalog tools.
    pub fn load<'a>(
        path: &Path,
        label: &str,
        task_ids: &HashSet<&str>,
        tools: impl IntoIterator<Item = ToolNames<'a>>,
    ) -> Result<ReplayBackend, InputError> {
        let text = crate::error::read_text(path, "replay file")?;
        let mut answers = HashMap::new();
        let mut first_line: HashMap<String, usize> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let ln = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let (id, recorded) = parse_line(path, ln, line)?;
            if !task_ids.contains(id.as_str()) {
                return Err(InputError::new(path, format!("no task in the dataset has id `{id}`; check the dataset the answers were recorded on"))
                    .at_line(ln)
                    .field("id"));
            }
            if let Some(prev) = first_line.insert(id.clone(), ln) {
                return Err(InputError::new(
                    path,
                    format!(
                        "id `{id}` was already answered on line {prev}; keep one answer per task"
                    ),
                )
                .at_line(ln)
                .field("id"));
            }
            answers.insert(id, recorded);
        }
        let mut aliases: HashMap<String, Vec<String>> = HashMap::new();
        for (id, name, title) in tools {
            for alias in [Some(id), Some(name), title].into_iter().flatten() {
                let ids = aliases.entry(alias.to_string()).or_default();
                if !ids.iter().any(|x| x == id) {
                    ids.push(id.to_string());
                }
            }
        }
        let digest = format!("{:016x}", crate::layout::flat::stable_hash(text.as_bytes()));
        Ok(ReplayBackend { name: label.to_string(), answers, aliases, digest })
    }

    /// Stable hash of the replay file's bytes (part of the run's matrix).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The function to send for a recorded name, and the merged tool's dispatch value if it has one.
    fn resolve(&self, name: &str, ctx: &TurnContext<'_>) -> (String, Option<(String, String)>) {
        let offered = |f: &str| ctx.functions.iter().any(|d| d.name == f);
        if offered(name) {
            return (name.to_string(), None);
        }
        for id in self.aliases.get(name).into_iter().flatten() {
            if let Some(a) = ctx.addressing.get(id).filter(|a| offered(&a.function)) {
                return (a.function.clone(), a.dispatch.clone());
            }
        }
        (name.to_string(), None)
    }
}

/// Add a merged tool's dispatch parameter to argument text that is a JSON object (else leave it).
fn with_dispatch(arguments: &str, dispatch: Option<(String, String)>) -> String {
    let Some((param, value)) = dispatch else { return arguments.to_string() };
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(mut m)) => {
            m.insert(param, Value::String(value));
            Value::Object(m).to_string()
        }
        _ => arguments.to_string(),
    }
}

impl Policy for ReplayBackend {
    fn name(&self) -> &str {
        &self.name
    }

    fn decide(&self, ctx: &TurnContext<'_>) -> anyhow::Result<AssistantTurn> {
        let recorded = self.answers.get(&ctx.task.id);
        let content = recorded.and_then(|r| r.content.as_deref()).unwrap_or(DONE);
        let turn = ctx.turn();
        let calls = match recorded {
            Some(r) if turn == 0 && !r.calls.is_empty() => &r.calls,
            _ => return Ok(answer(content)),
        };
        let tool_calls = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (name, dispatch) = self.resolve(&c.name, ctx);
                ToolCall {
                    id: format!("call_{}_{i}", turn + 1),
                    name,
                    arguments: with_dispatch(&c.arguments, dispatch),
                }
            })
            .collect();
        Ok(AssistantTurn { tool_calls, ..Default::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Address, Addressing};
    use crate::dataset::{Kind, Task};
    use crate::layout::LayoutKind;
    use crate::protocol::{FunctionDef, Message};
    use serde_json::json;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("answers.jsonl");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    const TOOLS: [ToolNames<'static>; 2] = [
        ("s/c/math__factorial", "math__factorial", Some("math.factorial")),
        ("s/c/send_email", "send_email", None),
    ];

    fn load(text: &str) -> Result<ReplayBackend, InputError> {
        let (_dir, p) = write(text);
        let ids: HashSet<&str> = ["t1", "t2"].into_iter().collect();
        ReplayBackend::load(&p, "replay:answers", &ids, TOOLS)
    }

    fn task(id: &str) -> Task {
        crate::dataset::importers::task(id.into(), "q".into(), Kind::Single, vec![], "c".into(), 1)
    }

    fn function(name: &str) -> FunctionDef {
        FunctionDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }
    }

    fn address(function: &str, dispatch: Option<(&str, &str)>) -> Address {
        Address {
            function: function.into(),
            server: "s".into(),
            category: "c".into(),
            action: function.into(),
            dispatch: dispatch.map(|(p, v)| (p.into(), v.into())),
        }
    }

    /// The turn the backend plays for `task` after `messages`, offered `functions`.
    fn play(
        b: &ReplayBackend,
        task: &Task,
        messages: &[Message],
        functions: &[FunctionDef],
        addressing: &Addressing,
    ) -> AssistantTurn {
        let ctx = TurnContext {
            task,
            messages,
            functions,
            deferred: &[],
            groups: &[],
            layout: LayoutKind::Flat,
            addressing,
            seed: 0,
            trial: 0,
        };
        b.decide(&ctx).unwrap()
    }

    #[test]
    fn plays_the_calls_then_the_content() {
        let b = load("{\"id\": \"t1\", \"calls\": [{\"name\": \"send_email\", \"arguments\": {\"to\": \"a@x.com\", \"n\": 10.0}}, {\"name\": \"send_email\", \"arguments\": \"{\\\"to\\\": \"}], \"content\": \"Sent.\"}\n").unwrap();
        let t = task("t1");
        let first = play(&b, &t, &[], &[function("send_email")], &Addressing::new());
        let sent: Vec<(&str, &str)> =
            first.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        // A float stays a float, and raw text goes out verbatim (malformed on purpose).
        assert_eq!(
            sent,
            vec![("send_email", "{\"to\":\"a@x.com\",\"n\":10.0}"), ("send_email", "{\"to\": ")]
        );
        assert_eq!(first.tool_calls[0].id, "call_1_0");
        let after = [Message::Assistant { content: None, tool_calls: first.tool_calls.clone() }];
        let second = play(&b, &t, &after, &[function("send_email")], &Addressing::new());
        assert!(second.tool_calls.is_empty());
        assert_eq!(second.content.as_deref(), Some("Sent."));
    }

    #[test]
    fn no_line_and_empty_calls_answer_without_a_call() {
        let b = load("{\"id\": \"t1\", \"calls\": []}\n").unwrap();
        for id in ["t1", "t2"] {
            let turn = play(&b, &task(id), &[], &[function("send_email")], &Addressing::new());
            assert!(turn.tool_calls.is_empty(), "{id}");
            assert_eq!(turn.content.as_deref(), Some(DONE));
        }
    }

    #[test]
    fn names_resolve_to_the_offered_function() {
        let b = load(
            "{\"id\": \"t1\", \"calls\": [{\"name\": \"math.factorial\", \"arguments\": {\"n\": 5}}, {\"name\": \"s/c/send_email\"}, {\"name\": \"send_email\"}, {\"name\": \"math_factorial\"}]}\n",
        )
        .unwrap();
        // The flat layout offers the tools under other names (as when names collide across servers).
        let mut addressing = Addressing::new();
        addressing.insert("s/c/math__factorial".into(), address("fact_fn", None));
        addressing.insert("s/c/send_email".into(), address("mail_fn", Some(("action", "send"))));
        let offered = [function("fact_fn"), function("mail_fn"), function("send_email")];
        let turn = play(&b, &task("t1"), &[], &offered, &addressing);
        let sent: Vec<(&str, &str)> =
            turn.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(
            sent,
            vec![
                ("fact_fn", "{\"n\":5}"), // original (dotted) name → its function
                ("mail_fn", "{\"action\":\"send\"}"), // tool id → merged function with its dispatch value
                ("send_email", "{}"),                 // an offered function name wins
                ("math_factorial", "{}"),             // unknown: sent unchanged (an invented tool)
            ]
        );
        // A tool that is not offered this turn is not resolved to.
        let turn = play(&b, &task("t1"), &[], &[function("mail_fn")], &addressing);
        assert_eq!(turn.tool_calls[0].name, "math.factorial");
    }

    #[test]
    fn bad_lines_name_file_line_and_field() {
        let cases = [
            (
                "{\"id\": \"t1\", \"calls\": []}\n{\"id\": \"t1\", \"calls\": []}\n",
                2,
                Some("id"),
                "already answered on line 1",
            ),
            ("\n{\"id\": \"zz\", \"calls\": []}\n", 2, Some("id"), "no task"),
            ("{\"id\": \"t1\", \"calls\": [}\n", 1, None, "not a JSON object"),
            ("[1]\n", 1, None, "must be a JSON object"),
            ("{\"id\": 7, \"calls\": []}\n", 1, Some("id"), "non-empty string"),
            ("{\"id\": \"t1\"}\n", 1, Some("calls"), "missing"),
            (
                "{\"id\": \"t1\", \"calls\": [{\"name\": \"x\", \"arguments\": 3}]}\n",
                1,
                Some("calls[0].arguments"),
                "JSON object or a string",
            ),
            (
                "{\"id\": \"t1\", \"calls\": [{\"arguments\": {}}]}\n",
                1,
                Some("calls[0].name"),
                "missing",
            ),
            (
                "{\"id\": \"t1\", \"calls\": [{\"name\": \"x\", \"args\": {}}]}\n",
                1,
                Some("calls[0].args"),
                "unknown key",
            ),
            (
                "{\"id\": \"t1\", \"calls\": [], \"answer\": \"x\"}\n",
                1,
                Some("answer"),
                "unknown key",
            ),
            (
                "{\"id\": \"t1\", \"calls\": [], \"content\": 1}\n",
                1,
                Some("content"),
                "must be a string",
            ),
        ];
        for (text, line, field, message) in cases {
            let e = load(text).err().unwrap_or_else(|| panic!("accepted {text}"));
            assert_eq!((e.line, e.field.as_deref()), (Some(line), field), "{text}");
            assert!(e.message.contains(message), "{text}: {}", e.message);
            assert!(e.to_string().starts_with(&e.file.display().to_string()), "names the file");
        }
    }
}
