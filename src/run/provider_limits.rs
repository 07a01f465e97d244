//! What each (backend, layout, catalog variant) cell would present to a provider in its first
//! request — how many tools, under which names, and an estimate of the prompt's tokens — with the
//! limits of the backend's protocol and the model's context window, so the run's preflight
//! (`cli::preflight::provider_limits`) reports every cell a provider would refuse before any trial.
//!
//! The layouts present different tool sets: `flat` every tool; `progressive` and `progressive-oss` the
//! meta-tools (the catalog's tools travel as action names in arguments); `search` its one meta-tool,
//! then the tools it finds, so their names must be acceptable too; the native layouts their search tool,
//! with every tool sent deferred (names checked, not counted: a deferred tool is not in the prompt,
//! and deferral is how providers take catalogs beyond their tool-count limits). A task with its own presentation
//! (a tool-count curve's level, its own candidates, a poison) is measured on that presentation, built
//! as the run builds it; a cell reports its largest task.

use super::Prepared;
use crate::agent::backends::limits::{self, ProtocolLimits};
use crate::record::LayoutKind;
use std::collections::BTreeSet;

/// One cell as the check sees it.
#[derive(Debug, Clone)]
pub struct Presented {
    /// The cell key (`dataset/catalog/variant/layout/backend`).
    pub cell: String,
    pub layout: LayoutKind,
    /// The model's label.
    pub model: String,
    /// The protocol's limits; `None`: the backend sends no request to a provider.
    pub limits: Option<&'static ProtocolLimits>,
    /// The model's context window and where it was read.
    pub window: Option<(u64, String)>,
    /// The most tools a first request of the cell carries (over its tasks).
    pub tools: usize,
    /// Every name the cell may offer (for `search`, the tools it can find too).
    pub names: Vec<String>,
    /// Estimated tokens of the cell's largest first request (`o200k_base`: the tools plus the task's
    /// opening messages).
    pub prompt_tokens: usize,
}

impl Prepared {
    /// Every cell of a backend with protocol limits, as its first request would present it. The
    /// context window of each endpoint is asked once (configured, else the server's `/props` when the
    /// endpoint's preflight is on).
    pub async fn presented(&self) -> anyhow::Result<Vec<Presented>> {
        let mut windows = Vec::with_capacity(self.backends.len());
        for (i, m) in self.config.models.iter().enumerate() {
            let window = match &self.endpoints[i] {
                Some(e) if m.preflight || m.context_window.is_some() => e.context_window().await,
                _ => None,
            };
            windows.push(window);
        }
        let limits: Vec<Option<&'static ProtocolLimits>> = self
            .config
            .models
            .iter()
            .zip(&self.endpoints)
            .map(|(m, e)| {
                let declared =
                    crate::agent::backends::limits_of(&m.backend, super::serving::BACKENDS);
                let url = e.as_ref().map(|e| e.endpoint()).unwrap_or_default();
                limits::applying(declared, m.provider_limits.as_deref(), url)
            })
            .collect();
        let mut out = Vec::new();
        if limits.iter().zip(&windows).all(|(l, w)| l.is_none() && w.is_none()) {
            return Ok(out);
        }
        for s in &self.suites {
            let opening: Vec<usize> = s
                .dataset
                .tasks
                .iter()
                .map(|t| {
                    let messages = crate::agent::opening_messages(t);
                    crate::tokens::count(&serde_json::to_string(&messages).unwrap_or_default())
                })
                .collect();
            for c in &s.cells {
                let kind = c.layout.kind();
                let shown = |layout: &dyn crate::layout::Layout,
                             addressing: &crate::agent::Addressing| {
                    // Deferred tools are sent too (their names are checked), but not shown: the
                    // tool-count limit is on what the prompt carries.
                    let mut names: Vec<String> = layout
                        .functions()
                        .iter()
                        .chain(layout.deferred())
                        .map(|f| f.name.clone())
                        .collect();
                    if kind == LayoutKind::Search {
                        names.extend(
                            addressing
                                .values()
                                .map(|a| a.function.clone())
                                .filter(|n| !n.is_empty()),
                        );
                    }
                    names
                };
                let mut names: BTreeSet<String> = BTreeSet::new();
                let (mut tools, mut prompt) = (0, 0);
                let mut whole_cell = false;
                for (t, opening) in opening.iter().enumerate() {
                    if Self::per_task(s, c, t) {
                        let sc = self.scenario(s, c, t)?;
                        tools = tools.max(sc.layout.functions().len());
                        prompt = prompt.max(sc.tokens_upfront + opening);
                        names.extend(shown(sc.layout.as_ref(), &sc.addressing));
                    } else {
                        tools = tools.max(c.layout.functions().len());
                        prompt = prompt.max(c.tokens_upfront + opening);
                        whole_cell = true;
                    }
                }
                if whole_cell {
                    names.extend(shown(c.layout.as_ref(), &c.addressing));
                }
                let names: Vec<String> = names.into_iter().collect();
                for (b, backend) in self.backends.iter().enumerate() {
                    if limits[b].is_none() && windows[b].is_none() {
                        continue;
                    }
                    out.push(Presented {
                        cell: crate::record::meta::cell_key(
                            &s.dataset.name,
                            &s.catalog,
                            &c.variant,
                            kind.as_str(),
                            backend.name(),
                        ),
                        layout: kind,
                        model: self.config.models[b].name.clone(),
                        limits: limits[b],
                        window: windows[b].clone(),
                        tools,
                        names: names.clone(),
                        prompt_tokens: prompt,
                    });
                }
            }
        }
        Ok(out)
    }
}
