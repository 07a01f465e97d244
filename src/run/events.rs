//! What happens while a run executes, as typed events ([`RunEvent`]), and the subscribers that turn
//! them into the run's files and the lines a person watches (as nextest's runner hands events to its
//! reporter).
//!
//! Episodes run on many tasks; each sends its events into one channel. One dispatcher
//! ([`dispatch`], on a blocking thread) hands every event, in the order they arrive, to every
//! subscriber: the trial writer ([`TrialWriter`]: `transcripts.jsonl`, then `trials.jsonl`), the
//! timings ([`TimingsWriter`]: `timings.jsonl`) and the progress display ([`ProgressDisplay`]). The
//! files have one writer each, so lines never interleave; whatever a backend let through, every
//! line passes the redactor before it reaches disk.

use super::progress::Progress;
use crate::protocol::Message;
use crate::record::{Trial, store, transcripts};
use crate::redact::Redactor;
use anyhow::Result;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// One thing that happened while the run executed.
pub enum RunEvent {
    /// An episode got its endpoint's concurrency permit and began (until then it was queued). `cell`
    /// is the progress cell's index; the same episode's `TrialFinished` follows it, unless the
    /// endpoint's breaker opens first.
    TrialStarted { cell: usize },
    /// An episode ended: its record (without its messages), its messages, its timing. `cell` is the
    /// progress cell's index.
    TrialFinished {
        cell: usize,
        trial: Box<Trial>,
        transcript: Vec<Message>,
        timing: Value,
        retries: u64,
    },
    /// The breaker of backend `backend` opened: its queued and in-flight episodes are dropped (not
    /// written; they run on resume) and the run will end with the cause.
    EndpointTripped { backend: usize },
    /// A second passed (progress lines come on time even while no trial finishes).
    Tick { retries: u64 },
}

/// Something that follows a run's events.
pub trait Subscriber: Send {
    fn on(&mut self, event: &RunEvent) -> Result<()>;
}

/// Hand every event to every subscriber until the channel closes; the first subscriber error ends
/// the run.
pub fn dispatch(
    mut events: tokio::sync::mpsc::Receiver<RunEvent>,
    subscribers: &mut [Box<dyn Subscriber>],
) -> Result<()> {
    while let Some(event) = events.blocking_recv() {
        for s in subscribers.iter_mut() {
            s.on(&event)?;
        }
    }
    Ok(())
}

/// `transcripts.jsonl` and `trials.jsonl`: the transcript first, so a record on disk always has its
/// transcript (see `record::transcripts`).
pub struct TrialWriter {
    trials: store::Appender,
    transcripts: store::Appender,
    redactor: Arc<Redactor>,
}

impl TrialWriter {
    pub fn open(dir: &Path) -> Result<TrialWriter> {
        Ok(TrialWriter {
            trials: store::Appender::open(&dir.join(crate::record::TRIALS))?,
            transcripts: store::Appender::open(&dir.join(transcripts::FILE))?,
            redactor: crate::redact::global(),
        })
    }
}

impl Subscriber for TrialWriter {
    fn on(&mut self, event: &RunEvent) -> Result<()> {
        if let RunEvent::TrialFinished { trial, transcript, .. } = event {
            let line = transcripts::TranscriptLine {
                trial_id: trial.trial_id.as_str().into(),
                matrix_index: trial.matrix_index,
                transcript: transcript.as_slice().into(),
            };
            self.transcripts.append(&self.redactor.redact_bytes(&serde_json::to_vec(&line)?))?;
            self.trials
                .append(&self.redactor.redact_bytes(&serde_json::to_vec(trial.as_ref())?))?;
        }
        Ok(())
    }
}

/// `timings.jsonl`: how long each episode and its requests took.
pub struct TimingsWriter {
    timings: store::Appender,
    redactor: Arc<Redactor>,
}

impl TimingsWriter {
    pub fn open(dir: &Path) -> Result<TimingsWriter> {
        Ok(TimingsWriter {
            timings: store::Appender::open(&dir.join(crate::record::TIMINGS))?,
            redactor: crate::redact::global(),
        })
    }
}

