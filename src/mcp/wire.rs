//! The wire under toolpick's MCP sessions over stdio: newline-delimited JSON-RPC read strictly
//! ([`Lines`]), and a tap that sees every incoming message in wire order ([`Tapped`], for streamable
//! HTTP).
//!
//! Why not rmcp's own stdio transport: it skips a line that is not JSON, drops a line over 16 MiB and
//! answers well-formed JSON of the wrong shape with an id-less error, all silently, so a server that
//! writes garbage on stdout passes and its caller waits for an answer that never comes (the call's time
//! limit, 20 s by default, is what finally reported it). Here, on the client side, such a line **ends the
//! session at once** and [`Fault`] says what it was (the session's errors quote it); on the server side
//! (toolpick serving a client over stdio) a line that is not JSON is answered with JSON-RPC's parse error
//! (−32700), and one that is JSON but no JSON-RPC message with invalid request (−32600), and the session
//! goes on, as JSON-RPC 2.0 says.
//!
//! Why a tap: rmcp hands each notification to its handler on a task of its own, so a
//! `notifications/progress` the server wrote just before a call's result could be logged after the
//! caller had already read the call's events — the progress was lost for that call (2 of 30 live trials
//! in one measurement). The tap runs inside `receive`, before rmcp sees the message, so whatever came
//! before a result on the wire is logged before that result reaches its caller.

use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The largest message either side may send (one line), as rmcp's transports allow (16 MiB).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// How much of a bad line an error quotes.
const SHOWN_CHARS: usize = 200;

/// What ended a session on the client side, once something did (the first reason wins).
#[derive(Clone, Default)]
pub struct Fault(Arc<Mutex<Option<String>>>);

impl Fault {
    fn set(&self, why: String) {
        self.0.lock().expect("fault").get_or_insert(why);
    }

    /// Why the transport ended the session, if it did.
    pub fn get(&self) -> Option<String> {
        self.0.lock().expect("fault").clone()
    }
}

/// Called with every message received, in wire order, before rmcp dispatches it.
pub type Tap = Arc<dyn Fn(&Value) + Send + Sync>;

/// Which side of the session toolpick is on (what a bad line does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// toolpick is the client of a server it started: a bad line ends the session ([`Fault`]).
    Client,
    /// toolpick serves a client: a bad line is answered with a JSON-RPC error and skipped.
    Server,
}

/// Newline-delimited JSON-RPC over a reader and a writer (a child's stdout and stdin, or toolpick's own
/// stdin and stdout).
pub struct Lines<R: ServiceRole, In, Out> {
    read: BufReader<In>,
    /// The line being read (kept across a cancelled `receive`: rmcp polls it inside a `select!`).
    line: Vec<u8>,
    /// Dropping the rest of a line already found too long.
    discarding: bool,
    write: Arc<tokio::sync::Mutex<Option<Out>>>,
    side: Side,
    fault: Fault,
    tap: Option<Tap>,
    _role: std::marker::PhantomData<fn() -> R>,
}

/// One step of reading a line.
enum Read {
    Line,
    TooLong,
    End,
}

impl<R: ServiceRole, In, Out> Lines<R, In, Out>
where
    In: AsyncRead + Send + Unpin,
    Out: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: In, write: Out, side: Side) -> Self {
        Lines {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            side,
            fault: Fault::default(),
            tap: None,
            _role: std::marker::PhantomData,
        }
    }

    /// Call `tap` with every message received (see the module doc).
    pub fn with_tap(mut self, tap: Tap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// The fault this transport will report (shared; set when it ends the session).
    pub fn fault(&self) -> Fault {
        self.fault.clone()
    }

    /// Read up to the next newline into `self.line`, never holding more than [`MAX_MESSAGE_BYTES`].
    /// Cancel-safe: the bytes taken are copied and consumed with no await between.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Read::End);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let step = if self.discarding {
                self.discarding = newline.is_none();
                None
            } else if self.line.len() + take > MAX_MESSAGE_BYTES + 1 {
                self.line.clear();
                self.discarding = newline.is_none();
                Some(Read::TooLong)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| Read::Line)
            };
            self.read.consume(take);
            if let Some(step) = step {
                return Ok(step);
            }
        }
    }

    /// A bad line: on the client side the session ends (`None` after the fault is set); on the server
    /// side the client is answered with `code` and reading goes on (`Some(())`). Owns what it uses, so
    /// `receive` stays `Send` whatever the reader is.
    fn bad(
        &self,
        code: i64,
        why: String,
        id: Value,
    ) -> impl Future<Output = Option<()>> + Send + use<R, In, Out> {
        let (side, fault, write) = (self.side, self.fault.clone(), self.write.clone());
        async move {
            match side {
                Side::Client => {
                    fault.set(why);
                    None
                }
                Side::Server => {
                    let answer = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": why}});
                    let mut line = answer.to_string().into_bytes();
                    line.push(b'\n');
                    let mut guard = write.lock().await;
                    let out = guard.as_mut()?;
                    (out.write_all(&line).await.is_ok() && out.flush().await.is_ok()).then_some(())
                }
            }
        }
    }
}

