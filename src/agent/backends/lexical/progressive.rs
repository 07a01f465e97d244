//! The lexical baseline in the progressive layouts (hosted and OSS Strata): discover the best
//! servers, then for each intent walk categories → actions → details → `execute_action` on what the
//! previous call returned; plus the readers of the conversation (the last turn's calls and results,
//! whether an action was executed) that the search layout shares.
//!
//! Its own file because the progressive walk is the longest of the three layout policies and reads
//! the meta-tools' answers, which the flat and search policies never see.

use super::intents::{Intents, Plan, call_intents};
use super::{LexicalBackend, NO_TOOL, discovery_servers};
use crate::agent::TurnContext;
use crate::agent::backends::answer;
use crate::layout::LayoutKind;
use crate::layout::progressive::{
    ACTION_DETAILS, CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS, EXECUTE,
};
use crate::protocol::{AssistantTurn, Message, ToolCall};
use serde_json::{Value, json};

impl LexicalBackend {
    pub(super) fn progressive(&self, ctx: &TurnContext<'_>) -> AssistantTurn {
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
            if crate::agent::backends::is_layout_error(result_text) {
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
                answer(&crate::agent::backends::done_answer(ctx.messages))
            } else {
                answer(NO_TOOL)
            }
        })
    }
}

/// The calls of the last assistant turn with their results, in order.
pub(super) fn last_calls(messages: &[Message]) -> Vec<(&ToolCall, &str)> {
    let Some(pos) = messages.iter().rposition(|m| matches!(m, Message::Assistant { .. })) else {
        return vec![];
    };
    let Message::Assistant { tool_calls, .. } = &messages[pos] else {
        return vec![];
    };
    tool_calls.iter().map(|c| (c, result_of(&messages[pos..], &c.id))).collect()
}

pub(super) fn result_of<'a>(messages: &'a [Message], id: &str) -> &'a str {
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
pub(super) fn executed_any(messages: &[Message]) -> bool {
    messages.iter().enumerate().any(|(pos, m)| match m {
        Message::Assistant { tool_calls, .. } => tool_calls.iter().any(|c| {
            c.name == EXECUTE
                && !crate::agent::backends::is_layout_error(result_of(&messages[pos..], &c.id))
        }),
        _ => false,
    })
}
