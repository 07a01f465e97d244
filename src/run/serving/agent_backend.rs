//! An external MCP agent as a backend (`--backends mcp-agent:<command>`): for each episode toolpick
//! serves the cell's layout — the same functions, for the same task — as an MCP server on a loopback
//! URL, starts the agent command, and turns every `tools/call` the agent makes into one turn of the
//! episode. The call runs through the layout like any backend's; its result goes back to the agent as
//! the call's answer. When the agent exits, its standard output is the episode's final answer.
//!
//! The agent gets the task's query on standard input, the server's URL in `TOOLPICK_MCP_URL`, the task
//! id in `TOOLPICK_TASK_ID`, and in `TOOLPICK_MESSAGES` the chat messages the in-process loop opens
//! with (a JSON array of `{"role", "content"}`: toolpick's system prompt or the benchmark's own, any
//! earlier turns of the task, then the query), so an agent can send the model exactly what a built-in
//! backend sends. The server's `instructions` carry the same task as one text. It inherits toolpick's environment (it is the user's own program and
//! may need its model's key). `tools/list` answers what the layout offers at that point of the episode.
//! Calls are taken one at a time, in the order they arrive: MCP has no turns, so each call is one step
//! of the episode (an in-process backend's turn of three calls is three steps here).
//!
//! `--backends mcp-oracle` plays the oracle the same way, as an MCP client over loopback HTTP: it shows
//! that what the served interface carries (tool lists, arguments, results) is enough to score what the
//! in-process loop scores.

use crate::agent::{Backend, BoxFuture, TurnContext};
use crate::mcp::serve::{Answer, Served, StopSignal};
use crate::protocol::{AssistantTurn, FunctionDef, ToolCall};
use anyhow::{Context, Result, anyhow};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

type Call = (String, String, oneshot::Sender<Answer>);

/// One episode's link between the served session and the episode loop.
struct Link {
    functions: tokio::sync::watch::Sender<Option<Vec<FunctionDef>>>,
    calls: mpsc::Sender<Call>,
    incoming: tokio::sync::Mutex<mpsc::Receiver<Call>>,
    /// The answer the agent waits for (sent when the loop asks for the next turn).
    pending: Mutex<Option<oneshot::Sender<Answer>>>,
    /// The agent (`mcp-agent`'s process, `mcp-oracle`'s client), ending with its final answer; none for
    /// a client that connected by itself (`mcp serve`). Aborting it kills the process (kill_on_drop).
    agent: tokio::sync::Mutex<Option<tokio::task::JoinHandle<Result<String>>>>,
    stop: StopSignal,
    /// Cancelled when a connected client's session ends (`mcp serve`).
    closed: StopSignal,
    made: std::sync::atomic::AtomicUsize,
    /// The task as one text, for the session's `instructions` ([`crate::agent::instructions_text`]).
    instructions: String,
}

impl Link {
    fn new(
        instructions: &str,
        agent: Option<tokio::task::JoinHandle<Result<String>>>,
    ) -> Arc<Link> {
        let (calls, incoming) = mpsc::channel(16);
        let (functions, _) = tokio::sync::watch::channel(None);
        Arc::new(Link {
            functions,
            calls,
            incoming: tokio::sync::Mutex::new(incoming),
            pending: Mutex::new(None),
            agent: tokio::sync::Mutex::new(agent),
            stop: StopSignal::default(),
            closed: StopSignal::default(),
            made: Default::default(),
            instructions: instructions.to_string(),
        })
    }
}

struct LinkServed(Arc<Link>);

impl Served for LinkServed {
    fn functions(&self) -> crate::mcp::serve::BoxFuture<Vec<FunctionDef>> {
        let mut rx = self.0.functions.subscribe();
        Box::pin(async move {
            loop {
                if let Some(f) = rx.borrow_and_update().clone() {
                    return f;
                }
                if rx.changed().await.is_err() {
                    return vec![];
                }
            }
        })
    }

    fn call(&self, name: String, arguments: String) -> crate::mcp::serve::BoxFuture<Answer> {
        let calls = self.0.calls.clone();
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            if calls.send((name, arguments, tx)).await.is_err() {
                return Answer { text: "the episode is over".into(), is_error: true, result: None };
            }
            rx.await.unwrap_or(Answer {
                text: "the episode ended before this call was answered".into(),
                is_error: true,
                result: None,
            })
        })
    }

    fn instructions(&self) -> Option<String> {
        Some(self.0.instructions.clone())
    }
}

/// What plays the served episode.
enum Player {
    /// `mcp-agent:<command>`: an external program.
    Command(Vec<String>),
    /// `mcp-oracle`: the oracle, as an MCP client of the served layout (over loopback HTTP, with the
    /// same client toolpick uses for live servers). It sees the tools and results only as the wire
    /// carries them, and is handed the answer key like the in-process oracle.
    Oracle,
}

/// The `mcp-agent` and `mcp-oracle` backends.
pub struct McpAgentBackend {
    name: String,
    player: Player,
    links: Mutex<HashMap<u64, Arc<Link>>>,
}

