//! Live trials (`--execute live`): each trial of a live suite gets a fresh sandbox and a new server
//! process, and its executed calls go to that server.
//!
//! Per trial: a temporary directory with a fresh copy of the task's fixture (every entry dated
//! 2000-01-01), the server started in it with a scrubbed environment (never a model's API key), no
//! roots declared, without network where the platform allows (`unshare -n`), a file-size limit; one
//! MCP session for the whole trial. Calls pass the live [`Policy`] first (destructive and open-world
//! tools only with opt-in), then go out with a time limit; results come back with the sandbox shown as
//! `/sandbox` and UUIDs numbered, so the transcript does not depend on where the sandbox was.
//!
//! The server's requests are answered for the trial: elicitation by the task's script (`live.elicitation`,
//! in order; then decline; URLs recorded, never opened), sampling by the experiment's own model (its
//! tokens counted apart). A server that crashes, hangs past the call limit, floods its output or speaks
//! something other than JSON-RPC breaks the session: the episode ends there as an **infrastructure
//! error** (kept, retried by `--retry-errors`), and the run goes on.
//!
//! Sessions live on a runtime of their own ([`runtime`]): layouts execute calls synchronously, so a
//! call waits for its answer without holding up the sessions it waits on.

use crate::agent::{Backend, BoxFuture, TurnContext};
use crate::catalog::{Annotations, Catalog};
use crate::dataset::live::{ElicitAction, ElicitAnswer};
use crate::dataset::{Kind, Task};
use crate::exec::LiveExecutor;
use crate::layout::LayoutKind;
use crate::mcp::client::{ElicitReply, Event, Launch, Responder, SampleReply, Session};
use crate::mcp::live::{LiveSpec, Normalizer, Policy, Sandbox};
use crate::protocol::{Message, Usage};
use crate::record::live::{Elicitation, LiveCall, LiveTrial};
use anyhow::{Result, anyhow};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The live settings of a run (`[live]` in the experiment file, `--allow-destructive` and friends): the
/// safety policy and the limits, one type with `mcp::live`'s so the two never drift apart.
pub type LiveOptions = Policy;

/// The runtime the live sessions run on (two workers, for the whole process).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("toolpick-live")
            .enable_all()
            .build()
            .expect("live runtime")
    })
}

/// Run `fut` on the live runtime and wait for it from synchronous code (a layout's call): on a
/// multi-threaded runtime the waiting worker hands its other tasks on first.
fn wait<T: Send + 'static>(fut: impl std::future::Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    let recv = move || rx.recv().expect("the live runtime dropped a call");
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(recv)
        }
        _ => recv(),
    }
}

/// A suite whose calls run live: how to start its server, the policy, the fixtures' base directory.
pub struct LiveSuite {
    pub spec: LiveSpec,
    pub options: LiveOptions,
    /// Written tool id → annotations (the imported catalog's, missing hints already unsafe).
    hints: HashMap<String, Annotations>,
    /// Fixture directories are relative to the dataset file.
    base: PathBuf,
    /// Environment variables that must never reach a server.
    secrets: Vec<String>,
    slots: Arc<tokio::sync::Semaphore>,
    /// Servers started ahead of their trials (a run's, when `--live-pool` is not 0: `live_pool`).
    pool: std::sync::OnceLock<super::live_pool::Pool>,
}

impl LiveSuite {
    pub fn new(
        spec: LiveSpec,
        options: LiveOptions,
        catalog: &Catalog,
        dataset: &Path,
        secrets: Vec<String>,
    ) -> LiveSuite {
        let hints =
            catalog.tools().map(|t| (t.tool.id.clone(), t.tool.annotations.clone())).collect();
        let base = dataset.parent().map(Path::to_path_buf).unwrap_or_default();
        let slots = Arc::new(tokio::sync::Semaphore::new(options.sandboxes.max(1)));
        LiveSuite { spec, options, hints, base, secrets, slots, pool: Default::default() }
    }

    /// Give the suite its warm pool; `false` when it has one already.
    pub fn set_pool(&self, pool: super::live_pool::Pool) -> bool {
        self.pool.set(pool).is_ok()
    }

    pub fn pool(&self) -> Option<&super::live_pool::Pool> {
        self.pool.get()
    }

