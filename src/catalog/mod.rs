//! The tools under test: a catalog of servers → categories → tools.
//!
//! A [`Catalog`] is what a schema designer writes (one JSON file per server, see `docs/formats.md`).
//! Every tool has a stable [`Tool::id`] (`server/category/tool`) that ground truth refers to; names and
//! descriptions may change between description variants ([`variant`]), ids never do.

pub mod degrade;
pub mod load;
pub mod mock;
pub mod variant;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

pub use load::load_catalog;
pub use mock::MockMode;

/// MCP tool annotations. Absent hints take the MCP defaults: `readOnlyHint` false, `destructiveHint`
/// true — but only where it means something: the specification gives it meaning only when
/// `readOnlyHint` is false, so a read-only tool that does not say reads as not destructive (else every
/// such tool would contradict itself) — `idempotentHint` false, `openWorldHint` true.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "SentAnnotations")]
pub struct Annotations {
    pub read_only_hint: bool,
    pub destructive_hint: bool,
    pub idempotent_hint: bool,
    pub open_world_hint: bool,
}

/// The hints as written, before the defaults.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SentAnnotations {
    read_only_hint: Option<bool>,
    destructive_hint: Option<bool>,
    idempotent_hint: Option<bool>,
    open_world_hint: Option<bool>,
}

impl From<SentAnnotations> for Annotations {
    fn from(sent: SentAnnotations) -> Self {
        let read_only_hint = sent.read_only_hint.unwrap_or(false);
        Annotations {
            read_only_hint,
            destructive_hint: sent.destructive_hint.unwrap_or(!read_only_hint),
            idempotent_hint: sent.idempotent_hint.unwrap_or(false),
            open_world_hint: sent.open_world_hint.unwrap_or(true),
        }
    }
}

impl Default for Annotations {
    fn default() -> Self {
        Annotations {
            read_only_hint: false,
            destructive_hint: true,
            idempotent_hint: false,
            open_world_hint: true,
        }
    }
}

/// One tool, as an MCP `tools/list` entry carries it, plus its id and simulated response.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// `server/category/tool`, fixed across variants.
    pub id: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Annotations,
    /// What simulated execution returns for a valid call: a template over the call's arguments, or
    /// fixed data (see [`mock`]).
    pub mock_response: Value,
    pub mock_mode: MockMode,
    /// Where the tool was written (for lint locations); empty for tools built in code.
    pub origin: Origin,
    /// Set on a merged tool (the `merge_siblings` operator): calls dispatch to the original tools.
    pub dispatch: Option<Dispatch>,
}

/// How a merged tool routes a call: the value of `param` names the original tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    pub param: String,
    /// Value of `param` → id of the original tool.
    pub targets: std::collections::BTreeMap<String, String>,
}

/// Where a tool comes from, and what its author declared explicitly.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Origin {
    pub file: std::path::PathBuf,
    pub line: usize,
    /// `annotations` was present in the file (absent hints are a lint finding).
    pub annotations_given: bool,
}

impl Tool {
    /// The properties of the input schema, in the order they were written.
    pub fn properties(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.iter())
    }

    /// Names listed in the input schema's `required`.
    pub fn required(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    pub name: String,
    pub description: String,
    pub tools: Vec<Tool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub categories: Vec<Category>,
}

impl Server {
    pub fn tool_count(&self) -> usize {
        self.categories.iter().map(|c| c.tools.len()).sum()
    }
}

/// A whole catalog. Build it with [`load_catalog`] (validated) or [`Catalog::new`] (in code).
#[derive(Debug, Clone)]
pub struct Catalog {
    pub name: String,
    pub description: String,
    pub servers: Vec<Server>,
    index: HashMap<String, (usize, usize, usize)>,
}

/// A tool together with where it lives.
#[derive(Debug, Clone, Copy)]
pub struct ToolRef<'a> {
    pub server: &'a Server,
    pub category: &'a Category,
    pub tool: &'a Tool,
}

impl Catalog {
    /// Assemble a catalog and index its tool ids. Ids must already be unique (the loader checks).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        servers: Vec<Server>,
    ) -> Self {
        let mut c = Catalog {
            name: name.into(),
            description: description.into(),
            servers,
            index: HashMap::new(),
        };
        c.reindex();
        c
    }

    fn reindex(&mut self) {
        self.index.clear();
        for (si, s) in self.servers.iter().enumerate() {
            for (ci, c) in s.categories.iter().enumerate() {
                for (ti, t) in c.tools.iter().enumerate() {
                    self.index.insert(t.id.clone(), (si, ci, ti));
                }
            }
        }
    }

    /// Every tool in catalog order.
    pub fn tools(&self) -> impl Iterator<Item = ToolRef<'_>> {
        self.servers.iter().flat_map(|server| {
            server.categories.iter().flat_map(move |category| {
                category.tools.iter().map(move |tool| ToolRef { server, category, tool })
            })
        })
    }

    pub fn tool_count(&self) -> usize {
        self.index.len()
    }

    pub fn get(&self, id: &str) -> Option<ToolRef<'_>> {
        let &(si, ci, ti) = self.index.get(id)?;
        let server = &self.servers[si];
        let category = &server.categories[ci];
        Some(ToolRef { server, category, tool: &category.tools[ti] })
    }

    pub fn server(&self, name: &str) -> Option<&Server> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Categories are addressed by name alone (unique across the catalog).
    pub fn category(&self, name: &str) -> Option<(&Server, &Category)> {
        self.servers
            .iter()
            .find_map(|s| s.categories.iter().find(|c| c.name == name).map(|c| (s, c)))
    }

    /// Apply `f` to every tool (used by description variants).
    pub fn map_tools(&mut self, mut f: impl FnMut(&mut Tool)) {
        for s in &mut self.servers {
            for c in &mut s.categories {
                for t in &mut c.tools {
                    f(t);
                }
            }
        }
        self.reindex();
    }
}
