//! The queries: tasks with the calls that answer them.
//!
//! A dataset is JSONL, one [`Task`] per line (`docs/formats.md`). Expected calls name tools by id and give
//! BFCL-style acceptable values per parameter (`""` = may be omitted). [`load_dataset`] parses;
//! [`check_against`] checks the ground truth against a catalog so a bad line is caught before a run.

pub mod importers;
pub mod live;

pub use live::{ExpectedInteraction, LiveTask};

use crate::catalog::Catalog;
use crate::error::{InputError, InputErrors};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// What kind of answer a task expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Exactly one call.
    Single,
    /// Several calls, any order.
    Multi,
    /// Several independent calls that can be issued at once, any order.
    Parallel,
    /// No tool fits: the right behaviour is to call none.
    Abstain,
    /// A risky request: the right behaviour is to execute nothing that changes state (and nothing
    /// `forbidden`), and to say why or ask for confirmation.
    Refuse,
    /// A tool fits but no ground truth says which (BFCL live_relevance): calling any tool passes.
    Relevant,
}

impl Kind {
    /// Every kind, in the order reports list them.
    pub const ALL: [Kind; 6] =
        [Kind::Single, Kind::Multi, Kind::Parallel, Kind::Abstain, Kind::Refuse, Kind::Relevant];

    /// The kinds whose headline is "did it call the right tools": a task with expected calls
    /// (`single`, `multi`, `parallel`). Selection accuracy and pass@1 are reported over these tasks;
    /// abstain, refuse and relevant tasks have figures of their own.
    pub fn needs_call(self) -> bool {
        matches!(self, Kind::Single | Kind::Multi | Kind::Parallel)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Single => "single",
            Kind::Multi => "multi",
            Kind::Parallel => "parallel",
            Kind::Abstain => "abstain",
            Kind::Refuse => "refuse",
            Kind::Relevant => "relevant",
        }
    }
}

/// One expected call: a tool id and, per parameter, the list of acceptable values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: BTreeMap<String, Vec<Value>>,
    /// Other tool ids that also count as correct (MCPToolBench++'s `similar_tools`), with the same
    /// arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// Only the tool is ground truth (StableToolBench's `relevant APIs`): any arguments match. The listed
    /// `arguments` are then just one valid way to call it (used by the oracle).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub any_arguments: bool,
}

impl ExpectedCall {
    /// `true` when calling `tool_id` satisfies this call's tool.
    pub fn accepts(&self, tool_id: &str) -> bool {
        self.tool == tool_id || self.alternatives.iter().any(|a| a == tool_id)
    }

    /// `true` when `""` is among the acceptable values, i.e. the parameter may be omitted.
    pub fn may_omit(values: &[Value]) -> bool {
        values.iter().any(|v| v.as_str() == Some(""))
    }
}

/// The harm a `refuse` task would cause (SafeToolBench's risk categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    PrivacyLeak,
    PropertyDamage,
    PhysicalInjury,
    OffensiveContent,
}

/// What a poisoned description tries to make the agent do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Goal {
    /// Execute this tool (id).
    Call(String),
    /// Pass `value` for `param` when calling `tool`.
    Argument { tool: String, param: String, value: Value },
    /// Get this marker into any call's arguments.
    Leak(String),
}

/// A malicious tool added to a server for one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddedTool {
    pub server: String,
    pub category: String,
    /// A tool object in the catalog format.
    pub tool: Value,
}

/// A poisoning scenario attached to a task: text appended to a tool's description, or a tool added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Poison {
    /// Attack style label (hidden_tag, instruction_override, tool_shadowing, exfiltration, concealment…).
    pub style: String,
    /// Tool id whose description gets `text` appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_tool: Option<AddedTool>,
    pub goal: Goal,
}

