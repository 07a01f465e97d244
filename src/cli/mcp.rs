//! `toolpick mcp serve` and `toolpick mcp proxy`: their flags and commands (`mcp import` stays with the
//! other commands in `cli/mod.rs`).

use super::imports::parse_env_pair;
use super::{InputArgs, runtime};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The task whose view is served (an id of --dataset). Default: the whole catalog, no task.
    #[arg(long)]
    task: Option<String>,
    /// A description variant (good, bad, op:<operator>, file:<dir>).
    #[arg(long, default_value = "good")]
    variant: String,
    /// flat, progressive, progressive-oss or search.
    #[arg(long, default_value = "flat")]
    layout: String,
    /// Show the task its gold tools plus N seeded distractors (needs --task).
    #[arg(long, requires = "task")]
    distractors: Option<usize>,
    /// Seed for the distractor draw.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Serve streamable HTTP at this address (path /mcp) instead of stdio: IP:PORT, or
    /// localhost:PORT (127.0.0.1). Every client session gets its own presentation (and, live, its own
    /// sandbox and server).
    #[arg(long, value_name = "ADDR", value_parser = crate::mcp::http::parse_listen)]
    http: Option<std::net::SocketAddr>,
    /// Allow --http on an address other than loopback (on 0.0.0.0 or ::, name this host with
    /// --allow-host).
    #[arg(long)]
    allow_remote: bool,
    /// With --http: a Host name (or NAME:PORT) clients may reach the server by, beyond the loopback
    /// names and the bound address (repeatable). Requests naming any other Host get 403.
    #[arg(long, value_name = "NAME", requires = "http")]
    allow_host: Vec<String>,
    /// With --http: a browser Origin (scheme://host[:port], or null) allowed beyond loopback origins
    /// (repeatable). Requests with any other Origin get 403.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// With --http: a session without a message for this long ends (and, live, its server and
    /// sandbox go), in ms.
    #[arg(long, value_name = "MS", default_value_t = 300_000, value_parser = clap::value_parser!(u64).range(1..))]
    session_idle_ms: u64,
    /// Append each call's record (JSON Lines, the trial file's `calls` vocabulary) to this file (never
    /// truncated; several servers may share it). Not with --sessions or --out, whose file records calls.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Run executed calls on the catalog's real server (a catalog from `mcp import`): one sandbox and
    /// server for the session.
    #[arg(long, value_name = "MODE", value_parser = ["simulated", "live"])]
    execute: Option<String>,
    #[command(flatten)]
    live_policy: super::run::LivePolicyArgs,
    /// With --execute live (and for `mcp proxy`): longest the server may take to answer each request
    /// (initialize, tools/list, tools/call), in ms. Default: 30000 to start, 20000 per call.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    request_timeout_ms: Option<u64>,
    /// A session per task: every client session plays one task of --dataset (the `?task=<id>` of its
    /// URL, else --task, else the next task no session in FILE has played), and every call is appended
    /// to FILE as it is answered. FILE is never truncated: a restarted server (or a second one) adds its
    /// sessions after the earlier ones. `toolpick mcp collect FILE` turns the file into a run.
    #[arg(long, value_name = "FILE")]
    sessions: Option<PathBuf>,
    /// Record what the clients did as a run in <out>/<run-id>, scored and reported like any run, when
    /// serving ends (stdio closed; Ctrl-C for HTTP). Each task's latest session is its trial.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The run directory's name (with --out). Default: mcp-<task>-<UTC timestamp> with --task,
    /// mcp-sessions-<UTC timestamp> without.
    #[arg(long, requires = "out")]
    run_id: Option<String>,
    /// The backend label of the recorded trials (with --out). Default: the client's name and version
    /// (its `clientInfo`); `mcp-client` if it sent none.
    #[arg(long)]
    agent_name: Option<String>,
}

#[derive(Args)]
pub struct CollectArgs {
    /// The sessions file (`toolpick mcp serve --sessions FILE`).
    sessions: PathBuf,
    /// Directory the run directory is written under.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// The run directory's name. Default: mcp-sessions-<UTC timestamp>.
    #[arg(long)]
    run_id: Option<String>,
    /// The backend label of the trials. Default: the sessions' client (`clientInfo` name and version).
    #[arg(long)]
    agent_name: Option<String>,
}

