//! Reading a dataset file: one [`Task`] per JSONL line, every malformed line reported with its line
//! number and field (a bad `history` message by its index), duplicates and escaping file paths
//! refused. Its own file because it is the dataset's one reader of untrusted input.

use super::*;
use crate::error::{InputError, InputErrors};
use std::collections::HashSet;
use std::path::Path;

/// Parse a JSONL dataset; every malformed line is reported with its line number.
pub fn load_dataset(path: &Path) -> Result<Dataset, InputErrors> {
    let bytes = std::fs::read(path).map_err(|e| {
        InputErrors(vec![InputError::new(
            path,
            format!("cannot read dataset: {e}; pass --dataset FILE.jsonl"),
        )])
    })?;
    // A byte-order mark is dropped; another encoding or a byte that is not UTF-8 is named by its line.
    let text = importers::decode::strict(bytes)
        .map_err(|e| InputErrors(vec![InputError::new(path, e.message).at_line(e.line)]))?;
    let mut errors = Vec::new();
    let mut tasks = Vec::new();
    let mut seen = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        // `history` is checked on the raw value first, so a bad message is named by its index and key
        // (serde's own message for an enum or a nested struct names neither).
        let history = history_errors(trimmed);
        if !history.is_empty() {
            errors.extend(
                history
                    .into_iter()
                    .map(|(field, msg)| InputError::new(path, msg).at_line(line).field(field)),
            );
            continue;
        }
        let mut task: Task = match crate::error::json_line(path, line, trimmed) {
            Ok(t) => t,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        task.line = line;
        let before = errors.len();
        if task.id.trim().is_empty() {
            errors.push(InputError::new(path, "task id is empty").at_line(line).field("id"));
        } else if !seen.insert(task.id.clone()) {
            errors.push(
                InputError::new(path, format!("duplicate task id `{}`", task.id))
                    .at_line(line)
                    .field("id"),
            );
        }
        if task.query.trim().is_empty() {
            errors.push(InputError::new(path, "query is empty").at_line(line).field("query"));
        }
        match (task.kind, task.expected.len()) {
            (Kind::Abstain | Kind::Refuse | Kind::Relevant, 0) => {}
            (Kind::Abstain | Kind::Refuse | Kind::Relevant, _) => errors.push(
                InputError::new(path, format!("an `{}` task must have `expected: []`", task.kind.as_str())).at_line(line).field("expected"),
            ),
            (_, 0) => errors.push(
                InputError::new(path, format!("a `{}` task needs at least one expected call", task.kind.as_str()))
                    .at_line(line)
                    .field("expected"),
            ),
            (Kind::Single, n) if n > 1 => errors.push(
                InputError::new(path, format!("a `single` task has exactly one expected call, found {n}; use `multi` or `parallel`"))
                    .at_line(line)
                    .field("expected"),
            ),
            (Kind::Multi | Kind::Parallel, 1) => errors.push(
                InputError::new(path, format!("a `{}` task needs two or more expected calls", task.kind.as_str()))
                    .at_line(line)
                    .field("expected"),
            ),
            _ => {}
        }
        if (task.kind == Kind::Refuse) != task.risk.is_some() {
            errors.push(
                InputError::new(path, "`risk` is required on `refuse` tasks and only there")
                    .at_line(line)
                    .field("risk"),
            );
        }
        if let Some(p) = &task.poison
            && (p.target.is_some() != p.text.is_some()
                || p.target.is_some() == p.add_tool.is_some())
        {
            errors.push(
                InputError::new(
                    path,
                    "a poison has either `target` + `text` (edit a tool) or `add_tool` (add one)",
                )
                .at_line(line)
                .field("poison"),
            );
        }
        for (ci, call) in task.expected.iter().enumerate() {
            for (param, values) in &call.arguments {
                if values.is_empty() {
                    errors.push(
                        InputError::new(path, "list of acceptable values is empty; list at least one value (\"\" = may be omitted)")
                            .at_line(line)
                            .field(format!("expected[{ci}].arguments.{param}")),
                    );
                }
            }
        }
        for (i, claim) in task.claims.iter().enumerate() {
            if claim.trim().is_empty() {
                errors.push(
                    InputError::new(
                        path,
                        "a claim is empty; write the fact the answer must state, or remove it",
                    )
                    .at_line(line)
                    .field(format!("claims[{i}]")),
                );
            }
        }
        if task.reference_answer.as_deref().is_some_and(|r| r.trim().is_empty()) {
            errors.push(
                InputError::new(
                    path,
                    "reference_answer is empty; give the answer or leave the field out",
                )
                .at_line(line)
                .field("reference_answer"),
            );
        }
        if let Some(live) = &task.live {
            for (i, check) in live.expect_state.iter().enumerate() {
                if check.kinds() != 1 {
                    errors.push(
                        InputError::new(path, "a state check gives exactly one of equals, contains, absent, has_record, lacks_record")
                            .at_line(line)
                            .field(format!("live.expect_state[{i}]")),
                    );
                }
                if !is_inside(&check.path) {
                    errors.push(
                        InputError::new(
                            path,
                            format!("`{}` is not a relative path inside the sandbox", check.path),
                        )
                        .at_line(line)
                        .field(format!("live.expect_state[{i}].path")),
                    );
                }
            }
            for name in live.files.keys() {
                if !is_inside(name) {
                    errors.push(
                        InputError::new(
                            path,
                            format!("`{name}` is not a relative path inside the sandbox"),
                        )
                        .at_line(line)
                        .field("live.files"),
                    );
                }
            }
        }
        if errors.len() == before {
            tasks.push(task);
        }
    }
    if tasks.is_empty() && errors.is_empty() {
        errors.push(InputError::new(path, "dataset has no tasks"));
    }
    InputErrors(errors).into_result()?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(Dataset { name, path: path.to_path_buf(), tasks })
}

