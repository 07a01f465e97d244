//! What the progressive layouts' navigation calls answer: the servers' categories and actions as
//! discovery reveals them (by the [`DiscoveryRule`](super::DiscoveryRule)), a category's actions, the
//! OSS variant's field-weighted BM25 ranking of action names, and keyword search over one server.
//!
//! Its own file because rendering listings is a separate job from resolving the agent's names
//! ([`navigation`](super::navigation)) and from executing an action ([`execute`](super::execute)).

use super::navigation::{required_str, string_list};
use super::{OSS_TOP_ACTIONS, ProgressiveLayout};
use crate::catalog::degrade::provider_text;
use crate::catalog::{Category, Server, Tool};
use crate::text::Bm25;
use serde_json::{Map, Value, json};

impl ProgressiveLayout {
    /// Field-weighted BM25 ranking of a server's actions for a query (the OSS discovery).
    pub(super) fn rank_actions<'a>(&self, server: &'a Server, query: &str) -> Vec<&'a Tool> {
        let tools: Vec<(&Category, &Tool)> =
            server.categories.iter().flat_map(|c| c.tools.iter().map(move |t| (c, t))).collect();
        let fields: [(f32, Vec<Vec<String>>); 3] = [
            (
                30.0,
                tools
                    .iter()
                    .map(|(c, t)| {
                        self.analyzer.tool_terms(
                            &t.name,
                            &t.id,
                            &format!("{} {} {}", t.description, server.name, c.name),
                        )
                    })
                    .collect(),
            ),
            (
                15.0,
                tools
                    .iter()
                    .map(|(_, t)| {
                        let params: Vec<String> = t
                            .properties()
                            .map(|(k, v)| {
                                format!(
                                    "{k} {}",
                                    v.get("description").and_then(Value::as_str).unwrap_or("")
                                )
                            })
                            .collect();
                        self.analyzer.terms(&params.join(" "))
                    })
                    .collect(),
            ),
            (
                5.0,
                tools
                    .iter()
                    .map(|(_, t)| {
                        let out: Vec<String> = t
                            .output_schema
                            .as_ref()
                            .and_then(|o| o.get("properties"))
                            .and_then(Value::as_object)
                            .map(|p| p.keys().cloned().collect())
                            .unwrap_or_default();
                        self.analyzer.terms(&out.join(" "))
                    })
                    .collect(),
            ),
        ];
        let q = self.analyzer.query_terms(query);
        let mut total = vec![0f32; tools.len()];
        for (w, docs) in &fields {
            for (i, s) in Bm25::new(docs).scores(&q).into_iter().enumerate() {
                total[i] += w * s;
            }
        }
        let mut order: Vec<usize> = (0..tools.len()).collect();
        order.sort_by(|a, b| total[*b].total_cmp(&total[*a]).then(a.cmp(b)));
        order.into_iter().take(OSS_TOP_ACTIONS).map(|i| tools[i].1).collect()
    }

    pub(super) fn discover_oss(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let query = args.get("user_query").and_then(Value::as_str).unwrap_or_default();
        let mut out = Vec::new();
        for server in self.named_servers(args)? {
            let actions: Vec<&str> =
                self.rank_actions(server, query).into_iter().map(|t| t.name.as_str()).collect();
            out.push(json!({"server": server.name, "actions": actions}));
        }
        Ok(json!({"servers": out}))
    }

    pub(super) fn discover(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let mut servers = Vec::new();
        for server in self.named_servers(args)? {
            let mode = self.rule.mode(server.tool_count());
            let categories: Vec<Value> = server
                .categories
                .iter()
                .map(|c| {
                    let mut v = json!({"name": c.name, "description": c.description});
                    match mode {
                        "full_details" => {
                            v["actions"] = c.tools.iter().map(action_details_json).collect()
                        }
                        "categories_and_actions" => {
                            v["actions"] = c.tools.iter().map(action_summary).collect()
                        }
                        _ => {}
                    }
                    v
                })
                .collect();
            servers.push(json!({"server": server.name, "description": server.description, "detail": mode, "categories": categories}));
        }
        Ok(json!({"servers": servers}))
    }

    pub(super) fn category_actions(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let names = string_list(args, "category_names")?;
        if names.is_empty() {
            return Err("category_names is empty; pass category names returned by discover_server_categories_or_actions".into());
        }
        let mut out = Vec::new();
        for name in names {
            let Some((server, cat)) = self.catalog.category(&name) else {
                return Err(format!(
                    "Unknown category '{}'. Call discover_server_categories_or_actions first to list categories.",
                    crate::text::echo(&name)
                ));
            };
            out.push(json!({"server": server.name, "category": cat.name, "actions": cat.tools.iter().map(action_summary).collect::<Vec<_>>()}));
        }
        Ok(json!({"categories": out}))
    }

    pub(super) fn search(&self, args: &Map<String, Value>) -> Result<Value, String> {
        let query = required_str(args, "query")?;
        let server_name = required_str(args, "server_name")?;
        let max = match args.get("max_results") {
            None | Some(Value::Null) => 5,
            Some(v) => {
                v.as_u64().filter(|n| *n >= 1).ok_or("max_results must be a positive integer")?
                    as usize
            }
        };
        let server = self.server_named(server_name)?;
        let entries: Vec<(&Category, &Tool)> =
            server.categories.iter().flat_map(|c| c.tools.iter().map(move |t| (c, t))).collect();
        let docs: Vec<Vec<String>> = entries
            .iter()
            .map(|(c, t)| {
                self.analyzer.tool_terms(&t.name, &t.id, &format!("{} {}", t.description, c.name))
            })
            .collect();
        let index = Bm25::new(&docs);
        let results: Vec<Value> = index
            .ranked(&self.analyzer.query_terms(query))
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .take(max)
            .map(|(i, s)| {
                let (c, t) = entries[i];
                json!({"category": c.name, "action": t.name, "description": t.description, "score": (s * 1000.0).round() / 1000.0})
            })
            .collect();
        Ok(json!({"server": server.name, "results": results}))
    }
}

pub(super) fn action_summary(t: &Tool) -> Value {
    json!({"name": t.name, "description": provider_text(&t.description)})
}

pub(super) fn action_details_json(t: &Tool) -> Value {
    let mut v = json!({"name": t.name, "description": provider_text(&t.description), "inputSchema": t.input_schema});
    if let Some(o) = &t.output_schema {
        v["outputSchema"] = o.clone();
    }
    v
}
