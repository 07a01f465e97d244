//! Fail fast on a bad endpoint: before the first episode, and while the run goes on.
//!
//! - **Preflight**: one cheap request per endpoint that still has trials to run
//!   ([`Endpoint::preflight`]: `GET /models`, else a one-token chat completion, with the normal
//!   retries), all endpoints at once, before any trial or output file is written. An endpoint that is
//!   unreachable, refuses the connection, does not answer JSON or rejects the key stops the run with
//!   exit 1 and one line per endpoint saying what was tried and what came back. In-process backends
//!   (lexical, oracle, random, replay) have nothing to check; `preflight = false` / `--no-preflight`
//!   skips an endpoint.
//! - **Circuit breaker** ([`Breakers`]): when the last N consecutive episodes of one endpoint all ended
//!   in the same infrastructure error class (`connection`, `timeout`, `server_error`, …), that endpoint's
//!   remaining trials are not scheduled and its episodes in flight are dropped (they rerun on resume);
//!   every finished trial stays in `trials.jsonl`, and the run ends like an interrupted one (no
//!   compaction, no reports) with exit 1 and the cause. Running again with the same `--run-id` resumes.

use crate::agent::backends::Endpoint;
use crate::run::config::ModelSpec;
use anyhow::{Result, anyhow};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Check, all at once, every endpoint (`endpoints[i]` is backend `i` if it is one) whose model has
/// `preflight` on and `pending[i]` > 0 trials to run; one URL and key is checked once. All failures are
/// reported, one line each.
pub async fn check(
    endpoints: &[Option<Arc<dyn Endpoint>>],
    models: &[ModelSpec],
    pending: &[usize],
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let mut set = tokio::task::JoinSet::new();
    for (i, backend) in endpoints.iter().enumerate() {
        let m = &models[i];
        let Some(backend) = backend.clone().filter(|_| m.preflight && pending[i] > 0) else {
            continue;
        };
        if !seen.insert((backend.endpoint().to_string(), m.api_key_env.clone())) {
            continue;
        }
        let label = m.name.clone();
        set.spawn(
            async move { (i, label, backend.endpoint().to_string(), backend.preflight().await) },
        );
    }
    let mut failures = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (i, label, url, result) =
            joined.map_err(|e| anyhow!("the preflight task failed: {e}"))?;
        if let Err(why) = result {
            failures.push((i, format!("endpoint `{label}` ({url}) failed its preflight: {why}")));
        }
    }
    if failures.is_empty() {
        return Ok(());
    }
    failures.sort();
    let lines: Vec<String> = failures.into_iter().map(|(_, l)| l).collect();
    Err(anyhow!(
        "{}\nnothing was run or written; fix the endpoint or skip this check with --no-preflight (`preflight = false`)",
        lines.join("\n")
    ))
}

/// The class of an infrastructure error, as the trial records it: its leading word (`connection after
/// 5 attempt(s): …` → `connection`, `episode_timeout: …` → `episode_timeout`).
pub fn error_class(error: &str) -> &str {
    let end = error.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(error.len());
    &error[..end]
}

#[derive(Default)]
struct Streak {
    class: String,
    count: usize,
    last: String,
}

/// Why a breaker opened.
#[derive(Debug, Clone, PartialEq)]
pub struct Trip {
    pub class: String,
    pub count: usize,
    pub last_error: String,
}

/// One circuit breaker per backend (threshold 0: never opens).
pub struct Breakers {
    thresholds: Vec<usize>,
    streaks: Vec<Mutex<Streak>>,
    trips: Vec<Mutex<Option<Trip>>>,
    open: Vec<AtomicBool>,
    finished: Vec<AtomicUsize>,
    signals: Vec<tokio::sync::watch::Sender<bool>>,
}

impl Breakers {
    pub fn new(thresholds: Vec<usize>) -> Breakers {
        let n = thresholds.len();
        Breakers {
            streaks: (0..n).map(|_| Mutex::default()).collect(),
            trips: (0..n).map(|_| Mutex::default()).collect(),
            open: (0..n).map(|_| AtomicBool::new(false)).collect(),
            finished: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            signals: (0..n).map(|_| tokio::sync::watch::channel(false).0).collect(),
            thresholds,
        }
    }

