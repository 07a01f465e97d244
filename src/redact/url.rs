//! Credentials inside URLs: a URL is shown and stored with its userinfo (`user:password@`) and its
//! secret-looking query and fragment values replaced by [`MARK`](super::MARK), and the secrets of a
//! URL toolpick accepted are registered with the process-wide redactor, so nothing that quotes the
//! URL later (a transport error, a preflight line) can print them either.
//!
//! The display form is computed from the text, not from a parsed URL: a URL is shown in the error
//! that rejects it, and a rejected URL may not parse at all (`user:sk-…@host/v1` has no scheme).

use super::MARK;
use std::borrow::Cow;

/// Query and fragment parameter names whose value is a secret, matched as a substring of the
/// lower-cased name (`api_key`, `X-Api-Key`, `access_token`, `client_secret`, `sig`, …).
const SECRET_NAMES: [&str; 10] =
    ["key", "token", "secret", "pass", "pwd", "auth", "sig", "cred", "session", "code"];

/// Prefixes of API keys as providers issue them; a value starting with one is a key whatever its
/// length or alphabet beyond the prefix.
const KEY_PREFIXES: [&str; 20] = [
    "sk-",
    "sk_",
    "pk_",
    "rk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "ASIA",
    "AIza",
    "hf_",
    "gsk_",
    "xai-",
    "nvapi-",
];

/// Shortest value judged by its shape alone (below it, ordinary words and ids would match).
const MIN_SHAPED: usize = 16;

/// Whether `s` looks like an API key rather than a word, a name or a number: a provider's key prefix
/// followed by at least 8 more characters; or at least 32 hex digits mixing letters and digits (a hex
/// token); or, with no space, at least 16 letters and digits whose class (lower, upper, digit)
/// changes at least at every other one within runs of them, as in random tokens
/// (`MyVeryLongVariableName2024` changes 10 times in 26; `9fQk2LzA0xWp7RbT` 15 times in 16).
pub fn looks_like_key(s: &str) -> bool {
    let s = s.trim();
    if s.chars().any(char::is_whitespace) {
        return false;
    }
    if KEY_PREFIXES.iter().any(|p| s.len() >= p.len() + 8 && s.starts_with(p)) {
        return true;
    }
    let hex = s.chars().all(|c| c.is_ascii_hexdigit());
    if hex
        && s.len() >= 32
        && s.chars().any(|c| c.is_ascii_digit())
        && s.chars().any(|c| c.is_ascii_alphabetic())
    {
        return true;
    }
    // Character classes of the alphanumerics; punctuation separates runs (`Qwen2.5-7B` is words and
    // numbers joined, not a random string) and is not counted.
    let class = |c: char| {
        if c.is_ascii_digit() {
            2
        } else if c.is_uppercase() {
            1
        } else {
            0
        }
    };
    let (mut n, mut changes, mut digits, mut letters) = (0, 0, false, false);
    let mut previous: Option<u8> = None;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            previous = None;
            continue;
        }
        let k = class(c);
        n += 1;
        digits |= k == 2;
        letters |= k != 2;
        changes += usize::from(previous.is_some_and(|p| p != k));
        previous = Some(k);
    }
    n >= MIN_SHAPED && digits && letters && changes * 2 >= n
}

fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| name.contains(s))
}

/// Whether a query or fragment value is hidden: named like a secret, or (decoded) looking like a
/// key, or a token of at least 8 characters mixing letters and digits — a URL's query is no place
/// toolpick needs to show, and a key that is not random enough to look like one is still a key.
fn secret_param(name: &str, value: &str) -> bool {
    let decoded = percent_decoded(value);
    let value = decoded.as_deref().unwrap_or(value);
    let token = value.chars().count() >= MIN_REGISTERED
        && value.chars().any(|c| c.is_ascii_digit())
        && value.chars().any(char::is_alphabetic);
    secret_name(name) || looks_like_key(value) || token
}

/// Where the parts of a URL-like text are: the authority (after `scheme://`, or from the start when
/// there is no scheme) and the query/fragment that follows the path.
struct Parts {
    authority: std::ops::Range<usize>,
    rest: usize,
}

