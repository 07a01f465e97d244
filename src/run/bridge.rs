//! An external MCP agent as a backend (`--backends mcp-agent:<command>`): for each episode toolpick
//! serves the cell's layout — the same functions, for the same task — as an MCP server on a loopback
//! URL, starts the agent command, and turns every `tools/call` the agent makes into one turn of the
//! episode. The call runs through the layout like any backend's; its result goes back to the agent as
//! the call's answer. When the agent exits, its standard output is the episode's final answer.
//!
//! The agent gets the task's query on standard input and the server's URL in `TOOLPICK_MCP_URL` (the
//! task id in `TOOLPICK_TASK_ID`); it inherits toolpick's environment (it is the user's own program and
//! may need its model's key). `tools/list` answers what the layout offers at that point of the episode.
//! Calls are taken one at a time, in the order they arrive.

use crate::agent::{Backend, BoxFuture, TurnContext};
use crate::mcp::serve::{Answer, Served, tokio_util_token::Token};
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
    /// The agent process (`mcp-agent`); none for a client that connected by itself (`mcp serve`).
    agent: tokio::sync::Mutex<Option<tokio::process::Child>>,
    output: tokio::sync::Mutex<Option<tokio::task::JoinHandle<Vec<u8>>>>,
    stop: Token,
    /// Cancelled when a connected client's session ends (`mcp serve`).
    closed: Token,
    made: std::sync::atomic::AtomicUsize,
    query: String,
}

impl Link {
    fn new(query: &str, agent: Option<tokio::process::Child>, output: Option<tokio::task::JoinHandle<Vec<u8>>>) -> Arc<Link> {
        let (calls, incoming) = mpsc::channel(16);
        let (functions, _) = tokio::sync::watch::channel(None);
        Arc::new(Link {
            functions,
            calls,
            incoming: tokio::sync::Mutex::new(incoming),
            pending: Mutex::new(None),
            agent: tokio::sync::Mutex::new(agent),
            output: tokio::sync::Mutex::new(output),
            stop: Token::default(),
            closed: Token::default(),
            made: Default::default(),
            query: query.to_string(),
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
                return Answer { text: "the episode is over".into(), is_error: true };
            }
            rx.await.unwrap_or(Answer { text: "the episode ended before this call was answered".into(), is_error: true })
        })
    }

    fn instructions(&self) -> Option<String> {
        Some(self.0.query.clone())
    }
}

/// The `mcp-agent` backend.
pub struct McpAgentBackend {
    name: String,
    command: Vec<String>,
    links: Mutex<HashMap<u64, Arc<Link>>>,
}

impl McpAgentBackend {
    pub fn new(name: &str, command: &str) -> Result<McpAgentBackend> {
        let command: Vec<String> = command.split_whitespace().map(String::from).collect();
        if command.is_empty() {
            return Err(crate::error::InputError::new("--backends", "mcp-agent needs the agent's command line: mcp-agent:<command>").into());
        }
        Ok(McpAgentBackend { name: name.to_string(), command, links: Mutex::new(HashMap::new()) })
    }

    async fn start(&self, ctx: &TurnContext<'_>) -> Result<Arc<Link>> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.context("cannot listen on loopback for the agent")?;
        let url = format!("http://{}/mcp", listener.local_addr()?);
        let mut cmd = tokio::process::Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            .env("TOOLPICK_MCP_URL", &url)
            .env("TOOLPICK_TASK_ID", &ctx.task.id)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut agent = cmd.spawn().with_context(|| format!("cannot start the agent `{}`", self.command[0]))?;
        let mut stdin = agent.stdin.take().expect("piped");
        let query = ctx.task.query.clone();
        tokio::spawn(async move {
            let _ = stdin.write_all(query.as_bytes()).await;
        });
        let mut stdout = agent.stdout.take().expect("piped");
        let output = tokio::spawn(async move {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf).await;
            buf
        });
        let link = Link::new(&ctx.task.query, Some(agent), Some(output));
        let served: Arc<dyn Served> = Arc::new(LinkServed(link.clone()));
        let stop = link.stop.clone();
        tokio::spawn(async move {
            if let Err(e) = crate::mcp::serve::serve_http(listener, served, stop).await {
                eprintln!("warning: the MCP server for an agent failed: {e:#}");
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
            self.links.lock().expect("links").get(&ctx.seed).cloned().ok_or_else(|| anyhow!("mcp-agent: no session for this episode"))?
        };
        next_turn(&link, ctx).await
    }
}

/// One turn of a served episode: answer the client's last call with the layout's result, offer the
/// layout's functions, and wait for the next call — or for the agent to exit (its output is the final
/// answer), or for the client's session to end (no final answer).
async fn next_turn(link: &Link, ctx: &TurnContext<'_>) -> Result<AssistantTurn> {
    if let Some(reply) = link.pending.lock().expect("pending").take() {
        let text = ctx.last_results().last().map(|(_, _, r)| r.to_string()).unwrap_or_default();
        let is_error = crate::agent::backends::is_layout_error(&text);
        let _ = reply.send(Answer { text, is_error });
    }
    link.functions.send_replace(Some(ctx.functions.to_vec()));
    let mut incoming = link.incoming.lock().await;
    let mut agent = link.agent.lock().await;
    let exited = async {
        match agent.as_mut() {
            Some(a) => a.wait().await,
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
        status = exited => {
            let status = status.context("mcp-agent: cannot wait for the agent")?;
            let output = match link.output.lock().await.take() {
                Some(h) => h.await.unwrap_or_default(),
                None => vec![],
            };
            if !status.success() {
                return Err(anyhow!("mcp-agent: the agent exited with {status}"));
            }
            let text = String::from_utf8_lossy(&output).trim().to_string();
            Ok(AssistantTurn { content: Some(text), ..Default::default() })
        }
        _ = link.closed.cancelled() => Ok(AssistantTurn::default()),
    }
}

impl Backend for McpAgentBackend {
    fn name(&self) -> &str {
        &self.name
    }

    /// Each episode runs an agent process (and its own model calls): a few at a time.
    fn concurrency(&self) -> usize {
        4
    }

    fn respond<'a>(&'a self, ctx: &'a TurnContext<'a>) -> BoxFuture<'a, Result<AssistantTurn>> {
        Box::pin(self.turn(ctx))
    }

    fn end_episode(&self, seed: u64) {
        if let Some(link) = self.links.lock().expect("links").remove(&seed) {
            link.stop.cancel();
            // Dropping the last handle kills an agent still running (kill_on_drop).
            if let Ok(mut agent) = link.agent.try_lock()
                && let Some(agent) = agent.as_mut()
            {
                let _ = agent.start_kill();
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
    /// The backend (labelled `name`) and what the transport serves.
    pub fn new(name: &str, query: &str) -> (ClientSession, Arc<dyn Served>) {
        let link = Link::new(query, None, None);
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
