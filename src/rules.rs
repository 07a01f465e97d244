//! The allowed range or set of every numeric and enumerated setting, defined once and applied twice: as
//! the clap value parser of a `toolpick run` flag and as the serde deserializer of the experiment file's
//! key. A value outside its range is an error (exit 2) naming the flag or the file, line and key; it is
//! never clamped or replaced by a default, so what runs is what was asked for.
//!
//! Each rule is a module with `check` (the rule itself), `parse` (for `#[arg(value_parser = …)]`),
//! `de` and `de_opt` (for `#[serde(deserialize_with = …)]` on a plain or an optional field).

use serde::{Deserialize, Deserializer};

/// `tool_choice` values (the string forms of the chat-completions API).
pub const TOOL_CHOICES: [&str; 3] = ["auto", "none", "required"];

/// Longest timeout or back-off accepted, in seconds (a day). Beyond it a number is a typo, and
/// `Duration` would overflow long before `f64` does.
pub const MAX_SECONDS: f64 = 86_400.0;

/// Most episodes in flight against one endpoint (the runner's scheduler is sized by the sum).
pub const MAX_CONCURRENCY: usize = 4096;

/// Most worker threads (`--jobs`): each is an OS thread with its own stack, so tens of thousands abort
/// the process, and beyond a few hundred they only cost memory (the work is bound by cores and endpoints).
pub const MAX_JOBS: usize = 256;

/// Most trials per task and cell: the matrix is built in memory before the first episode, so a typo of
/// a few digits would exhaust memory instead of running; pass@k and the noise floor need far fewer.
pub const MAX_TRIALS: usize = 1000;

/// Most pass-rate rounds per judged answer (each a paid request; StableToolBench uses a handful).
pub const MAX_ROUNDS: usize = 100;

/// Largest distractor level: beyond any catalog (a level above the catalog's size shows all of it), and
/// far from the overflow of the level arithmetic.
pub const MAX_DISTRACTORS: usize = 1_000_000;

/// Parse a number the way flags and keys spell it; the error says what was expected.
fn number<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
    s.trim().parse().map_err(|_| format!("`{s}` is not {what}"))
}

macro_rules! rule {
    ($(#[$doc:meta])* $name:ident: $t:ty, $what:literal, |$v:ident| $check:expr) => {
        $(#[$doc])*
        pub mod $name {
            use super::*;
            /// The rule: the value back, or what is wrong with it.
            pub fn check($v: $t) -> Result<$t, String> {
                let verdict: Result<(), String> = $check;
                verdict.map(|()| $v)
            }
            /// Clap value parser.
            pub fn parse(s: &str) -> Result<$t, String> {
                check(number::<$t>(s, $what)?)
            }
            /// Serde deserializer of a required (or defaulted) key.
            pub fn de<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                check(<$t>::deserialize(d)?).map_err(serde::de::Error::custom)
            }
            /// Serde deserializer of an optional key (pair with `#[serde(default)]`).
            pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
                Option::<$t>::deserialize(d)?.map(check).transpose().map_err(serde::de::Error::custom)
            }
        }
    };
}

fn at_least<T: PartialOrd + std::fmt::Display>(v: T, min: T) -> Result<(), String> {
    if v >= min { Ok(()) } else { Err(format!("must be at least {min} (got {v})")) }
}

fn between<T: PartialOrd + std::fmt::Display + Copy>(v: T, min: T, max: T) -> Result<(), String> {
    at_least(v, min)?;
    if v <= max { Ok(()) } else { Err(format!("must be at most {max} (got {v})")) }
}

fn seconds(v: f64, zero_ok: bool) -> Result<(), String> {
    let low_ok = if zero_ok { v >= 0.0 } else { v > 0.0 };
    if v.is_finite() && low_ok && v <= MAX_SECONDS {
        Ok(())
    } else {
        let low = if zero_ok { "at least 0" } else { "more than 0" };
        Err(format!("must be a number of seconds {low} and at most {MAX_SECONDS} (got {v})"))
    }
}

fn within(v: f64, low: f64, high: f64) -> Result<(), String> {
    if v.is_finite() && (low..=high).contains(&v) {
        Ok(())
    } else {
        Err(format!("must be between {low} and {high} (got {v})"))
    }
}

