//! Executing a plan: resume checks, the directory lock, the preflight, the metadata files, then the
//! episodes (bounded per endpoint, stopped by an endpoint's breaker), each finished trial handed to
//! the trial writer, and the trials compacted into matrix order at the end.

use super::events::{self, ProgressDisplay, RunEvent, Subscriber, TimingsWriter, TrialWriter};
use super::plan::{Job, Prepared, episode_seed};
use super::{failfast, live, live_pool, progress, shard, trial};
use crate::agent::{Backend, Episode, Limits, StopReason, run_episode};
use crate::error::InputError;
use crate::protocol::FunctionDef;
use crate::record::meta::RunMeta;
use crate::record::{RUN_JSON, Trial, guard, store, transcripts};
use crate::score::declared::Declared;
use crate::score::metrics::ScoredCall;
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lock a run directory for this process and remove what killed processes left in it.
fn lock_run_dir(dir: &Path) -> Result<guard::DirLock> {
    let lock = guard::DirLock::acquire(dir)?;
    if !lock.held() {
        anyhow::bail!(
            "{} is in use by another toolpick process (a run, merge or report of it); wait for it to end or choose another --run-id",
            dir.display()
        );
    }
    guard::remove_stale(dir)?;
    Ok(lock)
}

impl Prepared {
    async fn run_job(self: Arc<Self>, j: Job) -> (Trial, Value) {
        let s = &self.suites[j.suite];
        let cell = &s.cells[j.cell];
        let task = &s.dataset.tasks[j.task];
        let scenario = Self::per_task(s, cell, j.task).then(|| self.shared_scenario(&j));
        let scenario = scenario.as_ref().map(|sc| sc.get().expect("built by shared_scenario"));
        let (layout, addressing, tokens_upfront) = match scenario {
            Some(sc) => (sc.layout.as_ref(), &sc.addressing, sc.tokens_upfront),
            None => (cell.layout.as_ref(), &cell.addressing, cell.tokens_upfront),
        };
        let backend = &self.backends[j.backend];
        // Seeds have always keyed the cell as `variant/layout/backend` (not the full cell key): another
        // key would change every episode's seed, so every recorded run's trials.
        let seed_cell =
            format!("{}/{}/{}", cell.variant, cell.layout.kind().as_str(), backend.name());
        let seed = episode_seed(self.config.seed, &seed_cell, &task.id, j.trial);
        let timeout = self.config.models[j.backend].episode_timeout_s;
        let started = Instant::now();
        let limits =
            Limits { max_steps: self.config.max_steps, repeat_limit: self.config.repeat_limit };
        let timed_out = || Episode {
            messages: crate::agent::opening_messages(task),
            calls: vec![],
            steps: 0,
            stop_reason: StopReason::BackendError,
            backend_error: Some(format!(
                "episode_timeout: the episode took longer than {timeout} s"
            )),
            provider_limit: None,
            usage: Default::default(),
            provider_usage: vec![],
            timings: vec![],
        };
        let mut sandbox_ms = None;
        // Whatever happens below, the backend may release what the episode held (an agent process).
        struct EndEpisode<'a>(&'a dyn Backend, u64);
        impl Drop for EndEpisode<'_> {
            fn drop(&mut self) {
                self.0.end_episode(self.1);
            }
        }
        let _end = EndEpisode(backend.as_ref(), seed);
        let (episode, live_record) = match &s.live {
            None => {
                let episode = tokio::time::timeout(
                    Duration::from_secs_f64(timeout),
                    run_episode(backend.as_ref(), layout, task, addressing, limits, seed, j.trial),
                )
                .await;
                (episode.unwrap_or_else(|_| timed_out()), None)
            }
            Some(suite) => {
                match live::start(suite, task, backend.clone(), cell.layout.kind(), seed, j.trial)
                    .await
                {
                    Err(e) => {
                        let failed = Episode {
                            backend_error: Some(format!(
                                "mcp_server: the trial's server did not start: {e:#}"
                            )),
                            ..timed_out()
                        };
                        (failed, None)
                    }
                    Ok(run) => {
                        let executor: Arc<dyn crate::exec::LiveExecutor> = run.executor.clone();
                        let guarded =
                            live::Guarded { inner: backend.as_ref(), executor: &run.executor };
                        let episode = crate::exec::LIVE
                            .scope(
                                executor,
                                tokio::time::timeout(
                                    Duration::from_secs_f64(timeout),
                                    run_episode(
                                        &guarded, layout, task, addressing, limits, seed, j.trial,
                                    ),
                                ),
                            )
                            .await;
                        let mut episode = episode.unwrap_or_else(|_| timed_out());
                        if let Some(why) = run.executor.broken.lock().expect("broken").clone()
                            && episode.stop_reason != StopReason::BackendError
                        {
                            episode.stop_reason = StopReason::BackendError;
                            episode.backend_error = Some(format!("mcp_server: {why}"));
                        }
                        let setup = run.setup_ms;
                        let (mut record, teardown) = run.finish(task).await;
                        if record.sampling_usage != Default::default() {
                            record.sampling_cost_usd =
                                backend.price().map(|p| p.cost(&record.sampling_usage));
                        }
                        sandbox_ms = Some((setup, teardown));
                        (episode, Some(record))
                    }
                }
            }
        };
        let timing = json!({
            "trial_id": self.trial_id(&j),
            "episode_ms": started.elapsed().as_secs_f64() * 1000.0,
            "requests": episode.timings,
        });
        let mut timing = timing;
        if let Some((setup, teardown)) = sandbox_ms {
            timing["sandbox_ms"] = json!(setup + teardown);
            timing["sandbox_setup_ms"] = json!(setup);
            timing["sandbox_teardown_ms"] = json!(teardown);
        }
        let calls: Vec<ScoredCall> = episode
            .calls
            .iter()
            .map(|r| {
                let id = r.tool_id.as_deref().unwrap_or_default();
                let added =
                    scenario.as_ref().and_then(|sc| sc.added.as_ref()).filter(|(a, _, _)| a == id);
                ScoredCall {
                    read_only: added
                        .map(|a| a.1)
                        .or_else(|| s.read_only.get(id).copied())
                        .unwrap_or(false),
                    destructive: added
                        .map(|a| a.2)
                        .or_else(|| s.destructive.get(id).copied())
                        .unwrap_or(false),
                    record: r.clone(),
                }
            })
            .collect();
        let expected_destructive =
            task.expected.iter().any(|e| s.destructive.get(&e.tool).copied().unwrap_or(false));
        let declared: Declared = task
            .expected
            .iter()
            .flat_map(|e| std::iter::once(&e.tool).chain(&e.alternatives))
            .filter_map(|t| s.params.get(t).map(|p| (t.clone(), p.clone())))
            .collect();
        let place = trial::Place {
            dataset: &s.dataset.name,
            catalog: &s.catalog,
            variant: &cell.variant,
            layout: cell.layout.kind(),
            backend: backend.name(),
            task,
            trial: j.trial,
            matrix_index: j.index,
            seed,
        };
        let played = trial::Played {
            calls,
            episode,
            definitions_upfront: tokens_upfront,
            price: backend.price(),
            expected_destructive,
            declared,
            live: live_record,
        };
        let trial = trial::build(place, played);
        (trial, timing)
    }
}

