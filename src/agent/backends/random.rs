//! The chance baseline: picks uniformly at random (seeded), with "call nothing" as one more option.
//!
//! Flat: one of the N functions or abstain (N + 1 options). Progressive: a random server (or abstain),
//! then a random category or listed action, then a random action, then execute. Arguments come from the
//! same extraction as the lexical baseline, so the two differ only in how they choose.

use super::{answer, one};
use crate::agent::extract::extract_arguments;
use crate::agent::{Policy, TurnContext};
use crate::layout::LayoutKind;
use crate::layout::progressive::{
    ACTION_DETAILS, CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS, EXECUTE,
};
use crate::layout::search::SEARCH_TOOLS;
use crate::protocol::AssistantTurn;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde_json::{Value, json};

pub struct RandomBackend;

impl Policy for RandomBackend {
    fn name(&self) -> &str {
        "random"
    }

    fn decide(&self, ctx: &TurnContext<'_>) -> anyhow::Result<AssistantTurn> {
        let turn = ctx.turn() + 1;
        // A fresh generator per turn, derived from the episode seed, keeps episodes independent of order.
        let mut rng =
            ChaCha8Rng::seed_from_u64(ctx.seed ^ (turn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
        let query = &ctx.task.query;
        let last = ctx.last_results();
        if matches!(ctx.layout, LayoutKind::Search | LayoutKind::NativeSearchClient) {
            let Some(&(name, _, result)) = last.first() else {
                return Ok(one(turn, SEARCH_TOOLS, json!({"query": query})));
            };
            if name != SEARCH_TOOLS {
                return Ok(answer("Done."));
            }
            let found: Vec<crate::protocol::FunctionDef> = serde_json::from_str::<Value>(result)
                .ok()
                .and_then(|v| serde_json::from_value(v["tools"].clone()).ok())
                .unwrap_or_default();
            let i = pick(found.len() + 1);
            return Ok(match found.get(i) {
                Some(f) => {
                    one(turn, &f.name, Value::Object(extract_arguments(query, &f.parameters)))
                }
                None => answer("None of the available tools can do this."),
            });
        }
        if ctx.layout == LayoutKind::Flat {
            if turn > 1 {
                return Ok(answer("Done."));
            }
            let i = pick(ctx.functions.len() + 1);
            let Some(f) = ctx.functions.get(i) else {
                return Ok(answer("None of the available tools can do this."));
            };
            return Ok(one(turn, &f.name, Value::Object(extract_arguments(query, &f.parameters))));
        }
        let Some(&(name, _, result)) = last.first() else {
            let servers = super::lexical::discovery_servers(ctx.functions);
            let i = pick(servers.len() + 1);
            let discover =
                if ctx.layout == LayoutKind::ProgressiveOss { DISCOVER_OSS } else { DISCOVER };
            return Ok(match servers.get(i) {
                Some((s, _)) => {
                    one(turn, discover, json!({"user_query": query, "server_names": [s]}))
                }
                None => answer("None of the available tools can do this."),
            });
        };
        let result: Value = serde_json::from_str(result).unwrap_or(Value::Null);
        Ok(match name {
            DISCOVER_OSS => {
                let s = &result["servers"][0];
                match s["actions"].as_array().filter(|a| !a.is_empty()) {
                    Some(actions) => one(
                        turn,
                        ACTION_DETAILS,
                        json!({"server_name": s["server"], "action_name": actions[pick(actions.len())]}),
                    ),
                    None => answer("Done."),
                }
            }
            DISCOVER => {
                let cats: Vec<&Value> = result["servers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|s| s["categories"].as_array().into_iter().flatten())
                    .collect();
                if cats.is_empty() {
                    return Ok(answer("Done."));
                }
                let c = cats[pick(cats.len())];
                match c["actions"].as_array().filter(|a| !a.is_empty()) {
                    Some(actions) => {
                        let a = &actions[pick(actions.len())];
                        one(
                            turn,
                            ACTION_DETAILS,
                            json!({"category_name": c["name"], "action_name": a["name"]}),
                        )
                    }
                    None => one(turn, CATEGORY_ACTIONS, json!({"category_names": [c["name"]]})),
                }
            }
            CATEGORY_ACTIONS => {
                let c = &result["categories"][0];
                match c["actions"].as_array().filter(|a| !a.is_empty()) {
                    Some(actions) => {
                        let a = &actions[pick(actions.len())];
                        one(
                            turn,
                            ACTION_DETAILS,
                            json!({"category_name": c["category"], "action_name": a["name"]}),
                        )
                    }
                    None => answer("Done."),
                }
            }
            ACTION_DETAILS if !super::is_layout_error(&result.to_string()) => {
                let args = extract_arguments(query, &result["inputSchema"]);
                one(
                    turn,
                    EXECUTE,
                    json!({"server_name": result["server"], "category_name": result["category"], "action_name": result["name"], "body_schema": Value::Object(args).to_string()}),
                )
            }
            _ => answer("Done."),
        })
    }
}
