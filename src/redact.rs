//! Secrets never reach an output: one [`Redactor`] removes the configured API key(s) from every string
//! that comes from an endpoint or goes into an error message, before it can reach a trial record, the
//! response cache, a log line or a report.
//!
//! An endpoint may echo the key it was sent — in an error body ("Incorrect API key provided: sk-…"), a
//! header, a `Basic` credential, a URL — so each key is matched in every form it is commonly written
//! in: as is, JSON-escaped, percent-encoded, and base64 (standard and URL-safe) at each of the three
//! byte alignments it can have inside a longer base64 string (`base64("user:" + key)`). Matching is one
//! Aho–Corasick pass over the text for all forms of all keys, longest form first, so the cost does
//! not grow with the number of keys (about 0.4 µs for a 4 KB trial record; `cargo bench --bench
//! redact`).
//!
//! Where it is applied (defence in depth, the first is the rule):
//! - the `openai` backend redacts each response body and error before it is parsed, cached or kept;
//! - the runner redacts each trial record as it is appended to `trials.jsonl`;
//! - the CLI redacts every line it prints (stdout results, the final error).
//!
//! The keys are the values of the environment variables the run's models read (`api_key_env`), plus
//! `OPENAI_API_KEY`; [`install_for`] registers them process-wide, and [`global`] is the redactor in use.

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
        let mut kept: Vec<String> = keys.into_iter().map(|k| k.as_ref().to_string()).filter(|k| k.chars().count() >= MIN_KEY_LEN).collect();
        kept.sort();
        kept.dedup();
        let mut patterns: Vec<String> = kept.iter().flat_map(|k| forms(k)).collect();
        patterns.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        patterns.dedup();
        let matcher = (!patterns.is_empty())
            .then(|| AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).build(&patterns).expect("literal patterns always build"));
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
        match &self.matcher {
            Some(m) if m.is_match(text) => {
                let mut out = String::with_capacity(text.len());
                m.replace_all_with(text, &mut out, |_, _, out| {
                    out.push_str(MARK);
                    true
                });
                Cow::Owned(out)
            }
            _ => Cow::Borrowed(text),
        }
    }

    /// Bytes (e.g. a serialised record) with every form of every key replaced by [`MARK`].
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.matcher {
            Some(m) if m.is_match(bytes) => {
                let mut out = Vec::with_capacity(bytes.len());
                m.replace_all_with_bytes(bytes, &mut out, |_, _, out| {
                    out.extend_from_slice(MARK.as_bytes());
                    true
                });
                Cow::Owned(out)
            }
            _ => Cow::Borrowed(bytes),
        }
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
            Value::Array(items) => items.iter_mut().fold(false, |changed, v| self.redact_json(v) | changed),
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

/// Every written form of `key` that is searched for.
fn forms(key: &str) -> Vec<String> {
    let mut out = vec![key.to_string()];
    // JSON-escaped (a key with quotes, backslashes or control characters inside a serialised record).
    let json = serde_json::to_string(key).expect("a string serialises");
    out.push(json[1..json.len() - 1].to_string());
    out.push(percent_encode(key));
    // Every byte percent-encoded, as some clients write a whole credential.
    let every: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    out.push(every.to_lowercase());
    out.push(every);
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

/// Percent-encode everything but RFC 3986 unreserved characters.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
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
    names.into_iter().chain(["OPENAI_API_KEY"]).filter_map(|n| std::env::var(n).ok()).filter(|k| !k.is_empty()).collect()
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
        for (plain, enc) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")] {
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
                let bound = "Authorization: Basic ".len() + base64(format!("{user}{sep}").as_bytes()).len() + 8;
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
        let record = serde_json::to_string(&serde_json::json!({"error": format!("bad key {key}")})).unwrap();
        assert!(!String::from_utf8(r.redact_bytes(record.as_bytes()).into_owned()).unwrap().contains("cd\\\\ef"));
        assert_eq!(r.redact(&format!("?key={}", percent_encode(key))), format!("?key={MARK}"));
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
        assert!(!out.contains(KEY) && !out.contains(other) && !out.contains(&base64(other.as_bytes())[..12]), "{out}");
    }
}