impl McpAgentBackend {
    pub fn new(name: &str, command: &str) -> Result<McpAgentBackend> {
        let command: Vec<String> = command.split_whitespace().map(String::from).collect();
        if command.is_empty() {
            return Err(crate::error::InputError::new(
                "--backends",
                "mcp-agent needs the agent's command line: mcp-agent:<command>",
            )
            .into());
        }
        Ok(McpAgentBackend {
            name: name.to_string(),
            player: Player::Command(command),
            links: Mutex::new(HashMap::new()),
        })
    }

    /// The oracle playing through the served interface (`--backends mcp-oracle`).
    pub fn oracle(name: &str) -> McpAgentBackend {
        McpAgentBackend {
            name: name.to_string(),
            player: Player::Oracle,
            links: Mutex::new(HashMap::new()),
        }
    }

    fn spawn_command(
        command: &[String],
        url: &str,
        ctx: &TurnContext<'_>,
    ) -> Result<tokio::task::JoinHandle<Result<String>>> {
        let opening = serde_json::to_string(&crate::agent::opening_messages(ctx.task))
            .context("cannot write the opening messages")?;
        let mut cmd = tokio::process::Command::new(&command[0]);
        cmd.args(&command[1..])
            .env("TOOLPICK_MCP_URL", url)
            .env("TOOLPICK_TASK_ID", &ctx.task.id)
            .env("TOOLPICK_MESSAGES", opening)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut agent =
            cmd.spawn().with_context(|| format!("cannot start the agent `{}`", command[0]))?;
        let mut stdin = agent.stdin.take().expect("piped");
        let query = ctx.task.query.clone();
        tokio::spawn(async move {
            let _ = stdin.write_all(query.as_bytes()).await;
        });
        let mut stdout = agent.stdout.take().expect("piped");
        Ok(tokio::spawn(async move {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf).await;
            let status = agent.wait().await.context("mcp-agent: cannot wait for the agent")?;
            if !status.success() {
                return Err(anyhow!("mcp-agent: the agent exited with {status}"));
            }
            Ok(String::from_utf8_lossy(&buf).trim().to_string())
        }))
    }

    async fn start(&self, ctx: &TurnContext<'_>) -> Result<Arc<Link>> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("cannot listen on loopback for the agent")?;
        let url = format!("http://{}/mcp", listener.local_addr()?);
        let agent = match &self.player {
            Player::Command(command) => Self::spawn_command(command, &url, ctx)?,
            Player::Oracle => {
                let game = OracleGame {
                    task: ctx.task.clone(),
                    addressing: ctx.addressing.clone(),
                    layout: ctx.layout,
                    seed: ctx.seed,
                    trial: ctx.trial,
                };
                tokio::spawn(game.play(url))
            }
        };
        let link = Link::new(&crate::agent::instructions_text(ctx.task), Some(agent));
        let served: Arc<dyn Served> = Arc::new(LinkServed(link.clone()));
        let stop = link.stop.clone();
        tokio::spawn(async move {
            if let Err(e) = crate::mcp::serve::serve_http(listener, served, stop).await {
                crate::messages::warning(format_args!("the MCP server for an agent failed: {e:#}"));
            }
        });
        Ok(link)
    }

    async fn turn(&self, ctx: &TurnContext<'_>) -> Result<AssistantTurn> {
        let link = if ctx.turn() == 0 {
            let link = self.start(ctx).await?;
            self.links.lock().expect("links").insert(ctx.seed, link.clone());
            link
        } else {
            self.links
                .lock()
                .expect("links")
                .get(&ctx.seed)
                .cloned()
                .ok_or_else(|| anyhow!("mcp-agent: no session for this episode"))?
        };
        next_turn(&link, ctx).await
    }
}

/// What the MCP oracle knows: the answer key, and nothing of the layout but its kind.
struct OracleGame {
    task: crate::dataset::Task,
    addressing: crate::agent::Addressing,
    layout: crate::layout::LayoutKind,
    seed: u64,
    trial: usize,
}

impl OracleGame {
    /// Connect, then turn by turn: list the tools, let the oracle decide from the conversation as the
    /// wire showed it, make its calls one by one; its answer without a call is the final answer.
    async fn play(self, url: String) -> Result<String> {
        use crate::agent::Policy;
        use crate::protocol::Message;
        let session = crate::mcp::client::Session::connect_http(&url, Default::default()).await?;
        let mut messages = crate::agent::opening_messages(&self.task);
        loop {
            let functions: Vec<FunctionDef> = session
                .list_tools_now()
                .await?
                .into_iter()
                .map(|t| FunctionDef {
                    name: t["name"].as_str().unwrap_or_default().to_string(),
                    description: t["description"].as_str().unwrap_or_default().to_string(),
                    parameters: t["inputSchema"].clone(),
                })
                .collect();
            let ctx = TurnContext {
                task: &self.task,
                messages: &messages,
                functions: &functions,
                deferred: &[],
                groups: &[],
                layout: self.layout,
                addressing: &self.addressing,
                seed: self.seed,
                trial: self.trial,
            };
            let turn = crate::agent::backends::OracleBackend.decide(&ctx)?;
            if turn.tool_calls.is_empty() {
                let _ = session.close().await;
                return Ok(turn.content.unwrap_or_default());
            }
            messages.push(Message::Assistant {
                content: turn.content.clone(),
                tool_calls: turn.tool_calls.clone(),
            });
            for call in turn.tool_calls {
                let arguments = match serde_json::from_str(&call.arguments) {
                    Ok(serde_json::Value::Object(m)) => m,
                    _ => {
                        return Err(anyhow!(
                            "mcp-oracle: arguments of `{}` are not a JSON object: {}",
                            call.name,
                            call.arguments
                        ));
                    }
                };
                let result = session
                    .call_tool(&call.name, arguments, std::time::Duration::from_secs(60))
                    .await?;
                let content = crate::mcp::live::content_text(&result);
                messages.push(Message::Tool { tool_call_id: call.id, name: call.name, content });
            }
        }
    }
}