rule!(
    /// Counts that must be positive: `max_steps`, `servers_to_discover`, `sample`, `limit`.
    at_least_one: usize, "a whole number", |v| at_least(v, 1)
);
rule!(
    /// Trials per task and cell: 1 to [`MAX_TRIALS`].
    trials: usize, "a whole number", |v| between(v, 1, MAX_TRIALS)
);
rule!(
    /// Worker threads (`--jobs`): 1 to [`MAX_JOBS`].
    jobs: usize, "a whole number", |v| between(v, 1, MAX_JOBS)
);
rule!(
    /// Pass-rate rounds of the judge: 1 to [`MAX_ROUNDS`].
    rounds: usize, "a whole number", |v| between(v, 1, MAX_ROUNDS)
);
rule!(
    /// Consecutive turns making the same calls that stop an episode: 0 (never) or at least 2 (one turn
    /// is no repetition).
    repeat_limit: usize, "a whole number", |v| if v == 0 || v >= 2 { Ok(()) } else { Err(format!("must be 0 (off) or at least 2 (got {v})")) }
);
rule!(
    /// Episodes in flight per endpoint.
    concurrency: usize, "a whole number", |v| {
        at_least(v, 1)?;
        if v <= MAX_CONCURRENCY { Ok(()) } else { Err(format!("must be at most {MAX_CONCURRENCY} (got {v})")) }
    }
);
rule!(
    /// Attempts per request, the first included.
    attempts: u32, "a whole number", |v| at_least(v, 1)
);
rule!(
    /// `max_tokens` of a completion.
    max_tokens: u32, "a whole number", |v| at_least(v, 1)
);
rule!(
    /// A model's context window, in tokens.
    context_window: u32, "a whole number of tokens", |v| at_least(v, 1)
);
rule!(
    /// Requests or tokens per minute.
    per_minute: f64, "a number", |v| if v.is_finite() && v > 0.0 { Ok(()) } else { Err(format!("must be a number more than 0 (got {v})")) }
);
rule!(
    /// Request and episode timeouts.
    timeout: f64, "a number of seconds", |v| seconds(v, false)
);
rule!(
    /// Back-off base and the longest `Retry-After` honoured (0 allowed: retry at once).
    delay: f64, "a number of seconds", |v| seconds(v, true)
);
rule!(
    /// Sampling temperature (the chat-completions range).
    temperature: f64, "a number", |v| within(v, 0.0, 2.0)
);
rule!(
    /// The coverage of claims at which a judged task counts as done.
    claim_threshold: f64, "a number", |v| if v.is_finite() && v > 0.0 && v <= 1.0 { Ok(()) } else { Err(format!("must be more than 0 and at most 1 (got {v})")) }
);
rule!(
    /// Nucleus sampling mass.
    top_p: f64, "a number", |v| within(v, 0.0, 1.0)
);
rule!(
    /// Prices in US dollars per million tokens.
    price: f64, "a number", |v| if v.is_finite() && v >= 0.0 { Ok(()) } else { Err(format!("must be a number at least 0 (got {v})")) }
);

/// `provider_limits` values: whose limits a model's requests are checked against (see
/// `agent::backends::limits`).
pub const PROVIDER_LIMITS: [&str; 4] = ["openai", "anthropic", "gemini", "none"];

/// `provider_limits`: one of [`PROVIDER_LIMITS`].
pub mod provider_limits {
    use super::*;
    pub fn check(v: String) -> Result<String, String> {
        if PROVIDER_LIMITS.contains(&v.as_str()) {
            Ok(v)
        } else {
            Err(format!("`{v}` is not a provider; use {}", PROVIDER_LIMITS.join(", ")))
        }
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Option::<String>::deserialize(d)?.map(check).transpose().map_err(serde::de::Error::custom)
    }
}

/// `tool_choice`: one of [`TOOL_CHOICES`].
pub mod tool_choice {
    use super::*;
    pub fn check(v: String) -> Result<String, String> {
        if TOOL_CHOICES.contains(&v.as_str()) {
            Ok(v)
        } else {
            Err(format!("`{v}` is not a tool_choice; use {}", TOOL_CHOICES.join(", ")))
        }
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Option::<String>::deserialize(d)?.map(check).transpose().map_err(serde::de::Error::custom)
    }
}