fn parts(s: &str) -> Parts {
    // As lenient as URL parsers are with special schemes: `http:///u:p@h`, `http:/u:p@h`,
    // `http:\\u:p@h` and `http:u:p@h` all have the authority `u:p@h`.
    let scheme = s.find(':').filter(|&i| {
        i > 0 && s[..i].chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let start = scheme
        .map_or(0, |i| i + 1 + s[i + 1..].chars().take_while(|c| matches!(c, '/' | '\\')).count());
    let end = s[start..].find(['/', '\\', '?', '#']).map(|i| start + i).unwrap_or(s.len());
    let rest = s[end..].find(['?', '#']).map(|i| end + i).unwrap_or(s.len());
    Parts { authority: start..end, rest }
}

/// The secrets a URL carries: its userinfo (whole, and the password alone), and its secret query and
/// fragment values (see the module documentation). Percent-encoded values are
/// returned decoded too (the redactor decodes what it searches, but a secret given encoded in the
/// URL may be written decoded elsewhere).
pub fn secrets(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let p = parts(s);
    let authority = &s[p.authority.clone()];
    if let Some(at) = authority.rfind('@') {
        let userinfo = &authority[..at];
        out.push(userinfo.to_string());
        if let Some((_, password)) = userinfo.split_once(':') {
            out.push(password.to_string());
        }
    }
    for (name, value) in params(&s[p.rest..]) {
        if secret_param(name, value) {
            out.push(value.to_string());
        }
    }
    let decoded: Vec<String> = out.iter().filter_map(|v| percent_decoded(v)).collect();
    out.extend(decoded);
    out.retain(|v| !v.is_empty());
    out
}

fn percent_decoded(s: &str) -> Option<String> {
    let view = super::decode::decode(s.as_bytes())?;
    String::from_utf8(view.bytes).ok()
}

/// The `name=value` pairs of a query and fragment (`?a=1&b=2#c=3`), as slices of `rest`.
fn params(rest: &str) -> impl Iterator<Item = (&str, &str)> {
    rest.split(['?', '&', ';', '#'])
        .filter_map(|pair| pair.split_once('='))
        .filter(|(_, v)| !v.is_empty())
}

/// `s` (a URL, or what was given as one) as it may be shown: the userinfo before `@` replaced by
/// [`MARK`], and so is every secret query or fragment value (see the module documentation).
/// Borrowed when there is nothing to hide.
pub fn display(s: &str) -> Cow<'_, str> {
    let p = parts(s);
    let authority = &s[p.authority.clone()];
    let mut out = String::new();
    let mut copied = 0;
    if let Some(at) = authority.rfind('@') {
        out.push_str(&s[..p.authority.start]);
        out.push_str(MARK);
        copied = p.authority.start + at;
    }
    // Each `name=value` of the query and fragment, in order.
    let mut pos = p.rest;
    while pos < s.len() {
        let end = s[pos + 1..].find(['?', '&', ';', '#']).map(|i| pos + 1 + i).unwrap_or(s.len());
        let pair = &s[pos + 1..end];
        if let Some((name, value)) = pair.split_once('=')
            && !value.is_empty()
            && secret_param(name, value)
        {
            let value_start = end - value.len();
            out.push_str(&s[copied..value_start]);
            out.push_str(MARK);
            copied = end;
        }
        pos = end;
    }
    if copied == 0 && out.is_empty() {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[copied..]);
    Cow::Owned(out)
}

/// Register the secrets of `url` (see [`secrets`]) with the process-wide redactor, so any later
/// output quoting the URL or its credentials is redacted. A userinfo shorter than
/// [`MIN_KEY_LEN`](super::MIN_KEY_LEN) is only hidden where the URL is displayed; a password
/// shorter than [`MIN_REGISTERED`] is registered only as part of its `user:password` (a short word
/// such as `pass` would otherwise be blanked in every message).
pub fn install(url: &str) {
    let found: Vec<String> = secrets(url)
        .into_iter()
        .filter(|v| v.contains(':') || v.chars().count() >= MIN_REGISTERED)
        .collect();
    if !found.is_empty() {
        super::install(&super::Redactor::new(found));
    }
}

/// Shortest URL secret (other than a whole userinfo) registered process-wide.
pub const MIN_REGISTERED: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_told_from_names_and_words() {
        for key in [
            "sk-proj-R3dact1on-T3st-5e1f0a9b7c",
            "ghp_0123456789abcdefABCDEF",
            "9fQk2LzA0xWp7RbT",
            "0123456789abcdef0123456789abcdef",
            "deadbeefcafe0123deadbeefcafe0123",
            "AIzaSyA-1234567890abcdefgh",
            "a1B2c3D4e5F6g7H8i9J0",
        ] {
            assert!(looks_like_key(key), "{key}");
        }
        for word in [
            "OPENAI_API_KEY",
            "MY_KEY",
            "MyVeryLongVariableName2024",
            "qwen2.5-7b-instruct",
            "Qwen/Qwen2.5-7B-Instruct",
            "gpt-4o-mini",
            "sk-short",
            "hello world 12345678",
            "2026-12-03T10:00:00Z",
        ] {
            assert!(!looks_like_key(word), "{word}");
        }
    }

    #[test]
    fn userinfo_and_secret_query_values_are_hidden() {
        let cases = [
            ("http://user:pw@host:8080/v1", "http://[REDACTED]@host:8080/v1"),
            ("https://h/v1?api_key=abc&x=1", "https://h/v1?api_key=[REDACTED]&x=1"),
            (
                "https://h/v1?model=gpt-4o&k=sk-proj-0123456789abcdef#access_token=t0k",
                "https://h/v1?model=gpt-4o&k=[REDACTED]#access_token=[REDACTED]",
            ),
            ("user:sk-live-0123456789@host/v1", "user:[REDACTED]@host/v1"),
            ("http:///user:pw@host/v1", "http:///[REDACTED]@host/v1"),
            ("http:u:pw@host/v1", "http:[REDACTED]@host/v1"),
            (
                "http://a:b@c:d@host/v1?Token=x;sig=y",
                "http://[REDACTED]@host/v1?Token=[REDACTED];sig=[REDACTED]",
            ),
            ("http://host/v1/chat@x", "http://host/v1/chat@x"),
        ];
        for (given, shown) in cases {
            assert_eq!(display(given), shown, "{given}");
        }
        assert!(matches!(display("http://127.0.0.1:8080/v1?x=1"), Cow::Borrowed(_)));
    }

    #[test]
    fn secrets_are_listed_decoded_too() {
        let s = secrets("http://me:p%40ss%2Fword@h/v1?token=a%2Bb&q=plain");
        for want in ["me:p%40ss%2Fword", "p%40ss%2Fword", "p@ss/word", "a%2Bb", "a+b"] {
            assert!(s.iter().any(|v| v == want), "{want} in {s:?}");
        }
        assert!(!s.iter().any(|v| v == "plain"));
    }
}
