//! The generated bad-input suite (issue 31): every input path toolpick reads — catalog, dataset,
//! experiment file, flags, judge prompts, labels, recorded answers, history, baselines and run
//! directories, shards, sessions files, the response cache, benchmark imports — reached through
//! every command that reads it, and damaged by a generator: each valid base input × each mutation
//! that applies to it (missing, a directory, empty, a byte-order mark, UTF-16, undecodable bytes, a
//! line cut short, the wrong top-level type, an unknown field, a wrong type, out of range, a name
//! naming nothing, a duplicate, a path outside its directory, a reserved name, a malformed URL, a
//! key where a variable name belongs …).
//!
//! Every case runs the real binary in a fresh copy of the world (`bad_inputs/world.rs`) with an
//! endpoint of its own that counts connections (`bad_inputs/harness.rs`) and asserts what
//! docs/failure-modes.md promises for bad input: exit 2, one stderr line naming the file (with its line and field)
//! or the flag, nothing created or changed anywhere in the case's directory, no request sent, no
//! panic, an exit within the time limit (a hang guard, not a performance target). The few formats
//! that document another outcome say so in their expectation (a damaged sessions line is skipped
//! with its line named; an importer keeps going and reports the file in `defects.csv`). Before any
//! mutation, every base is run as it is and must succeed: a case differs from good input only by
//! its mutation.
//!
//! The summary table (per input path: cases, ok, late, ignored, panics, other) and every unexpected
//! failure with its command go to stderr; the table, the same table per slot (each base), and every
//! failing case with its command go to `target/test-artifacts/bad-inputs.txt`. Cases that fail
//! today because their fix lands on another branch are listed by id in `KNOWN_FAILING`
//! (`bad_inputs/known_failing.rs`): the suite fails on a failing case not listed, and on a listed
//! case that now passes, so the list is emptied as the fixes are merged.
//!
//! `TOOLPICK_BAD_INPUTS_ONLY=<text>` runs only the cases whose id contains the text (the list check
//! is then limited to them); `TOOLPICK_BAD_INPUTS_THREADS=N` sets the parallelism (default 3);
//! `TOOLPICK_BAD_INPUTS_VERBOSE=1` prints every case with its verdict and first stderr line.

#[path = "bad_inputs/artifacts.rs"]
mod artifacts;
mod common;
#[path = "bad_inputs/damage.rs"]
mod damage;
#[path = "bad_inputs/flags.rs"]
mod flags;
#[path = "bad_inputs/harness.rs"]
mod harness;
#[path = "bad_inputs/inputs.rs"]
mod inputs;
#[path = "bad_inputs/known_failing.rs"]
mod known_failing;
#[path = "bad_inputs/world.rs"]
mod world;

use harness::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A command that has not exited by then hangs (generous: debug builds on two busy cores).
const LIMIT: Duration = Duration::from_secs(60);
/// A server that is still serving by then took its input.
const SERVE_LIMIT: Duration = Duration::from_secs(8);

fn generate(world: &std::path::Path) -> Vec<Case> {
    let mut groups = inputs::cases(world);
    groups.extend(artifacts::cases(world));
    groups.extend(flags::cases());
    // Generated over the slots above: every value-taking flag of every command given a negative
    // number, every bad run id on every command that takes one.
    let (negative, run_ids) = (flags::negative_values(&groups), flags::run_ids(&groups));
    groups.extend(negative);
    groups.extend(run_ids);
    let mut cases = vec![];
    for (slot, mutations) in groups {
        let slot = Arc::new(slot);
        cases.push(Case {
            id: format!("{}/base", slot.name),
            path: slot.path,
            slot: slot.clone(),
            mutation: None,
        });
        for m in mutations {
            cases.push(Case {
                id: format!("{}/{}", slot.name, m.name),
                path: slot.path,
                slot: slot.clone(),
                mutation: Some(m),
            });
        }
    }
    let mut seen = BTreeSet::new();
    for c in &cases {
        assert!(seen.insert(c.id.clone()), "two cases are called {}", c.id);
    }
    cases
}