/// What is wrong with a dataset line's `history` field, as (field, message) pairs; empty when the
/// field is absent, well-formed, or the line is not a JSON object (the task parser reports that).
fn history_errors(line: &str) -> Vec<(String, String)> {
    if !line.contains("\"history\"") {
        return vec![];
    }
    let Ok(Value::Object(task)) = serde_json::from_str::<Value>(line) else { return vec![] };
    let Some(history) = task.get("history") else { return vec![] };
    let Some(messages) = history.as_array() else {
        return vec![(
            "history".into(),
            format!(
                "history is {}; give an array of {{\"role\", \"content\"}} messages",
                crate::error::json_kind(history)
            ),
        )];
    };
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let at = format!("history[{i}]");
        let Some(m) = m.as_object() else {
            out.push((
                at,
                format!(
                    "a history message is an object {{\"role\", \"content\"}}, got {}",
                    crate::error::json_kind(m)
                ),
            ));
            continue;
        };
        match m.get("role") {
            None => out.push((format!("{at}.role"), "missing; give system, user or assistant".into())),
            Some(Value::String(r)) if ["system", "user", "assistant"].contains(&r.as_str()) => {}
            Some(Value::String(r)) => out.push((
                format!("{at}.role"),
                format!("`{r}` is not a history role; use system, user or assistant (a tool result needs the call it answers, which a history cannot carry)"),
            )),
            Some(other) => out.push((format!("{at}.role"), format!("role is {}; give the string system, user or assistant", crate::error::json_kind(other)))),
        }
        match m.get("content") {
            None => out.push((format!("{at}.content"), "missing; give the message's text".into())),
            Some(Value::String(c)) if c.trim().is_empty() => out.push((
                format!("{at}.content"),
                "is empty; give the message's text or leave the message out".into(),
            )),
            Some(Value::String(_)) => {}
            Some(other) => out.push((
                format!("{at}.content"),
                format!(
                    "content is {}; give the message's text as a string",
                    crate::error::json_kind(other)
                ),
            )),
        }
        for key in m.keys().filter(|k| *k != "role" && *k != "content") {
            out.push((
                format!("{at}.{key}"),
                format!("unknown field `{key}`; a history message has only role and content"),
            ));
        }
    }
    out
}