/// One turn of a served episode: answer the client's last call with the layout's result, offer the
/// layout's functions, and wait for the next call — or for the agent to exit (its output is the final
/// answer), or for the client's session to end (no final answer).
async fn next_turn(link: &Link, ctx: &TurnContext<'_>) -> Result<AssistantTurn> {
    if let Some(reply) = link.pending.lock().expect("pending").take() {
        let text = ctx.last_results().last().map(|(_, _, r)| r.to_string()).unwrap_or_default();
        let is_error = crate::agent::backends::is_layout_error(&text);
        let _ = reply.send(Answer { text, is_error, result: None });
    }
    link.functions.send_replace(Some(ctx.functions.to_vec()));
    let mut incoming = link.incoming.lock().await;
    let mut agent = link.agent.lock().await;
    let exited = async {
        match agent.as_mut() {
            Some(a) => a.await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        call = incoming.recv() => {
            let (name, arguments, reply) = call.ok_or_else(|| anyhow!("mcp: the server stopped"))?;
            *link.pending.lock().expect("pending") = Some(reply);
            let n = link.made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(AssistantTurn { tool_calls: vec![ToolCall { id: format!("mcp_{n}"), name, arguments }], ..Default::default() })
        }
        answer = exited => {
            let text = answer.map_err(|e| anyhow!("mcp-agent: the agent's task failed: {e}"))??;
            Ok(AssistantTurn { content: Some(text), ..Default::default() })
        }
        _ = link.closed.cancelled() => Ok(AssistantTurn::default()),
    }
}

impl Backend for McpAgentBackend {
    fn name(&self) -> &str {
        &self.name
    }

    /// Each episode runs an agent process (and its own model calls): a few at a time. The MCP oracle
    /// is two tasks of this process and a loopback connection.
    fn concurrency(&self) -> usize {
        match self.player {
            Player::Command(_) => 4,
            Player::Oracle => 16,
        }
    }

    fn respond<'a>(&'a self, ctx: &'a TurnContext<'a>) -> BoxFuture<'a, Result<AssistantTurn>> {
        Box::pin(self.turn(ctx))
    }

    fn end_episode(&self, seed: u64) {
        if let Some(link) = self.links.lock().expect("links").remove(&seed) {
            link.stop.cancel();
            // Aborting the agent's task drops its process, which kills it (kill_on_drop).
            if let Ok(agent) = link.agent.try_lock()
                && let Some(agent) = agent.as_ref()
            {
                agent.abort();
            }
        }
    }
}

/// A client that connects by itself (`toolpick mcp serve --out`): one episode, served on whatever
/// transport the command chose, ending when the client's session ends.
pub struct ClientSession {
    name: String,
    link: Arc<Link>,
}

impl ClientSession {
    /// The backend (labelled `name`) and what the transport serves (`instructions`: the task as one
    /// text, [`crate::agent::instructions_text`]).
    pub fn new(name: &str, instructions: &str) -> (ClientSession, Arc<dyn Served>) {
        let link = Link::new(instructions, None);
        let served: Arc<dyn Served> = Arc::new(LinkServed(link.clone()));
        (ClientSession { name: name.to_string(), link }, served)
    }

    /// Call when the client's session is over: the episode ends at its next turn.
    pub fn closer(&self) -> impl Fn() + Send + Sync + 'static {
        let closed = self.link.closed.clone();
        move || closed.cancel()
    }
}

impl Backend for ClientSession {
    fn name(&self) -> &str {
        &self.name
    }
    fn concurrency(&self) -> usize {
        1
    }
    fn respond<'a>(&'a self, ctx: &'a TurnContext<'a>) -> BoxFuture<'a, Result<AssistantTurn>> {
        Box::pin(next_turn(&self.link, ctx))
    }
}

/// Stands in for a client not connected yet (replaced by [`ClientSession`] before the run starts).
pub struct Unconnected(pub String);

impl Backend for Unconnected {
    fn name(&self) -> &str {
        &self.0
    }
    fn respond<'a>(&'a self, _ctx: &'a TurnContext<'a>) -> BoxFuture<'a, Result<AssistantTurn>> {
        Box::pin(std::future::ready(Err(anyhow!("no MCP client is connected"))))
    }
}
