//! A client session with one live MCP server (rmcp): one toolpick starts over stdio, the safe way, or
//! one already listening at a streamable-HTTP URL.
//!
//! The server is a child process toolpick starts itself, so the rules live here rather than with each
//! caller:
//! - **Scrubbed environment.** rmcp's child-process transport would pass the whole environment on —
//!   the model's API key included. The child gets only `PATH`, `HOME` (its own working directory),
//!   `TZ=UTC`, `LANG=C.UTF-8` and the variables the caller names for that server.
//! - **Its own home**: `HOME` is a fresh temporary directory unless the caller gives one (the working
//!   directory stays toolpick's, so relative paths on the command line mean what the user meant).
//! - **Only the capabilities asked for.** The tool list of some servers depends on them (server-everything
//!   lists 13 tools to a client declaring none, 16 with sampling and elicitation); `roots` declared
//!   here is answered with an empty list, which never widens what a server may touch (a filesystem
//!   server *replaces* its allowed directories with the roots a client names).
//! - Elicitation and sampling are answered by the session's [`Responder`] (a task's scripted user and
//!   the experiment's model, in a live run); without one, elicitation is declined and sampling refused.
//!   Every such request and every progress notification is logged as an [`Event`].
//! - Optionally the server runs **without network** (`unshare -n`, where the platform allows it; see
//!   [`network_isolation`]) and under resource limits (file size, core dumps).
//! - A server that announces `tools/list_changed` (server-everything registers tools after the
//!   handshake) is listed again until its list settles.
//! - **Every request has a time limit**: `initialize` and `tools/list` the session's
//!   [`Launch::request_timeout`] (default [`REQUEST_TIMEOUT`]), `tools/call` the caller's. A server
//!   that misses it ends the session with an error quoting the server's last lines on stderr.
//! - **Both protocol eras** ([`super::era`]): `server/discover` first (2026-07-28, stateless, every
//!   request then carrying its `_meta`), the `initialize` handshake (2025-11-25) when the server does
//!   not know it; the era that ran is [`ServerFacts::protocol_version`]. A 2026-07-28 server's
//!   `input_required` rounds are answered by the same [`Responder`] as a legacy server's requests.
//! - **Its stdout is read strictly** ([`super::wire`]): a line that is not JSON-RPC, or a message over
//!   16 MiB, ends the session at once with an error saying so (never a time-out), and every progress
//!   notification is logged before the result that follows it on the wire reaches the caller.
//! - The process runs in a group of its own and is stopped and reaped on every path
//!   ([`super::process`]).

use super::handler::Handler;
pub use super::handler::{
    BoxFuture, Capabilities, ElicitReply, Event, Progress, Responder, SampleReply,
};
use super::process::{ChildServer, TrackedDir};
pub use super::server_env::{MODEL_KEY_VARIABLES, check_env, scrubbed_env, secret_looking};
use super::wire::{Fault, Lines, Side, Tapped};
use anyhow::{Context, Result, anyhow};
use rmcp::model::CallToolRequestParams;
use rmcp::service::ClientServiceExt;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How to start a server: a program, its arguments and the only environment variables it gets besides
/// the fixed ones.
#[derive(Debug, Clone, Default)]
pub struct ServerCommand {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl ServerCommand {
    /// From a command line as words (`node path/to/index.js --flag`).
    pub fn from_words(words: &[String]) -> Result<Self> {
        let (program, args) = words.split_first().ok_or_else(|| {
            anyhow!("no server command given; pass it after `--`, e.g. -- node server/index.js")
        })?;
        Ok(ServerCommand { program: program.clone(), args: args.to_vec(), env: Vec::new() })
    }
}

/// What the server said about itself in the handshake.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerFacts {
    /// `serverInfo` as sent (name, version, title…), `null` when absent.
    pub server_info: Value,
    pub protocol_version: String,
    /// The server's capabilities, as sent.
    pub capabilities: Value,
    pub instructions: Option<String>,
}

