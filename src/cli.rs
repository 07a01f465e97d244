//! The command line: parse flags, call the core, print results, map errors to exit codes.
//!
//! Exit codes: 0 success; 1 harness error (I/O, a bug); 2 invalid input or configuration.

use crate::agent::backends::LexicalConfig;
use crate::catalog::load_catalog;
use crate::dataset::{check_against, load_dataset};
use crate::error::{EXIT_OK, exit_code_for};
use crate::layout::{DiscoveryRule, LayoutKind};
use crate::report::pct;
use crate::run::{RunConfig, generate, utc_stamp, write_run};
use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const AFTER_HELP: &str = "\
Examples:
  toolpick run                          run the bundled starter suite (no API key, no network)
  toolpick run --backends lexical,random --trials 3
  toolpick validate --catalog registries/workspace --dataset datasets/starter.jsonl
  toolpick report reports/latest        re-score and re-render a finished run

Exit codes: 0 ok, 1 harness error, 2 invalid input or configuration.";

#[derive(Parser)]
#[command(name = "toolpick", version, about = "Measure how well agents pick tools: flat vs progressive discovery, good vs bad descriptions.", after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the experiment matrix and write reports to <out>/<run-id> (and <out>/latest).
    Run(RunArgs),
    /// Re-score the trials of a finished run and rewrite its reports (no episodes are re-run).
    Report {
        /// A run directory, e.g. reports/latest.
        run_dir: PathBuf,
    },
    /// Check catalogs and datasets; print every problem as file:line: field: message.
    Validate(InputArgs),
}

#[derive(Args)]
struct InputArgs {
    /// Catalog directory (one JSON file per server). Default: the bundled registries/workspace.
    #[arg(long)]
    catalog: Option<PathBuf>,
    /// Dataset file (JSONL, one task per line). Default: the bundled datasets/starter.jsonl.
    #[arg(long)]
    dataset: Option<PathBuf>,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Description variants: good, bad, or op:<operator> (vague_description, drop_guidance,
    /// cryptic_names, strip_parameter_docs).
    #[arg(long, value_delimiter = ',', default_value = "good,bad")]
    variants: Vec<String>,
    /// Layouts: flat, progressive.
    #[arg(long, value_delimiter = ',', default_value = "flat,progressive")]
    layouts: Vec<String>,
    /// Backends: lexical (BM25 baseline), oracle (plays the answer key), random (chance).
    #[arg(long, value_delimiter = ',', default_value = "lexical,oracle")]
    backends: Vec<String>,
    /// Trials per task and cell.
    #[arg(long, default_value_t = 1)]
    trials: usize,
    /// Seed for every random choice; same inputs + seed give byte-identical trials and reports.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Maximum assistant turns per episode.
    #[arg(long, default_value_t = 8)]
    max_steps: usize,
    /// Progressive discovery shows full details for servers with at most this many actions.
    #[arg(long, default_value_t = DiscoveryRule::default().full_details_max)]
    discovery_full_max: usize,
    /// Progressive discovery lists actions for servers with at most this many actions (else categories only).
    #[arg(long, default_value_t = DiscoveryRule::default().actions_max)]
    discovery_actions_max: usize,
    /// Lexical baseline abstains when the best tool shares fewer distinct terms with the query.
    #[arg(long, default_value_t = LexicalConfig::default().min_overlap)]
    lexical_min_overlap: usize,
    /// Output root; the run goes to <out>/<run-id>.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Run id (directory name). Default: <dataset>-<UTC timestamp>.
    #[arg(long)]
    run_id: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
}

/// A bundled default path: relative to the working directory, else to the source tree toolpick was
/// built from (so `toolpick run` works from anywhere in a checkout).
fn bundled(relative: &str) -> PathBuf {
    let local = PathBuf::from(relative);
    if local.exists() {
        return local;
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    if built.exists() { built } else { local }
}

impl InputArgs {
    fn catalog(&self) -> PathBuf {
        self.catalog.clone().unwrap_or_else(|| bundled("registries/workspace"))
    }
    fn dataset(&self) -> PathBuf {
        self.dataset.clone().unwrap_or_else(|| bundled("datasets/starter.jsonl"))
    }
}

pub fn main() -> i32 {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit_code_for(&e)
        }
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => cmd_run(args),
        Command::Report { run_dir } => {
            let data = crate::report::render_run(&run_dir)?;
            println!("re-scored {} trials; reports rewritten in {}", data.trials.len(), run_dir.display());
            print_cells(&data.cells);
            Ok(())
        }
        Command::Validate(args) => cmd_validate(args),
    }
}