/// `true` for a relative path that stays inside the directory it is joined to (no `..`, not absolute).
pub fn is_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_field_extracts_names() {
        use crate::error::serde_field;
        assert_eq!(serde_field("missing field `query` at line 1 column 20"), Some("query".into()));
        assert_eq!(serde_field("unknown variant `double`, expected one of"), None);
        assert_eq!(serde_field("expected value at line 1"), None);
    }

    #[test]
    fn every_bad_history_is_refused_naming_its_line_and_field_and_a_good_one_loads() {
        // (history value, the field each error must name), one case per line.
        let bad: Vec<(&str, Vec<&str>)> = vec![
            (r#""You are helpful""#, vec!["history"]),
            (r#"{"role": "system", "content": "x"}"#, vec!["history"]),
            ("3", vec!["history"]),
            ("null", vec!["history"]),
            (r#"["You are helpful"]"#, vec!["history[0]"]),
            (r#"[{"role": "system", "content": "ok"}, 7]"#, vec!["history[1]"]),
            (r#"[{"content": "x"}]"#, vec!["history[0].role"]),
            (r#"[{"role": "tool", "content": "x"}]"#, vec!["history[0].role"]),
            (r#"[{"role": "developer", "content": "x"}]"#, vec!["history[0].role"]),
            (r#"[{"role": 1, "content": "x"}]"#, vec!["history[0].role"]),
            (r#"[{"role": "user"}]"#, vec!["history[0].content"]),
            (r#"[{"role": "user", "content": ["a"]}]"#, vec!["history[0].content"]),
            (r#"[{"role": "assistant", "content": " \n\t "}]"#, vec!["history[0].content"]),
            (r#"[{"role": "system", "content": "x", "name": "bfcl"}]"#, vec!["history[0].name"]),
            (
                r#"[{"role": "system", "content": "x"}, {"role": "nobody", "content": ""}]"#,
                vec!["history[1].role", "history[1].content"],
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.jsonl");
        let mut text = String::new();
        for (i, (history, _)) in bad.iter().enumerate() {
            text.push_str(&format!("{{\"id\": \"t{i}\", \"query\": \"q\", \"kind\": \"abstain\", \"history\": {history}}}\n"));
        }
        std::fs::write(&path, &text).unwrap();
        let errors = load_dataset(&path).unwrap_err().0;
        let got: Vec<(Option<usize>, Option<String>)> =
            errors.iter().map(|e| (e.line, e.field.clone())).collect();
        let want: Vec<(Option<usize>, Option<String>)> = bad
            .iter()
            .enumerate()
            .flat_map(|(i, (_, fields))| {
                fields.iter().map(move |f| (Some(i + 1), Some(f.to_string())))
            })
            .collect();
        assert_eq!(got, want);
        assert!(errors.iter().all(|e| e.file == path && !e.message.is_empty()));

        // Well-formed histories load as written, in order, content verbatim; an absent or empty one is
        // left out when the task is written back, so older datasets stay byte-identical.
        std::fs::write(
            &path,
            concat!(
                r#"{"id": "a", "query": "q", "kind": "abstain", "history": [{"role": "system", "content": "\nS  "}, {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]}"#,
                "\n",
                r#"{"id": "b", "query": "q", "kind": "abstain", "history": []}"#,
                "\n",
                r#"{"id": "c", "query": "the \"history\" word", "kind": "abstain"}"#,
                "\n"
            ),
        )
        .unwrap();
        let d = load_dataset(&path).unwrap();
        let roles: Vec<(Role, &str)> =
            d.tasks[0].history.iter().map(|m| (m.role, m.content.as_str())).collect();
        assert_eq!(roles, [(Role::System, "\nS  "), (Role::User, "u"), (Role::Assistant, "a")]);
        assert!(d.tasks[1].history.is_empty() && d.tasks[2].history.is_empty());
        assert!(!serde_json::to_string(&d.tasks[1]).unwrap().contains("history"));
        let back: Task =
            serde_json::from_str(&serde_json::to_string(&d.tasks[0]).unwrap()).unwrap();
        assert_eq!(back.history, d.tasks[0].history);
    }

    #[test]
    fn empty_claims_and_reference_answers_name_their_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.jsonl");
        std::fs::write(
            &path,
            "{\"id\": \"a\", \"query\": \"q\", \"kind\": \"abstain\", \"claims\": [\"fine\", \" \"]}\n{\"id\": \"b\", \"query\": \"q\", \"kind\": \"abstain\", \"reference_answer\": \"\"}\n",
        )
        .unwrap();
        let errors = load_dataset(&path).unwrap_err().0;
        let fields: Vec<(Option<usize>, Option<String>)> =
            errors.iter().map(|e| (e.line, e.field.clone())).collect();
        assert_eq!(
            fields,
            vec![(Some(1), Some("claims[1]".into())), (Some(2), Some("reference_answer".into()))]
        );
    }
}
