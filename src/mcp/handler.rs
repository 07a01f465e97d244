//! The client side of an MCP session: the capabilities toolpick declares, and the handler that answers
//! what a server asks or tells during a session (elicitation, sampling, progress, list changes),
//! logging each as an [`Event`] and handing the questions to the session's [`Responder`].
//!
//! Apart from `client` (the session and its process), so that what a server may ask of the client
//! reads in one place.

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
use rmcp::service::{NotificationContext, RoleClient};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
                other => {
                    return Err(format!(
                        "unknown client capability `{other}`; choose from sampling, elicitation, roots"
                    ));
                }
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

/// Something a server asked or told the client during a session.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Progress(Progress),
    /// An elicitation request (`form` or `url` mode) and the answer given (`accept`, `decline`, `cancel`).
    Elicitation {
        mode: String,
        action: String,
    },
    /// A sampling request, answered (with the tokens it cost) or refused.
    Sampling {
        answered: bool,
        usage: crate::protocol::Usage,
    },
}

/// How the user answered an elicitation request.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitReply {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The form content sent with `accept` (never sent in URL mode).
    pub content: Option<Value>,
}

/// A sampling request's answer: the text generated and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleReply {
    pub text: String,
    pub model: String,
    pub usage: crate::protocol::Usage,
}

pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'static>>;

/// Answers the requests a server sends the client: the user's side (elicitation) and the model's side
/// (sampling). Both receive the request as it came on the wire.
pub trait Responder: Send + Sync + 'static {
    /// `mode` is `form` or `url`; a URL is recorded, never opened.
    fn elicit(&self, mode: &str, request: &Value) -> ElicitReply;
    /// Generate for a `sampling/createMessage` request; `Err` refuses it with that message.
    fn sample(&self, request: Value) -> BoxFuture<Result<SampleReply, String>>;
    /// A progress notification arrived (it is logged as an [`Event`] as well).
    fn on_progress(&self, _progress: &Progress) {}
}

/// The client side of a session: declares the capabilities, counts list changes, logs events and
/// hands server requests to the responder.
#[derive(Clone)]
pub(super) struct Handler {
    capabilities: Capabilities,
    pub(super) list_changes: Arc<AtomicU64>,
    pub(super) progress: Arc<std::sync::Mutex<Vec<Progress>>>,
    pub(super) events: Arc<std::sync::Mutex<Vec<Event>>>,
    responder: Option<Arc<dyn Responder>>,
}

impl Handler {
    pub(super) fn new(
        capabilities: Capabilities,
        responder: Option<Arc<dyn Responder>>,
    ) -> Handler {
        Handler {
            capabilities,
            list_changes: Default::default(),
            progress: Default::default(),
            events: Default::default(),
            responder,
        }
    }

    fn log(&self, event: Event) {
        self.events.lock().expect("event log").push(event);
    }

    /// What logs the server's `notifications/progress`: a tap on the session's transport (see
    /// [`super::wire`]), so each is logged, in wire order, before the result that follows it reaches
    /// its caller. (rmcp's own `on_progress` runs on a task of its own, after that result at times.)
    pub(super) fn progress_tap(&self) -> super::wire::Tap {
        let (progress, events, responder) =
            (self.progress.clone(), self.events.clone(), self.responder.clone());
        std::sync::Arc::new(move |message: &Value| {
            if message.get("method").and_then(Value::as_str) != Some("notifications/progress") {
                return;
            }
            let params = &message["params"];
            // A notification without a number for its progress is not one the spec allows: not logged.
            let Some(at) = params.get("progress").and_then(Value::as_f64) else { return };
            let p = Progress {
                progress: at,
                total: params.get("total").and_then(Value::as_f64),
                message: params.get("message").and_then(Value::as_str).map(String::from),
            };
            if let Some(r) = &responder {
                r.on_progress(&p);
            }
            progress.lock().expect("progress log").push(p.clone());
            events.lock().expect("event log").push(Event::Progress(p));
        })
    }
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changes.fetch_add(1, Ordering::SeqCst);
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let wire = serde_json::to_value(&request).unwrap_or(Value::Null);
        let mode = wire.get("mode").and_then(Value::as_str).unwrap_or("form").to_string();
        let reply = match &self.responder {
            Some(r) => r.elicit(&mode, &wire),
            None => ElicitReply { action: "decline".into(), content: None },
        };
        self.log(Event::Elicitation { mode: mode.clone(), action: reply.action.clone() });
        let mut result = json!({ "action": reply.action });
        if let (Some(content), "accept", "form") =
            (reply.content, reply.action.as_str(), mode.as_str())
        {
            result["content"] = content;
        }
        serde_json::from_value(result).map_err(|e| {
            rmcp::ErrorData::internal_error(
                format!("cannot build the elicitation answer: {e}"),
                None,
            )
        })
    }

    // Sampling is deprecated from protocol 2026-07-28 on (SEP-2577); the servers of today still use it.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let Some(responder) = &self.responder else {
            self.log(Event::Sampling { answered: false, usage: Default::default() });
            return Err(rmcp::ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "this client does not sample",
                None,
            ));
        };
        let wire = serde_json::to_value(&params).unwrap_or(Value::Null);
        match responder.sample(wire).await {
            Ok(reply) => {
                self.log(Event::Sampling { answered: true, usage: reply.usage });
                let result = json!({"model": reply.model, "stopReason": "endTurn", "role": "assistant", "content": {"type": "text", "text": reply.text}});
                serde_json::from_value(result).map_err(|e| {
                    rmcp::ErrorData::internal_error(
                        format!("cannot build the sampling answer: {e}"),
                        None,
                    )
                })
            }
            Err(e) => {
                self.log(Event::Sampling { answered: false, usage: Default::default() });
                Err(rmcp::ErrorData::internal_error(format!("sampling failed: {e}"), None))
            }
        }
    }

    fn get_info(&self) -> InitializeRequestParams {
        let capabilities: ClientCapabilities =
            serde_json::from_value(self.capabilities.to_wire()).unwrap_or_default();
        InitializeRequestParams::new(
            capabilities,
            Implementation::new("toolpick", env!("CARGO_PKG_VERSION")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_parse_and_go_on_the_wire_as_declared() {
        assert_eq!(Capabilities::parse("").unwrap(), Capabilities::default());
        let all = Capabilities::parse("sampling, elicitation,roots").unwrap();
        assert_eq!(
            all.to_wire(),
            json!({"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": false}, "sampling": {}})
        );
        assert_eq!(Capabilities::default().to_wire(), json!({}));
        assert!(Capabilities::parse("sampling,tasks").unwrap_err().contains("`tasks`"));
    }
}
