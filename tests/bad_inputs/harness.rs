//! Running one generated case and judging what the binary did with it.
//!
//! A case is a *slot* (an input path reached through one command, e.g. the dataset through `validate`)
//! and a *mutation* (one way of making that input bad). It runs in a fresh copy of the world with its
//! own endpoint: a counting TCP proxy in front of the in-process mock endpoint, so any request the
//! command sends — a preflight `GET /models` as much as a chat request — is seen, and nothing can reach
//! the internet (`OPENAI_BASE_URL` points at the proxy too). The case directory is snapshotted before and
//! after (every path, its size, modification time and content hash), so a file written, rewritten or
//! removed is seen wherever it is. The process runs in its own process group and is killed with it at
//! the time limit, so nothing it started outlives it.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Prepares a case directory (after the world was copied in).
pub type Setup = Arc<dyn Fn(&Path) + Send + Sync>;

/// What a correct toolpick does with a case's input.
#[derive(Clone, Debug)]
pub enum Expect {
    /// Exit 2 with one stderr line holding every name (the file, `file:line`, the field or the flag),
    /// none of `not` on stderr (a wrong flag name, a secret echoed), nothing written, no request sent.
    Refused { names: Vec<String>, not: Vec<String> },
    /// Refused as above, or accepted exactly as its base is (exit 0): a byte-order mark, which a reader
    /// may strip or refuse, but must never misread.
    RefusedOrAccepted { names: Vec<String> },
    /// A damaged line that the format says is skipped: a stderr line names it and the command goes on
    /// (exit 0); with `refusal_ok`, refusing the whole input as [`Expect::Refused`] does is fine too.
    LineSkipped { names: Vec<String>, refusal_ok: bool },
    /// An importer meets a file it cannot read as records: the import goes on (exit 0) and
    /// `<out>/defects.csv` has a row for the file (`skipped` with a record count that is not 0, or, with
    /// `line`, any row giving that line) — never a silent loss.
    Defect { file: String, line: Option<usize> },
    /// An importer meets a file in another Unicode form (a byte-order mark, UTF-16): the import
    /// goes on as for the clean copy — no `skipped` row for the file as a whole, and the dataset
    /// and catalog written byte for byte as the base (its slot run without the mutation) wrote
    /// them. With `reported`, `defects.csv` says how the file was decoded (a `repaired` row for the
    /// whole file).
    LikeClean { file: String, reported: bool },
    /// A value that starts with `-` reaches its flag: the command takes it (exit 0, or serving at
    /// the time limit), or refuses it as [`Expect::Refused`] does naming one of `names` (the flag
    /// or the value) — never as clap's unknown argument (`unexpected argument '-1'`, which names no
    /// flag).
    ValueTaken { names: Vec<String> },
    /// Valid input (a case of "refused what is fine"): exit 0; never `ok` printed before a failure.
    Accepted,
}

pub struct Slot {
    /// The input path this slot reaches (a row of the summary table).
    pub path: &'static str,
    pub name: String,
    pub args: Vec<String>,
    pub stdin: Option<&'static str>,
    /// A valid input makes the command serve until it is stopped (`mock-endpoint`, `mcp serve --http`):
    /// being alive at the time limit is the base's success and a mutated case's "ignored".
    pub serves: bool,
    pub prepare: Option<Setup>,
    /// An import's output directory: its `defects.csv` and dataset are read after the run.
    pub import_out: Option<String>,
}

pub struct Mutation {
    pub name: String,
    pub setup: Option<Setup>,
    /// Replaces the slot's arguments when set.
    pub args: Option<Vec<String>>,
    /// Appended to the (slot's or replaced) arguments.
    pub extra: Vec<String>,
    pub env: Vec<(String, String)>,
    pub expect: Expect,
    /// Taking the bad input means serving until stopped (`--http` on a command that otherwise ends).
    pub serves: bool,
}

