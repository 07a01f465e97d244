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
//! - Elicitation is declined and sampling refused: a session without a script answers nothing for the user.
//! - A server that announces `tools/list_changed` (server-everything registers tools after the
//!   handshake) is listed again until its list settles.

use anyhow::{Context, Result, anyhow};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, Implementation, InitializeRequestParams};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
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
        let (program, args) = words.split_first().ok_or_else(|| anyhow!("no server command given; pass it after `--`, e.g. -- node server/index.js"))?;
        Ok(ServerCommand { program: program.clone(), args: args.to_vec(), env: Vec::new() })
    }
}

/// Client capabilities to declare in `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    pub sampling: bool,
    pub elicitation: bool,
    pub roots: bool,
}

impl Capabilities {
    /// From a comma-separated list (`sampling,elicitation,roots`; empty for none).
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut caps = Capabilities::default();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "sampling" => caps.sampling = true,
                "elicitation" => caps.elicitation = true,
                "roots" => caps.roots = true,
                other => return Err(format!("unknown client capability `{other}`; choose from sampling, elicitation, roots")),
            }
        }
        Ok(caps)
    }

    /// The capabilities as they go on the wire.
    pub fn to_wire(self) -> Value {
        let mut caps = serde_json::Map::new();
        if self.elicitation {
            caps.insert("elicitation".into(), json!({"form": {}, "url": {}}));
        }
        if self.roots {
            caps.insert("roots".into(), json!({"listChanged": false}));
        }
        if self.sampling {
            caps.insert("sampling".into(), json!({}));
        }
        Value::Object(caps)
    }
}

/// One `notifications/progress` a server sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// The client side of a session: declares the capabilities, counts list changes, records progress.
#[derive(Clone)]
struct Handler {
    capabilities: Capabilities,
    list_changes: Arc<AtomicU64>,
    progress: Arc<std::sync::Mutex<Vec<Progress>>>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changes.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_progress(&self, params: rmcp::model::ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let p = Progress { progress: params.progress, total: params.total, message: params.message };
        self.progress.lock().expect("progress log").push(p);
    }

    fn get_info(&self) -> InitializeRequestParams {
        let capabilities: ClientCapabilities = serde_json::from_value(self.capabilities.to_wire()).unwrap_or_default();
        InitializeRequestParams::new(capabilities, Implementation::new("toolpick", env!("CARGO_PKG_VERSION")))
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

/// A live session. Dropping it stops the server.
pub struct Session {
    service: RunningService<RoleClient, Handler>,
    list_changes: Arc<AtomicU64>,
    progress: Arc<std::sync::Mutex<Vec<Progress>>>,
    facts: ServerFacts,
    /// The home made for a server toolpick started (and its stderr log), removed with the session.
    _home: Option<tempfile::TempDir>,
    /// The stderr log of a server toolpick started (none for a server reached by URL).
    stderr_path: PathBuf,
}

/// How long the handshake may take (a Node server starts in well under a second).
const HANDSHAKE: Duration = Duration::from_secs(30);
/// How long a list must stay unchanged to count as settled.
const SETTLE: Duration = Duration::from_millis(300);
/// Lists taken at most while a server keeps announcing changes.
const MAX_LISTS: usize = 10;

impl Session {
    /// Start `command` with `HOME` at `home` (a fresh temporary directory when `None`) and complete the
    /// handshake.
    pub async fn connect(command: &ServerCommand, capabilities: Capabilities, home: Option<&Path>) -> Result<Session> {
        let temp = tempfile::Builder::new().prefix("toolpick-mcp-").tempdir().context("cannot create a temporary directory for the server")?;
        let home = home.unwrap_or(temp.path());
        let stderr_path = temp.path().join("server-stderr.log");
        let stderr = std::fs::File::create(&stderr_path).with_context(|| format!("cannot create {}", stderr_path.display()))?;
        let mut cmd = tokio::process::Command::new(&command.program);
        cmd.args(&command.args).env_clear();
        for (k, v) in scrubbed_env(home, &command.env) {
            cmd.env(k, v);
        }
        let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("cannot start the MCP server `{}`; is it installed and on PATH?", command.program))?;
        let list_changes = Arc::new(AtomicU64::new(0));
        let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
        let handler = Handler { capabilities, list_changes: list_changes.clone(), progress: progress.clone() };
        let service = match tokio::time::timeout(HANDSHAKE, handler.serve(transport)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(anyhow!("the MCP server `{}` failed its handshake: {e}{}", command.program, stderr_tail(&stderr_path))),
            Err(_) => return Err(anyhow!("the MCP server `{}` did not answer `initialize` within {} s{}", command.program, HANDSHAKE.as_secs(), stderr_tail(&stderr_path))),
        };
        let facts = facts_of(&service, &command.program)?;
        Ok(Session { service, list_changes, progress, facts, _home: Some(temp), stderr_path })
    }

    /// Connect to a server already listening at a streamable-HTTP `url` (`http://127.0.0.1:PORT/mcp`).
    pub async fn connect_http(url: &str, capabilities: Capabilities) -> Result<Session> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(crate::error::InputError::new("--url", format!("`{url}` is not an http(s) URL; pass the server's endpoint, e.g. http://127.0.0.1:8080/mcp")).into());
        }
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_string());
        let list_changes = Arc::new(AtomicU64::new(0));
        let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
        let handler = Handler { capabilities, list_changes: list_changes.clone(), progress: progress.clone() };
        let service = match tokio::time::timeout(HANDSHAKE, handler.serve(transport)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(anyhow!("the MCP server at {url} failed its handshake: {e}; is it listening there, and is the path (often /mcp) right?")),
            Err(_) => return Err(anyhow!("the MCP server at {url} did not answer `initialize` within {} s", HANDSHAKE.as_secs())),
        };
        let facts = facts_of(&service, url)?;
        Ok(Session { service, list_changes, progress, facts, _home: None, stderr_path: PathBuf::new() })
    }

    pub fn facts(&self) -> &ServerFacts {
        &self.facts
    }

    /// Every tool (all pages), as `tools/list` entries on the wire, once the list has stopped changing.
    pub async fn list_tools(&self) -> Result<Vec<Value>> {
        let mut tools = Vec::new();
        for _ in 0..MAX_LISTS {
            let before = self.list_changes.load(Ordering::SeqCst);
            tools = self.service.list_all_tools().await.map_err(|e| anyhow!("tools/list failed: {e}{}", stderr_tail(&self.stderr_path)))?;
            tokio::time::sleep(SETTLE).await;
            if self.list_changes.load(Ordering::SeqCst) == before {
                return tools.iter().map(|t| serde_json::to_value(t).context("cannot read a tools/list entry")).collect();
            }
        }
        eprintln!("note: the server kept announcing tool list changes; using its list after {MAX_LISTS} reads");
        tools.iter().map(|t| serde_json::to_value(t).context("cannot read a tools/list entry")).collect()
    }

    /// Call a tool; the result as it came on the wire (`content`, `structuredContent`, `isError`).
    pub async fn call_tool(&self, name: &str, arguments: serde_json::Map<String, Value>, timeout: Duration) -> Result<Value> {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let result = tokio::time::timeout(timeout, self.service.call_tool(params))
            .await
            .map_err(|_| anyhow!("tools/call `{name}` did not finish within {} ms", timeout.as_millis()))?
            .map_err(|e| anyhow!("tools/call `{name}` failed: {e}{}", stderr_tail(&self.stderr_path)))?;
        serde_json::to_value(&result).context("cannot read a tools/call result")
    }

    /// The progress notifications received since the last call of this (rmcp puts a progress token on
    /// every request, so a server that reports progress reports it for any call).
    pub fn take_progress(&self) -> Vec<Progress> {
        std::mem::take(&mut *self.progress.lock().expect("progress log"))
    }

    /// End the session and stop the server.
    pub async fn close(self) -> Result<()> {
        self.service.cancel().await.map_err(|e| anyhow!("cannot stop the MCP server: {e}"))?;
        Ok(())
    }
}