/// A live session. Dropping it stops the server (see [`super::process`]); [`Session::close`] stops it
/// without blocking.
pub struct Session {
    service: RunningService<RoleClient, Handler>,
    list_changes: Arc<AtomicU64>,
    progress: Arc<std::sync::Mutex<Vec<Progress>>>,
    events: Arc<std::sync::Mutex<Vec<Event>>>,
    facts: ServerFacts,
    /// The server toolpick started (none for a server reached by URL). Declared after `service`, so
    /// a dropped session closes the server's stdin before stopping it.
    child: Option<ChildServer>,
    /// The home made for a server toolpick started (and its stderr log), removed with the session.
    _home: Option<TrackedDir>,
    /// The stderr log of a server toolpick started (none for a server reached by URL).
    stderr_path: PathBuf,
    request_timeout: Duration,
    /// Why the transport ended the session (a line that is not JSON-RPC, a message over 16 MiB).
    fault: Fault,
}

/// How long `initialize` and `tools/list` may take by default (a Node server starts in well under a
/// second, a Python one in a few on a busy machine).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a list must stay unchanged to count as settled.
const SETTLE: Duration = Duration::from_millis(300);
/// Lists taken at most while a server keeps announcing changes.
const MAX_LISTS: usize = 10;
/// Pages of one `tools/list` at most (a server whose cursor never ends must not hold toolpick).
const MAX_PAGES: usize = 1000;

impl Session {
    /// Start `command` with `HOME` at `home` (a fresh temporary directory when `None`) and complete the
    /// handshake ([`REQUEST_TIMEOUT`] for each request).
    pub async fn connect(
        command: &ServerCommand,
        capabilities: Capabilities,
        home: Option<&Path>,
    ) -> Result<Session> {
        let options = Launch { home: home.map(Path::to_path_buf), ..Default::default() };
        Session::launch(command, capabilities, &options).await
    }