impl Mutation {
    pub fn new(name: impl Into<String>, expect: Expect) -> Mutation {
        Mutation {
            name: name.into(),
            setup: None,
            args: None,
            extra: vec![],
            env: vec![],
            expect,
            serves: false,
        }
    }
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> Mutation {
        self.args = Some(args.iter().map(|s| s.as_ref().to_string()).collect());
        self
    }
    pub fn extra<S: AsRef<str>>(mut self, args: &[S]) -> Mutation {
        self.extra.extend(args.iter().map(|s| s.as_ref().to_string()));
        self
    }
    pub fn env(mut self, key: &str, value: &str) -> Mutation {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// Exit 2 naming all of `names`.
pub fn refused<S: AsRef<str>>(names: &[S]) -> Expect {
    Expect::Refused { names: names.iter().map(|s| s.as_ref().to_string()).collect(), not: vec![] }
}

/// Exit 2 naming all of `names`, and none of `not` on stderr.
pub fn refused_without<S: AsRef<str>, T: AsRef<str>>(names: &[S], not: &[T]) -> Expect {
    Expect::Refused {
        names: names.iter().map(|s| s.as_ref().to_string()).collect(),
        not: not.iter().map(|s| s.as_ref().to_string()).collect(),
    }
}

pub struct Case {
    pub id: String,
    pub path: &'static str,
    pub slot: Arc<Slot>,
    pub mutation: Option<Mutation>,
}

impl Case {
    /// Taking the input means serving until stopped.
    pub fn serves(&self) -> bool {
        self.slot.serves || self.mutation.as_ref().is_some_and(|m| m.serves)
    }

    /// The command line: the slot's (or the mutation's own) arguments with the mutation's flags. A flag
    /// the arguments already hold gets the mutation's value in place, so a case never fails on a flag
    /// given twice instead of on its bad value.
    pub fn args(&self) -> Vec<String> {
        let m = self.mutation.as_ref();
        let mut args = m.and_then(|m| m.args.clone()).unwrap_or_else(|| self.slot.args.clone());
        let extra = m.map(|m| m.extra.clone()).unwrap_or_default();
        let mut i = 0;
        while i < extra.len() {
            let takes_value = extra[i].starts_with("--")
                && extra.get(i + 1).is_some_and(|v| !v.starts_with("--"));
            let present = args.iter().position(|a| *a == extra[i]);
            match (takes_value, present) {
                (true, Some(at)) if at + 1 < args.len() => args[at + 1] = extra[i + 1].clone(),
                (true, _) => args.extend([extra[i].clone(), extra[i + 1].clone()]),
                (false, _) => args.push(extra[i].clone()),
            }
            i += if takes_value { 2 } else { 1 };
        }
        args
    }
}

/// What the binary did.
pub struct Outcome {
    /// `None` when killed by a signal or at the time limit.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stderr: String,
    pub stdout: String,
    /// Paths created, changed or removed under the case directory.
    pub written: Vec<String>,
    /// Connections made to the case's endpoint.
    pub requests: u64,
    pub elapsed: Duration,
    pub args: Vec<String>,
    /// What `Expect::LikeClean` compares: what the import wrote.
    pub imported: Option<Imported>,
    /// For `Expect::Defect` / `LikeClean`: the rows of `defects.csv`.
    pub defects: Vec<BTreeMap<String, String>>,
}

/// What an import wrote: its tasks, and a digest of its dataset and catalog files.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub tasks: usize,
    pub digest: String,
}

/// How a case ended, judged against its expectation.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Ok,
    /// Something was written or a request sent before the error.
    Late(String),
    /// Exit 0: the bad input was taken (or a server started serving on it).
    Ignored(String),
    Panic(String),
    /// Wrong exit code, an error that does not name the input, a wrong name, a hang.
    Other(String),
}

impl Verdict {
    /// Its column in the summary table after `cases`: ok, late, ignored, panics, other.
    pub fn column(&self) -> usize {
        match self {
            Verdict::Ok => 0,
            Verdict::Late(_) => 1,
            Verdict::Ignored(_) => 2,
            Verdict::Panic(_) => 3,
            Verdict::Other(_) => 4,
        }
    }
    pub fn label(&self) -> String {
        match self {
            Verdict::Ok => "ok".into(),
            Verdict::Late(s) => format!("late: {s}"),
            Verdict::Ignored(s) => format!("ignored: {s}"),
            Verdict::Panic(s) => format!("panic: {s}"),
            Verdict::Other(s) => format!("other: {s}"),
        }
    }
}

