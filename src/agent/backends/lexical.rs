//! The lexical baseline: a deterministic BM25 "agent" over what the layout shows.
//!
//! It reads nothing but the conversation and the offered functions, like a model would:
//! - **flat**: rank every function by BM25 over its name, description and parameter names; call the best
//!   one with arguments from [`extract_arguments`], or abstain
//!   when the best function shares fewer than `min_overlap` distinct terms with the query;
//! - **progressive** (both variants): rank the servers listed in the discovery tool, discover the best
//!   two, pick the best category (or action, when discovery lists them), list its actions, read the best
//!   action's details, execute it — abstaining on the same overlap rule;
//! - **search**: search with the request's words, then call the best tool the search returned.
//!
//! **Several tools.** A request that splits into two or more clauses ([`clauses`]: sentence ends, `;`,
//! `then`, `also`, `, and`, `and` + an imperative verb, …) is worked on as several *intents*: the whole
//! request, plus each of its first [`MAX_CALLS`] clauses. At every choice the whole request picks as
//! above; a clause adds its own best candidate only when that candidate passes the same rule for the
//! clause's words, the whole request picks something from the same list, **and** the candidate is among
//! the whole request's [`CLAUSE_GATE`] best there (a context sentence or a fragment cannot pull in an
//! unrelated tool). A clause's call takes its
//! arguments from the clause, filling gaps from the whole request. Identical calls are merged, so a clause
//! that agrees with the whole request adds nothing, and two clauses with the same tool but different
//! arguments make two calls (parallel requests); at most [`MAX_CALLS`] calls go out per turn. In the
//! progressive layouts the intents walk the meta-tools side by side (one discovery, then one path per
//! intent; call ids say which intents a call serves); in search, each intent searches once and picks
//! among everything the searches returned. A request of one clause behaves exactly as a single pick did.
//! Measured on the bundled suite (good descriptions, flat): single-task selection is unchanged (the first
//! call is still the whole request's pick), about one single task in nine gets an extra call, and two in
//! five multi-tool tasks get several tools.
//!
//! It is a baseline: it shows what keyword overlap alone achieves, not what a model would.

use super::{answer, call};
use crate::agent::clauses::clauses;
use crate::agent::extract::extract_arguments;
use crate::agent::{Policy, TurnContext};
use crate::layout::LayoutKind;
use crate::layout::progressive::{
    ACTION_DETAILS, CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS, EXECUTE,
};
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::{AssistantTurn, FunctionDef, Message, ToolCall};
use crate::text::{Analyzer, Bm25};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LexicalConfig {
    /// Abstain when the best candidate shares fewer distinct terms than this with the query.
    pub min_overlap: usize,
    /// How many servers to discover in the progressive layout (at least 1: none would always abstain).
    #[serde(deserialize_with = "crate::rules::at_least_one::de")]
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
    /// Flat-layout indexes by the functions' identity (names), built once per variant. Bounded: a
    /// tool-count curve offers a different set per task and level, which would otherwise all stay.
    cache: RwLock<HashMap<u64, Arc<Index>>>,
    /// Analysed terms of every function document indexed so far: per-task sets are re-indexed from
    /// these without analysing (stemming) the same documents again.
    doc_terms: RwLock<HashMap<String, Vec<String>>>,
}

/// Flat indexes kept at once.
const INDEX_CACHE: usize = 64;

const NO_TOOL: &str = "None of the available tools can do this.";

impl LexicalBackend {
    pub fn new(config: LexicalConfig) -> Self {
        LexicalBackend {
            config,
            analyzer: Analyzer::default(),
            cache: RwLock::new(HashMap::new()),
            doc_terms: RwLock::new(HashMap::new()),
        }
    }

    fn index(&self, docs: &[String]) -> Index {
        let terms: Vec<Vec<String>> = docs.iter().map(|d| self.analyzer.terms(d)).collect();
        Index {
            bm25: Bm25::new(&terms),
            terms: terms.into_iter().map(|t| t.into_iter().collect()).collect(),
        }
    }

    /// Distinct query terms the document contains.
    fn overlap(index: &Index, doc: usize, query: &[String]) -> usize {
        query
            .iter()
            .collect::<HashSet<_>>()
            .into_iter()
            .filter(|q| index.terms[doc].contains(*q))
            .count()
    }

    /// Whether a document overlaps enough with the query to act on.
    fn enough(&self, index: &Index, doc: usize, score: f32, query: &[String]) -> bool {
        score > 0.0 && Self::overlap(index, doc, query) >= self.config.min_overlap
    }

