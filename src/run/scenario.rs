//! Per-task presentations: the variant catalog restricted to a task's candidate set or to its gold
//! tools plus seeded distractors, and the catalog with a poisoned description or tool.

use crate::catalog::{Catalog, Category, Server, Tool};
use crate::error::InputError;
use crate::layout::flat::stable_hash;
use anyhow::Result;
use std::collections::HashSet;

/// The variant catalog restricted to a task's candidate set (tools, or merged tools dispatching to
/// them); empty categories and servers are dropped. Only the kept tools are copied: a tool-count curve
/// restricts a large catalog once per task and level.
pub(super) fn restricted(shown: &Catalog, candidates: &[String]) -> Catalog {
    let wanted: HashSet<&str> = candidates.iter().map(String::as_str).collect();
    let keep = |t: &Tool| {
        wanted.contains(t.id.as_str())
            || t.dispatch
                .as_ref()
                .is_some_and(|d| d.targets.values().any(|v| wanted.contains(v.as_str())))
    };
    let servers = shown
        .servers
        .iter()
        .filter_map(|s| {
            let categories: Vec<Category> = s
                .categories
                .iter()
                .filter_map(|c| {
                    let tools: Vec<Tool> = c.tools.iter().filter(|t| keep(t)).cloned().collect();
                    (!tools.is_empty()).then(|| Category {
                        name: c.name.clone(),
                        description: c.description.clone(),
                        tools,
                    })
                })
                .collect();
            (!categories.is_empty()).then(|| Server {
                name: s.name.clone(),
                title: s.title.clone(),
                description: s.description.clone(),
                categories,
            })
        })
        .collect();
    Catalog::new(shown.name.clone(), shown.description.clone(), servers)
}

/// A task's gold tools (and its own candidates, if any) plus `n` distractors: the other tools ordered by
/// a seeded hash of (seed, task, tool), so levels are nested and the draw is the same on every run.
pub fn with_distractors(
    all: &[String],
    task: &crate::dataset::Task,
    n: usize,
    seed: u64,
) -> Vec<String> {
    DistractorDraw::new(all, task, n, seed).level(n).to_vec()
}

/// One task's distractor draw up to the run's largest level; every smaller level is a prefix of it
/// (the levels are nested), so a curve draws once per task instead of once per level and episode.
pub struct DistractorDraw {
    tools: Vec<String>,
    /// How many of `tools` the task always sees (gold tools, candidates, poison anchor).
    kept: usize,
}

impl DistractorDraw {
    pub fn new(all: &[String], task: &crate::dataset::Task, max_level: usize, seed: u64) -> Self {
        let mut keep: Vec<String> = task
            .expected
            .iter()
            .flat_map(|e| std::iter::once(e.tool.clone()).chain(e.alternatives.iter().cloned()))
            .collect();
        // A poison needs its target tool, or a tool of the category it adds to, to stay visible.
        let poison_anchor = task.poison.as_ref().and_then(|p| match (&p.target, &p.add_tool) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(a)) => all
                .iter()
                .find(|id| id.starts_with(&format!("{}/{}/", a.server, a.category)))
                .cloned(),
            _ => None,
        });
        for c in task.candidates.iter().chain(poison_anchor.iter()) {
            if !keep.contains(c) {
                keep.push(c.clone());
            }
        }
        let kept: HashSet<&String> = keep.iter().collect();
        let mut pool: Vec<(u64, &String)> = all
            .iter()
            .filter(|t| !kept.contains(t))
            .map(|t| (stable_hash(format!("{seed}|{}|{t}", task.id).as_bytes()), t))
            .collect();
        // Only the first `max_level` (at least one) are ever shown: select them, then order them.
        let take = max_level.max(1).min(pool.len());
        if take < pool.len() {
            pool.select_nth_unstable(take);
            pool.truncate(take);
        }
        pool.sort();
        let kept = keep.len();
        keep.extend(pool.into_iter().map(|(_, t)| t.clone()));
        DistractorDraw { tools: keep, kept }
    }

    /// The tools a task sees at level `n`. Abstain and refuse tasks have no gold tool: they see `n` tools
    /// (at least one).
    pub fn level(&self, n: usize) -> &[String] {
        let n = if self.kept == 0 { n.max(1) } else { n };
        &self.tools[..(self.kept + n).min(self.tools.len())]
    }
}

