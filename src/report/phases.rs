//! Where a report's time goes: with `TOOLPICK_PHASES=1` in the environment, [`render_run`] and
//! [`load_run`] print one line per phase to stderr when they finish (`phase <name> <seconds>`), for
//! `scripts/bench.sh`'s per-phase table. Without it nothing is measured (one check of a flag per
//! span) and nothing is printed; the outputs are the same either way.
//!
//! The trial scan is a pipeline (a reader thread, parsing on every core, a writer thread), so the
//! scan's phases are CPU time summed over the threads that ran them, and `scan` is its wall time.
//! The phases after it are wall time each, but not all one after the other: the `finish` of the
//! per-trial files runs beside the analysis, and the `render` of the aggregate files run side by side.
//!
//! [`render_run`]: super::render_run
//! [`load_run`]: super::load_run

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Instant;

/// 0: not decided yet (read `TOOLPICK_PHASES` on first use), 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether phases are measured in this process (`TOOLPICK_PHASES` set and not `0`, or [`set_enabled`]).
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var_os("TOOLPICK_PHASES").is_some_and(|v| !v.is_empty() && v != "0");
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        state => state == 2,
    }
}

/// Measure phases from now on, or stop (a benchmark times its runs untimed, then one run with phases).
pub fn set_enabled(on: bool) {
    STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Nanoseconds per phase, in the order phases were first timed.
static TOTALS: Mutex<Vec<(String, AtomicU64)>> = Mutex::new(Vec::new());

/// A phase's running total (created on first use; cheap after that for the few phases there are).
fn add(name: &str, nanos: u64) {
    let mut totals = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
    match totals.iter().find(|(n, _)| n == name) {
        Some((_, t)) => {
            t.fetch_add(nanos, Ordering::Relaxed);
        }
        None => totals.push((name.to_string(), AtomicU64::new(nanos))),
    }
}

/// A span being timed: `None` when phases are not measured.
#[must_use]
pub struct Span(Option<Instant>);

/// Start timing a span.
pub fn start() -> Span {
    Span(enabled().then(Instant::now))
}

impl Span {
    /// Add the time since the span started to `name`'s total.
    pub fn end(self, name: &str) {
        if let Some(at) = self.0 {
            add(name, at.elapsed().as_nanos() as u64);
        }
    }
}

/// Time `f` as phase `name`.
pub fn time<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let span = start();
    let out = f();
    span.end(name);
    out
}

/// Per-thread totals of the scan's hot, per-trial phases, added to the shared totals once per batch
/// (so a million trials cost no lock per trial).
#[derive(Default)]
pub struct Local(Vec<(&'static str, u64)>);

impl Local {
    /// Time `f` into this thread's total for `name`.
    pub fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        if !enabled() {
            return f();
        }
        let at = Instant::now();
        let out = f();
        let nanos = at.elapsed().as_nanos() as u64;
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => *t += nanos,
            None => self.0.push((name, nanos)),
        }
        out
    }

    /// Add this thread's totals to the shared ones.
    pub fn flush(&mut self) {
        for (name, nanos) in self.0.drain(..) {
            add(name, nanos);
        }
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Print every phase's total to stderr and start over (when phases are measured).
pub fn report() {
    if !enabled() {
        return;
    }
    let mut totals = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
    for (name, nanos) in totals.drain(..) {
        crate::messages::err_line(format_args!(
            "phase {name} {:.3}",
            nanos.into_inner() as f64 / 1e9
        ));
    }
}
