//! Text analysis and BM25 ranking, shared by the lexical baseline and the progressive layout's
//! `search_documentation`.
//!
//! Analysis: split on non-alphanumerics and camelCase boundaries, lower-case, drop English stop words,
//! Snowball (Porter2) stem. Tool search text and search queries never analyse to nothing: a tool whose
//! name is made only of stop words (real catalogs have tools called `me` or `it`) also carries the raw
//! words of its name and id, and a query of stop words only is matched by its raw words
//! ([`Analyzer::tool_terms`], [`Analyzer::query_terms`]); otherwise such a tool could never be found. Ranking: Okapi BM25 (k1 = 1.2, b = 0.75) with the always-positive idf
//! `ln(1 + (N − df + 0.5) / (df + 0.5))`, so tiny candidate sets (a handful of categories) still rank.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashMap;

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "for", "from",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our",
    "please", "so", "that", "the", "their", "them", "then", "there", "these", "this", "to", "us",
    "was", "we", "what", "when", "which", "who", "will", "with", "would", "you", "your",
];

/// Split text into lower-case words at non-alphanumerics and camelCase boundaries.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in text.chars() {
        if !ch.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
        cur.extend(ch.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `true` when `text` has a content word: a word analysis keeps (not blank, not only stop words).
pub fn has_content_word(text: &str) -> bool {
    words(text).iter().any(|w| !STOP_WORDS.contains(&w.as_str()))
}

/// Turns text into index terms.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer { stemmer: Stemmer::create(Algorithm::English) }
    }
}

impl Analyzer {
    pub fn terms(&self, text: &str) -> Vec<String> {
        words(text)
            .into_iter()
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .map(|w| self.stemmer.stem(&w).into_owned())
            .collect()
    }

    /// The search terms of a tool: the analysed `name` and `text` (description, parameter names, …).
    /// When the name has no content word (`me`, `it`, `do_it`), the raw words of the name and of the
    /// tool id (`server/category/tool`) are added — lower-case, unstemmed, stop words kept — so a search
    /// for the tool by its name ([`Analyzer::query_terms`] keeps those words) still finds it, whatever
    /// the description says. For any other tool this is exactly `terms(name + " " + text)`.
    pub fn tool_terms(&self, name: &str, id: &str, text: &str) -> Vec<String> {
        let mut out = self.terms(&format!("{name} {text}"));
        if !has_content_word(name) {
            out.extend(words(name));
            out.extend(words(id));
        }
        out
    }

    /// The terms of a search query: the analysed words, or — when the query is made only of stop words
    /// (a search for the tool `me` by its name) — its raw lower-case words, which match the raw name
    /// words that [`Analyzer::tool_terms`] keeps for such tools.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let terms = self.terms(query);
        if terms.is_empty() { words(query) } else { terms }
    }
}

