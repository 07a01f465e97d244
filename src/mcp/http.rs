//! The streamable-HTTP front of `toolpick mcp serve --http` and `mcp proxy --http`: what every request
//! passes before rmcp's `StreamableHttpService` sees it, and the listener it is served on.
//!
//! A served catalog executes calls (live ones in a real server's sandbox), so the transport rules of
//! the MCP specification (2025-06-18, 2025-11-25) are enforced here, in one place, each refusal
//! answered with a JSON-RPC error body (`code` −32000, as the reference TypeScript SDK answers them):
//!
//! - **`Host`** (against DNS rebinding): a loopback name (`localhost`, `127.0.0.1`, `::1`), the address
//!   the server is bound to, or a name given with `--allow-host`; anything else is 403. rmcp's own
//!   check (loopback names only, plain-text refusals) is turned off: this one replaces it.
//! - **`Origin`** (the specification's MUST): absent, or a loopback origin (`http`/`https` on a
//!   loopback name, any port), or one given with `--allow-origin`; anything else, `null` included, is
//!   403.
//! - **Sessions, by protocol era** ([`super::era`]): a request of the 2025-11-25 era (and before)
//!   must carry `Mcp-Session-Id`, `initialize` alone excepted (400 otherwise, as that transport says):
//!   toolpick keeps a session per such client (its own conversation, its own live sandbox). A request
//!   of the stateless 2026-07-28 era (its protocol version in `_meta`
//!   `io.modelcontextprotocol/protocolVersion`, as that revision requires of every request) needs no
//!   session and goes to rmcp, which checks the rest of its `_meta` and the `MCP-Protocol-Version`
//!   header against it; where serving needs a session (a live sandbox, a task session), `mcp::serve`
//!   refuses its `tools/call` saying so. A 2026-07-28 `MCP-Protocol-Version` header on a request
//!   without that `_meta` is refused with 400: neither era's request.
//! - **Idle sessions** end after [`HttpPolicy::session_idle`] without a message (`--session-idle-ms`,
//!   default [`DEFAULT_SESSION_IDLE`]): what an abandoned session holds (its live server and sandbox,
//!   its buffers) is released then.
//!
//! Every accepted socket gets `TCP_NODELAY`: a response's small writes (headers, then SSE events)
//! otherwise wait on the client's delayed ACK, ≈ 40 ms per call.

use crate::error::InputError;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How long a session may go without a message before it ends (`--session-idle-ms`'s default).
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);
/// Largest request body read (rmcp's own limit, given to it too so the two agree).
pub const MAX_BODY_BYTES: usize = 4 << 20;
/// The names a client on this machine reaches a loopback server by.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Who may talk to the server, and how long an idle session lives.
#[derive(Debug, Clone)]
pub struct HttpPolicy {
    /// `Host` names accepted beyond the loopback ones (`--allow-host`, the bound address).
    hosts: Vec<Authority>,
    /// Origins accepted beyond the loopback ones (`--allow-origin`).
    origins: Vec<Origin>,
    pub session_idle: Duration,
}

impl Default for HttpPolicy {
    /// Loopback clients only.
    fn default() -> HttpPolicy {
        HttpPolicy { hosts: vec![], origins: vec![], session_idle: DEFAULT_SESSION_IDLE }
    }
}

/// A host name (lowercase, IPv6 without brackets) and, when one was given, a port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    fn parse(text: &str) -> Option<Authority> {
        let a: axum::http::uri::Authority = text.trim().parse().ok()?;
        if a.as_str().contains('@') {
            return None;
        }
        let host = a.host().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        (!host.is_empty()).then_some(Authority { host, port: a.port_u16() })
    }

    /// Whether a request's `Host` (`seen`) is this one: the same name, and the same port if this one
    /// names a port.
    fn admits(&self, seen: &Authority) -> bool {
        self.host == seen.host && self.port.is_none_or(|p| seen.port == Some(p))
    }
}

/// An origin as RFC 6454 compares them: scheme, host and port (the scheme's default when absent).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    /// `Origin: null` (a sandboxed frame, a `file:` page).
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    /// `scheme://host[:port]` (a trailing `/` tolerated), or `null`.
    fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text == "null" {
            return Some(Origin::Null);
        }
        let (scheme, rest) = text.split_once("://")?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let valid_scheme = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if !valid_scheme || rest.contains(['/', '?', '#']) {
            return None;
        }
        let authority = Authority::parse(rest)?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        Some(Origin::Tuple { port: authority.port.or(default_port), host: authority.host, scheme })
    }

    fn is_loopback(&self) -> bool {
        matches!(self, Origin::Tuple { scheme, host, .. }
            if (scheme == "http" || scheme == "https") && LOOPBACK_NAMES.contains(&host.as_str()))
    }
}

