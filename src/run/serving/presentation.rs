//! `toolpick mcp serve`: one presentation of a run — a catalog, a variant, a layout, and optionally one
//! task's view of it (its candidates, distractors, poison) — served to any MCP client.
//!
//! The presentation is built by the run's own code ([`crate::run::prepare`] on a one-cell matrix), so a
//! served catalog is exactly what a built-in backend is shown. Calls run through the layout
//! (simulated execution); each one can be appended to a JSON Lines file as its call record
//! (`--record`), in the trial file's `calls` vocabulary. The file is appended to, never truncated (a
//! restarted server keeps what earlier ones recorded), each line whole under a lock on the file (two
//! servers recording into one file never interleave), redacted like every trial record
//! ([`crate::files::SharedLines`], [`crate::redact::global`]).
//!
//! **A presentation per session** (over HTTP, [`Presentation::per_session`]): every client session
//! gets a fresh presentation of its own at `initialize` — its own conversation (what a progressive
//! layout has loaded) and, serving live, its own sandbox and upstream server, started then (the
//! client's `initialize` fails if they cannot start). When the session ends (`DELETE`, its idle
//! time, the server stopping) the presentation is dropped, and dropping it stops that server and
//! removes that sandbox. Over stdio there is one session: the presentation itself serves it.

use crate::layout::Layout;
use crate::mcp::serve::{Answer, BoxFuture, Served};
use crate::protocol::{FunctionDef, Message, ToolCall};
use crate::run::{Prepared, RunConfig, prepare};
use anyhow::Result;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A served presentation and the conversation so far (layouts that load tools on demand read it).
pub struct Presentation {
    prepared: Arc<Prepared>,
    task: usize,
    per_task: Option<crate::run::plan::Scenario>,
    state: Mutex<(Vec<Message>, usize)>,
    record: Option<crate::files::SharedLines>,
    client: Mutex<String>,
    /// Serving live (`--execute live`, `mcp proxy`): the session's sandbox and upstream server.
    live: Option<crate::run::live::LiveTrialRun>,
    /// Function name → the MCP annotations of the catalog tool offered under it.
    annotations: std::collections::HashMap<String, serde_json::Value>,
    /// Function name → the `outputSchema` of the catalog tool offered under it (served live only).
    output_schemas: std::collections::HashMap<String, serde_json::Value>,
    /// The `--record` file, for the presentations of its sessions.
    record_path: Option<PathBuf>,
    /// Every client session gets a presentation of its own (see the module).
    per_session: bool,
}

impl Presentation {
    /// Build the presentation of `config`'s first cell for task `task` (an id of its dataset; `None`:
    /// the whole catalog, no task).
    pub fn new(
        config: RunConfig,
        task: Option<&str>,
        record: Option<PathBuf>,
    ) -> Result<Presentation> {
        let prepared = prepare(config)?;
        let t = task.map(|id| prepared.task_index(id)).transpose()?;
        Presentation::of(Arc::new(prepared), t, record)
    }

    /// The presentation of a prepared one-cell run for its task `task` (an index into its dataset).
    pub fn of(
        prepared: Arc<Prepared>,
        task: Option<usize>,
        record: Option<PathBuf>,
    ) -> Result<Presentation> {
        let s = &prepared.suites[0];
        let t = task.unwrap_or(0);
        let per_task = if Prepared::per_task(s, &s.cells[0], t) {
            Some(prepared.scenario(s, &s.cells[0], t)?)
        } else {
            None
        };
        let record_path = record.clone();
        let record = record
            .map(|p| {
                crate::files::SharedLines::open(&p).map_err(|e| {
                    crate::error::InputError::new(&p, format!("cannot open the record file: {e}"))
                })
            })
            .transpose()?;
        // With a task, the conversation opens as an episode's does (its history, then its query).
        let messages = match task {
            Some(_) => crate::agent::opening_messages(&s.dataset.tasks[t]),
            None => vec![Message::System { content: crate::agent::SYSTEM_PROMPT.into() }],
        };
        let cell = &s.cells[0];
        let addressing = per_task.as_ref().map(|sc| &sc.addressing).unwrap_or(&cell.addressing);
        let annotations = cell
            .shown
            .tools()
            // Hints a catalog leaves out are served left out (MCP's defaults), as the catalog has them.
            .filter(|t| t.tool.origin.annotations_given)
            .filter_map(|t| {
                // A merged tool is addressed through the tools it dispatches to.
                let id = t.tool.dispatch.as_ref().and_then(|d| d.targets.values().next()).unwrap_or(&t.tool.id);
                let a = &t.tool.annotations;
                let hints = serde_json::json!({"readOnlyHint": a.read_only_hint, "destructiveHint": a.destructive_hint, "idempotentHint": a.idempotent_hint, "openWorldHint": a.open_world_hint});
                addressing.get(id).map(|address| (address.function.clone(), hints))
            })
            .collect();
        // A function that is the tool itself (not a merged one) offers the tool's outputSchema.
        let output_schemas = cell
            .shown
            .tools()
            .filter(|t| t.tool.dispatch.is_none())
            .filter_map(|t| {
                let schema = t.tool.output_schema.clone()?;
                addressing.get(&t.tool.id).map(|address| (address.function.clone(), schema))
            })
            .collect();
        Ok(Presentation {
            output_schemas,
            annotations,
            prepared,
            task: task.unwrap_or(usize::MAX),
            per_task,
            state: Mutex::new((messages, 0)),
            record,
            client: Mutex::new(String::new()),
            live: None,
            record_path,
            per_session: false,
        })
    }