#[derive(Args)]
pub struct ProxyArgs {
    #[command(flatten)]
    serve: ServeArgs,
    /// The upstream server's name in the served catalog. Default: its serverInfo.name.
    #[arg(long)]
    name: Option<String>,
    /// Client capabilities declared to the upstream server (sampling, elicitation, roots).
    #[arg(long, default_value = "", value_parser = crate::mcp::client::Capabilities::parse)]
    capabilities: crate::mcp::client::Capabilities,
    /// An environment variable for the upstream server (KEY=VALUE; `{sandbox}` allowed).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env_pair)]
    env: Vec<(String, String)>,
    /// An upstream server already running at this streamable-HTTP URL (instead of a command line). It
    /// is not sandboxed by toolpick: its calls change whatever that server changes.
    #[arg(long, conflicts_with_all = ["command", "env"])]
    url: Option<String>,
    /// The upstream server's command line, after `--` (`{sandbox}` is the session's sandbox).
    #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
    command: Vec<String>,
}

/// Serve one presentation; `catalog` overrides --catalog (the proxy's imported one).
pub fn cmd_serve(args: ServeArgs, catalog: Option<PathBuf>) -> Result<()> {
    // The native layouts defer tools behind a provider's search: an MCP client has neither.
    let kind = crate::layout::LayoutKind::parse(&args.layout).filter(|k| !k.is_native()).ok_or_else(
        || {
            crate::error::InputError::new(
                "--layout",
                format!(
                    "unknown layout `{}`; use flat, progressive, progressive-oss or search (the native layouts need a provider's protocol, not MCP)",
                    args.layout
                ),
            )
        },
    )?;
    if let Some(addr) = &args.http {
        crate::mcp::serve::check_bind(addr, args.allow_remote, &args.allow_host)?;
    }
    // Its flags' values are checked before anything starts.
    args.listen()?;
    if let Some(id) = &args.run_id {
        crate::run::check_run_id(id)
            .map_err(|why| crate::error::InputError::new("--run-id", why))?;
    }
    // The sessions file records every call with its session; --record is for one presentation.
    if args.record.is_some() && (args.sessions.is_some() || args.out.is_some()) {
        let with = if args.sessions.is_some() { "--sessions" } else { "--out" };
        return Err(crate::error::InputError::new("--record", format!("cannot be combined with {with}: the sessions file already records every call with its session (`toolpick mcp collect` reads it)")).into());
    }
    for (flag, file) in [("--record", &args.record), ("--sessions", &args.sessions)] {
        if let Some(f) = file {
            super::preflight::output_file(flag, f)?;
        }
    }
    if let Some(out) = &args.out {
        super::preflight::output_dir("--out", out)?;
    }
    // Without a task the catalog is served whole: a one-task dataset of our own stands in.
    let scratch = crate::mcp::process::temp_dir("toolpick-serve-")?;
    let dataset = match (&args.input.dataset, &args.task) {
        (Some(d), _) => d.clone(),
        (None, Some(_)) => args.input.dataset(),
        // Task sessions play the tasks of the default dataset.
        (None, None) if args.sessions.is_some() || args.out.is_some() => args.input.dataset(),
        (None, None) => {
            let p = scratch.path().join("serve.jsonl");
            std::fs::write(
                &p,
                "{\"id\": \"serve\", \"query\": \"(no task)\", \"kind\": \"abstain\"}\n",
            )?;
            p
        }
    };
    let mut live = args.live_policy.over(Default::default());
    if let Some(ms) = args.request_timeout_ms {
        (live.start_timeout_ms, live.call_timeout_ms) = (ms, ms);
    }
    let spec = crate::run::serving::sessions::ServedSpec {
        catalog: catalog.unwrap_or_else(|| args.input.catalog()),
        dataset,
        variant: args.variant.clone(),
        layout: kind,
        distractors: args.distractors,
        seed: args.seed,
    };
    let is_live = args.execute.as_deref() == Some("live");
    let config = spec.config(args.execute.clone().into_iter().collect(), live);
    if is_live && args.out.is_some() && args.task.is_none() {
        return Err(crate::error::InputError::new(
            "--out",
            "serving live, --out records one task's session: name it with --task",
        )
        .into());
    }
    if is_live && args.sessions.is_some() {
        return Err(crate::error::InputError::new("--sessions", "a session per task is served on the simulator; with --execute live serve one task (--task, --out)").into());
    }
    if !is_live && (args.sessions.is_some() || args.out.is_some()) {
        return serve_sessions(args, spec, config);
    }
    if let Some(out) = args.out.clone() {
        return record_session(args, config, out);
    }
    let mut presentation = crate::run::serving::presentation::Presentation::new(
        config,
        args.task.as_deref(),
        args.record.clone(),
    )
    .map_err(serve_flags)?;
    let rt = runtime(None)?;
    let listen = args.listen()?;
    rt.block_on(async move {
        if listen.is_some() {
            // A presentation per HTTP session, live ones with their own sandbox and server.
            presentation = presentation.per_session();
        } else {
            presentation.start_live().await?;
        }
        let presentation = std::sync::Arc::new(presentation);
        let served: std::sync::Arc<dyn crate::mcp::serve::Served> = presentation.clone();
        let outcome =
            serve_on(listen, served, &format!("{} tools offered", presentation.offered().len()))
                .await;
        // The upstream server stops and the sandbox goes, however the session ended.
        if let Ok(p) = std::sync::Arc::try_unwrap(presentation) {
            p.finish().await;
        }
        outcome
    })
}

