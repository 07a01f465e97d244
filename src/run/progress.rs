//! Progress reporting, kept apart from the runner: indicatif bars per cell on a terminal, plain
//! periodic log lines otherwise (CI logs), and nothing at all when asked to be quiet.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct CellCount {
    /// Started and not yet finished (episodes holding their endpoint's permit).
    running: u64,
    /// The cell's endpoint tripped its breaker: nothing more of it runs now.
    stopped: bool,
    done: u64,
    passed: u64,
    errors: u64,
}

pub struct Progress {
    bars: Vec<ProgressBar>,
    counts: Mutex<Vec<CellCount>>,
    plain: bool,
    quiet: bool,
    last_line: Mutex<Instant>,
    total: u64,
    started: Instant,
    /// A line for live servers' progress notifications, added when the first arrives.
    live: Mutex<Option<ProgressBar>>,
    multi: MultiProgress,
    /// While the bars are drawn, notes on stderr are written around them ([`crate::messages`]).
    shown: Mutex<Option<crate::messages::BarsShown>>,
    /// The endpoints' retries at the last finished trial or tick, for the message of a trial that
    /// starts in between.
    retries: AtomicU64,
}

impl Progress {
    /// `cells`: (label, trials to run now).
    pub fn new(cells: &[(String, u64)], quiet: bool) -> Progress {
        let tty = crate::messages::stderr_is_terminal() && std::env::var_os("CI").is_none();
        let drawn = tty && !quiet;
        let multi = MultiProgress::with_draw_target(if drawn {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let shown = Mutex::new(drawn.then(|| crate::messages::show_bars(&multi)));
        let style = ProgressStyle::with_template(
            "{prefix:<40} {bar:28} {pos:>6}/{len:<6} eta {eta:>4} {msg}",
        )
        .expect("template")
        .progress_chars("=> ");
        let bars = cells
            .iter()
            .map(|(label, n)| {
                let b = multi.add(ProgressBar::new(*n));
                b.set_style(style.clone());
                b.set_prefix(label.clone());
                b
            })
            .collect();
        Progress {
            bars,
            counts: Mutex::new(
                cells
                    .iter()
                    .map(|_| CellCount {
                        running: 0,
                        stopped: false,
                        done: 0,
                        passed: 0,
                        errors: 0,
                    })
                    .collect(),
            ),
            plain: !tty,
            quiet,
            last_line: Mutex::new(Instant::now()),
            total: cells.iter().map(|c| c.1).sum(),
            started: Instant::now(),
            live: Mutex::new(None),
            multi,
            shown,
            retries: AtomicU64::new(0),
        }
    }

    /// Per cell, the trials started and not finished.
    #[cfg(test)]
    pub fn running(&self) -> Vec<u64> {
        self.counts.lock().expect("progress lock").iter().map(|c| c.running).collect()
    }

    /// One trial of `cell` started (a stopped cell's late starts are not counted: they will not
    /// finish).
    pub fn started(&self, cell: usize) {
        let msg = {
            let mut counts = self.counts.lock().expect("progress lock");
            let c = &mut counts[cell];
            if c.stopped {
                return;
            }
            c.running += 1;
            cell_message(c, self.retries.load(Ordering::Relaxed))
        };
        self.bars[cell].set_message(msg);
    }

    /// One trial of `cell` finished.
    pub fn record(&self, cell: usize, passed: bool, error: bool, retries: u64) {
        let (msg, done_all) = {
            let mut counts = self.counts.lock().expect("progress lock");
            let c = &mut counts[cell];
            c.running = c.running.saturating_sub(1);
            c.done += 1;
            c.passed += u64::from(passed);
            c.errors += u64::from(error);
            let msg = cell_message(c, retries);
            (msg, counts.iter().map(|c| c.done).sum::<u64>())
        };
        self.retries.store(retries, Ordering::Relaxed);
        self.bars[cell].inc(1);
        self.bars[cell].set_message(msg);
        self.plain_line(done_all == self.total, retries);
    }

    /// `cell`'s endpoint stopped (its breaker opened): what is left of the cell does not run now.
    pub fn stopped(&self, cell: usize) {
        {
            let mut counts = self.counts.lock().expect("progress lock");
            counts[cell].stopped = true;
            counts[cell].running = 0;
        }
        self.bars[cell].set_message("stopped: the endpoint's breaker opened");
        self.bars[cell].abandon();
    }

    /// Called every second by the runner: without a terminal, a plain line every [`Progress::interval`]
    /// even while no trial finishes (a CPU model may take minutes per trial).
    pub fn tick(&self, retries: u64) {
        self.retries.store(retries, Ordering::Relaxed);
        if let Some(text) = live_progress() {
            let mut live = self.live.lock().expect("progress lock");
            let bar = live.get_or_insert_with(|| {
                let b = self.multi.add(ProgressBar::new_spinner());
                b.set_style(ProgressStyle::with_template("{prefix:<40} {msg}").expect("template"));
                b.set_prefix("live servers");
                b
            });
            bar.set_message(text);
        }
        self.plain_line(false, retries);
    }

    /// How often plain lines are printed: 5 s (`TOOLPICK_PROGRESS_INTERVAL_MS` overrides it, for tests).
    pub fn interval() -> Duration {
        std::env::var("TOOLPICK_PROGRESS_INTERVAL_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(5))
    }

    fn plain_line(&self, last_trial: bool, retries: u64) {
        if !self.plain || self.quiet {
            return;
        }
        let mut last = self.last_line.lock().expect("progress lock");
        if last.elapsed() < Self::interval() && !last_trial {
            return;
        }
        *last = Instant::now();
        let (running_all, done_all, passed_all, errors_all) = {
            let counts = self.counts.lock().expect("progress lock");
            (
                counts.iter().map(|c| c.running).sum::<u64>(),
                counts.iter().map(|c| c.done).sum::<u64>(),
                counts.iter().map(|c| c.passed).sum::<u64>(),
                counts.iter().map(|c| c.errors).sum::<u64>(),
            )
        };
        let scored = done_all - errors_all;
        let rate = if scored == 0 { 0.0 } else { 100.0 * passed_all as f64 / scored as f64 };
        let live = live_progress().map(|t| format!(", {t}")).unwrap_or_default();
        crate::messages::err_line(format_args!(
            "progress: {done_all}/{} trials, {running_all} running, pass {rate:.1}%, errors {errors_all}, retries {retries}, {:.1}s{live}",
            self.total,
            self.started.elapsed().as_secs_f64()
        ));
    }

    pub fn finish(&self) {
        for b in &self.bars {
            b.finish();
        }
        if let Some(b) = self.live.lock().expect("progress lock").as_ref() {
            b.finish();
        }
        self.shown.lock().expect("progress lock").take();
    }
}

/// A cell bar's message: its pass rate over scored trials, errors, retries and what is running.
fn cell_message(c: &CellCount, retries: u64) -> String {
    let scored = c.done - c.errors;
    let rate = if scored == 0 { 0.0 } else { 100.0 * c.passed as f64 / scored as f64 };
    format!("pass {rate:5.1}%  errors {}  retries {retries}  running {}", c.errors, c.running)
}

/// The live servers' progress notifications so far, once there are any.
fn live_progress() -> Option<String> {
    let n = super::live::PROGRESS_SEEN.load(std::sync::atomic::Ordering::Relaxed);
    (n > 0).then(|| {
        format!(
            "mcp progress notifications {n} (last: {})",
            super::live::LAST_PROGRESS.lock().expect("last progress")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_counts_what_started_and_has_not_finished() {
        let p = Progress::new(&[("a".into(), 3), ("b".into(), 2)], true);
        p.started(0);
        p.started(0);
        p.started(1);
        assert_eq!(p.running(), [2, 1]);
        p.record(0, true, false, 0);
        assert_eq!(p.running(), [1, 1]);
        p.record(1, false, true, 0);
        p.record(0, false, false, 0);
        assert_eq!(p.running(), [0, 0]);
    }

    #[test]
    fn a_stopped_cell_runs_nothing_and_ignores_late_starts() {
        let p = Progress::new(&[("a".into(), 3), ("b".into(), 3)], true);
        p.started(0);
        p.started(0);
        p.started(1);
        // The breaker drops the cell's in-flight episodes: they never finish.
        p.stopped(0);
        p.started(0);
        assert_eq!(p.running(), [0, 1]);
    }

    #[test]
    fn the_bar_message_shows_what_is_running() {
        let c = CellCount { running: 3, stopped: false, done: 4, passed: 2, errors: 1 };
        assert_eq!(cell_message(&c, 5), "pass  66.7%  errors 1  retries 5  running 3");
    }
}
