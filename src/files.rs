//! Writing files so that a reader never sees half of one, and so that two toolpick processes never
//! write into each other's files. A ground-floor helper (it imports no other module of the crate), so
//! importers, the trial store, the judge, the MCP server and the reports share it without importing
//! each other.
//!
//! The writer discipline:
//! - **Whole files** (reports, imported catalogs and datasets, merged runs, run metadata) go through
//!   [`write_atomic`]: written under a temporary name from [`temp_path`], renamed over the target. A
//!   temporary name is unique per process *and* per call (`<name>.tmp-<pid>-<n>`), so two processes, or
//!   two threads of one, never share an intermediate file; the pid in it lets
//!   `record::guard::remove_stale` recognise a killed writer's leftover.
//! - **Shared line files** (`mcp serve --sessions` / `--record`) go through [`SharedLines`]: opened for
//!   appending (never truncated), and each append takes an exclusive `flock(2)` on the file and writes
//!   the whole line in one call, so lines of several servers never interleave. A line a killed writer
//!   left without its newline is ended before the next append, so it stays one damaged line that a
//!   reader reports and skips instead of swallowing the next writer's line.

use anyhow::{Context, Result, bail};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A temporary name beside `dest`: `<file name>.tmp-<pid>-<n>`, `n` counting the calls of this process.
pub fn temp_path(dest: &Path) -> PathBuf {
    temp_path_tagged(dest, "tmp")
}

/// [`temp_path`] with another tag than `tmp` (`<file name>.<tag>-<pid>-<n>`; compaction uses `compact`).
pub fn temp_path_tagged(dest: &Path, tag: &str) -> PathBuf {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    dest.with_file_name(format!("{name}.{tag}-{}-{n}", std::process::id()))
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory ([`temp_path`]), then a
/// rename over the target. On failure the temporary file is removed and the target is as it was. A
/// target that is a directory is refused before anything is written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.is_dir() {
        bail!("cannot write {}: it is a directory; give a file name", path.display());
    }
    let tmp = temp_path(path);
    let written = std::fs::write(&tmp, bytes)
        .with_context(|| format!("cannot write {}", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, path)
                .with_context(|| format!("cannot move {} into place", path.display()))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// An append-only file of lines that several processes may write at once (see the module docs).
pub struct SharedLines {
    path: PathBuf,
    /// Also serialises this process's threads (the `flock` is per open file, which they share).
    file: Mutex<std::fs::File>,
}

/// The file while [`SharedLines::locked`] holds it: read what is there, append whole lines.
pub struct Locked<'a> {
    path: &'a Path,
    file: &'a mut std::fs::File,
}