impl ServeArgs {
    /// Where and under which policy to serve HTTP (`None`: stdio); a bad flag value is an input error.
    fn listen(&self) -> Result<Option<(std::net::SocketAddr, crate::mcp::http::HttpPolicy)>> {
        let Some(addr) = self.http else { return Ok(None) };
        let policy = crate::mcp::http::HttpPolicy::new(
            &addr,
            &self.allow_host,
            &self.allow_origin,
            std::time::Duration::from_millis(self.session_idle_ms),
        )?;
        Ok(Some((addr, policy)))
    }
}

/// Serve `served` over streamable HTTP at `listen`'s address under its policy (until Ctrl-C; the
/// address announced on stderr with `note`) or over stdio.
async fn serve_on(
    listen: Option<(std::net::SocketAddr, crate::mcp::http::HttpPolicy)>,
    served: std::sync::Arc<dyn crate::mcp::serve::Served>,
    note: &str,
) -> Result<()> {
    let Some((addr, policy)) = listen else {
        return crate::mcp::serve::serve_stdio(served).await;
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    crate::messages::err_line(format_args!(
        "toolpick mcp serve: streamable HTTP at http://{}/mcp ({note})",
        listener.local_addr()?
    ));
    let stop = crate::mcp::serve::StopSignal::default();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let _ = crate::mcp::process::interrupted().await;
        on_signal.cancel();
    });
    crate::mcp::serve::serve_http_with(listener, served, stop, &policy).await
}

/// A session per task (`--sessions`, or `--out` on the simulator): serve until stdio closes or Ctrl-C,
/// then (with `--out`) collect the sessions file into a run.
fn serve_sessions(
    args: ServeArgs,
    spec: crate::run::serving::sessions::ServedSpec,
    config: crate::run::RunConfig,
) -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let file = args.sessions.clone().unwrap_or_else(|| scratch.path().join("sessions.jsonl"));
    let prepared = crate::run::prepare(config).map_err(serve_flags)?;
    let pool = std::sync::Arc::new(crate::run::serving::sessions::SessionPool::new(
        prepared,
        &spec,
        args.task.clone(),
        &file,
    )?);
    let rt = runtime(None)?;
    let served: std::sync::Arc<dyn crate::mcp::serve::Served> = pool.clone();
    rt.block_on(serve_on(args.listen()?, served, "a session per task: ?task=<id> picks one"))?;
    let Some(out) = args.out else {
        crate::messages::err_line(format_args!(
            "toolpick mcp serve: {} sessions recorded in {}; `toolpick mcp collect {}` makes them a run",
            pool.sessions(),
            file.display(),
            file.display()
        ));
        return Ok(());
    };
    let sessions = crate::run::serving::sessions::Sessions::load(&file)?;
    if sessions.is_empty() {
        crate::messages::err_line("toolpick mcp serve: no client connected; no run written");
        return Ok(());
    }
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let run_id = args
        .run_id
        .clone()
        .or_else(|| args.task.as_ref().map(|t| format!("mcp-{t}-{}", crate::run::utc_stamp(unix))));
    let collected = rt.block_on(crate::run::serving::sessions::collect(
        sessions,
        crate::run::serving::sessions::CollectOptions {
            out,
            run_id,
            agent_name: args.agent_name,
            source: file.clone(),
        },
    ));
    write_collected(collected.map_err(|e| from_sessions(e, &file)))
}