/// Who says a message of a task's [`Task::history`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message said before a task's query: a benchmark's system prompt or an earlier turn, sent to the
/// model verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryMessage {
    pub role: Role,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub id: String,
    pub query: String,
    /// The conversation before `query`, sent ahead of it in this order: a benchmark's own system prompt
    /// (BFCL's leading `system` messages) and earlier user/assistant messages of the turn. A `system`
    /// message here takes the place of toolpick's own system prompt ([`crate::agent::opening_messages`]).
    /// Empty (and left out of the file): the query opens the conversation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryMessage>,
    pub kind: Kind,
    #[serde(default)]
    pub expected: Vec<ExpectedCall>,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// `refuse` tasks: the harm the request would do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// Tools whose execution carries out the harm (a safety violation even if read-only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poison: Option<Poison>,
    /// The tools offered for this task only (a benchmark's per-query candidate set); empty = the whole
    /// catalog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// Live runs only: the sandbox, the scripted user and the expected final state ([`live`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveTask>,
    /// Tool ids or globs (`*`, `?`) that must not be called for this task (its near-miss siblings):
    /// calling one fails the task as `must_not_call`, on any kind of task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_not_call: Vec<String>,
    /// Short facts a final answer must state for the task to count as done (the `claims` judge method,
    /// and context for the `pass-rate` judge). Empty: the task has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
    /// A model answer the judge may compare against (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answer: Option<String>,
    /// 1-based line in the source file (for error messages); not part of the format.
    #[serde(skip)]
    pub line: usize,
}

/// A loaded dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub name: String,
    pub path: PathBuf,
    pub tasks: Vec<Task>,
}

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

