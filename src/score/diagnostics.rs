//! Per-layer diagnostics for layouts that hide tools: where on the way down (server → category → tool)
//! an agent lost the gold tool. Pure functions of a trial record; gold servers and categories come from
//! the tool ids (`server/category/tool`).

use crate::record::nav::{CATEGORY_ACTIONS, DISCOVER, DISCOVER_OSS};
use crate::record::{CallStatus, LayoutKind, Trial};
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diagnosis {
    /// The layout has a server layer (progressive variants) and the task has gold tools.
    pub server_layer: bool,
    /// Discovery was asked about every gold server.
    pub server_hit: bool,
    /// The layout has a category layer (hosted Strata) and the task has gold tools.
    pub category_layer: bool,
    /// Every gold category was opened, or shown with its actions.
    pub category_hit: bool,
    /// Servers / categories explored that hold no gold tool.
    pub wrong_servers: u32,
    pub wrong_categories: u32,
    /// Meta-tool calls that failed (unknown server, category or action; missing parameters).
    pub dead_ends: u32,
    /// Calls to names that do not exist.
    pub invented: u32,
    /// A hiding layout, a task needing a call, and the agent answered without attempting any call
    /// (navigation is not an attempt; an invented name is).
    pub abandoned: bool,
}

fn names<'a>(args: Option<&'a Value>, key: &str) -> Vec<&'a str> {
    match args.and_then(|a| a.get(key)) {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(s)) => vec![s.as_str()],
        _ => vec![],
    }
}

/// A set of a few names (a trial's gold servers, the categories it opened): a vector is cheaper than a
/// hash set at these sizes, and every trial of a report builds several.
#[derive(Default)]
struct Few<'a>(Vec<&'a str>);

impl<'a> Few<'a> {
    fn insert(&mut self, s: &'a str) {
        if !self.contains(s) {
            self.0.push(s);
        }
    }
    fn contains(&self, s: &str) -> bool {
        self.0.contains(&s)
    }
}

impl<'a> FromIterator<&'a str> for Few<'a> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(iter: I) -> Self {
        let mut few = Few::default();
        iter.into_iter().for_each(|s| few.insert(s));
        few
    }
}

pub fn diagnose(t: &Trial) -> Diagnosis {
    let gold: Vec<&str> = t
        .expected
        .iter()
        .flat_map(|e| {
            std::iter::once(e.tool.as_str()).chain(e.alternatives.iter().map(String::as_str))
        })
        .collect();
    fn part(id: &str, i: usize) -> &str {
        id.split('/').nth(i).unwrap_or_default()
    }
    let gold_servers: Few = t.expected.iter().map(|e| part(&e.tool, 0)).collect();
    let gold_categories: Few = t.expected.iter().map(|e| part(&e.tool, 1)).collect();
    let hides = t.layout != LayoutKind::Flat && !gold.is_empty();
    let progressive = matches!(t.layout, LayoutKind::Progressive | LayoutKind::ProgressiveOss);
    let mut d = Diagnosis {
        server_layer: hides && progressive,
        category_layer: hides && t.layout == LayoutKind::Progressive,
        ..Default::default()
    };
    let mut asked_servers = Few::default();
    let mut opened_categories = Few::default();
    for c in &t.calls {
        let r = &c.record;
        match r.status {
            CallStatus::NavigationError => d.dead_ends += 1,
            CallStatus::Invented => d.invented += 1,
            _ => {}
        }
        if r.status != CallStatus::Navigated {
            continue;
        }
        if r.name == DISCOVER || r.name == DISCOVER_OSS {
            for s in names(r.arguments.as_ref(), "server_names") {
                if !gold_servers.contains(s) {
                    d.wrong_servers += 1;
                }
                asked_servers.insert(s);
            }
            // Categories whose actions discovery listed count as opened.
            for id in &r.revealed {
                opened_categories.insert(part(id, 1));
            }
        }
        if r.name == CATEGORY_ACTIONS {
            for cat in names(r.arguments.as_ref(), "category_names") {
                if !gold_categories.contains(cat) {
                    d.wrong_categories += 1;
                }
                opened_categories.insert(cat);
            }
        }
    }
    d.server_hit = d.server_layer && gold_servers.0.iter().all(|s| asked_servers.contains(s));
    d.category_hit =
        d.category_layer && gold_categories.0.iter().all(|c| opened_categories.contains(c));
    // Any attempt — an invented name or an unreadable call included — shows the agent did not give up
    // (the same rule as the scorer's abstention).
    let attempted = t.calls.iter().any(|c| {
        matches!(
            c.record.status,
            CallStatus::Executed
                | CallStatus::Rejected
                | CallStatus::Malformed
                | CallStatus::Invented
        )
    });
    d.abandoned = hides && !attempted && t.stop_reason == crate::record::StopReason::Answered;
    d
}
