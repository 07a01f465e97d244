//! Live execution's parts that know MCP and the sandbox, not the run: how an imported catalog says its
//! server is started ([`LiveSpec`]), the per-trial [`Sandbox`], the safety [`Policy`], the rewriting
//! that keeps a trial's results independent of where its sandbox is ([`Normalizer`]), and the
//! final-state checks. `run::live` puts them together per trial.
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

/// The sandbox as the model sees it.
pub const VIRTUAL_ROOT: &str = "/sandbox";

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

/// What a live experiment lets through to a server. Annotations are hints from an untrusted server
/// (missing hints already read as the unsafe value in an imported catalog), so the lists decide first.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
}

impl Policy {
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

/// A trial's sandbox: a fresh directory holding a copy of the task's fixture. Removed when dropped.
pub struct Sandbox {
    dir: tempfile::TempDir,
    /// The directory with symbolic links resolved (what a server reports).
    real: PathBuf,
}

impl Sandbox {
    /// A fresh sandbox with `fixture` (a directory; symbolic links in it are refused) copied in and
    /// then `files` written, every entry dated [`FIXTURE_TIME`].
    pub fn create(fixture: Option<&Path>, files: &BTreeMap<String, String>) -> Result<Sandbox> {
        let dir = tempfile::Builder::new()
            .prefix("toolpick-sandbox-")
            .tempdir()
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

/// Rewrites one trial's traffic: the model's `/sandbox` paths to the real sandbox on the way out, the
/// real sandbox to `/sandbox` and UUIDs to numbered ones on the way back.
pub struct Normalizer {
    real: String,
    uuids: std::sync::Mutex<HashMap<String, String>>,
}

impl Normalizer {
    pub fn new(sandbox: &Path) -> Normalizer {
        Normalizer { real: sandbox.display().to_string(), uuids: Default::default() }
    }

    /// Arguments as the server must get them: strings that are `/sandbox` or start with `/sandbox/`
    /// point into the real sandbox.
    pub fn outbound(&self, v: &Value) -> Value {
        match v {
            Value::String(s) if s == VIRTUAL_ROOT => Value::String(self.real.clone()),
            Value::String(s) if s.starts_with("/sandbox/") => {
                Value::String(format!("{}{}", self.real, &s[VIRTUAL_ROOT.len()..]))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.outbound(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), self.outbound(x))).collect())
            }
            other => other.clone(),
        }
    }

    /// Text from the server as the model may see it.
    pub fn inbound(&self, text: &str) -> String {
        let text = text.replace(&self.real, VIRTUAL_ROOT);
        let text = clock_readings_to_fixture_time(&text, today());
        let re = uuid_pattern();
        let mut seen = self.uuids.lock().expect("uuid map");
        re.replace_all(&text, |c: &regex::Captures<'_>| {
            let n = seen.len() + 1;
            seen.entry(c[0].to_ascii_lowercase())
                .or_insert_with(|| format!("00000000-0000-4000-8000-{n:012}"))
                .clone()
        })
        .into_owned()
    }

    /// Every string of a JSON value as [`Self::inbound`] makes it.
    pub fn inbound_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.inbound(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.inbound_value(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), self.inbound_value(x))).collect())
            }
            other => other.clone(),
        }
    }
}

/// Today's date (UTC) as (year, month, day).
fn today() -> (i64, u32, u32) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    civil((secs / 86_400) as i64)
}

/// The civil date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Clock readings a server took during the trial (a file's creation time, "now"), in ISO 8601 or
/// JavaScript's `Date.toString` form, dated today or the day before or after (UTC), become
/// [`FIXTURE_TIME`] in the same form: the sandbox's files all read 2000-01-01, and so does any time
/// the trial itself produced, whichever day it ran.
fn clock_readings_to_fixture_time(text: &str, today: (i64, u32, u32)) -> String {
    static ISO: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static JS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let iso = ISO.get_or_init(|| {
        regex::Regex::new(
            r"\b(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
        )
        .expect("iso pattern")
    });
    let js = JS.get_or_init(|| {
        regex::Regex::new(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{2}) (\d{4}) \d{2}:\d{2}:\d{2} GMT([+-]\d{4})").expect("js date pattern")
    });
    let days = |y: i64, m: u32, d: u32| -> i64 {
        // Days since 1970-01-01 of a civil date (the inverse of `civil`).
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
        let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    };
    let now = days(today.0, today.1, today.2);
    let near = |y: i64, m: u32, d: u32| (days(y, m, d) - now).abs() <= 1;
    let text = iso.replace_all(text, |c: &regex::Captures<'_>| {
        let (y, m, d) =
            (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0), c[3].parse().unwrap_or(0));
        if !near(y, m, d) {
            return c[0].to_string();
        }
        let frac =
            c.get(7).map(|f| format!(".{}", "0".repeat(f.as_str().len() - 1))).unwrap_or_default();
        let zone = c
            .get(8)
            .map(|z| if z.as_str() == "Z" { "Z".to_string() } else { "+00:00".to_string() })
            .unwrap_or_default();
        let sep = &c[0][10..11];
        format!("2000-01-01{sep}00:00:00{frac}{zone}")
    });
    js.replace_all(&text, |c: &regex::Captures<'_>| {
        let m = MONTHS.iter().position(|x| *x == &c[2]).map_or(0, |i| i as u32 + 1);
        if !near(c[4].parse().unwrap_or(0), m, c[3].parse().unwrap_or(0)) {
            return c[0].to_string();
        }
        "Sat Jan 01 2000 00:00:00 GMT+0000".to_string()
    })
    .into_owned()
}