    /// Start `command` as `options` say and complete the handshake.
    pub async fn launch(
        command: &ServerCommand,
        capabilities: Capabilities,
        options: &Launch,
    ) -> Result<Session> {
        check_env(&command.env)?;
        let temp = super::process::temp_dir("toolpick-mcp-")
            .context("cannot create a temporary directory for the server")?;
        let home = options.home.as_deref().unwrap_or(temp.path());
        let stderr_path = temp.path().join("server-stderr.log");
        let stderr = std::fs::File::create(&stderr_path)
            .with_context(|| format!("cannot create {}", stderr_path.display()))?;
        let wrapper: &[&str] =
            if options.isolate_network { network_isolation().unwrap_or(&[]) } else { &[] };
        let mut cmd = match wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = tokio::process::Command::new(first);
                c.args(rest).arg("--").arg(&command.program);
                c
            }
            None => tokio::process::Command::new(&command.program),
        };
        cmd.args(&command.args).env_clear().stderr(stderr);
        for (k, v) in scrubbed_env(home, &command.env) {
            cmd.env(k, v);
        }
        if let Some(dir) = &options.cwd {
            cmd.current_dir(dir);
        }
        if let Some(limit) = options.max_file_bytes {
            // SAFETY: only async-signal-safe calls (setrlimit) between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    let fsize = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                    let core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                    libc::setrlimit(libc::RLIMIT_FSIZE, &fsize);
                    libc::setrlimit(libc::RLIMIT_CORE, &core);
                    Ok(())
                });
            }
        }
        let mut child = super::process::spawn(&mut cmd).with_context(|| {
            format!(
                "cannot start the MCP server `{}`; is it installed and on PATH?",
                command.program
            )
        })?;
        let (stdout, stdin) =
            child.take_stdio().ok_or_else(|| anyhow!("the server has no stdio"))?;
        let handler = Handler::new(capabilities, options.responder.clone());
        let (list_changes, progress, events) =
            (handler.list_changes.clone(), handler.progress.clone(), handler.events.clone());
        let transport = Lines::new(stdout, stdin, Side::Client).with_tap(handler.progress_tap());
        let fault = transport.fault();
        let limit = options.request_timeout;
        let failure = match tokio::time::timeout(
            limit,
            handler.serve_with_lifecycle(transport, super::era::lifecycle()),
        )
        .await
        {
            Ok(Ok(service)) => match facts_of(&service, &command.program) {
                Ok(facts) => {
                    return Ok(Session {
                        service,
                        list_changes,
                        progress,
                        events,
                        facts,
                        child: Some(child),
                        _home: Some(temp),
                        stderr_path,
                        request_timeout: limit,
                        fault,
                    });
                }
                Err(e) => e.to_string(),
            },
            Ok(Err(e)) => format!(
                "the MCP server `{}` failed its handshake: {}",
                command.program,
                fault.get().unwrap_or_else(|| e.to_string())
            ),
            Err(_) => format!(
                "the MCP server `{}` did not answer `server/discover` or `initialize` within {} ms",
                command.program,
                limit.as_millis()
            ),
        };
        // Stopped before the error is written, so its stderr is complete.
        child.stop().await;
        Err(anyhow!("{failure}{}", stderr_tail(&stderr_path)))
    }

    /// Connect to a server already listening at a streamable-HTTP `url` (`http://127.0.0.1:PORT/mcp`),
    /// [`REQUEST_TIMEOUT`] for each request.
    pub async fn connect_http(url: &str, capabilities: Capabilities) -> Result<Session> {
        Session::connect_http_answering(url, capabilities, None, REQUEST_TIMEOUT).await
    }

    /// [`Session::connect_http`], with `responder` answering the server's elicitation and sampling
    /// requests (a live session's script and model).
    pub async fn connect_http_answering(
        url: &str,
        capabilities: Capabilities,
        responder: Option<Arc<dyn Responder>>,
        request_timeout: Duration,
    ) -> Result<Session> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(crate::error::InputError::new("--url", format!("`{url}` is not an http(s) URL; pass the server's endpoint, e.g. http://127.0.0.1:8080/mcp")).into());
        }
        let handler = Handler::new(capabilities, responder);
        let transport = Tapped::new(
            rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_string()),
            handler.progress_tap(),
        );
        let (list_changes, progress, events) =
            (handler.list_changes.clone(), handler.progress.clone(), handler.events.clone());
        let service = match tokio::time::timeout(
            request_timeout,
            handler.serve_with_lifecycle(transport, super::era::lifecycle()),
        )
        .await
        {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return Err(anyhow!(
                    "the MCP server at {url} failed its handshake: {e}; is it listening there, and is the path (often /mcp) right?"
                ));
            }
            Err(_) => {
                return Err(anyhow!(
                    "the MCP server at {url} did not answer `server/discover` or `initialize` within {} ms",
                    request_timeout.as_millis()
                ));
            }
        };
        let facts = facts_of(&service, url)?;
        Ok(Session {
            service,
            list_changes,
            progress,
            events,
            facts,
            child: None,
            _home: None,
            stderr_path: PathBuf::new(),
            request_timeout,
            fault: Fault::default(),
        })
    }

    /// Whether the session can no longer be used: its transport has ended or the server it started
    /// has exited (a warm server that died while waiting for its trial: `run::live_pool`).
    pub fn is_gone(&mut self) -> bool {
        self.service.is_transport_closed() || self.child.as_mut().is_some_and(ChildServer::exited)
    }

    pub fn facts(&self) -> &ServerFacts {
        &self.facts
    }

    /// Every tool (all pages), as `tools/list` entries on the wire, once the list has stopped changing.
    pub async fn list_tools(&self) -> Result<Vec<Value>> {
        let mut tools = Vec::new();
        for _ in 0..MAX_LISTS {
            let before = self.list_changes.load(Ordering::SeqCst);
            tools = self.list_all_tools().await?;
            tokio::time::sleep(SETTLE).await;
            if self.list_changes.load(Ordering::SeqCst) == before {
                return Ok(tools);
            }
        }
        crate::messages::note(format_args!(
            "the server kept announcing tool list changes; using its list after {MAX_LISTS} reads"
        ));
        Ok(tools)
    }

    /// Every tool (all pages) as listed now, without waiting for the list to settle (a client that
    /// lists before each turn, like an agent: toolpick's own served layouts announce no changes).
    pub async fn list_tools_now(&self) -> Result<Vec<Value>> {
        self.list_all_tools().await
    }

    /// One `tools/list` (every page, each within the request time limit), the entries as sent: the
    /// request goes out untyped, so one entry rmcp's types refuse (a hint that is not a boolean, an
    /// odd schema) comes back for the importer to judge rather than sinking the whole list.
    async fn list_all_tools(&self) -> Result<Vec<Value>> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| serde_json::json!({ "cursor": c }));
            let request = rmcp::model::ClientRequest::CustomRequest(
                rmcp::model::CustomRequest::new("tools/list", params),
            );
            let answer =
                tokio::time::timeout(self.request_timeout, self.service.send_request(request))
                    .await
                    .map_err(|_| {
                        anyhow!(
                            "the MCP server did not answer `tools/list` within {} ms{}",
                            self.request_timeout.as_millis(),
                            stderr_tail(&self.stderr_path)
                        )
                    })?
                    .map_err(|e| {
                        anyhow!(
                            "tools/list failed: {}{}",
                            self.why(e),
                            stderr_tail(&self.stderr_path)
                        )
                    })?;
            let page = match answer {
                rmcp::model::ServerResult::ListToolsResult(r) => {
                    serde_json::to_value(&r).context("cannot read a tools/list result")?
                }
                rmcp::model::ServerResult::CustomResult(raw) => raw.0,
                _ => anyhow::bail!(
                    "the MCP server answered `tools/list` with another kind of result{}",
                    stderr_tail(&self.stderr_path)
                ),
            };
            let Some(entries) = page.get("tools").and_then(Value::as_array) else {
                let mut shown = page.to_string();
                shown.truncate(200);
                anyhow::bail!(
                    "the MCP server's `tools/list` result has no `tools` list: {shown}{}",
                    stderr_tail(&self.stderr_path)
                );
            };
            tools.extend(entries.iter().cloned());
            cursor = page.get("nextCursor").and_then(Value::as_str).map(String::from);
            if cursor.is_none() {
                return Ok(tools);
            }
        }
        anyhow::bail!("the MCP server's `tools/list` went on past {MAX_PAGES} pages")
    }

    /// Call a tool; the result as it came on the wire (`content`, `structuredContent`, `isError`).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value> {
        match self.call_tool_live(name, arguments, timeout).await? {
            Ok(result) => Ok(result),
            Err(message) => Err(anyhow!("tools/call `{name}` failed: {message}")),
        }
    }

    /// Call a tool, telling the server's own failures from the session's: `Ok(Err(message))` when the
    /// server answered with a JSON-RPC error (the tool failed, as with `isError`), `Err` when the session
    /// broke (the server crashed, hung past `timeout`, or sent what is not JSON-RPC).
    pub async fn call_tool_live(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Result<Value, String>> {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let result = tokio::time::timeout(
            timeout,
            self.service.call_tool_with_mrtr_max_rounds(params, super::era::MAX_INPUT_ROUNDS),
        )
        .await
        .map_err(|_| {
            anyhow!(
                "tools/call `{name}` did not finish within {} ms{}",
                timeout.as_millis(),
                stderr_tail(&self.stderr_path)
            )
        })?;
        match result {
            Ok(result) => {
                Ok(Ok(serde_json::to_value(&result).context("cannot read a tools/call result")?))
            }
            Err(rmcp::ServiceError::McpError(e)) => {
                Ok(Err(format!("MCP error {}: {}", e.code.0, e.message)))
            }
            Err(e) => Err(anyhow!(
                "tools/call `{name}` failed: {}{}",
                self.why(e),
                stderr_tail(&self.stderr_path)
            )),
        }
    }

    /// What broke the session: the transport's fault when it ended it, else rmcp's error.
    fn why(&self, e: impl std::fmt::Display) -> String {
        self.fault.get().unwrap_or_else(|| e.to_string())
    }

    /// The events (progress, elicitation, sampling) logged since the last call of this.
    pub fn take_events(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().expect("event log"))
    }

    /// The progress notifications received since the last call of this (rmcp puts a progress token on
    /// every request, so a server that reports progress reports it for any call).
    pub fn take_progress(&self) -> Vec<Progress> {
        std::mem::take(&mut *self.progress.lock().expect("progress log"))
    }

    /// End the session and stop the server: its stdin closed, then SIGTERM and SIGKILL to its group
    /// as [`super::process`] says; bounded by those grace periods.
    pub async fn close(self) -> Result<()> {
        let Session { service, child, .. } = self;
        let cancelled = tokio::time::timeout(super::process::STDIN_GRACE, service.cancel()).await;
        if let Some(child) = child {
            child.stop().await;
        }
        match cancelled {
            Ok(Err(e)) => Err(anyhow!("cannot end the MCP session: {e}")),
            _ => Ok(()),
        }
    }
}

