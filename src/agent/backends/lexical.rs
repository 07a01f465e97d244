//! The lexical baseline: a deterministic BM25 "agent" over what the layout shows.
//!
//! It reads nothing but the conversation and the offered functions, like a model would:
//! - **flat**: rank every function by BM25 over its name, description and parameter names; call the best
//!   one with arguments from [`extract_arguments`](crate::agent::extract::extract_arguments), or abstain
//!   when the best function shares fewer than `min_overlap` distinct terms with the query;
//! - **progressive**: rank the servers listed in the discovery tool, discover the best two, pick the best
//!   category (or action, when discovery lists them), list its actions, read the best action's details,
//!   execute it — abstaining on the same overlap rule.
//!
//! It is a baseline: it shows what keyword overlap alone achieves, not what a model would.

use super::{answer, one};
use crate::agent::extract::extract_arguments;
use crate::agent::{Policy, TurnContext};
use crate::layout::LayoutKind;
use crate::layout::progressive::{ACTION_DETAILS, CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS, EXECUTE};
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::{AssistantTurn, FunctionDef};
use crate::text::{Analyzer, Bm25};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LexicalConfig {
    /// Abstain when the best candidate shares fewer distinct terms than this with the query.
    pub min_overlap: usize,
    /// How many servers to discover in the progressive layout.
    pub servers_to_discover: usize,
}

impl Default for LexicalConfig {
    fn default() -> Self {
        LexicalConfig { min_overlap: 2, servers_to_discover: 2 }
    }
}

struct Index {
    bm25: Bm25,
    terms: Vec<HashSet<String>>,
}

pub struct LexicalBackend {
    config: LexicalConfig,
    analyzer: Analyzer,
    /// Flat-layout indexes by the functions' identity (names), built once per variant.
    cache: RwLock<HashMap<u64, Arc<Index>>>,
}

const NO_TOOL: &str = "None of the available tools can do this.";
const DONE: &str = "Done.";

impl LexicalBackend {
    pub fn new(config: LexicalConfig) -> Self {
        LexicalBackend { config, analyzer: Analyzer::default(), cache: RwLock::new(HashMap::new()) }
    }

    fn index(&self, docs: &[String]) -> Index {
        let terms: Vec<Vec<String>> = docs.iter().map(|d| self.analyzer.terms(d)).collect();
        Index { bm25: Bm25::new(&terms), terms: terms.into_iter().map(|t| t.into_iter().collect()).collect() }
    }

    /// Best document and whether it overlaps enough with the query to act on.
    fn best(&self, index: &Index, query: &[String]) -> Option<usize> {
        let (doc, score) = *index.bm25.top_k(query, 1).first()?;
        let overlap = query.iter().collect::<HashSet<_>>().into_iter().filter(|q| index.terms[doc].contains(*q)).count();
        (score > 0.0 && overlap >= self.config.min_overlap).then_some(doc)
    }

    fn flat_index(&self, functions: &[FunctionDef]) -> Arc<Index> {
        let key = functions.iter().fold(0u64, |h, f| {
            crate::layout::flat::stable_hash(format!("{h}:{}:{}", f.name, f.description).as_bytes())
        });
        if let Some(ix) = self.cache.read().expect("cache lock").get(&key) {
            return ix.clone();
        }
        let docs: Vec<String> = functions.iter().map(function_doc).collect();
        let ix = Arc::new(self.index(&docs));
        self.cache.write().expect("cache lock").insert(key, ix.clone());
        ix
    }

    fn flat(&self, ctx: &TurnContext<'_>) -> AssistantTurn {
        if ctx.turn() > 0 {
            return answer(DONE);
        }
        let index = self.flat_index(ctx.functions);
        let query = self.analyzer.terms(&ctx.task.query);
        match self.best(&index, &query) {
            None => answer(NO_TOOL),
            Some(i) => {
                let f = &ctx.functions[i];
                let args = extract_arguments(&ctx.task.query, &f.parameters);
                one(1, &f.name, Value::Object(args))
            }
        }
    }

