//! The backends behind [`Backend`](super::Backend): deterministic baselines that need no network, and
//! real models over HTTP.
//!
//! - [`lexical`]: BM25 over what the layout shows (the embedded default; a baseline, not a model).
//! - [`oracle`]: plays the expected calls through the layout; must score 100 %.
//! - [`random`]: seeded chance baseline.
//! - [`replay`]: plays back answers recorded elsewhere, one JSONL line per task (`replay:<FILE>`).
//! - [`openai`]: any OpenAI-compatible chat-completions endpoint;
//! - [`anthropic`]: the Anthropic Messages API (`POST /v1/messages`);
//! - [`responses`]: OpenAI's Responses API (`POST /v1/responses`, backend `openai-responses`);
//! - [`gemini`]: Google's Gemini API (`POST /v1beta/models/{model}:generateContent`);
//! - [`limits`]: each protocol's declared limits (tool count, tool names) and the providers' refusals
//!   for a limit (read as `provider_limit`);
//! - [`http`]: the HTTP stack both share (client, key, redaction, retries, limits, counters);
//! - [`serving_errors`]: the endpoint answers that mean the model's call could not be parsed.
//!
//! The registry ([`BUILT_IN`], [`build`]): each backend is one [`Entry`] — its name as `--backends`
//! and the experiment file's `backend` spell it, and how to build it from its [`ModelSpec`] and what
//! the run knows ([`BuildContext`]). The runner calls [`build`] for every model; the backends that
//! serve a layout over MCP (`mcp-agent`, `mcp-oracle`, `mcp-client`) are entries of the runner's
//! (`run::serving`), passed in, because `agent` may not import the MCP server they need.

pub mod anthropic;
pub mod gemini;
pub mod http;
pub mod lexical;
pub mod limits;
pub mod openai;
pub mod oracle;
pub mod random;
pub mod replay;
pub mod responses;
pub mod serving_errors;

use super::Backend;
use super::spec::ModelSpec;
use crate::error::InputError;
use crate::protocol::ToolCall;
use crate::record::LayoutKind;
use std::collections::HashSet;
use std::sync::Arc;

pub use anthropic::AnthropicBackend;
pub use gemini::GeminiBackend;
pub use lexical::{LexicalBackend, LexicalConfig};
pub use openai::OpenAiBackend;
pub use oracle::OracleBackend;
pub use random::RandomBackend;
pub use replay::ReplayBackend;
pub use responses::ResponsesBackend;

/// What building a backend may need besides its spec.
pub struct BuildContext<'a> {
    pub lexical: LexicalConfig,
    /// The endpoints' response cache (`None`: no cache).
    pub cache: Option<Arc<super::cache::Cache>>,
    pub layouts: &'a [LayoutKind],
    /// Every task id of the run's datasets, selected or not (recorded answers may cover them all).
    pub task_ids: &'a HashSet<&'a str>,
    /// Every variant's tools, so recorded names resolve whatever a variant called a tool.
    pub tools: &'a [replay::ToolNames<'a>],
}

/// A backend behind an HTTP endpoint, as the run checks it before the first episode and names it in
/// its messages.
pub trait Endpoint: Send + Sync {
    /// The base URL requests go to.
    fn endpoint(&self) -> &str;
    /// One cheap request before a run (see each backend's `preflight`): `Ok` says what answered,
    /// `Err` is one line saying what was tried, what came back and what to check, the key removed.
    fn preflight(&self) -> super::BoxFuture<'_, Result<String, String>>;
    /// The model's context window in tokens and where it was read (`context_window`, a server's
    /// `/props`), or `None` when unknown: the run checks each cell's estimated prompt against it.
    fn context_window(&self) -> super::BoxFuture<'_, Option<(u64, String)>>;
}

impl Endpoint for OpenAiBackend {
    fn endpoint(&self) -> &str {
        OpenAiBackend::endpoint(self)
    }
    fn preflight(&self) -> super::BoxFuture<'_, Result<String, String>> {
        Box::pin(OpenAiBackend::preflight(self))
    }
    fn context_window(&self) -> super::BoxFuture<'_, Option<(u64, String)>> {
        Box::pin(OpenAiBackend::context_window(self))
    }
}

