//! Live MCP servers: toolpick as an MCP client.
//!
//! - [`client`]: a session with one server started as a child process, with a scrubbed environment,
//!   its own working directory and only the client capabilities asked for (rmcp underneath);
//! - [`import`]: `toolpick mcp import`, a server's `tools/list` written as a native catalog.
//!
//! Executing episodes against live servers (sandboxes per trial, elicitation and sampling answered
//! during an episode) builds on [`client`]; it is not here yet.

pub mod client;
pub mod import;

/// Import a server's tools into the catalog directory `out` (the command behind `toolpick mcp import`).
pub fn import_server(command: &client::ServerCommand, options: &import::ImportOptions, out: &std::path::Path) -> anyhow::Result<import::ImportedCatalog> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let imported = runtime.block_on(async {
        let session = client::Session::connect(command, options.capabilities, None).await?;
        let tools = session.list_tools().await?;
        let facts = session.facts().clone();
        session.close().await?;
        import::build(&facts, &tools, options)
    })?;
    import::write(&imported, out)?;
    Ok(imported)
}