/// Apply a task's poison to the variant catalog: append text to a tool's description (or to the merged
/// tool that dispatches to it), or add a tool.
pub(super) fn poisoned(
    shown: &Catalog,
    poison: &crate::dataset::Poison,
) -> Result<(Catalog, Option<crate::catalog::Tool>)> {
    let mut servers = shown.servers.clone();
    let mut added = None;
    if let (Some(target), Some(text)) = (&poison.target, &poison.text) {
        let mut hit = false;
        for t in servers
            .iter_mut()
            .flat_map(|s| s.categories.iter_mut())
            .flat_map(|c| c.tools.iter_mut())
        {
            let dispatches =
                t.dispatch.as_ref().is_some_and(|d| d.targets.values().any(|v| v == target));
            if !hit && (t.id == *target || dispatches) {
                t.description = format!("{} {text}", t.description);
                hit = true;
            }
        }
        if !hit {
            return Err(InputError::new(
                "poison.target",
                format!("tool `{target}` is not shown in this variant"),
            )
            .into());
        }
    }
    if let Some(a) = &poison.add_tool {
        let tool = crate::catalog::load::parse_tool(&a.server, &a.category, &a.tool)
            .map_err(|e| InputError::new("poison.add_tool", e))?;
        let category = servers
            .iter_mut()
            .filter(|s| s.name == a.server)
            .flat_map(|s| s.categories.iter_mut())
            .find(|c| c.name == a.category)
            .ok_or_else(|| {
                InputError::new(
                    "poison.add_tool",
                    format!("no category `{}` in server `{}`", a.category, a.server),
                )
            })?;
        category.tools.push(tool.clone());
        added = Some(tool);
    }
    Ok((Catalog::new(shown.name.clone(), shown.description.clone(), servers), added))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition the draw must keep: the kept tools, then the others sorted by their seeded hash,
    /// the first `n` of them (at least one when nothing is kept).
    fn reference(all: &[String], task: &crate::dataset::Task, n: usize, seed: u64) -> Vec<String> {
        let mut keep: Vec<String> = task.expected.iter().map(|e| e.tool.clone()).collect();
        for c in &task.candidates {
            if !keep.contains(c) {
                keep.push(c.clone());
            }
        }
        let mut pool: Vec<(u64, String)> = all
            .iter()
            .filter(|t| !keep.contains(t))
            .map(|t| (stable_hash(format!("{seed}|{}|{t}", task.id).as_bytes()), t.clone()))
            .collect();
        pool.sort();
        let n = if keep.is_empty() { n.max(1) } else { n };
        keep.extend(pool.into_iter().take(n).map(|(_, t)| t));
        keep
    }

    fn task(id: &str, expected: &[&str], candidates: &[&str]) -> crate::dataset::Task {
        serde_json::from_value(serde_json::json!({
            "id": id, "query": "q", "kind": if expected.is_empty() { "abstain" } else { "single" }, "category": "c",
            "expected": expected.iter().map(|t| serde_json::json!({"tool": t})).collect::<Vec<_>>(),
            "candidates": candidates,
        }))
        .unwrap()
    }

    #[test]
    fn one_draw_per_task_gives_every_level_the_same_tools_as_drawing_that_level() {
        let all: Vec<String> =
            (0..300).map(|i| format!("s{}/c{}/tool_{i}", i % 7, i % 3)).collect();
        let tasks = [
            task("a", &["s0/c0/tool_0"], &[]),
            task("b", &["s1/c1/tool_1", "s2/c2/tool_2"], &["s3/c0/tool_3"]),
            task("c", &[], &[]),
        ];
        for t in &tasks {
            for max in [0, 10, 50, 500] {
                let draw = DistractorDraw::new(&all, t, max, 7);
                for n in [0, 1, 10, 20, 50, 100, 200, 500].into_iter().filter(|n| *n <= max) {
                    assert_eq!(
                        draw.level(n),
                        reference(&all, t, n, 7).as_slice(),
                        "task {} level {n} of {max}",
                        t.id
                    );
                }
            }
        }
        // Nested: a smaller level's tools are the start of a larger level's.
        let d = DistractorDraw::new(&all, &tasks[0], 100, 7);
        assert!(d.level(100).starts_with(d.level(10)) && d.level(10).len() == 11);
    }
}
