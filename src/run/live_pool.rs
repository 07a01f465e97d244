//! The warm pool of a live run (`--live-pool N`): while the current trials run, the next trials'
//! sandboxes are made and their servers started and initialised, so a trial takes a server that is
//! ready instead of waiting for one to start.
//!
//! **Isolation does not change.** A warm entry is made for one planned trial, from that trial's task
//! (its fixture and files, the same [`Sandbox::create`] as a cold start), and is taken by exactly one
//! trial whose task makes the same sandbox (the same fixture and files: usually that task); it is
//! never shared and never reused. Entries of the same recipe are alike (a fresh copy of the same
//! fixture, a server that has only answered `initialize`), so which of them a trial takes cannot
//! change what it records: identical runs stay byte-identical with the pool on or off. A trial takes
//! the oldest entry of its recipe, so trials that reach the pool out of the planned order (the
//! runtime runs them in no set order) still take the servers that were started first. Until a trial takes it, the server's elicitation and sampling requests (none of today's
//! servers sends one before a call) are declined and refused: nobody is there to answer them.
//!
//! **Size.** At most `size` servers are started ahead (starting or waiting, not yet taken); the
//! default is the cores available or `[live] sandboxes`, whichever is more ([`default_size`]). Every
//! start of the suite's trials goes through the pool, a trial's own included (a trial with no entry of
//! its recipe — the pool is behind, or the trial came out of the planned order — gets one started
//! ahead of the plan's, and one planned trial of its recipe leaves the plan),
//! and at most `max(size, [live] sandboxes)` start at once: never fewer than the trials that could
//! start at once without the pool, and never `sandboxes` cold starts *plus* the pool's on top of them.
//! Starts take their turns in the order they were asked for, a waiting trial's own start first
//! ([`Turns`]).
//! (Starts at once bounded by the cores alone was measured slower than no pool with 4 sandboxes: a
//! start also waits on the disk and the process set-up, not only the CPU.)
//!
//! **Teardown.** With the pool on, a finished trial's final state is checked as soon as its last call
//! has been answered, and its server is stopped and its sandbox removed off the trial's path
//! ([`Pool::retire`]), so the next trial does not wait for it; without the pool the server is stopped
//! first, as before.
//!
//! **Failures.** A warm server that has exited by the time its trial takes it is stopped and replaced
//! by a cold start for that trial. A server that did not start at all is that trial's infrastructure
//! error, as without the pool (starting it again would only double the wait).
//!
//! **Draining.** The pool is drained when the run's trials end (its unstarted plan dropped, starts
//! under way cancelled, ready servers stopped and their sandboxes removed); on an error path the
//! [`Pools`] guard does the same synchronously when dropped, and a SIGINT or SIGTERM reaches pooled
//! servers and sandboxes through the process-wide net of `mcp::process` like any other.

use super::live::{LateResponder, LiveSuite, runtime};
use super::plan::{Job, Prepared};
use crate::dataset::Task;
use crate::mcp::client::Session;
use crate::mcp::live::Sandbox;
use anyhow::Result;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// The default pool size: the cores available to toolpick, and at least the trials that run at once
/// (`sandboxes`): trials of one task last about as long, so they end together, and each needs its
/// next server ready then (a pool of the cores alone, 2, left half of 4 such trials waiting: measured).
pub fn default_size(sandboxes: usize) -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).max(sandboxes)
}

/// What a trial's sandbox is made from: its task's fixture directory and inline files.
#[derive(Debug, Clone)]
pub struct Recipe {
    pub task: String,
    pub fixture: Option<PathBuf>,
    pub files: BTreeMap<String, String>,
}

/// A sandbox whose server is started and initialised, waiting for its trial. The session is declared
/// first, so it is stopped before its sandbox is removed.
pub struct Warm {
    pub session: Session,
    pub sandbox: Sandbox,
    pub late: Arc<LateResponder>,
}

struct State {
    /// Trials planned and not yet given an entry, in the order the run starts them.
    upcoming: VecDeque<Recipe>,
    /// Entries starting or ready, oldest first, with the recipe each was made from.
    started: Vec<(Recipe, JoinHandle<Result<Warm>>)>,
    /// Drained: nothing more is started.
    closed: bool,
}