/// `tool_search` values: which of Anthropic's own search tools the `native-search` layout sends.
pub const TOOL_SEARCHES: [&str; 2] = ["bm25", "regex"];

/// `tool_search`: one of [`TOOL_SEARCHES`].
pub mod tool_search {
    use super::*;
    pub fn check(v: String) -> Result<String, String> {
        if TOOL_SEARCHES.contains(&v.as_str()) {
            Ok(v)
        } else {
            Err(format!("`{v}` is not a tool_search; use {}", TOOL_SEARCHES.join(", ")))
        }
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Option::<String>::deserialize(d)?.map(check).transpose().map_err(serde::de::Error::custom)
    }
}

/// Names that must not be empty: `model`.
pub mod name {
    use super::*;
    pub fn check(v: String) -> Result<String, String> {
        if v.trim().is_empty() { Err("must not be empty".into()) } else { Ok(v) }
    }
    pub fn parse(s: &str) -> Result<String, String> {
        check(s.to_string())
    }
    pub fn de<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        check(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Option::<String>::deserialize(d)?.map(check).transpose().map_err(serde::de::Error::custom)
    }
}

/// A flag value parser whose error never repeats the value: clap's own message quotes what was given
/// (`invalid value 'sk-…' for '--api-key-env'`), and a value that holds a secret must not be printed.
/// `check` says what is wrong without the secret.
#[derive(Clone, Copy)]
pub struct Quiet(pub fn(String) -> Result<String, String>);

impl clap::builder::TypedValueParser for Quiet {
    type Value = String;
    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let flag = arg
            .map(|a| {
                a.get_long().map(|l| format!("--{l}")).unwrap_or_else(|| a.get_id().to_string())
            })
            .unwrap_or_else(|| "the value".into());
        let fail = |m: String| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for '{flag}': {m}\n"),
            )
            .with_cmd(cmd)
        };
        let v = value.to_str().ok_or_else(|| fail("not valid UTF-8".into()))?;
        (self.0)(v.to_string()).map_err(fail)
    }
}

/// The name of the environment variable holding an API key (`api_key_env`, `--api-key-env`,
/// `--judge-api-key-env`): not empty, and not a key. A key written where its variable's name belongs
/// would be stored in `run.json` and shown in every report, so a value that is no variable name
/// (`sk-…`, with `-`, `/`, `+`, `=`) or looks like a key ([`crate::redact::url::looks_like_key`]) is
/// refused, and the message never repeats it.
pub mod key_env {
    use super::*;
    pub const LOOKS_LIKE_A_KEY: &str = "this looks like a key; give the name of the variable that holds it (e.g. OPENAI_API_KEY), never the key itself";
    pub fn check(v: String) -> Result<String, String> {
        let name = v.trim();
        if name.is_empty() {
            return Err("must not be empty".into());
        }
        let variable = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !variable || crate::redact::url::looks_like_key(name) {
            return Err(LOOKS_LIKE_A_KEY.into());
        }
        Ok(v)
    }
    /// Clap value parser (see [`Quiet`]).
    pub const FLAG: Quiet = Quiet(check);
    pub fn de<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        check(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Option::<String>::deserialize(d)?.map(check).transpose().map_err(serde::de::Error::custom)
    }
}