impl Subscriber for TimingsWriter {
    fn on(&mut self, event: &RunEvent) -> Result<()> {
        if let RunEvent::TrialFinished { timing, .. } = event {
            self.timings.append(&self.redactor.redact_bytes(&serde_json::to_vec(timing)?))?;
        }
        Ok(())
    }
}

/// The progress bars (or plain lines): per cell, what is running, done, passed and failed.
pub struct ProgressDisplay {
    pub progress: Arc<Progress>,
    /// Per progress cell, its backend (an endpoint that trips stops its cells).
    pub cell_backend: Vec<usize>,
}

impl Subscriber for ProgressDisplay {
    fn on(&mut self, event: &RunEvent) -> Result<()> {
        match event {
            RunEvent::TrialStarted { cell } => self.progress.started(*cell),
            RunEvent::TrialFinished { cell, trial, retries, .. } => {
                self.progress.record(*cell, trial.score.pass, trial.is_error(), *retries)
            }
            RunEvent::EndpointTripped { backend } => {
                for (cell, b) in self.cell_backend.iter().enumerate() {
                    if b == backend {
                        self.progress.stopped(cell);
                    }
                }
            }
            RunEvent::Tick { retries } => self.progress.tick(*retries),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Keeps what it saw (the retries of ticks); fails on the tick numbered `fail_at`.
    struct Seen(Arc<Mutex<Vec<u64>>>, Option<u64>);

    impl Subscriber for Seen {
        fn on(&mut self, event: &RunEvent) -> Result<()> {
            if let RunEvent::Tick { retries } = event {
                if Some(*retries) == self.1 {
                    anyhow::bail!("subscriber failed at {retries}");
                }
                self.0.lock().unwrap().push(*retries);
            }
            Ok(())
        }
    }

    fn run(ticks: u64, fail_at: Option<u64>) -> (Result<()>, Vec<u64>, Vec<u64>) {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let (a, b) = (Arc::new(Mutex::new(vec![])), Arc::new(Mutex::new(vec![])));
        let mut subscribers: Vec<Box<dyn Subscriber>> =
            vec![Box::new(Seen(a.clone(), fail_at)), Box::new(Seen(b.clone(), None))];
        let sender = std::thread::spawn(move || {
            for retries in 0..ticks {
                // The dispatcher stops reading after an error: the rest cannot be sent.
                if tx.blocking_send(RunEvent::Tick { retries }).is_err() {
                    break;
                }
            }
        });
        let result = dispatch(rx, &mut subscribers);
        sender.join().unwrap();
        let seen = |v: Arc<Mutex<Vec<u64>>>| v.lock().unwrap().clone();
        (result, seen(a), seen(b))
    }

    #[test]
    fn every_subscriber_sees_every_event_in_order() {
        let (result, a, b) = run(10, None);
        assert!(result.is_ok());
        assert_eq!(a, (0..10).collect::<Vec<_>>());
        assert_eq!(a, b);
    }

    #[test]
    fn the_progress_display_counts_started_trials_until_their_endpoint_trips() {
        let progress = Arc::new(Progress::new(&[("a".into(), 2), ("b".into(), 2)], true));
        let mut display = ProgressDisplay { progress: progress.clone(), cell_backend: vec![0, 1] };
        for cell in [0, 0, 1] {
            display.on(&RunEvent::TrialStarted { cell }).unwrap();
        }
        assert_eq!(progress.running(), [2, 1]);
        display.on(&RunEvent::EndpointTripped { backend: 0 }).unwrap();
        assert_eq!(progress.running(), [0, 1]);
    }

    #[test]
    fn a_failing_subscriber_ends_the_dispatch_with_its_error() {
        let (result, a, b) = run(10, Some(3));
        assert!(result.unwrap_err().to_string().contains("failed at 3"));
        assert_eq!(a, [0, 1, 2]);
        // The event a subscriber failed on goes no further.
        assert_eq!(b, [0, 1, 2]);
    }
}