/// Run `cases` on `threads` threads, each in a fresh copy of the world.
fn run_all(
    cases: &[&Case],
    world: &world::World,
    endpoint: &Endpoint,
    threads: usize,
) -> Vec<Outcome> {
    let root = tempfile::tempdir().unwrap();
    let next = AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Outcome>>> =
        cases.iter().map(|_| Default::default()).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    let dir = root.path().join(format!("case{i}"));
                    let proxy = endpoint.proxy();
                    world.copy_into(&dir);
                    let limit = if case.serves() { SERVE_LIMIT } else { LIMIT };
                    let outcome = harness::run(
                        case,
                        &dir,
                        &root.path().join(format!("logs{i}")),
                        &proxy,
                        limit,
                    );
                    let _ = std::fs::remove_dir_all(&dir);
                    *results[i].lock().unwrap() = Some(outcome);
                }
            });
        }
    });
    results.into_iter().map(|r| r.into_inner().unwrap().unwrap()).collect()
}

fn shell(args: &[String]) -> String {
    let quote = |a: &String| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,*".contains(c))
        {
            a.clone()
        } else {
            format!("{a:?}")
        }
    };
    format!("toolpick {}", args.iter().map(quote).collect::<Vec<_>>().join(" "))
}

/// A summary table: per group (`group_of` a case), its cases and their verdicts by kind (ok, late,
/// ignored, panics, other), groups in the order the generator lists them, and the totals.
fn summary(
    cases: &[&Case],
    verdicts: &[Verdict],
    heading: &str,
    group_of: impl Fn(&Case) -> String,
) -> String {
    let mut rows: Vec<(String, [usize; 6])> = vec![];
    for (c, v) in cases.iter().zip(verdicts) {
        let group = group_of(c);
        let i = match rows.iter().position(|(g, _)| *g == group) {
            Some(i) => i,
            None => {
                rows.push((group, [0; 6]));
                rows.len() - 1
            }
        };
        rows[i].1[0] += 1;
        rows[i].1[1 + v.column()] += 1;
    }
    let width = rows.iter().map(|(g, _)| g.chars().count()).chain([18]).max().unwrap_or(18);
    let line = |name: &str, r: &[usize; 6]| {
        format!(
            "{name:<width$} {:>6} {:>6} {:>6} {:>8} {:>7} {:>6}\n",
            r[0], r[1], r[2], r[3], r[4], r[5]
        )
    };
    let mut table = format!(
        "\n{heading:<width$} {:>6} {:>6} {:>6} {:>8} {:>7} {:>6}\n",
        "cases", "ok", "late", "ignored", "panics", "other"
    );
    let mut total = [0usize; 6];
    for (group, row) in &rows {
        table += &line(group, row);
        for (t, r) in total.iter_mut().zip(row) {
            *t += r;
        }
    }
    table + &line("total", &total)
}