    /// Start the pool's next entries, if it has a pool.
    pub fn refill_pool(self: &Arc<Self>) {
        if let Some(pool) = self.pool.get() {
            pool.refill(self);
        }
    }

    /// A task's fixture directory, if it names one.
    pub fn fixture(&self, task: &Task) -> Option<PathBuf> {
        task.live.as_ref().and_then(|l| l.fixture.as_ref()).map(|f| self.base.join(f))
    }
}

/// Progress notifications received by every live session of this process, and the last one's text
/// (the progress display shows them).
pub static PROGRESS_SEEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub static LAST_PROGRESS: Mutex<String> = Mutex::new(String::new());

/// Sampling and elicitation requests a server may send in one trial (the server-everything tasks send
/// one; a server looping on sampling was seen sending 102 for a one-call trial, each a model request
/// paid for). Past it every further request is refused (elicitation cancelled, sampling refused) and
/// the trial ends as an infrastructure error saying so.
pub const MAX_SERVER_REQUESTS: usize = 16;

/// The model side of sampling and the user side of elicitation, for one trial.
struct TrialResponder {
    /// Sampling and elicitation requests received so far (see [`MAX_SERVER_REQUESTS`]).
    requests: std::sync::atomic::AtomicUsize,
    script: Mutex<VecDeque<ElicitAnswer>>,
    backend: Arc<dyn Backend>,
    task: Task,
    layout: LayoutKind,
    seed: u64,
    trial: usize,
}

impl TrialResponder {
    /// Count one more request; `false` once the trial has had its [`MAX_SERVER_REQUESTS`].
    fn within_limit(&self) -> bool {
        self.requests.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < MAX_SERVER_REQUESTS
    }

    /// Why the trial must end, once the server has asked for more than its limit.
    fn over_limit(&self) -> Option<String> {
        let n = self.requests.load(std::sync::atomic::Ordering::SeqCst);
        (n > MAX_SERVER_REQUESTS).then(|| format!("the server sent {n} sampling and elicitation requests in this trial, over the limit of {MAX_SERVER_REQUESTS} per trial; the requests past it were refused"))
    }
}

impl Responder for TrialResponder {
    fn elicit(&self, mode: &str, _request: &Value) -> ElicitReply {
        if !self.within_limit() {
            return ElicitReply { action: "cancel".into(), content: None };
        }
        let answer = self.script.lock().expect("elicitation script").pop_front();
        match answer {
            Some(a) => ElicitReply {
                action: a.action.as_str().into(),
                content: if mode == "form" && a.action == ElicitAction::Accept {
                    a.content
                } else {
                    None
                },
            },
            None => ElicitReply { action: "decline".into(), content: None },
        }
    }

    fn on_progress(&self, p: &crate::mcp::client::Progress) {
        PROGRESS_SEEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
        *LAST_PROGRESS.lock().expect("last progress") =
            format!("{} {}{total}", self.task.id, p.progress);
    }

    fn sample(&self, request: Value) -> crate::mcp::client::BoxFuture<Result<SampleReply, String>> {
        if !self.within_limit() {
            let why = format!(
                "this trial's limit of {MAX_SERVER_REQUESTS} sampling and elicitation requests is reached"
            );
            return Box::pin(std::future::ready(Err(why)));
        }
        let backend = self.backend.clone();
        let (layout, seed, trial) = (self.layout, self.seed, self.trial);
        // The server's prompt is a new conversation with no tools: the model answers it as text.
        let text = sampling_text(&request);
        let mut messages = Vec::new();
        if let Some(system) = request.get("systemPrompt").and_then(Value::as_str) {
            messages.push(Message::System { content: system.to_string() });
        }
        messages.push(Message::User { content: text.clone() });
        let task = Task {
            id: format!("{}#sampling", self.task.id),
            query: text,
            kind: Kind::Abstain,
            expected: vec![],
            live: None,
            ..self.task.clone()
        };
        Box::pin(async move {
            let addressing = crate::agent::Addressing::new();
            let ctx = TurnContext {
                task: &task,
                messages: &messages,
                functions: &[],
                deferred: &[],
                groups: &[],
                layout,
                addressing: &addressing,
                seed,
                trial,
            };
            let turn = backend.respond(&ctx).await.map_err(|e| format!("{e:#}"))?;
            Ok(SampleReply {
                text: turn.content.unwrap_or_default(),
                model: backend.name().to_string(),
                usage: turn.usage,
            })
        })
    }
}