/// One live suite's warm pool.
pub struct Pool {
    size: usize,
    state: Mutex<State>,
    /// Turns to start a server (every start of the suite's trials goes through the pool), at most
    /// `at_once` at a time, in the order they were asked for.
    turns: Turns,
    /// Finished trials' servers being stopped and sandboxes removed, awaited by [`Pool::drain`].
    retiring: Mutex<Vec<JoinHandle<()>>>,
}

impl Recipe {
    /// The sandbox recipe of a trial of `task`.
    pub fn of(suite: &LiveSuite, task: &Task) -> Recipe {
        Recipe {
            task: task.id.clone(),
            fixture: suite.fixture(task),
            files: task.live.as_ref().map(|l| l.files.clone()).unwrap_or_default(),
        }
    }

    /// Both make the same sandbox: the same fixture copied, the same files written (the task may
    /// differ: the sandbox does not know it).
    fn makes_same_sandbox(&self, other: &Recipe) -> bool {
        self.fixture == other.fixture && self.files == other.files
    }
}

impl Pool {
    /// A pool starting `size` servers ahead, at most `at_once` at a time, for the trials `upcoming`.
    pub fn new(size: usize, at_once: usize, upcoming: VecDeque<Recipe>) -> Pool {
        Pool {
            size,
            state: Mutex::new(State { upcoming, started: Vec::new(), closed: false }),
            turns: Turns::new(at_once),
            retiring: Mutex::new(Vec::new()),
        }
    }

