//! Whole-file damage, generated: every importer × every way a record file can be unreadable as a
//! whole (see the crate documentation). Helpers (copying, importing, reading `defects.csv`) are the
//! parent's.

use super::*;

/// How a task-record file is written: one JSON array, or JSON Lines.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Array,
    Lines,
}

/// A benchmark as shipped: its import format, its root and its task-record files (path relative to
/// the root, shape, records counted here from the file itself).
struct Source {
    format: &'static str,
    root: PathBuf,
    files: Vec<(String, Shape, usize)>,
}

impl Source {
    fn total(&self) -> usize {
        self.files.iter().map(|f| f.2).sum()
    }
}

fn records_in(p: &Path, shape: Shape) -> usize {
    match shape {
        Shape::Array => read_array(p).len(),
        Shape::Lines => line_records(p),
    }
}

/// The task-record files of `format` under `root`'s `dirs` (MCPToolBench++: one level of category
/// directories below them).
fn source(format: &'static str, root: PathBuf, dirs: &[&str], shape: Shape) -> Source {
    let mut files = Vec::new();
    for dir in dirs {
        let mut found: Vec<PathBuf> =
            std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        found.sort();
        for p in found {
            if p.is_dir() && format == "mcptoolbench" {
                let mut inner: Vec<PathBuf> =
                    std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()).collect();
                inner.sort();
                for f in inner {
                    files.push((
                        f.strip_prefix(&root).unwrap().display().to_string(),
                        shape,
                        records_in(&f, shape),
                    ));
                }
            } else if p.is_file() {
                let name = p.file_name().unwrap().to_str().unwrap();
                let wanted = match format {
                    "bfcl" => name.starts_with("BFCL_"),
                    "safetoolbench" => name.starts_with("query_"),
                    "bench-catalog" => name == "queries.jsonl",
                    _ => name.ends_with(".json"),
                };
                if wanted {
                    files.push((
                        p.strip_prefix(&root).unwrap().display().to_string(),
                        shape,
                        records_in(&p, shape),
                    ));
                }
            }
        }
    }
    Source { format, root, files }
}

/// A small bench-catalog (the generator's format) written into `dir`: 6 tools, 12 queries.
fn write_bench_catalog(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let tools: Vec<String> = (1..=6)
        .map(|i| json!({"id": i, "name": format!("tool number {i}"), "category": format!("Cat{}", i % 2), "description": format!("Does thing {i}."), "params": [{"name": "city", "type": "string"}]}).to_string())
        .collect();
    std::fs::write(dir.join("catalog.jsonl"), tools.join("\n") + "\n").unwrap();
    let queries: Vec<String> = (1..=12).map(|i| json!({"id": i, "query": format!("please do thing {} for me", i % 6 + 1), "target_id": i % 6 + 1}).to_string()).collect();
    std::fs::write(dir.join("queries.jsonl"), queries.join("\n") + "\n").unwrap();
}

/// Flags for an import: SafeToolBench keeps every record (its quality filter is not the damage).
fn extra(format: &str) -> &'static [&'static str] {
    if format == "safetoolbench" { &["--min-quality", "0"] } else { &[] }
}

/// Whole-file damage classes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Damage {
    Utf16 { big_endian: bool, bom: bool },
    Utf8Bom,
    BadByteAtLine,
    WrongShape,
    Directory,
    NotText,
    MissingQuestionFile,
}

