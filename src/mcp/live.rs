//! Live execution's parts that know MCP and the sandbox, not the run: how an imported catalog says its
//! server is started ([`LiveSpec`]), the per-trial [`Sandbox`], the safety [`Policy`] (with the
//! limits a live experiment sets: it is the `[live]` section of an experiment file), and the
//! final-state checks (the rewriting that keeps a trial's results independent of where its sandbox is
//! lives in `normalize`). `run::live` puts them together per trial.
//!
//! **Placeholders.** An imported catalog's command line and environment templates may name
//! `{sandbox}` (the trial's sandbox directory) and `{servers}` (where `scripts/install-mcp-servers.sh`
//! put the reference servers: `$TOOLPICK_MCP_SERVERS`, else `target/mcp-servers` under the working
//! directory), so a catalog imported on one machine runs on another.
//!
//! **One path for the model.** The model sees the sandbox as [`VIRTUAL_ROOT`] (`/sandbox`): the real
//! directory is replaced by it in every result and error, and a path argument starting with it is
//! mapped back before the call goes out. Results also have their UUIDs numbered in order of appearance,
//! so two runs of the same trial read the same text.

use crate::catalog::Annotations;
use crate::dataset::live::StateExpectation;
use crate::error::InputError;
use crate::record::live::StateCheck;
use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub use super::normalize::{Normalizer, VIRTUAL_ROOT, civil, content_text, shown_result};

/// How a catalog imported by `toolpick mcp import` starts its server for a live trial.
#[derive(Debug, Clone)]
pub struct LiveSpec {
    /// The command line, with placeholders.
    pub command: Vec<String>,
    /// Variables given to the server: templates recorded at import (`{sandbox}` or `{servers}` in
    /// them), the other names taken from toolpick's environment at run time.
    pub env: Vec<(String, Option<String>)>,
    pub capabilities: super::client::Capabilities,
    /// Written tool id → the tool's name on the wire.
    pub wire: HashMap<String, String>,
    /// `serverInfo` name and version, as imported.
    pub server: String,
    /// A server imported by URL (`mcp import --url`): already running, shared by whoever reaches it.
    /// Only a served session (`mcp proxy --url`, `mcp serve --execute live`) may use one; a run needs
    /// a fresh server per trial and refuses it.
    pub url: Option<String>,
}

/// Why a run refuses a catalog imported by URL.
pub const URL_CATALOG_IN_RUN: &str = "this catalog was imported from a server reached by URL; a live run starts a fresh server per trial, so import it from its command line (after `--`) — or serve it to one client with `toolpick mcp proxy --url`";

impl LiveSpec {
    /// Read the `mcp` object of `dir/catalog.json`; `Ok(None)` when the catalog was not imported from
    /// a server.
    pub fn from_catalog_dir(dir: &Path) -> Result<Option<LiveSpec>> {
        let path = dir.join("catalog.json");
        let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
        let meta: Value = serde_json::from_str(&text)
            .map_err(|e| InputError::new(&path, format!("not JSON: {e}")).at_line(e.line()))?;
        let Some(mcp) = meta.get("mcp") else { return Ok(None) };
        let words = |v: &Value| -> Vec<String> {
            v.as_array().into_iter().flatten().filter_map(Value::as_str).map(String::from).collect()
        };
        let command = words(&mcp["command"]);
        let url = command
            .first()
            .filter(|c| c.starts_with("http://") || c.starts_with("https://"))
            .cloned();
        if command.is_empty() {
            return Err(InputError::new(
                &path,
                "`mcp.command` is empty: toolpick does not know how to start this server",
            )
            .field("mcp.command")
            .into());
        }
        let templates = mcp.get("envTemplates").and_then(Value::as_object);
        let env = words(&mcp["env"])
            .into_iter()
            .map(|name| {
                let template =
                    templates.and_then(|t| t.get(&name)).and_then(Value::as_str).map(String::from);
                (name, template)
            })
            .collect();
        let caps = mcp["clientCapabilities"]
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
            .unwrap_or_default();
        let capabilities = super::client::Capabilities::parse(&caps)
            .map_err(|e| InputError::new(&path, e).field("mcp.clientCapabilities"))?;
        let wire = mcp["tools"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(id, t)| {
                t.get("name").and_then(Value::as_str).map(|n| (id.clone(), n.to_string()))
            })
            .collect();
        let info = &mcp["serverInfo"];
        let server = format!(
            "{} {}",
            info["name"].as_str().unwrap_or("server"),
            info["version"].as_str().unwrap_or("")
        )
        .trim()
        .to_string();
        Ok(Some(LiveSpec { command, env, capabilities, wire, server, url }))
    }

