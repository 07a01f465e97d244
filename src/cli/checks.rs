//! The commands that check inputs or stand in for an endpoint without running an experiment:
//! `validate` (a catalog alone, a dataset against a catalog, an import), `lint` (the tool-design
//! rules, exit 100 at `--fail-on`) and `mock-endpoint` (the test double). Kept apart from
//! `cli/mod.rs`, which holds the command line itself and the dispatch.

use super::{InputArgs, LintArgs, MockArgs, bundled, preflight, runtime};
use crate::catalog::load_catalog;
use crate::dataset::{check_against, load_dataset};
use anyhow::{Context, Result};

/// `toolpick lint`: the findings in the chosen format, to `-o FILE` (checked before the catalog is
/// read) or stdout; a finding at or above `--fail-on` is a failed gate (exit 100).
pub(super) fn cmd_lint(args: LintArgs) -> Result<()> {
    if let Some(p) = &args.output {
        preflight::output_file("--output", p)?;
    }
    let path = args.catalog.clone().unwrap_or_else(|| bundled("registries/workspace"));
    let catalog = load_catalog(&path)?;
    let findings = crate::lint::lint(&catalog);
    let root = std::env::current_dir().unwrap_or_default();
    let text = match args.format.as_str() {
        "text" => {
            let color = args.output.is_none() && crate::messages::stdout_is_terminal();
            crate::lint::output::text(&findings, color)
        }
        "json" => crate::lint::output::json(&findings),
        "sarif" => crate::lint::output::sarif(&findings, &root),
        other => {
            return Err(crate::error::InputError::new(
                "--format",
                format!("unknown format `{other}`; use text, json or sarif"),
            )
            .into());
        }
    };
    let threshold = match args.fail_on.as_str() {
        "never" => None,
        s => Some(crate::lint::Severity::parse(s).ok_or_else(|| {
            crate::error::InputError::new(
                "--fail-on",
                format!("unknown severity `{s}`; use block, warn, info or never"),
            )
        })?),
    };
    match &args.output {
        Some(p) => crate::files::write_atomic(p, text.as_bytes())?,
        None => crate::messages::out_text(&text),
    }
    if let (Some(t), Some(w)) = (threshold, crate::lint::worst(&findings))
        && w >= t
    {
        return Err(anyhow::Error::new(crate::error::GateFailed(format!(
            "lint: a `{}` finding reached --fail-on {}",
            w.as_str(),
            t.as_str()
        ))));
    }
    Ok(())
}