/// What the handshake told about the server.
fn facts_of(service: &RunningService<RoleClient, Handler>, which: &str) -> Result<ServerFacts> {
    let info = service.peer_info().ok_or_else(|| anyhow!("the MCP server `{which}` sent no initialize result"))?;
    Ok(ServerFacts {
        server_info: info.server_info.as_ref().map(|i| serde_json::to_value(i).unwrap_or(Value::Null)).unwrap_or(Value::Null),
        protocol_version: info.protocol_version.to_string(),
        capabilities: serde_json::to_value(&info.capabilities).unwrap_or(Value::Null),
        instructions: info.instructions.clone(),
    })
}

/// The environment a server gets: the fixed variables and the ones named for it, nothing inherited
/// (API keys and tokens in toolpick's own environment must never reach a tool server).
pub fn scrubbed_env(home: &Path, extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = vec![
        ("PATH".to_string(), std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into())),
        ("HOME".to_string(), home.display().to_string()),
        ("TZ".to_string(), "UTC".to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
    ];
    for (k, v) in extra {
        env.retain(|(name, _)| name != k);
        env.push((k.clone(), v.clone()));
    }
    env
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_parse_and_go_on_the_wire_as_declared() {
        assert_eq!(Capabilities::parse("").unwrap(), Capabilities::default());
        let all = Capabilities::parse("sampling, elicitation,roots").unwrap();
        assert_eq!(all.to_wire(), json!({"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": false}, "sampling": {}}));
        assert_eq!(Capabilities::default().to_wire(), json!({}));
        assert!(Capabilities::parse("sampling,tasks").unwrap_err().contains("`tasks`"));
    }

    #[test]
    fn the_environment_is_the_fixed_set_plus_what_the_server_is_given() {
        let env = scrubbed_env(Path::new("/sandbox"), &[("MEMORY_FILE_PATH".into(), "/sandbox/m.jsonl".into()), ("TZ".into(), "Europe/Paris".into())]);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["PATH", "HOME", "LANG", "MEMORY_FILE_PATH", "TZ"]);
        assert!(env.contains(&("HOME".into(), "/sandbox".into())));
        assert!(env.contains(&("TZ".into(), "Europe/Paris".into())));
    }
}
