//! toolpick as an MCP server: whatever a [`Served`] offers (a layout's functions for one task, in
//! `run::serving::agent_backend`) served over stdio or streamable HTTP with rmcp.
//!
//! The server knows nothing of layouts or scoring: `tools/list` returns the functions on offer now,
//! `tools/call` hands the call over and returns the answer as a text result (`isError` when the layout
//! answered with an error). HTTP binds loopback unless the caller explicitly allows another address
//! ([`check_bind`]); every HTTP request passes `mcp::http`'s checks first (`Host`, `Origin`, a
//! session for everything but `initialize` in the 2025-11-25 era).
//!
//! **Both protocol eras** ([`super::era`]), over stdio and HTTP alike: rmcp answers `initialize`
//! (2025-11-25 and before) and `server/discover` (2026-07-28), and checks a stateless request's
//! `_meta`. A stateless request belongs to no session: it is served by what [`Served::stateless`]
//! gives for that one request (the whole server's offer; a fresh per-session state, sandbox
//! included, where each session gets its own; or a JSON-RPC error saying why it cannot be served,
//! where a session is a task's conversation). `tools/list` lists the functions in the order the layout offers them, the same
//! for the same offer (the 2026-07-28 revision asks servers for a deterministic order).

use crate::protocol::FunctionDef;
use anyhow::{Result, anyhow};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'static>>;

/// The answer to one served call.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
    /// The whole `tools/call` result to pass on as it is (`content` blocks of every kind,
    /// `structuredContent`, `_meta`): a live upstream server's, when the call reached it. `None`
    /// serves `text` as one text block.
    pub result: Option<Value>,
}

/// The most characters of an error a served session sends back (the rest is cut and counted): an
/// error may quote the call's arguments, and a 5 MB argument must not come back whole.
pub const MAX_ERROR_CHARS: usize = 2000;

/// `text` cut to [`MAX_ERROR_CHARS`], saying how much was cut.
pub fn capped(text: &str) -> String {
    crate::text::capped(text, MAX_ERROR_CHARS).into_owned()
}

/// What one served session offers.
pub trait Served: Send + Sync + 'static {
    /// The functions on offer now (a layout that loads tools on demand grows them).
    fn functions(&self) -> BoxFuture<Vec<FunctionDef>>;
    /// Answer a call (`arguments` as JSON text, as a chat-completions call carries them).
    fn call(&self, name: String, arguments: String) -> BoxFuture<Answer>;
    /// The `instructions` of the initialize result (the task's query, in a task session).
    fn instructions(&self) -> Option<String> {
        None
    }
    /// The client introduced itself (`clientInfo` name and version).
    fn client(&self, _name: &str, _version: &str) {}
    /// The MCP `annotations` of a served function (a catalog tool's hints, as the catalog has them).
    fn annotations(&self, _function: &str) -> Option<Value> {
        None
    }
    /// The `outputSchema` of a served function: only where its calls answer with the upstream's whole
    /// result (whose `structuredContent` the schema describes), i.e. served live.
    fn output_schema(&self, _function: &str) -> Option<Value> {
        None
    }
    /// What serves one request outside any session (the stateless 2026-07-28 era): `None` serves
    /// `self`; a served state made for that request alone where each session gets its own; `Err`
    /// says why such a request cannot be served (a session is a task's conversation).
    fn stateless(&self) -> Result<Option<Arc<dyn Served>>, String> {
        Ok(None)
    }
    /// A new session begins (`task`: the `?task=` of its HTTP URL; `client`: its `clientInfo` name and
    /// version). What it returns serves that session alone; `None` keeps serving `self`. An error
    /// refuses the session (the client's `initialize` fails with it).
    fn session(
        &self,
        _task: Option<&str>,
        _client: &str,
    ) -> Result<Option<Arc<dyn Served>>, String> {
        Ok(None)
    }
}

/// The rmcp handler over a [`Served`].
#[derive(Clone)]
pub struct Server {
    served: Arc<dyn Served>,
    /// What this session serves, once [`Served::session`] chose it at `initialize`.
    session: Arc<std::sync::OnceLock<Arc<dyn Served>>>,
}

impl Server {
    pub fn new(served: Arc<dyn Served>) -> Server {
        Server { served, session: Default::default() }
    }

    fn current(&self) -> &Arc<dyn Served> {
        self.session.get().unwrap_or(&self.served)
    }