/// Apply `damage` to the file at `path`; returns the line the damage is on, when it has one.
fn apply(damage: Damage, path: &Path, shape: Shape) -> Option<usize> {
    let text = std::fs::read_to_string(path).unwrap();
    match damage {
        Damage::Utf16 { big_endian, bom } => {
            let mut out = Vec::new();
            if bom {
                out.extend(if big_endian { [0xFE, 0xFF] } else { [0xFF, 0xFE] });
            }
            for u in text.encode_utf16() {
                out.extend(if big_endian { u.to_be_bytes() } else { u.to_le_bytes() });
            }
            std::fs::write(path, out).unwrap();
        }
        Damage::Utf8Bom => {
            std::fs::write(path, [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat()).unwrap()
        }
        Damage::BadByteAtLine => {
            // Inside the first string value on the third line that has one (a record survives it).
            let mut lines: Vec<Vec<u8>> = text.split('\n').map(|l| l.as_bytes().to_vec()).collect();
            let string_start = |l: &[u8]| {
                l.windows(3)
                    .position(|w| w == b": \"")
                    .or_else(|| l.windows(3).position(|w| w == b"\":\""))
                    .map(|p| p + 3)
            };
            let (i, at) = lines
                .iter()
                .enumerate()
                .filter_map(|(i, l)| string_start(l).map(|p| (i, p)))
                .nth(2)
                .unwrap();
            lines[i].insert(at, 0xFF);
            std::fs::write(path, lines.join(&b'\n')).unwrap();
            return Some(i + 1);
        }
        Damage::WrongShape => {
            let wrapped = match shape {
                Shape::Array => format!("{{\"data\": {text}}}"),
                Shape::Lines => format!(
                    "[{}]",
                    text.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(",\n")
                ),
            };
            std::fs::write(path, wrapped).unwrap();
        }
        Damage::Directory => {
            std::fs::remove_file(path).unwrap();
            std::fs::create_dir(path).unwrap();
        }
        Damage::NotText => {
            std::fs::write(path, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe\x00\x01")
                .unwrap()
        }
        Damage::MissingQuestionFile => std::fs::remove_file(path).unwrap(),
    }
    None
}

/// The damaged file: as the importer names it, the records it held, the line the damage is on.
struct Target {
    rel: String,
    held: usize,
    line: Option<usize>,
}

/// Import the damaged copy in `dir` and check what `damage` to `target` must give; `reference` is the
/// pristine import's ids.
fn check(
    s: &Source,
    dir: &Path,
    base: &Path,
    damage: Damage,
    target: &Target,
    reference: &HashSet<String>,
) {
    let (rel, held, line) = (target.rel.as_str(), target.held, target.line);
    if s.format == "bench-catalog" && damage == Damage::Directory {
        // Its one query file is required: the import is refused, naming it.
        let o = toolpick(
            &[
                "import",
                s.format,
                dir.to_str().unwrap(),
                "-o",
                base.join("refused").to_str().unwrap(),
            ],
            &repo(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("queries.jsonl: is a directory"), "{}", stderr(&o));
        return;
    }
    let o = import(s.format, dir, extra(s.format));
    let rows = o.at(rel, None);
    let ids: HashSet<String> = o.ids.iter().cloned().collect();
    match damage {
        Damage::Utf16 { big_endian, bom } => {
            let enc = format!(
                "the file is UTF-16 {} {} a byte-order mark, not UTF-8",
                if big_endian { "BE" } else { "LE" },
                if bom { "with" } else { "without" }
            );
            assert!(
                rows.len() == 1
                    && rows[0]["action"] == "repaired"
                    && rows[0]["reason"].starts_with(&enc),
                "{rows:?}"
            );
            assert_eq!(&ids, reference, "the records read are the pristine ones");
            o.check_totals(s.format, s.total());
        }
        Damage::Utf8Bom => {
            assert!(rows.is_empty(), "a byte-order mark needs no row: {rows:?}");
            assert_eq!(&ids, reference);
            o.check_totals(s.format, s.total());
        }
        Damage::BadByteAtLine => {
            let row = o.one(rel, None, "repaired");
            assert_eq!(row["line"], line.unwrap().to_string(), "{row:?}");
            assert!(row["reason"].contains(&format!("(line {})", line.unwrap())), "{row:?}");
            o.check_totals(s.format, s.total());
        }
        Damage::WrongShape => {
            let row = o.one(rel, None, "skipped");
            assert_eq!(row["affected"], held.to_string(), "{row:?}");
            assert!(row["reason"].contains(&format!("{held} records not imported")), "{row:?}");
            assert!(ids.is_subset(reference));
            o.check_totals(s.format, s.total());
        }
        Damage::Directory => {
            let row = o.one(rel, None, "skipped");
            assert!(
                row["reason"].starts_with("is a directory") && row["affected"] == "0",
                "{row:?}"
            );
            o.check_totals(s.format, s.total() - held);
        }
        Damage::NotText => {
            let row = o.one(rel, None, "skipped");
            assert!(row["reason"].starts_with("the file is not text"), "{row:?}");
            if s.format == "bfcl" {
                // Counted by its answers.
                assert_eq!(row["affected"], held.to_string(), "{row:?}");
                o.check_totals(s.format, s.total());
            } else {
                assert_eq!(row["affected"], "unknown", "{row:?}");
                assert!(
                    o.stdout.contains("and the records of 1 file(s) that could not be counted"),
                    "{}",
                    o.stdout
                );
                o.check_totals(s.format, s.total() - held);
            }
        }
        Damage::MissingQuestionFile => {
            let row = o.one(rel, None, "skipped");
            assert!(
                row["reason"].starts_with("the question file is missing")
                    && row["affected"] == held.to_string(),
                "{row:?}"
            );
            o.check_totals(s.format, s.total());
        }
    }
}

/// Every importer × every whole-file damage: the damaged file gets one row saying what it is (with the
/// line, the encoding, or the records it held); what can be decoded is imported as from the pristine
/// copy; imported + skipped still equals the records in the files, and the summary counts them.
#[test]
fn every_importer_survives_every_whole_file_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let bench = tmp.path().join("bench-src");
    write_bench_catalog(&bench);
    let sources = vec![
        source("bfcl", shared("bfcl"), &["."], Shape::Lines),
        source("mcptoolbench", shared("mcptoolbench"), &["data", "demo"], Shape::Array),
        source("safetoolbench", shared("safetoolbench"), &["."], Shape::Array),
        source(
            "stabletoolbench",
            shared("stabletoolbench"),
            &["solvable_queries/test_instruction"],
            Shape::Array,
        ),
        source("bench-catalog", bench, &["."], Shape::Lines),
    ];
    let mut damages = vec![
        Damage::Utf8Bom,
        Damage::BadByteAtLine,
        Damage::WrongShape,
        Damage::Directory,
        Damage::NotText,
        Damage::MissingQuestionFile,
    ];
    for big_endian in [false, true] {
        for bom in [false, true] {
            damages.push(Damage::Utf16 { big_endian, bom });
        }
    }
    let mut cases = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        assert!(s.files.len() >= 2 || s.format == "bench-catalog", "{}: {:?}", s.format, s.files);
        for &d in &damages {
            if d == Damage::MissingQuestionFile && s.format != "bfcl" {
                continue;
            }
            cases.push((si, d));
        }
    }
    let failures = std::sync::Mutex::new(Vec::new());
    let sources = &sources;
    std::thread::scope(|scope| {
        for (w, chunk) in cases.chunks(cases.len().div_ceil(3)).enumerate() {
            let failures = &failures;
            let base = tmp.path().join(format!("w{w}"));
            scope.spawn(move || {
                // The pristine import of each source, for reference.
                let mut pristine: BTreeMap<&str, HashSet<String>> = BTreeMap::new();
                for (n, (si, damage)) in chunk.iter().enumerate() {
                    let s = &sources[*si];
                    let reference = pristine.entry(s.format).or_insert_with(|| {
                        let dir = base.join(format!("pristine-{}", s.format)).join("src");
                        copy_dir(&s.root, &dir);
                        let o = import(s.format, &dir, extra(s.format));
                        o.check_totals(s.format, s.total());
                        o.ids.iter().cloned().collect()
                    });
                    let dir = base.join(format!("case{n}")).join("src");
                    copy_dir(&s.root, &dir);
                    // A file with records (BFCL: one with answers, so its records can be counted by them).
                    let (rel, shape, held) = s
                        .files
                        .iter()
                        .find(|f| f.2 >= 3 && (s.format != "bfcl" || f.0.contains("simple_python")))
                        .unwrap()
                        .clone();
                    let line = apply(*damage, &dir.join(&rel), shape);
                    // How the importer names the file in its rows: MCPToolBench++ by its path, the others by name.
                    let rel = if s.format == "mcptoolbench" {
                        rel
                    } else {
                        Path::new(&rel).file_name().unwrap().to_str().unwrap().to_string()
                    };
                    let target = Target { rel: rel.clone(), held, line };
                    let outcome = std::panic::catch_unwind(|| {
                        check(s, &dir, &base, *damage, &target, reference)
                    });
                    if let Err(e) = outcome {
                        let msg = e
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{} {damage:?} on {rel}: {msg}", s.format));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