/// Options that change how a run executes, not what it computes.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Re-run trials recorded as infrastructure errors.
    pub retry_errors: bool,
    /// No progress output.
    pub quiet: bool,
    /// Run only this shard of the matrix.
    pub shard: Option<shard::Shard>,
    /// Live servers started ahead of their trials (`--live-pool`; `None`: the cores available, 0: off).
    pub live_pool: Option<usize>,
}

/// What a finished run reports.
pub struct RunOutcome {
    pub dir: PathBuf,
    pub executed: usize,
    pub skipped: usize,
    pub discarded_bytes: usize,
    pub seconds: f64,
    /// The run directory's lock, still held: the caller renders the reports under it, so nothing
    /// else can write the directory between the last trial and the reports.
    pub lock: guard::DirLock,
}

/// Execute (or resume) the run in `dir` and compact the trials into matrix order. The run ends with
/// its last record and `run.json`; the reports are the caller's (the command line's pipeline, under the
/// returned lock).
pub async fn execute(
    prepared: Prepared,
    dir: &Path,
    meta: RunMeta,
    options: ExecOptions,
) -> Result<RunOutcome> {
    if let Some(s) =
        prepared.suites.iter().find(|s| s.live.as_ref().is_some_and(|l| l.spec.url.is_some()))
    {
        return Err(InputError::new(
            format!("--catalog {}", s.catalog),
            crate::mcp::live::URL_CATALOG_IN_RUN,
        )
        .field("mcp.command")
        .into());
    }
    let started = Instant::now();
    let hash = prepared.config.matrix_hash();
    if dir.exists() {
        let run_json = dir.join(RUN_JSON);
        let existing = RunMeta::read_if_present(dir)?.ok_or_else(|| {
            InputError::new(
                dir,
                "directory exists but is not a toolpick run (no run.json); choose another --run-id",
            )
        })?;
        if existing.shard != options.shard {
            return Err(InputError::new(
                &run_json,
                format!(
                    "this run was started as {}; resume it with the same --shard or choose another --run-id",
                    existing.shard.map(|s| format!("shard {s}")).unwrap_or_else(|| "an unsharded run".into())
                ),
            )
            .field("shard")
            .into());
        }
        if existing.matrix_hash != hash {
            return Err(InputError::new(
                &run_json,
                "this run was started with a different matrix (datasets, catalogs, variants, layouts, models, trials, seed, steps or task subset); resume with the same settings or choose another --run-id",
            )
            .field("matrix_hash")
            .into());
        }
    }
    // What is left to run (a fresh run: everything), read before anything is written.
    // One process writes a run directory at a time; then leftovers of killed ones can go. A new
    // directory is locked once the preflight has passed and it is created (nothing is written before).
    let mut lock = if dir.exists() { Some(lock_run_dir(dir)?) } else { None };
    let trials_path = dir.join(crate::record::TRIALS);
    let existing = store::scan(&trials_path)?;
    if existing.discarded > 0 {
        crate::messages::note(format_args!(
            "discarded a torn last record ({} bytes) in {}; that trial runs again",
            existing.discarded,
            trials_path.display()
        ));
    }
    // A torn transcript line belongs to a trial without a record, which runs again.
    let transcripts_path = dir.join(transcripts::FILE);
    store::cut_torn_tail(&transcripts_path)?;
    let mut all_jobs = prepared.jobs();
    if let Some(sh) = options.shard {
        let ids: Vec<String> = all_jobs.iter().map(|j| prepared.trial_id(j)).collect();
        let mine = sh.select(&ids);
        all_jobs = all_jobs.into_iter().zip(mine).filter(|(_, m)| *m).map(|(j, _)| j).collect();
    }
    let order: HashMap<String, usize> =
        all_jobs.iter().map(|j| (prepared.trial_id(j), j.index)).collect();
    let mut pending: Vec<Job> = all_jobs
        .iter()
        .filter(|j| match existing.done.get(&prepared.trial_id(j)) {
            None => true,
            Some(&is_error) => is_error && options.retry_errors,
        })
        .copied()
        .collect();
    let skipped = all_jobs.len() - pending.len();
    // Run a task's jobs in every backend and trial next to each other, so a per-task presentation (a
    // tool-count curve's) is built once and freed soon. Only the execution order changes: records are
    // compacted into matrix order.
    pending.sort_by_key(|j| (j.suite, j.cell, j.task, j.backend, j.trial));
    prepared.plan_scenarios(&pending);
    let mut pending_per_backend = vec![0usize; prepared.backends.len()];
    for j in &pending {
        pending_per_backend[j.backend] += 1;
    }
    // Every endpoint that has trials to run answers, or nothing is written (exit 1).
    failfast::check(&prepared.endpoints, &prepared.config.models, &pending_per_backend).await?;

    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create run directory {}", dir.display()))?;
    let lock = match lock.take() {
        Some(l) => l,
        None => lock_run_dir(dir)?,
    };
    let mut meta = meta;
    meta.matrix_hash = hash;
    meta.trial_format = transcripts::FORMAT;
    meta.config = match serde_json::to_value(&prepared.config)? {
        Value::Object(settings) => Some(settings),
        other => anyhow::bail!("the run's settings serialised as `{other}`, not an object"),
    };
    meta.discovery_rule = Some(serde_json::to_value(prepared.config.discovery)?);
    meta.shard = options.shard;
    if !prepared.config.subset.is_empty() {
        let mut subset = serde_json::to_value(&prepared.config.subset)?;
        subset["kept"] = serde_json::to_value(&prepared.kept)?;
        meta.subset = Some(subset);
    }
    meta.write(dir)?;
    let offered: BTreeMap<&String, &Vec<FunctionDef>> =
        prepared.suites.iter().flat_map(|s| s.offered.iter()).collect();
    crate::files::write_atomic(
        &dir.join(crate::record::TOOLS),
        &serde_json::to_vec_pretty(&offered)?,
    )?;
    crate::files::write_atomic(
        &dir.join(crate::record::LINT),
        &serde_json::to_vec_pretty(&super::lint_summary::lint_variants(&prepared))?,
    )?;
    crate::files::write_atomic(
        &dir.join(crate::record::DEFECTS),
        &serde_json::to_vec_pretty(&prepared.defects)?,
    )?;

    // Progress per cell, counting only what runs now.
    let mut labels: Vec<String> = Vec::new();
    let mut label_index: HashMap<String, usize> = HashMap::new();
    let mut counts: Vec<u64> = Vec::new();
    let mut cell_backend: Vec<usize> = Vec::new();
    let pending_cells: Vec<usize> = pending
        .iter()
        .map(|j| {
            let label = prepared.cell_label(j);
            let i = *label_index.entry(label.clone()).or_insert_with(|| {
                labels.push(label);
                counts.push(0);
                cell_backend.push(j.backend);
                labels.len() - 1
            });
            counts[i] += 1;
            i
        })
        .collect();
    let bars: Vec<(String, u64)> = labels.into_iter().zip(counts).collect();
    let progress = Arc::new(progress::Progress::new(&bars, options.quiet));

    let prepared = Arc::new(prepared);
    let (tx, rx) = tokio::sync::mpsc::channel::<RunEvent>(256);
    let mut subscribers: Vec<Box<dyn Subscriber>> = vec![
        Box::new(TrialWriter::open(dir)?),
        Box::new(TimingsWriter::open(dir)?),
        Box::new(ProgressDisplay { progress: progress.clone(), cell_backend }),
    ];
    let dispatcher = tokio::task::spawn_blocking(move || events::dispatch(rx, &mut subscribers));

    let semaphores: Vec<Arc<tokio::sync::Semaphore>> = prepared
        .backends
        .iter()
        .map(|b| Arc::new(tokio::sync::Semaphore::new(b.concurrency().clamp(1, 4096))))
        .collect();
    // Enough tasks in flight to saturate every endpoint, never the whole matrix at once.
    let in_flight = prepared
        .backends
        .iter()
        .map(|b| b.concurrency().clamp(1, 4096))
        .sum::<usize>()
        .clamp(1, 8192);
    let retries = {
        let p = prepared.clone();
        move || {
            p.backends
                .iter()
                .filter_map(|b| b.stats())
                .map(|s| s["retries"].as_u64().unwrap_or(0))
                .sum::<u64>()
        }
    };
    // The episode phase, timed apart from preparation and reporting (for benchmarks: trials/s and harness
    // CPU per trial against the endpoint's latency bound).
    let breakers = Arc::new(failfast::Breakers::new(
        prepared
            .config
            .models
            .iter()
            .map(|m| if m.is_endpoint() { m.breaker } else { 0 })
            .collect(),
    ));
    let phase_started = Instant::now();
    let phase_cpu = process_cpu_seconds();
    // Plain progress lines come on time even while no trial finishes (a slow model).
    let ticker = {
        let (tx, retries) = (tx.clone(), retries.clone());
        tokio::spawn(async move {
            let mut every =
                tokio::time::interval(Duration::from_secs(1).min(progress::Progress::interval()));
            loop {
                every.tick().await;
                if tx.send(RunEvent::Tick { retries: retries() }).await.is_err() {
                    break;
                }
            }
        })
    };
    // Live trials' servers start ahead of them; drained below, or by the guard on an error path.
    let pools = live_pool::Pools::plan(&prepared, &pending, options.live_pool);
    let mut set = tokio::task::JoinSet::new();
    for (job, cell) in pending.iter().copied().zip(pending_cells) {
        if breakers.is_open(job.backend) {
            continue;
        }
        while set.len() >= in_flight {
            set.join_next().await.expect("non-empty").context("an episode task panicked")?;
        }
        let p = prepared.clone();
        let sem = semaphores[job.backend].clone();
        let tx = tx.clone();
        let retries = retries.clone();
        let breakers = breakers.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await.expect("semaphore open");
            // An open breaker drops the endpoint's queued and in-flight episodes: not written, they
            // run on resume.
            if breakers.is_open(job.backend) {
                return;
            }
            let _ = tx.send(RunEvent::TrialStarted { cell }).await;
            let (mut trial, timing) = tokio::select! {
                done = p.run_job(job) => done,
                _ = breakers.opened(job.backend) => return,
            };
            let was_open = breakers.is_open(job.backend);
            breakers.record(job.backend, trial.error.as_deref());
            let transcript = std::mem::take(&mut trial.transcript);
            let finished = RunEvent::TrialFinished {
                cell,
                trial: Box::new(trial),
                transcript,
                timing,
                retries: retries(),
            };
            let _ = tx.send(finished).await;
            if !was_open && breakers.is_open(job.backend) {
                let _ = tx.send(RunEvent::EndpointTripped { backend: job.backend }).await;
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.context("an episode task panicked")?;
    }
    pools.drain().await;
    ticker.abort();
    drop(tx);
    dispatcher.await.context("the trial writer panicked")??;
    let phase_seconds = phase_started.elapsed().as_secs_f64();
    let phase_cpu = process_cpu_seconds().zip(phase_cpu).map(|(end, start)| end - start);
    progress.finish();
    // An open breaker ends the run as an interruption does: finished trials stay (uncompacted, which
    // a resume handles), no reports, exit 1 with the cause.
    if let Some(stopped) = failfast::tripped_error(
        &breakers,
        &prepared.endpoints,
        &prepared.config.models,
        &pending_per_backend,
        dir,
    ) {
        return Err(stopped);
    }

    store::compact_run(dir, |id, _| order.get(id).copied())?;
    let endpoint_stats: BTreeMap<String, Value> = prepared
        .backends
        .iter()
        .filter_map(|b| b.stats().map(|s| (b.name().to_string(), s)))
        .collect();
    meta.endpoints = Some(endpoint_stats);
    meta.executed_trials = Some(pending.len());
    meta.skipped_trials = Some(skipped);
    meta.seconds = Some(started.elapsed().as_secs_f64());
    meta.episode_phase_seconds = Some(phase_seconds);
    meta.episode_phase_cpu_seconds = phase_cpu;
    meta.tasks = Some(prepared.task_count());
    let live: Vec<Value> = prepared
        .suites
        .iter()
        .filter_map(|s| s.live.as_ref().map(|l| json!({"dataset": s.dataset.name, "catalog": s.catalog, "server": l.spec.server, "command": l.spec.command})))
        .collect();
    if !live.is_empty() {
        // What the platform gave: a network namespace per server, or none (then servers share the
        // machine's network; see docs/mcp.md).
        let isolation = match crate::mcp::client::network_isolation() {
            Some(prefix) => format!("network namespace per server ({})", prefix.join(" ")),
            None => {
                "none: `unshare` is not available to this user, servers share the machine's network"
                    .to_string()
            }
        };
        meta.live = Some(
            json!({"suites": live, "network_isolation": isolation, "options": prepared.config.live}),
        );
    }
    meta.write(dir)?;
    Ok(RunOutcome {
        dir: dir.to_path_buf(),
        executed: pending.len(),
        skipped,
        discarded_bytes: existing.discarded,
        seconds: started.elapsed().as_secs_f64(),
        lock,
    })
}

/// CPU time (user + system, all threads) this process has used, from `/proc/self/stat` (Linux; `None`
/// elsewhere). The kernel reports it in clock ticks of 1/100 s (`USER_HZ`).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let (utime, stime): (f64, f64) = (fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?);
    Some((utime + stime) / 100.0)
}
