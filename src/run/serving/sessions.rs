//! Task sessions: one `toolpick mcp serve` holding a session per task, recorded in a sessions file,
//! and `toolpick mcp collect` turning that file into a normal run directory.
//!
//! Serving ([`SessionPool`]): every MCP session that connects is bound to one task of the served
//! dataset — the `?task=<id>` of its HTTP URL, else `--task`, else the next task in dataset order that
//! no session has played — and is served that task's view, with its query as the `instructions`.
//! Every call is appended to the sessions file as it is answered (one JSON line, flushed), so a server
//! that is killed loses nothing it answered.
//!
//! The file is append-only and shared ([`crate::files::SharedLines`]): a server never truncates it, so a
//! restarted server keeps every earlier session, and several servers may write one file at once. Each
//! line is appended whole under an exclusive lock on the file; a session's number is taken under that
//! lock after reading what the others appended, so numbers stay unique and increasing across restarts
//! and servers, and "the next task" is the next one no session in the file has played. A file whose
//! header describes another presentation is refused (exit 2), never overwritten. Every line goes
//! through the same redactor as `trials.jsonl` ([`crate::redact::global`]).
//!
//! Collecting ([`collect`]) replays each task's session through the same presentation, one call per
//! step, in a normal run: trials, scores and reports are those of any backend, labelled with the
//! client's `clientInfo` name and version (or `--agent-name`). Simulated execution is deterministic, so
//! the replay reproduces what the client saw; each result is checked against the recorded one, and a
//! session that diverges (the catalog or dataset changed since) is that trial's infrastructure error.
//!
//! The sessions file: a header line `{"toolpick_sessions": 1, "catalog", "dataset", "variant",
//! "layout", "distractors", "seed"}`, then per session `{"session": N, "task", "client"}` and per call
//! `{"session": N, "name", "arguments" (JSON text), "result", "is_error"}`. Reading it back, a line that
//! is not JSON (the torn last line of a killed server, or a line damaged in the middle) is reported on
//! stderr with its file and line and skipped; a JSON line that is not a session's or a call's is an
//! error naming its line and field.