/// An endpoint base URL: parses, `http` or `https`, has a host written between `//` and the path, no
/// query or fragment (paths are appended to it). Errors show the URL through
/// [`crate::redact::url::display`], so a key in its userinfo or query is never printed; an accepted
/// URL's credentials are registered with the process-wide redactor ([`crate::redact::url::install`]).
/// Stored (`run.json`, reports) through [`display`].
pub mod base_url {
    use super::*;
    const EXPECTED: &str = "expected http://host[:port]/path, e.g. http://127.0.0.1:8080/v1";
    pub fn check(v: String) -> Result<String, String> {
        let shown = crate::redact::url::display(v.trim()).into_owned();
        let url = reqwest::Url::parse(v.trim())
            .map_err(|e| format!("`{shown}` is not a URL: {e} ({EXPECTED})"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "`{shown}` has scheme `{}`; use http or https ({EXPECTED})",
                url.scheme()
            ));
        }
        // The parser makes a host of what follows an empty authority (`http:///v1` is read as host
        // `v1`): the host must be written where it belongs.
        let written = v.trim().split_once("://").map(|(_, rest)| rest).unwrap_or("");
        let authority = &written[..written.find(['/', '?', '#']).unwrap_or(written.len())];
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = if host.starts_with('[') { host } else { host.split(':').next().unwrap_or("") };
        if host.is_empty() || url.host_str().is_none_or(str::is_empty) {
            return Err(format!("`{shown}` has no host ({EXPECTED})"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!(
                "`{shown}` has a query or fragment; give the base path only, /chat/completions is appended ({EXPECTED})"
            ));
        }
        crate::redact::url::install(v.trim());
        Ok(v)
    }
    pub fn parse(s: &str) -> Result<String, String> {
        check(s.to_string())
    }
    /// Clap value parser (see [`Quiet`]).
    pub const FLAG: Quiet = Quiet(check);
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Option::<String>::deserialize(d)?.map(check).transpose().map_err(serde::de::Error::custom)
    }
    /// Serialise a base URL as it may be stored: credentials replaced ([`crate::redact::url::display`]).
    pub fn display<S: serde::Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(u) => s.serialize_some(&crate::redact::url::display(u)),
            None => s.serialize_none(),
        }
    }
}