impl Endpoint for AnthropicBackend {
    fn endpoint(&self) -> &str {
        AnthropicBackend::endpoint(self)
    }
    fn preflight(&self) -> super::BoxFuture<'_, Result<String, String>> {
        Box::pin(AnthropicBackend::preflight(self))
    }
    fn context_window(&self) -> super::BoxFuture<'_, Option<(u64, String)>> {
        Box::pin(AnthropicBackend::context_window(self))
    }
}

impl Endpoint for ResponsesBackend {
    fn endpoint(&self) -> &str {
        ResponsesBackend::endpoint(self)
    }
    fn preflight(&self) -> super::BoxFuture<'_, Result<String, String>> {
        Box::pin(ResponsesBackend::preflight(self))
    }
    fn context_window(&self) -> super::BoxFuture<'_, Option<(u64, String)>> {
        Box::pin(ResponsesBackend::context_window(self))
    }
}

impl Endpoint for GeminiBackend {
    fn endpoint(&self) -> &str {
        GeminiBackend::endpoint(self)
    }
    fn preflight(&self) -> super::BoxFuture<'_, Result<String, String>> {
        Box::pin(GeminiBackend::preflight(self))
    }
    fn context_window(&self) -> super::BoxFuture<'_, Option<(u64, String)>> {
        Box::pin(GeminiBackend::context_window(self))
    }
}

/// A built backend; `endpoint` is the same backend when it talks to an HTTP endpoint (the run checks
/// it answers before the first episode).
pub struct Built {
    pub backend: Arc<dyn Backend>,
    pub endpoint: Option<Arc<dyn Endpoint>>,
}

impl Built {
    fn plain(backend: impl Backend + 'static) -> anyhow::Result<Built> {
        Ok(Built { backend: Arc::new(backend), endpoint: None })
    }
}

/// One backend of the registry. `build` may complete the spec (the replay digest goes into the
/// matrix hash, so resuming with other recorded answers is refused).
pub struct Entry {
    pub name: &'static str,
    pub build: fn(&mut ModelSpec, &BuildContext) -> anyhow::Result<Built>,
    /// The limits of the wire protocol the backend speaks, checked for every cell before the first
    /// request; `None` for backends that send no request to a provider.
    pub limits: Option<&'static limits::ProtocolLimits>,
    /// The backend can run the native layouts (`native-search`, `native-search-client`): its protocol
    /// can send tools deferred and search them. Any other is refused those layouts before the run.
    pub native: bool,
}

/// The backends `agent` builds itself.
pub const BUILT_IN: &[Entry] = &[
    Entry {
        name: "lexical",
        build: |_, ctx| Built::plain(LexicalBackend::new(ctx.lexical)),
        limits: None,
        native: false,
    },
    // The oracle plays the answer key through any layout: it is how the native layouts are checked.
    Entry { name: "oracle", build: |_, _| Built::plain(OracleBackend), limits: None, native: true },
    Entry {
        name: "random",
        build: |_, _| Built::plain(RandomBackend),
        limits: None,
        native: false,
    },
    Entry { name: "openai", build: build_openai, limits: Some(&limits::OPENAI), native: false },
    Entry {
        name: "anthropic",
        build: build_anthropic,
        limits: Some(&limits::ANTHROPIC),
        native: true,
    },
    Entry {
        name: "openai-responses",
        build: build_responses,
        limits: Some(&limits::OPENAI),
        native: true,
    },
    Entry { name: "gemini", build: build_gemini, limits: Some(&limits::GEMINI), native: false },
    Entry { name: "replay", build: build_replay, limits: None, native: false },
];

/// The backends that can run the native layouts, for messages.
pub const NATIVE_BACKENDS: &str = "anthropic, openai-responses (and the oracle)";

/// The backends whose protocol groups function tools (the `namespaces` option).
pub const NAMESPACE_BACKENDS: &[&str] = &["openai-responses"];