/// A BM25 index over a small or large set of documents.
///
/// Terms are interned to ids and every posting stores its final BM25 weight
/// `idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avg_len))`, computed once at build time with the
/// same expression (so the same f32) a query-time computation would give. A query is then a sum of
/// weights over its terms' postings into a reusable accumulator that only visits touched documents:
/// no allocation per query, no pass over the whole collection.
pub struct Bm25 {
    vocab: HashMap<String, u32>,
    /// Per term id: `(doc, weight)` in document order.
    postings: Vec<Vec<(u32, f32)>>,
    doc_len: Vec<f32>,
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Reusable per-thread accumulator for [`Bm25::top_k`].
#[derive(Default)]
pub struct Scratch {
    scores: Vec<f32>,
    touched: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

impl Bm25 {
    /// Index documents given as term lists.
    pub fn new(docs: &[Vec<String>]) -> Self {
        let mut vocab: HashMap<String, u32> = HashMap::new();
        let mut raw: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut doc_len = Vec::with_capacity(docs.len());
        let mut tf: Vec<(u32, f32)> = Vec::new();
        for (d, terms) in docs.iter().enumerate() {
            doc_len.push(terms.len() as f32);
            tf.clear();
            for t in terms {
                let next = vocab.len() as u32;
                let id = *vocab.entry(t.clone()).or_insert(next);
                match tf.iter_mut().find(|(i, _)| *i == id) {
                    Some(e) => e.1 += 1.0,
                    None => tf.push((id, 1.0)),
                }
            }
            raw.resize(vocab.len(), Vec::new());
            for &(id, f) in &tf {
                raw[id as usize].push((d as u32, f));
            }
        }
        let avg_len = if doc_len.is_empty() {
            0.0
        } else {
            doc_len.iter().sum::<f32>() / doc_len.len() as f32
        };
        let avg_len = avg_len.max(1e-6);
        let n = doc_len.len() as f32;
        let postings = raw
            .into_iter()
            .map(|list| {
                let df = list.len() as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                list.into_iter()
                    .map(|(d, tf)| {
                        let norm = K1 * (1.0 - B + B * doc_len[d as usize] / avg_len);
                        (d, idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .collect()
            })
            .collect();
        Bm25 { vocab, postings, doc_len }
    }

    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// Term ids of a query: known terms, each once, in first-occurrence order (repeated query terms
    /// count once).
    pub fn query_ids(&self, query: &[String]) -> Vec<u32> {
        let mut ids: Vec<u32> = Vec::with_capacity(query.len());
        for q in query {
            if let Some(&id) = self.vocab.get(q)
                && !ids.contains(&id)
            {
                ids.push(id);
            }
        }
        ids
    }

    /// BM25 score of every document for the query terms.
    pub fn scores(&self, query: &[String]) -> Vec<f32> {
        let mut scores = vec![0.0f32; self.doc_len.len()];
        for id in self.query_ids(query) {
            for &(d, w) in &self.postings[id as usize] {
                scores[d as usize] += w;
            }
        }
        scores
    }

    /// Documents ranked by score, best first; ties keep document order (deterministic).
    pub fn ranked(&self, query: &[String]) -> Vec<(usize, f32)> {
        let mut r: Vec<(usize, f32)> = self.scores(query).into_iter().enumerate().collect();
        r.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        r
    }

    /// The `k` best documents with a positive score (best first, ties by document order): the head of
    /// [`Bm25::ranked`] without its zero-score tail, without scoring or sorting the whole collection.
    pub fn top_k(&self, query: &[String], k: usize) -> Vec<(usize, f32)> {
        let ids = self.query_ids(query);
        SCRATCH.with(|s| self.top_k_ids(&ids, k, &mut s.borrow_mut()))
    }

    /// [`Bm25::top_k`] for term ids from [`Bm25::query_ids`], with a caller-held accumulator (the batched
    /// path: analyse many queries, then score them back to back).
    pub fn top_k_ids(&self, ids: &[u32], k: usize, scratch: &mut Scratch) -> Vec<(usize, f32)> {
        if scratch.scores.len() < self.doc_len.len() {
            scratch.scores.resize(self.doc_len.len(), 0.0);
        }
        let scores = &mut scratch.scores;
        for &id in ids {
            for &(d, w) in &self.postings[id as usize] {
                let s = &mut scores[d as usize];
                if *s == 0.0 {
                    scratch.touched.push(d);
                }
                *s += w;
            }
        }
        let mut best: Vec<(usize, f32)> = Vec::with_capacity(k + 1);
        let better = |a: (usize, f32), b: (usize, f32)| a.1 > b.1 || (a.1 == b.1 && a.0 < b.0);
        for &d in &scratch.touched {
            let cand = (d as usize, scores[d as usize]);
            scores[d as usize] = 0.0;
            if k == 0 || (best.len() == k && !better(cand, best[k - 1])) {
                continue;
            }
            let at = best.iter().position(|b| better(cand, *b)).unwrap_or(best.len());
            best.insert(at, cand);
            best.truncate(k);
        }
        scratch.touched.clear();
        best
    }
}

/// `*` matches any run of characters (also none), `?` exactly one; everything else literally.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Greedy with backtracking to the last `*`: linear in practice, never exponential.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// `text` on one line (every run of whitespace one space), cut at `max` characters with " …" when longer:
/// how a tool result is quoted in a final answer or shown to a judge.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = flat.chars().take(max).collect();
    if cut.len() < flat.len() { format!("{cut} …") } else { cut }
}

/// The most characters of one piece of a call (a name, a key, a value) that an answer quotes back.
pub const ECHO_MAX_CHARS: usize = 200;

/// A piece of a call as an error message quotes it: whole up to [`ECHO_MAX_CHARS`] characters, else
/// cut there and saying how much was cut. Every message that names what the model sent goes through
/// this, so a 5 MB argument or name costs a few hundred characters, not its size, wherever it lands
/// (the model's next prompt, a served session, the transcript).
pub fn echo(text: &str) -> std::borrow::Cow<'_, str> {
    capped(text, ECHO_MAX_CHARS)
}

/// `text` cut to `max` characters, saying how many more there were.
pub fn capped(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((at, _)) => {
            let rest = text[at..].chars().count();
            std::borrow::Cow::Owned(format!("{}… ({rest} more characters cut)", &text[..at]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_keeps_short_text_and_counts_what_it_cuts() {
        assert_eq!(capped("héllo", 5), "héllo");
        assert_eq!(capped("héllo wörld", 5), "héllo… (6 more characters cut)");
        assert!(matches!(echo("short"), std::borrow::Cow::Borrowed("short")));
    }

    #[test]
    fn top_k_is_the_positive_head_of_the_full_ranking() {
        let a = Analyzer::default();
        let docs: Vec<Vec<String>> = [
            "send an email message to a contact",
            "read email messages in the inbox",
            "forecast the weather for a city",
            "current weather in a city",
            "delete an email message",
            "email email email weather",
            "unrelated text about payments",
        ]
        .iter()
        .map(|d| a.terms(d))
        .collect();
        let index = Bm25::new(&docs);
        for q in [
            "email",
            "weather city",
            "delete the email message",
            "payments email weather",
            "nothing matches",
            "email email",
        ] {
            let terms = a.terms(q);
            let full: Vec<(usize, f32)> =
                index.ranked(&terms).into_iter().filter(|(_, s)| *s > 0.0).collect();
            for k in [0, 1, 2, 3, 10] {
                let want: Vec<(usize, f32)> = full.iter().take(k).copied().collect();
                assert_eq!(index.top_k(&terms, k), want, "query {q:?}, k {k}");
            }
        }
        assert!(index.top_k(&a.terms("nothing matches"), 1).is_empty());
    }

    #[test]
    fn words_split_snake_camel_and_punctuation() {
        assert_eq!(
            words("sendEmail to_the-Team's INBOX"),
            vec!["send", "email", "to", "the", "team", "s", "inbox"]
        );
        assert_eq!(words("getHTTPStatus"), vec!["get", "httpstatus"]);
    }

    #[test]
    fn analyzer_stems_and_drops_stop_words() {
        let a = Analyzer::default();
        assert_eq!(a.terms("Listing the channels"), vec!["list", "channel"]);
        assert_eq!(a.terms("create_pull_requests"), vec!["creat", "pull", "request"]);
    }

    #[test]
    fn tools_and_queries_of_stop_words_keep_their_raw_words() {
        let a = Analyzer::default();
        // A name of stop words alone: the raw name and id words are added, unstemmed.
        assert_eq!(
            a.tool_terms("me", "ticketbud/business_of_ticketbud/me", ""),
            vec!["me", "ticketbud", "business", "of", "ticketbud", "me"]
        );
        assert_eq!(
            a.tool_terms("it", "s/c/it", "ticket_key"),
            vec!["ticket", "key", "it", "s", "c", "it"]
        );
        // Any other tool: exactly the analysed text.
        assert_eq!(
            a.tool_terms("get_weather", "s/c/get_weather", "Current weather"),
            vec!["get", "weather", "current", "weather"]
        );
        assert_eq!(a.query_terms("me"), vec!["me"]);
        assert_eq!(a.query_terms("tell me the weather"), vec!["tell", "weather"]);
        assert!(a.query_terms(" - ").is_empty());
        assert!(has_content_word("get it") && !has_content_word("it") && !has_content_word(" - "));
    }

    #[test]
    fn bm25_prefers_rarer_matching_terms_and_shorter_docs() {
        let a = Analyzer::default();
        let docs: Vec<Vec<String>> = [
            "send email message",
            "send chat message to channel with many extra words here",
            "weather forecast",
        ]
        .iter()
        .map(|d| a.terms(d))
        .collect();
        let idx = Bm25::new(&docs);
        let r = idx.ranked(&a.terms("email"));
        assert_eq!(r[0].0, 0);
        assert!(r[1].1 == 0.0);
        // "message" occurs in two docs: the shorter one wins
        let r = idx.ranked(&a.terms("message"));
        assert_eq!(r[0].0, 0);
        assert!(r[0].1 > r[1].1 && r[1].1 > 0.0);
        assert_eq!(idx.scores(&a.terms("nothing matches")), vec![0.0, 0.0, 0.0]);
    }
}
