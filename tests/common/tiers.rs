//! The test tiers. The hermetic tier, every test binary not listed in [`Tier::binaries`], needs
//! nothing outside the repository and `../shared`. Each other tier needs something installed first,
//! and no test installs anything: `scripts/install-test-deps.sh` installs every tier's needs
//! (idempotent, cached under `target/`), and `scripts/test.sh`, which `.ci/run` runs, calls it
//! before `cargo test --locked`.
//!
//! - `mcp-npm` (`mcp_live`, `mcp_env`, `mcp_run`, `mcp_serve`, `mcp_import_lint`, `mcp_era`, `mcp_pool`): Node.js and the pinned npm
//!   reference MCP servers (`target/mcp-servers`);
//! - `mcp-pypi` (`mcp_run`, `mcp_serve`, `mcp_import_lint`, `mcp_era`): the pinned PyPI MCP servers and the Python MCP SDK
//!   (`target/mcp-servers/venv`);
//! - `bfcl` (`parity_bfcl`): BFCL's checker from PyPI, pinned (`target/parity-venv`);
//! - `anthropic-sdk` (`anthropic_sdk`): Anthropic's official Python SDK from PyPI, pinned
//!   (`target/anthropic-sdk-venv`);
//! - `openai-sdk` (`responses_sdk`): OpenAI's official Python SDK from PyPI, pinned
//!   (`target/openai-sdk-venv`);
//! - `gemini-sdk` (`gemini_sdk`): Google's official Gen AI Python SDK from PyPI, pinned
//!   (`target/gemini-sdk-venv`);
//! - `packaging` (`packaging`): maturin, hadolint and check-jsonschema from PyPI, pinned
//!   (`target/packaging-venv`);
//! - `inspect` (`export_inspect`, `export_otel`): inspect_ai, opentelemetry-proto and protobuf from
//!   PyPI, pinned (`target/inspect-venv`), which read toolpick's exports back;
//! - `chromium` (`report_browser`): Debian's `chromium` at `/usr/bin/chromium` (its touch test also runs Node.js ≥ 20.10, which the `mcp-npm` tier needs anyway).
//!
//! One tier alone: `scripts/install-test-deps.sh chromium`, then `cargo test --locked --test
//! report_browser` (its binaries, listed above). The hermetic tier alone is every other binary.
//!
//! A test of a tier whose needs are missing fails with a message naming the script. Locally,
//! `TOOLPICK_SKIP_TIERS` (a comma-separated list of tier names, or `all`) lets such a test pass
//! without running, saying so on stderr; under CI (`CI` set) a missing need always fails.

use std::path::PathBuf;
use std::process::Command;

/// A tier that needs something installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    McpNpm,
    McpPypi,
    Bfcl,
    AnthropicSdk,
    OpenAiSdk,
    GeminiSdk,
    Packaging,
    Inspect,
    Chromium,
}

/// What lets a local run skip the tiers it has not installed.
pub const SKIP_VAR: &str = "TOOLPICK_SKIP_TIERS";

const CHROMIUM: &str = "/usr/bin/chromium";

impl Tier {
    pub const ALL: [Tier; 9] = [
        Tier::McpNpm,
        Tier::McpPypi,
        Tier::Bfcl,
        Tier::AnthropicSdk,
        Tier::OpenAiSdk,
        Tier::GeminiSdk,
        Tier::Packaging,
        Tier::Inspect,
        Tier::Chromium,
    ];