    /// The candidate intent `i` picks from `index`: its best-scoring document, if `accept(doc, score,
    /// terms)` holds. A clause picks only where the whole request picks too, and only a document among
    /// the whole request's [`CLAUSE_GATE`] best (so a fragment cannot wander off to an unrelated tool).
    fn pick(
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

    /// Arguments for intent `i`: extracted from its text; a clause's gaps are filled from the whole request.
    fn arguments(intents: &Intents, i: usize, schema: &Value) -> Value {
        let mut args = extract_arguments(&intents.texts[i], schema);
        if i > 0 {
            for (k, v) in extract_arguments(&intents.texts[0], schema) {
                args.entry(k).or_insert(v);
            }
        }
        Value::Object(args)
    }

    fn flat_index(&self, functions: &[FunctionDef]) -> Arc<Index> {
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

    /// Every intent picks a function; the calls go out together in the first turn.
    fn flat(&self, ctx: &TurnContext<'_>) -> AssistantTurn {
        if ctx.turn() > 0 {
            return answer(&super::done_answer(ctx.messages));
        }
        let index = self.flat_index(ctx.functions);
        let intents = Intents::new(&self.analyzer, &ctx.task.query);
        let mut plan = Plan::default();
        for i in 0..intents.len() {
            if let Some(d) = self.pick(&index, &intents, i, |d, s, q| self.enough(&index, d, s, q))
            {
                let f = &ctx.functions[d];
                plan.add(&f.name, Self::arguments(&intents, i, &f.parameters), i);
            }
        }
        plan.into_turn(1, &intents).unwrap_or_else(|| answer(NO_TOOL))
    }

    fn progressive(&self, ctx: &TurnContext<'_>) -> AssistantTurn {
        let turn = ctx.turn() + 1;
        let query_text = &ctx.task.query;
        let intents = Intents::new(&self.analyzer, query_text);
        let last = last_calls(ctx.messages);
        if last.is_empty() {
            // First turn: choose servers from the discovery tool's server list — the whole request's
            // best few, and each clause's best.
            let servers = discovery_servers(ctx.functions);
            let index =
                self.index(&servers.iter().map(|(n, d)| format!("{n} {d}")).collect::<Vec<_>>());
            let ranked = |i: usize, n: usize| -> Vec<usize> {
                index
                    .bm25
                    .ranked(&intents.terms[i])
                    .into_iter()
                    .filter(|(_, s)| *s > 0.0)
                    .take(n)
                    .map(|(d, _)| d)
                    .collect()
            };
            let mut picked = ranked(0, self.config.servers_to_discover);
            if picked.is_empty() {
                return answer(NO_TOOL);
            }
            for i in 1..intents.len() {
                for d in ranked(i, 1) {
                    if !picked.contains(&d) {
                        picked.push(d);
                    }
                }
            }
            let names: Vec<&str> = picked.iter().map(|&d| servers[d].0.as_str()).collect();
            let discover =
                if ctx.layout == LayoutKind::ProgressiveOss { DISCOVER_OSS } else { DISCOVER };
            let mut plan = Plan::default();
            plan.add_all(
                discover,
                json!({"user_query": query_text, "server_names": names}),
                0..intents.len(),
            );
            return plan.into_turn(turn, &intents).unwrap_or_else(|| answer(NO_TOOL));
        }
        let mut plan = Plan::default();
        for (call, result_text) in &last {
            if super::is_layout_error(result_text) {
                continue;
            }
            let result: Value = serde_json::from_str(result_text).unwrap_or(Value::Null);
            let serving = call_intents(&call.id, intents.len());
            match call.name.as_str() {
                DISCOVER_OSS => {
                    // Only action names are shown: rank them by name words.
                    let mut docs = Vec::new();
                    let mut targets = Vec::new();
                    for s in result["servers"].as_array().into_iter().flatten() {
                        for a in
                            s["actions"].as_array().into_iter().flatten().filter_map(Value::as_str)
                        {
                            docs.push(a.to_string());
                            targets.push((
                                s["server"].as_str().unwrap_or_default().to_string(),
                                a.to_string(),
                            ));
                        }
                    }
                    let index = self.index(&docs);
                    for &i in &serving {
                        if let Some(d) = self.pick(&index, &intents, i, |_, s, _| s > 0.0) {
                            plan.add(
                                ACTION_DETAILS,
                                json!({"server_name": targets[d].0, "action_name": targets[d].1}),
                                i,
                            );
                        }
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
                                        docs.push(format!(
                                            "{name} {} {cat}",
                                            a["description"].as_str().unwrap_or_default()
                                        ));
                                        targets.push((cat.to_string(), Some(name.to_string())));
                                    }
                                }
                                None => {
                                    docs.push(format!(
                                        "{cat} {}",
                                        c["description"].as_str().unwrap_or_default()
                                    ));
                                    targets.push((cat.to_string(), None));
                                }
                            }
                        }
                    }
                    let index = self.index(&docs);
                    // An action must overlap enough to act on; a category only needs a positive score.
                    let accept = |d: usize, s: f32, q: &[String]| {
                        if targets[d].1.is_some() { self.enough(&index, d, s, q) } else { s > 0.0 }
                    };
                    for &i in &serving {
                        match self.pick(&index, &intents, i, accept).map(|d| &targets[d]) {
                            Some((cat, Some(action))) => plan.add(
                                ACTION_DETAILS,
                                json!({"category_name": cat, "action_name": action}),
                                i,
                            ),
                            Some((cat, None)) => {
                                plan.add(CATEGORY_ACTIONS, json!({"category_names": [cat]}), i)
                            }
                            None => {}
                        }
                    }
                }
                CATEGORY_ACTIONS => {
                    let mut docs = Vec::new();
                    let mut targets = Vec::new();
                    for c in result["categories"].as_array().into_iter().flatten() {
                        let cat = c["category"].as_str().unwrap_or_default();
                        for a in c["actions"].as_array().into_iter().flatten() {
                            let name = a["name"].as_str().unwrap_or_default();
                            docs.push(format!(
                                "{name} {} {cat}",
                                a["description"].as_str().unwrap_or_default()
                            ));
                            targets.push((cat.to_string(), name.to_string()));
                        }
                    }
                    let index = self.index(&docs);
                    for &i in &serving {
                        if let Some(d) =
                            self.pick(&index, &intents, i, |d, s, q| self.enough(&index, d, s, q))
                        {
                            plan.add(
                                ACTION_DETAILS,
                                json!({"category_name": targets[d].0, "action_name": targets[d].1}),
                                i,
                            );
                        }
                    }
                }
                ACTION_DETAILS => {
                    for &i in &serving {
                        let args = Self::arguments(&intents, i, &result["inputSchema"]);
                        let body = json!({
                            "server_name": result["server"], "category_name": result["category"], "action_name": result["name"],
                            "body_schema": args.to_string()
                        });
                        plan.add(EXECUTE, body, i);
                    }
                }
                _ => {}
            }
        }
        plan.into_turn(turn, &intents).unwrap_or_else(|| {
            if executed_any(ctx.messages) {
                answer(&super::done_answer(ctx.messages))
            } else {
                answer(NO_TOOL)
            }
        })
    }

    /// Search with the user's words (and each clause's), then call the tools the searches returned.
    fn search(&self, ctx: &TurnContext<'_>) -> AssistantTurn {
        let turn = ctx.turn() + 1;
        let intents = Intents::new(&self.analyzer, &ctx.task.query);
        let last = last_calls(ctx.messages);
        if last.is_empty() {
            let mut plan = Plan::default();
            for i in 0..intents.len() {
                plan.add(SEARCH_TOOLS, json!({"query": intents.texts[i]}), i);
            }
            return plan.into_turn(turn, &intents).unwrap_or_else(|| answer(NO_TOOL));
        }
        if last.iter().any(|(c, _)| c.name != SEARCH_TOOLS) {
            return answer(&super::done_answer(ctx.messages));
        }
        // Every tool any search returned (each once, in order); each intent picks among all of them.
        let mut found: Vec<FunctionDef> = Vec::new();
        for (_, result) in &last {
            let tools: Vec<FunctionDef> = serde_json::from_str::<Value>(result)
                .ok()
                .and_then(|v| serde_json::from_value(v["tools"].clone()).ok())
                .unwrap_or_default();
            for t in tools {
                if !found.iter().any(|f| f.name == t.name) {
                    found.push(t);
                }
            }
        }
        let index = self.index(&found.iter().map(function_doc).collect::<Vec<_>>());
        let mut plan = Plan::default();
        for i in 0..intents.len() {
            if let Some(d) = self.pick(&index, &intents, i, |d, s, q| self.enough(&index, d, s, q))
            {
                plan.add(&found[d].name, Self::arguments(&intents, i, &found[d].parameters), i);
            }
        }
        plan.into_turn(turn, &intents).unwrap_or_else(|| answer(NO_TOOL))
    }
}

