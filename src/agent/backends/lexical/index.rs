//! The lexical baseline's BM25 indexes: one per list of candidates the layout shows (servers,
//! categories, actions, functions), with each document's distinct terms for the overlap rule, and
//! the pick rule every layout shares (best document, enough overlap, a clause only within the whole
//! request's best few). Flat-layout indexes are cached per offered function set.
//!
//! Its own file because it is the retrieval half of the baseline; the parent module and
//! [`progressive`](super::progressive) are the policy that walks a layout with it.

use super::intents::{CLAUSE_GATE, Intents};
use super::{LexicalBackend, function_doc};
use crate::protocol::FunctionDef;
use crate::text::Bm25;
use std::collections::HashSet;
use std::sync::Arc;

pub(super) struct Index {
    pub(super) bm25: Bm25,
    pub(super) terms: Vec<HashSet<String>>,
}

/// Flat indexes kept at once.
const INDEX_CACHE: usize = 64;

impl LexicalBackend {
    pub(super) fn index(&self, docs: &[String]) -> Index {
        let terms: Vec<Vec<String>> = docs.iter().map(|d| self.analyzer.terms(d)).collect();
        Index {
            bm25: Bm25::new(&terms),
            terms: terms.into_iter().map(|t| t.into_iter().collect()).collect(),
        }
    }

    /// Distinct query terms the document contains.
    pub(super) fn overlap(index: &Index, doc: usize, query: &[String]) -> usize {
        query
            .iter()
            .collect::<HashSet<_>>()
            .into_iter()
            .filter(|q| index.terms[doc].contains(*q))
            .count()
    }

    /// Whether a document overlaps enough with the query to act on.
    pub(super) fn enough(&self, index: &Index, doc: usize, score: f32, query: &[String]) -> bool {
        score > 0.0 && Self::overlap(index, doc, query) >= self.config.min_overlap
    }

    /// The candidate intent `i` picks from `index`: its best-scoring document, if `accept(doc, score,
    /// terms)` holds. A clause picks only where the whole request picks too, and only a document among
    /// the whole request's [`CLAUSE_GATE`] best (so a fragment cannot wander off to an unrelated tool).
    pub(super) fn pick(
        &self,
        index: &Index,
        intents: &Intents,
        i: usize,
        accept: impl Fn(usize, f32, &[String]) -> bool,
    ) -> Option<usize> {
        let best = |terms: &[String]| {
            index
                .bm25
                .top_k(terms, 1)
                .first()
                .copied()
                .filter(|&(d, s)| accept(d, s, terms))
                .map(|(d, _)| d)
        };
        let doc = best(&intents.terms[i])?;
        if i == 0 {
            return Some(doc);
        }
        best(&intents.terms[0])?;
        index
            .bm25
            .top_k(&intents.terms[0], CLAUSE_GATE)
            .iter()
            .any(|(d, _)| *d == doc)
            .then_some(doc)
    }

    pub(super) fn flat_index(&self, functions: &[FunctionDef]) -> Arc<Index> {
        let key = functions.iter().fold(0u64, |h, f| {
            crate::layout::flat::stable_hash(format!("{h}:{}:{}", f.name, f.description).as_bytes())
        });
        if let Some(ix) = self.cache.read().expect("cache lock").get(&key) {
            return ix.clone();
        }
        let docs: Vec<String> = functions.iter().map(function_doc).collect();
        let mut terms = Vec::with_capacity(docs.len());
        for d in docs {
            let known = self.doc_terms.read().expect("cache lock").get(&d).cloned();
            terms.push(match known {
                Some(t) => t,
                None => {
                    let t = self.analyzer.terms(&d);
                    self.doc_terms.write().expect("cache lock").insert(d, t.clone());
                    t
                }
            });
        }
        let ix = Arc::new(Index {
            bm25: Bm25::new(&terms),
            terms: terms.into_iter().map(|t| t.into_iter().collect()).collect(),
        });
        let mut cache = self.cache.write().expect("cache lock");
        // Rebuilding an evicted index is cheap (its documents' terms are kept), so eviction is simple.
        if cache.len() >= INDEX_CACHE {
            cache.clear();
        }
        cache.insert(key, ix.clone());
        ix
    }
}