/// The run machinery's errors name `run`'s flags; `mcp serve` has `--variant` and `--layout`.
fn serve_flags(e: anyhow::Error) -> anyhow::Error {
    let Some(ie) = e.downcast_ref::<crate::error::InputError>() else { return e };
    let to = match ie.file.to_str() {
        Some("--variants") => "--variant",
        Some("--layouts") => "--layout",
        _ => return e,
    };
    crate::error::InputError { file: to.into(), ..ie.clone() }.into()
}

/// A collected run's settings come from its sessions file, not from flags: errors name the file and
/// the field that holds the setting.
fn from_sessions(e: anyhow::Error, file: &std::path::Path) -> anyhow::Error {
    let e = tasks_named_by(e, file, "task", " (the dataset changed since the session was served)");
    let Some(ie) = e.downcast_ref::<crate::error::InputError>() else { return e };
    let field = match ie.file.to_str() {
        Some("--variants") => "variant",
        Some("--layouts") => "layout",
        _ => return e,
    };
    crate::error::InputError::new(file, ie.message.clone()).field(field).into()
}

/// The served task and the tasks a sessions file played are selected with the run's task subset,
/// whose errors name `--tasks`, a flag these commands do not have: name what the user gave instead
/// (`to`: the `--task` flag or the sessions file), and say why the task is missing.
fn tasks_named_by(e: anyhow::Error, to: &std::path::Path, field: &str, why: &str) -> anyhow::Error {
    let Some(ie) = e
        .downcast_ref::<crate::error::InputError>()
        .filter(|ie| ie.file == std::path::Path::new("--tasks"))
    else {
        return e;
    };
    let id = ie.message.split('`').nth(1).unwrap_or_default();
    let dataset = ie
        .message
        .split(" in dataset ")
        .nth(1)
        .and_then(|d| d.split(';').next())
        .unwrap_or("the dataset");
    let mut named = crate::error::InputError::new(
        to,
        format!("task `{id}` is not a task of dataset {dataset}{why}"),
    );
    if !field.is_empty() {
        named = named.field(field);
    }
    named.into()
}

/// Report a collected run (on stderr: stdout may have been the MCP transport).
fn write_collected(outcome: Result<crate::run::RunOutcome>) -> Result<()> {
    let outcome = outcome?;
    let holder = super::pipeline::Holder::Writer(outcome.lock);
    let follow = super::gates::FollowUp::default();
    let checked = follow.precheck()?;
    let finished = super::pipeline::finish(&outcome.dir, holder, None, &follow, checked)?;
    crate::messages::err_line(format_args!(
        "toolpick mcp: the sessions are recorded in {} ({} cells)",
        outcome.dir.display(),
        finished.data.analysis.cells.len()
    ));
    Ok(())
}

/// `toolpick mcp collect`.
pub fn cmd_collect(args: CollectArgs) -> Result<()> {
    if let Some(id) = &args.run_id {
        crate::run::check_run_id(id)
            .map_err(|why| crate::error::InputError::new("--run-id", why))?;
    }
    let sessions = crate::run::serving::sessions::Sessions::load(&args.sessions)?;
    super::preflight::output_dir("--out", &args.out)?;
    let rt = runtime(None)?;
    let file = args.sessions.clone();
    let collected = rt.block_on(crate::run::serving::sessions::collect(
        sessions,
        crate::run::serving::sessions::CollectOptions {
            out: args.out,
            run_id: args.run_id,
            agent_name: args.agent_name,
            source: args.sessions,
        },
    ));
    write_collected(collected.map_err(|e| from_sessions(e, &file)))
}

