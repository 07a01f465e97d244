//! The command line: parse flags, call the core, print results, map errors to exit codes.
//!
//! Exit codes: 0 success; 1 harness error (I/O, a bug); 2 invalid input or configuration; 100 a gate
//! failed.

use crate::error::{EXIT_OK, exit_code_for};
use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

// Every line a person reads goes through `crate::messages` (`outln!` for results): redacted, and a
// closed stdout (`toolpick run | head -1`) never panics.

mod checks;
mod compare;
mod export;
mod gates;
mod imports;
mod init;
mod judge;
mod mcp;
mod pipeline;
mod preflight;
mod run;

use run::RunArgs;

const AFTER_HELP: &str = "\
Examples:
  toolpick run                          run the bundled starter suite (no API key, no network)
  toolpick init my-suite                write the bundled suite and toolpick.toml to edit
  toolpick run --backends lexical,random --trials 3
  toolpick validate --catalog registries/workspace --dataset datasets/starter.jsonl
  toolpick report reports/latest        re-score and re-render a finished run
  toolpick compare reports/base reports/latest --max-drop 2 --significant-only
  toolpick run --config examples/openai.toml --min-pass-rate 80 --gate-cells '*/gpt-4o-mini'

Exit codes: 0 ok, 1 harness or infrastructure error, 2 invalid input or configuration,
100 a gate failed (--min-pass-rate, --min-selection-accuracy, --max-drop, --max-excluded,
lint --fail-on).";

#[derive(Parser)]
#[command(name = "toolpick", version, about = "Measure how well agents pick tools: flat vs progressive discovery, good vs bad descriptions.", after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the experiment matrix and write reports to <out>/<run-id> (and <out>/latest). Running again
    /// with the same --run-id resumes: finished trials are skipped.
    Run(Box<RunArgs>),
    /// Re-score the trials of a finished run and rewrite its reports (no episodes are re-run).
    Report {
        /// A run directory, e.g. reports/latest.
        run_dir: PathBuf,
        #[command(flatten)]
        follow: gates::FollowUp,
        /// Judge the run's final answers first (the agent is not run again; judgements already made
        /// with the same judge, method and prompts are kept).
        #[command(flatten)]
        judge: Box<judge::JudgeArgs>,
        /// With --judge: judge again the trials whose judgement failed.
        #[arg(long)]
        retry_errors: bool,
        /// With --judge: the response cache directory (default: the run's, else reports/.cache).
        #[arg(long)]
        cache_dir: Option<PathBuf>,
        /// With --judge: do not read or write the response cache.
        #[arg(long, conflicts_with = "cache_dir")]
        no_cache: bool,
    },
    /// Measure a judge against answers labelled by people: accuracy, Cohen's κ with its interval and
    /// the confusion matrix (and, with --judge-b, two judges against each other).
    JudgeCheck(Box<judge::JudgeCheckArgs>),
    /// Compare a run (B) with a baseline run (A) cell by cell and task by task: differences with paired
    /// intervals and McNemar p-values, flipped tasks linked to each run's drill-down. Writes
    /// compare.html, compare.csv, compare-flips.csv, compare-confusion.csv and compare.md. Exits 100 when a gate fails.
    Compare {
        /// The baseline run directory (A).
        baseline: PathBuf,
        /// The run directory to judge (B).
        run: PathBuf,
        /// Directory for the compare.* files. Default: the run's directory (B).
        #[arg(long, short)]
        out: Option<PathBuf>,
        #[command(flatten)]
        gates: gates::GateArgs,
    },
    /// Merge the run directories of `run --shard i/n` (every shard of one run) into one run directory
    /// whose trials and reports equal an unsharded run's.
    Merge {
        /// The shards' run directories.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The merged run directory (must not hold a run yet).
        #[arg(long, short)]
        out: PathBuf,
        #[command(flatten)]
        follow: gates::FollowUp,
    },
    /// Write the bundled suite (registries, datasets, example experiment files) and a starting
    /// toolpick.toml into DIR for you to edit; `toolpick run` there reads the edited copies. Never
    /// overwrites a file unless --force.
    Init {
        /// Directory to write into (created if missing).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Overwrite files that exist.
        #[arg(long)]
        force: bool,
    },
    /// Check catalogs and datasets; print every problem as file:line: field: message.
    Validate(InputArgs),
    /// Serve a local OpenAI-compatible endpoint for tests and offline CI dry runs. It is a test double,
    /// not a model: it answers with the lexical baseline and injects faults on request.
    MockEndpoint(MockArgs),
    /// Check a catalog against the tool-design rules (names, descriptions, schemas, annotations,
    /// poisoning). Exits with 100 when a finding reaches --fail-on.
    Lint(LintArgs),
    /// Import a public benchmark in its own format and write native catalog, dataset and defects files
    /// (every skipped or repaired record in defects.csv). `run --dataset FORMAT:PATH` reads it directly.
    Import {
        /// Benchmark format.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(crate::dataset::importers::FORMATS))]
        format: String,
        /// File or directory as published.
        path: PathBuf,
        /// Output directory, e.g. datasets/bfcl.
        #[arg(long, short)]
        output: PathBuf,
        /// safetoolbench only: skip records whose quality_score is below N (the paper's threshold is 7;
        /// 0 keeps all).
        #[arg(long, value_name = "N")]
        min_quality: Option<u32>,
        /// Move the tasks onto a live server's catalog (one written by `toolpick mcp import`): tools are
        /// matched by name, renamed tools mapped (read_file → read_text_file) and reported as repairs.
        /// The catalog is not copied: run the dataset with `--catalog <it> --execute live`.
        #[arg(long, value_name = "CATALOG")]
        onto: Option<PathBuf>,
        /// With --onto: the fixture directory every task's sandbox starts from (written as the tasks'
        /// `live.fixture`, relative to the output directory), e.g. a test_project_root for MCPToolBench++.
        #[arg(long, value_name = "DIR", requires = "onto")]
        fixture: Option<PathBuf>,
    },
    /// Live MCP servers and toolpick as one: `mcp import` writes a server's tools as a native
    /// catalog; `mcp serve` presents a catalog to any MCP client; `mcp proxy` puts a live server
    /// behind toolpick's variants and layouts; `mcp collect` turns a sessions file into a run.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Write a finished run for other viewers: inspect_ai EvalLogs (`inspect view`) or OpenTelemetry
    /// GenAI traces (OTLP/JSON).
    Export {
        #[command(subcommand)]
        action: export::ExportAction,
    },
    /// Inspect or clear the on-disk response cache.
    Cache {
        #[command(subcommand)]
        action: CacheAction,
        /// Cache directory.
        #[arg(long, global = true, default_value = DEFAULT_CACHE)]
        cache_dir: PathBuf,
    },
}

