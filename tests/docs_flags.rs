//! The guide against the binary: every long flag of every subcommand (read from the built
//! binary's `--help`, recursively) appears in README.md or a page of docs/; every `--flag` those
//! pages write is a flag of some subcommand, unless it belongs to another program listed in
//! [`OTHER_PROGRAMS`]; README.md stays a front door (at most [`README_MAX_LINES`] lines) linking
//! every page; and every relative link in them resolves to a file, and its `#anchor` to a heading
//! of the page it points at.
//!
//! The flags come from the binary, not from a list kept here, so a flag added to the code without
//! a word in the docs fails this test, and so does a flag the docs keep after the code dropped it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The issue's bound on the README (issue 33, item 7): a front door, not a manual.
const README_MAX_LINES: usize = 350;

/// `--flags` the docs write that belong to other programs, each with the reason it is in the docs.
const OTHER_PROGRAMS: &[(&str, &str)] = &[
    ("--release", "cargo build / cargo run: the install and the two commands"),
    ("--locked", "cargo test / cargo build: build with Cargo.lock as committed"),
    ("--profile", "cargo build / cargo install / maturin build --profile dist: the shipped build"),
    ("--path", "cargo install --path .: the install section"),
    ("--bench", "cargo bench --bench NAME: the benchmarks in development.md"),
    ("--test", "cargo test --test NAME: running one test file"),
    ("--lib", "cargo test --lib PATH: running one module's unit tests"),
    ("--jinja", "llama-server: applies the model's chat template (local models)"),
    ("--enable-auto-tool-choice", "vllm serve: native tool calls (local models)"),
    ("--tool-call-parser", "vllm serve: the parser of the model's tool calls (local models)"),
    ("--no-deps", "pip's flag: the parity venv gets BFCL's checker without its dependencies"),
    ("--python", "scripts/install-mcp-servers.sh: also the PyPI servers and the MCP SDK"),
    (
        "--check",
        "install scripts: report what is missing, install nothing; cargo fmt --check in .ci/run",
    ),
    (
        "--sdk",
        "scripts/provider_sdk_server.py --sdk NAME: which provider's SDK a test tier validates with",
    ),
    ("--all-targets", "cargo clippy --all-targets: the lint step of .ci/run"),
    ("--rm", "docker run --rm: the container in the README's install section"),
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `toolpick help <path…>`'s text.
fn help(path: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .arg("help")
        .args(path)
        .output()
        .expect("run toolpick help");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "toolpick help {path:?} failed: {stderr}");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommand names listed under `Commands:` (clap's own `help` left out).
fn subcommands(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_commands = false;
    for line in text.lines() {
        if line == "Commands:" {
            in_commands = true;
        } else if in_commands && line.trim().is_empty() {
            in_commands = false;
        } else if in_commands && line.starts_with("  ") && !line.starts_with("   ") {
            let name = line.split_whitespace().next().unwrap_or_default();
            if name != "help" {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The long flags an option line declares: clap indents them 2 to 6 columns (`  -q, --quiet`,
/// `      --seed <SEED>`); wrapped descriptions are indented further and never match.
fn declared_flags(text: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if !(2..=6).contains(&indent) {
            continue;
        }
        let mut rest = line.trim_start();
        let short = rest.starts_with('-') && !rest.starts_with("--");
        if short && rest.len() > 4 && &rest[2..4] == ", " {
            rest = &rest[4..];
        }
        if let Some(name) = rest.strip_prefix("--") {
            flags.insert(format!("--{}", &name[..flag_end(name)]));
        }
    }
    flags
}

/// Where a flag's name ends: letters, digits and hyphens.
fn flag_end(name: &str) -> usize {
    name.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(name.len())
}

/// Every subcommand (`toolpick`, `toolpick run`, `toolpick mcp serve`, …) with the long flags its
/// help declares.
fn flags_by_command() -> BTreeMap<String, BTreeSet<String>> {
    let mut found = BTreeMap::new();
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = todo.pop() {
        let text = help(&path);
        for sub in subcommands(&text) {
            let mut next = path.clone();
            next.push(sub);
            todo.push(next);
        }
        let name = format!("toolpick {}", path.join(" ")).trim_end().to_string();
        found.insert(name, declared_flags(&text));
    }
    found
}

/// README.md and every page of docs/, as (path relative to the repo, text).
fn pages() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names.into_iter().map(|n| (n.clone(), read(&repo().join(&n)))).collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `--flag` written in a text, with its 1-based line: two hyphens after a character that
/// cannot be part of a word or of a longer run of hyphens (so `---|` table rules and `a--b` are not
/// flags), then a lower-case letter.
fn written_flags(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let mut i = 0;
        while let Some(at) = line[i..].find("--") {
            let start = i + at;
            let before = if start == 0 { b' ' } else { bytes[start - 1] };
            let before_ok = !(before.is_ascii_alphanumeric() || before == b'-');
            let first = bytes.get(start + 2).copied();
            if before_ok && first.is_some_and(|c| c.is_ascii_lowercase()) {
                let name = &line[start + 2..];
                let end = flag_end(name);
                found.push((n + 1, format!("--{}", name[..end].trim_end_matches('-'))));
                i = start + 2 + end;
            } else {
                i = start + 2;
            }
        }
    }
    found
}

#[test]
fn every_flag_of_every_subcommand_is_documented() {
    let commands = flags_by_command();
    assert!(commands.len() >= 15, "expected the whole command tree, found {:?}", commands.keys());
    let documented: BTreeSet<String> =
        pages().iter().flat_map(|(_, text)| written_flags(text)).map(|(_, f)| f).collect();
    let mut missing = Vec::new();
    for (cmd, flags) in &commands {
        for flag in flags.iter().filter(|f| !documented.contains(*f)) {
            missing.push(format!("{cmd} {flag}"));
        }
    }
    let missing = missing.join("\n");
    assert!(missing.is_empty(), "flags of the binary that no page names:\n{missing}");
}

#[test]
fn every_documented_flag_exists() {
    let known: BTreeSet<String> = flags_by_command().into_values().flatten().collect();
    let others: BTreeSet<&str> = OTHER_PROGRAMS.iter().map(|(f, _)| *f).collect();
    let mut unknown = Vec::new();
    let mut others_used = BTreeSet::new();
    for (page, text) in pages() {
        for (line, flag) in written_flags(&text) {
            if others.contains(flag.as_str()) {
                others_used.insert(flag);
            } else if !known.contains(&flag) {
                unknown.push(format!("{page}:{line}: `{flag}` is no flag of any subcommand"));
            }
        }
    }
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    // The exceptions stay honest: one that no page uses any more, or that toolpick now has itself,
    // would let a wrong flag through unnoticed.
    for (flag, why) in OTHER_PROGRAMS {
        assert!(others_used.contains(*flag), "`{flag}` ({why}): another program's, unused");
        assert!(!known.contains(*flag), "`{flag}`: another program's, but toolpick has it");
    }
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = read(&repo().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move the detail to docs/"
    );
    // Every page of the guide is reachable from the front door.
    for (page, _) in pages().iter().filter(|(p, _)| p.starts_with("docs/")) {
        assert!(readme.contains(&format!("]({page})")), "README.md does not link {page}");
    }
}

/// GitHub's anchor of a heading: lower-cased, characters other than letters, digits, spaces, `-`
/// and `_` dropped, spaces turned into `-`; a repeated anchor gets `-1`, `-2`, …
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let count = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *count == 0 { slug.clone() } else { format!("{slug}-{count}") });
        *count += 1;
    }
    out
}

/// The targets of inline links `[text](target)` outside code fences and code spans, with their
/// line.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut in_fence = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Code spans hold literal text (`[x](y)` in an example is no link).
        let outside: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = outside.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push((n + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        let dir = Path::new(&page).parent().unwrap().to_path_buf();
        for (line, target) in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() { PathBuf::from(&page) } else { dir.join(file) };
            let full = repo().join(&path);
            if !full.exists() {
                broken.push(format!("{page}:{line}: `{target}`: {} is missing", path.display()));
                continue;
            }
            let markdown = full.extension().is_some_and(|e| e == "md");
            if let Some(anchor) = anchor.filter(|_| markdown)
                && !anchors(&read(&full)).contains(anchor)
            {
                let why = format!("no heading of {} is #{anchor}", path.display());
                broken.push(format!("{page}:{line}: `{target}`: {why}"));
            }
        }
    }
    assert!(checked >= 20, "only {checked} relative links found: is the link reader broken?");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