    /// The command and environment for a trial whose sandbox is `sandbox`. `secrets` are variable
    /// names that must never reach a server (the models' API keys).
    pub fn resolve(
        &self,
        sandbox: &Path,
        secrets: &[String],
    ) -> Result<super::client::ServerCommand> {
        let words: Vec<String> = self.command.iter().map(|w| fill(w, sandbox)).collect();
        let mut command = super::client::ServerCommand::from_words(&words)?;
        for (name, template) in &self.env {
            if secrets.contains(name) {
                anyhow::bail!(
                    "the server's environment names `{name}`, the model's API key variable; toolpick never passes it to a tool server"
                );
            }
            let value = match template {
                Some(t) => fill(t, sandbox),
                None => std::env::var(name).map_err(|_| anyhow!("the server needs the environment variable `{name}` (named at import); set it"))?,
            };
            command.env.push((name.clone(), value));
        }
        Ok(command)
    }
}

/// Where the reference servers are installed: `$TOOLPICK_MCP_SERVERS`, else `target/mcp-servers`.
pub fn servers_dir() -> PathBuf {
    let dir = std::env::var_os("TOOLPICK_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/mcp-servers"));
    std::path::absolute(&dir).unwrap_or(dir)
}

/// `text` with `{sandbox}` and `{servers}` filled in.
pub fn fill(text: &str, sandbox: &Path) -> String {
    text.replace("{sandbox}", &sandbox.display().to_string())
        .replace("{servers}", &servers_dir().display().to_string())
}

/// What a live experiment lets through to a server, and the limits it sets: the `[live]` section of an
/// experiment file (`--allow-destructive` and friends override it). Annotations are hints from an
/// untrusted server (missing hints already read as the unsafe value in an imported catalog), so the
/// lists decide first. Unknown keys are refused, so a misspelt limit is never silently the default.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Send tools whose `destructiveHint` is set (and that are not read-only).
    #[serde(default)]
    pub allow_destructive: bool,
    /// Send tools whose `openWorldHint` is set (they may reach outside the sandbox).
    #[serde(default)]
    pub allow_open_world: bool,
    /// Globs over wire names or tool ids always sent (after `deny`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Globs over wire names or tool ids never sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// Longest a call may take (ms) before the session counts as broken.
    #[serde(default = "default_call_timeout")]
    pub call_timeout_ms: u64,
    /// Longest the server may take to start and answer `initialize` (ms) before the trial is an
    /// infrastructure error.
    #[serde(default = "default_start_timeout", skip_serializing_if = "is_default_start_timeout")]
    pub start_timeout_ms: u64,
    /// Largest result (bytes, as JSON) a call may return before the session counts as broken.
    #[serde(default = "default_max_output")]
    pub max_output_bytes: usize,
    /// Largest file a server may write (bytes).
    #[serde(default = "default_max_file")]
    pub max_file_bytes: u64,
    /// Live trials at once (each runs its own server process).
    #[serde(default = "default_sandboxes")]
    pub sandboxes: usize,
}

fn default_call_timeout() -> u64 {
    20_000
}
fn default_start_timeout() -> u64 {
    super::client::REQUEST_TIMEOUT.as_millis() as u64
}
fn is_default_start_timeout(ms: &u64) -> bool {
    *ms == default_start_timeout()
}
fn default_max_output() -> usize {
    1 << 20
}
fn default_max_file() -> u64 {
    64 << 20
}
fn default_sandboxes() -> usize {
    4
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_destructive: false,
            allow_open_world: false,
            allow: vec![],
            deny: vec![],
            call_timeout_ms: default_call_timeout(),
            start_timeout_ms: default_start_timeout(),
            max_output_bytes: default_max_output(),
            max_file_bytes: default_max_file(),
            sandboxes: default_sandboxes(),
        }
    }
}

impl Policy {
    pub fn is_default(&self) -> bool {
        *self == Policy::default()
    }

    /// `Err(reason)` when the call must not reach the server.
    pub fn decide(&self, tool_id: &str, wire: &str, hints: &Annotations) -> Result<(), String> {
        let named = |list: &[String]| list.iter().any(|g| glob(g, wire) || glob(g, tool_id));
        if named(&self.deny) {
            return Err(format!("`{wire}` is on this experiment's deny list"));
        }
        if named(&self.allow) {
            return Ok(());
        }
        if hints.destructive_hint && !hints.read_only_hint && !self.allow_destructive {
            return Err(format!(
                "`{wire}` may destroy data (destructiveHint) and this experiment does not allow destructive tools (--allow-destructive)"
            ));
        }
        if hints.open_world_hint && !self.allow_open_world {
            return Err(format!(
                "`{wire}` may reach outside the sandbox (openWorldHint) and this experiment does not allow open-world tools (--allow-open-world)"
            ));
        }
        Ok(())
    }
}