const DEFAULT_CACHE: &str = "reports/.cache";

#[derive(Subcommand)]
enum McpAction {
    /// Serve a catalog to any MCP client, as a run would show it: one variant, one layout (flat, or the
    /// meta-tools of progressive, progressive-oss or search) and, with --dataset/--task, one task's view
    /// (its candidates, distractors, poison; its query as the session's instructions). Calls run on the
    /// simulator, or on the catalog's real server with --execute live. Over stdio by default;
    /// --http 127.0.0.1:PORT serves streamable HTTP at /mcp.
    Serve(Box<mcp::ServeArgs>),
    /// Put toolpick in front of a live server: import its tools (stdio, scrubbed environment), serve them
    /// through a variant and a layout, and forward executed calls to it (a sandbox for the session, the
    /// live safety policy). Example: toolpick mcp proxy --variant bad --allow-destructive -- node
    /// '{servers}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js' '{sandbox}'
    Proxy(Box<mcp::ProxyArgs>),
    /// Turn a sessions file of `toolpick mcp serve --sessions` into a run directory: each task's latest
    /// session replayed through the same presentation, one call per step, scored and reported like any
    /// run (backend: the client's name and version, or --agent-name).
    Collect(mcp::CollectArgs),
    /// Start an MCP server (stdio; or reach one by --url), list its tools and write them as a native catalog: one server file
    /// and catalog.json recording the server's info, the capabilities on both sides and each tool's
    /// wire name and annotations as sent. The server gets a scrubbed environment (PATH, HOME, TZ, LANG
    /// and --env only) and a temporary working directory. Example:
    /// toolpick mcp import --out registries/memory --env MEMORY_FILE_PATH=/tmp/m.jsonl -- node server-memory/dist/index.js
    Import {
        /// Catalog directory to write (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// The server's name in the catalog. Default: its serverInfo.name, as a catalog name.
        #[arg(long)]
        name: Option<String>,
        /// Client capabilities to declare: a comma-separated list of sampling, elicitation, roots
        /// (some servers list more tools to clients that declare more). Default: none.
        #[arg(long, default_value = "", value_parser = crate::mcp::client::Capabilities::parse)]
        capabilities: crate::mcp::client::Capabilities,
        /// A JSON object mapping wire tool names to category words, overriding the category rule.
        #[arg(long, value_name = "FILE")]
        categories: Option<PathBuf>,
        /// An environment variable for the server (KEY=VALUE; repeatable). Nothing else is inherited.
        #[arg(long = "env", value_name = "KEY=VALUE", value_parser = imports::parse_env_pair)]
        env: Vec<(String, String)>,
        /// A server already listening for streamable HTTP, e.g. http://127.0.0.1:8080/mcp (instead of a
        /// command line).
        #[arg(long, conflicts_with = "command", value_parser = crate::rules::Quiet(imports::mcp_server_url))]
        url: Option<String>,
        /// Longest the server may take to answer each request (initialize, tools/list), in ms; a
        /// server that misses it is stopped and the import fails with its stderr (exit 1).
        #[arg(long, value_name = "MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
        request_timeout_ms: u64,
        /// Refuse the import (exit 1) when a tool cannot be imported as sent (a bad input schema, a
        /// name that collides) instead of skipping or renaming it with a defect row.
        #[arg(long)]
        strict: bool,
        /// The server's description in the catalog (default: the server's own, else one written from
        /// its tools' descriptions, marked as generated in catalog.json).
        #[arg(long, value_name = "TEXT")]
        server_description: Option<String>,
        /// The server's command line, after `--`.
        #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
        command: Vec<String>,
    },
}