/// A clause's pick must be among this many best candidates for the whole request.
pub const CLAUSE_GATE: usize = 3;
/// At most this many clauses are considered, and at most this many calls go out in one turn.
pub const MAX_CALLS: usize = 5;

/// What the baseline tries to do: the whole request (intent 0) and, when the request splits into two or
/// more clauses ([`clauses`]), each of the first [`MAX_CALLS`] clauses.
struct Intents {
    texts: Vec<String>,
    terms: Vec<Vec<String>>,
}

impl Intents {
    fn new(analyzer: &Analyzer, query: &str) -> Self {
        let mut texts = vec![query.to_string()];
        let parts = clauses(query);
        if parts.len() >= 2 {
            texts.extend(parts.into_iter().take(MAX_CALLS));
        }
        let terms = texts.iter().map(|t| analyzer.terms(t)).collect();
        Intents { texts, terms }
    }

    fn len(&self) -> usize {
        self.texts.len()
    }
}

/// The calls of one turn, each with the intents it serves; identical calls are merged.
#[derive(Default)]
struct Plan {
    calls: Vec<(String, Value, Vec<usize>)>,
}

impl Plan {
    fn add(&mut self, name: &str, args: Value, intent: usize) {
        self.add_all(name, args, [intent]);
    }

    fn add_all(&mut self, name: &str, args: Value, intents: impl IntoIterator<Item = usize>) {
        let at = match self.calls.iter().position(|(n, a, _)| n == name && *a == args) {
            Some(at) => at,
            None if self.calls.len() < MAX_CALLS => {
                self.calls.push((name.to_string(), args, vec![]));
                self.calls.len() - 1
            }
            None => return,
        };
        for i in intents {
            if !self.calls[at].2.contains(&i) {
                self.calls[at].2.push(i);
            }
        }
    }

