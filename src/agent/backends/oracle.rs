//! The oracle: plays the expected calls through the layout, to prove the plumbing.
//!
//! In the flat layout it calls every expected tool at once. In the progressive layout it discovers its
//! way down like an agent would — discover the servers, list the categories whose actions discovery did
//! not show, read each action's details, execute — so a bug anywhere in the meta-tools shows up as an
//! oracle failure. In the search layout it searches for each expected tool by its function name (`_`
//! read as spaces) and then calls them all, so a tool that search cannot return fails it. For each
//! parameter it passes the first acceptable value that is not `""` (parameters whose only acceptable
//! value is `""` are omitted). It must score 100 % in every cell.

use super::call;
use crate::agent::{Address, Policy, TurnContext};
use crate::dataset::ExpectedCall;
use crate::layout::LayoutKind;
use crate::layout::progressive::{
    ACTION_DETAILS, CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS, EXECUTE,
};
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::AssistantTurn;
use anyhow::{Context, anyhow};
use serde_json::{Map, Value, json};
use std::collections::HashSet;

pub struct OracleBackend;

/// The arguments the oracle passes for an expected call.
pub fn oracle_arguments(expected: &ExpectedCall) -> Map<String, Value> {
    expected
        .arguments
        .iter()
        .filter_map(|(k, values)| {
            values.iter().find(|v| v.as_str() != Some("")).map(|v| (k.clone(), v.clone()))
        })
        .collect()
}

/// The oracle's arguments at an address: a merged tool also gets its dispatch parameter.
fn arguments_at(address: &Address, expected: &ExpectedCall) -> Value {
    let mut args = oracle_arguments(expected);
    if let Some((param, value)) = &address.dispatch {
        args.insert(param.clone(), Value::String(value.clone()));
    }
    Value::Object(args)
}

impl OracleBackend {
    fn addresses<'a>(
        &self,
        ctx: &'a TurnContext<'_>,
    ) -> anyhow::Result<Vec<(&'a Address, &'a ExpectedCall)>> {
        ctx.task
            .expected
            .iter()
            .map(|e| {
                ctx.addressing
                    .get(&e.tool)
                    .map(|a| (a, e))
                    .ok_or_else(|| anyhow!("oracle: no address for {}", e.tool))
            })
            .collect()
    }
}

fn calls(turn: usize, items: Vec<(&str, Value)>) -> AssistantTurn {
    AssistantTurn {
        tool_calls: items
            .into_iter()
            .enumerate()
            .map(|(i, (name, args))| call(turn, i, name, args))
            .collect(),
        ..Default::default()
    }
}

fn unique<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

impl Policy for OracleBackend {
    fn name(&self) -> &str {
        "oracle"
    }

    fn decide(&self, ctx: &TurnContext<'_>) -> anyhow::Result<AssistantTurn> {
        let turn = ctx.turn() + 1;
        let done =
            AssistantTurn { content: Some(super::done_answer(ctx.messages)), ..Default::default() };
        if ctx.task.expected.is_empty() {
            return Ok(AssistantTurn {
                content: Some("None of the available tools can do this.".into()),
                ..Default::default()
            });
        }
        let targets = self.addresses(ctx)?;
        // The oracle does not inspect results: a tool's own response may carry an `error` field, and a
        // real layout error shows up as a failed score, which the tests check.
        let last = ctx.last_results();
        let execute = |turn| {
            match ctx.layout {
            LayoutKind::Flat | LayoutKind::Search | LayoutKind::NativeSearch | LayoutKind::NativeSearchClient => {
                calls(turn, targets.iter().map(|(a, e)| (a.function.as_str(), arguments_at(a, e))).collect())
            }
            LayoutKind::Progressive | LayoutKind::ProgressiveOss => calls(
                turn,
                targets
                    .iter()
                    .map(|(a, e)| {
                        let body = arguments_at(a, e).to_string();
                        (EXECUTE, json!({"server_name": a.server, "category_name": a.category, "action_name": a.action, "body_schema": body}))
                    })
                    .collect(),
            ),
        }
        };
        let details = |turn| {
            let pairs = unique(targets.iter().map(|(a, _)| (a.category.clone(), a.action.clone())));
            calls(
                turn,
                pairs
                    .into_iter()
                    .map(|(c, a)| (ACTION_DETAILS, json!({"category_name": c, "action_name": a})))
                    .collect(),
            )
        };
        let Some(&(last_name, _, last_result)) = last.first() else {
            return Ok(match ctx.layout {
                // The provider's own search loads what a call names: the oracle calls it directly.
                LayoutKind::Flat | LayoutKind::NativeSearch => execute(turn),
                // Search for each expected tool by its own name, as an agent that knows what it wants would.
                LayoutKind::Search | LayoutKind::NativeSearchClient => calls(
                    turn,
                    unique(targets.iter().map(|(a, _)| a.function.clone()))
                        .into_iter()
                        .map(|f| (SEARCH_TOOLS, json!({"query": f.replace("__", " ").replace('_', " "), "max_results": 20})))
                        .collect(),
                ),
                LayoutKind::Progressive | LayoutKind::ProgressiveOss => {
                    let servers = unique(targets.iter().map(|(a, _)| a.server.clone()));
                    let discover = if ctx.layout == LayoutKind::ProgressiveOss { DISCOVER_OSS } else { DISCOVER };
                    calls(turn, vec![(discover, json!({"user_query": ctx.task.query, "server_names": servers}))])
                }
            });
        };
        Ok(match last_name {
            SEARCH_TOOLS => execute(turn),
            // OSS discovery shows names only; read each action's details by server and name.
            DISCOVER_OSS => {
                let pairs =
                    unique(targets.iter().map(|(a, _)| (a.server.clone(), a.action.clone())));
                calls(
                    turn,
                    pairs
                        .into_iter()
                        .map(|(s, a)| (ACTION_DETAILS, json!({"server_name": s, "action_name": a})))
                        .collect(),
                )
            }
            DISCOVER => {
                // Which categories did discovery already open up (listing their actions)?
                let result: Value = serde_json::from_str(last_result)
                    .context("oracle: discovery result is not JSON")?;
                let mut shown = HashSet::new();
                for s in result["servers"].as_array().into_iter().flatten() {
                    for c in s["categories"].as_array().into_iter().flatten() {
                        if c.get("actions").is_some() {
                            shown.insert(c["name"].as_str().unwrap_or_default().to_string());
                        }
                    }
                }
                let missing = unique(
                    targets.iter().map(|(a, _)| a.category.clone()).filter(|c| !shown.contains(c)),
                );
                if missing.is_empty() {
                    details(turn)
                } else {
                    calls(turn, vec![(CATEGORY_ACTIONS, json!({"category_names": missing}))])
                }
            }
            CATEGORY_ACTIONS => details(turn),
            ACTION_DETAILS => execute(turn),
            _ => done,
        })
    }
}
