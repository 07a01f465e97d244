//! Task sessions: one `toolpick mcp serve` holding a session per task, recorded in a sessions file,
//! and `toolpick mcp collect` turning that file into a normal run directory.
//!
//! Serving ([`SessionPool`]): every MCP session that connects is bound to one task of the served
//! dataset — the `?task=<id>` of its HTTP URL, else `--task`, else the next task in dataset order that
//! no session has played — and is served that task's view, with its query as the `instructions`.
//! Every call is appended to the sessions file as it is answered (one JSON line, flushed), so a server
//! that is killed loses nothing it answered.
//!
//! Collecting ([`collect`]) replays each task's session through the same presentation, one call per
//! step, in a normal run: trials, scores and reports are those of any backend, labelled with the
//! client's `clientInfo` name and version (or `--agent-name`). Simulated execution is deterministic, so
//! the replay reproduces what the client saw; each result is checked against the recorded one, and a
//! session that diverges (the catalog or dataset changed since) is that trial's infrastructure error.
//!
//! The sessions file: a header line `{"toolpick_sessions": 1, "catalog", "dataset", "variant",
//! "layout", "distractors", "seed"}`, then per session `{"session": N, "task", "client"}` and per call
//! `{"session": N, "name", "arguments" (JSON text), "result", "is_error"}`.

use super::serve::Presentation;
use super::{Prepared, RunConfig};
use crate::agent::{Backend, BoxFuture, TurnContext};
use crate::error::InputError;
use crate::layout::LayoutKind;
use crate::mcp::serve::{Answer, Served};
use crate::protocol::{AssistantTurn, FunctionDef, ToolCall};
use anyhow::{Result, anyhow};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub const FORMAT: u64 = 1;

/// What a served presentation is made of: enough to build it again when collecting.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedSpec {
    pub catalog: PathBuf,
    pub dataset: PathBuf,
    pub variant: String,
    pub layout: LayoutKind,
    pub distractors: Option<usize>,
    pub seed: u64,
}

impl ServedSpec {
    /// The one-cell run that presents this (`oracle` stands in as its backend until one is set).
    pub fn config(&self, execute: Vec<String>, live: super::live::LiveOptions) -> RunConfig {
        RunConfig {
            catalogs: vec![self.catalog.clone()],
            datasets: vec![self.dataset.clone()],
            variants: vec![self.variant.clone()],
            layouts: vec![self.layout],
            models: vec![super::config::ModelSpec::baseline("oracle")],
            trials: 1,
            seed: self.seed,
            max_steps: 1,
            repeat_limit: crate::agent::DEFAULT_REPEAT_LIMIT,
            discovery: Default::default(),
            lexical: Default::default(),
            cache_dir: None,
            distractors: self.distractors.into_iter().collect(),
            subset: Default::default(),
            execute,
            live,
        }
    }

    fn header(&self) -> Value {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string();
        json!({
            "toolpick_sessions": FORMAT,
            "catalog": abs(&self.catalog),
            "dataset": abs(&self.dataset),
            "variant": self.variant,
            "layout": self.layout.as_str(),
            "distractors": self.distractors,
            "seed": self.seed,
        })
    }
}

/// The sessions file being written (shared by every session of a server).
struct SessionLog {
    file: Mutex<std::fs::File>,
}

impl SessionLog {
    fn line(&self, value: &Value) {
        let mut line = serde_json::to_vec(value).unwrap_or_default();
        line.push(b'\n');
        // One write per line, so lines of sessions answered at once never interleave.
        let _ = self.file.lock().expect("sessions file").write_all(&line);
    }
}

/// Serves each connecting session its own task (see the module docs).
pub struct SessionPool {
    prepared: Arc<Prepared>,
    task: Option<String>,
    log: Arc<SessionLog>,
    /// Sessions opened so far, and the tasks they were given.
    opened: Mutex<Vec<usize>>,
}

impl SessionPool {
    /// Start the sessions file at `path` (replacing it) for the presentation `spec` built into `prepared`.
    pub fn new(prepared: Prepared, spec: &ServedSpec, task: Option<String>, path: &Path) -> Result<SessionPool> {
        if let Some(id) = &task {
            prepared.task_index(id)?;
        }
        let file = std::fs::File::create(path).map_err(|e| InputError::new(path, format!("cannot create the sessions file: {e}")))?;
        let log = Arc::new(SessionLog { file: Mutex::new(file) });
        log.line(&spec.header());
        Ok(SessionPool { prepared: Arc::new(prepared), task, log, opened: Mutex::new(vec![]) })
    }

    /// Sessions opened so far.
    pub fn sessions(&self) -> usize {
        self.opened.lock().expect("sessions").len()
    }

