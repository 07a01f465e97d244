//! Secrets never reach an output: one [`Redactor`] removes the configured API key(s) from every string
//! that comes from an endpoint or goes into an error message, before it can reach a trial record, the
//! response cache, a log line or a report.
//!
//! An endpoint may echo the key it was sent — in an error body ("Incorrect API key provided: sk-…"), a
//! header, a `Basic` credential, a URL — in any encoding it likes, so a key is found:
//! - **as is, hex-encoded** (lower and upper case) **and base64-encoded** (standard and URL-safe, at
//!   each of the three byte alignments it can have inside a longer base64 string, as in
//!   `base64("user:" + key)`): these forms are searched for literally;
//! - **behind any mix of escapes** — JSON (`\/`, `\"`, `\uXXXX`), `\xHH`, percent-encoding, HTML
//!   character references, nested (`\\/` is a JSON body quoted in a JSON record) — by searching
//!   decoded views of the text as well ([`decode`]) and cutting the whole escaped run out of it.
//!
//! Matching is one Aho–Corasick pass per view for all forms of all keys, longest form first, so the
//! cost does not grow with the number of keys; text without `\`, `%` or `&` has one view (`cargo
//! bench --bench redact` measures both cases).
//!
//! URLs carry credentials of their own: [`url::display`] is how a URL is shown or stored (userinfo
//! and secret-looking query values replaced), and [`url::install`] registers the credentials of an
//! accepted URL here, so no message quoting it prints them.
//!
//! Where it is applied (defence in depth, the first is the rule):
//! - the `openai` backend redacts each response body and error before it is parsed, cached or kept;
//! - the runner redacts each trial record as it is appended to `trials.jsonl`;
//! - the CLI redacts every line it prints (stdout results, the final error).
//!
//! Any other writer of text that may hold a key calls [`global`]`().redact_bytes(line)` (or
//! `redact`, `redact_json`) on each line it writes; these entry points are stable.
//!
//! The keys are the values of the environment variables the run's models read (`api_key_env`), plus
//! `OPENAI_API_KEY`; [`install_for`] registers them process-wide, and [`global`] is the redactor in use.

pub mod decode;
pub mod url;

use aho_corasick::{AhoCorasick, MatchKind};
use std::borrow::Cow;
use std::sync::{Arc, RwLock};

/// What a secret is replaced with.
pub const MARK: &str = "[REDACTED]";

/// Keys shorter than this are not redacted: a 1–3 character "key" would blank ordinary text, and no
/// real API key is that short.
pub const MIN_KEY_LEN: usize = 4;

/// Shortest base64 fragment searched for: shorter fragments of a short key would match by chance.
const MIN_FRAGMENT: usize = 8;

/// Removes a fixed set of secrets, in all their written forms, from text.
#[derive(Clone, Default)]
pub struct Redactor {
    keys: Vec<String>,
    matcher: Option<AhoCorasick>,
}

impl std::fmt::Debug for Redactor {
    // Never print the keys themselves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} key(s))", self.keys.len())
    }
}