    /// The turn, or `None` when nothing is planned. With several intents, each call id names the
    /// intents it serves (`call_2_0_for_0-1`), so the next turn knows whose results it reads; with one
    /// intent ids stay `call_<turn>_<k>`.
    fn into_turn(self, turn: usize, intents: &Intents) -> Option<AssistantTurn> {
        if self.calls.is_empty() {
            return None;
        }
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(k, (name, args, serving))| {
                let mut c = call(turn, k, &name, args);
                if intents.len() > 1 {
                    let tags: Vec<String> = serving.iter().map(usize::to_string).collect();
                    c.id = format!("{}_for_{}", c.id, tags.join("-"));
                }
                c
            })
            .collect();
        Some(AssistantTurn { tool_calls, ..Default::default() })
    }
}

/// The intents a call of ours serves, read back from its id (all of them when the id has no tag).
fn call_intents(id: &str, n: usize) -> Vec<usize> {
    match id.rsplit_once("_for_") {
        Some((_, tags)) => {
            tags.split('-').filter_map(|t| t.parse().ok()).filter(|&i| i < n).collect()
        }
        None => (0..n).collect(),
    }
}

/// The calls of the last assistant turn with their results, in order.
fn last_calls(messages: &[Message]) -> Vec<(&ToolCall, &str)> {
    let Some(pos) = messages.iter().rposition(|m| matches!(m, Message::Assistant { .. })) else {
        return vec![];
    };
    let Message::Assistant { tool_calls, .. } = &messages[pos] else {
        return vec![];
    };
    tool_calls.iter().map(|c| (c, result_of(&messages[pos..], &c.id))).collect()
}

fn result_of<'a>(messages: &'a [Message], id: &str) -> &'a str {
    messages
        .iter()
        .find_map(|m| match m {
            Message::Tool { tool_call_id, content, .. } if tool_call_id == id => {
                Some(content.as_str())
            }
            _ => None,
        })
        .unwrap_or("")
}

/// Whether an `execute_action` of ours went through earlier in the conversation (then the episode ends
/// with "Done.", else with "None of the available tools can do this.").
fn executed_any(messages: &[Message]) -> bool {
    messages.iter().enumerate().any(|(pos, m)| match m {
        Message::Assistant { tool_calls, .. } => tool_calls.iter().any(|c| {
            c.name == EXECUTE && !super::is_layout_error(result_of(&messages[pos..], &c.id))
        }),
        _ => false,
    })
}