    /// Stop a finished trial's server and remove its sandbox off the trial's path (`stop`), on the
    /// live runtime; [`Pool::drain`] waits for it.
    pub fn retire(&self, stop: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut retiring = self.retiring.lock().unwrap_or_else(|e| e.into_inner());
        retiring.retain(|h| !h.is_finished());
        retiring.push(runtime().spawn(stop));
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Start entries for the next planned trials until `size` are starting or waiting.
    pub fn refill(&self, suite: &Arc<LiveSuite>) {
        let mut state = self.state();
        while !state.closed && state.started.len() < self.size {
            let Some(recipe) = state.upcoming.pop_front() else { break };
            // Asked for here, under the lock, so turns follow the plan's order.
            let handle =
                runtime().spawn(prestart(suite.clone(), recipe.clone(), self.turns.ask(false)));
            state.started.push((recipe, handle));
        }
    }

    /// The oldest entry made from the recipe of a trial of `task`. When there is none (the pool is
    /// behind) one is started for it now, ahead of the plan's starts, and one planned trial of that
    /// recipe leaves the plan. Either way the pool is then topped up. `None` once the pool is drained.
    pub fn take(&self, suite: &Arc<LiveSuite>, task: &Task) -> Option<JoinHandle<Result<Warm>>> {
        let taken = {
            let mut state = self.state();
            if state.closed {
                return None;
            }
            let wanted = Recipe::of(suite, task);
            match state.started.iter().position(|(r, _)| r.makes_same_sandbox(&wanted)) {
                Some(i) => state.started.remove(i).1,
                None => {
                    let planned = state.upcoming.iter().position(|r| r.makes_same_sandbox(&wanted));
                    let recipe = planned.and_then(|i| state.upcoming.remove(i)).unwrap_or(wanted);
                    // A trial is waiting for this one: its turn comes before the plan's.
                    runtime().spawn(prestart(suite.clone(), recipe, self.turns.ask(true)))
                }
            }
        };
        self.refill(suite);
        Some(taken)
    }

    /// Close the pool and take what it holds, for stopping.
    fn close(&self) -> Vec<JoinHandle<Result<Warm>>> {
        let mut state = self.state();
        state.closed = true;
        state.upcoming.clear();
        self.turns.stop();
        std::mem::take(&mut state.started).into_iter().map(|(_, h)| h).collect()
    }

    /// Stop everything the pool holds: starts under way cancelled (their servers stopped and
    /// sandboxes removed as they are dropped), ready servers closed in order, their sandboxes removed.
    pub async fn drain(&self) {
        let handles = self.close();
        for h in &handles {
            if !h.is_finished() {
                h.abort();
            }
        }
        for h in handles {
            if let Ok(Ok(warm)) = h.await {
                let Warm { session, sandbox, .. } = warm;
                let _ = session.close().await;
                let _ = sandbox.remove();
            }
        }
        let retiring =
            std::mem::take(&mut *self.retiring.lock().unwrap_or_else(|e| e.into_inner()));
        for h in retiring {
            let _ = h.await;
        }
    }
}

/// Make the sandbox for `recipe` and start its server, as a cold start does, once its `turn` comes.
async fn prestart(suite: Arc<LiveSuite>, recipe: Recipe, turn: Turn) -> Result<Warm> {
    let _starting = turn.await.map_err(|_| anyhow::anyhow!("the warm pool was drained"))?;
    let sandbox = Sandbox::create(recipe.fixture.as_deref(), &recipe.files)?;
    let late = Arc::new(LateResponder::default());
    let session = super::live::launch(&suite, &sandbox, late.clone()).await?;
    Ok(Warm { session, sandbox, late })
}

/// A turn to start a server: the permit arrives when it is this start's turn.
type Turn = tokio::sync::oneshot::Receiver<tokio::sync::OwnedSemaphorePermit>;

/// Turns to start a server, at most `at_once` at a time, handed out in the order they were asked
/// for, a waiting trial's own start before the plan's. A semaphore the start tasks acquired
/// themselves gave its permits in the order the runtime first polled those tasks, which is not the
/// order they were spawned in: a later trial's server took the turn of an earlier trial's, and the
/// earlier trial waited a whole round of starts more (measured: 3 987 ms against 1 758–1 855 ms for
/// the three other trials of the first round, with 4 Python servers starting at once on 2 cores).
struct Turns {
    urgent: tokio::sync::mpsc::UnboundedSender<tokio::sync::oneshot::Sender<Permit>>,
    planned: tokio::sync::mpsc::UnboundedSender<tokio::sync::oneshot::Sender<Permit>>,
    dispatcher: JoinHandle<()>,
}

type Permit = tokio::sync::OwnedSemaphorePermit;

impl Turns {
    fn new(at_once: usize) -> Turns {
        let (urgent, urgent_rx) = tokio::sync::mpsc::unbounded_channel();
        let (planned, planned_rx) = tokio::sync::mpsc::unbounded_channel();
        let permits = Arc::new(tokio::sync::Semaphore::new(at_once.max(1)));
        let dispatcher = runtime().spawn(hand_out(permits, urgent_rx, planned_rx));
        Turns { urgent, planned, dispatcher }
    }

    /// A place in the queue of starts (`urgent`: a trial is waiting for this start).
    fn ask(&self, urgent: bool) -> Turn {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let _ = if urgent { self.urgent.send(tx) } else { self.planned.send(tx) };
        rx
    }

