//! What keeps a run directory consistent across kills and concurrent toolpick processes: the directory
//! lock, and the removal of temporary files whose writer is gone.
//!
//! **The lock.** One process writes a run directory at a time: `run`, `merge` and `report` hold an
//! exclusive `flock(2)` on it while they write it. The kernel drops the lock when the process ends,
//! however it ends, so a kill never leaves a stale lock behind. Two kinds of holder differ in how long
//! they keep it, and a `report` that finds the directory locked acts on which kind holds it:
//! - a **writer** of records (a `run` executing its episodes, a judge pass appending verdicts) may hold
//!   it for hours; it marks itself with a shared open-file-description lock (`F_OFD_SETLK`, Linux) on
//!   the directory beside the `flock`. A report beside a writer does not wait: it renders the trials
//!   as they are and compacts or removes nothing, so it cannot pull the trials file from under the
//!   writer. The writer drops the mark when it turns to its own reports ([`DirLock::writing_done`]).
//! - any other holder (a report, a merge, a run rendering its reports) is done in seconds to minutes:
//!   a report **waits** for it ([`DirLock::for_report`]), at most [`WAIT_ENV`] seconds (default
//!   [`DEFAULT_WAIT_S`]), then refuses with exit 2 naming the directory. So two reports of one run
//!   never write it at once, and each writes what an uninterrupted run would have.
//!
//! Where the file system has no locks (some network file systems) each process goes on as if it were
//! alone; where the mark cannot be seen (not Linux), every holder counts as a writer, as before.
//!
//! **Leftovers.** Files are written under a temporary name unique per process and call, and renamed
//! into place: `<name>.tmp-<pid>-<n>` (report outputs, `run.json`, …, [`crate::files::temp_path`]) and
//! `trials.jsonl.compact-<pid>-<n>` (compaction); older versions wrote `<name>.tmp-<pid>` and
//! `trials.jsonl.compact-<pid>`. A kill leaves them.
//! [`remove_stale`] removes those whose writer is gone: the pid in the name is not a live process on
//! this machine (`kill(pid, 0)` finds none, or it is a zombie), or it is this process's own pid (a
//! process that has not written the file yet, such as a container's pid 1 after a restart, so it is
//! called before this process writes temporaries there). A live pid's files are kept, even if the pid
//! was reused by an unrelated process: leaving a file is harmless, removing a live one is not. The rule
//! assumes the processes sharing the directory share this machine's pid namespace. A
//! `trials.jsonl.compact` without a pid (written by toolpick before pids were added) is removed when
//! no process this user can inspect holds it open (Linux `/proc/*/fd`); elsewhere it is kept.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable holding how many seconds a report waits for another process's lock.
pub const WAIT_ENV: &str = "TOOLPICK_LOCK_WAIT_S";
/// Seconds a report waits for another report, merge or run rendering its reports, by default.
pub const DEFAULT_WAIT_S: f64 = 300.0;

/// An exclusive lock on a run directory, released when dropped (or when the process dies).
pub struct DirLock {
    dir: PathBuf,
    /// The locked directory handle (`None` where there are no locks).
    handle: Option<std::fs::File>,
    /// The writer's mark (see the module docs), while it is set.
    writing: Mutex<Option<std::fs::File>>,
    held: bool,
}

impl DirLock {
    fn unheld(dir: &Path) -> DirLock {
        DirLock { dir: dir.to_path_buf(), handle: None, writing: Mutex::new(None), held: false }
    }

    fn locked(dir: &Path, handle: Option<std::fs::File>) -> DirLock {
        DirLock { dir: dir.to_path_buf(), handle, writing: Mutex::new(None), held: true }
    }