/// `toolpick mock-endpoint`: serve the test double until interrupted.
pub(super) fn cmd_mock(args: MockArgs) -> Result<()> {
    let mut config = crate::mock::MockConfig {
        latency: std::time::Duration::from_millis(args.latency_ms),
        retry_after_s: args.retry_after,
        sampling_noise: args.sampling_noise,
        seed: args.seed,
        down_after: args.down_after,
        echo_key: args.echo_key,
        ..Default::default()
    };
    config.context_size = args.context_size;
    config.tool_limits = args.tool_limits;
    config.context_error = crate::mock::limits::ContextError::parse(&args.context_error)
        .ok_or_else(|| {
            crate::error::InputError::new(
                "--context-error",
                format!(
                    "`{}` is not a style; choose from {}",
                    args.context_error,
                    crate::mock::limits::ContextError::NAMES.join(", ")
                ),
            )
        })?;
    if args.context_size == Some(0) {
        return Err(crate::error::InputError::new(
            "--context-size",
            "must be at least 1 token (leave it out for no context limit)",
        )
        .into());
    }
    if !(0.0..=1.0).contains(&args.sampling_noise) {
        return Err(crate::error::InputError::new(
            "--sampling-noise",
            format!("{} is not a probability between 0 and 1", args.sampling_noise),
        )
        .into());
    }
    for f in &args.faults {
        config.faults.push(crate::mock::parse_fault(f).ok_or_else(|| {
            crate::error::InputError::new(
                "--fault",
                format!("`{f}` is not KIND:N (e.g. rate_limit:5); see --help for the kinds"),
            )
        })?);
    }
    if let Some(var) = &args.require_key_env {
        config.require_key = Some(std::env::var(var).map_err(|_| {
            crate::error::InputError::new(
                "--require-key-env",
                format!("environment variable {var} is not set"),
            )
        })?);
    }
    let rt = runtime(None)?;
    rt.block_on(async {
        let addr: std::net::SocketAddr =
            format!("{}:{}", args.host, args.port).parse().map_err(|e| {
                crate::error::InputError::new("--host/--port", format!("not an address: {e}"))
            })?;
        let server = crate::mock::spawn(addr, config)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        outln!("mock endpoint (a test double, not a model) listening on {}", server.base_url());
        tokio::signal::ctrl_c().await?;
        outln!("served {} requests", server.requests());
        Ok(())
    })
}
/// `toolpick validate`: a catalog alone (`--catalog` without `--dataset`), a dataset against a catalog
/// (the bundled one by default), or an imported benchmark; `ok:` only when nothing is wrong.
pub(super) fn cmd_validate(args: InputArgs) -> Result<()> {
    let catalog_path = args.catalog();
    if args.catalog.is_some() && args.dataset.is_none() {
        let catalog = load_catalog(&catalog_path).map_err(|e| {
            let n = e.0.len();
            anyhow::Error::new(e).context(format!("{n} problem(s) found"))
        })?;
        reachability_warnings(&catalog);
        outln!(
            "ok: catalog {} ({} servers, {} categories, {} tools)",
            catalog.name,
            catalog.servers.len(),
            catalog.servers.iter().map(|s| s.categories.len()).sum::<usize>(),
            catalog.tool_count()
        );
        return Ok(());
    }
    let dataset_path = args.dataset();
    if let Some((format, path)) = crate::dataset::importers::split_spec(&dataset_path)? {
        // An import brings its own catalog and keeps only tasks that validate against it.
        let imported = crate::dataset::importers::import(&format, &path)?;
        outln!(
            "ok: {format} imported from {}: {}; {} defect rows",
            path.display(),
            imported.summary,
            imported.defects.len()
        );
        return Ok(());
    }
    let catalog = load_catalog(&catalog_path);
    let dataset = load_dataset(&dataset_path);
    let mut errors = Vec::new();
    if let Err(e) = &catalog {
        errors.extend(e.0.iter().cloned());
    }
    if let Err(e) = &dataset {
        errors.extend(e.0.iter().cloned());
    }
    if let Ok(c) = &catalog {
        reachability_warnings(c);
    }
    if let (Ok(c), Ok(d)) = (&catalog, &dataset)
        && let Err(e) = check_against(d, c)
    {
        errors.extend(e.0);
    }
    if !errors.is_empty() {
        let n = errors.len();
        return Err(anyhow::Error::new(crate::error::InputErrors(errors))
            .context(format!("{n} problem(s) found")));
    }
    if let (Ok(c), Ok(d)) = (&catalog, &dataset) {
        outln!(
            "ok: catalog {} ({} servers, {} categories, {} tools), dataset {} ({} tasks)",
            c.name,
            c.servers.len(),
            c.servers.iter().map(|s| s.categories.len()).sum::<usize>(),
            c.tool_count(),
            d.name,
            d.tasks.len()
        );
    }
    Ok(())
}

/// Reachability warnings: valid input, but a tool search can match such a tool only by its name.
fn reachability_warnings(c: &crate::catalog::Catalog) {
    for f in crate::lint::lint(c).iter().filter(|f| f.rule == crate::lint::NO_CONTENT_WORDS) {
        outln!(
            "warning: {}:{}: field `{}`: tool `{}`: {} {}",
            f.file.display(),
            f.line,
            f.field,
            f.tool,
            f.rule,
            f.message
        );
    }
}