    /// Serve every client session a presentation of its own, made at its `initialize` (see the
    /// module); this one then only answers what comes outside any session.
    pub fn per_session(mut self) -> Presentation {
        self.per_session = true;
        self
    }

    /// A fresh presentation of the same cell and task, for one session; live, with its sandbox and
    /// upstream server started.
    fn for_session(&self) -> Result<Presentation> {
        let task = (self.task != usize::MAX).then_some(self.task);
        let mut fresh = Presentation::of(self.prepared.clone(), task, self.record_path.clone())?;
        let Some(start) = fresh.live_start() else { return Ok(fresh) };
        // Sessions begin in the synchronous `Served::session`; the start runs on the live runtime.
        let options = self.prepared.suites[0].live.as_ref().map(|l| l.options.clone());
        let (start_ms, slots) = options.map_or((0, 0), |o| (o.start_timeout_ms, o.sandboxes));
        // Each live session holds one of the suite's sandbox slots until it ends: a session past
        // them waits for one. Twice the start limit: a free slot's own start has the limit inside.
        let limit = std::time::Duration::from_millis(start_ms.saturating_mul(2));
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        crate::run::live::runtime().spawn(async move {
            let started = tokio::time::timeout(limit, start).await.unwrap_or_else(|_| {
                Err(anyhow::anyhow!("the session's sandbox did not start within {} ms; each live session holds one of {slots} sandboxes until it ends (DELETE, or its idle time)", limit.as_millis()))
            });
            let _ = tx.send(started);
        });
        let recv =
            move || rx.recv().map_err(|_| anyhow::anyhow!("the live runtime dropped the start"));
        let run = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(recv)
            }
            _ => recv(),
        }??;
        fresh.live = Some(run);
        Ok(fresh)
    }

    /// When the catalog runs live: start the session's sandbox and upstream server (one for the whole
    /// served session). The upstream's sampling requests are answered by the oracle baseline's text
    /// (there is no model of toolpick's own here), its elicitations by the task's script.
    pub async fn start_live(&mut self) -> Result<()> {
        if let Some(start) = self.live_start() {
            self.live = Some(start.await?);
        }
        Ok(())
    }

    /// What starts this presentation's sandbox and upstream server, when the catalog runs live.
    fn live_start(
        &self,
    ) -> Option<
        impl std::future::Future<Output = Result<crate::run::live::LiveTrialRun>> + Send + 'static,
    > {
        let s = &self.prepared.suites[0];
        let suite = s.live.clone()?;
        let task = s.dataset.tasks[self.task_or_first()].clone();
        let kind = s.cells[0].layout.kind();
        let backend = self.prepared.backends[0].clone();
        Some(async move { crate::run::live::start(&suite, &task, backend, kind, 0, 0).await })
    }

    fn task_or_first(&self) -> usize {
        if self.task == usize::MAX { 0 } else { self.task }
    }

    /// Stop the upstream server and remove the sandbox.
    pub async fn finish(mut self) {
        if let Some(run) = self.live.take() {
            let task = self.prepared.suites[0].dataset.tasks[self.task_or_first()].clone();
            run.finish(&task).await;
        }
    }

    fn layout(&self) -> &dyn Layout {
        match &self.per_task {
            Some(sc) => sc.layout.as_ref(),
            None => self.prepared.suites[0].cells[0].layout.as_ref(),
        }
    }

    /// The functions offered now.
    pub fn offered(&self) -> Vec<FunctionDef> {
        let state = self.state.lock().expect("served state");
        self.layout().offered(&state.0).into_owned()
    }

    /// Answer one call through the layout.
    pub fn answer(&self, name: String, arguments: String) -> Answer {
        let mut state = self.state.lock().expect("served state");
        state.1 += 1;
        let step = state.1;
        let call = ToolCall { id: format!("mcp_{step}"), name: name.clone(), arguments };
        // The upstream's whole result, when this call reached it (a proxy passes it on as it is).
        let mut whole = None;
        let outcome = match &self.live {
            Some(run) => {
                run.executor.take_whole_result();
                let executor: Arc<dyn crate::exec::LiveExecutor> = run.executor.clone();
                let outcome = crate::exec::LIVE
                    .sync_scope(executor, || self.layout().call_in(&call, step, &state.0));
                whole = run.executor.take_whole_result();
                outcome
            }
            None => self.layout().call_in(&call, step, &state.0),
        };
        state.0.push(Message::Assistant { content: None, tool_calls: vec![call] });
        state.0.push(Message::Tool {
            tool_call_id: format!("mcp_{step}"),
            name,
            content: outcome.content.clone(),
        });
        if let Some(file) = &self.record {
            let line = serde_json::to_vec(&outcome.record).unwrap_or_default();
            if let Err(e) = file.append(&crate::redact::global().redact_bytes(&line)) {
                // The client still gets its answer; the lost line is said, not swallowed.
                crate::messages::err_line(format_args!(
                    "toolpick mcp serve: warning: {e:#}; this call is not recorded"
                ));
            }
        }
        let is_error = crate::agent::backends::is_layout_error(&outcome.content);
        Answer { text: outcome.content, is_error, result: whole }
    }

    /// The task as one text (its history, e.g. a benchmark's system prompt, then its query), for the
    /// session's `instructions`.
    pub fn task_instructions(&self) -> Option<String> {
        (self.task != usize::MAX).then(|| {
            crate::agent::instructions_text(&self.prepared.suites[0].dataset.tasks[self.task])
        })
    }
}

