//! What keeps a run directory consistent across kills and concurrent toolpick processes: the directory
//! lock, and the removal of temporary files whose writer is gone.
//!
//! **The lock.** `run` and `merge` hold an exclusive `flock(2)` on the run directory while they write
//! it; `report` takes it to compact the trials and remove leftovers. The kernel drops the lock when the
//! process ends, however it ends, so a kill never leaves a stale lock behind. A `report` of a directory
//! whose lock another process holds (a run in progress) renders the trials as they are and compacts or
//! removes nothing, so it cannot pull the trials file from under a live writer. Where the file system
//! has no locks (some network file systems) each process goes on as if it were alone.
//!
//! **Leftovers.** Files are written under a temporary name and renamed into place: `<name>.tmp-<pid>`
//! (report outputs, `run.json`, …) and `trials.jsonl.compact-<pid>` (compaction). A kill leaves them.
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

/// An exclusive lock on a run directory, released when dropped (or when the process dies).
pub struct DirLock {
    /// The locked directory handle (`None` where there are no locks).
    _handle: Option<std::fs::File>,
    held: bool,
}

impl DirLock {
    /// Try to lock `dir` (which must exist) without waiting.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            let handle = std::fs::File::open(dir).with_context(|| format!("cannot open the run directory {}", dir.display()))?;
            // SAFETY: flock(2) on a file descriptor we own; it only takes integers.
            if unsafe { libc::flock(handle.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(DirLock { _handle: Some(handle), held: true });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Ok(DirLock { _handle: None, held: false });
            }
        }
        #[cfg(not(unix))]
        let _ = dir;
        Ok(DirLock { _handle: None, held: true })
    }

    /// This process may rewrite the directory: no other toolpick process holds it.
    pub fn held(&self) -> bool {
        self.held
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
    let (_, digits) = name.rsplit_once(".tmp-").or_else(|| name.rsplit_once(".compact-"))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // pid 0 is no process (and kill(0, 0) would address our own process group).
    digits.parse().ok().filter(|pid| *pid > 0).map(Writer::Pid)
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
        if unsafe { libc::kill(raw, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
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
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
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
                    return Err(e).with_context(|| format!("cannot remove the leftover {}", path.display()));
                }
            }
        }
    }
    if !removed.is_empty() {
        eprintln!("note: removed {} temporary file(s) left in {} by an interrupted toolpick process", removed.len(), dir.display());
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
        for other in
            ["trials.csv", "notes.tmp-draft", "x.tmp-12a", "a.tmp-", "b.tmp-0", "c.tmp-99999999999999999999", "key.tmp-12-ThreadId(3)", "other.compact"]
        {
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
        while std::fs::read_to_string(format!("/proc/{ended_pid}/stat")).is_ok_and(|s| !s.contains(") Z")) {
            std::thread::yield_now();
        }
        assert!(!alive(ended_pid), "a zombie counts as gone");
        ended.wait().unwrap();
        assert!(!alive(ended_pid));
        assert!(alive(running.id()));
        assert!(alive(1), "init counts as live (kill(1, 0) fails with EPERM for other users)");
        assert!(!alive(std::process::id()), "a file named with our own pid is an earlier process's");
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
}