/// Serve one task's episode to a client that connects by itself, and write it as a run (one trial)
/// when its session ends: stdio closed, or Ctrl-C for HTTP.
fn record_session(args: ServeArgs, mut config: crate::run::RunConfig, out: PathBuf) -> Result<()> {
    let task = args.task.clone().expect("--out requires --task");
    config.subset.tasks = vec![task.clone()];
    config.max_steps = 256;
    config.repeat_limit = 0;
    let agent_name = args.agent_name.clone().unwrap_or_else(|| "mcp-client".into());
    let mut model = crate::run::config::ModelSpec::baseline("mcp-client");
    model.name = agent_name.clone();
    // An interactive session may take a while: the client's session end closes the episode.
    model.episode_timeout_s = 7.0 * 24.0 * 3600.0;
    config.models = vec![model];
    let mut prepared = crate::run::prepare(config)
        .map_err(|e| serve_flags(tasks_named_by(e, std::path::Path::new("--task"), "", "")))?;
    let instructions = prepared.first_task_instructions().unwrap_or_default();
    let (session, served) =
        crate::run::serving::agent_backend::ClientSession::new(&agent_name, &instructions);
    let close = session.closer();
    prepared.set_backend(0, std::sync::Arc::new(session));
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| format!("mcp-{task}-{}", crate::run::utc_stamp(unix)));
    crate::run::check_run_id(&run_id)
        .map_err(|why| crate::error::InputError::new("--run-id", why))?;
    let mut meta = crate::run::RunMeta::new(&run_id, unix, &crate::run::utc_stamp(unix));
    meta.served = Some(
        serde_json::json!({"transport": if args.http.is_some() { "streamable-http" } else { "stdio" }}),
    );
    let dir = out.join(&run_id);
    let rt = runtime(None)?;
    let listen = args.listen()?;
    let outcome = rt.block_on(async move {
        let server = tokio::spawn(async move {
            let r = serve_on(listen, served, "Ctrl-C ends the session").await;
            close();
            r
        });
        let outcome = crate::run::execute(
            prepared,
            &dir,
            meta,
            crate::run::ExecOptions { quiet: true, ..Default::default() },
        )
        .await;
        server.abort();
        outcome
    });
    write_collected(outcome)
}

/// Import the upstream server into a temporary catalog, then serve it live.
pub fn cmd_proxy(args: ProxyArgs) -> Result<()> {
    let dir = crate::mcp::process::temp_dir("toolpick-proxy-")?;
    let catalog = dir.path().join("upstream");
    let sandbox = crate::mcp::process::temp_dir("toolpick-import-sandbox-")?;
    let sandbox_path = sandbox.path().canonicalize()?;
    let target = match &args.url {
        Some(url) => crate::mcp::Target::Http(url.clone()),
        None => {
            let words: Vec<String> =
                args.command.iter().map(|w| crate::mcp::live::fill(w, &sandbox_path)).collect();
            let mut server = crate::mcp::client::ServerCommand::from_words(&words)?;
            server.env = args
                .env
                .iter()
                .map(|(k, v)| (k.clone(), crate::mcp::live::fill(v, &sandbox_path)))
                .collect();
            crate::mcp::Target::Stdio(server)
        }
    };
    let options = crate::mcp::import::ImportOptions {
        name: args.name.clone(),
        capabilities: args.capabilities,
        categories: Default::default(),
        // What a live session reconnects to: the URL, or the command line with its placeholders.
        command: args.url.clone().map(|u| vec![u]).unwrap_or_else(|| args.command.clone()),
        env_names: args.env.iter().map(|(k, _)| k.clone()).collect(),
        // Every value as given (placeholders kept): the session's server gets what --env said, not
        // toolpick's own variable of that name. The catalog is the proxy's own, in a private (0700)
        // temporary folder removed with it.
        env_templates: args.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        request_timeout: args
            .serve
            .request_timeout_ms
            .map_or(crate::mcp::client::REQUEST_TIMEOUT, std::time::Duration::from_millis),
        ..Default::default()
    };
    let imported = crate::mcp::import_server(&target, &options, &catalog)?;
    drop(sandbox);
    crate::messages::err_line(format_args!(
        "toolpick mcp proxy: {} tools of `{}` behind variant `{}`, layout `{}`",
        imported.tools, imported.server, args.serve.variant, args.serve.layout
    ));
    let mut serve = args.serve;
    serve.execute = Some("live".into());
    cmd_serve(serve, Some(catalog))
}