impl Redactor {
    /// A redactor for `keys` (empty and too-short ones are ignored; duplicates are merged).
    pub fn new<I, S>(keys: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut kept: Vec<String> = keys
            .into_iter()
            .map(|k| k.as_ref().to_string())
            .filter(|k| k.chars().count() >= MIN_KEY_LEN)
            .collect();
        kept.sort();
        kept.dedup();
        let mut patterns: Vec<String> = kept.iter().flat_map(|k| forms(k)).collect();
        patterns.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        patterns.dedup();
        let matcher = (!patterns.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .expect("literal patterns always build")
        });
        Redactor { keys: kept, matcher }
    }

    /// Whether there is anything to redact.
    pub fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// This redactor and `other`'s keys together.
    pub fn with(&self, other: &Redactor) -> Redactor {
        Redactor::new(self.keys.iter().chain(&other.keys))
    }

    /// `text` with every form of every key replaced by [`MARK`]; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.redact_bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // Cuts fall on whole characters (a key form is whole characters; a decoded view maps
            // back to whole escapes), so the result is UTF-8; lossy only as a guard.
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        }
    }

    /// Bytes (e.g. a serialised record) with every form of every key replaced by [`MARK`].
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(m) = &self.matcher else { return Cow::Borrowed(bytes) };
        let mut spans: Vec<(usize, usize)> =
            m.find_iter(bytes).map(|f| (f.start(), f.end())).collect();
        if decode::may_have_escapes(bytes) {
            // Views of views, each mapped back through the ones before it to the bytes given.
            let mut views: Vec<decode::View> = Vec::new();
            while views.len() < decode::MAX_DEPTH {
                let source = views.last().map_or(bytes, |v| v.bytes.as_slice());
                let Some(view) = decode::decode(source) else { break };
                for f in m.find_iter(&view.bytes) {
                    let mut span = view.to_source(f.start(), f.end());
                    for outer in views.iter().rev() {
                        span = outer.to_source(span.0, span.1);
                    }
                    spans.push(span);
                }
                views.push(view);
            }
        }
        if spans.is_empty() {
            return Cow::Borrowed(bytes);
        }
        spans.sort_unstable();
        let mut out = Vec::with_capacity(bytes.len());
        let mut copied = 0;
        for (start, end) in spans {
            if end <= copied {
                continue; // inside a span already cut
            }
            if start >= copied {
                out.extend_from_slice(&bytes[copied..start]);
                out.extend_from_slice(MARK.as_bytes());
            }
            copied = end;
        }
        out.extend_from_slice(&bytes[copied..]);
        Cow::Owned(out)
    }

    /// Redact every string (and object key) of a JSON value in place; `true` when something changed.
    pub fn redact_json(&self, value: &mut serde_json::Value) -> bool {
        use serde_json::Value;
        if self.is_empty() {
            return false;
        }
        match value {
            Value::String(s) => match self.redact(s) {
                Cow::Owned(r) => {
                    *s = r;
                    true
                }
                Cow::Borrowed(_) => false,
            },
            Value::Array(items) => {
                items.iter_mut().fold(false, |changed, v| self.redact_json(v) | changed)
            }
            Value::Object(map) => {
                let mut changed = false;
                if map.keys().any(|k| matches!(self.redact(k), Cow::Owned(_))) {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        map.insert(self.redact(&k).into_owned(), v);
                    }
                    changed = true;
                }
                map.values_mut().fold(changed, |changed, v| self.redact_json(v) | changed)
            }
            _ => false,
        }
    }
}

/// Every literal form of `key` that is searched for (escaped forms are found through the views).
fn forms(key: &str) -> Vec<String> {
    let mut out = vec![key.to_string()];
    let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    out.push(hex.to_uppercase());
    out.push(hex);
    // base64 at each alignment: the key after 0, 1 or 2 bytes of something else. Only the characters
    // that depend on the key's bytes alone are kept (the first group is mixed with the prefix when
    // the alignment is not 0, the last group with whatever follows or with padding).
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(key.as_bytes());
        let encoded = base64(&bytes);
        let start = if offset == 0 { 0 } else { 4 };
        let full = (offset + key.len()) / 3; // groups made only of prefix and key bytes
        let end = full * 4;
        if end > start && end - start >= MIN_FRAGMENT {
            let fragment = &encoded[start..end];
            out.push(fragment.to_string());
            out.push(fragment.replace('+', "-").replace('/', "_"));
        }
        if offset == 0 {
            // The whole key encoded on its own, with padding (e.g. a header holding just the key).
            out.push(encoded.clone());
            out.push(encoded.replace('+', "-").replace('/', "_"));
        }
    }
    out.retain(|f| !f.is_empty());
    out
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

static GLOBAL: RwLock<Option<Arc<Redactor>>> = RwLock::new(None);

/// The process-wide redactor (empty until [`install`] / [`install_for`]).
pub fn global() -> Arc<Redactor> {
    GLOBAL.read().expect("redactor lock").clone().unwrap_or_default()
}

/// Add `redactor`'s keys to the process-wide redactor (keys are only ever added, so a redactor
/// installed by one run in a process keeps working for output of another).
pub fn install(redactor: &Redactor) {
    let mut g = GLOBAL.write().expect("redactor lock");
    let merged = match g.as_ref() {
        Some(old) => old.with(redactor),
        None => redactor.clone(),
    };
    *g = Some(Arc::new(merged));
}