/// How to start a server beyond its command line.
#[derive(Clone)]
pub struct Launch {
    /// `HOME` for the server (default: a fresh temporary directory).
    pub home: Option<PathBuf>,
    /// Working directory (default: toolpick's).
    pub cwd: Option<PathBuf>,
    /// Run it without network where the platform allows ([`network_isolation`]).
    pub isolate_network: bool,
    /// Largest file the server may write (RLIMIT_FSIZE; its stderr log included).
    pub max_file_bytes: Option<u64>,
    /// Who answers its elicitation and sampling requests.
    pub responder: Option<Arc<dyn Responder>>,
    /// How long `initialize` and `tools/list` may take.
    pub request_timeout: Duration,
}

impl Default for Launch {
    fn default() -> Self {
        Launch {
            home: None,
            cwd: None,
            isolate_network: false,
            max_file_bytes: None,
            responder: None,
            request_timeout: REQUEST_TIMEOUT,
        }
    }
}

/// The command prefix that starts a process in a network namespace of its own (only a loopback
/// interface, down): `unshare -n` when toolpick may create one (root), `unshare -rn` (a user namespace
/// too) for other users where the kernel allows that; `None` where neither works. Probed once.
pub fn network_isolation() -> Option<&'static [&'static str]> {
    static PROBE: std::sync::OnceLock<Option<&'static [&'static str]>> = std::sync::OnceLock::new();
    *PROBE.get_or_init(|| {
        const ROOT: &[&str] = &["unshare", "-n"];
        const USER: &[&str] = &["unshare", "-rn"];
        [ROOT, USER].into_iter().find(|prefix| {
            std::process::Command::new(prefix[0])
                .args(&prefix[1..])
                .arg("true")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    })
}

/// What the handshake told about the server.
fn facts_of(service: &RunningService<RoleClient, Handler>, which: &str) -> Result<ServerFacts> {
    let info = service
        .peer_info()
        .ok_or_else(|| anyhow!("the MCP server `{which}` sent no initialize result"))?;
    Ok(ServerFacts {
        server_info: info
            .server_info
            .as_ref()
            .map(|i| serde_json::to_value(i).unwrap_or(Value::Null))
            .unwrap_or(Value::Null),
        protocol_version: info.protocol_version.to_string(),
        capabilities: serde_json::to_value(&info.capabilities).unwrap_or(Value::Null),
        instructions: info.instructions.clone(),
    })
}

/// The last lines the server wrote to stderr, for an error message.
fn stderr_tail(path: &Path) -> String {
    if path.as_os_str().is_empty() {
        return String::new();
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = &lines[lines.len().saturating_sub(5)..];
    format!("\nthe server's last words on stderr:\n  {}", tail.join("\n  "))
}