    /// Hand out no more turns: the starts still waiting for one end with an error.
    fn stop(&self) {
        self.dispatcher.abort();
    }
}

/// Give each permit to the oldest urgent request, else the oldest planned one; a request whose start
/// was cancelled meanwhile passes the permit on to the next.
async fn hand_out(
    permits: Arc<tokio::sync::Semaphore>,
    mut urgent: tokio::sync::mpsc::UnboundedReceiver<tokio::sync::oneshot::Sender<Permit>>,
    mut planned: tokio::sync::mpsc::UnboundedReceiver<tokio::sync::oneshot::Sender<Permit>>,
) {
    loop {
        let Ok(mut permit) = permits.clone().acquire_owned().await else { return };
        loop {
            let request = tokio::select! {
                biased;
                r = urgent.recv() => r,
                r = planned.recv() => r,
            };
            let Some(request) = request else { return };
            match request.send(permit) {
                Ok(()) => break,
                Err(back) => permit = back,
            }
        }
    }
}

/// The pools of a run's live suites, drained when dropped (an error path) if not drained before.
pub struct Pools(Vec<Arc<LiveSuite>>);

impl Pools {
    /// Plan a pool of `size` (`None`: [`default_size`]; 0: none) for every live suite of the run, from
    /// `pending` (the jobs in the order the run starts them), and start its first entries.
    pub(in crate::run) fn plan(prepared: &Prepared, pending: &[Job], size: Option<usize>) -> Pools {
        let mut suites = Vec::new();
        if size == Some(0) {
            return Pools(suites);
        }
        for (i, s) in prepared.suites.iter().enumerate() {
            let Some(live) = &s.live else { continue };
            let size = size.unwrap_or_else(|| default_size(live.options.sandboxes));
            // A server reached by URL is never started per trial (a run refuses it before this).
            if live.spec.url.is_some() {
                continue;
            }
            let upcoming: VecDeque<Recipe> = pending
                .iter()
                .filter(|j| j.suite == i)
                .map(|j| Recipe::of(live, &s.dataset.tasks[j.task]))
                .collect();
            if upcoming.is_empty() {
                continue;
            }
            // Never fewer starts at once than the trials that may start at once without the pool.
            let at_once = size.max(live.options.sandboxes);
            if live.set_pool(Pool::new(size, at_once, upcoming)) {
                live.refill_pool();
                suites.push(live.clone());
            }
        }
        Pools(suites)
    }

    /// Drain every pool (the run's trials have ended).
    pub async fn drain(mut self) {
        for suite in std::mem::take(&mut self.0) {
            if let Some(pool) = suite.pool() {
                pool.drain().await;
            }
        }
    }
}

impl Drop for Pools {
    fn drop(&mut self) {
        for suite in &self.0 {
            if let Some(pool) = suite.pool() {
                // Dropping a finished entry stops its server and removes its sandbox at once (a
                // server's drop is bounded by the stop's grace periods); one still starting is
                // cancelled on the live runtime, which drops what it had started the same way.
                for h in pool.close() {
                    h.abort();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests asked while every permit is held come out waiting trials' first, then the plan's, each
    /// in the order asked, whatever order the runtime runs the tasks waiting for them in; a request
    /// cancelled before its turn passes it on. Sequences of urgent, planned and cancelled requests are
    /// generated from seeds, for 1–3 starts at once.
    #[test]
    fn turns_go_to_waiting_trials_first_then_to_the_plan_in_order_skipping_cancelled_starts() {
        runtime().block_on(async {
            for at_once in 1..=3usize {
                for seed in 1..=25u64 {
                    let turns = Turns::new(at_once);
                    // Hold every permit, so all the requests below are queued before one is granted.
                    let mut held = Vec::new();
                    for _ in 0..at_once {
                        held.push(turns.ask(false).await.expect("a turn"));
                    }
                    let mut state = seed;
                    let mut draw = |n: u64| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (state >> 33) % n
                    };
                    let granted = Arc::new(Mutex::new(Vec::new()));
                    let (mut urgent, mut planned, mut waiters) =
                        (Vec::new(), Vec::new(), Vec::new());
                    for id in 0..10usize {
                        let is_urgent = draw(3) == 0;
                        let turn = turns.ask(is_urgent);
                        if draw(4) == 0 {
                            drop(turn); // the start was cancelled before its turn
                            continue;
                        }
                        if is_urgent {
                            urgent.push(id)
                        } else {
                            planned.push(id)
                        }
                        let granted = granted.clone();
                        // Each records its turn and gives the permit back at once, so with one permit
                        // circulating the record's order is the order of the grants.
                        waiters.push(tokio::spawn(async move {
                            let permit = turn.await.expect("a turn");
                            granted.lock().unwrap().push(id);
                            drop(permit);
                        }));
                    }
                    drop(held.pop());
                    for w in waiters {
                        tokio::time::timeout(std::time::Duration::from_secs(10), w)
                            .await
                            .expect("every request gets its turn")
                            .unwrap();
                    }
                    let want: Vec<usize> = urgent.into_iter().chain(planned).collect();
                    assert_eq!(*granted.lock().unwrap(), want, "at once {at_once}, seed {seed}");
                    turns.stop();
                }
            }
        });
    }
}