    fn open(&self, asked: Option<&str>, client: &str) -> Result<Arc<dyn Served>, String> {
        let tasks = &self.prepared.suites[0].dataset.tasks;
        let mut opened = self.opened.lock().expect("sessions");
        let t = match asked.or(self.task.as_deref()) {
            Some(id) => self.prepared.task_index(id).map_err(|e| format!("{e:#}"))?,
            None => (0..tasks.len())
                .find(|t| !opened.contains(t))
                .ok_or_else(|| format!("every one of the {} tasks has had a session; connect with ?task=<id> on the URL to play one again", tasks.len()))?,
        };
        opened.push(t);
        let session = opened.len();
        let presentation = Presentation::of(self.prepared.clone(), Some(t), None).map_err(|e| format!("{e:#}"))?;
        self.log.line(&json!({"session": session, "task": tasks[t].id, "client": client}));
        let _ = writeln!(std::io::stderr(), "toolpick mcp serve: session {session} ({client}) plays task {}", tasks[t].id);
        Ok(Arc::new(LoggedSession { presentation, log: self.log.clone(), session }))
    }
}

impl Served for SessionPool {
    fn functions(&self) -> crate::mcp::serve::BoxFuture<Vec<FunctionDef>> {
        Box::pin(std::future::ready(vec![]))
    }
    fn call(&self, _name: String, _arguments: String) -> crate::mcp::serve::BoxFuture<Answer> {
        Box::pin(std::future::ready(Answer { text: "no task session: initialize first".into(), is_error: true }))
    }
    fn session(&self, task: Option<&str>, client: &str) -> Result<Option<Arc<dyn Served>>, String> {
        self.open(task, client).map(Some)
    }
}

/// One task's session: its presentation, with every answered call logged.
struct LoggedSession {
    presentation: Presentation,
    log: Arc<SessionLog>,
    session: usize,
}

impl Served for LoggedSession {
    fn functions(&self) -> crate::mcp::serve::BoxFuture<Vec<FunctionDef>> {
        Box::pin(std::future::ready(self.presentation.offered()))
    }
    fn call(&self, name: String, arguments: String) -> crate::mcp::serve::BoxFuture<Answer> {
        let answer = self.presentation.answer(name.clone(), arguments.clone());
        self.log.line(&json!({"session": self.session, "name": name, "arguments": arguments, "result": answer.text, "is_error": answer.is_error}));
        Box::pin(std::future::ready(answer))
    }
    fn instructions(&self) -> Option<String> {
        self.presentation.task_instructions()
    }
    fn annotations(&self, function: &str) -> Option<Value> {
        self.presentation.annotations(function)
    }
}

/// One recorded call and what the client was answered.
#[derive(Debug, Clone, PartialEq)]
struct SessionCall {
    name: String,
    arguments: String,
    result: String,
}

/// A sessions file, read back.
#[derive(Debug)]
pub struct Sessions {
    pub spec: ServedSpec,
    /// Per session (in order): task id, client label, calls.
    sessions: BTreeMap<u64, (String, String, Vec<SessionCall>)>,
}

impl Sessions {
    /// Read and check a sessions file; an error names its line and field.
    pub fn load(path: &Path) -> Result<Sessions, InputError> {
        let text = std::fs::read_to_string(path).map_err(|e| InputError::new(path, format!("cannot read the sessions file: {e}")))?;
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let err = |ln: usize, field: &str, msg: String| InputError::new(path, msg).at_line(ln + 1).field(field.to_string());
        let (ln, first) = lines.next().ok_or_else(|| InputError::new(path, "empty: not a sessions file of `toolpick mcp serve --sessions`"))?;
        let header: Value = serde_json::from_str(first).map_err(|e| err(ln, "toolpick_sessions", format!("not a JSON line: {e}")))?;
        if header.get("toolpick_sessions").and_then(Value::as_u64) != Some(FORMAT) {
            return Err(err(ln, "toolpick_sessions", format!("not a sessions file of this toolpick (format {FORMAT}); it starts with {first:.80}")));
        }
        let s = |field: &str| header.get(field).and_then(Value::as_str).map(String::from).ok_or_else(|| err(ln, field, format!("missing `{field}`")));
        let layout = s("layout")?;
        let spec = ServedSpec {
            catalog: s("catalog")?.into(),
            dataset: s("dataset")?.into(),
            variant: s("variant")?,
            layout: LayoutKind::parse(&layout).ok_or_else(|| err(ln, "layout", format!("unknown layout `{layout}`")))?,
            distractors: header.get("distractors").and_then(Value::as_u64).map(|d| d as usize),
            seed: header.get("seed").and_then(Value::as_u64).ok_or_else(|| err(ln, "seed", "missing `seed`".into()))?,
        };
        let mut sessions: BTreeMap<u64, (String, String, Vec<SessionCall>)> = BTreeMap::new();
        for (ln, line) in lines {
            let v: Value = serde_json::from_str(line).map_err(|e| err(ln, "session", format!("not a JSON line: {e}")))?;
            let n = v.get("session").and_then(Value::as_u64).ok_or_else(|| err(ln, "session", "missing the session number".into()))?;
            let text = |field: &str| v.get(field).and_then(Value::as_str).map(String::from).ok_or_else(|| err(ln, field, format!("missing `{field}` (a string)")));
            if v.get("task").is_some() {
                if sessions.contains_key(&n) {
                    return Err(err(ln, "session", format!("session {n} starts twice")));
                }
                sessions.insert(n, (text("task")?, text("client")?, vec![]));
            } else {
                let call = SessionCall { name: text("name")?, arguments: text("arguments")?, result: text("result")? };
                sessions.get_mut(&n).ok_or_else(|| err(ln, "session", format!("a call of session {n}, which has not started")))?.2.push(call);
            }
        }
        Ok(Sessions { spec, sessions })
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// Plays each task's recorded session back, one call per step, checking every result against the
/// recorded one.
struct SessionReplay {
    name: String,
    calls: HashMap<String, Vec<SessionCall>>,
}

impl Backend for SessionReplay {
    fn name(&self) -> &str {
        &self.name
    }
    fn respond<'a>(&'a self, ctx: &'a TurnContext<'a>) -> BoxFuture<'a, Result<AssistantTurn>> {
        let turn = ctx.turn();
        let calls = self.calls.get(&ctx.task.id).map(Vec::as_slice).unwrap_or_default();
        let outcome = (|| {
            if turn > 0
                && let Some(recorded) = calls.get(turn - 1)
            {
                let replayed = ctx.last_results().last().map(|(_, _, r)| r.to_string()).unwrap_or_default();
                if replayed != recorded.result {
                    return Err(anyhow!(
                        "the replayed session diverged at call {turn} (`{}`): the client was answered {:.120}, the replay answers {:.120}; did the catalog or dataset change since it was served?",
                        recorded.name,
                        recorded.result,
                        replayed
                    ));
                }
            }
            Ok(match calls.get(turn) {
                Some(c) => AssistantTurn { tool_calls: vec![ToolCall { id: format!("mcp_{turn}"), name: c.name.clone(), arguments: c.arguments.clone() }], ..Default::default() },
                // The session ended: an MCP client reports no final answer.
                None => AssistantTurn::default(),
            })
        })();
        Box::pin(std::future::ready(outcome))
    }
}

