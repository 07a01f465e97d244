//! `toolpick import` and `toolpick mcp import`: bring what others publish into toolpick's own
//! formats (a benchmark's tasks and tools; a live server's tools) and say what was written.

use super::preflight;
use anyhow::Result;
use std::path::PathBuf;

/// `to` relative to the directory `from` (both absolute), with `..` where needed.
fn relative_path(from: &std::path::Path, to: &std::path::Path) -> String {
    let (a, b): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_string(), a.len() - common).collect();
    parts.extend(b[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    if parts.is_empty() { ".".into() } else { parts.join("/") }
}

/// `mcp import --url`: an endpoint URL as [`crate::rules::base_url`] checks it (http or https, a
/// host written where it belongs: `http:///mcp` has none), with a query allowed (a server may take
/// one). Its errors never repeat a key the URL holds ([`crate::rules::Quiet`]).
pub(super) fn mcp_server_url(s: String) -> Result<String, String> {
    let base = &s[..s.find(['?', '#']).unwrap_or(s.len())];
    crate::rules::base_url::check(base.to_string())?;
    Ok(s)
}

pub(super) fn parse_env_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{s}` is not KEY=VALUE")),
    }
}

/// How `mcp import` treats the server and writes its catalog: its time limit per request, what a
/// tool that cannot be imported as sent does, and the catalog's name, categories and description.
pub struct McpImportHow {
    pub name: Option<String>,
    pub categories: Option<PathBuf>,
    pub request_timeout_ms: u64,
    pub strict: bool,
    pub server_description: Option<String>,
}

/// `toolpick mcp import`: start the server (or reach it by `url`), list its tools and write them as
/// a native catalog in `out`.
pub fn cmd_mcp_import(
    out: PathBuf,
    capabilities: crate::mcp::client::Capabilities,
    env: Vec<(String, String)>,
    url: Option<String>,
    command: Vec<String>,
    how: McpImportHow,
) -> Result<()> {
    let McpImportHow { name, categories, request_timeout_ms, strict, server_description } = how;
    preflight::output_dir("--out", &out)?;
    if let Some(c) = &categories {
        preflight::input_file("--categories", c)?;
    }
    let mut import_sandbox = None;
    let target = match url {
        Some(url) => {
            if !env.is_empty() {
                return Err(crate::error::InputError::new(
                    "--env",
                    "applies to a server toolpick starts (after `--`), not to one reached by --url",
                )
                .into());
            }
            crate::mcp::Target::Http(url)
        }
        None => {
            // `{sandbox}` and `{servers}` stay in the catalog for live runs; this import
            // starts the server in an empty sandbox of its own.
            let sandbox = crate::mcp::process::temp_dir("toolpick-import-sandbox-")?;
            let sandbox_path = sandbox.path().canonicalize()?;
            let words: Vec<String> =
                command.iter().map(|w| crate::mcp::live::fill(w, &sandbox_path)).collect();
            let mut server = crate::mcp::client::ServerCommand::from_words(&words)?;
            server.env = env
                .iter()
                .map(|(k, v)| (k.clone(), crate::mcp::live::fill(v, &sandbox_path)))
                .collect();
            import_sandbox = Some(sandbox);
            crate::mcp::Target::Stdio(server)
        }
    };
    let options = crate::mcp::import::ImportOptions {
        name,
        capabilities,
        categories: categories
            .as_deref()
            .map(crate::mcp::import::read_mapping)
            .transpose()?
            .unwrap_or_default(),
        command: match &target {
            crate::mcp::Target::Http(url) => vec![url.clone()],
            // A live run starts the server in each trial's sandbox: relative paths that name
            // files here are recorded as absolute paths, so they still name them there.
            crate::mcp::Target::Stdio(_) => command
                .iter()
                .map(|w| match std::path::Path::new(w) {
                    p if p.is_relative() && !w.contains('{') && w.contains('/') && p.exists() => {
                        std::path::absolute(p)
                            .map(|a| a.display().to_string())
                            .unwrap_or_else(|_| w.clone())
                    }
                    _ => w.clone(),
                })
                .collect(),
        },
        env_names: env.iter().map(|(k, _)| k.clone()).collect(),
        env_templates: env
            .iter()
            .filter(|(_, v)| v.contains("{sandbox}") || v.contains("{servers}"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        request_timeout: std::time::Duration::from_millis(request_timeout_ms),
        strict,
        server_description,
    };
    let imported = crate::mcp::import_server(&target, &options, &out)?;
    drop(import_sandbox);
    outln!(
        "imported {} tools in {} categories from `{}` into {}",
        imported.tools,
        imported.categories,
        imported.server,
        out.display()
    );
    for (wire, name) in &imported.renamed {
        outln!("  renamed `{wire}` to `{name}` (not a valid function name)");
    }
    for d in &imported.defects {
        outln!("  {} `{}`: {}", d.action, d.tool, d.reason);
    }
    Ok(())
}

/// `toolpick import`: read a public benchmark in its own format and write native files to `output`
/// (with `onto`, its tasks moved onto a live server's catalog).
pub fn cmd_import(
    format: String,
    path: PathBuf,
    output: PathBuf,
    min_quality: Option<u32>,
    onto: Option<PathBuf>,
    fixture: Option<PathBuf>,
) -> Result<()> {
    preflight::output_dir("--output", &output)?;
    let mut options = crate::dataset::importers::Options::default();
    if let Some(q) = min_quality {
        if format != "safetoolbench" {
            return Err(crate::error::InputError::new(
                "--min-quality",
                format!("applies to safetoolbench only, not to `{format}`"),
            )
            .into());
        }
        options.min_quality = q;
    }
    let mut imported = crate::dataset::importers::import_with(&format, &path, &options)?;
    if let Some(onto) = &onto {
        let catalog = crate::catalog::load_catalog(onto)?;
        let fixture = match &fixture {
            Some(dir) => {
                if !dir.is_dir() {
                    return Err(crate::error::InputError::new(
                        dir,
                        "the fixture is not a directory",
                    )
                    .field("--fixture")
                    .into());
                }
                // A dataset names its fixture relative to itself.
                let from = std::path::absolute(&output)?;
                let to = std::path::absolute(dir)?;
                Some(relative_path(&from, &to))
            }
            None => None,
        };
        crate::dataset::importers::retarget::retarget(
            &mut imported,
            catalog,
            &onto.display().to_string(),
            fixture.as_deref(),
        );
        let dataset = crate::dataset::importers::write_native_with(&imported, &output, false)?;
        let repaired = imported.defects.iter().filter(|d| d.action == "repaired").count();
        outln!(
            "{}: {} tasks onto {} → {}; {} defect rows ({} repaired) in {}; run it with --catalog {} --execute live",
            format,
            imported.dataset.tasks.len(),
            onto.display(),
            dataset.display(),
            imported.defects.len(),
            repaired,
            output.join("defects.csv").display(),
            onto.display()
        );
        return Ok(());
    }
    let dataset = crate::dataset::importers::write_native(&imported, &output)?;
    outln!(
        "{}: {}; {} tools → {} (catalog in {}); {} defect rows in {}",
        format,
        imported.summary,
        imported.catalog.tool_count(),
        dataset.display(),
        output.join("catalog").display(),
        imported.defects.len(),
        output.join("defects.csv").display()
    );
    Ok(())
}