/// Distractor levels of the tool-count curve: distinct (a repeated level would run its cells twice),
/// each at most [`MAX_DISTRACTORS`].
pub mod levels {
    use super::*;
    pub fn check(v: Vec<usize>) -> Result<Vec<usize>, String> {
        if let Some(n) = v.iter().find(|n| **n > MAX_DISTRACTORS) {
            return Err(format!(
                "level {n} is above the largest level, {MAX_DISTRACTORS} (a level above a catalog's size already shows all of it)"
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        match v.iter().find(|n| !seen.insert(**n)) {
            Some(n) => Err(format!("level {n} is given twice; list each distractor level once")),
            None => Ok(v),
        }
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<usize>>, D::Error> {
        Option::<Vec<usize>>::deserialize(d)?
            .map(check)
            .transpose()
            .map_err(serde::de::Error::custom)
    }
}

/// Task-id globs of `--tasks` / `tasks`: none empty.
pub mod task_patterns {
    use super::*;
    pub fn parse(s: &str) -> Result<String, String> {
        let p = s.trim();
        if p.is_empty() {
            Err("a task pattern is empty; give ids or globs such as dev-* (comma-separated)".into())
        } else {
            Ok(p.to_string())
        }
    }
    pub fn check(v: Vec<String>) -> Result<Vec<String>, String> {
        if v.is_empty() {
            return Err("list at least one task id or glob".into());
        }
        v.iter().map(|p| parse(p)).collect()
    }
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
        Option::<Vec<String>>::deserialize(d)?
            .map(check)
            .transpose()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_reject_what_would_be_clamped_or_panic() {
        assert!(at_least_one::parse("0").is_err());
        assert_eq!(at_least_one::parse("3"), Ok(3));
        assert!(at_least_one::parse("-1").unwrap_err().contains("not a whole number"));
        assert!(concurrency::parse("0").is_err() && concurrency::parse("4097").is_err());
        assert!(attempts::parse("0").is_err());
        assert!(repeat_limit::parse("1").is_err() && repeat_limit::parse("-1").is_err());
        assert_eq!((repeat_limit::parse("0"), repeat_limit::parse("2")), (Ok(0), Ok(2)));
        for bad in ["0", "-1", "nan", "inf", "86401"] {
            assert!(timeout::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(timeout::parse("0.5"), Ok(0.5));
        assert_eq!(delay::parse("0"), Ok(0.0));
        assert!(delay::parse("-0.1").is_err());
        assert!(per_minute::parse("0").is_err() && per_minute::parse("inf").is_err());
        assert!(temperature::parse("2.5").is_err() && temperature::parse("-0.1").is_err());
        assert_eq!(temperature::parse("2"), Ok(2.0));
        assert!(top_p::parse("1.01").is_err());
        assert!(max_tokens::parse("0").is_err());
        assert!(price::parse("-1").is_err());
        assert!(tool_choice::check("sometimes".into()).is_err());
        for ok in TOOL_CHOICES {
            assert!(tool_choice::check(ok.into()).is_ok());
        }
        assert!(levels::check(vec![10, 0, 10]).is_err() && levels::check(vec![0, 10]).is_ok());
        // Upper bounds: the limit itself passes, one more is refused with the limit in the message.
        for (parse, max) in [
            (trials::parse as fn(&str) -> Result<usize, String>, MAX_TRIALS),
            (jobs::parse, MAX_JOBS),
            (rounds::parse, MAX_ROUNDS),
        ] {
            assert_eq!(parse(&max.to_string()), Ok(max));
            assert!(parse(&(max + 1).to_string()).unwrap_err().contains(&max.to_string()));
            assert!(parse("0").is_err());
        }
        assert!(
            levels::check(vec![MAX_DISTRACTORS]).is_ok()
                && levels::check(vec![MAX_DISTRACTORS + 1]).is_err()
        );
        assert!(name::check(" ".into()).is_err());
        assert!(key_env::check(" ".into()).is_err());
        assert!(task_patterns::parse(" ").is_err() && task_patterns::check(vec![]).is_err());
    }

    #[test]
    fn base_urls_need_an_http_scheme_and_a_host() {
        for bad in [
            "notaurl",
            "127.0.0.1:8080/v1",
            "ftp://host/v1",
            "http://",
            "file:///tmp/x",
            "http://h/v1?x=1",
            "unix:/run/sock",
            "http:///v1",
            "https:///",
            "http://:8080/v1",
            "http://user:pw@/v1",
            "http:/v1",
            "http:v1",
        ] {
            assert!(base_url::parse(bad).is_err(), "{bad}");
        }
        for ok in [
            "http://127.0.0.1:8080/v1",
            "https://api.openai.com/v1",
            "http://localhost:11434/v1/",
            "http://[::1]:8000",
            "http://[::1]/v1",
            "http://u:p@host/v1",
        ] {
            assert_eq!(base_url::parse(ok).as_deref(), Ok(ok));
        }
    }

    /// Generated: key shapes given where a variable name belongs are refused without being repeated;
    /// variable names are accepted.
    #[test]
    fn keys_given_as_variable_names_are_refused_without_echo() {
        let keys = [
            "sk-proj-R3dact1on-T3st-5e1f0a9b7c",
            "sk-ab/cd+ef=",
            "Ab+Cd+Ef0123456789xyz==",
            "9f8e7d6c5b4a392817060f1e2d3c4b5a",
            "a9F3kQ7zL2mX8pR4tV6wB1nC",
            "ghp_0123456789abcdefABCDEF",
            "github_pat_11ABCDEFG0123456789",
        ];
        for key in keys {
            let e = key_env::check(key.into()).unwrap_err();
            assert!(e.contains("this looks like a key") && !e.contains(key), "{key}: {e}");
        }
        for name in
            ["OPENAI_API_KEY", "MY_KEY", "groq_api_key", "_K", "HF_TOKEN", "AZURE_OPENAI_API_KEY_2"]
        {
            assert_eq!(key_env::check(name.into()).as_deref(), Ok(name));
        }
    }

    /// Generated: every way a rejected URL can carry a secret (userinfo, query value, fragment) × every
    /// reason to reject it: the message names the problem and never the secret.
    #[test]
    fn a_rejected_url_never_repeats_its_secret() {
        let secret = "sk-proj-0123456789abcdefXYZ";
        let carriers = [format!("user:{secret}@"), format!("{secret}@"), String::new()];
        let queries = [
            format!("?api_key={secret}"),
            format!("?k={secret}"),
            format!("#token={secret}"),
            String::new(),
        ];
        let mut rejected = 0;
        for scheme in ["http://", "ftp://", "", "http:///"] {
            for carrier in &carriers {
                for query in &queries {
                    for host in ["127.0.0.1:8080", ""] {
                        let url = format!("{scheme}{carrier}{host}/v1{query}");
                        if let Err(m) = base_url::check(url.clone()) {
                            rejected += 1;
                            assert!(
                                !m.contains(secret) && !m.contains("0123456789abcdef"),
                                "{url}: {m}"
                            );
                        }
                    }
                }
            }
        }
        assert!(rejected > 60, "{rejected}");
    }
}