fn cmd_validate(args: InputArgs) -> Result<()> {
    let catalog_path = args.catalog();
    let dataset_path = args.dataset();
    let catalog = load_catalog(&catalog_path);
    let dataset = load_dataset(&dataset_path);
    let mut errors = Vec::new();
    if let Err(e) = &catalog {
        errors.extend(e.0.iter().cloned());
    }
    if let Err(e) = &dataset {
        errors.extend(e.0.iter().cloned());
    }
    if let (Ok(c), Ok(d)) = (&catalog, &dataset) {
        if let Err(e) = check_against(d, c) {
            errors.extend(e.0);
        }
        println!(
            "ok: catalog {} ({} servers, {} categories, {} tools), dataset {} ({} tasks)",
            c.name,
            c.servers.len(),
            c.servers.iter().map(|s| s.categories.len()).sum::<usize>(),
            c.tool_count(),
            d.name,
            d.tasks.len()
        );
    }
    if errors.is_empty() {
        return Ok(());
    }
    let n = errors.len();
    Err(anyhow::Error::new(crate::error::InputErrors(errors)).context(format!("{n} problem(s) found")))
}

fn cmd_run(args: RunArgs) -> Result<()> {
    if let Some(j) = args.jobs {
        rayon::ThreadPoolBuilder::new().num_threads(j.max(1)).build_global().ok();
    }
    let layouts = args
        .layouts
        .iter()
        .map(|l| LayoutKind::parse(l).ok_or_else(|| crate::error::InputError::new("--layouts", format!("unknown layout `{l}`; use flat or progressive"))))
        .collect::<Result<Vec<_>, _>>()?;
    if args.trials == 0 || args.max_steps == 0 {
        return Err(crate::error::InputError::new("--trials/--max-steps", "must be at least 1").into());
    }
    let config = RunConfig {
        catalog: args.input.catalog(),
        dataset: args.input.dataset(),
        variants: args.variants.clone(),
        layouts,
        backends: args.backends.clone(),
        trials: args.trials,
        seed: args.seed,
        max_steps: args.max_steps,
        discovery: DiscoveryRule { full_details_max: args.discovery_full_max, actions_max: args.discovery_actions_max },
        lexical: LexicalConfig { min_overlap: args.lexical_min_overlap, ..LexicalConfig::default() },
    };
    let started = Instant::now();
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let generated = generate(&config)?;
    let run_id = args.run_id.clone().unwrap_or_else(|| format!("{}-{}", generated.dataset_name, utc_stamp(unix)));
    let meta = serde_json::json!({
        "toolpick_version": env!("CARGO_PKG_VERSION"),
        "started_unix": unix,
        "started_utc": utc_stamp(unix),
        "run_id": run_id,
        "tokenizer": "o200k_base",
    });
    let dir = write_run(&config, &generated, &args.out, &run_id, meta)?;
    let data = crate::report::load_run(&dir)?;
    println!(
        "{} trials ({} tasks × {} cells) in {:.2} s → {}",
        generated.trials.len(),
        generated.tasks,
        data.cells.len(),
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    print_cells(&data.cells);
    println!("open {} in a browser for the drill-down", dir.join("report.html").display());
    Ok(())
}

fn print_cells(cells: &[crate::report::CellSummary]) {
    println!("{:<8} {:<12} {:<8} {:>5} {:>10} {:>8} {:>10} {:>6} {:>8}", "variant", "layout", "backend", "n", "selection%", "pass@1%", "abstain%", "steps", "tokens");
    for c in cells {
        println!(
            "{:<8} {:<12} {:<8} {:>5} {:>10} {:>8} {:>10} {:>6.2} {:>8.0}",
            c.variant,
            c.layout,
            c.backend,
            c.n,
            pct(c.selection.rate),
            pct(c.pass.rate),
            pct(c.abstention.rate),
            c.mean_steps,
            c.mean_tokens_total
        );
    }
}
