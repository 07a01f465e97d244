//! The allocator's settings: the binary (and the benchmarks measuring it) run on mimalloc, tuned here.
//!
//! mimalloc returns freed memory to the system 10 ms after it was freed ("purge delay"). Reading a
//! large trial file frees each batch of parsed records while the next is being allocated, so with that
//! delay the same memory went back and forth: a quarter of a million-trial report's time was the
//! kernel zeroing pages it had just handed back (`clear_page_erms` in perf). One second keeps the
//! working set of one report alive between batches (measured: 22–24 s → 18 s, peak RSS 799–827 →
//! 834 MiB) and still returns memory a long run no longer needs. `MIMALLOC_PURGE_DELAY` in the
//! environment still wins (this sets the default only).
//!
//! Transparent huge pages are turned off for the process (Linux, where the system's setting is
//! `always` on many distributions): with them, each first touch of fresh memory zeroed a whole 2 MiB
//! page, and the report's growing buffers and freed batches kept touching fresh memory. Measured on a
//! million-trial report (three alternating pairs): 3.0–3.3 → 1.5–2.0 system CPU-s, +0.1–0.4 user
//! CPU-s, lower peak RSS. `MIMALLOC_ALLOW_THP` in the environment (mimalloc's own switch) leaves the
//! system's setting alone. The setting is inherited by child processes (MCP servers toolpick starts),
//! which then get ordinary pages too.

use std::os::raw::{c_int, c_long};

// Linked with the `mimalloc` crate (its `libmimalloc-sys` builds mimalloc v3), whose bindings name
// neither option; the index is `mi_option_purge_delay`'s place in v3's `include/mimalloc.h`.
const PURGE_DELAY: c_int = 15;
/// mimalloc's own default for it (ms), which tells the option apart from its neighbours.
const PURGE_DELAY_DEFAULT: c_long = 10;

unsafe extern "C" {
    fn mi_option_get(option: c_int) -> c_long;
    fn mi_option_set_default(option: c_int, value: c_long);
}

/// Purge delay in milliseconds the binary uses.
pub const PURGE_DELAY_MS: c_long = 1000;

/// Apply the settings; call once, first thing in `main`. Touches nothing unless the option at the
/// index still has mimalloc's default for the purge delay (a mimalloc that moved its options would
/// otherwise get a wrong one set), and so it leaves a `MIMALLOC_PURGE_DELAY` from the environment alone.
pub fn tune() {
    // Referenced so the library is linked wherever this is.
    let _ = std::mem::size_of::<mimalloc::MiMalloc>();
    // SAFETY: plain C calls with an option index and a value; mimalloc validates the index.
    unsafe {
        if mi_option_get(PURGE_DELAY) == PURGE_DELAY_DEFAULT {
            mi_option_set_default(PURGE_DELAY, PURGE_DELAY_MS);
        }
    }
    #[cfg(target_os = "linux")]
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: a plain prctl with integer arguments; failure (an old kernel) leaves THP as it was.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}

/// The purge delay in effect (ms).
pub fn purge_delay_ms() -> c_long {
    // SAFETY: as in `tune`.
    unsafe { mi_option_get(PURGE_DELAY) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn transparent_huge_pages_are_off_after_tuning() {
        if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
            return; // the environment's choice wins, by design
        }
        tune();
        // SAFETY: a plain prctl query.
        let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(disabled, 1, "PR_GET_THP_DISABLE after tune()");
    }

    #[test]
    fn the_purge_delay_is_found_by_its_default_and_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return; // the environment's value wins, by design
        }
        tune();
        assert_eq!(
            purge_delay_ms(),
            PURGE_DELAY_MS,
            "the option at the index did not hold mimalloc's purge-delay default"
        );
    }
}
