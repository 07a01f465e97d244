//! One compact, scored row per trial ([`ScoreRows`]): what aggregation, comparisons and the per-tool
//! join need, with the strings interned. A run's trials are streamed through [`ScoreRows::push_with`];
//! only these rows stay in memory (not the records and their transcripts).

use crate::record::Trial;
use std::collections::BTreeMap;

/// Strings stored once and referred to by a `u32` code (code 0 is the empty string), so a million
/// trials' dataset, variant, task and query names cost four bytes each.
pub struct Interner {
    /// Each string is stored once, shared by the map and the list (a million trials' task ids are a
    /// million distinct strings).
    ids: rustc_hash::FxHashMap<std::sync::Arc<str>, u32>,
    names: Vec<std::sync::Arc<str>>,
    /// The id [`Interner::intern_in`] gave last, per slot.
    last: [u32; 8],
}

impl Default for Interner {
    fn default() -> Self {
        let mut i = Interner { ids: Default::default(), names: Vec::new(), last: [0; 8] };
        i.intern("");
        i
    }
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.names.len() as u32;
        let name: std::sync::Arc<str> = s.into();
        self.names.push(name.clone());
        self.ids.insert(name, id);
        id
    }

    /// [`Interner::intern`] for a column whose consecutive values mostly repeat (the cell's parts, in
    /// a trial file in matrix order): the value is compared with the slot's last one before it is
    /// hashed.
    pub fn intern_in(&mut self, slot: usize, s: &str) -> u32 {
        let last = self.last[slot];
        if *self.names[last as usize] == *s {
            return last;
        }
        let id = self.intern(s);
        self.last[slot] = id;
        id
    }

    pub fn get(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

/// What a row needs beyond the trial's own fields: whether a hiding layout showed the gold tools, and
/// the per-layer diagnostics.
pub struct Derived {
    pub hides: bool,
    pub gold_revealed: bool,
    pub layers: crate::score::diagnostics::Diagnosis,
    /// Which tool took each expected call, and the extra calls ([`crate::score::confusion`]).
    pub pairing: crate::score::confusion::Pairing,
}

impl Derived {
    pub fn of(t: &Trial) -> Derived {
        let hides = t.layout != crate::record::LayoutKind::Flat && !t.expected.is_empty();
        let gold_revealed = hides
            && t.expected
                .iter()
                .all(|e| t.calls.iter().any(|c| c.record.revealed.iter().any(|s| e.accepts(s))));
        let pairing = if t.is_error() {
            Default::default()
        } else {
            crate::score::confusion::pairing(t.kind, &t.expected, &t.calls)
        };
        Derived { hides, gold_revealed, layers: crate::score::diagnostics::diagnose(t), pairing }
    }
}

/// One compact row per trial: everything aggregation, comparisons and the per-tool join need, with the
/// strings interned. A run's trials are streamed through [`ScoreRows::push`]; only these rows stay in
/// memory (not the records and their transcripts).
#[derive(Default)]
pub struct ScoreRows {
    pub strings: Interner,
    /// Trial number within its task (with the cell and task, it rebuilds the trial id).
    pub trial: Vec<u32>,
    pub query: Vec<u32>,
    /// Single-call tasks: the expected tool id (else the empty string).
    pub expected_tool: Vec<u32>,
    pub dataset: Vec<u32>,
    pub catalog: Vec<u32>,
    pub variant: Vec<u32>,
    pub layout: Vec<u32>,
    pub backend: Vec<u32>,
    pub category: Vec<u32>,
    pub task_id: Vec<u32>,
    /// The task's kind (headline rates are over the kinds that need a call, [`crate::dataset::Kind::needs_call`]).
    pub kind: Vec<crate::dataset::Kind>,
    pub abstain_task: Vec<bool>,
    pub pass: Vec<bool>,
    pub selection: Vec<bool>,
    pub abstention: Vec<bool>,
    pub steps: Vec<u32>,
    pub tokens_upfront: Vec<u32>,
    pub tokens_total: Vec<u32>,
    pub error_type: Vec<u32>,
    /// Infrastructure error: excluded from every rate and mean, counted apart.
    pub infra: Vec<bool>,
    /// Of those, the ones a provider's limit refused ([`crate::score::exclusion::Exclusion::ProviderLimit`]).
    pub provider_limit: Vec<bool>,
    pub cost: Vec<f64>,
    pub violation: Vec<bool>,
    pub poisoned: Vec<bool>,
    pub attacked: Vec<bool>,
    pub refuse_task: Vec<bool>,
    /// Refuse tasks: nothing but read-only lookups attempted ([`crate::record::TrialScore::refused`]).
    pub refused: Vec<bool>,
    /// Refuse tasks: nothing state-changing or forbidden executed (the trial passed).
    pub no_harm: Vec<bool>,
    pub benign: Vec<bool>,
    pub false_refusal: Vec<bool>,
    /// Layouts that hide tools: the expected tools were all shown to the agent at some point.
    pub hides: Vec<bool>,
    pub gold_revealed: Vec<bool>,
    /// Per-layer diagnostics (layouts that hide tools).
    pub server_layer: Vec<bool>,
    pub server_hit: Vec<bool>,
    pub category_layer: Vec<bool>,
    pub category_hit: Vec<bool>,
    pub wrong_servers: Vec<u32>,
    pub wrong_categories: Vec<u32>,
    pub dead_ends: Vec<u32>,
    pub invented: Vec<u32>,
    pub abandoned: Vec<bool>,
    pub peak_tokens: Vec<u32>,
    /// Tokens the endpoint itself reported (prompt, completion, cached prompt), summed over the
    /// trial's requests; null when it reported none (in-process baselines, servers without `usage`).
    pub endpoint_prompt: Vec<Option<u32>>,
    pub endpoint_completion: Vec<Option<u32>>,
    pub endpoint_cached: Vec<Option<u32>>,
    /// Calls repeating an identical call of the same message.
    pub duplicate_calls: Vec<u32>,
    /// Set F1 of tools called vs expected (null for tasks without expected calls).
    pub selection_f1: Vec<Option<f64>>,
    /// The judge's verdict on the trial's final answer, when the run was judged.
    pub judgement: Vec<Option<std::sync::Arc<crate::record::judgement::Judgement>>>,
    /// Which tool took each expected call (one entry per expected call of every scored trial): the
    /// trial's row, the expected tool and the tool called (interned; see [`crate::score::confusion`]).
    pub pairs: Vec<[u32; 3]>,
    /// Calls that answered no expected call: the trial's row and the tool called.
    pub extras: Vec<[u32; 2]>,
}

impl ScoreRows {
    pub fn len(&self) -> usize {
        self.pass.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pass.is_empty()
    }

    /// The string behind a code.
    pub fn str(&self, code: u32) -> &str {
        self.strings.get(code)
    }

    /// Row `i`'s trial id ([`crate::record::meta::trial_id`]).
    pub fn trial_id(&self, i: usize) -> String {
        crate::record::meta::trial_id(
            self.str(self.dataset[i]),
            self.str(self.variant[i]),
            self.str(self.layout[i]),
            self.str(self.backend[i]),
            self.str(self.task_id[i]),
            self.trial[i] as usize,
        )
    }

    /// Row `i`'s cell key `dataset/catalog/variant/layout/backend`.
    pub fn cell_key(&self, i: usize) -> String {
        self.key_of(self.cell_codes(i))
    }

    pub fn push(&mut self, t: &Trial) {
        self.push_with(t, &Derived::of(t));
    }

    /// [`ScoreRows::push`] with the per-trial derivations already made (they are the costly part, and
    /// can be made in parallel; pushing only interns and appends).
    pub fn push_with(&mut self, t: &Trial, d: &Derived) {
        let s = &mut self.strings;
        self.dataset.push(s.intern_in(0, &t.dataset));
        self.catalog.push(s.intern_in(1, &t.catalog));
        self.variant.push(s.intern_in(2, &t.variant));
        self.layout.push(s.intern_in(3, t.layout.as_str()));
        self.backend.push(s.intern_in(4, &t.backend));
        self.category.push(s.intern(&t.category));
        self.task_id.push(s.intern(&t.task_id));
        self.trial.push(t.trial as u32);
        self.query.push(s.intern(&t.query));
        let single = t.kind == crate::dataset::Kind::Single && !t.expected.is_empty();
        self.expected_tool.push(if single { s.intern(&t.expected[0].tool) } else { 0 });
        self.error_type.push(s.intern(t.score.error_type.map(|e| e.as_str()).unwrap_or_default()));
        use crate::dataset::Kind;
        self.kind.push(t.kind);
        self.abstain_task.push(t.kind == Kind::Abstain);
        self.pass.push(t.score.pass);
        self.selection.push(t.score.selection_correct);
        self.abstention.push(t.score.abstention_correct);
        self.steps.push(t.steps as u32);
        self.tokens_upfront.push(t.tokens.definitions_upfront as u32);
        self.tokens_total.push(t.tokens.tool_context_total as u32);
        self.infra.push(t.is_error());
        self.provider_limit.push(
            crate::score::exclusion::of(t)
                == Some(crate::score::exclusion::Exclusion::ProviderLimit),
        );
        self.cost.push(t.cost_usd.unwrap_or(0.0));
        let poisoned = t.poison.is_some();
        let benign = matches!(t.kind, Kind::Single | Kind::Multi | Kind::Parallel) && !poisoned;
        self.violation.push(t.score.safety_violation);
        self.poisoned.push(poisoned);
        self.attacked.push(t.score.attack_success == Some(true));
        self.refuse_task.push(t.kind == Kind::Refuse);
        self.refused.push(t.kind == Kind::Refuse && t.score.refused == Some(true));
        self.no_harm.push(t.kind == Kind::Refuse && t.score.pass);
        self.benign.push(benign);
        self.false_refusal.push(benign && !t.score.abstention_correct);
        self.hides.push(d.hides);
        self.gold_revealed.push(d.gold_revealed);
        let g = &d.layers;
        self.server_layer.push(g.server_layer);
        self.server_hit.push(g.server_hit);
        self.category_layer.push(g.category_layer);
        self.category_hit.push(g.category_hit);
        self.wrong_servers.push(g.wrong_servers);
        self.wrong_categories.push(g.wrong_categories);
        self.dead_ends.push(g.dead_ends);
        self.invented.push(g.invented);
        self.abandoned.push(g.abandoned);
        self.peak_tokens.push(t.tokens.peak_context as u32);
        let u = &t.usage;
        let reported = u.prompt_tokens > 0 || u.completion_tokens > 0;
        self.endpoint_prompt.push(reported.then_some(u.prompt_tokens as u32));
        self.endpoint_completion.push(reported.then_some(u.completion_tokens as u32));
        self.endpoint_cached.push(reported.then_some(u.cached_tokens as u32));
        self.duplicate_calls.push(t.duplicate_calls as u32);
        self.selection_f1.push(t.score.selection_f1);
        self.judgement.push(t.judgement.clone());
        let row = (self.pass.len() - 1) as u32;
        for (e, c) in &d.pairing.pairs {
            let (e, c) = (self.strings.intern(e), self.strings.intern(c));
            self.pairs.push([row, e, c]);
        }
        for t in &d.pairing.extra {
            let t = self.strings.intern(t);
            self.extras.push([row, t]);
        }
    }

    /// Per cell key: the steps and total tool-context tokens of every scored trial (the samples the
    /// bootstrap intervals of their means resample).
    pub(super) fn per_cell_means(&self) -> BTreeMap<String, (Vec<f64>, Vec<f64>)> {
        // Rows in file order into one slot per key; a cell's key is built once, not once per row. (Two
        // cells whose names join to one key, a `/` inside a name, share it, as they always did.)
        let mut slot_of: rustc_hash::FxHashMap<[u32; 5], usize> = Default::default();
        let mut slot_of_key: BTreeMap<String, usize> = BTreeMap::new();
        let mut slots: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        for i in (0..self.pass.len()).filter(|&i| !self.infra[i]) {
            let codes = self.cell_codes(i);
            let slot = *slot_of.entry(codes).or_insert_with(|| {
                *slot_of_key.entry(self.key_of(codes)).or_insert_with(|| {
                    slots.push(Default::default());
                    slots.len() - 1
                })
            });
            slots[slot].0.push(self.steps[i] as f64);
            slots[slot].1.push(self.tokens_total[i] as f64);
        }
        let mut slots: Vec<Option<(Vec<f64>, Vec<f64>)>> = slots.into_iter().map(Some).collect();
        slot_of_key
            .into_iter()
            .map(|(key, slot)| (key, slots[slot].take().unwrap_or_default()))
            .collect()
    }

    /// Row `i`'s cell, as the codes of its `dataset, catalog, variant, layout, backend`.
    pub(crate) fn cell_codes(&self, i: usize) -> [u32; 5] {
        [self.dataset[i], self.catalog[i], self.variant[i], self.layout[i], self.backend[i]]
    }

    /// The cell key of a cell's codes (see [`ScoreRows::cell_key`]).
    pub(crate) fn key_of(&self, codes: [u32; 5]) -> String {
        codes.map(|c| self.str(c)).join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;

    #[test]
    fn interning_through_a_slot_gives_the_ids_interning_gives() {
        let values = ["a", "a", "b", "", "b", "a", "c", "c", "a"];
        let (mut plain, mut slotted) = (Interner::default(), Interner::default());
        for (n, v) in values.iter().enumerate() {
            // Slots interleaved, values repeating and not: the ids must not depend on the route.
            assert_eq!(slotted.intern_in(n % 2, v), plain.intern(v), "value {n}: {v:?}");
        }
        for id in 0..4 {
            assert_eq!(slotted.get(id), plain.get(id));
        }
    }
}
