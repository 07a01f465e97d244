//! Child servers and temporary folders that never outlive toolpick.
//!
//! Every MCP server toolpick starts runs in a **process group of its own** (so what it starts in turn
//! is stopped with it, and a Ctrl-C at the terminal reaches toolpick, not the server directly), and is
//! stopped the same way on every path:
//! 1. its stdin is closed (the MCP specification's stdio shutdown) and it gets [`STDIN_GRACE`] to exit;
//! 2. then its group gets SIGTERM and [`TERM_GRACE`] more;
//! 3. then its group gets SIGKILL, and the server is reaped.
//!
//! That is [`ChildServer::stop`] on the normal path; dropping a [`ChildServer`] without stopping it
//! (an error, a panic unwinding) does steps 2 and 3 synchronously. Two process-wide nets catch what no
//! owner stops: a SIGINT or SIGTERM to toolpick, and `exit` itself (an `atexit` hook), both stop every
//! live group and remove every [`TrackedDir`] (toolpick's `toolpick-*` temporary folders) before the
//! process ends — SIGINT and SIGTERM with exit code 130 and 143. A command that handles Ctrl-C itself
//! (`mcp serve --http` stops serving and records) waits on [`interrupted`] instead of
//! `tokio::signal::ctrl_c`, which tells the net to leave SIGINT to it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a server may take to exit once its stdin is closed, before it gets SIGTERM.
pub const STDIN_GRACE: Duration = Duration::from_millis(1000);
/// How long a server's group may take to exit after SIGTERM, before it gets SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(2000);

/// Process groups of the servers running now (each server's pid is its group's id).
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
/// Temporary folders to remove if toolpick is stopped by a signal.
static DIRS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
/// Set once a signal is being handled: nothing new may start.
static STOPPING: AtomicBool = AtomicBool::new(false);
/// Set when the signal listener is stopping toolpick: an `exit` racing it waits for its exit code.
static SIGNALLED: AtomicBool = AtomicBool::new(false);
/// Set once a command waits on [`interrupted`]: SIGINT is its own from then on (also after the wait,
/// while it stops in order: the listener sees the same signal, maybe after the wait has ended).
static SIGINT_TAKEN: AtomicBool = AtomicBool::new(false);

/// A server started by [`spawn`]: its process and its group, stopped as the module says.
pub struct ChildServer {
    child: Option<tokio::process::Child>,
    group: i32,
}

/// Start `command` in a process group of its own, stdin and stdout piped (stderr as the caller set it).
pub fn spawn(command: &mut tokio::process::Command) -> std::io::Result<ChildServer> {
    install_nets();
    command
        .process_group(0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(false);
    // Registering under the lock, after checking STOPPING under it, means a signal's snapshot of the
    // groups either includes this one or this one never starts.
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    if STOPPING.load(Ordering::SeqCst) {
        return Err(std::io::Error::other("toolpick is stopping"));
    }
    let child = command.spawn()?;
    let group = child.id().map(|p| p as i32).ok_or_else(|| std::io::Error::other("no pid"))?;
    groups.insert(group);
    Ok(ChildServer { child: Some(child), group })
}

impl ChildServer {
    /// The server's pid (also its process group's id).
    pub fn pid(&self) -> i32 {
        self.group
    }

    /// Its stdout and stdin, for the transport (once).
    pub fn take_stdio(
        &mut self,
    ) -> Option<(tokio::process::ChildStdout, tokio::process::ChildStdin)> {
        let child = self.child.as_mut()?;
        Some((child.stdout.take()?, child.stdin.take()?))
    }

    /// Whether the server has exited already (reaping it if so): a warm server waiting for its trial
    /// may have died in the meantime (`run::live_pool`).
    pub fn exited(&mut self) -> bool {
        self.child.as_mut().is_none_or(|c| matches!(c.try_wait(), Ok(Some(_)) | Err(_)))
    }

    /// Stop the server (its stdin must already be closed: the transport dropped): wait
    /// [`STDIN_GRACE`], SIGTERM its group, wait [`TERM_GRACE`], SIGKILL its group, reap it.
    pub async fn stop(mut self) {
        let Some(mut child) = self.child.take() else { return };
        if tokio::time::timeout(STDIN_GRACE, child.wait()).await.is_err() {
            signal_group(self.group, libc::SIGTERM);
            if tokio::time::timeout(TERM_GRACE, child.wait()).await.is_err() {
                signal_group(self.group, libc::SIGKILL);
                let _ = child.wait().await;
            }
        }
        // Whatever the server left in its group (a shell's background job) goes with it.
        signal_group(self.group, libc::SIGKILL);
        forget(self.group);
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        signal_group(self.group, libc::SIGTERM);
        let deadline = Instant::now() + TERM_GRACE;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        signal_group(self.group, libc::SIGKILL);
        // SIGKILL cannot be ignored: the reap comes at once (bounded anyway, never a hang in a drop).
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline && !matches!(child.try_wait(), Ok(Some(_))) {
            std::thread::sleep(Duration::from_millis(5));
        }
        forget(self.group);
    }
}

fn forget(group: i32) {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).remove(&group);
}

