//! Live MCP servers: toolpick as an MCP client.
//!
//! - [`client`]: a session with one server started as a child process, with a scrubbed environment,
//!   its own working directory and only the client capabilities asked for (rmcp underneath), every
//!   request under a time limit; [`handler`] answers what the server asks of the client;
//! - `server_env`: the scrubbed environment of a server and the variables refused for it (through
//!   [`client`]);
//! - [`era`]: the two protocol eras (2025-11-25 with its handshake, stateless 2026-07-28) and how the
//!   client picks one;
//! - [`wire`]: newline-delimited JSON-RPC over stdio, read strictly (what is not JSON-RPC ends a
//!   client's session, or is answered with a JSON-RPC error by a server), with a tap that logs progress
//!   in wire order;
//! - [`process`]: the servers' process groups and toolpick's temporary folders, stopped and removed on
//!   every way out (SIGTERM then SIGKILL after a grace period; SIGINT and SIGTERM to toolpick too);
//! - [`import`]: `toolpick mcp import`, a server's `tools/list` written as a native catalog (what it
//!   cannot take as sent becomes a defect row: `import_defects`);
//! - [`live`]: what live execution needs of MCP and the sandbox — how an imported catalog starts its
//!   server, the per-trial sandbox, the safety policy, path and UUID normalisation, final-state checks
//!   (`run::live` runs trials with them);
//! - [`serve`]: toolpick as an MCP server (stdio, streamable HTTP) over whatever a `Served` offers
//!   (`run::serving::agent_backend` serves a layout's functions for one episode); [`http`]: what every
//!   HTTP request passes first (`Host`, `Origin`, sessions) and the listener (`TCP_NODELAY`).

pub mod client;
pub mod era;
pub mod handler;
pub mod http;
pub mod import;
mod import_defects;
pub mod live;
pub mod normalize;
pub mod process;
pub mod serve;
mod server_env;
pub mod wire;

/// Where a server is: a command line toolpick starts (stdio), or a streamable-HTTP URL.
#[derive(Debug, Clone)]
pub enum Target {
    Stdio(client::ServerCommand),
    Http(String),
}

/// Import a server's tools into the catalog directory `out` (the command behind `toolpick mcp import`).
/// Each request to the server may take `options.request_timeout`; a server that misses it (or answers
/// what is not JSON-RPC) is stopped and the import fails with its last words on stderr.
pub fn import_server(
    target: &Target,
    options: &import::ImportOptions,
    out: &std::path::Path,
) -> anyhow::Result<import::ImportedCatalog> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let limit = options.request_timeout;
    let imported = runtime.block_on(async {
        let session = match target {
            Target::Stdio(command) => {
                let launch = client::Launch { request_timeout: limit, ..Default::default() };
                client::Session::launch(command, options.capabilities, &launch).await?
            }
            Target::Http(url) => {
                client::Session::connect_http_answering(url, options.capabilities, None, limit)
                    .await?
            }
        };
        let tools = session.list_tools().await;
        let facts = session.facts().clone();
        // Stopped whatever the list gave: a hung server is not left to a drop.
        session.close().await?;
        import::build(&facts, &tools?, options)
    })?;
    import::write(&imported, out)?;
    Ok(imported)
}