impl SharedLines {
    /// Open (or create) `path` for appending; nothing in it is changed.
    pub fn open(path: &Path) -> std::io::Result<SharedLines> {
        let file = std::fs::OpenOptions::new().read(true).append(true).create(true).open(path)?;
        Ok(SharedLines { path: path.to_path_buf(), file: Mutex::new(file) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run `f` with the file locked against every other writer (threads of this process and other
    /// processes alike). A torn last line (no newline: its writer was killed) is ended first, so `f`
    /// sees only whole lines and its appends start lines of their own.
    pub fn locked<T>(&self, f: impl FnOnce(&mut Locked) -> Result<T>) -> Result<T> {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let _flock = Flock::exclusive(&file)
            .with_context(|| format!("cannot lock {}", self.path.display()))?;
        let mut locked = Locked { path: &self.path, file: &mut file };
        locked.end_torn_line()?;
        f(&mut locked)
    }

    /// Append one line (`line` without its newline) under the lock.
    pub fn append(&self, line: &[u8]) -> Result<()> {
        self.locked(|l| l.append(line))
    }
}

impl Locked<'_> {
    /// The file's length in bytes.
    pub fn len(&self) -> Result<u64> {
        Ok(self
            .file
            .metadata()
            .with_context(|| format!("cannot read {}", self.path.display()))?
            .len())
    }

    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The bytes from `offset` to the end.
    pub fn read_from(&mut self, offset: u64) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_to_end(&mut bytes))
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        Ok(bytes)
    }

    /// Append `line` and its newline in one write, flushed.
    pub fn append(&mut self, line: &[u8]) -> Result<()> {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        self.file
            .write_all(&buf)
            .and_then(|()| self.file.flush())
            .with_context(|| format!("cannot append to {}", self.path.display()))
    }

    fn end_torn_line(&mut self) -> Result<()> {
        let len = self.len()?;
        if len == 0 {
            return Ok(());
        }
        let mut last = [0u8; 1];
        self.file
            .seek(SeekFrom::Start(len - 1))
            .and_then(|_| self.file.read_exact(&mut last))
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        if last[0] != b'\n' {
            self.file
                .write_all(b"\n")
                .with_context(|| format!("cannot append to {}", self.path.display()))?;
        }
        Ok(())
    }
}

/// An exclusive `flock(2)` on an open file, released when dropped; the caller keeps the file open
/// longer than the lock. Where there are no such locks (not unix, or a file system without them) the
/// process goes on unlocked.
struct Flock {
    #[cfg(unix)]
    fd: Option<std::os::fd::RawFd>,
}

impl Flock {
    fn exclusive(file: &std::fs::File) -> std::io::Result<Flock> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            let fd = file.as_raw_fd();
            loop {
                // SAFETY: flock(2) on a descriptor the caller keeps open for the lock's lifetime.
                if unsafe { libc::flock(fd, libc::LOCK_EX) } == 0 {
                    return Ok(Flock { fd: Some(fd) });
                }
                let err = std::io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP) => return Ok(Flock { fd: None }),
                    _ => return Err(err),
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            Ok(Flock {})
        }
    }
}

impl Drop for Flock {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(fd) = self.fd {
            // SAFETY: unlocking a descriptor that is still open (see the type's docs).
            unsafe { libc::flock(fd, libc::LOCK_UN) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_unique_per_call_and_thread_and_carry_the_pid() {
        let dest = Path::new("/x/junit.xml");
        let names: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| (0..200).map(|_| temp_path(dest)).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let unique: std::collections::BTreeSet<&PathBuf> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "a temporary name was handed out twice");
        let prefix = format!("junit.xml.tmp-{}-", std::process::id());
        for n in &names {
            assert_eq!(n.parent(), Some(Path::new("/x")));
            let name = n.file_name().unwrap().to_str().unwrap();
            let seq = name.strip_prefix(&prefix).unwrap_or_else(|| panic!("{name}"));
            assert!(!seq.is_empty() && seq.bytes().all(|b| b.is_ascii_digit()), "{name}");
        }
    }

    #[test]
    fn a_directory_as_the_target_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("out");
        std::fs::create_dir(&sub).unwrap();
        let err = write_atomic(&sub, b"x").unwrap_err().to_string();
        assert!(err.contains("is a directory") && err.contains("out"), "{err}");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["out"]);
        assert!(std::fs::read_dir(&sub).unwrap().next().is_none());
    }

    #[test]
    fn shared_lines_append_and_end_a_torn_line_before_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, "{\"a\":1}\n{\"torn").unwrap();
        let log = SharedLines::open(&p).unwrap();
        log.append(b"{\"b\":2}").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"torn\n{\"b\":2}\n");
        let seen = log.locked(|l| l.read_from(8)).unwrap();
        assert_eq!(seen, b"{\"torn\n{\"b\":2}\n");
    }

    #[test]
    fn threads_appending_to_one_file_through_two_handles_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let (a, b) = (SharedLines::open(&p).unwrap(), SharedLines::open(&p).unwrap());
        std::thread::scope(|s| {
            for (log, tag) in [(&a, b'a'), (&b, b'b')] {
                s.spawn(move || {
                    for i in 0..300usize {
                        // Lines long enough that a write could be split.
                        log.append(&vec![tag; 1000 + i * 37]).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read(&p).unwrap();
        let lines: Vec<&[u8]> = text.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 600);
        for l in lines {
            assert!(l.iter().all(|c| *c == l[0]), "a line holds bytes of two writers");
        }
    }
}