fn signal_group(group: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals that process group; no memory is touched.
    unsafe {
        libc::kill(-group, signal);
    }
}

/// A temporary folder removed when dropped, and by the signal net if toolpick is stopped first.
pub struct TrackedDir {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

/// A fresh temporary folder named `prefix…` in the system temporary directory.
pub fn temp_dir(prefix: &str) -> std::io::Result<TrackedDir> {
    track(|| tempfile::Builder::new().prefix(prefix).tempdir())
}

/// A fresh temporary folder named `prefix…` in `parent`.
pub fn temp_dir_in(prefix: &str, parent: &Path) -> std::io::Result<TrackedDir> {
    track(|| tempfile::Builder::new().prefix(prefix).tempdir_in(parent))
}

/// Create the folder and register it under the lock, after checking [`STOPPING`] under it: a signal's
/// net either removes this folder or this folder is never made (a start under way on another thread —
/// a warm pool's — could otherwise make one between the net's sweep and the exit).
fn track(
    create: impl FnOnce() -> std::io::Result<tempfile::TempDir>,
) -> std::io::Result<TrackedDir> {
    install_nets();
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if STOPPING.load(Ordering::SeqCst) {
        return Err(std::io::Error::other("toolpick is stopping"));
    }
    let dir = create()?;
    let path = dir.path().to_path_buf();
    dirs.insert(path.clone());
    Ok(TrackedDir { dir: Some(dir), path })
}

impl TrackedDir {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the folder now, reporting a failure (dropping removes it too, ignoring errors).
    pub fn close(mut self) -> std::io::Result<()> {
        DIRS.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.path);
        self.dir.take().map_or(Ok(()), tempfile::TempDir::close)
    }
}

impl Drop for TrackedDir {
    fn drop(&mut self) {
        DIRS.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.path);
    }
}

/// Wait for Ctrl-C (SIGINT), taking it from the signal net: the caller stops cleanly itself.
pub async fn interrupted() -> std::io::Result<()> {
    install_nets();
    SIGINT_TAKEN.store(true, Ordering::SeqCst);
    tokio::signal::ctrl_c().await
}

/// Install the signal listener and the `atexit` hook, once, before anything is started: a signal that
/// came between a server's start and the listener would leave the server behind.
fn install_nets() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registering a plain `extern "C" fn` with atexit(3).
        unsafe {
            libc::atexit(stop_everything_at_exit);
        }
        let Ok(runtime) =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
                crate::messages::warning(format_args!(
                    "cannot listen for signals ({e}); a kill may leave servers running"
                ))
            })
        else {
            return;
        };
        // The listeners are registered here, synchronously, so the signals are caught from now on.
        let listeners = {
            let _entered = runtime.enter();
            use tokio::signal::unix::{SignalKind, signal};
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
        };
        let (Ok(mut term), Ok(mut int)) = listeners else {
            crate::messages::warning("cannot listen for signals; a kill may leave servers running");
            return;
        };
        let spawned =
            std::thread::Builder::new().name("toolpick-signals".into()).spawn(move || {
                runtime.block_on(async move {
                    loop {
                        tokio::select! {
                            _ = term.recv() => stop_everything_and_exit("SIGTERM", 143),
                            _ = int.recv() => {
                                if !SIGINT_TAKEN.load(Ordering::SeqCst) {
                                    stop_everything_and_exit("SIGINT", 130);
                                }
                            }
                        }
                    }
                })
            });
        if let Err(e) = spawned {
            crate::messages::warning(format_args!(
                "cannot listen for signals ({e}); a kill may leave servers running"
            ));
        }
    });
}

