//! BFCL v4 (Berkeley Function Calling Leaderboard) single-turn files: `BFCL_v4_<category>.json`
//! question lines plus `possible_answer/BFCL_v4_<category>.json` ground truth.
//!
//! - Each category file becomes a server `bfcl_<category>`; each record's functions become tools there
//!   (deduplicated by name and schema) and the record's **candidate set**, so a task sees only its own
//!   functions, as in BFCL.
//! - BFCL's schema dialect is converted to JSON Schema: `dict`→`object`, `float`→`number`,
//!   `tuple`→`array`, `any`→no type; the non-standard `optional` key is dropped; an optional parameter
//!   whose `default` is `null` admits null (`[type, "null"]`), since BFCL's checker passes it there.
//! - Dotted names are mapped reversibly: `.` → `__` (`math.factorial` → `math__factorial`); the original
//!   name is kept as the tool's title.
//! - A record's turn becomes the task's query (its last user message) and `history` (every message
//!   before it, verbatim: the leading `system` prompt of many live records, earlier user/assistant
//!   messages), sent ahead of the query as BFCL sends them ([`crate::agent::opening_messages`]).
//! - Ground truth is already our convention (lists of acceptable values, `""` = may be omitted).
//!   Repairs: a `""` on a parameter the function requires is dropped (the upstream checker requires it
//!   anyway), a ground-truth parameter the function doc does not define is dropped (upstream, a model
//!   cannot pass it either), and a `null` acceptable value of a parameter whose type does not admit null
//!   is dropped (upstream takes it for "a variable"; a schema validator rejects it). Skips: multi-turn
//!   records. Nested-dict acceptable values (BFCL's per-key lists) are expanded into the literal dicts they
//!   accept (repaired; more than 256 combinations is a skip). `live_relevance` becomes `relevant`
//!   tasks (pass = called some tool).
//! - `irrelevance` / `live_irrelevance` become `abstain` tasks.
//! - Every answer line is accounted for: an answer whose id has no question record (e.g. its question
//!   file is empty, or the question line is unreadable) is reported as an orphaned answer; a duplicate
//!   answer id is reported and the first answer is used.
//!
//! This file reads the files and builds the catalog and the tasks; BFCL's schema dialect is converted
//! in [`schema`] and its ground truth in [`ground_truth`].

mod ground_truth;
mod schema;

use super::read::Reader;
use super::{At, Imported, Ledger, fields, finish, task};
use crate::catalog::{Catalog, Category, Origin, Server, Tool};
use crate::dataset::{Dataset, HistoryMessage, Kind, Role};
use crate::error::InputError;
use anyhow::Result;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use ground_truth::expected_calls;
use schema::{convert_schema, map_name};

struct Registry {
    /// server → (tool name → (schema key, tool)).
    tools: BTreeMap<String, BTreeMap<String, (String, Tool)>>,
}

impl Registry {
    /// Register function `original` under `server`; returns its tool id (a repair note if renamed).
    fn add(
        &mut self,
        server: &str,
        original: &str,
        description: &str,
        params: &Value,
        repairs: &mut Vec<String>,
    ) -> String {
        let schema = convert_schema(params, repairs);
        let key = schema.to_string() + description;
        let category = format!("{server}_functions");
        let tools = self.tools.entry(server.to_string()).or_default();
        let base = map_name(original);
        let mut name = base.clone();
        let mut n = 2;
        loop {
            match tools.get(&name) {
                Some((k, t)) if *k == key => return t.id.clone(),
                Some(_) => {
                    name = format!("{base}_v{n}");
                    n += 1;
                }
                None => break,
            }
        }
        if name != base {
            repairs.push(format!("`{original}` reused with another schema: renamed to `{name}`"));
        }
        let id = format!("{server}/{category}/{name}");
        let tool = Tool {
            id: id.clone(),
            name: name.clone(),
            title: Some(original.to_string()),
            description: description.to_string(),
            input_schema: schema,
            output_schema: None,
            annotations: Default::default(),
            mock_response: json!({"ok": true}),
            mock_mode: crate::catalog::MockMode::Static,
            origin: Origin::default(),
            dispatch: None,
        };
        tools.insert(name, (key, tool));
        id
    }
}