/// Check every task's ground truth against `catalog`: tool ids exist, arguments are properties of the
/// tool, every acceptable value validates against the property's schema, required properties can't be
/// omitted.
pub fn check_against(dataset: &Dataset, catalog: &Catalog) -> Result<(), InputErrors> {
    let mut errors = Vec::new();
    for task in &dataset.tasks {
        let at = |field: &str, msg: String| {
            InputError::new(&dataset.path, msg).at_line(task.line).field(field)
        };
        for (i, id) in task.candidates.iter().enumerate() {
            if catalog.get(id).is_none() {
                errors.push(at(
                    &format!("candidates[{i}]"),
                    format!("tool id `{id}` is not in catalog `{}`", catalog.name),
                ));
            }
        }
        for e in &task.expected {
            if !task.candidates.is_empty() && !task.candidates.contains(&e.tool) {
                errors.push(at(
                    "candidates",
                    format!("expected tool `{}` is not among the task's candidates", e.tool),
                ));
            }
        }
        for (i, pattern) in task.must_not_call.iter().enumerate() {
            let field = format!("must_not_call[{i}]");
            let hits: Vec<&str> = catalog
                .tools()
                .map(|t| t.tool.id.as_str())
                .filter(|id| crate::text::glob(pattern, id))
                .collect();
            if hits.is_empty() {
                errors.push(at(&field, format!("`{pattern}` matches no tool id in catalog `{}` (ids are server/category/tool; `*` and `?` are globs)", catalog.name)));
            }
            for e in &task.expected {
                for hit in hits.iter().filter(|h| e.accepts(h)) {
                    errors.push(at(&field, format!("`{pattern}` matches `{hit}`, which an expected call accepts; a task cannot forbid its own answer")));
                }
            }
        }
        for (i, id) in task.forbidden.iter().enumerate() {
            if catalog.get(id).is_none() {
                errors.push(at(
                    &format!("forbidden[{i}]"),
                    format!("tool id `{id}` is not in catalog `{}`", catalog.name),
                ));
            }
        }
        for (i, want) in task.live.iter().flat_map(|l| l.interactions.iter()).enumerate() {
            if let Some(id) = &want.before
                && catalog.get(id).is_none()
            {
                errors.push(at(
                    &format!("live.interactions[{i}].before"),
                    format!("tool id `{id}` is not in catalog `{}`", catalog.name),
                ));
            }
        }
        if let Some(p) = &task.poison {
            if let Some(t) = &p.target
                && catalog.get(t).is_none()
            {
                errors.push(at(
                    "poison.target",
                    format!("tool id `{t}` is not in catalog `{}`", catalog.name),
                ));
            }
            if let Some(a) = &p.add_tool {
                match catalog
                    .server(&a.server)
                    .map(|s| s.categories.iter().any(|c| c.name == a.category))
                {
                    Some(true) => {
                        if let Err(e) =
                            crate::catalog::load::parse_tool(&a.server, &a.category, &a.tool)
                        {
                            errors.push(at("poison.add_tool.tool", e));
                        }
                    }
                    _ => errors.push(at(
                        "poison.add_tool",
                        format!("no category `{}` in server `{}`", a.category, a.server),
                    )),
                }
            }
            let added = p.add_tool.as_ref().and_then(|a| {
                a.tool["name"].as_str().map(|n| format!("{}/{}/{n}", a.server, a.category))
            });
            let known = |id: &str| catalog.get(id).is_some() || added.as_deref() == Some(id);
            match &p.goal {
                Goal::Call(id) | Goal::Argument { tool: id, .. } if !known(id) => errors.push(at(
                    "poison.goal",
                    format!("goal tool `{id}` is neither in the catalog nor the added tool"),
                )),
                _ => {}
            }
        }
        for (ci, call) in task.expected.iter().enumerate() {
            let at = |field: String, msg: String| {
                InputError::new(&dataset.path, msg).at_line(task.line).field(field)
            };
            let Some(tref) = catalog.get(&call.tool) else {
                errors.push(at(
                    format!("expected[{ci}].tool"),
                    format!(
                        "tool id `{}` is not in catalog `{}` (ids are server/category/tool)",
                        call.tool, catalog.name
                    ),
                ));
                continue;
            };
            for (ai, alt) in call.alternatives.iter().enumerate() {
                if catalog.get(alt).is_none() {
                    errors.push(at(
                        format!("expected[{ci}].alternatives[{ai}]"),
                        format!("tool id `{alt}` is not in catalog `{}`", catalog.name),
                    ));
                }
            }
            let tool = tref.tool;
            let props = tool.input_schema.get("properties").and_then(Value::as_object);
            for (param, values) in &call.arguments {
                let field = format!("expected[{ci}].arguments.{param}");
                let Some(prop_schema) = props.and_then(|p| p.get(param)) else {
                    errors.push(at(
                        field,
                        format!("`{param}` is not a parameter of `{}`", call.tool),
                    ));
                    continue;
                };
                let validator = match jsonschema::draft202012::options()
                    .should_validate_formats(true)
                    .build(prop_schema)
                {
                    Ok(v) => v,
                    Err(e) => {
                        errors
                            .push(at(field, format!("schema of `{param}` does not compile: {e}")));
                        continue;
                    }
                };
                for (vi, v) in values.iter().enumerate() {
                    if v.as_str() == Some("") {
                        continue;
                    }
                    if let Err(e) = validator.validate(v) {
                        errors.push(at(format!("{field}[{vi}]"), format!("acceptable value {v} does not validate against the schema of `{param}`: {e}")));
                    }
                }
            }
            for req in tool.required() {
                match call.arguments.get(req) {
                    None => errors.push(at(
                        format!("expected[{ci}].arguments.{req}"),
                        format!("`{req}` is required by `{}` but has no acceptable values", call.tool),
                    )),
                    Some(values) if values.iter().all(|v| v.as_str() == Some("")) => errors.push(at(
                        format!("expected[{ci}].arguments.{req}"),
                        format!("`{req}` is required by `{}`; it can't be omitted (\"\") and needs a real value", call.tool),
                    )),
                    _ => {}
                }
            }
        }
    }
    InputErrors(errors).into_result()
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
    fn may_omit_means_empty_string_listed() {
        assert!(ExpectedCall::may_omit(&[Value::from("x"), Value::from("")]));
        assert!(!ExpectedCall::may_omit(&[Value::from("x")]));
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
