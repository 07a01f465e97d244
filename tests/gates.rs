//! Gates never pass by checking nothing, and name cells the way `--gate-cells` selects them.
//!
//! Two small runs (two layouts × two backends: four cells each) are compared with every gate
//! (`--min-pass-rate`, `--min-selection-accuracy`, `--max-drop`) in both scopes, under generated
//! `--gate-cells` patterns: near misses of every real cell key (the key without its catalog, as drop
//! gates used to print it; one segment misspelt; a trailing `/`), which must be an input error (exit 2)
//! naming the flag and the pattern and listing the cells, in `compare`, `report` and `run` (before
//! anything runs); and patterns that select cells, under which every printed gate line names a full cell
//! key the pattern selects, so a key copied from a gate line selects exactly that cell.

mod common;
use common::*;
use std::path::Path;

const GATES: [(&str, &str); 3] =
    [("--min-pass-rate", "0"), ("--min-selection-accuracy", "0"), ("--max-drop", "100")];

fn small_run(dir: &Path, out: &Path, id: &str, seed: &str) {
    let o = toolpick(
        &argv_with(
            "run --catalog catalog --dataset tasks.jsonl --variants good \
             --layouts flat,progressive --backends lexical,random --seed {} --out {} \
             --run-id {} --quiet",
            &[seed, out.to_str().unwrap(), id],
        ),
        dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

struct Runs {
    tmp: tempfile::TempDir,
    /// The cell keys of run B, from its summary.csv (the cells that exist).
    keys: Vec<String>,
}

impl Runs {
    fn new() -> Runs {
        let tmp = tempfile::tempdir().unwrap();
        write_small_catalog(&tmp.path().join("catalog"));
        std::fs::write(tmp.path().join("tasks.jsonl"), SMALL_DATASET).unwrap();
        let out = tmp.path().join("out");
        small_run(tmp.path(), &out, "a", "1");
        small_run(tmp.path(), &out, "b", "2");
        let fields = ["dataset", "catalog", "variant", "layout", "backend"];
        let keys: Vec<String> = summary_rows(&out.join("b"))
            .iter()
            .map(|row| fields.map(|f| row[f].as_str()).join("/"))
            .collect();
        assert_eq!(keys.len(), 4, "{keys:?}");
        Runs { tmp, keys }
    }
    fn dir(&self, id: &str) -> String {
        self.tmp.path().join("out").join(id).to_str().unwrap().to_string()
    }
}

/// Patterns that look like cells of the run and select none.
fn near_misses(keys: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for k in keys {
        let parts: Vec<&str> = k.split('/').collect();
        // Without the catalog: what the drop gate used to print.
        out.push([&parts[..1], &parts[2..]].concat().join("/"));
        for i in 0..parts.len() {
            let mut p = parts.clone();
            let typo = format!("{}x", parts[i]);
            p[i] = &typo;
            out.push(p.join("/"));
        }
        out.push(format!("{k}/"));
    }
    out.push("nosuch*".into());
    out.push("*/gpt-4o".into());
    out
}

fn gate_args<'a>(flag: &'a str, value: &'a str, scope: &'a str, pattern: &'a str) -> Vec<&'a str> {
    vec![flag, value, "--gate-scope", scope, "--gate-cells", pattern]
}

fn assert_refused(o: &std::process::Output, pattern: &str, keys: &[String], what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: stdout {}\nstderr {err}", stdout(o));
    assert!(err.contains("--gate-cells") && err.contains(&format!("`{pattern}`")), "{what}: {err}");
    for k in keys {
        assert!(err.contains(k.as_str()), "{what}: the cells are listed ({k}): {err}");
    }
    assert!(!stdout(o).contains("gate "), "{what}: no gate line printed: {}", stdout(o));
}

#[test]
fn a_pattern_that_selects_no_cell_is_an_input_error_for_every_gate_scope_and_command() {
    let runs = Runs::new();
    let (a, b) = (runs.dir("a"), runs.dir("b"));
    let misses = near_misses(&runs.keys);
    for (i, pattern) in misses.iter().enumerate() {
        assert!(
            !runs.keys.iter().any(|k| toolpick::gate::glob(pattern, k)),
            "{pattern} is a near miss"
        );
        for (flag, value) in GATES {
            // Both scopes for the first key's near misses and the last two; the cell scope for the rest.
            let scopes: &[&str] =
                if i < 7 || i + 2 >= misses.len() { &["cell", "overall"] } else { &["cell"] };
            for &scope in scopes {
                let mut args = vec!["compare", a.as_str(), b.as_str()];
                args.extend(gate_args(flag, value, scope, pattern));
                assert_refused(
                    &toolpick(&args, runs.tmp.path()),
                    pattern,
                    &runs.keys,
                    &format!("compare {flag} {scope} {pattern}"),
                );
            }
        }
    }
    // report and run: the first key's near misses, every gate.
    for pattern in misses.iter().take(7) {
        for (flag, value) in GATES {
            let mut args = vec!["report", b.as_str(), "--baseline", a.as_str()];
            args.extend(gate_args(flag, value, "cell", pattern));
            assert_refused(
                &toolpick(&args, runs.tmp.path()),
                pattern,
                &runs.keys,
                &format!("report {flag} {pattern}"),
            );
            let fresh = runs.tmp.path().join("fresh");
            let fresh_s = fresh.to_str().unwrap().to_string();
            let mut args = argv_with(
                "run --catalog catalog --dataset tasks.jsonl --variants good \
                 --layouts flat,progressive --backends lexical,random --seed 2 --out {} \
                 --run-id c --quiet --baseline {}",
                &[fresh_s.as_str(), a.as_str()],
            );
            args.extend(gate_args(flag, value, "cell", pattern));
            assert_refused(
                &toolpick(&args, runs.tmp.path()),
                pattern,
                &runs.keys,
                &format!("run {flag} {pattern}"),
            );
            assert!(!fresh.exists(), "run {flag} {pattern}: refused before anything was written");
        }
    }
}

/// The subjects of the printed gate lines (`gate FLAG SUBJECT: pass — …`), with a drop gate's
/// ` (metric)` taken off: (flag, cell key).
fn gate_subjects(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.strip_prefix("gate "))
        .map(|l| {
            let (flag, rest) = l.split_once(' ').unwrap();
            let subject = rest.split(": ").next().unwrap();
            let subject = subject
                .strip_suffix(" (pass@1)")
                .or_else(|| subject.strip_suffix(" (selection accuracy)"))
                .unwrap_or(subject);
            (flag.to_string(), subject.to_string())
        })
        .collect()
}

#[test]
fn every_gate_line_names_a_full_cell_key_that_selects_that_cell() {
    let runs = Runs::new();
    let (a, b) = (runs.dir("a"), runs.dir("b"));
    let mut patterns: Vec<String> = runs.keys.clone();
    patterns.extend(["*", "*/lexical", "*/flat/*", "*catalog*"].map(String::from));
    for pattern in &patterns {
        let selected: Vec<&String> =
            runs.keys.iter().filter(|k| toolpick::gate::glob(pattern, k)).collect();
        assert!(!selected.is_empty(), "{pattern}");
        let mut args = vec!["compare", a.as_str(), b.as_str(), "--gate-cells", pattern.as_str()];
        for (flag, value) in GATES {
            args.extend([flag, value]);
        }
        let o = toolpick(&args, runs.tmp.path());
        assert!(o.status.success(), "{pattern}: {}", stderr(&o));
        let subjects = gate_subjects(&stdout(&o));
        for (flag, _) in GATES {
            let of_flag: std::collections::BTreeSet<&str> =
                subjects.iter().filter(|(f, _)| f == flag).map(|(_, s)| s.as_str()).collect();
            // Each selected cell gets its lines, named by its full key; no other cell does.
            assert_eq!(
                of_flag,
                selected.iter().map(|k| k.as_str()).collect(),
                "{pattern} {flag}: {}",
                stdout(&o)
            );
        }
    }
    // A subject copied from a --max-drop line (the default scope, a single cell) selects that cell alone.
    let o = toolpick(&["compare", a.as_str(), b.as_str(), "--max-drop", "100"], runs.tmp.path());
    let copied = gate_subjects(&stdout(&o))
        .into_iter()
        .find(|(f, _)| f == "--max-drop")
        .map(|(_, s)| s)
        .unwrap();
    let o = toolpick(
        &["compare", a.as_str(), b.as_str(), "--max-drop", "100", "--gate-cells", &copied],
        runs.tmp.path(),
    );
    assert!(o.status.success(), "{copied}: {}", stderr(&o));
    assert!(
        gate_subjects(&stdout(&o)).iter().all(|(_, s)| *s == copied)
            && !gate_subjects(&stdout(&o)).is_empty(),
        "{}",
        stdout(&o)
    );
}

/// The `--max-drop` lines of a comparison: (subject, what was measured: "pass@1 A → B % over N tasks";
/// the p-values are left out, since the Holm adjustment differs between a cell and a pooled row).
fn drop_lines(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.strip_prefix("gate --max-drop "))
        .map(|l| {
            let (subject, detail) = l.split_once(": ").unwrap();
            let detail = detail.split_once(" — ").map(|(_, d)| d).unwrap_or(detail);
            let tasks = detail
                .rsplit(", ")
                .find_map(|part| {
                    part.strip_suffix(" tasks)").or_else(|| {
                        part.split(" tasks)")
                            .next()
                            .filter(|t| t.chars().all(|c| c.is_ascii_digit()))
                    })
                })
                .unwrap_or_default();
            (
                subject.to_string(),
                format!("{} over {tasks} tasks", detail.split(" (").next().unwrap()),
            )
        })
        .collect()
}

