//! The tool-search layout, in the style of Anthropic's tool search tool and OpenAI's `tool_search`:
//! the agent starts with one `search_tools(query)` meta-tool; a search returns the top-k full tool
//! definitions by BM25 over name, description and parameter names, and the tools it returned become
//! callable (they are offered from the next turn on). Every tool can be found: one whose name is made
//! only of stop words (`me`, `it`) is also indexed under its raw name and id words, and a query made only
//! of stop words searches by its raw words ([`Analyzer::tool_terms`], [`Analyzer::query_terms`]).
//! Which tools are loaded is derived from the conversation, so the layout stays stateless and shareable
//! across episodes.

use super::{
    CallOutcome, CallRecord, CallStatus, FlatLayout, Layout, LayoutKind, error_json, json_kind,
    parse_arguments, record,
};
use crate::catalog::Catalog;
use crate::exec::Executor;
use crate::protocol::{FunctionDef, Message, ToolCall};
use crate::text::{Analyzer, Bm25};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

pub use crate::record::nav::SEARCH_TOOLS;
/// Results per search unless the agent asks for another number.
pub const DEFAULT_K: usize = 5;

pub struct SearchLayout {
    flat: FlatLayout,
    meta: Vec<FunctionDef>,
    index: Bm25,
    analyzer: Analyzer,
}

/// The `k` functions of `functions` that best match `query`, best first, by the search layout's BM25
/// over name, description and parameter names: for a search over function definitions alone (the mock
/// endpoint's stand-in for a provider's own tool search), without a catalog.
pub fn rank(functions: &[FunctionDef], query: &str, k: usize) -> Vec<usize> {
    let analyzer = Analyzer::default();
    let docs: Vec<Vec<String>> =
        functions.iter().map(|f| analyzer.tool_terms(&f.name, &f.name, &f.search_text())).collect();
    Bm25::new(&docs).top_k(&analyzer.query_terms(query), k).into_iter().map(|(i, _)| i).collect()
}

/// Analysed index terms of the tools seen so far, shared by the search layouts a run builds per task (a
/// tool-count curve builds one per task and level over the same tools), so each tool is analysed once.
#[derive(Default)]
pub struct SearchTerms(RwLock<HashMap<String, Vec<String>>>);

impl SearchLayout {
    pub fn new(catalog: &Catalog, executor: Arc<Executor>) -> Self {
        Self::with_terms(catalog, executor, &SearchTerms::default())
    }

    /// The layout, taking tools' terms from `terms` where it has them (and adding the rest).
    pub fn with_terms(catalog: &Catalog, executor: Arc<Executor>, terms: &SearchTerms) -> Self {
        let flat = FlatLayout::new(catalog, executor);
        let analyzer = Analyzer::default();
        let docs: Vec<Vec<String>> = flat
            .functions()
            .iter()
            .map(|f| {
                let id = flat.tool_id(&f.name).unwrap_or_default();
                let text = f.search_text();
                let key = format!("{}\u{1f}{id}\u{1f}{text}", f.name);
                if let Some(t) = terms.0.read().expect("terms lock").get(&key) {
                    return t.clone();
                }
                let t = analyzer.tool_terms(&f.name, id, &text);
                terms.0.write().expect("terms lock").insert(key, t.clone());
                t
            })
            .collect();
        let meta = vec![FunctionDef {
            name: SEARCH_TOOLS.into(),
            description: format!(
                "Search the {} available tools by what you need to do. Returns the best matching tools with their full definitions; the tools returned become callable. Search again with other words if none fits.",
                flat.functions().len()
            ),
            parameters: json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "What you want to do, in a few words."},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Default 5."}
            }, "required": ["query"]}),
        }];
        SearchLayout { index: Bm25::new(&docs), flat, meta, analyzer }
    }

    /// Every catalog tool as a function (what a search can return).
    pub fn catalog_functions(&self) -> &[FunctionDef] {
        self.flat.functions()
    }

    /// The catalog's tools as `flat` shows them.
    pub fn flat(&self) -> &FlatLayout {
        &self.flat
    }

    /// Function names returned by earlier searches in this conversation.
    fn loaded(&self, messages: &[Message]) -> HashSet<String> {
        messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool { name, content, .. } if name == SEARCH_TOOLS => {
                    serde_json::from_str::<Value>(content).ok()
                }
                _ => None,
            })
            .flat_map(|v| v["tools"].as_array().cloned().unwrap_or_default())
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect()
    }

    fn search(&self, call: &ToolCall, step: usize) -> CallOutcome {
        let args = match parse_arguments(&call.arguments) {
            Ok(a) => a,
            Err(e) => {
                return CallOutcome {
                    content: error_json(&format!("Invalid input: {e}.")),
                    record: record(step, &call.name, CallStatus::Malformed, None),
                };
            }
        };
        let query = match args.get("query") {
            Some(Value::String(q)) if !q.trim().is_empty() => q.clone(),
            Some(other) if !other.is_string() => {
                let msg = format!("'query' must be a string, got {}", json_kind(other));
                return CallOutcome {
                    content: error_json(&msg),
                    record: record(
                        step,
                        &call.name,
                        CallStatus::NavigationError,
                        Some(Value::Object(args)),
                    ),
                };
            }
            _ => {
                return CallOutcome {
                    content: error_json("'query' is required"),
                    record: record(
                        step,
                        &call.name,
                        CallStatus::NavigationError,
                        Some(Value::Object(args)),
                    ),
                };
            }
        };
        let k = args
            .get("max_results")
            .and_then(Value::as_u64)
            .map(|k| k.clamp(1, 20) as usize)
            .unwrap_or(DEFAULT_K);
        let hits: Vec<usize> = self
            .index
            .top_k(&self.analyzer.query_terms(&query), k)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        let functions = self.flat.functions();
        let tools: Vec<&FunctionDef> = hits.iter().map(|&i| &functions[i]).collect();
        let revealed = tools.iter().flat_map(|f| self.flat.tools_behind(&f.name)).collect();
        CallOutcome {
            content: json!({"tools": tools}).to_string(),
            record: CallRecord {
                revealed,
                ..record(step, &call.name, CallStatus::Navigated, Some(Value::Object(args)))
            },
        }
    }
}