/// The limits of the protocol backend `name` speaks (from its registry entry, [`BUILT_IN`] or
/// `more`); `None` for an unknown name or a backend that sends no request to a provider.
pub fn limits_of(name: &str, more: &[Entry]) -> Option<&'static limits::ProtocolLimits> {
    BUILT_IN.iter().chain(more).find(|e| e.name == name).and_then(|e| e.limits)
}

/// Build the backend `spec` names, from [`BUILT_IN`] or `more` (the runner's entries).
pub fn build(spec: &mut ModelSpec, ctx: &BuildContext, more: &[Entry]) -> anyhow::Result<Built> {
    let entry = BUILT_IN.iter().chain(more).find(|e| e.name == spec.backend).ok_or_else(|| {
        InputError::new(
            "--backends",
            format!("unknown backend `{}`; choose from {}", spec.backend, names_help()),
        )
    })?;
    if spec.namespaces && !NAMESPACE_BACKENDS.contains(&spec.backend.as_str()) {
        return Err(InputError::new(
            "--namespaces",
            format!(
                "model `{}` (backend `{}`): the `namespaces` option groups tools in the Responses API's `namespace` tools; only {} supports it",
                if spec.name.is_empty() { &spec.backend } else { &spec.name },
                spec.backend,
                NAMESPACE_BACKENDS.join(", ")
            ),
        )
        .into());
    }
    if !entry.native
        && let Some(native) = ctx.layouts.iter().find(|l| l.is_native())
    {
        return Err(InputError::new(
            "--layouts",
            format!(
                "the `{}` backend cannot run the `{}` layout: its protocol has no deferred tools or provider search; the native layouts run on {NATIVE_BACKENDS}",
                spec.backend,
                native.as_str()
            ),
        )
        .into());
    }
    (entry.build)(spec, ctx)
}

fn build_openai(spec: &mut ModelSpec, ctx: &BuildContext) -> anyhow::Result<Built> {
    let endpoint = Arc::new(OpenAiBackend::new(spec.clone(), ctx.cache.clone())?);
    Ok(Built { backend: endpoint.clone(), endpoint: Some(endpoint) })
}

fn build_anthropic(spec: &mut ModelSpec, ctx: &BuildContext) -> anyhow::Result<Built> {
    let endpoint = Arc::new(AnthropicBackend::new(spec.clone(), ctx.cache.clone())?);
    Ok(Built { backend: endpoint.clone(), endpoint: Some(endpoint) })
}

fn build_responses(spec: &mut ModelSpec, ctx: &BuildContext) -> anyhow::Result<Built> {
    let endpoint = Arc::new(ResponsesBackend::new(spec.clone(), ctx.cache.clone())?);
    Ok(Built { backend: endpoint.clone(), endpoint: Some(endpoint) })
}

fn build_gemini(spec: &mut ModelSpec, ctx: &BuildContext) -> anyhow::Result<Built> {
    let endpoint = Arc::new(GeminiBackend::new(spec.clone(), ctx.cache.clone())?);
    Ok(Built { backend: endpoint.clone(), endpoint: Some(endpoint) })
}

/// A replay backend: its file is checked against every task and tool of the run, and its digest goes
/// into the matrix.
fn build_replay(spec: &mut ModelSpec, ctx: &BuildContext) -> anyhow::Result<Built> {
    let path = spec.replay_file.clone().ok_or_else(|| {
        InputError::new("--backends", "the replay backend needs a file: replay:<FILE>")
    })?;
    if let Some(other) = ctx.layouts.iter().find(|l| **l != LayoutKind::Flat) {
        return Err(InputError::new(
            &path,
            format!(
                "the replay backend plays recorded flat function calls, which never went through the `{}` layout's meta-tools; run it with --layouts flat",
                other.as_str()
            ),
        )
        .into());
    }
    let backend = ReplayBackend::load(&path, &spec.name, ctx.task_ids, ctx.tools.iter().copied())?;
    spec.replay_digest = Some(backend.digest().to_string());
    Built::plain(backend)
}