    /// What serves a request: its session's, or for a stateless one (2026-07-28, no session) what
    /// [`Served::stateless`] gives.
    fn serving(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Arc<dyn Served>, rmcp::ErrorData> {
        if let Some(session) = self.session.get() {
            return Ok(session.clone());
        }
        let stateless =
            context.meta.protocol_version().is_some_and(|v| super::era::is_stateless(v.as_str()));
        if !stateless {
            return Ok(self.served.clone());
        }
        match self.served.stateless() {
            Ok(one) => Ok(one.unwrap_or_else(|| self.served.clone())),
            Err(why) => Err(rmcp::ErrorData::invalid_request(
                format!(
                    "a stateless ({}) request cannot be served here: {why}; connect with `initialize` (protocol {}) for a session",
                    super::era::STATELESS,
                    super::era::HANDSHAKE
                ),
                None,
            )),
        }
    }
}

/// The `task` parameter of a URL's query (`/mcp?task=dev-001`), percent-decoded.
fn task_parameter(query: &str) -> Option<String> {
    let raw = query.split('&').find_map(|pair| pair.strip_prefix("task="))?;
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
                continue;
            }
            (b'+', _) => out.push(b' '),
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok().filter(|t| !t.is_empty())
}

fn internal(e: impl std::fmt::Display) -> rmcp::ErrorData {
    rmcp::ErrorData::internal_error(e.to_string(), None)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "toolpick", "version": env!("CARGO_PKG_VERSION")},
        });
        if let Some(text) = self.current().instructions() {
            info["instructions"] = json!(text);
        }
        serde_json::from_value(info).expect("a valid initialize result")
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerConfig, rmcp::ErrorData> {
        let wire = serde_json::to_value(&request).unwrap_or(Value::Null);
        let (name, version) = (
            wire.pointer("/clientInfo/name").and_then(Value::as_str).unwrap_or(""),
            wire.pointer("/clientInfo/version").and_then(Value::as_str).unwrap_or(""),
        );
        self.served.client(name, version);
        let task = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.uri.query())
            .and_then(task_parameter);
        let client = format!("{name} {version}").trim().to_string();
        if let Some(session) = self
            .served
            .session(task.as_deref(), &client)
            .map_err(|e| rmcp::ErrorData::invalid_params(e, None))?
        {
            let _ = self.session.set(session);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        let served = self.serving(&context)?;
        let served = &served;
        let functions = served.functions().await;
        let tools: Vec<Value> = functions
            .iter()
            .map(|f| {
                let mut tool = json!({"name": f.name, "description": f.description, "inputSchema": input_schema(&f.parameters)});
                if let Some(a) = served.annotations(&f.name) {
                    tool["annotations"] = a;
                }
                if let Some(schema) = served.output_schema(&f.name) {
                    tool["outputSchema"] = schema;
                }
                tool
            })
            .collect();
        serde_json::from_value(json!({ "tools": tools })).map_err(internal)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let served = self.serving(&context)?;
        let offered = served.functions().await.iter().any(|f| f.name == request.name.as_ref());
        let arguments =
            request.arguments.map(|m| Value::Object(m).to_string()).unwrap_or_else(|| "{}".into());
        // Called even when the name is not on offer, so the layout records (and teaches) the call as
        // it does in process; the client gets the protocol's answer to an unknown tool, -32602.
        let answer = served.call(request.name.to_string(), arguments).await;
        if !offered && answer.is_error {
            return Err(rmcp::ErrorData::invalid_params(capped(&answer.text), None));
        }
        let result = match answer.result {
            Some(whole) => whole,
            None => {
                let text = if answer.is_error { capped(&answer.text) } else { answer.text };
                let mut r = json!({"content": [{"type": "text", "text": text}]});
                if answer.is_error {
                    r["isError"] = json!(true);
                }
                r
            }
        };
        let result: rmcp::model::CallToolResult =
            serde_json::from_value(result).map_err(internal)?;
        Ok(result.into())
    }

    /// A request rmcp could not read as the method it names: a `tools/call` (or any other MCP method)
    /// whose params are malformed is invalid params (-32602), not an unknown method (rmcp's -32601).
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, rmcp::ErrorData> {
        const KNOWN: &[&str] =
            &["initialize", "server/discover", "ping", "tools/list", "tools/call"];
        let method = request.method.as_str();
        if KNOWN.contains(&method) {
            let params = request.params.map(|p| p.to_string()).unwrap_or_else(|| "none".into());
            return Err(rmcp::ErrorData::invalid_params(
                capped(&format!("malformed `{method}` params: {params}")),
                None,
            ));
        }
        Err(rmcp::ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("no method `{}`", capped(method)),
            None,
        ))
    }
}

