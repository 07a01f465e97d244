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
//!
//! Split by job: [`index`] (the BM25 indexes and the pick rule), [`intents`] (intents, their
//! arguments and the plan of a turn's calls), [`progressive`] (the walk through the meta-tools);
//! this file holds the configuration, the flat and search policies and the layout dispatch.

mod index;
mod intents;
mod progressive;

use super::answer;
use crate::agent::{Policy, TurnContext};
use crate::layout::LayoutKind;
use crate::layout::progressive::{DISCOVER, DISCOVER_OSS};
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::{AssistantTurn, FunctionDef};
use crate::text::Analyzer;
use index::Index;
pub use intents::{CLAUSE_GATE, MAX_CALLS};
use intents::{Intents, Plan};
use progressive::last_calls;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
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

/// The text the baseline indexes for a function: name, description and parameter names.
pub fn function_doc(f: &FunctionDef) -> String {
    format!("{} {}", f.name, f.search_text())
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
            // The native layouts are refused to the baseline (`super::build`); were it asked, it would
            // walk them as the layouts they present: every tool, or toolpick's search.
            LayoutKind::Flat | LayoutKind::NativeSearch => self.flat(ctx),
            LayoutKind::Progressive => self.progressive(ctx),
            LayoutKind::Search | LayoutKind::NativeSearchClient => self.search(ctx),
            LayoutKind::ProgressiveOss => self.progressive(ctx),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Addressing;
    use crate::dataset::Task;
    use crate::protocol::Message;

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
            deferred: &[],
            groups: &[],
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
}