impl HttpPolicy {
    /// The policy of a server bound to `bound`, with the `--allow-host`, `--allow-origin` and
    /// `--session-idle-ms` values; an unreadable value is an input error naming its flag.
    pub fn new(
        bound: &SocketAddr,
        allow_hosts: &[String],
        allow_origins: &[String],
        session_idle: Duration,
    ) -> Result<HttpPolicy, InputError> {
        let mut hosts = Vec::new();
        for h in allow_hosts {
            hosts.push(Authority::parse(h).ok_or_else(|| {
                InputError::new("--allow-host", format!("`{h}` is not a host name or address (e.g. mcp.example.lan, 192.168.1.5, or with a port: mcp.example.lan:8080)"))
            })?);
        }
        // The address itself, when it is one a client can name (not 0.0.0.0 or ::).
        if !bound.ip().is_unspecified() {
            hosts.push(Authority { host: bound.ip().to_string(), port: None });
        }
        let mut origins = Vec::new();
        for o in allow_origins {
            origins.push(Origin::parse(o).ok_or_else(|| {
                InputError::new("--allow-origin", format!("`{o}` is not an origin: scheme://host[:port] without a path (e.g. https://app.example.com), or null"))
            })?);
        }
        if session_idle.is_zero() {
            return Err(InputError::new("--session-idle-ms", "must be at least 1"));
        }
        Ok(HttpPolicy { hosts, origins, session_idle })
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let values: Vec<&str> =
            headers.get_all(header::HOST).iter().filter_map(|v| v.to_str().ok()).collect();
        let [value] = values[..] else {
            return Err(Refusal::forbidden("the request needs exactly one readable Host header"));
        };
        let seen = Authority::parse(value)
            .ok_or_else(|| Refusal::forbidden("the Host header is not a host name"))?;
        if LOOPBACK_NAMES.contains(&seen.host.as_str())
            || self.hosts.iter().any(|h| h.admits(&seen))
        {
            return Ok(());
        }
        Err(Refusal::forbidden(format!(
            "Host `{}` is not a name of this server (loopback names are; others need --allow-host)",
            shown(value)
        )))
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let mut values = headers.get_all(header::ORIGIN).iter();
        let (Some(value), None) = (values.next(), values.next()) else { return Ok(()) };
        let text = value.to_str().unwrap_or("");
        match Origin::parse(text) {
            Some(o) if o.is_loopback() || self.origins.contains(&o) => Ok(()),
            _ => Err(Refusal::forbidden(format!(
                "Origin `{}` is not allowed (loopback origins are; others need --allow-origin)",
                shown(text)
            ))),
        }
    }
}

/// An untrusted header value as quoted back: at most 100 characters, control characters escaped.
fn shown(text: &str) -> String {
    text.chars().take(100).flat_map(char::escape_default).collect()
}

/// A request refused before rmcp sees it: its status and the JSON-RPC error answered.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    id: Value,
    message: String,
}

impl Refusal {
    fn forbidden(why: impl std::fmt::Display) -> Refusal {
        Refusal {
            status: StatusCode::FORBIDDEN,
            id: Value::Null,
            message: format!("Forbidden: {why}"),
        }
    }

    fn bad_request(id: Value, why: impl std::fmt::Display) -> Refusal {
        Refusal { status: StatusCode::BAD_REQUEST, id, message: format!("Bad Request: {why}") }
    }

    fn response(self) -> Response<Body> {
        let body = json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": -32000, "message": self.message},
        });
        Response::builder()
            .status(self.status)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .expect("a valid response")
    }
}

