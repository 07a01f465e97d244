//! Live MCP servers: toolpick as an MCP client.
//!
//! - [`client`]: a session with one server started as a child process, with a scrubbed environment,
//!   its own working directory and only the client capabilities asked for (rmcp underneath);
//! - [`import`]: `toolpick mcp import`, a server's `tools/list` written as a native catalog;
//! - [`live`]: what live execution needs of MCP and the sandbox — how an imported catalog starts its
//!   server, the per-trial sandbox, the safety policy, path and UUID normalisation, final-state checks
//!   (`run::live` runs trials with them);
//! - [`serve`]: toolpick as an MCP server (stdio, streamable HTTP) over whatever a `Served` offers
//!   (`run::serving::agent_backend` serves a layout's functions for one episode).

pub mod client;
pub mod import;
pub mod live;
pub mod serve;

/// Where a server is: a command line toolpick starts (stdio), or a streamable-HTTP URL.
#[derive(Debug, Clone)]
pub enum Target {
    Stdio(client::ServerCommand),
    Http(String),
}

/// Import a server's tools into the catalog directory `out` (the command behind `toolpick mcp import`).
pub fn import_server(
    target: &Target,
    options: &import::ImportOptions,
    out: &std::path::Path,
) -> anyhow::Result<import::ImportedCatalog> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let imported = runtime.block_on(async {
        let session = match target {
            Target::Stdio(command) => {
                client::Session::connect(command, options.capabilities, None).await?
            }
            Target::Http(url) => client::Session::connect_http(url, options.capabilities).await?,
        };
        let tools = session.list_tools().await?;
        let facts = session.facts().clone();
        session.close().await?;
        import::build(&facts, &tools, options)
    })?;
    import::write(&imported, out)?;
    Ok(imported)
}