/// The keys in the environment variables `names` (unset and empty ones skipped), plus `OPENAI_API_KEY`.
pub fn keys_from_env<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    names
        .into_iter()
        .chain(["OPENAI_API_KEY"])
        .filter_map(|n| std::env::var(n).ok())
        .filter(|k| !k.is_empty())
        .collect()
}

/// Register the keys of the environment variables `names` (see [`keys_from_env`]) process-wide.
pub fn install_for<'a>(names: impl IntoIterator<Item = &'a str>) {
    install(&Redactor::new(keys_from_env(names)));
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-9f8e7d6c5b4a39281706";

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), enc, "{plain}");
        }
    }

    #[test]
    fn the_key_is_removed_in_every_form() {
        let r = Redactor::new([KEY]);
        let text = format!("Incorrect API key provided: {KEY}. Bearer {KEY}");
        assert_eq!(r.redact(&text), format!("Incorrect API key provided: {MARK}. Bearer {MARK}"));
        // Inside a Basic credential, for every user-name length (each base64 alignment).
        for user in ["", "u", "us", "use", "user", "someone"] {
            for sep in [":", ""] {
                let basic = base64(format!("{user}{sep}{KEY}").as_bytes());
                let out = r.redact(&format!("Authorization: Basic {basic}")).into_owned();
                assert!(out.contains(MARK), "user {user:?}: {out}");
                // Left around the mark: the user name's characters and at most two groups mixed with it or padding.
                let left = out.replace(MARK, "");
                let bound = "Authorization: Basic ".len()
                    + base64(format!("{user}{sep}").as_bytes()).len()
                    + 8;
                assert!(left.len() <= bound, "user {user:?}: {out}");
            }
        }
        let url_safe = base64(KEY.as_bytes()).replace('+', "-").replace('/', "_");
        assert!(!r.redact(&url_safe).contains(&url_safe[..16]));
        assert_eq!(r.redact("nothing to see"), Cow::Borrowed("nothing to see"));
    }

    #[test]
    fn escaped_and_encoded_forms_of_an_odd_key() {
        let key = "ab\"cd\\ef gh/ij";
        let r = Redactor::new([key]);
        let record =
            serde_json::to_string(&serde_json::json!({"error": format!("bad key {key}")})).unwrap();
        assert!(
            !String::from_utf8(r.redact_bytes(record.as_bytes()).into_owned())
                .unwrap()
                .contains("cd\\\\ef")
        );
        let encoded: String = key
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        assert_eq!(r.redact(&format!("?key={encoded}")), format!("?key={MARK}"));
    }

    #[test]
    fn json_values_are_redacted_deeply_keys_included() {
        let r = Redactor::new([KEY]);
        let mut v = serde_json::json!({"a": [1, {"b": format!("x{KEY}y")}], KEY: "v", "n": null});
        assert!(r.redact_json(&mut v));
        let s = v.to_string();
        assert!(!s.contains(KEY), "{s}");
        assert_eq!(v["a"][1]["b"], format!("x{MARK}y"));
        let mut clean = serde_json::json!({"a": "b"});
        assert!(!r.redact_json(&mut clean));
    }

    #[test]
    fn short_and_empty_keys_are_ignored_and_debug_hides_keys() {
        let r = Redactor::new(["", "abc"]);
        assert!(r.is_empty());
        assert_eq!(r.redact("abc abc"), "abc abc");
        let r = Redactor::new([KEY, KEY]);
        assert!(!format!("{r:?}").contains(KEY));
    }

    #[test]
    fn several_keys_and_overlapping_forms() {
        let other = "another-secret-value-123";
        let r = Redactor::new([KEY, other]);
        let out = r.redact(&format!("{other}{KEY} {}", base64(other.as_bytes()))).into_owned();
        assert!(
            !out.contains(KEY)
                && !out.contains(other)
                && !out.contains(&base64(other.as_bytes())[..12]),
            "{out}"
        );
    }

    /// Key shapes an API key can have: with `/`, with `+` and `=`, hex-looking, long random.
    fn key_shapes() -> Vec<String> {
        let mut keys = vec![
            "sk-proj-ab/cd/ef0123456789".to_string(),
            "Ab+Cd+Ef0123456789xyz==".to_string(),
            "9f8e7d6c5b4a392817060f1e2d3c4b5a".to_string(),
        ];
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/+=.";
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for len in [24, 64, 131] {
            keys.push(
                (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        alphabet[(x % alphabet.len() as u64) as usize] as char
                    })
                    .collect(),
            );
        }
        keys
    }

    /// Every encoding of `key` an endpoint can write, by name; each is written here its own plain way.
    fn encodings(key: &str) -> Vec<(&'static str, String)> {
        let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
        let every_percent: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
        let url: String = key
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02x}")
                }
            })
            .collect();
        vec![
            ("raw", key.to_string()),
            ("json \\/", key.replace('/', "\\/")),
            ("json \\u every char", key.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()),
            (
                "json \\u some chars",
                key.chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_string()
                        } else {
                            format!("\\u{:04X}", c as u32)
                        }
                    })
                    .collect(),
            ),
            ("hex lower", hex.clone()),
            ("hex upper", hex.to_uppercase()),
            ("\\x", key.bytes().map(|b| format!("\\x{b:02x}")).collect()),
            ("percent every byte", every_percent.clone()),
            ("percent every byte, lower", every_percent.to_lowercase()),
            ("url-encoded", url),
            (
                "html references",
                key.chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_string()
                        } else {
                            format!("&#x{:X};", c as u32)
                        }
                    })
                    .collect(),
            ),
            ("base64", base64(key.as_bytes())),
            ("base64 url-safe", base64(key.as_bytes()).replace('+', "-").replace('/', "_")),
            ("base64 json \\/", base64(key.as_bytes()).replace('/', "\\/")),
            ("basic credential", base64(format!("user:{key}").as_bytes())),
        ]
    }

    /// Generated: every key shape × every encoding × as written, quoted once in JSON and quoted twice
    /// (a body quoted in an error quoted in a record). The encoded key is gone, the text around it
    /// stays, and a JSON context is still JSON.
    #[test]
    fn every_key_shape_in_every_encoding_and_nesting_is_removed() {
        let mut cases = 0;
        for key in key_shapes() {
            let r = Redactor::new([key.as_str()]);
            for (name, encoded) in encodings(&key) {
                let text = format!("before «{encoded}» after");
                let once = serde_json::to_string(&serde_json::json!({"error": text})).unwrap();
                let twice = serde_json::to_string(&serde_json::json!({"line": once})).unwrap();
                for (depth, written) in [(0, &text), (1, &once), (2, &twice)] {
                    cases += 1;
                    let out = r.redact(written).into_owned();
                    // What must be gone: the encoding as written at this depth, or (base64, where a
                    // group mixes with neighbours) its middle.
                    let mut needle = encoded.clone();
                    for _ in 0..depth {
                        let quoted = serde_json::to_string(&needle).unwrap();
                        needle = quoted[1..quoted.len() - 1].to_string();
                    }
                    let needle = if name.starts_with("base64") || name.starts_with("basic") {
                        needle[8..needle.len() - 8].to_string()
                    } else {
                        needle
                    };
                    assert!(
                        !out.contains(&needle),
                        "{name} at depth {depth} of {key:?} survived: {out}"
                    );
                    assert!(
                        out.contains("before «") && out.contains("» after") && out.contains(MARK),
                        "{name} at depth {depth}: {out}"
                    );
                    if depth > 0 {
                        let back: serde_json::Value = serde_json::from_str(&out)
                            .unwrap_or_else(|e| panic!("{name} at depth {depth}: {e}: {out}"));
                        assert!(!back.to_string().contains(&key), "{name} at depth {depth}");
                    }
                }
            }
        }
        assert_eq!(cases, 6 * 15 * 3);
    }

    #[test]
    fn keys_are_not_found_where_they_are_not() {
        let r = Redactor::new(key_shapes());
        let text = r#"{"query": "50% off \u00e9t\u00e9 &amp; more \/ see http://x.test/a%2Fb?c=d", "n": 12}"#;
        assert!(matches!(r.redact(text), Cow::Borrowed(_)), "{}", r.redact(text));
    }
}