#[test]
fn an_overall_drop_pools_the_gated_cells_only() {
    // For each cell alone, and for every pair of cells, the overall drop under --gate-cells is the drop
    // of exactly those cells pooled: alone, the cell's own figures; a pair, figures that lie between
    // (or at) the two cells' own. Before, the pattern was ignored and every matched cell was pooled.
    let runs = Runs::new();
    let (a, b) = (runs.dir("a"), runs.dir("b"));
    // (A, B, tasks) of "pass@1 A → B % over N tasks".
    let figures = |detail: &str| -> (f64, f64, f64) {
        let nums: Vec<f64> = detail
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|t| !t.is_empty() && *t != ".")
            .map(|t| t.parse().unwrap())
            .collect();
        (nums[nums.len() - 3], nums[nums.len() - 2], nums[nums.len() - 1])
    };
    let mut own = std::collections::BTreeMap::new();
    for key in &runs.keys {
        let cell = toolpick(
            &["compare", a.as_str(), b.as_str(), "--max-drop", "100", "--gate-cells", key],
            runs.tmp.path(),
        );
        let overall = toolpick(
            &argv_with(
                "compare {} {} --max-drop 100 --gate-cells {} --gate-scope overall",
                &[a.as_str(), b.as_str(), key],
            ),
            runs.tmp.path(),
        );
        assert!(
            cell.status.success() && overall.status.success(),
            "{}{}",
            stderr(&cell),
            stderr(&overall)
        );
        let (cell, overall) = (drop_lines(&stdout(&cell)), drop_lines(&stdout(&overall)));
        assert_eq!(cell.len(), 2, "{cell:?}");
        assert_eq!(
            overall.iter().map(|(_, d)| d.clone()).collect::<Vec<_>>(),
            cell.iter().map(|(_, d)| d.clone()).collect::<Vec<_>>(),
            "{key}"
        );
        assert!(overall.iter().all(|(s, _)| s.starts_with("overall")), "{overall:?}");
        own.insert(key.clone(), figures(&cell[0].1));
    }
    for (i, x) in runs.keys.iter().enumerate() {
        for y in &runs.keys[i + 1..] {
            // Both cells share everything but one segment: a pattern with `*` there selects the two.
            let (xs, ys): (Vec<&str>, Vec<&str>) = (x.split('/').collect(), y.split('/').collect());
            let differing: Vec<usize> = (0..xs.len()).filter(|&j| xs[j] != ys[j]).collect();
            if differing.len() != 1 {
                continue;
            }
            let mut p = xs.clone();
            p[differing[0]] = "*";
            let pattern = p.join("/");
            let o = toolpick(
                &argv_with(
                    "compare {} {} --max-drop 100 --gate-cells {} --gate-scope overall",
                    &[a.as_str(), b.as_str(), &pattern],
                ),
                runs.tmp.path(),
            );
            let (pa, pb, pn) = figures(&drop_lines(&stdout(&o))[0].1);
            let ((xa, xb, xn), (ya, yb, yn)) = (own[x], own[y]);
            assert_eq!(pn, xn + yn, "{pattern}: the two cells' tasks");
            assert!(
                xa.min(ya) - 1e-9 <= pa
                    && pa <= xa.max(ya) + 1e-9
                    && xb.min(yb) - 1e-9 <= pb
                    && pb <= xb.max(yb) + 1e-9,
                "{pattern}: {pa} → {pb} vs {x} {xa}→{xb}, {y} {ya}→{yb}"
            );
        }
    }
}