    fn progressive(&self, ctx: &TurnContext<'_>) -> AssistantTurn {
        let turn = ctx.turn() + 1;
        let query_text = &ctx.task.query;
        let query = self.analyzer.terms(query_text);
        let last = ctx.last_results();
        let Some(&(last_name, _, last_result)) = last.first() else {
            // First turn: choose servers from the discovery tool's server list.
            let servers = discovery_servers(ctx.functions);
            let index = self.index(&servers.iter().map(|(n, d)| format!("{n} {d}")).collect::<Vec<_>>());
            let picked: Vec<&str> = index
                .bm25
                .ranked(&query)
                .into_iter()
                .filter(|(_, s)| *s > 0.0)
                .take(self.config.servers_to_discover)
                .map(|(i, _)| servers[i].0.as_str())
                .collect();
            if picked.is_empty() {
                return answer(NO_TOOL);
            }
            let discover = if ctx.layout == LayoutKind::ProgressiveOss { DISCOVER_OSS } else { DISCOVER };
            return one(turn, discover, json!({"user_query": query_text, "server_names": picked}));
        };
        let result: Value = serde_json::from_str(last_result).unwrap_or(Value::Null);
        if super::is_layout_error(last_result) {
            return answer(NO_TOOL);
        }
        match last_name {
            DISCOVER_OSS => {
                // Only action names are shown: rank them by name words.
                let mut docs = Vec::new();
                let mut targets = Vec::new();
                for s in result["servers"].as_array().into_iter().flatten() {
                    for a in s["actions"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                        docs.push(a.to_string());
                        targets.push((s["server"].as_str().unwrap_or_default().to_string(), a.to_string()));
                    }
                }
                let index = self.index(&docs);
                match index.bm25.ranked(&query).first() {
                    Some(&(i, score)) if score > 0.0 => one(turn, ACTION_DETAILS, json!({"server_name": targets[i].0, "action_name": targets[i].1})),
                    _ => answer(NO_TOOL),
                }
            }
            DISCOVER => {
                // Candidates: actions where discovery listed them, categories otherwise.
                let mut docs = Vec::new();
                let mut targets = Vec::new();
                for s in result["servers"].as_array().into_iter().flatten() {
                    for c in s["categories"].as_array().into_iter().flatten() {
                        let cat = c["name"].as_str().unwrap_or_default();
                        match c["actions"].as_array() {
                            Some(actions) => {
                                for a in actions {
                                    let name = a["name"].as_str().unwrap_or_default();
                                    docs.push(format!("{name} {} {cat}", a["description"].as_str().unwrap_or_default()));
                                    targets.push((cat.to_string(), Some(name.to_string())));
                                }
                            }
                            None => {
                                docs.push(format!("{cat} {}", c["description"].as_str().unwrap_or_default()));
                                targets.push((cat.to_string(), None));
                            }
                        }
                    }
                }
                let index = self.index(&docs);
                let Some((best, score)) = index.bm25.ranked(&query).first().copied() else { return answer(NO_TOOL) };
                match &targets[best] {
                    (cat, Some(action)) => match self.best(&index, &query) {
                        Some(_) => one(turn, ACTION_DETAILS, json!({"category_name": cat, "action_name": action})),
                        None => answer(NO_TOOL),
                    },
                    (cat, None) if score > 0.0 => one(turn, CATEGORY_ACTIONS, json!({"category_names": [cat]})),
                    _ => answer(NO_TOOL),
                }
            }
            CATEGORY_ACTIONS => {
                let mut docs = Vec::new();
                let mut targets = Vec::new();
                for c in result["categories"].as_array().into_iter().flatten() {
                    let cat = c["category"].as_str().unwrap_or_default();
                    for a in c["actions"].as_array().into_iter().flatten() {
                        let name = a["name"].as_str().unwrap_or_default();
                        docs.push(format!("{name} {} {cat}", a["description"].as_str().unwrap_or_default()));
                        targets.push((cat.to_string(), name.to_string()));
                    }
                }
                let index = self.index(&docs);
                match self.best(&index, &query) {
                    Some(i) => one(turn, ACTION_DETAILS, json!({"category_name": targets[i].0, "action_name": targets[i].1})),
                    None => answer(NO_TOOL),
                }
            }
            ACTION_DETAILS => {
                let args = extract_arguments(query_text, &result["inputSchema"]);
                one(
                    turn,
                    EXECUTE,
                    json!({
                        "server_name": result["server"], "category_name": result["category"], "action_name": result["name"],
                        "body_schema": Value::Object(args).to_string()
                    }),
                )
            }
            _ => answer(DONE),
        }
    }
}

impl LexicalBackend {
    /// Search with the user's words, then call the best tool the search returned.
    fn search(&self, ctx: &TurnContext<'_>) -> AssistantTurn {
        let turn = ctx.turn() + 1;
        let last = ctx.last_results();
        let Some(&(name, _, result)) = last.first() else {
            return one(turn, SEARCH_TOOLS, json!({"query": ctx.task.query}));
        };
        if name != SEARCH_TOOLS {
            return answer(DONE);
        }
        let found: Vec<FunctionDef> = serde_json::from_str::<Value>(result)
            .ok()
            .and_then(|v| serde_json::from_value(v["tools"].clone()).ok())
            .unwrap_or_default();
        let index = self.index(&found.iter().map(function_doc).collect::<Vec<_>>());
        match self.best(&index, &self.analyzer.terms(&ctx.task.query)) {
            Some(i) => one(turn, &found[i].name, Value::Object(extract_arguments(&ctx.task.query, &found[i].parameters))),
            None => answer(NO_TOOL),
        }
    }
}

/// What the flat lexical agent indexes for a function: name, description, parameter names.
/// The text the baseline indexes for a function: name, description and parameter names.
pub fn function_doc(f: &FunctionDef) -> String {
    let params: Vec<&str> =
        f.parameters.get("properties").and_then(Value::as_object).map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
    format!("{} {} {}", f.name, f.description, params.join(" "))
}

/// `(name, description)` of every server, as listed in the discovery tool's description.
pub(crate) fn discovery_servers(functions: &[FunctionDef]) -> Vec<(String, String)> {
    let Some(f) = functions.iter().find(|f| f.name == DISCOVER || f.name == DISCOVER_OSS) else { return vec![] };
    f.description
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| l.split_once(": "))
        .map(|(n, d)| (n.to_string(), d.to_string()))
        .collect()
}



impl Policy for LexicalBackend {
    fn name(&self) -> &str {
        "lexical"
    }

    fn decide(&self, ctx: &TurnContext<'_>) -> anyhow::Result<AssistantTurn> {
        Ok(match ctx.layout {
            LayoutKind::Flat => self.flat(ctx),
            LayoutKind::Progressive => self.progressive(ctx),
            LayoutKind::Search => self.search(ctx),
            LayoutKind::ProgressiveOss => self.progressive(ctx),
        })
    }
}