    /// Try to lock `dir` (which must exist) without waiting, as a writer of records (`run`): a report
    /// beside it renders the trials as they are. A holder that is not a writer calls
    /// [`DirLock::writing_done`] at once (`merge`), so reports wait for it instead.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let lock = match try_flock(dir)? {
            Some(handle) => DirLock::locked(dir, handle),
            None => return Ok(DirLock::unheld(dir)),
        };
        lock.mark_writing()?;
        Ok(lock)
    }

    /// Lock `dir` for a report: at once if it is free; if a writer holds it (a run in progress), not at
    /// all (the lock comes back not [`held`](DirLock::held)); if another holder has it, wait for it
    /// (checking every 50 ms) at most [`WAIT_ENV`] seconds, then refuse with an input error naming `dir`.
    pub fn for_report(dir: &Path) -> Result<DirLock> {
        DirLock::for_report_within(dir, wait_limit()?)
    }

    /// [`DirLock::for_report`], waiting at most `patience`.
    pub fn for_report_within(dir: &Path, patience: Duration) -> Result<DirLock> {
        let started = Instant::now();
        let mut said = false;
        loop {
            if let Some(handle) = try_flock(dir)? {
                return Ok(DirLock::locked(dir, handle));
            }
            if writer_present(dir) {
                return Ok(DirLock::unheld(dir));
            }
            if started.elapsed() >= patience {
                return Err(crate::error::InputError::new(
                    dir,
                    format!(
                        "another toolpick process (a report or merge of this run) has held the run directory for {} s; try again when it is done (or wait longer: {WAIT_ENV}=<seconds>)",
                        patience.as_secs_f64()
                    ),
                )
                .into());
            }
            if !said {
                crate::messages::note(format_args!(
                    "another toolpick process is writing the reports of {}; waiting for it (at most {} s)",
                    dir.display(),
                    patience.as_secs_f64()
                ));
                said = true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// This process may rewrite the directory: no other toolpick process holds it.
    pub fn held(&self) -> bool {
        self.held
    }

    /// Mark the holder as a writer of records for a long while (a judge pass): reports beside it read
    /// as-is instead of waiting. Nothing happens unless the lock is held.
    pub fn mark_writing(&self) -> Result<()> {
        if !self.held {
            return Ok(());
        }
        let mut writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        if writing.is_none() && self.handle.is_some() {
            *writing = set_mark(&self.dir)?;
        }
        Ok(())
    }

    /// The holder is done writing records and turns to its reports: reports now wait for it.
    pub fn writing_done(&self) {
        // Closing the marked handle drops its open-file-description lock.
        self.writing.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// `flock(LOCK_EX | LOCK_NB)` on `dir`: `Some(handle)` when this process has the lock (`Some(None)`
/// where there are no locks), `None` when another process holds it.
fn try_flock(dir: &Path) -> Result<Option<Option<std::fs::File>>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let handle = std::fs::File::open(dir)
            .with_context(|| format!("cannot open the run directory {}", dir.display()))?;
        // SAFETY: flock(2) on a file descriptor we own; it only takes integers.
        if unsafe { libc::flock(handle.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Some(Some(handle)));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Ok(None);
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(Some(None))
}

/// The lock range that marks a writer: the directory's first byte (a directory has no bytes; the
/// range only names the mark).
#[cfg(target_os = "linux")]
fn mark_range(kind: libc::c_int) -> libc::flock {
    // SAFETY: a plain C struct; all-zero is a valid value of it (and l_pid must be 0 for OFD locks).
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 1;
    fl
}

/// Set the writer's mark: a shared OFD lock on a handle of its own (so closing it drops the mark).
#[cfg(target_os = "linux")]
fn set_mark(dir: &Path) -> Result<Option<std::fs::File>> {
    use std::os::fd::AsRawFd;
    let mark = std::fs::File::open(dir)
        .with_context(|| format!("cannot open the run directory {}", dir.display()))?;
    let fl = mark_range(libc::F_RDLCK);
    // SAFETY: fcntl(2) with a valid descriptor and a pointer to a live flock struct.
    if unsafe { libc::fcntl(mark.as_raw_fd(), libc::F_OFD_SETLK, &fl) } != 0 {
        // No OFD locks here: reports cannot tell a writer from a report and treat every holder as one.
        return Ok(None);
    }
    Ok(Some(mark))
}

#[cfg(not(target_os = "linux"))]
fn set_mark(_dir: &Path) -> Result<Option<std::fs::File>> {
    Ok(None)
}

/// Whether a writer's mark is set on `dir` (true where marks cannot be seen: every holder counts as a
/// writer there).
#[cfg(target_os = "linux")]
fn writer_present(dir: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(probe) = std::fs::File::open(dir) else { return true };
    let mut fl = mark_range(libc::F_WRLCK);
    // SAFETY: fcntl(2) with a valid descriptor and a pointer to a live flock struct it fills in.
    if unsafe { libc::fcntl(probe.as_raw_fd(), libc::F_OFD_GETLK, &mut fl) } != 0 {
        return true;
    }
    fl.l_type != libc::F_UNLCK as libc::c_short
}

#[cfg(not(target_os = "linux"))]
fn writer_present(_dir: &Path) -> bool {
    true
}

/// How long a report waits for another holder: [`WAIT_ENV`] seconds, else [`DEFAULT_WAIT_S`].
fn wait_limit() -> Result<Duration> {
    match std::env::var(WAIT_ENV) {
        Err(_) => Ok(Duration::from_secs_f64(DEFAULT_WAIT_S)),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && (0.0..=86_400.0).contains(s))
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                crate::error::InputError::new(
                    WAIT_ENV,
                    format!("`{v}` is not a number of seconds between 0 and 86400"),
                )
                .into()
            }),
    }
}

/// What a file name says about who wrote it.
#[derive(Debug, PartialEq)]
enum Writer {
    /// A temporary file of the process with this pid.
    Pid(u32),
    /// `trials.jsonl.compact`, written before temporary names carried a pid.
    Unnamed,
}

fn writer_of(name: &str) -> Option<Writer> {
    if name == "trials.jsonl.compact" {
        return Some(Writer::Unnamed);
    }
    let (_, tail) = name.rsplit_once(".tmp-").or_else(|| name.rsplit_once(".compact-"))?;
    // `<pid>-<n>` (unique per call), or `<pid>` as older versions named them.
    let pid = match tail.split_once('-') {
        Some((pid, n)) if digits(n) => pid,
        Some(_) => return None,
        None => tail,
    };
    if !digits(pid) {
        return None;
    }
    // pid 0 is no process (and kill(0, 0) would address our own process group).
    pid.parse().ok().filter(|pid| *pid > 0).map(Writer::Pid)
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Whether the process `pid` is running (a zombie has ended; another user's process counts as live).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    #[cfg(unix)]
    {
        let Ok(raw) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 checks that the process exists and sends nothing.
        if unsafe { libc::kill(raw, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        {
            return false;
        }
        // The state follows the command name (which may hold spaces and parentheses) in /proc/<pid>/stat.
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')));
        zombie != Some(true)
    }
    #[cfg(not(unix))]
    true
}

/// Whether any process this user can inspect has `path` open (false where that cannot be seen).
fn held_open(path: &Path) -> bool {
    let Ok(target) = std::fs::canonicalize(path) else {
        return false;
    };
    // Without /proc there is no telling: keep the file.
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return true;
    };
    for p in procs.flatten() {
        if !p.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for fd in std::fs::read_dir(p.path().join("fd")).into_iter().flatten().flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|l| l == target) {
                return true;
            }
        }
    }
    false
}

/// Remove the temporary files in `dir` whose writer is gone (see the module docs); returns them.
/// Call it before this process writes temporaries in `dir`, with the directory lock held.
pub fn remove_stale(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(writer) = writer_of(&name.to_string_lossy()) else {
            continue;
        };
        let path = entry.path();
        let gone = match writer {
            Writer::Pid(pid) => !alive(pid),
            Writer::Unnamed => !held_open(&path),
        };
        if gone && entry.file_type().is_ok_and(|t| t.is_file()) {
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot remove the leftover {}", path.display()));
                }
            }
        }
    }
    if !removed.is_empty() {
        crate::messages::note(format_args!(
            "removed {} temporary file(s) left in {} by an interrupted toolpick process",
            removed.len(),
            dir.display()
        ));
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_give_their_writer() {
        assert_eq!(writer_of("trials.csv.tmp-4242"), Some(Writer::Pid(4242)));
        assert_eq!(writer_of("run.tmp-7"), Some(Writer::Pid(7)));
        assert_eq!(writer_of("trials.jsonl.compact-31"), Some(Writer::Pid(31)));
        assert_eq!(writer_of("trials.jsonl.compact"), Some(Writer::Unnamed));
        assert_eq!(writer_of("junit.xml.body.tmp-4242-17"), Some(Writer::Pid(4242)));
        assert_eq!(writer_of("trials.jsonl.compact-31-0"), Some(Writer::Pid(31)));
        for other in [
            "trials.csv",
            "notes.tmp-draft",
            "x.tmp-12a",
            "a.tmp-",
            "b.tmp-0",
            "b.tmp-0-4",
            "c.tmp-99999999999999999999",
            "key.tmp-12-ThreadId(3)",
            "d.tmp-12-",
            "e.tmp--3",
            "f.tmp-1-2-3",
            "other.compact",
        ] {
            assert_eq!(writer_of(other), None, "{other}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_reaped_child_is_gone_and_a_running_one_alive() {
        let mut running = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let ended_pid = ended.id();
        // Not yet reaped: a zombie, which has ended.
        while std::fs::read_to_string(format!("/proc/{ended_pid}/stat"))
            .is_ok_and(|s| !s.contains(") Z"))
        {
            std::thread::yield_now();
        }
        assert!(!alive(ended_pid), "a zombie counts as gone");
        ended.wait().unwrap();
        assert!(!alive(ended_pid));
        assert!(alive(running.id()));
        assert!(alive(1), "init counts as live (kill(1, 0) fails with EPERM for other users)");
        assert!(
            !alive(std::process::id()),
            "a file named with our own pid is an earlier process's"
        );
        running.kill().unwrap();
        running.wait().unwrap();
    }

    #[test]
    fn a_second_lock_on_a_locked_directory_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        assert!(first.held());
        assert!(!DirLock::acquire(dir.path()).unwrap().held());
        drop(first);
        assert!(DirLock::acquire(dir.path()).unwrap().held());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_report_reads_beside_a_writer_waits_for_any_other_holder_and_refuses_after_its_patience() {
        let dir = tempfile::tempdir().unwrap();
        let writer = DirLock::acquire(dir.path()).unwrap();
        let started = Instant::now();
        let beside = DirLock::for_report_within(dir.path(), Duration::from_secs(30)).unwrap();
        assert!(!beside.held(), "a report beside a run reads as-is");
        assert!(started.elapsed() < Duration::from_secs(5), "and does not wait for the run");
        // The writer turns to its reports: a report now waits, and refuses once its patience is spent.
        writer.writing_done();
        let started = Instant::now();
        let err = DirLock::for_report_within(dir.path(), Duration::from_millis(300))
            .err()
            .expect("refused");
        assert!(started.elapsed() >= Duration::from_millis(300));
        let input =
            err.downcast_ref::<crate::error::InputError>().expect("an input error (exit 2)");
        assert_eq!(input.file, dir.path(), "{input}");
        // Released while a report waits: the report gets it.
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(writer);
        });
        let report = DirLock::for_report_within(dir.path(), Duration::from_secs(30)).unwrap();
        assert!(report.held());
        release.join().unwrap();
        // A judge pass marks itself a writer while it judges, and unmarks before its reports.
        report.mark_writing().unwrap();
        assert!(!DirLock::for_report_within(dir.path(), Duration::from_secs(30)).unwrap().held());
        report.writing_done();
        assert!(DirLock::for_report_within(dir.path(), Duration::from_millis(100)).is_err());
        drop(report);
        assert!(DirLock::for_report_within(dir.path(), Duration::ZERO).unwrap().held());
    }
}