/// `*` any run of characters, `?` one.
fn glob(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match (p.first(), t.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], t) || (!t.is_empty() && go(p, &t[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &t[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &t[1..]),
            _ => false,
        }
    }
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    go(&p, &t)
}

/// The fixed time every fixture file and directory gets (2000-01-01T00:00:00Z), so listings and file
/// information read the same in every trial.
pub const FIXTURE_TIME: u64 = 946_684_800;

/// A trial's sandbox: a fresh directory holding a copy of the task's fixture. Removed when dropped (or
/// when toolpick is stopped by a signal: see [`super::process`]).
pub struct Sandbox {
    dir: super::process::TrackedDir,
    /// The directory with symbolic links resolved (what a server reports).
    real: PathBuf,
}

impl Sandbox {
    /// A fresh sandbox with `fixture` (a directory; symbolic links in it are refused) copied in and
    /// then `files` written, every entry dated [`FIXTURE_TIME`].
    pub fn create(fixture: Option<&Path>, files: &BTreeMap<String, String>) -> Result<Sandbox> {
        let dir = super::process::temp_dir("toolpick-sandbox-")
            .context("cannot create a sandbox directory")?;
        let real = dir.path().canonicalize().context("cannot resolve the sandbox directory")?;
        if let Some(from) = fixture {
            copy_tree(from, &real)?;
        }
        for (name, text) in files {
            let path = real.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        date_tree(&real)?;
        Ok(Sandbox { dir, real })
    }

    pub fn path(&self) -> &Path {
        &self.real
    }

    /// Remove the sandbox now (dropping does the same, ignoring errors).
    pub fn remove(self) -> Result<()> {
        self.dir.close().context("cannot remove the sandbox")
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for entry in std::fs::read_dir(from)
        .with_context(|| format!("cannot read the fixture directory {}", from.display()))?
    {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            anyhow::bail!(
                "the fixture {} holds a symbolic link; fixtures are copied without links so nothing points out of the sandbox",
                entry.path().display()
            );
        } else if kind.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Date every file and directory under `dir` (deepest first, as writing a file changes its directory).
fn date_tree(dir: &Path) -> Result<()> {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(FIXTURE_TIME);
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            date_tree(&entry.path())?;
        }
        let f = std::fs::File::open(entry.path())?;
        f.set_times(std::fs::FileTimes::new().set_modified(time).set_accessed(time))?;
    }
    let f = std::fs::File::open(dir)?;
    f.set_times(std::fs::FileTimes::new().set_modified(time).set_accessed(time))?;
    Ok(())
}

/// Run the task's final-state checks on the sandbox.
pub fn check_state(sandbox: &Path, checks: &[StateExpectation]) -> Vec<StateCheck> {
    checks.iter().map(|c| check_one(sandbox, c)).collect()
}

fn check_one(sandbox: &Path, c: &StateExpectation) -> StateCheck {
    let path = sandbox.join(&c.path);
    let read = || std::fs::read_to_string(&path);
    let short = |s: &str| {
        let mut t: String = s.chars().take(120).collect();
        if t.len() < s.len() {
            t.push('…');
        }
        t
    };
    let (check, outcome): (String, Result<(), String>) = if c.absent {
        (
            format!("{} is absent", c.path),
            if path.exists() { Err("it exists".into()) } else { Ok(()) },
        )
    } else if let Some(want) = &c.equals {
        let got = read();
        (
            format!("{} equals the expected text", c.path),
            match got {
                Ok(text) if text == *want => Ok(()),
                Ok(text) => Err(format!("it reads `{}`", short(&text))),
                Err(_) => Err("it does not exist".into()),
            },
        )
    } else if !c.contains.is_empty() {
        (
            format!(
                "{} contains {}",
                c.path,
                c.contains.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            ),
            match read() {
                Ok(text) => match c.contains.iter().find(|s| !text.contains(s.as_str())) {
                    None => Ok(()),
                    Some(missing) => {
                        Err(format!("`{missing}` is missing; it reads `{}`", short(&text)))
                    }
                },
                Err(_) => Err("it does not exist".into()),
            },
        )
    } else if let Some(want) = c.has_record.as_ref().or(c.lacks_record.as_ref()) {
        let must_have = c.has_record.is_some();
        let lines = read().unwrap_or_default();
        let found = lines
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|rec| contains(&rec, want));
        let what =
            format!("{} {} a record {}", c.path, if must_have { "has" } else { "has no" }, want);
        (
            what,
            match (must_have, found) {
                (true, true) | (false, false) => Ok(()),
                (true, false) => Err(if path.exists() {
                    "no line matches".into()
                } else {
                    "it does not exist".into()
                }),
                (false, true) => Err("a line matches".into()),
            },
        )
    } else {
        (format!("{}: no check given", c.path), Err("no check given".into()))
    };
    match outcome {
        Ok(()) => StateCheck { check, ok: true, detail: String::new() },
        Err(detail) => StateCheck { check, ok: false, detail },
    }
}