/// What the flat lexical agent indexes for a function: name, description, parameter names.
/// The text the baseline indexes for a function: name, description and parameter names.
pub fn function_doc(f: &FunctionDef) -> String {
    let params: Vec<&str> = f
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    format!("{} {} {}", f.name, f.description, params.join(" "))
}

/// `(name, description)` of every server, as listed in the discovery tool's description.
pub(crate) fn discovery_servers(functions: &[FunctionDef]) -> Vec<(String, String)> {
    let Some(f) = functions.iter().find(|f| f.name == DISCOVER || f.name == DISCOVER_OSS) else {
        return vec![];
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Addressing;
    use crate::dataset::Task;

    fn functions() -> Vec<FunctionDef> {
        let f = |name: &str, description: &str, params: Value| FunctionDef {
            name: name.into(),
            description: description.into(),
            parameters: params,
        };
        vec![
            f(
                "get_weather",
                "Current weather for a city.",
                json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            ),
            f(
                "send_email",
                "Send an email message to an address.",
                json!({"type": "object", "properties": {"to": {"type": "string", "format": "email"}, "subject": {"type": "string"}}, "required": ["to", "subject"]}),
            ),
            f(
                "book_hotel",
                "Book a hotel room in a city.",
                json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            ),
        ]
    }

    /// The flat baseline's first turn for `query`: `(function, arguments)` per call.
    fn flat_calls(query: &str) -> Vec<(String, Value)> {
        let task: Task =
            serde_json::from_value(json!({"id": "t", "query": query, "kind": "single"})).unwrap();
        let functions = functions();
        let messages = vec![Message::User { content: query.into() }];
        let addressing = Addressing::new();
        let ctx = TurnContext {
            task: &task,
            messages: &messages,
            functions: &functions,
            layout: LayoutKind::Flat,
            addressing: &addressing,
            seed: 0,
            trial: 0,
        };
        let turn = LexicalBackend::new(LexicalConfig::default()).decide(&ctx).unwrap();
        turn.tool_calls
            .into_iter()
            .map(|c| (c.name, serde_json::from_str(&c.arguments).unwrap()))
            .collect()
    }

    #[test]
    fn one_clause_one_call() {
        assert_eq!(
            flat_calls("Get the current weather in 'Oslo'."),
            vec![("get_weather".to_string(), json!({"city": "Oslo"}))]
        );
    }

    #[test]
    fn each_clause_adds_its_tool_with_its_own_arguments() {
        let calls = flat_calls(
            "Send an email to ana@example.com with subject 'Hi', then tell me the weather for the city 'Oslo'.",
        );
        assert_eq!(
            calls,
            vec![
                ("send_email".to_string(), json!({"to": "ana@example.com", "subject": "Hi"})),
                ("get_weather".to_string(), json!({"city": "Oslo"})),
            ]
        );
    }

    #[test]
    fn the_same_tool_twice_with_different_arguments_is_two_calls() {
        let calls = flat_calls(
            "Get the weather for the city 'Oslo'; also get the weather for the city 'Lima'.",
        );
        assert_eq!(
            calls,
            vec![
                ("get_weather".to_string(), json!({"city": "Oslo"})),
                ("get_weather".to_string(), json!({"city": "Lima"}))
            ]
        );
    }

    #[test]
    fn a_clause_without_enough_overlap_adds_nothing() {
        // "Thanks a lot." shares no term with any tool; the request is still one call.
        assert_eq!(
            flat_calls("Book a hotel room in the city 'Lima'. Thanks a lot."),
            vec![("book_hotel".to_string(), json!({"city": "Lima"}))]
        );
    }

    #[test]
    fn call_ids_carry_the_intents_they_serve() {
        assert_eq!(call_intents("call_2_0_for_0-2", 3), vec![0, 2]);
        assert_eq!(call_intents("call_2_1", 3), vec![0, 1, 2], "untagged: every intent");
        assert_eq!(
            call_intents("call_2_0_for_7", 3),
            Vec::<usize>::new(),
            "out of range is ignored"
        );
        let mut plan = Plan::default();
        plan.add("a", json!({}), 0);
        plan.add("a", json!({}), 1);
        plan.add("b", json!({}), 1);
        let two = Intents { texts: vec!["x".into(), "y".into()], terms: vec![vec![], vec![]] };
        let ids: Vec<String> =
            plan.into_turn(3, &two).unwrap().tool_calls.into_iter().map(|c| c.id).collect();
        assert_eq!(ids, vec!["call_3_0_for_0-1", "call_3_1_for_1"]);
    }
}
