//! toolpick serving a run's presentations over MCP (the transport itself is `mcp::serve`):
//!
//! - [`agent_backend`]: an external MCP agent as a backend (`mcp-agent:<COMMAND>`), the oracle
//!   played as an MCP client (`mcp-oracle`), and the client `mcp serve --out` waits for
//!   (`mcp-client`); their registry entries are [`BACKENDS`];
//! - [`presentation`]: `toolpick mcp serve`, one cell (and optionally one task's view) served to any
//!   MCP client;
//! - [`sessions`]: `mcp serve --sessions` (a session per task, recorded) and `mcp collect` (the
//!   recorded sessions turned into a run directory).
//!
//! They live under `run` because they build presentations with the runner's own code and serve a
//! layout over `mcp`, which `agent` may not import (`tests/module_deps.rs`).

pub mod agent_backend;
pub mod presentation;
pub mod sessions;

use crate::agent::backends::{Built, Entry};
use crate::error::InputError;
use std::sync::Arc;

/// The backend registry's entries for backends served over MCP (see `agent::backends::build`).
pub const BACKENDS: &[Entry] = &[
    // `mcp serve --out`: the connected client takes its place (`Prepared::set_backend`).
    Entry {
        name: "mcp-client",
        build: |m, _| {
            Ok(Built {
                backend: Arc::new(agent_backend::Unconnected(m.name.clone())),
                endpoint: None,
            })
        },
        limits: None,
        native: false,
    },
    Entry {
        name: "mcp-oracle",
        build: |m, _| {
            Ok(Built {
                backend: Arc::new(agent_backend::McpAgentBackend::oracle(&m.name)),
                endpoint: None,
            })
        },
        limits: None,
        native: false,
    },
    Entry { name: "mcp-agent", build: build_agent, limits: None, native: false },
];

fn build_agent(
    m: &mut crate::agent::spec::ModelSpec,
    _: &crate::agent::backends::BuildContext,
) -> anyhow::Result<Built> {
    let command = m.agent_command.clone().ok_or_else(|| {
        InputError::new("--backends", "the mcp-agent backend needs its command: mcp-agent:<COMMAND> (or `agent_command` in the config file)")
    })?;
    Ok(Built {
        backend: Arc::new(agent_backend::McpAgentBackend::new(&m.name, &command)?),
        endpoint: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::agent::backends::{BUILT_IN, NAMES};

    #[test]
    fn every_backend_name_has_one_registry_entry() {
        for name in NAMES {
            let entries = BUILT_IN.iter().chain(super::BACKENDS).filter(|e| e.name == name).count();
            assert_eq!(entries, 1, "{name}");
        }
        // And every entry a user can name is named (`mcp-client` is `mcp serve --out`'s own).
        for e in BUILT_IN.iter().chain(super::BACKENDS).filter(|e| e.name != "mcp-client") {
            assert!(NAMES.contains(&e.name), "{}", e.name);
        }
    }

    #[test]
    fn an_unknown_backend_is_refused_naming_the_flag_and_the_choices() {
        let ids = std::collections::HashSet::new();
        let context = crate::agent::backends::BuildContext {
            lexical: Default::default(),
            cache: None,
            layouts: &[],
            task_ids: &ids,
            tools: &[],
        };
        let mut spec = crate::agent::spec::ModelSpec::baseline("lexical");
        spec.backend = "gpt".into();
        let e = crate::agent::backends::build(&mut spec, &context, super::BACKENDS).err().unwrap();
        let e = e.downcast::<crate::error::InputError>().unwrap();
        assert_eq!(e.file, std::path::Path::new("--backends"));
        assert!(e.message.contains("`gpt`") && e.message.contains("mcp-agent:<COMMAND>"), "{e}");
    }
}