#[derive(Subcommand)]
enum CacheAction {
    /// Number of entries and bytes.
    Stats,
    /// Remove every entry.
    Clear,
}

#[derive(Args)]
struct LintArgs {
    /// Catalog directory. Default: the bundled registries/workspace.
    catalog: Option<PathBuf>,
    /// text, json or sarif.
    #[arg(long, default_value = "text")]
    format: String,
    /// Fail (exit 100) when a finding is at least this severe: block, warn, info or never.
    #[arg(long, default_value = "block")]
    fail_on: String,
    /// Write the output to this file instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct MockArgs {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port (0 = any free port; the chosen one is printed).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Latency added to every response, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Inject a fault into every N-th request: KIND:N (repeatable). Kinds: rate_limit, server_error,
    /// unavailable, slow, timeout, malformed_args, invented_tool, text_calls, truncated, empty_choices,
    /// unauthorized, cut_off, cut_off_text, content_filter, repeat_call, duplicate_calls.
    #[arg(long = "fault")]
    faults: Vec<String>,
    /// Retry-After seconds sent with injected 429s.
    #[arg(long, default_value_t = 1)]
    retry_after: u64,
    /// Require `Authorization: Bearer <value of this environment variable>`.
    #[arg(long)]
    require_key_env: Option<String>,
    /// Sampling noise: answer a request with the chance baseline with probability P × temperature
    /// (0 = deterministic). Stands in for a sampled model when measuring the noise floor.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    sampling_noise: f64,
    /// Seed of the sampling-noise draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Answer every chat request after the N-th with 503: an endpoint that goes down mid-run.
    #[arg(long, value_name = "N")]
    down_after: Option<u64>,
    /// Echo the request's API key back in response headers, 401 bodies and answers (a careless
    /// endpoint, to check that toolpick never stores it).
    #[arg(long)]
    echo_key: bool,
    /// Refuse requests over the providers' tool limits as they do: more than 128 tools or a name
    /// outside OpenAI's pattern on the chat route, a name outside Anthropic's on the Messages route.
    #[arg(long)]
    tool_limits: bool,
    /// Refuse requests of more than N tokens (a token per 4 bytes of the request body) as a provider
    /// refuses a prompt over its context window; `GET /props` then reports `n_ctx` as llama-server does.
    #[arg(long, value_name = "N")]
    context_size: Option<usize>,
    /// How a request over --context-size is refused: llama-cpp (`exceed_context_size_error`), openai
    /// (`context_length_exceeded`) or stop-reason (Messages: `model_context_window_exceeded`); the
    /// Messages route answers Anthropic's "prompt is too long" for the first two.
    #[arg(long, value_name = "STYLE", default_value = "llama-cpp")]
    context_error: String,
}