impl Layout for SearchLayout {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Search
    }

    fn functions(&self) -> &[FunctionDef] {
        &self.meta
    }

    fn offered(&self, messages: &[Message]) -> Cow<'_, [FunctionDef]> {
        let loaded = self.loaded(messages);
        if loaded.is_empty() {
            return Cow::Borrowed(&self.meta);
        }
        let mut out = self.meta.clone();
        out.extend(self.flat.functions().iter().filter(|f| loaded.contains(&f.name)).cloned());
        Cow::Owned(out)
    }

    fn call(&self, call: &ToolCall, step: usize) -> CallOutcome {
        self.call_in(call, step, &[])
    }

    fn call_in(&self, call: &ToolCall, step: usize, messages: &[Message]) -> CallOutcome {
        if call.name == SEARCH_TOOLS {
            return self.search(call, step);
        }
        if self.flat.tool_id(&call.name).is_some() && !self.loaded(messages).contains(&call.name) {
            return CallOutcome {
                content: error_json(&format!(
                    "Tool '{}' is not loaded. Call search_tools first; only tools it returns can be called.",
                    call.name
                )),
                record: record(step, &call.name, CallStatus::Invented, None),
            };
        }
        self.flat.call(call, step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Annotations, Category, Server, Tool};

    fn catalog() -> Catalog {
        let tool = |name: &str, desc: &str| Tool {
            id: format!("s/c/{name}"),
            name: name.into(),
            title: None,
            description: desc.into(),
            input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            output_schema: None,
            annotations: Annotations::default(),
            mock_response: json!({"ok": 1}),
            mock_mode: Default::default(),
            origin: Default::default(),
            dispatch: None,
        };
        Catalog::new(
            "t",
            "",
            vec![Server {
                name: "s".into(),
                title: None,
                description: "".into(),
                categories: vec![Category {
                    name: "c".into(),
                    description: "".into(),
                    tools: vec![
                        tool("get_weather", "Current weather in a city."),
                        tool("book_hotel", "Book a hotel room in a city."),
                        tool("me", ""),
                        tool("it", ""),
                    ],
                }],
            }],
        )
    }

    #[test]
    fn tools_named_with_stop_words_only_are_found_by_name() {
        let c = catalog();
        let l = SearchLayout::new(&c, Arc::new(Executor::new(&c).unwrap()));
        let search = |q: &str| {
            let out = l.call_in(
                &ToolCall {
                    id: "1".into(),
                    name: SEARCH_TOOLS.into(),
                    arguments: json!({"query": q}).to_string(),
                },
                1,
                &[],
            );
            out.record.revealed
        };
        assert_eq!(search("me"), vec!["s/c/me".to_string()]);
        // `it` has a parameter (`city`), so its text was not empty; its name is still searchable.
        assert_eq!(search("it"), vec!["s/c/it".to_string()]);
        // Ordinary queries are analysed as before: stop words in them match nothing.
        assert_eq!(search("weather for me"), vec!["s/c/get_weather".to_string()]);
    }

    #[test]
    fn search_reveals_and_loads_tools() {
        let c = catalog();
        let l = SearchLayout::new(&c, Arc::new(Executor::new(&c).unwrap()));
        assert_eq!(l.functions().len(), 1);
        let call = |name: &str, args: Value| ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments: args.to_string(),
        };
        // Not loaded yet: calling it directly is refused.
        let early = l.call_in(&call("get_weather", json!({"city": "Oslo"})), 1, &[]);
        assert_eq!(early.record.status, CallStatus::Invented);
        let found =
            l.call_in(&call(SEARCH_TOOLS, json!({"query": "weather", "max_results": 1})), 1, &[]);
        assert_eq!(found.record.revealed, vec!["s/c/get_weather".to_string()]);
        let messages = vec![Message::Tool {
            tool_call_id: "1".into(),
            name: SEARCH_TOOLS.into(),
            content: found.content.clone(),
        }];
        let offered = l.offered(&messages);
        assert_eq!(
            offered.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            vec![SEARCH_TOOLS, "get_weather"]
        );
        let ran = l.call_in(&call("get_weather", json!({"city": "Oslo"})), 2, &messages);
        assert_eq!(ran.record.status, CallStatus::Executed);
        let not_found = l.call_in(&call("book_hotel", json!({"city": "Oslo"})), 2, &messages);
        assert_eq!(
            not_found.record.status,
            CallStatus::Invented,
            "only returned tools become callable"
        );
    }
}