/// How to collect a sessions file.
pub struct CollectOptions {
    pub out: PathBuf,
    pub run_id: Option<String>,
    /// The backend label; default: the sessions' client (`clientInfo` name and version).
    pub agent_name: Option<String>,
    /// The sessions file: copied into the run directory as `sessions.jsonl`, so the run can be
    /// collected again.
    pub source: PathBuf,
}

/// Turn recorded sessions into a run: the latest session of each task is its trial.
pub async fn collect(sessions: Sessions, options: CollectOptions) -> Result<super::RunOutcome> {
    let mut latest: BTreeMap<String, (u64, String, Vec<SessionCall>)> = BTreeMap::new();
    for (n, (task, client, calls)) in sessions.sessions {
        latest.insert(task, (n, client, calls));
    }
    if latest.is_empty() {
        return Err(InputError::new(&options.source, "no session in this file: no client connected, nothing to collect").into());
    }
    let label = match &options.agent_name {
        Some(name) => name.clone(),
        None => {
            let mut clients: Vec<&str> = latest.values().map(|(_, c, _)| c.as_str()).collect();
            clients.sort();
            clients.dedup();
            match clients.as_slice() {
                // `/` and `#` delimit trial ids; a client's own name may not split them.
                [one] if !one.is_empty() => one.chars().map(|c| if c == '/' || c == '#' || c.is_control() { '_' } else { c }).collect(),
                [_] => "mcp-client".to_string(),
                many => {
                    return Err(InputError::new(&options.source, format!("sessions of {} clients ({}): one run has one backend label; pass --agent-name to label them as one", many.len(), many.join(", "))).into());
                }
            }
        }
    };
    let mut config = sessions.spec.config(vec![], Default::default());
    config.subset.tasks = latest.keys().cloned().collect();
    config.max_steps = latest.values().map(|(_, _, c)| c.len() + 1).max().unwrap_or(1);
    config.repeat_limit = 0;
    let mut model = super::config::ModelSpec::baseline("mcp-client");
    model.name = label.clone();
    config.models = vec![model];
    let mut prepared = super::prepare(config)?;
    let calls = latest.into_iter().map(|(task, (_, _, calls))| (task, calls)).collect();
    prepared.set_backend(0, Arc::new(SessionReplay { name: label, calls }));
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let run_id = options.run_id.unwrap_or_else(|| format!("mcp-sessions-{}", super::utc_stamp(unix)));
    let meta = json!({
        "toolpick_version": env!("CARGO_PKG_VERSION"),
        "started_unix": unix,
        "started_utc": super::utc_stamp(unix),
        "run_id": run_id,
        "tokenizer": "o200k_base",
        "served": {"sessions": "sessions.jsonl"},
    });
    let dir = options.out.join(&run_id);
    let outcome = super::execute(prepared, &dir, meta, super::ExecOptions { quiet: true, ..Default::default() }).await?;
    let copy = outcome.dir.join("sessions.jsonl");
    if std::fs::canonicalize(&options.source).ok() != std::fs::canonicalize(&copy).ok() {
        let bytes = std::fs::read(&options.source).map_err(|e| InputError::new(&options.source, format!("cannot read the sessions file: {e}")))?;
        crate::files::write_atomic(&copy, &bytes)?;
    }
    Ok(outcome)
}