#[derive(Args)]
struct InputArgs {
    /// Catalog directory (one JSON file per server). Default: the bundled registries/workspace.
    #[arg(long)]
    catalog: Option<PathBuf>,
    #[arg(long, help = dataset_help())]
    dataset: Option<PathBuf>,
}

/// `--dataset` help, listing the import formats from the one list of them.
fn dataset_help() -> String {
    format!(
        "Dataset file (JSONL, one task per line), or FORMAT:PATH to import a benchmark directly (e.g. bfcl:DIR). Formats: {}. Default: the bundled datasets/starter.jsonl.",
        crate::dataset::importers::FORMATS.join(", ")
    )
}

/// A bundled default path: the working directory's copy, else the suite embedded in the binary
/// (see [`crate::bundle`]), so `toolpick run` works from anywhere with nothing but the binary.
fn bundled(relative: &str) -> PathBuf {
    crate::bundle::resolve(relative)
}

impl InputArgs {
    fn catalog(&self) -> PathBuf {
        self.catalog.clone().unwrap_or_else(|| bundled("registries/workspace"))
    }
    fn dataset(&self) -> PathBuf {
        self.dataset.clone().unwrap_or_else(|| bundled("datasets/starter.jsonl"))
    }
}

/// Every flag that takes a value takes a negative number as its value, on every subcommand: clap
/// would otherwise read `--jobs -1` as the flag `-1` ("unexpected argument '-1'", no flag named)
/// instead of handing `-1` to the flag's parser, whose range check names the flag. Set here, once
/// for the whole command tree, so a numeric flag added later cannot miss it.
fn negative_numbers_are_values(command: clap::Command) -> clap::Command {
    command
        .mut_args(
            |a| if a.get_action().takes_values() { a.allow_negative_numbers(true) } else { a },
        )
        .mut_subcommands(negative_numbers_are_values)
}

/// The parsed command line ([`negative_numbers_are_values`] applied to the derived parser).
fn parse_args() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = negative_numbers_are_values(Cli::command());
    let parsed = command
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|m| Cli::from_arg_matches(&m));
    parsed.unwrap_or_else(|e| e.format(&mut command).exit())
}

pub fn main() -> i32 {
    let cli = parse_args();
    // The default key variable is known before any configuration is read; a run adds its models' own.
    crate::redact::install_for([]);
    match dispatch(cli) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::messages::error(format_args!("{e:#}"));
            exit_code_for(&e)
        }
    }
}

