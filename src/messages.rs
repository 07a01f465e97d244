//! The one channel for every line a person reads: results on stdout ([`out`], [`outln!`]) and notes,
//! warnings, errors and progress text on stderr ([`note`], [`warning`], [`error`], [`err_line`]).
//!
//! Why one module: every line passes the redactor ([`crate::redact::global`]), since results and
//! notes may quote what an endpoint, a judge or a server said; a closed stdout or stderr
//! (`toolpick run | head -1`) drops the lines instead of panicking as `println!` does, and the command
//! ends as it would have with no message about the pipe (ending the process at the first failed write
//! would skip the drops that stop child servers and release the run directory's lock); and a note
//! printed while progress bars are drawn goes through the bars' `suspend`, so it does not tear them.
//! Library code never writes to stdout or stderr itself (`tests/messages_channel.rs` checks the
//! sources): a line a person reads is said here, once.

use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

/// The progress bars on stderr while a run draws them ([`BarsShown`]): stderr lines are written
/// around them.
static BARS: Mutex<Option<indicatif::MultiProgress>> = Mutex::new(None);

/// A line on stdout (a result), redacted; a closed stdout drops it.
pub fn out(line: impl Display) {
    let line = line.to_string();
    let redacted = crate::redact::global().redact(&line);
    let _ = writeln!(std::io::stdout().lock(), "{redacted}");
}

/// Text on stdout as it is (a document such as lint's JSON or SARIF, newlines included), redacted.
pub fn out_text(text: &str) {
    let redacted = crate::redact::global().redact(text);
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(redacted.as_bytes());
    let _ = stdout.flush();
}

/// A line on stderr, redacted, written around the progress bars when they are shown; a closed
/// stderr drops it (a serving session must not end because its log is gone).
pub fn err_line(line: impl Display) {
    let line = line.to_string();
    let redacted = crate::redact::global().redact(&line);
    let write = || {
        let _ = writeln!(std::io::stderr().lock(), "{redacted}");
    };
    let bars = BARS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match bars {
        Some(bars) => bars.suspend(write),
        None => write(),
    }
}

/// `note: …` on stderr: something the user may want to know that changes nothing they asked for.
pub fn note(text: impl Display) {
    err_line(format_args!("note: {text}"));
}

/// `warning: …` on stderr: something that may make a result mean less than it seems.
pub fn warning(text: impl Display) {
    err_line(format_args!("warning: {text}"));
}

/// `error: …` on stderr: why the command failed (its exit code says how).
pub fn error(text: impl Display) {
    err_line(format_args!("error: {text}"));
}

/// Standard output as a protocol stream, not a person's channel: `mcp serve` over stdio speaks
/// JSON-RPC on it (every line a person reads still goes to stderr through this module). Handed out
/// here so this module stays the one place that names the standard streams.
pub fn protocol_stdout() -> tokio::io::Stdout {
    tokio::io::stdout()
}

/// Whether stdout is a terminal (colour is for people, not for files and pipes).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Whether stderr is a terminal (progress bars are drawn only there).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// While this lives, stderr lines are written through `bars` ([`indicatif::MultiProgress::suspend`]).
pub struct BarsShown(());

/// Route stderr lines around `bars` until the returned guard is dropped.
pub fn show_bars(bars: &indicatif::MultiProgress) -> BarsShown {
    *BARS.lock().unwrap_or_else(|e| e.into_inner()) = Some(bars.clone());
    BarsShown(())
}

impl Drop for BarsShown {
    fn drop(&mut self) {
        BARS.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// `println!` through [`out`]: a result line on stdout, redacted, a closed stdout ignored. (In scope
/// in every module: `lib.rs` declares this module first, with `#[macro_use]`.)
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::messages::out(format_args!($($t)*))
    };
}