fn stop_everything_and_exit(signal: &str, code: i32) -> ! {
    SIGNALLED.store(true, Ordering::SeqCst);
    let (servers, dirs) = stop_everything();
    crate::messages::err_line(format_args!(
        "toolpick: stopped by {signal}; stopped {servers} MCP server(s) and removed {dirs} temporary folder(s)"
    ));
    // `_exit`, not `exit`: the main thread may be in `exit` already (its stdin closed with the signal),
    // and two threads in `exit` is undefined; this ends the process with the signal's code.
    // SAFETY: _exit(2) ends the process; nothing after it runs.
    unsafe { libc::_exit(code) }
}

extern "C" fn stop_everything_at_exit() {
    if SIGNALLED.load(Ordering::SeqCst) {
        // The signal listener is stopping everything and ends the process with the signal's code.
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    stop_everything();
}

/// Stop every live group (SIGTERM, [`TERM_GRACE`], SIGKILL) and remove every tracked folder; returns
/// how many of each. Nothing may start afterwards.
fn stop_everything() -> (usize, usize) {
    let groups: Vec<i32> = {
        let groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        STOPPING.store(true, Ordering::SeqCst);
        groups.iter().copied().collect()
    };
    for &g in &groups {
        signal_group(g, libc::SIGTERM);
    }
    let deadline = Instant::now() + TERM_GRACE;
    let mut left = groups.clone();
    while !left.is_empty() && Instant::now() < deadline {
        left.retain(|&g| !reaped(g));
        std::thread::sleep(Duration::from_millis(10));
    }
    for &g in &groups {
        signal_group(g, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(1);
    while !left.is_empty() && Instant::now() < deadline {
        left.retain(|&g| !reaped(g));
        std::thread::sleep(Duration::from_millis(5));
    }
    let dirs: Vec<PathBuf> =
        std::mem::take(&mut *DIRS.lock().unwrap_or_else(|e| e.into_inner())).into_iter().collect();
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    (groups.len(), dirs.len())
}

/// Whether the group's leader has exited (reaping it here: toolpick is about to exit, and a zombie
/// left to a container's init may never be reaped).
fn reaped(leader: i32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid(2) on a pid of our own child, WNOHANG: no memory is touched but `status`.
    let r = unsafe { libc::waitpid(leader, &mut status, libc::WNOHANG) };
    // Reaped now, or already (by tokio: ECHILD).
    r == leader || r == -1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: i32) -> bool {
        // A zombie is not running: read its state rather than only whether the pid exists.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                let state = s.rsplit(')').next().unwrap_or("").trim_start().chars().next();
                state != Some('Z')
            })
            .unwrap_or(false)
    }

    #[tokio::test]
    async fn a_server_that_ignores_sigterm_and_its_own_child_are_killed_and_reaped() {
        let mut command = tokio::process::Command::new("sh");
        // The shell ignores SIGTERM and stdin's end, and starts a grandchild in its group.
        command.args(["-c", "trap '' TERM; sleep 600 & echo $!; while :; do sleep 1; done"]);
        let mut server = spawn(&mut command).unwrap();
        let pid = server.pid();
        let (stdout, stdin) = server.take_stdio().unwrap();
        drop(stdin);
        let mut line = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut tokio::io::BufReader::new(stdout), &mut line)
            .await
            .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert!(alive(pid) && alive(grandchild));
        server.stop().await;
        assert!(!alive(pid), "the server survived");
        // The group's SIGKILL is delivered, not awaited (the child is not ours to reap): a moment.
        let deadline = Instant::now() + Duration::from_secs(2);
        while alive(grandchild) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(grandchild), "the server's child survived");
        assert!(!GROUPS.lock().unwrap().contains(&pid));
    }

    #[test]
    fn dropping_a_server_unstopped_kills_its_group() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let pid = rt.block_on(async {
            let mut command = tokio::process::Command::new("sh");
            command.args(["-c", "trap '' TERM; while :; do sleep 1; done"]);
            let server = spawn(&mut command).unwrap();
            let pid = server.pid();
            drop(server);
            pid
        });
        assert!(!alive(pid));
    }

    #[test]
    fn a_tracked_folder_is_forgotten_when_closed() {
        let dir = temp_dir("toolpick-test-").unwrap();
        let path = dir.path().to_path_buf();
        assert!(DIRS.lock().unwrap().contains(&path));
        dir.close().unwrap();
        assert!(!path.exists());
        assert!(!DIRS.lock().unwrap().contains(&path));
    }
}
