//! Every line a person reads goes through one channel, `src/messages.rs`: nothing else in `src/`
//! writes to stdout or stderr itself (so every line is redacted and a closed pipe cannot panic), and
//! a command whose stdout is closed before it writes (`toolpick … | head -c1`) ends with the exit code
//! it has with an open stdout, no panic and no message about the pipe.

mod common;
use common::argv_with;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What writes to a standard stream without passing the messages channel.
const FORBIDDEN: &[&str] =
    &["println!(", "print!(", "eprintln!(", "eprint!(", "dbg!(", "io::stdout()", "io::stderr()"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `file:line: text` of every line of `src/` outside the messages module that writes to a standard
/// stream itself (comments skipped: a comment may name what it avoids).
fn direct_writes(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let channel = src.join("messages.rs");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| **f != channel) {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if FORBIDDEN.iter().any(|p| code.contains(p)) {
                found.push(format!("{}:{}: {}", f.display(), i + 1, code));
            }
        }
    }
    found
}

#[test]
fn nothing_in_src_writes_to_stdout_or_stderr_but_the_messages_module() {
    let src = common::repo().join("src");
    assert!(src.join("messages.rs").is_file(), "the messages module is src/messages.rs");
    let found = direct_writes(&src);
    assert!(
        found.is_empty(),
        "write through crate::messages (outln!, note, warning, err_line) instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_a_direct_write_and_skips_comments() {
    // The scan itself can fail: a source tree with one direct write in code and one in a comment.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("inner")).unwrap();
    std::fs::write(dir.path().join("messages.rs"), "fn f() { println!(\"ok here\"); }\n").unwrap();
    std::fs::write(
        dir.path().join("inner/a.rs"),
        "// not eprintln!(\"x\") here\nfn g() {\n    let _ = writeln!(std::io::stderr(), \"x\");\n}\n",
    )
    .unwrap();
    let found = direct_writes(dir.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("a.rs:3:"), "{found:?}");
}

/// Run toolpick with `args` in `cwd` twice — stdout open, then stdout closed before the command
/// writes — and check both end alike, the second without a panic or a word about the pipe.
fn ends_alike_with_stdout_closed(args: &[&str], cwd: &Path) {
    let open = common::toolpick(args, cwd);
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end at once: every write to stdout now fails with a broken pipe.
    drop(child.stdout.take());
    let closed = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&closed.stderr);
    assert_eq!(
        closed.status.code(),
        open.status.code(),
        "toolpick {args:?}: exit code with stdout closed; stderr:\n{err}"
    );
    for bad in ["panicked", "Broken pipe", "os error 32", "broken pipe"] {
        assert!(!err.contains(bad), "toolpick {args:?} with stdout closed said `{bad}`:\n{err}");
    }
    assert!(
        !String::from_utf8_lossy(&open.stdout).trim().is_empty(),
        "toolpick {args:?} prints something on an open stdout, so the closed one is tested"
    );
}

#[test]
fn commands_end_cleanly_when_stdout_is_closed() {
    let repo = common::repo();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reports");
    let out_s = out.to_str().unwrap();
    let small = argv_with(
        "run --tasks dev-00? --backends lexical --layouts flat --quiet \
        --out {}",
        &[out_s],
    );
    // Two runs to compare; each also a command under test.
    let mut a = small.to_vec();
    a.extend(["--run-id", "a"]);
    ends_alike_with_stdout_closed(&a, &repo);
    let mut b = small.to_vec();
    b.extend(["--run-id", "b", "--min-pass-rate", "100"]);
    ends_alike_with_stdout_closed(&b, &repo);
    let (run_a, run_b) = (out.join("a"), out.join("b"));
    let (run_a, run_b) = (run_a.to_str().unwrap(), run_b.to_str().unwrap());
    let cache = dir.path().join("cache");
    let commands: Vec<Vec<&str>> = vec![
        vec!["report", run_a],
        vec!["report", run_b, "--baseline", run_a, "--min-pass-rate", "100"],
        vec!["compare", run_a, run_b],
        vec!["validate"],
        vec!["lint", "--fail-on", "never"],
        vec!["lint", "--format", "json", "--fail-on", "never"],
        vec!["cache", "stats", "--cache-dir", cache.to_str().unwrap()],
        vec!["--help"],
        vec!["run", "--help"],
        vec!["--version"],
    ];
    for args in &commands {
        ends_alike_with_stdout_closed(args, &repo);
    }
}