/// The in-process mock endpoint and a runtime for the per-case counting proxies.
pub struct Endpoint {
    rt: tokio::runtime::Runtime,
    _mock: toolpick::mock::MockServer,
    target: SocketAddr,
}

/// A case's own endpoint: a counting proxy in front of the shared mock, stopped when dropped.
pub struct Proxy {
    pub url: String,
    count: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub fn requests(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Endpoint {
    pub fn start() -> Endpoint {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mock = rt
            .block_on(toolpick::mock::spawn("127.0.0.1:0".parse().unwrap(), Default::default()))
            .unwrap();
        let target = mock.addr;
        Endpoint { rt, _mock: mock, target }
    }

    /// A loopback port that counts every connection and forwards it to the mock.
    pub fn proxy(&self) -> Proxy {
        let target = self.target;
        self.rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/v1", listener.local_addr().unwrap());
            let count = Arc::new(AtomicU64::new(0));
            let seen = count.clone();
            let task = tokio::spawn(async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    seen.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(async move {
                        if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                }
            });
            Proxy { url, count, task }
        })
    }
}

#[derive(PartialEq)]
enum Entry {
    Dir,
    Link(PathBuf),
    File { len: u64, modified: Option<std::time::SystemTime>, digest: [u8; 32] },
}

fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.file_type().is_symlink() {
                out.insert(rel, Entry::Link(std::fs::read_link(&p).unwrap_or_default()));
            } else if meta.is_dir() {
                out.insert(rel, Entry::Dir);
                walk(root, &p, out);
            } else {
                let digest =
                    std::fs::read(&p).map(|b| Sha256::digest(&b).into()).unwrap_or([0; 32]);
                out.insert(
                    rel,
                    Entry::File { len: meta.len(), modified: meta.modified().ok(), digest },
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn changes(before: &BTreeMap<String, Entry>, after: &BTreeMap<String, Entry>) -> Vec<String> {
    let mut out: Vec<String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| if before.contains_key(k) { format!("{k} (changed)") } else { k.clone() })
        .collect();
    out.extend(before.keys().filter(|k| !after.contains_key(*k)).map(|k| format!("{k} (removed)")));
    out
}

fn fill(s: &str, dir: &Path, url: &str) -> String {
    s.replace(super::world::MOCK, url).replace(super::world::DIR, &dir.display().to_string())
}

/// Run `case` in `dir` (already holding the world) against `proxy`.
pub fn run(case: &Case, dir: &Path, logs: &Path, proxy: &Proxy, limit: Duration) -> Outcome {
    use std::os::unix::process::CommandExt;
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    if let Some(prepare) = &case.slot.prepare {
        prepare(dir);
    }
    if let Some(setup) = case.mutation.as_ref().and_then(|m| m.setup.as_ref()) {
        setup(dir);
    }
    // Experiment files name the endpoint: fill it in whatever the mutation wrote (bytes, so a file made
    // undecodable on purpose stays so).
    let exp = dir.join("exp.toml");
    if let Ok(bytes) = std::fs::read(&exp) {
        let needle = super::world::MOCK.as_bytes();
        if bytes.windows(needle.len()).any(|w| w == needle) {
            let mut out = Vec::with_capacity(bytes.len());
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i..].starts_with(needle) {
                    out.extend_from_slice(proxy.url.as_bytes());
                    i += needle.len();
                } else {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
            std::fs::write(&exp, out).unwrap();
        }
    }
    let args: Vec<String> = case.args().iter().map(|a| fill(a, dir, &proxy.url)).collect();
    let before = snapshot(dir);
    std::fs::create_dir_all(logs).unwrap();
    let (out_log, err_log) = (logs.join("stdout"), logs.join("stderr"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolpick"));
    cmd.args(&args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("TMPDIR", dir.join("tmp"))
        .env("LANG", "C.UTF-8")
        .env("OPENAI_BASE_URL", &proxy.url)
        .process_group(0)
        .stdout(std::fs::File::create(&out_log).unwrap())
        .stderr(std::fs::File::create(&err_log).unwrap())
        .stdin(if case.slot.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    for (k, v) in case.mutation.iter().flat_map(|m| m.env.iter()) {
        cmd.env(k, fill(v, dir, &proxy.url));
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("toolpick starts");
    if let Some(text) = case.slot.stdin {
        use std::io::Write;
        // A server that refuses its input may close stdin before reading it: not the case's failure.
        let _ = child.stdin.take().unwrap().write_all(text.as_bytes());
    }
    let pid = child.id() as i32;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            timed_out = true;
            // The whole group: whatever the command started goes with it.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(15));
    };
    // Anything left in the group (a server the command started and did not stop) is stopped too.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let elapsed = started.elapsed();
    let after = snapshot(dir);
    use std::os::unix::process::ExitStatusExt;
    let mut outcome = Outcome {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stderr: String::from_utf8_lossy(&std::fs::read(&err_log).unwrap_or_default()).into_owned(),
        stdout: String::from_utf8_lossy(&std::fs::read(&out_log).unwrap_or_default()).into_owned(),
        written: changes(&before, &after),
        requests: proxy.requests(),
        elapsed,
        args,
        imported: None,
        defects: vec![],
    };
    if let Some(out) = &case.slot.import_out {
        read_import(&dir.join(out), &mut outcome);
    }
    outcome
}

fn read_import(out: &Path, outcome: &mut Outcome) {
    if let Ok(mut r) = csv::Reader::from_path(out.join("defects.csv")) {
        let headers = r.headers().unwrap().clone();
        outcome.defects = r
            .records()
            .flatten()
            .map(|rec| {
                headers
                    .iter()
                    .zip(rec.iter())
                    .map(|(h, v)| (h.to_string(), v.to_string()))
                    .collect()
            })
            .collect();
    }
    let dataset = std::fs::read_dir(out)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"));
    outcome.imported = dataset.map(|p| {
        let text = std::fs::read(&p).unwrap_or_default();
        let mut hash = Sha256::new();
        hash.update(&text);
        let mut catalog: Vec<PathBuf> = std::fs::read_dir(out.join("catalog"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        catalog.sort();
        for f in catalog {
            hash.update(f.file_name().unwrap().as_encoded_bytes());
            hash.update(std::fs::read(&f).unwrap_or_default());
        }
        let tasks = String::from_utf8_lossy(&text).lines().filter(|l| !l.trim().is_empty()).count();
        let digest: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Imported { tasks, digest }
    });
}

/// The subcommand a command line runs (`run`, `mcp serve`, `cache stats`).
pub fn command_of(args: &[String]) -> Vec<String> {
    let n = if matches!(args.first().map(String::as_str), Some("mcp" | "cache")) { 2 } else { 1 };
    args.iter().take(n).cloned().collect()
}

/// `--flag` tokens of `text`.
fn flag_tokens(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let tail = &rest[i + 2..];
        let len = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(tail.len());
        if tail.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push(format!("--{}", &tail[..len]));
        }
        rest = &tail[len..];
    }
    out
}

/// The flags a subcommand has, as its `--help` lists them.
pub fn flags_of(command: &[String]) -> BTreeSet<String> {
    let o =
        Command::new(env!("CARGO_BIN_EXE_toolpick")).args(command).arg("--help").output().unwrap();
    assert!(o.status.success(), "toolpick {command:?} --help");
    flag_tokens(&String::from_utf8_lossy(&o.stdout)).into_iter().collect()
}

/// Flags an error line names that `command` does not have: a message pointing at a flag the user
/// cannot have given (`--tasks` on `mcp collect`). A suggestion to run another command (a
/// `` `toolpick …` `` span) is not an attribution.
fn foreign_flags(stderr: &str, flags: &BTreeSet<String>) -> Vec<String> {
    let mut out = vec![];
    for line in stderr.lines().filter(|l| l.starts_with("error:")) {
        let mut text = line.to_string();
        while let Some(i) = text.find("`toolpick ") {
            let end = text[i + 1..].find('`').map(|j| i + 2 + j).unwrap_or(text.len());
            text.replace_range(i..end, "");
        }
        out.extend(flag_tokens(&text).into_iter().filter(|f| !flags.contains(f)));
    }
    out
}

/// The stderr line holding every name (a name `A|B` is held by a line holding either), if any.
fn named<'a>(stderr: &'a str, names: &[String]) -> Option<&'a str> {
    stderr.lines().find(|line| names.iter().all(|n| n.split('|').any(|alt| line.contains(alt))))
}

fn first_line(stderr: &str) -> String {
    let line = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.chars().take(200).collect()
}

/// Judge a mutated case. `base` is what the slot's base imported (for `LikeClean`); `flags` are the
/// flags of the case's command.
pub fn judge(
    case: &Case,
    o: &Outcome,
    base: Option<&Imported>,
    flags: &BTreeSet<String>,
) -> Verdict {
    if o.signal.is_some() && !o.timed_out
        || o.code == Some(101)
        || o.code == Some(134)
        || o.stderr.contains("panicked")
    {
        return Verdict::Panic(format!(
            "exit {:?} signal {:?}: {}",
            o.code,
            o.signal,
            o.stderr
                .lines()
                .find(|l| l.contains("panicked") || l.contains("error"))
                .unwrap_or("")
                .chars()
                .take(200)
                .collect::<String>()
        ));
    }
    let expect = &case.mutation.as_ref().expect("a mutated case").expect;
    if o.timed_out && case.serves() && matches!(expect, Expect::ValueTaken { .. }) {
        return Verdict::Ok;
    }
    if o.timed_out {
        return if case.serves() {
            Verdict::Ignored(format!("still serving after {:.0?}", o.elapsed))
        } else {
            Verdict::Other(format!("no exit within {:.0?}", o.elapsed))
        };
    }
    let late = || {
        let mut what = vec![];
        if o.requests > 0 {
            what.push(format!("{} request(s) sent", o.requests));
        }
        if !o.written.is_empty() {
            what.push(format!(
                "wrote {}",
                o.written.iter().take(4).cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        (!what.is_empty()).then(|| what.join("; "))
    };
    let refused = |names: &[String], not: &[String]| -> Verdict {
        match o.code {
            Some(0) => Verdict::Ignored(format!(
                "exit 0{}",
                late().map(|l| format!(" ({l})")).unwrap_or_default()
            )),
            Some(code) => {
                if let Some(l) = late() {
                    return Verdict::Late(format!("exit {code} after: {l}"));
                }
                if code != 2 {
                    return Verdict::Other(format!("exit {code}: {}", first_line(&o.stderr)));
                }
                if o.stdout.lines().any(|l| l.starts_with("ok")) {
                    return Verdict::Other(format!(
                        "prints `ok` and exits 2: {}",
                        first_line(&o.stderr)
                    ));
                }
                if let Some(flag) = foreign_flags(&o.stderr, flags).first() {
                    return Verdict::Other(format!(
                        "names `{flag}`, which `toolpick {}` does not have: {}",
                        command_of(&o.args).join(" "),
                        first_line(&o.stderr)
                    ));
                }
                if let Some(bad) = not
                    .iter()
                    .find(|n| o.stderr.contains(n.as_str()) || o.stdout.contains(n.as_str()))
                {
                    return Verdict::Other(format!(
                        "stderr holds `{bad}`: {}",
                        first_line(&o.stderr)
                    ));
                }
                match named(&o.stderr, names) {
                    Some(_) => Verdict::Ok,
                    None => Verdict::Other(format!(
                        "no line names {names:?}: {}",
                        first_line(&o.stderr)
                    )),
                }
            }
            None => Verdict::Other("no exit code".into()),
        }
    };
    match expect {
        Expect::Refused { names, not } => refused(names, not),
        Expect::RefusedOrAccepted { names } => match o.code {
            Some(0) => Verdict::Ok,
            _ => refused(names, &[]),
        },
        Expect::LineSkipped { names, refusal_ok } => match o.code {
            Some(0) if named(&o.stderr, names).is_some() => Verdict::Ok,
            Some(0) => Verdict::Ignored(format!("exit 0 and no stderr line names {names:?}")),
            _ if *refusal_ok => refused(names, &[]),
            Some(code) => Verdict::Other(format!(
                "exit {code}: the whole input refused for one damaged line: {}",
                first_line(&o.stderr)
            )),
            None => Verdict::Other("no exit code".into()),
        },
        Expect::Defect { file, line, .. } => {
            if o.code != Some(0) {
                return Verdict::Other(format!("exit {:?}: {}", o.code, first_line(&o.stderr)));
            }
            let rows: Vec<_> = o
                .defects
                .iter()
                .filter(|r| r.get("file").is_some_and(|f| f.ends_with(file.as_str())))
                .collect();
            let ok = match line {
                Some(n) => rows.iter().any(|r| r.get("line").is_some_and(|l| *l == n.to_string())),
                None => rows.iter().any(|r| {
                    r.get("action").is_some_and(|a| a == "skipped")
                        && r.get("affected").is_some_and(|a| a != "0")
                }),
            };
            if ok {
                Verdict::Ok
            } else {
                let shown: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
                Verdict::Ignored(format!(
                    "defects.csv has no {} row for {file}: {}",
                    line.map(|n| format!("line-{n}")).unwrap_or("skipped".into()),
                    if shown.is_empty() { "none".into() } else { shown.join("; ") }
                ))
            }
        }
        Expect::ValueTaken { names } => match o.code {
            Some(0) => Verdict::Ok,
            _ => refused(names, &["unexpected argument".to_string()]),
        },
        Expect::Accepted => match o.code {
            Some(0) => Verdict::Ok,
            Some(code) if o.stdout.lines().any(|l| l.starts_with("ok")) => {
                Verdict::Other(format!("prints `ok` and exits {code}: {}", first_line(&o.stderr)))
            }
            Some(code) => Verdict::Other(format!(
                "valid input refused, exit {code}: {}",
                first_line(&o.stderr)
            )),
            None => Verdict::Other("no exit code".into()),
        },
        Expect::LikeClean { file, reported } => {
            if o.code != Some(0) {
                return Verdict::Other(format!("exit {:?}: {}", o.code, first_line(&o.stderr)));
            }
            // A row about the whole file has no record or line of its own.
            let whole = |action: &str| {
                o.defects.iter().any(|r| {
                    r.get("file").is_some_and(|f| f.ends_with(file.as_str()))
                        && r.get("action").is_some_and(|a| a == action)
                        && r.get("record").is_none_or(String::is_empty)
                })
            };
            let tasks = o.imported.as_ref().map_or(0, |i| i.tasks);
            if whole("skipped") {
                Verdict::Ignored(format!(
                    "{file} skipped as a whole ({tasks} tasks written, clean copy: {:?})",
                    base.map(|b| b.tasks)
                ))
            } else if o.imported.as_ref() != base {
                Verdict::Ignored(format!(
                    "{tasks} tasks written (clean copy: {:?}); the dataset or catalog differs from the clean copy's",
                    base.map(|b| b.tasks)
                ))
            } else if *reported && !whole("repaired") {
                Verdict::Ignored(format!("{file} decoded without a `repaired` row saying how"))
            } else {
                Verdict::Ok
            }
        }
    }
}

/// A base (the slot without a mutation) must be valid input: exit 0 without an error line, or, for a
/// server, still serving at the time limit.
pub fn base_problem(slot: &Slot, o: &Outcome) -> Option<String> {
    let fine = if slot.serves { o.timed_out } else { o.code == Some(0) && !o.timed_out };
    (!fine).then(|| {
        format!(
            "exit {:?} signal {:?} timed out {}: {}",
            o.code,
            o.signal,
            o.timed_out,
            o.stderr.chars().take(600).collect::<String>()
        )
    })
}
