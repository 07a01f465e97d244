//! Text analysis and BM25 ranking, shared by the lexical baseline and the progressive layout's
//! `search_documentation`.
//!
//! Analysis: split on non-alphanumerics and camelCase boundaries, lower-case, drop English stop words,
//! Snowball (Porter2) stem. Ranking: Okapi BM25 (k1 = 1.2, b = 0.75) with the always-positive idf
//! `ln(1 + (N − df + 0.5) / (df + 0.5))`, so tiny candidate sets (a handful of categories) still rank.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashMap;

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "for", "from", "have", "how", "i",
    "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "so", "that", "the",
    "their", "them", "then", "there", "these", "this", "to", "us", "was", "we", "what", "when", "which", "who",
    "will", "with", "would", "you", "your",
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
}

/// A BM25 index over a small or large set of documents.
pub struct Bm25 {
    postings: HashMap<String, Vec<(u32, f32)>>,
    doc_len: Vec<f32>,
    avg_len: f32,
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

impl Bm25 {
    /// Index documents given as term lists.
    pub fn new(docs: &[Vec<String>]) -> Self {
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(docs.len());
        for (d, terms) in docs.iter().enumerate() {
            doc_len.push(terms.len() as f32);
            let mut tf: HashMap<&str, f32> = HashMap::new();
            for t in terms {
                *tf.entry(t.as_str()).or_default() += 1.0;
            }
            for (t, f) in tf {
                postings.entry(t.to_string()).or_default().push((d as u32, f));
            }
        }
        let avg_len = if doc_len.is_empty() { 0.0 } else { doc_len.iter().sum::<f32>() / doc_len.len() as f32 };
        Bm25 { postings, doc_len, avg_len: avg_len.max(1e-6) }
    }

    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// BM25 score of every document for the query terms (repeated query terms count once).
    pub fn scores(&self, query: &[String]) -> Vec<f32> {
        let n = self.doc_len.len() as f32;
        let mut scores = vec![0.0f32; self.doc_len.len()];
        let mut seen = std::collections::HashSet::new();
        for q in query {
            if !seen.insert(q) {
                continue;
            }
            let Some(list) = self.postings.get(q) else { continue };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, tf) in list {
                let norm = K1 * (1.0 - B + B * self.doc_len[d as usize] / self.avg_len);
                scores[d as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_snake_camel_and_punctuation() {
        assert_eq!(words("sendEmail to_the-Team's INBOX"), vec!["send", "email", "to", "the", "team", "s", "inbox"]);
        assert_eq!(words("getHTTPStatus"), vec!["get", "httpstatus"]);
    }

    #[test]
    fn analyzer_stems_and_drops_stop_words() {
        let a = Analyzer::default();
        assert_eq!(a.terms("Listing the channels"), vec!["list", "channel"]);
        assert_eq!(a.terms("create_pull_requests"), vec!["creat", "pull", "request"]);
    }

    #[test]
    fn bm25_prefers_rarer_matching_terms_and_shorter_docs() {
        let a = Analyzer::default();
        let docs: Vec<Vec<String>> = ["send email message", "send chat message to channel with many extra words here", "weather forecast"]
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
