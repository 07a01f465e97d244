//! Named crash points, for tests only: `TOOLPICK_TEST_KILL_AT=<point>:<n>` makes the process kill
//! itself with SIGKILL the `n`-th time it reaches `<point>` (n ≥ 1), exactly as `kill -9` at that
//! moment would: no destructor runs, buffered writes are lost, temporary files stay behind.
//!
//! The tests in `tests/crash.rs` use it to stop the binary at deterministic points across the report
//! phase and check that the next `report` or `run` recovers byte for byte. A timing sweep (sending
//! SIGKILL after a delay) would hit different points on a loaded machine and could not prove that a
//! given point was ever reached; a named point is hit on every machine, every time.
//!
//! The hook is compiled into every build so the tests exercise the shipped binary. It is not a user
//! feature: nothing sets the variable unless a test does. With the variable unset, a point costs one
//! load of an initialised `OnceLock`.
//!
//! Points (see where [`reached`] is called):
//! - `compact-write:<n>`: compaction has written `n` records to its temporary file;
//! - `compact-rename:1`: the compacted temporary file is complete, not yet renamed over the trials;
//! - `compact-done:1`: the compacted file has just replaced the trials file;
//! - `scan:<n>`: the report has fed `n` trials to its streaming outputs;
//! - `stage:<n>`: the report has written `n` aggregate files under their temporary names;
//! - `rename:<n>`: the report has renamed `n` of its files into place;
//! - `merge-trials:1`: `merge` has written everything but the trials and the reports.
//! - `judge-append:<n>`: a judge pass has appended `n` verdicts to `judgements.jsonl`.

use std::sync::OnceLock;

/// The environment variable naming the crash point.
pub const ENV: &str = "TOOLPICK_TEST_KILL_AT";

fn target() -> Option<&'static (String, u64)> {
    static TARGET: OnceLock<Option<(String, u64)>> = OnceLock::new();
    TARGET
        .get_or_init(|| {
            let v = std::env::var(ENV).ok()?;
            let (name, n) = v.rsplit_once(':')?;
            Some((name.to_string(), n.parse().ok()?))
        })
        .as_ref()
}

/// The process has reached `point` for the `n`-th time: die here if the tests asked for it.
#[inline]
pub fn reached(point: &str, n: u64) {
    if let Some((name, at)) = target()
        && *at == n
        && name == point
    {
        kill_self();
    }
}

fn kill_self() -> ! {
    #[cfg(unix)]
    // SAFETY: kill(2) on our own pid with a valid signal number has no memory-safety preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    // SIGKILL cannot be caught, so this is only reached where there is no kill(2).
    std::process::abort()
}
