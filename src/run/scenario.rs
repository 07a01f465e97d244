//! Per-task presentations: the variant catalog restricted to a task's candidate set or to its gold
//! tools plus seeded distractors, and the catalog with a poisoned description or tool.

use crate::catalog::Catalog;
use crate::error::InputError;
use crate::layout::flat::stable_hash;
use anyhow::Result;

/// The variant catalog restricted to a task's candidate set (tools, or merged tools dispatching to
/// them); empty categories and servers are dropped.
pub(super) fn restricted(shown: &Catalog, candidates: &[String]) -> Catalog {
    let mut servers = shown.servers.clone();
    for s in &mut servers {
        for c in &mut s.categories {
            c.tools.retain(|t| {
                candidates.contains(&t.id) || t.dispatch.as_ref().is_some_and(|d| d.targets.values().any(|v| candidates.contains(v)))
            });
        }
        s.categories.retain(|c| !c.tools.is_empty());
    }
    servers.retain(|s| !s.categories.is_empty());
    Catalog::new(shown.name.clone(), shown.description.clone(), servers)
}

/// A task's gold tools (and its own candidates, if any) plus `n` distractors: the other tools ordered by
/// a seeded hash of (seed, task, tool), so levels are nested and the draw is the same on every run.
pub fn with_distractors(all: &[String], task: &crate::dataset::Task, n: usize, seed: u64) -> Vec<String> {
    let mut keep: Vec<String> = task.expected.iter().flat_map(|e| std::iter::once(e.tool.clone()).chain(e.alternatives.iter().cloned())).collect();
    // A poison needs its target tool, or a tool of the category it adds to, to stay visible.
    let poison_anchor = task.poison.as_ref().and_then(|p| match (&p.target, &p.add_tool) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(a)) => all.iter().find(|id| id.starts_with(&format!("{}/{}/", a.server, a.category))).cloned(),
        _ => None,
    });
    for c in task.candidates.iter().chain(poison_anchor.iter()) {
        if !keep.contains(c) {
            keep.push(c.clone());
        }
    }
    let mut pool: Vec<(u64, &String)> =
        all.iter().filter(|t| !keep.contains(t)).map(|t| (stable_hash(format!("{seed}|{}|{t}", task.id).as_bytes()), t)).collect();
    pool.sort();
    // Abstain and refuse tasks have no gold tool: they see n tools (at least one).
    let n = if keep.is_empty() { n.max(1) } else { n };
    keep.extend(pool.into_iter().take(n).map(|(_, t)| t.clone()));
    keep
}

/// Apply a task's poison to the variant catalog: append text to a tool's description (or to the merged
/// tool that dispatches to it), or add a tool.
pub(super) fn poisoned(shown: &Catalog, poison: &crate::dataset::Poison) -> Result<(Catalog, Option<crate::catalog::Tool>)> {
    let mut servers = shown.servers.clone();
    let mut added = None;
    if let (Some(target), Some(text)) = (&poison.target, &poison.text) {
        let mut hit = false;
        for t in servers.iter_mut().flat_map(|s| s.categories.iter_mut()).flat_map(|c| c.tools.iter_mut()) {
            let dispatches = t.dispatch.as_ref().is_some_and(|d| d.targets.values().any(|v| v == target));
            if !hit && (t.id == *target || dispatches) {
                t.description = format!("{} {text}", t.description);
                hit = true;
            }
        }
        if !hit {
            return Err(InputError::new("poison.target", format!("tool `{target}` is not shown in this variant")).into());
        }
    }
    if let Some(a) = &poison.add_tool {
        let tool = crate::catalog::load::parse_tool(&a.server, &a.category, &a.tool).map_err(|e| InputError::new("poison.add_tool", e))?;
        let category = servers
            .iter_mut()
            .filter(|s| s.name == a.server)
            .flat_map(|s| s.categories.iter_mut())
            .find(|c| c.name == a.category)
            .ok_or_else(|| InputError::new("poison.add_tool", format!("no category `{}` in server `{}`", a.category, a.server)))?;
        category.tools.push(tool.clone());
        added = Some(tool);
    }
    Ok((Catalog::new(shown.name.clone(), shown.description.clone(), servers), added))
}