/// The responder of a warm server (`live_pool`): the trial that takes the server binds its own;
/// before that, elicitation is declined, sampling refused and progress not shown.
#[derive(Default)]
pub struct LateResponder(std::sync::OnceLock<Arc<dyn Responder>>);

impl LateResponder {
    fn bind(&self, responder: Arc<dyn Responder>) {
        let _ = self.0.set(responder);
    }
}

impl Responder for LateResponder {
    fn elicit(&self, mode: &str, request: &Value) -> ElicitReply {
        match self.0.get() {
            Some(r) => r.elicit(mode, request),
            None => ElicitReply { action: "decline".into(), content: None },
        }
    }

    fn sample(&self, request: Value) -> crate::mcp::client::BoxFuture<Result<SampleReply, String>> {
        match self.0.get() {
            Some(r) => r.sample(request),
            None => Box::pin(std::future::ready(Err(
                "no trial has taken this server yet; sampling is answered only during a trial"
                    .into(),
            ))),
        }
    }

    fn on_progress(&self, progress: &crate::mcp::client::Progress) {
        if let Some(r) = self.0.get() {
            r.on_progress(progress);
        }
    }
}

/// The text of a sampling request's messages.
fn sampling_text(request: &Value) -> String {
    request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|m| {
            let content = &m["content"];
            let blocks: Vec<&Value> = match content {
                Value::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            blocks
                .into_iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str).map(String::from))
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One trial's live execution: its session, sandbox and what broke, if anything.
pub struct TrialExecutor {
    session: Mutex<Option<Arc<Session>>>,
    suite: Arc<LiveSuite>,
    normalizer: Normalizer,
    /// Why the session broke (the episode ends as an infrastructure error).
    pub broken: Mutex<Option<String>>,
    sampling: Mutex<Usage>,
    /// The trial's answerer of the server's requests (its count of them).
    responder: Arc<TrialResponder>,
    /// The last call's whole result as the server sent it (normalised), for a proxy to pass on.
    whole: Mutex<Option<Value>>,
}

impl LiveExecutor for TrialExecutor {
    fn execute(&self, tool_id: &str, arguments: &Value) -> Option<(Value, LiveCall)> {
        let wire = self.suite.spec.wire.get(tool_id)?.clone();
        if let Some(why) = self.broken.lock().expect("broken").clone() {
            return Some((
                json!({"error": format!("The tool server is not available: {why}")}),
                LiveCall { is_error: true, detail: why, ..Default::default() },
            ));
        }
        let hints = self.suite.hints.get(tool_id).cloned().unwrap_or_default();
        if let Err(why) = self.suite.options.decide(tool_id, &wire, &hints) {
            let text = format!("Refused by the harness's safety policy: {why}.");
            return Some((
                json!({"error": text}),
                LiveCall { refused: true, detail: why, ..Default::default() },
            ));
        }
        let session = self.session.lock().expect("session").clone()?;
        let args = match self.normalizer.outbound(arguments) {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        let timeout = Duration::from_millis(self.suite.options.call_timeout_ms);
        let outcome = {
            let session = session.clone();
            wait(async move { session.call_tool_live(&wire, args, timeout).await })
        };
        let mut call = LiveCall::default();
        for event in session.take_events() {
            match event {
                Event::Progress(_) => call.progress += 1,
                Event::Elicitation { mode, action } => {
                    call.elicitations.push(Elicitation { mode, action })
                }
                Event::Sampling { answered, usage } => {
                    call.samplings += usize::from(answered);
                    self.sampling.lock().expect("sampling usage").add(&usage);
                }
            }
        }
        if let Some(why) = self.responder.over_limit() {
            return Some(self.break_session(why, call));
        }
        let (response, is_error) = match outcome {
            Ok(Ok(result)) => {
                let size = serde_json::to_vec(&result).map(|b| b.len()).unwrap_or(0);
                if size > self.suite.options.max_output_bytes {
                    let why = format!(
                        "the server returned {size} bytes for one call, over the limit of {} (max_output_bytes)",
                        self.suite.options.max_output_bytes
                    );
                    return Some(self.break_session(why, call));
                }
                let result = self.normalizer.inbound_value(&result);
                *self.whole.lock().expect("whole result") = Some(result.clone());
                crate::mcp::live::shown_result(&result)
            }
            Ok(Err(message)) => (json!({"error": self.normalizer.inbound(&message)}), true),
            Err(e) => {
                return Some(self.break_session(self.normalizer.inbound(&format!("{e:#}")), call));
            }
        };
        call.is_error = is_error;
        if is_error {
            call.detail =
                response["error"].as_str().unwrap_or_default().chars().take(200).collect();
        }
        Some((response, call))
    }
}

impl TrialExecutor {
    /// The whole result of the last call that reached the server, taken (`None` when none did since).
    pub fn take_whole_result(&self) -> Option<Value> {
        self.whole.lock().expect("whole result").take()
    }

    /// End the session for `why`; `call` keeps what the server did during the call (its events).
    fn break_session(&self, why: String, call: LiveCall) -> (Value, LiveCall) {
        *self.broken.lock().expect("broken") = Some(why.clone());
        (
            json!({"error": format!("The tool server failed: {why}")}),
            LiveCall { is_error: true, detail: why.chars().take(200).collect(), ..call },
        )
    }
}

/// The warm server the pool made for a trial of `task`: `Ok(None)` when there is no pool or no entry
/// for it, or when the entry's server has exited since it started (it is stopped, and the trial starts
/// its own); `Err` when the entry's server did not start (the trial's infrastructure error).
async fn take_warm(suite: &Arc<LiveSuite>, task: &Task) -> Result<Option<super::live_pool::Warm>> {
    let Some(handle) = suite.pool().and_then(|p| p.take(suite, task)) else {
        return Ok(None);
    };
    let mut warm = match handle.await {
        Ok(started) => started?,
        Err(e) => return Err(anyhow!("the warm server's start was cancelled: {e}")),
    };
    if warm.session.is_gone() {
        crate::messages::note(format_args!(
            "a warm server for task `{}` exited before its trial; that trial starts a fresh one",
            task.id
        ));
        let super::live_pool::Warm { session, sandbox, .. } = warm;
        let _ = runtime().spawn(async move { session.close().await }).await;
        let _ = sandbox.remove();
        return Ok(None);
    }
    Ok(Some(warm))
}

/// Start the suite's server in `sandbox` and complete the handshake (`responder` answering the
/// server's requests), on the live runtime.
pub(super) async fn launch(
    suite: &Arc<LiveSuite>,
    sandbox: &Sandbox,
    responder: Arc<dyn Responder>,
) -> Result<Session> {
    let capabilities = suite.spec.capabilities;
    let limit = Duration::from_millis(suite.options.start_timeout_ms);
    match &suite.spec.url {
        // A server reached by URL (served sessions only: see `LiveSpec::url`): no process to start.
        Some(url) => {
            let url = url.clone();
            runtime()
                .spawn(async move {
                    Session::connect_http_answering(&url, capabilities, Some(responder), limit)
                        .await
                })
                .await
        }
        None => {
            let command = suite.spec.resolve(sandbox.path(), &suite.secrets)?;
            let launch = Launch {
                home: Some(sandbox.path().to_path_buf()),
                cwd: Some(sandbox.path().to_path_buf()),
                isolate_network: true,
                max_file_bytes: Some(suite.options.max_file_bytes),
                responder: Some(responder),
                request_timeout: limit,
            };
            runtime()
                .spawn(async move { Session::launch(&command, capabilities, &launch).await })
                .await
        }
    }
    .map_err(|e| anyhow!("the live runtime failed: {e}"))?
}

/// A live trial in progress.
pub struct LiveTrialRun {
    pub executor: Arc<TrialExecutor>,
    sandbox: Sandbox,
    _slot: tokio::sync::OwnedSemaphorePermit,
    /// Time from taking the sandbox slot to a ready server (ms): the wait for the warm server the pool
    /// made for this trial (`live_pool`), or, without one, making the sandbox and starting the server.
    pub setup_ms: f64,
}

/// Start a live trial: take a sandbox slot, make the sandbox, start the server. An `Err` is an
/// infrastructure error for the trial.
pub async fn start(
    suite: &Arc<LiveSuite>,
    task: &Task,
    backend: Arc<dyn Backend>,
    layout: LayoutKind,
    seed: u64,
    trial: usize,
) -> Result<LiveTrialRun> {
    let slot =
        suite.slots.clone().acquire_owned().await.map_err(|_| anyhow!("live sandboxes closed"))?;
    let started = Instant::now();
    let trial_responder = Arc::new(TrialResponder {
        requests: Default::default(),
        script: Mutex::new(
            task.live.as_ref().map(|l| l.elicitation.iter().cloned().collect()).unwrap_or_default(),
        ),
        backend,
        task: task.clone(),
        layout,
        seed,
        trial,
    });
    let responder: Arc<dyn Responder> = trial_responder.clone();
    let (session, sandbox) = match take_warm(suite, task).await? {
        Some(warm) => {
            warm.late.bind(responder);
            (warm.session, warm.sandbox)
        }
        None => {
            let fixture = suite.fixture(task);
            let files = task.live.as_ref().map(|l| l.files.clone()).unwrap_or_default();
            let sandbox = Sandbox::create(fixture.as_deref(), &files)?;
            (launch(suite, &sandbox, responder).await?, sandbox)
        }
    };
    let executor = Arc::new(TrialExecutor {
        session: Mutex::new(Some(Arc::new(session))),
        suite: suite.clone(),
        normalizer: Normalizer::new(sandbox.path()),
        broken: Mutex::new(None),
        sampling: Mutex::new(Usage::default()),
        responder: trial_responder,
        whole: Mutex::new(None),
    });
    Ok(LiveTrialRun {
        executor,
        sandbox,
        _slot: slot,
        setup_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

impl LiveTrialRun {
    /// End the trial: stop the server, check the final state, remove the sandbox. Returns the live
    /// record and the teardown time (ms).
    pub async fn finish(self, task: &Task) -> (LiveTrial, f64) {
        let started = Instant::now();
        let session = self.executor.session.lock().expect("session").take();
        let protocol = session.as_ref().map(|s| s.facts().protocol_version.clone());
        let checks = task.live.as_ref().map(|l| l.expect_state.as_slice()).unwrap_or_default();
        let suite = &self.executor.suite;
        if let Some(pool) = suite.pool() {
            // Every call has been answered: the state is checked now and the server stopped and the
            // sandbox removed off the trial's path (`live_pool`).
            let state = crate::mcp::live::check_state(self.sandbox.path(), checks);
            let sandbox = self.sandbox;
            pool.retire(async move {
                if let Some(s) = session.and_then(|s| Arc::try_unwrap(s).ok()) {
                    let _ = s.close().await;
                }
                let _ = sandbox.remove();
            });
            let live = LiveTrial {
                server: suite.spec.server.clone(),
                protocol,
                state,
                sampling_usage: *self.executor.sampling.lock().expect("sampling usage"),
                sampling_cost_usd: None,
            };
            return (live, started.elapsed().as_secs_f64() * 1000.0);
        }
        if let Some(session) = session {
            let _ = runtime()
                .spawn(async move {
                    // Bounded by the stop's grace periods (`mcp::process`); a session still shared
                    // (a call's task holds it) stops when its last holder drops it.
                    if let Ok(s) = Arc::try_unwrap(session) {
                        let _ = s.close().await;
                    }
                })
                .await;
        }
        let state = crate::mcp::live::check_state(self.sandbox.path(), checks);
        let _ = self.sandbox.remove();
        let live = LiveTrial {
            server: self.executor.suite.spec.server.clone(),
            protocol,
            state,
            sampling_usage: *self.executor.sampling.lock().expect("sampling usage"),
            sampling_cost_usd: None,
        };
        (live, started.elapsed().as_secs_f64() * 1000.0)
    }
}

/// A backend whose episode ends, as a backend error, once the trial's live session broke.
pub struct Guarded<'a> {
    pub inner: &'a dyn Backend,
    pub executor: &'a TrialExecutor,
}

impl Backend for Guarded<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn respond<'a>(
        &'a self,
        ctx: &'a TurnContext<'a>,
    ) -> BoxFuture<'a, anyhow::Result<crate::protocol::AssistantTurn>> {
        if let Some(why) = self.executor.broken.lock().expect("broken").clone() {
            return Box::pin(std::future::ready(Err(anyhow!("mcp_server: {why}"))));
        }
        self.inner.respond(ctx)
    }
}
