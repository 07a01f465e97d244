//! Per-task presentations: a task with its own candidates, a poison or a distractor level sees its
//! own catalog in a cell. Each is built once, by whichever of its jobs runs first, shared by every
//! backend and trial of the (suite, cell, task), and dropped after its last pending job took it.
//!
//! Its own file because it is the one part of the plan that changes while the run executes (the
//! shared table and its counts); the rest of the plan is fixed once built.

use super::suite::{Cell, Suite, addressing};
use super::{Job, Prepared};
use crate::agent::Addressing;
use crate::exec::Executor;
use crate::layout::{FlatLayout, Layout};
use crate::run::scenario::{poisoned, restricted};
use anyhow::Result;
use std::sync::{Arc, OnceLock};

/// A presentation built for one poisoned scenario.
pub(in crate::run) struct Scenario {
    pub(in crate::run) layout: Box<dyn Layout>,
    pub(in crate::run) addressing: Addressing,
    pub(in crate::run) tokens_upfront: usize,
    pub(in crate::run) added: Option<(String, bool, bool)>,
}

/// A per-task presentation, built once by whichever of its jobs comes first.
pub(in crate::run) struct SharedScenario {
    pub(in crate::run) built: Arc<OnceLock<Scenario>>,
    /// Pending jobs that have not taken it yet.
    pub(in crate::run) left: usize,
}

impl Prepared {
    /// The presentation for a task with its own candidate set and/or a poison, in a cell.
    pub(in crate::run) fn scenario(&self, s: &Suite, cell: &Cell, t: usize) -> Result<Scenario> {
        let task = &s.dataset.tasks[t];
        let candidates = s.candidates(cell, t, self.config.seed);
        let base = if candidates.is_empty() {
            (*cell.shown).clone()
        } else {
            restricted(&cell.shown, candidates)
        };
        let (catalog, added) = match &task.poison {
            Some(p) => poisoned(&base, p)?,
            None => (base, None),
        };
        let executor = Arc::new(match &added {
            Some(t) => s.executor.with_extra(t)?,
            None => Executor::clone_shared(&s.executor),
        });
        let flat = FlatLayout::new(&catalog, executor.clone());
        let addressing = addressing(&catalog, &flat);
        let layout: Box<dyn Layout> = crate::layout::build(
            cell.layout.kind(),
            catalog,
            executor,
            s.discovery,
            &s.search_terms,
        );
        let tokens_upfront = s.tokens.count(layout.functions());
        let added = added
            .map(|t| (t.id.clone(), t.annotations.read_only_hint, t.annotations.destructive_hint));
        Ok(Scenario { layout, addressing, tokens_upfront, added })
    }

    /// Whether a task gets its own presentation in a cell (its candidates, a poison, a distractor level).
    pub(in crate::run) fn per_task(s: &Suite, cell: &Cell, t: usize) -> bool {
        let task = &s.dataset.tasks[t];
        task.poison.is_some() || !task.candidates.is_empty() || cell.distractors.is_some()
    }

    /// Count the pending jobs of each per-task presentation, so it is built once and dropped after its
    /// last job.
    pub(in crate::run) fn plan_scenarios(&self, pending: &[Job]) {
        let mut plan = self.scenarios.lock().expect("scenario lock");
        for j in pending {
            let s = &self.suites[j.suite];
            if Self::per_task(s, &s.cells[j.cell], j.task) {
                plan.entry((j.suite, j.cell, j.task))
                    .or_insert_with(|| SharedScenario { built: Arc::new(OnceLock::new()), left: 0 })
                    .left += 1;
            }
        }
    }

    /// A job's per-task presentation: built by the first of its jobs to ask (the others wait for it).
    pub(in crate::run) fn shared_scenario(&self, j: &Job) -> Arc<OnceLock<Scenario>> {
        let key = (j.suite, j.cell, j.task);
        let built = {
            let mut plan = self.scenarios.lock().expect("scenario lock");
            match plan.get_mut(&key) {
                Some(shared) => {
                    shared.left -= 1;
                    let built = shared.built.clone();
                    if shared.left == 0 {
                        plan.remove(&key);
                    }
                    built
                }
                // Not planned (a job run outside `execute`): built for this job alone.
                None => Arc::new(OnceLock::new()),
            }
        };
        let s = &self.suites[j.suite];
        // Checked in `build_suite`, so building the scenario cannot fail here.
        built.get_or_init(|| {
            self.scenario(s, &s.cells[j.cell], j.task)
                .expect("task scenario was checked when the suite was built")
        });
        built
    }
}