/// `got` contains `want`: equal scalars, every key of an object (recursively), every item of an array.
fn contains(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            w.iter().all(|(k, v)| g.get(k).is_some_and(|x| contains(x, v)))
        }
        (Value::Array(g), Value::Array(w)) => w.iter().all(|v| g.iter().any(|x| contains(x, v))),
        (g, w) => g == w,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_lists_decide_before_the_hints_and_missing_hints_are_unsafe() {
        let unsafe_defaults = Annotations::default();
        let read_only = Annotations {
            read_only_hint: true,
            destructive_hint: false,
            idempotent_hint: true,
            open_world_hint: false,
        };
        let writes = Annotations {
            read_only_hint: false,
            destructive_hint: false,
            idempotent_hint: false,
            open_world_hint: false,
        };
        let none = Policy::default();
        assert!(none.decide("s/c/read", "read", &read_only).is_ok());
        assert!(none.decide("s/c/mkdir", "mkdir", &writes).is_ok());
        let err = none.decide("s/c/purge", "purge", &unsafe_defaults).unwrap_err();
        assert!(err.contains("destructiveHint"), "{err}");
        let destructive_ok = Policy { allow_destructive: true, ..Default::default() };
        assert!(
            destructive_ok
                .decide("s/c/purge", "purge", &unsafe_defaults)
                .unwrap_err()
                .contains("openWorldHint")
        );
        let both = Policy { allow_destructive: true, allow_open_world: true, ..Default::default() };
        assert!(both.decide("s/c/purge", "purge", &unsafe_defaults).is_ok());
        let listed = Policy {
            allow: vec!["pur*".into()],
            deny: vec!["get-env".into()],
            ..Default::default()
        };
        assert!(listed.decide("s/c/purge", "purge", &unsafe_defaults).is_ok());
        assert!(
            listed.decide("s/c/get-env", "get-env", &read_only).unwrap_err().contains("deny list")
        );
        let deny_wins = Policy { allow: vec!["*".into()], deny: vec!["s/c/*".into()], ..both };
        assert!(deny_wins.decide("s/c/x", "x", &read_only).is_err());
    }

    #[test]
    fn a_sandbox_holds_the_fixture_dated_and_state_checks_read_it() {
        let fixture = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(fixture.path().join("docs")).unwrap();
        std::fs::write(fixture.path().join("docs/a.txt"), "alpha").unwrap();
        let files = BTreeMap::from([
            ("notes.txt".to_string(), "beta\n".to_string()),
            (
                "memory.jsonl".to_string(),
                "{\"type\":\"entity\",\"name\":\"Ada\",\"observations\":[\"x\",\"y\"]}\n"
                    .to_string(),
            ),
        ]);
        let sandbox = Sandbox::create(Some(fixture.path()), &files).unwrap();
        let meta = std::fs::metadata(sandbox.path().join("docs/a.txt")).unwrap();
        assert_eq!(
            meta.modified().unwrap(),
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(FIXTURE_TIME)
        );
        let check = |v: Value| check_one(sandbox.path(), &serde_json::from_value(v).unwrap());
        assert!(check(json!({"path": "docs/a.txt", "equals": "alpha"})).ok);
        let wrong = check(json!({"path": "docs/a.txt", "equals": "gamma"}));
        assert!(!wrong.ok && wrong.detail.contains("alpha"), "{wrong:?}");
        assert!(check(json!({"path": "notes.txt", "contains": ["bet"]})).ok);
        assert!(!check(json!({"path": "notes.txt", "absent": true})).ok);
        assert!(check(json!({"path": "gone.txt", "absent": true})).ok);
        assert!(check(json!({"path": "memory.jsonl", "has_record": {"name": "Ada", "observations": ["y"]}})).ok);
        assert!(!check(json!({"path": "memory.jsonl", "has_record": {"name": "Bob"}})).ok);
        assert!(!check(json!({"path": "memory.jsonl", "lacks_record": {"name": "Ada"}})).ok);
        let path = sandbox.path().to_path_buf();
        sandbox.remove().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_fixture_with_a_symbolic_link_is_refused() {
        let fixture = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/hostname", fixture.path().join("escape")).unwrap();
        let err = Sandbox::create(Some(fixture.path()), &BTreeMap::new()).err().unwrap();
        assert!(format!("{err:#}").contains("symbolic link"));
    }
}