impl Drop for Presentation {
    /// A session's presentation dropped while its server runs (the session ended): stop the server and
    /// remove the sandbox on the live runtime, bounded by `mcp::process`'s grace periods.
    fn drop(&mut self) {
        if let Some(run) = self.live.take() {
            let task = self.prepared.suites[0].dataset.tasks[self.task_or_first()].clone();
            crate::run::live::runtime().spawn(async move {
                run.finish(&task).await;
            });
        }
    }
}

impl Served for Presentation {
    fn functions(&self) -> BoxFuture<Vec<FunctionDef>> {
        Box::pin(std::future::ready(self.offered()))
    }

    fn call(&self, name: String, arguments: String) -> BoxFuture<Answer> {
        Box::pin(std::future::ready(self.answer(name, arguments)))
    }

    fn instructions(&self) -> Option<String> {
        self.task_instructions()
    }

    fn annotations(&self, function: &str) -> Option<serde_json::Value> {
        self.annotations.get(function).cloned()
    }

    fn output_schema(&self, function: &str) -> Option<serde_json::Value> {
        // Only served live: a simulated call's answer has no `structuredContent` to match it.
        self.live.as_ref()?;
        self.output_schemas.get(function).cloned()
    }

    /// A stateless request gets a state of its own, as a session would (its own sandbox, live).
    fn stateless(&self) -> Result<Option<std::sync::Arc<dyn Served>>, String> {
        self.session(None, "")
    }

    fn session(
        &self,
        _task: Option<&str>,
        _client: &str,
    ) -> Result<Option<std::sync::Arc<dyn Served>>, String> {
        if !self.per_session {
            return Ok(None);
        }
        let fresh = self.for_session().map_err(|e| format!("{e:#}"))?;
        Ok(Some(Arc::new(fresh)))
    }

    fn client(&self, name: &str, version: &str) {
        *self.client.lock().expect("client") = format!("{name} {version}").trim().to_string();
        // Through the messages channel: a closed stderr must not take the session down.
        crate::messages::err_line(format_args!(
            "toolpick mcp serve: client {name} {version} connected"
        ));
    }
}