fn uuid_pattern() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
            .expect("uuid pattern")
    })
}

/// What a `tools/call` result shows the model: `structuredContent` when the server gave it, else the
/// text of its content blocks (other blocks named by type), as `{"content": …}`, or `{"error": …}` when
/// the result is an error.
pub fn shown_result(result: &Value) -> (Value, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let text = content_text(result);
    if is_error {
        return (serde_json::json!({ "error": text }), true);
    }
    match result.get("structuredContent") {
        Some(s) if !s.is_null() => (s.clone(), false),
        _ => (serde_json::json!({ "content": text }), false),
    }
}

/// The text of a `tools/call` result's content blocks, one per line (other blocks named by type).
pub fn content_text(result: &Value) -> String {
    let text: Vec<String> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|block| match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                block.get("text").and_then(Value::as_str).unwrap_or_default().to_string()
            }
            Some(kind) => format!(
                "[{kind} {}]",
                block.get("mimeType").and_then(Value::as_str).unwrap_or("content")
            ),
            None => String::new(),
        })
        .collect();
    text.join("\n")
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
    fn paths_map_between_the_model_and_the_sandbox_and_uuids_are_numbered() {
        let n = Normalizer::new(Path::new("/tmp/toolpick-sandbox-ab12"));
        assert_eq!(
            n.outbound(&json!({"path": "/sandbox/notes/a.txt", "paths": ["/sandbox", "/sandboxes/x", "rel.txt"], "n": 3})),
            json!({"path": "/tmp/toolpick-sandbox-ab12/notes/a.txt", "paths": ["/tmp/toolpick-sandbox-ab12", "/sandboxes/x", "rel.txt"], "n": 3})
        );
        assert_eq!(n.inbound("Wrote /tmp/toolpick-sandbox-ab12/a.txt"), "Wrote /sandbox/a.txt");
        let text = n.inbound("id DD9AB4A5-1111-4222-8333-123456789abc then 0f0f0f0f-1111-4222-8333-123456789abc then dd9ab4a5-1111-4222-8333-123456789abc");
        assert_eq!(
            text,
            "id 00000000-0000-4000-8000-000000000001 then 00000000-0000-4000-8000-000000000002 then 00000000-0000-4000-8000-000000000001"
        );
    }

    #[test]
    fn clock_readings_of_the_trial_read_as_the_fixture_time_and_other_dates_stay() {
        let today = (2026, 12, 2);
        assert_eq!(civil(20_423), (2025, 12, 1));
        assert_eq!(civil(0), (1970, 1, 1));
        let text = "created: Wed Dec 02 2026 18:52:28 GMT+0000 (Coordinated Universal Time)\nmodified: Sat Jan 01 2000 00:00:00 GMT+0000\nat 2026-12-03T01:02:03.456Z, born 1815-12-10T00:00:00Z, due 2026-12-25 09:00:00";
        assert_eq!(
            clock_readings_to_fixture_time(text, today),
            "created: Sat Jan 01 2000 00:00:00 GMT+0000 (Coordinated Universal Time)\nmodified: Sat Jan 01 2000 00:00:00 GMT+0000\nat 2000-01-01T00:00:00.000Z, born 1815-12-10T00:00:00Z, due 2026-12-25 09:00:00"
        );
        // Across a month and a year boundary.
        assert_eq!(
            clock_readings_to_fixture_time("2026-12-31T23:59:59Z", (2027, 1, 1)),
            "2000-01-01T00:00:00Z"
        );
    }

    #[test]
    fn results_show_structured_content_or_text_and_errors_as_errors() {
        assert_eq!(shown_result(&json!({"content": [{"type": "text", "text": "hi"}, {"type": "image", "mimeType": "image/png", "data": "…"}]})).0, json!({"content": "hi\n[image image/png]"}));
        assert_eq!(
            shown_result(&json!({"content": [], "structuredContent": {"content": "x"}})).0,
            json!({"content": "x"})
        );
        assert_eq!(
            shown_result(&json!({"content": [{"type": "text", "text": "nope"}], "isError": true})),
            (json!({"error": "nope"}), true)
        );
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