fn runtime(threads: Option<usize>) -> Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        // At least 1: `--jobs` is range-checked by its parser.
        b.worker_threads(n);
    }
    Ok(b.enable_all().build()?)
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run::cmd_run(*args),
        Command::Report { run_dir, follow, judge, retry_errors, cache_dir, no_cache } => {
            preflight::run_dir("<run-dir>", &run_dir)?;
            let checked = follow.precheck()?;
            follow.check_gate_cells(&checked, &[&run_dir])?;
            let judge = judge.config(None, Path::new("."))?;
            match &judge {
                None => {
                    // Judge settings without a judge would be silently ignored.
                    for (given, flag) in [
                        (retry_errors, "--retry-errors"),
                        (cache_dir.is_some(), "--cache-dir"),
                        (no_cache, "--no-cache"),
                    ] {
                        if given {
                            return Err(crate::error::InputError::new(
                                flag,
                                "applies to judging a run: add --judge MODEL[@BASE_URL]",
                            )
                            .into());
                        }
                    }
                }
                Some(_) => {
                    if let (Some(dir), false) = (&cache_dir, no_cache) {
                        preflight::output_dir("--cache-dir", dir)?;
                    }
                }
            }
            let rt = judge.as_ref().map(|_| runtime(None)).transpose()?;
            let judging =
                judge.as_ref().zip(rt.as_ref()).map(|(config, runtime)| pipeline::Judging {
                    config,
                    cache: (!no_cache).then(|| {
                        cache_dir
                            .clone()
                            .or_else(|| run_cache_dir(&run_dir))
                            .unwrap_or_else(|| PathBuf::from(DEFAULT_CACHE))
                    }),
                    retry_errors,
                    runtime,
                });
            let finished =
                pipeline::finish(&run_dir, pipeline::Holder::Report, judging, &follow, checked)?;
            outln!(
                "re-scored {} trials; reports rewritten in {}",
                finished.data.trial_count(),
                run_dir.display()
            );
            print_cells(&finished.data.analysis.cells);
            finished.conclude()
        }
        Command::Compare { baseline, run, out, gates } => {
            compare::cmd_compare(&baseline, &run, out, &gates)
        }
        Command::Merge { runs, out, follow } => {
            for r in &runs {
                preflight::run_dir("<shard-run>", r)?;
            }
            preflight::output_dir("--out", &out)?;
            let checked = follow.precheck()?;
            follow.check_gate_cells(
                &checked,
                &runs.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
            )?;
            let merged = crate::run::merge::merge(&runs, &out)?;
            let (trials, shards) = (merged.trials, merged.runs);
            let holder = pipeline::Holder::Writer(merged.lock);
            let finished = pipeline::finish(&out, holder, None, &follow, checked)?;
            outln!("merged {trials} trials from {shards} runs into {}", out.display());
            print_cells(&finished.data.analysis.cells);
            finished.conclude()
        }
        Command::JudgeCheck(args) => judge::cmd_judge_check(*args),
        Command::Init { dir, force } => init::cmd_init(&dir, force),
        Command::Validate(args) => checks::cmd_validate(args),
        Command::MockEndpoint(args) => checks::cmd_mock(args),
        Command::Lint(args) => checks::cmd_lint(args),
        Command::Mcp { action: McpAction::Serve(args) } => mcp::cmd_serve(*args, None),
        Command::Mcp { action: McpAction::Proxy(args) } => mcp::cmd_proxy(*args),
        Command::Mcp { action: McpAction::Collect(args) } => mcp::cmd_collect(args),
        Command::Mcp {
            action:
                McpAction::Import {
                    out,
                    name,
                    capabilities,
                    categories,
                    env,
                    url,
                    request_timeout_ms,
                    strict,
                    server_description,
                    command,
                },
        } => imports::cmd_mcp_import(
            out,
            capabilities,
            env,
            url,
            command,
            imports::McpImportHow {
                name,
                categories,
                request_timeout_ms,
                strict,
                server_description,
            },
        ),
        Command::Export { action } => export::cmd_export(action),
        Command::Import { format, path, output, min_quality, onto, fixture } => {
            imports::cmd_import(format, path, output, min_quality, onto, fixture)
        }
        Command::Cache { action, cache_dir } => {
            // A file where the cache should be is a mistake, not an empty cache.
            if cache_dir.exists() && !cache_dir.is_dir() {
                return Err(crate::error::InputError::new(
                    "--cache-dir",
                    format!("`{}` is a file, not a cache directory", cache_dir.display()),
                )
                .into());
            }
            let cache = crate::agent::cache::Cache::new(cache_dir);
            match action {
                CacheAction::Stats if !cache.dir().exists() => outln!(
                    "{}: no cache there (the directory does not exist)",
                    cache.dir().display()
                ),
                CacheAction::Stats => {
                    let (n, bytes) = cache.stats();
                    outln!("{}: {n} entries, {bytes} bytes", cache.dir().display());
                }
                CacheAction::Clear => {
                    outln!("removed {} entries from {}", cache.clear()?, cache.dir().display())
                }
            }
            Ok(())
        }
    }
}

/// The response cache a run used (`cache_dir` in its `run.json`), when it names one that exists.
/// (The run directory passed the preflight, which read its run.json.)
fn run_cache_dir(run_dir: &Path) -> Option<PathBuf> {
    crate::run::RunMeta::read_if_present(run_dir).ok()??.cache_dir().filter(|p| p.is_dir())
}

/// The cells' table on the terminal ([`crate::report::terminal`]), each line through the redactor.
fn print_cells(cells: &[crate::analysis::cells::CellSummary]) {
    for line in crate::report::terminal::cells_table(cells).lines() {
        outln!("{line}");
    }
}