/// Every backend, as `--backends` and the experiment file's `backend` spell them.
pub const NAMES: [&str; 10] = [
    "lexical",
    "oracle",
    "random",
    "openai",
    "anthropic",
    "openai-responses",
    "gemini",
    "replay",
    "mcp-agent",
    "mcp-oracle",
];

/// The backends that talk to a model endpoint over HTTP: they take the endpoint settings (`--model`,
/// `--base-url`, …), need a model name, are checked before the run and have a breaker.
pub const HTTP_BACKENDS: [&str; 4] = ["openai", "anthropic", "openai-responses", "gemini"];

/// The backends for error messages: `replay` with the file it needs.
pub fn names_help() -> String {
    NAMES
        .iter()
        .map(|n| match *n {
            "replay" => "replay:<FILE>".to_string(),
            "mcp-agent" => "mcp-agent:<COMMAND>".to_string(),
            _ => n.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `true` when a tool result is a layout's error answer (`{"error": "<message>"}`), not a tool's own
/// response that happens to have an `error` field.
pub(crate) fn is_layout_error(result: &str) -> bool {
    match serde_json::from_str::<serde_json::Value>(result) {
        Ok(serde_json::Value::Object(m)) => {
            m.len() == 1 && m.get("error").is_some_and(|e| e.is_string())
        }
        _ => false,
    }
}

/// A plain answer (no call).
pub(crate) fn answer(text: &str) -> crate::protocol::AssistantTurn {
    crate::protocol::AssistantTurn { content: Some(text.into()), ..Default::default() }
}

/// The baselines' final answer after they called tools: "Done." and what the tools returned, quoted
/// (each result on one line, cut at [`QUOTED_RESULT_MAX`] characters), so a judge of final answers sees
/// in the answer what the calls found — as a model's summary would — and an answer after the wrong
/// call quotes the wrong data. Navigation meta-tools' answers and layout errors are not results.
pub fn done_answer(messages: &[crate::protocol::Message]) -> String {
    use crate::protocol::Message;
    use crate::record::nav;
    let mut names: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
    let mut lines = Vec::new();
    for m in messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    let navigation = [
                        nav::DISCOVER,
                        nav::DISCOVER_OSS,
                        nav::CATEGORY_ACTIONS,
                        nav::ACTION_DETAILS,
                        nav::SEARCH_DOCS,
                        nav::AUTH_FAILURE,
                        nav::SEARCH_TOOLS,
                    ];
                    if navigation.contains(&c.name.as_str()) || nav::is_provider_search(&c.name) {
                        continue;
                    }
                    let shown = if c.name == nav::EXECUTE {
                        serde_json::from_str::<serde_json::Value>(&c.arguments)
                            .ok()
                            .and_then(|a| a["action_name"].as_str().map(String::from))
                            .unwrap_or_else(|| c.name.clone())
                    } else {
                        c.name.clone()
                    };
                    names.insert(c.id.as_str(), shown);
                }
            }
            Message::Tool { tool_call_id, content, .. } => {
                if let Some(name) = names.remove(tool_call_id.as_str())
                    && !is_layout_error(content)
                {
                    lines.push(format!(
                        "- {name}: {}",
                        crate::text::one_line(content, QUOTED_RESULT_MAX)
                    ));
                }
            }
            _ => {}
        }
    }
    if lines.is_empty() {
        "Done.".to_string()
    } else {
        format!("Done. What the tools returned:\n{}", lines.join("\n"))
    }
}

/// Longest quote of one tool result in [`done_answer`], in characters.
pub const QUOTED_RESULT_MAX: usize = 600;

/// One call in turn `turn`.
pub(crate) fn one(
    turn: usize,
    name: &str,
    args: serde_json::Value,
) -> crate::protocol::AssistantTurn {
    crate::protocol::AssistantTurn {
        tool_calls: vec![call(turn, 0, name, args)],
        ..Default::default()
    }
}

/// A tool call with a deterministic id.
pub(crate) fn call(
    turn: usize,
    index: usize,
    name: &str,
    arguments: serde_json::Value,
) -> ToolCall {
    ToolCall {
        id: format!("call_{turn}_{index}"),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}