/// One answer line: where it is, its ground truth (or why it cannot be used), whether a question used it.
struct Answer {
    at: At,
    ground_truth: Result<Value, String>,
    used: bool,
}

/// The answers of one category file by id; duplicate and unreadable answer lines are reported.
fn read_answers(path: &Path, name: &str, ledger: &mut Ledger) -> BTreeMap<String, Answer> {
    let mut answers: BTreeMap<String, Answer> = BTreeMap::new();
    for raw in (Reader { name, tasks: false }).jsonl(path, ledger) {
        let id = match fields::as_object(&raw.value, "")
            .and_then(|_| fields::req_str(&raw.value, "", "id"))
        {
            Ok(id) => id.to_string(),
            Err(reason) => {
                ledger.note(&raw.at, "", "skipped", format!("answer line unusable: {reason}"));
                continue;
            }
        };
        if let Some(first) = answers.get(&id) {
            ledger.note(
                &raw.at,
                &id,
                "skipped",
                format!("duplicate answer id; the one at {} is used", first.at.describe()),
            );
            continue;
        }
        let ground_truth = fields::req_array(&raw.value, "", "ground_truth", "an array of calls")
            .map(|a| Value::Array(a.clone()));
        answers.insert(id, Answer { at: raw.at, ground_truth, used: false });
    }
    answers
}

/// Answer files (`possible_answer/BFCL_*.json`) whose question file is missing: the question file gets
/// a `skipped` row counting its records by the answers, and each answer is reported as orphaned.
fn missing_questions(dir: &Path, questions: &[PathBuf], ledger: &mut Ledger) {
    let Ok(entries) = std::fs::read_dir(dir.join("possible_answer")) else { return };
    let mut lonely: Vec<String> = entries
        .filter_map(|e| e.ok().and_then(|e| e.file_name().to_str().map(String::from)))
        .filter(|n| {
            n.starts_with("BFCL_")
                && n.ends_with(".json")
                && !questions.iter().any(|q| q.file_name().is_some_and(|f| f == n.as_str()))
        })
        .collect();
    lonely.sort();
    for name in lonely {
        let answers_name = format!("possible_answer/{name}");
        let answers = read_answers(&dir.join("possible_answer").join(&name), &answers_name, ledger);
        let reason = format!(
            "the question file is missing, but {answers_name} has {} answers: their {} records are not imported",
            answers.len(),
            answers.len()
        );
        ledger.file_row(
            At { file: name.clone(), record: None, line: None },
            "skipped",
            Some(answers.len()),
            reason,
        );
        for (id, a) in &answers {
            ledger.note(
                &a.at,
                id,
                "skipped",
                format!("orphaned answer: {name} is missing, so no question has id `{id}`"),
            );
        }
    }
}