    /// The name `scripts/install-test-deps.sh` and [`SKIP_VAR`] know the tier by.
    pub fn name(self) -> &'static str {
        match self {
            Tier::McpNpm => "mcp-npm",
            Tier::McpPypi => "mcp-pypi",
            Tier::Bfcl => "bfcl",
            Tier::AnthropicSdk => "anthropic-sdk",
            Tier::OpenAiSdk => "openai-sdk",
            Tier::GeminiSdk => "gemini-sdk",
            Tier::Packaging => "packaging",
            Tier::Inspect => "inspect",
            Tier::Chromium => "chromium",
        }
    }

    /// The test binaries (`tests/<name>.rs`) with tests of the tier.
    pub fn binaries(self) -> &'static [&'static str] {
        match self {
            Tier::McpNpm => &[
                "mcp_live",
                "mcp_env",
                "mcp_run",
                "mcp_serve",
                "mcp_import_lint",
                "mcp_era",
                "mcp_pool",
            ],
            Tier::McpPypi => &["mcp_run", "mcp_serve", "mcp_import_lint", "mcp_era"],
            Tier::Bfcl => &["parity_bfcl"],
            Tier::AnthropicSdk => &["anthropic_sdk"],
            Tier::OpenAiSdk => &["responses_sdk"],
            Tier::GeminiSdk => &["gemini_sdk"],
            Tier::Packaging => &["packaging"],
            Tier::Inspect => &["export_inspect", "export_otel"],
            Tier::Chromium => &["report_browser"],
        }
    }

    /// Where the tier's needs are installed, asked of the installer in its checking mode (so the
    /// pins live in the scripts alone); `Err` says what is missing.
    fn installed(self) -> Result<PathBuf, String> {
        let script = |name: &str, args: &[&str]| -> Result<PathBuf, String> {
            let path = super::repo().join("scripts").join(name);
            let o = Command::new("bash").arg(&path).arg("--check").args(args).output();
            let o = o.map_err(|e| format!("cannot run {}: {e}", path.display()))?;
            if o.status.success() {
                Ok(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            } else {
                Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
            }
        };
        match self {
            Tier::McpNpm => script("install-mcp-servers.sh", &[]),
            Tier::McpPypi => script("install-mcp-servers.sh", &["--python"]),
            Tier::Bfcl => script("install-venv.sh", &["bfcl"]),
            Tier::AnthropicSdk => script("install-anthropic-sdk.sh", &[]),
            Tier::OpenAiSdk => script("install-venv.sh", &["openai-sdk"]),
            Tier::GeminiSdk => script("install-venv.sh", &["gemini-sdk"]),
            Tier::Packaging => script("install-venv.sh", &["packaging"]),
            Tier::Inspect => script("install-venv.sh", &["inspect"]),
            Tier::Chromium => {
                let path = PathBuf::from(CHROMIUM);
                if path.exists() { Ok(path) } else { Err(format!("{CHROMIUM} is missing")) }
            }
        }
    }
}

/// Whether [`SKIP_VAR`] lets a local run skip `tier`.
fn skippable(tier: Tier) -> bool {
    let Ok(list) = std::env::var(SKIP_VAR) else { return false };
    list.split(',').map(str::trim).any(|t| t == "all" || t == tier.name())
}

/// Where `tier`'s needs are installed, or `None` when they are not and [`SKIP_VAR`] names the tier
/// outside CI (the caller returns: the test is skipped, and says so). Panics, naming the install
/// script, when they are missing otherwise.
pub fn require(tier: Tier) -> Option<PathBuf> {
    let missing = match tier.installed() {
        Ok(path) => return Some(path),
        Err(missing) => missing,
    };
    let name = tier.name();
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    if skippable(tier) && !ci {
        eprintln!(
            "skipped: the `{name}` tier is not installed ({missing}) and {SKIP_VAR} skips it"
        );
        return None;
    }
    let allowed = if ci { " (never under CI)" } else { "" };
    panic!(
        "this test is of the `{name}` tier, whose needs are not installed: {missing}\n\
         Install them first: scripts/install-test-deps.sh {name} (scripts/test.sh installs every \
         tier, then runs the whole suite); {SKIP_VAR}={name} skips the tier locally{allowed}."
    )
}

/// [`require`] for a helper that has no test to return from: skipping is not an option there, so a
/// test that calls it calls [`require`] first.
pub fn installed(tier: Tier) -> PathBuf {
    tier.installed()
        .unwrap_or_else(|missing| panic!("the `{}` tier is not installed: {missing}", tier.name()))
}

/// Whether a test of `tier` runs: its needs are installed ([`require`]), or it returns at once
/// (skipped locally by [`SKIP_VAR`]); panics as [`require`] does.
pub fn ready(tier: Tier) -> bool {
    require(tier).is_some()
}