#[test]
fn every_bad_input_is_refused_early_with_a_named_line() {
    let started = Instant::now();
    let world = world::World::build();
    let endpoint = Endpoint::start();
    let only = std::env::var("TOOLPICK_BAD_INPUTS_ONLY").ok();
    let threads =
        std::env::var("TOOLPICK_BAD_INPUTS_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(3);
    let all = generate(&world.dir);
    let ids: BTreeSet<&str> = all.iter().map(|c| c.id.as_str()).collect();
    let selected: Vec<&Case> =
        all.iter().filter(|c| only.as_deref().is_none_or(|o| c.id.contains(o))).collect();

    // The bases first: a base that fails makes every case of its slot meaningless.
    let base_needed: BTreeSet<&str> = selected.iter().map(|c| c.slot.name.as_str()).collect();
    let bases: Vec<&Case> = all
        .iter()
        .filter(|c| c.mutation.is_none() && base_needed.contains(c.slot.name.as_str()))
        .collect();
    let base_outcomes = run_all(&bases, &world, &endpoint, threads);
    let mut broken = vec![];
    let mut base_imports = BTreeMap::new();
    for (c, o) in bases.iter().zip(&base_outcomes) {
        if let Some(problem) = base_problem(&c.slot, o) {
            broken.push(format!("{}: {}\n    {}", c.id, shell(&o.args), problem));
        }
        base_imports.insert(c.slot.name.clone(), o.imported.clone());
    }
    assert!(
        broken.is_empty(),
        "bases that are not valid input (fix the generator):\n{}",
        broken.join("\n")
    );

    let cases: Vec<&Case> = selected.into_iter().filter(|c| c.mutation.is_some()).collect();
    let outcomes = run_all(&cases, &world, &endpoint, threads);
    let mut flags: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for c in &cases {
        let command = command_of(&c.args());
        flags.entry(command).or_insert_with_key(|command| flags_of(command));
    }
    let verdicts: Vec<Verdict> = cases
        .iter()
        .zip(&outcomes)
        .map(|(c, o)| {
            judge(
                c,
                o,
                base_imports.get(&c.slot.name).and_then(Option::as_ref),
                &flags[&command_of(&c.args())],
            )
        })
        .collect();

    // The table, by input path in the order the generator lists them; in the artifact file also by
    // slot (each base: an input path reached through one command).
    let mut table = summary(&cases, &verdicts, "input path", |c| c.path.to_string());
    let by_slot = summary(&cases, &verdicts, "slot (base)", |c| c.slot.name.clone());
    table += "ok: exit 2 with one stderr line naming the file (line, field) or the flag, nothing written, no request\n";
    table += "(or the outcome the format documents); late: written or requested before the error; ignored: exit 0\n";
    let slowest = cases
        .iter()
        .zip(&outcomes)
        .max_by_key(|(_, o)| o.elapsed)
        .map(|(c, o)| format!("{} ({:.1?})", c.id, o.elapsed))
        .unwrap_or_default();
    table += &format!(
        "{} cases and {} bases in {:.1?} on {threads} threads; slowest case {slowest}\n",
        cases.len(),
        bases.len(),
        started.elapsed()
    );

    let known: BTreeSet<&str> = known_failing::KNOWN_FAILING.iter().copied().collect();
    let (mut listed_failing, mut new_failing) = (String::new(), String::new());
    let (mut unexpected, mut fixed) = (vec![], vec![]);
    for ((c, o), v) in cases.iter().zip(&outcomes).zip(&verdicts) {
        let listed = known.contains(c.id.as_str());
        match (v, listed) {
            (Verdict::Ok, true) => fixed.push(c.id.clone()),
            (Verdict::Ok, false) => {}
            (v, true) => {
                listed_failing += &format!("{} — {}\n    {}\n", c.id, v.label(), shell(&o.args))
            }
            (v, false) => {
                new_failing += &format!("NEW {} — {}\n    {}\n", c.id, v.label(), shell(&o.args));
                unexpected.push(c.id.clone());
            }
        }
    }
    let mut every = String::new();
    if std::env::var_os("TOOLPICK_BAD_INPUTS_VERBOSE").is_some() {
        for ((c, o), v) in cases.iter().zip(&outcomes).zip(&verdicts) {
            every += &format!(
                "{} — {} ({:.1?})\n    {}\n    stderr: {}\n",
                c.id,
                v.label(),
                o.elapsed,
                shell(&o.args),
                o.stderr.lines().next().unwrap_or("")
            );
        }
    }
    // The table and what is new go straight to the process's stderr (the test harness captures
    // `eprintln!` of a passing test); everything, the listed failures included, is kept beside the
    // other test artifacts for the before/after tables.
    let artifacts = common::repo().join("target/test-artifacts");
    let report = artifacts.join("bad-inputs.txt");
    let shown = format!(
        "{every}{table}{new_failing}{} listed in KNOWN_FAILING still fail (each with its command in {})\n",
        known.len() - fixed.len(),
        report.display()
    );
    use std::io::Write;
    let _ = std::io::stderr().write_all(shown.as_bytes());
    if std::fs::create_dir_all(&artifacts).is_ok() {
        let _ = std::fs::write(
            &report,
            format!(
                "{every}{table}{by_slot}{new_failing}\nlisted in KNOWN_FAILING:\n{listed_failing}"
            ),
        );
    }
    let stale: Vec<&&str> = known.iter().filter(|k| !ids.contains(**k)).collect();
    assert!(stale.is_empty(), "KNOWN_FAILING names cases the generator does not make: {stale:?}");
    assert!(
        unexpected.is_empty(),
        "{} case(s) fail and are not in KNOWN_FAILING:\n  {}",
        unexpected.len(),
        unexpected.join("\n  ")
    );
    assert!(
        fixed.is_empty(),
        "{} case(s) in KNOWN_FAILING pass now; remove them from the list:\n  {}",
        fixed.len(),
        fixed.join("\n  ")
    );
}