/// Import a BFCL directory (or a single `BFCL_v4_*.json` question file).
pub fn import(path: &Path) -> Result<Imported> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut f: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| InputError::new(path, format!("cannot read directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("BFCL_") && n.ends_with(".json"))
            })
            .collect();
        f.sort();
        f
    } else if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        return Err(InputError::new(path, "no such file or directory; give the BFCL data directory (with BFCL_v4_*.json and possible_answer/)").into());
    };
    if files.is_empty() {
        return Err(InputError::new(path, "no BFCL_v4_*.json question files here").into());
    }
    let mut registry = Registry { tools: BTreeMap::new() };
    let mut tasks = Vec::new();
    let mut ledger = Ledger::default();
    for file in &files {
        let name = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let category = stem.split('_').skip(2).collect::<Vec<_>>().join("_");
        let server = format!("bfcl_{category}");
        let has_truth = !(category.contains("irrelevance") || category == "live_relevance");
        let answers_path =
            file.parent().unwrap_or(Path::new(".")).join("possible_answer").join(&name);
        let answers_name = format!("possible_answer/{name}");
        let mut answers = if answers_path.exists() {
            read_answers(&answers_path, &answers_name, &mut ledger)
        } else {
            BTreeMap::new()
        };
        let rows_before = ledger.rows();
        let raws = (Reader { name: &name, tasks: true }).jsonl(file, &mut ledger);
        // A question file whose records could not be counted has as many as its answers.
        for d in ledger.defects[rows_before..].iter_mut().filter(|d| {
            d.file == name && d.record.is_none() && d.action == "skipped" && d.affected.is_none()
        }) {
            if !answers.is_empty() {
                d.affected = Some(answers.len());
                d.reason = format!(
                    "{}; counted by its answers in {answers_name}: {} records",
                    d.reason,
                    answers.len()
                );
            }
        }
        for raw in raws {
            let written = match fields::as_object(&raw.value, "")
                .and_then(|_| fields::req_str(&raw.value, "", "id"))
            {
                Ok(id) if !id.trim().is_empty() => id.to_string(),
                Ok(_) => {
                    ledger.skip(&raw.at, "", "`id` is empty");
                    continue;
                }
                Err(reason) => {
                    ledger.skip(&raw.at, "", reason);
                    continue;
                }
            };
            let id = ledger.claim_id(&raw.at, &written);
            if raw.lossy {
                ledger.mark_repaired(&id);
            }
            let mut repairs = Vec::new();
            let answer = has_truth.then(|| match answers.get_mut(&written) {
                Some(a) => {
                    a.used = true;
                    a.ground_truth
                        .clone()
                        .map_err(|r| format!("its answer ({}) is unusable: {r}", a.at.describe()))
                }
                None if answers_path.exists() => Err(format!(
                    "no ground truth: {answers_name} has no answer with id `{written}`"
                )),
                None => Err(format!("no ground truth: {answers_name} does not exist")),
            });
            match record_task(&raw.value, &server, &category, answer, &mut registry, &mut repairs) {
                Ok(mut t) => {
                    for r in repairs {
                        ledger.repair(&raw.at, &id, r);
                    }
                    t.id = id;
                    t.line = raw.at.line.unwrap_or_default();
                    tasks.push(t);
                }
                Err(reason) => ledger.skip(&raw.at, &id, reason),
            }
        }
        for (id, a) in answers.iter().filter(|(_, a)| !a.used) {
            let reason = if has_truth {
                format!("orphaned answer: {name} has no question with id `{id}`")
            } else {
                format!("`{category}` records have no ground truth; answer not used")
            };
            ledger.note(&a.at, id, "skipped", reason);
        }
    }
    let servers = registry
        .tools
        .into_iter()
        .map(|(server, tools)| Server {
            // BFCL has no servers; the description lists what the server offers.
            description: format!(
                "BFCL v4 `{}` functions: {}.",
                server.trim_start_matches("bfcl_"),
                tools
                    .values()
                    .filter_map(|(_, t)| t.title.clone())
                    .take(40)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            title: None,
            categories: vec![Category {
                name: format!("{server}_functions"),
                description: format!(
                    "Functions of BFCL's `{}` category.",
                    server.trim_start_matches("bfcl_")
                ),
                tools: tools.into_values().map(|(_, t)| t).collect(),
            }],
            name: server,
        })
        .collect();
    if path.is_dir() {
        missing_questions(path, &files, &mut ledger);
    }
    let catalog = Catalog::new("bfcl", "BFCL v4 functions, one server per category file", servers);
    let dataset = Dataset { name: "bfcl".into(), path: path.to_path_buf(), tasks };
    Ok(finish(catalog, dataset, ledger))
}

