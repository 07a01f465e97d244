//! What the lexical baseline tries to do in one request: its intents (the whole request and, when it
//! splits into clauses, each clause), the arguments each intent gives a call, and the plan of one
//! turn's calls — identical calls merged, at most [`MAX_CALLS`], each call id naming the intents it
//! serves so the next turn knows whose results it reads.
//!
//! Its own file because it is the multi-tool bookkeeping every layout policy shares, independent of
//! how candidates are ranked.

use super::LexicalBackend;
use crate::agent::backends::call;
use crate::agent::clauses::clauses;
use crate::agent::extract::extract_arguments;
use crate::protocol::AssistantTurn;
use crate::text::Analyzer;
use serde_json::Value;

/// A clause's pick must be among this many best candidates for the whole request.
pub const CLAUSE_GATE: usize = 3;
/// At most this many clauses are considered, and at most this many calls go out in one turn.
pub const MAX_CALLS: usize = 5;

/// What the baseline tries to do: the whole request (intent 0) and, when the request splits into two or
/// more clauses ([`clauses`]), each of the first [`MAX_CALLS`] clauses.
pub(super) struct Intents {
    pub(super) texts: Vec<String>,
    pub(super) terms: Vec<Vec<String>>,
}

impl Intents {
    pub(super) fn new(analyzer: &Analyzer, query: &str) -> Self {
        let mut texts = vec![query.to_string()];
        let parts = clauses(query);
        if parts.len() >= 2 {
            texts.extend(parts.into_iter().take(MAX_CALLS));
        }
        let terms = texts.iter().map(|t| analyzer.terms(t)).collect();
        Intents { texts, terms }
    }

    pub(super) fn len(&self) -> usize {
        self.texts.len()
    }
}

/// The calls of one turn, each with the intents it serves; identical calls are merged.
#[derive(Default)]
pub(super) struct Plan {
    calls: Vec<(String, Value, Vec<usize>)>,
}

impl Plan {
    pub(super) fn add(&mut self, name: &str, args: Value, intent: usize) {
        self.add_all(name, args, [intent]);
    }

    pub(super) fn add_all(
        &mut self,
        name: &str,
        args: Value,
        intents: impl IntoIterator<Item = usize>,
    ) {
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
    pub(super) fn into_turn(self, turn: usize, intents: &Intents) -> Option<AssistantTurn> {
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
pub(super) fn call_intents(id: &str, n: usize) -> Vec<usize> {
    match id.rsplit_once("_for_") {
        Some((_, tags)) => {
            tags.split('-').filter_map(|t| t.parse().ok()).filter(|&i| i < n).collect()
        }
        None => (0..n).collect(),
    }
}

impl LexicalBackend {
    /// Arguments for intent `i`: extracted from its text; a clause's gaps are filled from the whole request.
    pub(super) fn arguments(intents: &Intents, i: usize, schema: &Value) -> Value {
        let mut args = extract_arguments(&intents.texts[i], schema);
        if i > 0 {
            for (k, v) in extract_arguments(&intents.texts[0], schema) {
                args.entry(k).or_insert(v);
            }
        }
        Value::Object(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