/// Whether the JSON-RPC message(s) of a POST body may go to rmcp: a stateless-era request (its
/// version in `_meta`) always, `initialize` always, anything else only within a session
/// (`Mcp-Session-Id`). A body that is not JSON is left to rmcp, which answers it.
fn check_session(headers: &HeaderMap, body: &[u8]) -> Result<(), Refusal> {
    let Ok(parsed) = serde_json::from_slice::<Value>(body) else { return Ok(()) };
    let messages = match &parsed {
        Value::Array(batch) => batch.iter().collect(),
        one => vec![one],
    };
    let in_session = headers.contains_key("mcp-session-id");
    let header_version = headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
    for message in messages {
        let meta_version = message
            .pointer("/params/_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .and_then(Value::as_str);
        if meta_version.is_some_and(super::era::is_stateless) {
            continue;
        }
        if message.get("method").and_then(Value::as_str) == Some("initialize") {
            continue;
        }
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if let Some(v) = header_version.filter(|v| super::era::is_stateless(v)) {
            return Err(Refusal::bad_request(
                id,
                format!(
                    "MCP-Protocol-Version {} (stateless) needs the request's `_meta` to carry io.modelcontextprotocol/protocolVersion, clientInfo and clientCapabilities",
                    shown(v)
                ),
            ));
        }
        if !in_session {
            return Err(Refusal::bad_request(
                id,
                "Mcp-Session-Id header is required: send `initialize` first, then its session id with every request (or make it a stateless 2026-07-28 request, its version in `_meta`)",
            ));
        }
    }
    Ok(())
}

/// The checks of the module, as an axum middleware in front of the MCP service.
async fn guard(
    axum::extract::State(policy): axum::extract::State<Arc<HttpPolicy>>,
    request: Request<Body>,
    next: axum::middleware::Next,
) -> Response<Body> {
    let headers = request.headers();
    if let Err(r) = policy.check_host(headers).and_then(|()| policy.check_origin(headers)) {
        return r.response();
    }
    if request.method() != Method::POST {
        // GET (the server's stream) and DELETE carry no message; rmcp requires their session itself.
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        let mut r = Refusal::bad_request(
            Value::Null,
            format!("the request body is unreadable or over {MAX_BODY_BYTES} bytes"),
        );
        r.status = StatusCode::PAYLOAD_TOO_LARGE;
        return r.response();
    };
    if let Err(r) = check_session(&parts.headers, &bytes) {
        return r.response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// Serve `handler` (a new one per session) at `/mcp` on `listener` under `policy`, until `stop`.
pub async fn serve<H, F>(
    listener: tokio::net::TcpListener,
    handler: F,
    stop: super::serve::StopSignal,
    policy: &HttpPolicy,
) -> anyhow::Result<()>
where
    H: rmcp::ServerHandler,
    F: Fn() -> H + Send + Sync + 'static,
{
    use anyhow::Context;
    use axum::serve::ListenerExt;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let config = StreamableHttpServerConfig::default()
        // `guard` checks Host (with the configured names) and answers in JSON-RPC.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    // Cancelling it ends every session (and with it each session's sandbox) when serving stops.
    let sessions_end = config.cancellation_token.clone();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(policy.session_idle);
    let service = StreamableHttpService::new(move || Ok(handler()), Arc::new(manager), config);
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(Arc::new(policy.clone()), guard));
    let listener = listener.tap_io(|socket| {
        // Best effort: a socket that refuses the option is still served, only slower.
        let _ = socket.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.cancelled().await;
            sessions_end.cancel();
        })
        .await
        .context("the MCP HTTP server failed")
}

/// `--http`'s value: `IP:PORT` (`[::1]:PORT` for IPv6) or `localhost:PORT` (loopback, bound as
/// 127.0.0.1).
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let port = text
        .rsplit_once(':')
        .filter(|(host, _)| host.eq_ignore_ascii_case("localhost"))
        .map(|(_, port)| port.parse::<u16>());
    match port {
        Some(Ok(port)) => Ok(SocketAddr::from(([127, 0, 0, 1], port))),
        _ => Err(format!(
            "`{text}` is not an address to listen on: IP:PORT (127.0.0.1:8080, [::1]:8080) or localhost:PORT"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    fn policy(hosts: &[&str], origins: &[&str], bound: &str) -> HttpPolicy {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        HttpPolicy::new(&bound.parse().unwrap(), &s(hosts), &s(origins), DEFAULT_SESSION_IDLE)
            .unwrap()
    }

    #[test]
    fn hosts_are_loopback_names_the_bound_address_and_the_allowed_ones() {
        let p = policy(&["mcp.example.lan", "other.lan:9000"], &[], "0.0.0.0:8080");
        for ok in ["localhost:8080", "127.0.0.1", "[::1]:8080", "LOCALHOST", "mcp.example.lan:8080"]
        {
            assert!(p.check_host(&headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        assert!(p.check_host(&headers(&[("host", "other.lan:9000")])).is_ok());
        for refused in ["evil.example", "other.lan:9001", "0.0.0.0:8080", "user@localhost"] {
            let r = p.check_host(&headers(&[("host", refused)])).unwrap_err();
            assert_eq!(r.status, StatusCode::FORBIDDEN, "{refused}");
        }
        assert!(p.check_host(&headers(&[])).is_err(), "no Host");
        assert!(p.check_host(&headers(&[("host", "localhost"), ("host", "evil")])).is_err());
        let bound = policy(&[], &[], "192.168.1.5:8080");
        assert!(bound.check_host(&headers(&[("host", "192.168.1.5:8080")])).is_ok());
        assert!(bound.check_host(&headers(&[("host", "192.168.1.6:8080")])).is_err());
    }

    #[test]
    fn origins_are_absent_loopback_or_allowed_with_default_ports() {
        let p = policy(&[], &["https://app.example.com", "http://tool.lan:3000"], "127.0.0.1:0");
        let origin = |o: &str| p.check_origin(&headers(&[("origin", o)]));
        assert!(p.check_origin(&headers(&[])).is_ok());
        for ok in [
            "http://localhost:5173",
            "https://127.0.0.1",
            "http://[::1]:80",
            "https://app.example.com:443",
            "HTTPS://APP.example.com",
            "http://tool.lan:3000",
        ] {
            assert!(origin(ok).is_ok(), "{ok}");
        }
        for refused in [
            "http://evil.example",
            "null",
            "https://app.example.com:8443",
            "http://app.example.com",
            "http://tool.lan",
            "http://localhost.evil.example",
            "ftp://localhost",
            "garbage",
        ] {
            let r = origin(refused).unwrap_err();
            assert_eq!(r.status, StatusCode::FORBIDDEN, "{refused}");
            assert!(r.message.contains("--allow-origin"), "{}", r.message);
        }
        assert!(
            policy(&[], &["null"], "127.0.0.1:0")
                .check_origin(&headers(&[("origin", "null")]))
                .is_ok()
        );
    }

    #[test]
    fn unreadable_flag_values_name_their_flag() {
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let e =
            HttpPolicy::new(&addr, &[], &["https://x.example/path".into()], DEFAULT_SESSION_IDLE)
                .unwrap_err();
        assert_eq!(e.file, std::path::Path::new("--allow-origin"));
        let e =
            HttpPolicy::new(&addr, &["not a host".into()], &[], DEFAULT_SESSION_IDLE).unwrap_err();
        assert_eq!(e.file, std::path::Path::new("--allow-host"));
        let e = HttpPolicy::new(&addr, &[], &[], Duration::ZERO).unwrap_err();
        assert_eq!(e.file, std::path::Path::new("--session-idle-ms"));
    }

    #[test]
    fn legacy_requests_need_a_session_and_stateless_ones_do_not() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#;
        let r = check_session(&headers(&[]), call).unwrap_err();
        assert_eq!((r.status, r.id.clone()), (StatusCode::BAD_REQUEST, json!(7)));
        assert!(r.message.contains("Mcp-Session-Id"), "{}", r.message);
        assert!(check_session(&headers(&[("mcp-session-id", "s")]), call).is_ok());
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        assert!(check_session(&headers(&[]), init).is_ok());
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(check_session(&headers(&[]), note).is_err());
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"initialize"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#;
        assert_eq!(check_session(&headers(&[]), batch).unwrap_err().id, json!(2));
        // A stateless-era request goes on without a session (rmcp checks the rest of its `_meta`).
        let stateless = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert!(
            check_session(&headers(&[("mcp-protocol-version", "2026-07-28")]), stateless).is_ok()
        );
        let discover = br#"{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert!(check_session(&headers(&[]), discover).is_ok());
        // An older version in `_meta` is a legacy request: it still needs its session.
        let old_meta = br#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}"#;
        assert!(check_session(&headers(&[]), old_meta).is_err());
        // The stateless header without the `_meta` is neither era's request.
        let by_header = headers(&[("mcp-session-id", "s"), ("mcp-protocol-version", "2026-07-28")]);
        let r = check_session(&by_header, call).unwrap_err();
        assert!(r.message.contains("_meta"), "{}", r.message);
        let legacy = headers(&[("mcp-session-id", "s"), ("mcp-protocol-version", "2025-11-25")]);
        assert!(check_session(&legacy, call).is_ok());
        // What is not JSON is rmcp's to answer.
        assert!(check_session(&headers(&[]), b"{not json").is_ok());
    }

    #[test]
    fn listen_addresses_take_ips_and_localhost() {
        assert_eq!(parse_listen("localhost:8080"), Ok("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(parse_listen("LocalHost:0"), Ok("127.0.0.1:0".parse().unwrap()));
        assert_eq!(parse_listen("[::1]:9"), Ok("[::1]:9".parse().unwrap()));
        for bad in ["localhost", "localhost:99999", "example.com:80", "8080"] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn quoted_header_values_are_short_and_escaped() {
        assert_eq!(shown("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(shown(&"x".repeat(500)).len(), 100);
    }
}