/// One question record as a task (its id set by the caller), or why it is skipped. `answer` is `None`
/// for categories without ground truth.
fn record_task(
    rec: &Value,
    server: &str,
    category: &str,
    answer: Option<Result<Value, String>>,
    registry: &mut Registry,
    repairs: &mut Vec<String>,
) -> Result<crate::dataset::Task, String> {
    let turns = fields::req_array(rec, "", "question", "an array of turns")?;
    if turns.len() != 1 {
        return Err(format!("{} turns; only single-turn records are imported", turns.len()));
    }
    let (query, history) = turn_messages(&turns[0], repairs)?;
    let functions = fields::objects(
        fields::req_array(rec, "", "function", "an array of objects")?,
        "function",
    )?;
    let mut names: HashMap<String, String> = HashMap::new();
    let mut candidates = Vec::new();
    let no_params = json!({"type": "dict", "properties": {}});
    for (i, f) in functions.iter().enumerate() {
        let path = format!("function[{i}]");
        let original = fields::req_str(f, &path, "name")?;
        let description = match fields::opt_str(f, &path, "description")? {
            Some(d) => d,
            None => {
                repairs.push(format!("`{path}.description` is missing: empty description"));
                ""
            }
        };
        let params = match fields::opt_object(f, &path, "parameters")? {
            Some(_) => &f["parameters"],
            None => {
                repairs.push(format!("`{path}.parameters` is missing: no parameters"));
                &no_params
            }
        };
        let tool_id = registry.add(server, original, description, params, repairs);
        names.insert(original.to_string(), tool_id.clone());
        candidates.push(tool_id);
    }
    let (kind, expected) = match answer {
        None if category == "live_relevance" => (Kind::Relevant, vec![]), // passes when the model calls something
        None => (Kind::Abstain, vec![]),
        Some(gt) => {
            let calls = expected_calls(&gt?, &names, registry, server, repairs)?;
            (if calls.len() > 1 { Kind::Parallel } else { Kind::Single }, calls)
        }
    };
    let mut t = task(String::new(), query, kind, expected, category.to_string(), 0);
    t.history = history;
    t.candidates = candidates;
    t.tags = vec![format!("bfcl:{category}")];
    Ok(t)
}

/// A turn's messages as the task's query (the last user message) and its history (every message before
/// it, verbatim and in order: BFCL's leading `system` prompt, earlier user and assistant messages), which
/// the episode sends as BFCL does. What a history cannot carry is dropped with a repair note: a message
/// after the last user message, a role other than system/user/assistant, an empty message.
fn turn_messages(
    turn: &Value,
    repairs: &mut Vec<String>,
) -> Result<(String, Vec<HistoryMessage>), String> {
    let messages = fields::objects(
        fields::as_array(turn, "question[0]", "an array of messages")?,
        "question[0]",
    )?;
    let mut said = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let path = format!("question[0][{i}]");
        said.push((fields::req_str(m, &path, "role")?, fields::req_str(m, &path, "content")?));
    }
    let Some(last_user) = said.iter().rposition(|(role, _)| *role == "user") else {
        return Err("no user message".into());
    };
    let mut history = Vec::with_capacity(last_user);
    for (i, (role, content)) in said[..last_user].iter().enumerate() {
        let role = match *role {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                repairs.push(format!("`question[0][{i}]` has role `{other}`, which a task's history cannot carry: dropped"));
                continue;
            }
        };
        if content.trim().is_empty() {
            repairs.push(format!("`question[0][{i}]` ({}) is empty: dropped", role.as_str()));
            continue;
        }
        history.push(HistoryMessage { role, content: content.to_string() });
    }
    for (i, (role, _)) in said.iter().enumerate().skip(last_user + 1) {
        repairs.push(format!("`question[0][{i}]` ({role}) comes after the last user message, which is the query: dropped"));
    }
    Ok((said[last_user].1.to_string(), history))
}