/// At most [`SHOWN_CHARS`] of `text`, marked when cut.
fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(SHOWN_CHARS).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

impl<R: ServiceRole, In, Out> Transport<R> for Lines<R, In, Out>
where
    In: AsyncRead + Send + Unpin,
    Out: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        let line = serde_json::to_vec(&item).map_err(std::io::Error::other);
        async move {
            let mut line = line?;
            line.push(b'\n');
            let mut guard = write.lock().await;
            let out = guard.as_mut().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotConnected, "the transport is closed")
            })?;
            out.write_all(&line).await?;
            out.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        let peer = match self.side {
            Side::Client => "the server",
            Side::Server => "the client",
        };
        loop {
            match self.read_line().await {
                Ok(Read::Line) => {}
                Ok(Read::End) => return None,
                Ok(Read::TooLong) => {
                    let why = format!(
                        "{peer} sent a message over {MAX_MESSAGE_BYTES} bytes (16 MiB, the most an MCP message may be here)"
                    );
                    self.bad(-32600, why, Value::Null).await?;
                    continue;
                }
                Err(e) => {
                    if self.side == Side::Client {
                        self.fault.set(format!("cannot read {peer}'s output: {e}"));
                    }
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let mut bytes = line.strip_suffix(b"\n").unwrap_or(&line);
            bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let text = String::from_utf8_lossy(bytes);
            let value: Value = match serde_json::from_slice(bytes) {
                Ok(v) => v,
                Err(e) => {
                    let why = format!(
                        "{peer} wrote a line that is not JSON-RPC ({e}): `{}`",
                        shown(&text)
                    );
                    self.bad(-32700, why, Value::Null).await?;
                    continue;
                }
            };
            let id = value.get("id").cloned().unwrap_or(Value::Null);
            if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                let why = format!(
                    "{peer} sent JSON that is not a JSON-RPC 2.0 message: `{}`",
                    shown(&text)
                );
                self.bad(-32600, why, id).await?;
                continue;
            }
            if let Some(tap) = &self.tap {
                tap(&value);
            }
            let is_notification = value.get("method").is_some() && value.get("id").is_none();
            match serde_json::from_value::<RxJsonRpcMessage<R>>(value) {
                Ok(message) => return Some(message),
                // A notification rmcp has no type for (another protocol's, or a newer revision's) is
                // not an error: JSON-RPC lets a receiver ignore notifications it does not know.
                Err(_) if is_notification => continue,
                Err(e) => {
                    let why = format!(
                        "{peer} sent a malformed JSON-RPC message ({e}): `{}`",
                        shown(&text)
                    );
                    self.bad(-32600, why, id).await?;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(mut out) = self.write.lock().await.take() {
            let _ = out.shutdown().await;
        }
        Ok(())
    }
}

/// Any client transport with a [`Tap`] on what it receives (streamable HTTP: rmcp frames it; the tap
/// still runs before rmcp dispatches each message).
pub struct Tapped<T> {
    inner: T,
    tap: Tap,
}

impl<T> Tapped<T> {
    pub fn new(inner: T, tap: Tap) -> Self {
        Tapped { inner, tap }
    }
}

impl<R: ServiceRole, T: Transport<R>> Transport<R> for Tapped<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        let message = self.inner.receive().await?;
        if let Ok(value) = serde_json::to_value(&message) {
            (self.tap)(&value);
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::RoleClient;
    use rmcp::RoleServer;
    use tokio::io::AsyncReadExt;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn a_client_reads_messages_in_order_taps_each_and_ends_at_a_line_that_is_not_json_rpc() {
        runtime().block_on(async {
            let (mut server_out, client_in) = tokio::io::duplex(1 << 16);
            let (client_out, _server_in) = tokio::io::duplex(1 << 16);
            let seen = Arc::new(Mutex::new(Vec::new()));
            let log = seen.clone();
            let tap: Tap = Arc::new(move |v: &Value| {
                log.lock().unwrap().push(v["method"].as_str().unwrap_or("result").to_string())
            });
            let mut lines =
                Lines::<RoleClient, _, _>::new(client_in, client_out, Side::Client).with_tap(tap);
            let fault = lines.fault();
            let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
            let result = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
            let odd = r#"{"jsonrpc":"2.0","method":"notifications/not-in-any-spec","params":{}}"#;
            let text = format!("{progress}\n\n{odd}\r\n{result}\nServer started on stdio\n");
            server_out.write_all(text.as_bytes()).await.unwrap();
            // The unknown notification reaches rmcp too (its custom-notification type takes it).
            for _ in 0..2 {
                let m = lines.receive().await;
                assert!(matches!(m, Some(rmcp::model::JsonRpcMessage::Notification(_))), "{m:?}");
            }
            assert!(matches!(lines.receive().await, Some(rmcp::model::JsonRpcMessage::Response(_))));
            assert_eq!(*seen.lock().unwrap(), ["notifications/progress", "notifications/not-in-any-spec", "result"]);
            assert!(fault.get().is_none());
            assert!(lines.receive().await.is_none());
            let why = fault.get().expect("a fault");
            assert!(why.contains("not JSON-RPC") && why.contains("`Server started on stdio`"), "{why}");
        });
    }

    #[test]
    fn a_client_ends_at_a_message_over_the_limit_without_holding_it() {
        runtime().block_on(async {
            let (mut server_out, client_in) = tokio::io::duplex(1 << 16);
            let (client_out, _server_in) = tokio::io::duplex(1 << 16);
            let mut lines = Lines::<RoleClient, _, _>::new(client_in, client_out, Side::Client);
            let fault = lines.fault();
            tokio::spawn(async move {
                let chunk = vec![b'x'; 1 << 16];
                let _ = server_out.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"").await;
                for _ in 0..(MAX_MESSAGE_BYTES / chunk.len() + 1) {
                    if server_out.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
            });
            assert!(lines.receive().await.is_none());
            assert!(lines.line.len() <= MAX_MESSAGE_BYTES + 1);
            assert!(fault.get().unwrap().contains("over 16777216 bytes"), "{:?}", fault.get());
        });
    }

    #[test]
    fn a_server_answers_bad_lines_with_json_rpc_errors_and_reads_on() {
        runtime().block_on(async {
            let (mut client_out, server_in) = tokio::io::duplex(1 << 16);
            let (server_out, mut client_in) = tokio::io::duplex(1 << 16);
            let mut lines = Lines::<RoleServer, _, _>::new(server_in, server_out, Side::Server);
            let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
            let text = format!("{{not json\n{{\"id\":3}}\n[1,2]\n{ping}\n");
            client_out.write_all(text.as_bytes()).await.unwrap();
            assert!(matches!(lines.receive().await, Some(rmcp::model::JsonRpcMessage::Request(_))));
            drop(lines);
            let mut answers = String::new();
            client_in.read_to_string(&mut answers).await.unwrap();
            let codes: Vec<(Value, Value)> = answers
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .map(|v| (v["id"].clone(), v["error"]["code"].clone()))
                .collect();
            assert_eq!(
                codes,
                [
                    (Value::Null, json!(-32700)),
                    (json!(3), json!(-32600)),
                    (Value::Null, json!(-32600))
                ]
            );
        });
    }
}