/// An input schema as MCP wants it: an object schema (a function without parameters gets `{}` ones).
fn input_schema(parameters: &Value) -> Value {
    match parameters {
        Value::Object(o) if !o.is_empty() => parameters.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// Refuse to listen beyond this machine unless asked: a served catalog executes calls. Listening on
/// every address (`0.0.0.0`, `::`) also needs the name remote clients use (`allow_hosts`, from
/// `--allow-host`): every other `Host` is refused ([`super::http`]), so without it no remote client
/// could be served.
pub fn check_bind(addr: &SocketAddr, allow_remote: bool, allow_hosts: &[String]) -> Result<()> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !allow_remote {
        return Err(crate::error::InputError::new("--http", format!("{addr} is not a loopback address; serving beyond this machine needs --allow-remote (anyone who reaches it can run the catalog's tools)")).into());
    }
    if addr.ip().is_unspecified() && allow_hosts.is_empty() {
        return Err(crate::error::InputError::new("--allow-host", format!("{addr} listens on every address: name the host remote clients reach this server by with --allow-host NAME (requests naming any other Host are refused, against DNS rebinding)")).into());
    }
    Ok(())
}

/// Serve over stdin/stdout until the client closes the session (a line that is not JSON-RPC is
/// answered with a parse error, −32700, and the session goes on: [`super::wire`]).
pub async fn serve_stdio(served: Arc<dyn Served>) -> Result<()> {
    use rmcp::ServiceExt;
    let running = Server::new(served)
        .serve(super::wire::Lines::new(
            tokio::io::stdin(),
            crate::messages::protocol_stdout(),
            super::wire::Side::Server,
        ))
        .await
        .map_err(|e| anyhow!("the MCP session did not start: {e}"))?;
    running.waiting().await.map_err(|e| anyhow!("the MCP session failed: {e}"))?;
    Ok(())
}

/// A streamable-HTTP server at `/mcp` on `listener` for loopback clients, until `stop` is cancelled
/// (the checks and the listener are [`super::http`]'s).
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    served: Arc<dyn Served>,
    stop: StopSignal,
) -> Result<()> {
    serve_http_with(listener, served, stop, &super::http::HttpPolicy::default()).await
}

/// [`serve_http`] under `policy` (the `--allow-host`, `--allow-origin` and `--session-idle-ms` flags).
/// A handler per session: each may be given its own [`Served`] at `initialize`.
pub async fn serve_http_with(
    listener: tokio::net::TcpListener,
    served: Arc<dyn Served>,
    stop: StopSignal,
    policy: &super::http::HttpPolicy,
) -> Result<()> {
    super::http::serve(listener, move || Server::new(served.clone()), stop, policy).await
}

/// A one-shot stop signal for [`serve_http`] and the bridge's sessions: once [`StopSignal::cancel`]
/// is called, every [`StopSignal::cancelled`], earlier or later, returns. Written here because
/// tokio-util's `CancellationToken` is only an indirect dependency (through rmcp), not one of ours.
#[derive(Clone, Default)]
pub struct StopSignal(Arc<(tokio::sync::Notify, std::sync::atomic::AtomicBool)>);

impl StopSignal {
    pub fn cancel(&self) {
        self.0.1.store(true, std::sync::atomic::Ordering::SeqCst);
        self.0.0.notify_waiters();
    }

    pub async fn cancelled(&self) {
        loop {
            // Registered before the flag is read, so a cancel between the two is not missed.
            let notified = self.0.0.notified();
            if self.0.1.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_binds_without_the_flag() {
        let none: &[String] = &[];
        assert!(check_bind(&"127.0.0.1:0".parse().unwrap(), false, none).is_ok());
        assert!(check_bind(&"[::1]:0".parse().unwrap(), false, none).is_ok());
        let err = check_bind(&"0.0.0.0:8080".parse().unwrap(), false, none).unwrap_err();
        assert!(format!("{err:#}").contains("--allow-remote"));
        // Every address, remote allowed: the name clients use is needed too.
        let err = check_bind(&"0.0.0.0:8080".parse().unwrap(), true, none).unwrap_err();
        assert!(format!("{err:#}").contains("--allow-host"));
        let named = ["mcp.example.lan".to_string()];
        assert!(check_bind(&"0.0.0.0:8080".parse().unwrap(), true, &named).is_ok());
        // A specific address is a name clients can use.
        assert!(check_bind(&"192.168.1.5:8080".parse().unwrap(), true, none).is_ok());
        assert_eq!(input_schema(&json!({})), json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn the_task_parameter_is_read_from_the_query_and_decoded() {
        assert_eq!(task_parameter("task=dev-001").as_deref(), Some("dev-001"));
        assert_eq!(task_parameter("x=1&task=a%2Fb+c").as_deref(), Some("a/b c"));
        assert_eq!(task_parameter("task=50%").as_deref(), Some("50%"));
        assert_eq!(task_parameter("task=").as_deref(), None);
        assert_eq!(task_parameter("tasks=x").as_deref(), None);
    }
}