use super::presentation::Presentation;
use crate::agent::{Backend, BoxFuture, TurnContext};
use crate::error::InputError;
use crate::layout::LayoutKind;
use crate::mcp::serve::{Answer, Served};
use crate::protocol::{AssistantTurn, FunctionDef, ToolCall};
use crate::run::{Prepared, RunConfig};
use anyhow::{Result, anyhow};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
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
    pub fn config(&self, execute: Vec<String>, live: crate::run::live::LiveOptions) -> RunConfig {
        RunConfig {
            catalogs: vec![self.catalog.clone()],
            datasets: vec![self.dataset.clone()],
            variants: vec![self.variant.clone()],
            layouts: vec![self.layout],
            models: vec![crate::run::config::ModelSpec::baseline("oracle")],
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
        let abs = |p: &Path| {
            std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string()
        };
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

/// The sessions file being written (shared by every session of a server, and with other servers).
struct SessionLog {
    lines: crate::files::SharedLines,
    /// What this server has read of the file so far (appends of other servers come after it).
    seen: Mutex<Seen>,
}

/// The sessions a file holds up to `scanned` bytes.
#[derive(Default)]
struct Seen {
    scanned: u64,
    /// The highest session number in the file.
    highest: u64,
    /// Task ids that had a session.
    played: HashSet<String>,
}

impl Seen {
    /// Take in the whole lines of `bytes` (the file from `scanned` on); lines that are not JSON are
    /// `mcp collect`'s to report.
    fn read(&mut self, bytes: &[u8]) {
        for line in bytes.split_inclusive(|b| *b == b'\n').take_while(|l| l.ends_with(b"\n")) {
            self.scanned += line.len() as u64;
            let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
            if let Some(n) = v.get("session").and_then(Value::as_u64) {
                self.highest = self.highest.max(n);
                if let Some(task) = v.get("task").and_then(Value::as_str) {
                    self.played.insert(task.to_string());
                }
            }
        }
    }
}

/// A line as it goes to disk: redacted like every trial record.
fn redacted(value: &Value) -> Vec<u8> {
    let line = serde_json::to_vec(value).unwrap_or_default();
    crate::redact::global().redact_bytes(&line).into_owned()
}

impl SessionLog {
    /// Open the sessions file at `path` for `spec`: a new or empty file gets the header; a file that
    /// has one must be of the same presentation.
    fn open(path: &Path, spec: &ServedSpec) -> Result<SessionLog> {
        let lines = crate::files::SharedLines::open(path)
            .map_err(|e| InputError::new(path, format!("cannot open the sessions file: {e}")))?;
        // As written to disk (redacted), so a restart compares like with like.
        let header = redacted(&spec.header());
        let mut seen = Seen::default();
        lines.locked(|file| {
            if file.is_empty()? {
                file.append(&header)?;
                seen.scanned = file.len()?;
                return Ok(());
            }
            let bytes = file.read_from(0)?;
            let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
            check_header(path, first, &serde_json::from_slice(&header)?)?;
            seen.read(&bytes);
            Ok(())
        })?;
        Ok(SessionLog { lines, seen: Mutex::new(seen) })
    }

    /// Append a line; a failed write is said on stderr (the client still gets its answer).
    fn line(&self, value: &Value) {
        if let Err(e) = self.lines.append(&redacted(value)) {
            crate::messages::err_line(format_args!(
                "toolpick mcp serve: warning: {e:#}; this line is not recorded"
            ));
        }
    }

    /// Start a session: under the file's lock, catch up with what other servers appended, let `choose`
    /// pick the task (given the tasks that had a session), number the session after the highest one in
    /// the file and append its line. Returns the session number and the task.
    fn start(
        &self,
        client: &str,
        choose: impl FnOnce(&HashSet<String>) -> Result<(usize, String), String>,
    ) -> Result<(u64, usize), String> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        self.lines
            .locked(|file| {
                let more = file.read_from(seen.scanned)?;
                seen.read(&more);
                let (t, id) = choose(&seen.played).map_err(|e| anyhow!(e))?;
                let session = seen.highest + 1;
                file.append(&redacted(&json!({"session": session, "task": id, "client": client})))?;
                seen.highest = session;
                seen.played.insert(id);
                seen.scanned = file.len()?;
                Ok((session, t))
            })
            .map_err(|e| format!("{e:#}"))
    }
}

/// A sessions file's first line must be the header this server would write.
fn check_header(path: &Path, first: &[u8], want: &Value) -> Result<()> {
    let refuse =
        |field: &str, msg: String| InputError::new(path, msg).at_line(1).field(field.to_string());
    let have: Value = serde_json::from_slice(first)
        .ok()
        .filter(|v: &Value| v.get("toolpick_sessions").is_some())
        .ok_or_else(|| refuse("toolpick_sessions", "not a sessions file of `toolpick mcp serve --sessions`; it is kept as it is: give another file".into()))?;
    let fields = want.as_object().expect("the header is an object");
    if let Some((key, value)) =
        fields.iter().find(|(k, v)| have.get(k.as_str()).unwrap_or(&Value::Null) != *v)
    {
        return Err(refuse(
            key,
            format!(
                "holds the sessions of another presentation (`{key}` is {} there, {value} here); serve with the same settings to add to it, or give another file",
                have.get(key.as_str()).unwrap_or(&Value::Null)
            ),
        )
        .into());
    }
    Ok(())
}

/// Serves each connecting session its own task (see the module docs).
pub struct SessionPool {
    prepared: Arc<Prepared>,
    task: Option<String>,
    log: Arc<SessionLog>,
    /// Sessions this server opened.
    opened: Mutex<usize>,
}

impl SessionPool {
    /// Open the sessions file at `path` (appending to it; see the module docs) for the presentation
    /// `spec` built into `prepared`.
    pub fn new(
        prepared: Prepared,
        spec: &ServedSpec,
        task: Option<String>,
        path: &Path,
    ) -> Result<SessionPool> {
        if let Some(id) = &task {
            prepared.task_index(id)?;
        }
        let log = Arc::new(SessionLog::open(path, spec)?);
        Ok(SessionPool { prepared: Arc::new(prepared), task, log, opened: Mutex::new(0) })
    }

    /// Sessions this server opened.
    pub fn sessions(&self) -> usize {
        *self.opened.lock().expect("sessions")
    }

    fn open(&self, asked: Option<&str>, client: &str) -> Result<Arc<dyn Served>, String> {
        let tasks = &self.prepared.suites[0].dataset.tasks;
        let (session, t) = self.log.start(client, |played| {
            let t = match asked.or(self.task.as_deref()) {
                Some(id) => self.prepared.task_index(id).map_err(|e| format!("{e:#}"))?,
                None => (0..tasks.len()).find(|t| !played.contains(&tasks[*t].id)).ok_or_else(|| {
                    format!("every one of the {} tasks has had a session; connect with ?task=<id> on the URL to play one again", tasks.len())
                })?,
            };
            Ok((t, tasks[t].id.clone()))
        })?;
        *self.opened.lock().expect("sessions") += 1;
        let presentation =
            Presentation::of(self.prepared.clone(), Some(t), None).map_err(|e| format!("{e:#}"))?;
        crate::messages::err_line(format_args!(
            "toolpick mcp serve: session {session} ({client}) plays task {}",
            tasks[t].id
        ));
        Ok(Arc::new(LoggedSession { presentation, log: self.log.clone(), session }))
    }
}

impl Served for SessionPool {
    fn functions(&self) -> crate::mcp::serve::BoxFuture<Vec<FunctionDef>> {
        Box::pin(std::future::ready(vec![]))
    }
    fn call(&self, _name: String, _arguments: String) -> crate::mcp::serve::BoxFuture<Answer> {
        Box::pin(std::future::ready(Answer {
            text: "no task session: initialize first".into(),
            is_error: true,
            result: None,
        }))
    }
    fn stateless(&self) -> Result<Option<Arc<dyn Served>>, String> {
        Err("each session plays one task (chosen at `initialize`, logged per session)".into())
    }
    fn session(&self, task: Option<&str>, client: &str) -> Result<Option<Arc<dyn Served>>, String> {
        self.open(task, client).map(Some)
    }
}

/// One task's session: its presentation, with every answered call logged.
struct LoggedSession {
    presentation: Presentation,
    log: Arc<SessionLog>,
    session: u64,
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
    /// Lines skipped because they were not JSON (reported on stderr as they were read).
    pub skipped: usize,
}

impl Sessions {
    /// Read and check a sessions file; an error names its line and field. A line that is not JSON (torn
    /// by a killed server, or damaged) is reported on stderr with its file and line, and skipped.
    pub fn load(path: &Path) -> Result<Sessions, InputError> {
        let bytes = std::fs::read(path)
            .map_err(|e| InputError::new(path, format!("cannot read the sessions file: {e}")))?;
        let err = |ln: usize, field: &str, msg: String| {
            InputError::new(path, msg).at_line(ln + 1).field(field.to_string())
        };
        let segments: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        let mut lines = Vec::new();
        let mut skipped = 0usize;
        for (ln, segment) in segments.iter().enumerate() {
            if segment.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // The piece after the last newline: a line whose writer did not finish it.
            let unterminated = ln + 1 == segments.len();
            let parsed = std::str::from_utf8(segment)
                .map_err(|e| format!("not UTF-8 ({e})"))
                .and_then(|text| {
                    serde_json::from_str::<Value>(text)
                        .map(|v| (text, v))
                        .map_err(|e| format!("not a JSON line ({e})"))
                });
            match parsed {
                Ok((text, v)) => lines.push((ln, text, v)),
                // The header decides what the file is: without it nothing can be collected.
                Err(why) if lines.is_empty() => return Err(err(ln, "toolpick_sessions", why)),
                Err(why) => {
                    skipped += 1;
                    let what = if unterminated {
                        "the last line is incomplete (a server was killed while writing it)"
                    } else {
                        why.as_str()
                    };
                    crate::messages::warning(format_args!(
                        "{}:{}: {what}; the line is skipped",
                        path.display(),
                        ln + 1
                    ));
                }
            }
        }
        let mut lines = lines.into_iter();
        let (ln, first, header) = lines.next().ok_or_else(|| {
            InputError::new(path, "empty: not a sessions file of `toolpick mcp serve --sessions`")
        })?;
        if header.get("toolpick_sessions").and_then(Value::as_u64) != Some(FORMAT) {
            return Err(err(
                ln,
                "toolpick_sessions",
                format!(
                    "not a sessions file of this toolpick (format {FORMAT}); it starts with {first:.80}"
                ),
            ));
        }
        let s = |field: &str| {
            header
                .get(field)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| err(ln, field, format!("missing `{field}`")))
        };
        let layout = s("layout")?;
        let spec = ServedSpec {
            catalog: s("catalog")?.into(),
            dataset: s("dataset")?.into(),
            variant: s("variant")?,
            layout: LayoutKind::parse(&layout)
                .ok_or_else(|| err(ln, "layout", format!("unknown layout `{layout}`")))?,
            distractors: header.get("distractors").and_then(Value::as_u64).map(|d| d as usize),
            seed: header
                .get("seed")
                .and_then(Value::as_u64)
                .ok_or_else(|| err(ln, "seed", "missing `seed`".into()))?,
        };
        let mut sessions: BTreeMap<u64, (String, String, Vec<SessionCall>)> = BTreeMap::new();
        for (ln, _, v) in lines {
            let n = v
                .get("session")
                .and_then(Value::as_u64)
                .ok_or_else(|| err(ln, "session", "missing the session number".into()))?;
            let text = |field: &str| {
                v.get(field)
                    .and_then(Value::as_str)
                    .map(String::from)
                    .ok_or_else(|| err(ln, field, format!("missing `{field}` (a string)")))
            };
            if v.get("task").is_some() {
                if sessions.contains_key(&n) {
                    return Err(err(ln, "session", format!("session {n} starts twice")));
                }
                sessions.insert(n, (text("task")?, text("client")?, vec![]));
            } else {
                let call = SessionCall {
                    name: text("name")?,
                    arguments: text("arguments")?,
                    result: text("result")?,
                };
                sessions
                    .get_mut(&n)
                    .ok_or_else(|| {
                        err(ln, "session", format!("a call of session {n}, which has not started"))
                    })?
                    .2
                    .push(call);
            }
        }
        Ok(Sessions { spec, sessions, skipped })
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
                let replayed =
                    ctx.last_results().last().map(|(_, _, r)| r.to_string()).unwrap_or_default();
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
                Some(c) => AssistantTurn {
                    tool_calls: vec![ToolCall {
                        id: format!("mcp_{turn}"),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    }],
                    ..Default::default()
                },
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
pub async fn collect(
    sessions: Sessions,
    options: CollectOptions,
) -> Result<crate::run::RunOutcome> {
    let sessions_skipped = sessions.skipped;
    let mut latest: BTreeMap<String, (u64, String, Vec<SessionCall>)> = BTreeMap::new();
    for (n, (task, client, calls)) in sessions.sessions {
        latest.insert(task, (n, client, calls));
    }
    if latest.is_empty() {
        return Err(InputError::new(
            &options.source,
            "no session in this file: no client connected, nothing to collect",
        )
        .into());
    }
    let label = match &options.agent_name {
        Some(name) => name.clone(),
        None => {
            let mut clients: Vec<&str> = latest.values().map(|(_, c, _)| c.as_str()).collect();
            clients.sort();
            clients.dedup();
            match clients.as_slice() {
                // `/` and `#` delimit trial ids; a client's own name may not split them.
                [one] if !one.is_empty() => one
                    .chars()
                    .map(|c| if c == '/' || c == '#' || c.is_control() { '_' } else { c })
                    .collect(),
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
    let mut model = crate::run::config::ModelSpec::baseline("mcp-client");
    model.name = label.clone();
    config.models = vec![model];
    let mut prepared = crate::run::prepare(config)?;
    let calls = latest.into_iter().map(|(task, (_, _, calls))| (task, calls)).collect();
    prepared.set_backend(0, Arc::new(SessionReplay { name: label, calls }));
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let run_id =
        options.run_id.unwrap_or_else(|| format!("mcp-sessions-{}", crate::run::utc_stamp(unix)));
    crate::run::check_run_id(&run_id).map_err(|why| InputError::new("--run-id", why))?;
    let mut meta = crate::record::meta::RunMeta::new(&run_id, unix, &crate::run::utc_stamp(unix));
    let mut served = json!({"sessions": "sessions.jsonl"});
    if sessions_skipped > 0 {
        // Said on stderr as they were read; kept with the run so the count is not lost with the terminal.
        served["skipped_lines"] = json!(sessions_skipped);
    }
    meta.served = Some(served);
    let dir = options.out.join(&run_id);
    let outcome = crate::run::execute(
        prepared,
        &dir,
        meta,
        crate::run::ExecOptions { quiet: true, ..Default::default() },
    )
    .await?;
    let copy = outcome.dir.join("sessions.jsonl");
    if std::fs::canonicalize(&options.source).ok() != std::fs::canonicalize(&copy).ok() {
        let bytes = std::fs::read(&options.source).map_err(|e| {
            InputError::new(&options.source, format!("cannot read the sessions file: {e}"))
        })?;
        crate::files::write_atomic(&copy, &bytes)?;
    }
    Ok(outcome)
}