    /// A finished episode of `backend`: `error` is its infrastructure error, if any.
    pub fn record(&self, backend: usize, error: Option<&str>) {
        self.finished[backend].fetch_add(1, Ordering::SeqCst);
        let threshold = self.thresholds[backend];
        if threshold == 0 {
            return;
        }
        let mut s = self.streaks[backend].lock().expect("breaker lock");
        match error {
            None => *s = Streak::default(),
            Some(e) => {
                let class = error_class(e);
                if s.count > 0 && s.class == class {
                    s.count += 1;
                } else {
                    *s = Streak { class: class.to_string(), count: 1, last: String::new() };
                }
                s.last = e.to_string();
                if s.count >= threshold && !self.open[backend].swap(true, Ordering::SeqCst) {
                    *self.trips[backend].lock().expect("breaker lock") = Some(Trip {
                        class: s.class.clone(),
                        count: s.count,
                        last_error: s.last.clone(),
                    });
                    self.signals[backend].send_replace(true);
                }
            }
        }
    }

    pub fn is_open(&self, backend: usize) -> bool {
        self.open[backend].load(Ordering::SeqCst)
    }

    /// Resolves when `backend`'s breaker opens (never, if it does not).
    pub async fn opened(&self, backend: usize) {
        let mut rx = self.signals[backend].subscribe();
        let _ = rx.wait_for(|open| *open).await;
    }

    /// Episodes of `backend` recorded so far.
    pub fn finished(&self, backend: usize) -> usize {
        self.finished[backend].load(Ordering::SeqCst)
    }

    /// The open breakers, by backend index.
    pub fn trips(&self) -> Vec<(usize, Trip)> {
        self.trips
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.lock().expect("breaker lock").clone().map(|t| (i, t)))
            .collect()
    }
}

/// The error a run ends with when breakers opened (`None`: none did): per endpoint the cause and what
/// was left undone, then how to resume. `pending[i]`: trials of backend `i` this run set out to run.
pub fn tripped_error(
    breakers: &Breakers,
    endpoints: &[Option<Arc<dyn Endpoint>>],
    models: &[ModelSpec],
    pending: &[usize],
    dir: &Path,
) -> Option<anyhow::Error> {
    let trips = breakers.trips();
    if trips.is_empty() {
        return None;
    }
    let mut lines = Vec::new();
    for (i, t) in &trips {
        let url = endpoints[*i].as_ref().map(|e| e.endpoint().to_string()).unwrap_or_default();
        let m = &models[*i];
        let last: String = t.last_error.split_whitespace().collect::<Vec<_>>().join(" ");
        let last = if last.chars().count() > 200 {
            format!("{}…", last.chars().take(200).collect::<String>())
        } else {
            last
        };
        let not_run = pending[*i].saturating_sub(breakers.finished(*i));
        let line = format!(
            "endpoint `{}` ({}) stopped: its last {} episodes all failed with `{}` (last: {last}); {not_run} of its {} trials were not run",
            m.name, url, t.count, t.class, pending[*i]
        );
        lines.push(crate::redact::global().redact(&line).into_owned());
    }
    let run_id = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Some(anyhow!(
        "{}\nfinished trials are kept in {}; once the endpoint is back, run again with --run-id {run_id} to continue (add --retry-errors to re-run the failed ones); `--breaker 0` / `breaker = 0` disables this stop",
        lines.join("\n"),
        dir.join(crate::record::TRIALS).display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_classes_are_the_leading_word() {
        assert_eq!(
            error_class("connection after 5 attempt(s): cannot connect: refused"),
            "connection"
        );
        assert_eq!(
            error_class("episode_timeout: the episode took longer than 2 s"),
            "episode_timeout"
        );
        assert_eq!(error_class("server_error after 1 attempt(s): HTTP 503: x"), "server_error");
    }

    #[test]
    fn a_breaker_opens_after_n_consecutive_errors_of_one_class_only() {
        let b = Breakers::new(vec![3, 0]);
        b.record(0, Some("timeout after 2 attempt(s): a"));
        b.record(0, Some("timeout after 2 attempt(s): b"));
        b.record(0, None); // a success resets the streak
        b.record(0, Some("timeout after 2 attempt(s): c"));
        b.record(0, Some("server_error after 2 attempt(s): HTTP 500"));
        b.record(0, Some("server_error after 2 attempt(s): HTTP 500"));
        assert!(!b.is_open(0), "five errors, but never three of one class in a row");
        b.record(0, Some("server_error after 2 attempt(s): HTTP 503"));
        assert!(b.is_open(0));
        let trips = b.trips();
        assert_eq!(trips.len(), 1);
        assert_eq!(
            (trips[0].0, trips[0].1.class.as_str(), trips[0].1.count),
            (0, "server_error", 3)
        );
        assert!(trips[0].1.last_error.ends_with("HTTP 503"));
        assert_eq!(b.finished(0), 7);
        for _ in 0..50 {
            b.record(1, Some("connection after 1 attempt(s): refused"));
        }
        assert!(!b.is_open(1), "threshold 0 never opens");
    }
}
