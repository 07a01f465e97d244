//! Moving an imported benchmark onto a live server's catalog (`toolpick import … --onto <catalog>`), so
//! its tasks run with `--execute live` against the real server (MCPToolBench++'s filesystem tasks on
//! server-filesystem, say).
//!
//! Tools are matched by name: every expected tool, alternative and candidate of a task becomes the
//! catalog tool of the same name. Servers rename tools between versions; [`RENAMES`] lists the renames
//! of the reference servers (server-filesystem's `read_file`, deprecated for `read_text_file`): a label
//! naming the old tool expects the new one, with the old one kept as an alternative where the server
//! still has it — each such task is reported as `repaired`. A task whose expected tool the server does
//! not have is `skipped`. Candidate sets are dropped (the live catalog shows the server's own tools);
//! `fixture` becomes every task's `live.fixture`.

use super::{Defect, Imported};
use crate::catalog::Catalog;
use crate::dataset::live::LiveTask;
use std::collections::HashMap;

/// Tool renames of the reference servers: (old name, new name).
pub const RENAMES: &[(&str, &str)] = &[("read_file", "read_text_file")];

/// Retarget `imported`'s tasks onto `onto` (whose directory name the defects mention as `onto_label`).
pub fn retarget(imported: &mut Imported, onto: Catalog, onto_label: &str, fixture: Option<&str>) {
    let by_name: HashMap<&str, String> =
        onto.tools().map(|t| (t.tool.name.as_str(), t.tool.id.clone())).collect();
    let old_names: HashMap<String, String> =
        imported.catalog.tools().map(|t| (t.tool.id.clone(), t.tool.name.clone())).collect();
    let name_of = |id: &str| {
        old_names
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.rsplit('/').next().unwrap_or(id).to_string())
    };
    let file = imported.dataset.path.display().to_string();
    let mut kept = Vec::new();
    for mut task in std::mem::take(&mut imported.dataset.tasks) {
        let mut repairs = Vec::new();
        let mut missing = None;
        for e in task.expected.iter_mut() {
            let name = name_of(&e.tool);
            let renamed = RENAMES
                .iter()
                .find(|(old, _)| *old == name)
                .map(|(_, new)| *new)
                .filter(|new| by_name.contains_key(new));
            let alternatives: Vec<String> = e
                .alternatives
                .iter()
                .filter_map(|a| by_name.get(name_of(a).as_str()).cloned())
                .collect();
            match (renamed, by_name.get(name.as_str())) {
                (Some(new), old) => {
                    repairs.push(format!("`{name}` is `{new}` on the server"));
                    e.tool = by_name[new].clone();
                    e.alternatives = old.cloned().into_iter().chain(alternatives).collect();
                }
                (None, Some(id)) => {
                    e.tool = id.clone();
                    e.alternatives = alternatives;
                }
                (None, None) => {
                    missing = Some(name);
                    break;
                }
            }
        }
        let at = |action: &'static str, reason: String| Defect {
            file: file.clone(),
            record: None,
            line: Some(task.line),
            id: task.id.clone(),
            action,
            affected: Some(1),
            reason,
        };
        if let Some(name) = missing {
            imported
                .defects
                .push(at("skipped", format!("the live catalog {onto_label} has no tool `{name}`")));
            continue;
        }
        if !repairs.is_empty() {
            imported
                .defects
                .push(at("repaired", format!("{} (onto {onto_label})", repairs.join("; "))));
        }
        task.forbidden = task
            .forbidden
            .iter()
            .filter_map(|f| by_name.get(name_of(f).as_str()).cloned())
            .collect();
        task.candidates.clear();
        if let Some(dir) = fixture {
            task.live.get_or_insert_with(LiveTask::default).fixture = Some(dir.to_string());
        }
        kept.push(task);
    }
    imported.dataset.tasks = kept;
    imported.catalog = onto;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Category, Server, Tool};
    use crate::dataset::{Dataset, Task};
    use serde_json::json;

    fn catalog(server: &str, names: &[&str]) -> Catalog {
        let tools = names
            .iter()
            .map(|n| Tool {
                id: format!("{server}/{server}_c/{n}"),
                name: n.to_string(),
                title: None,
                description: String::new(),
                input_schema: json!({"type": "object"}),
                output_schema: None,
                annotations: Default::default(),
                mock_response: json!({}),
                mock_mode: Default::default(),
                origin: Default::default(),
                dispatch: None,
            })
            .collect();
        Catalog::new(
            server,
            "",
            vec![Server {
                name: server.into(),
                title: None,
                description: String::new(),
                categories: vec![Category {
                    name: format!("{server}_c"),
                    description: String::new(),
                    tools,
                }],
            }],
        )
    }

    fn task(id: &str, tool: &str, alternatives: &[&str]) -> Task {
        serde_json::from_value(json!({"id": id, "query": "q", "kind": "single", "expected": [{"tool": tool, "alternatives": alternatives}], "candidates": [tool]})).unwrap()
    }

    #[test]
    fn tools_move_by_name_renames_are_repaired_and_unknown_tools_skip_their_task() {
        let bench =
            catalog("filesystem", &["read_file", "list_directory", "get_file_info", "zip_folder"]);
        let tasks = vec![
            task("a", "filesystem/filesystem_c/read_file", &[]),
            task(
                "b",
                "filesystem/filesystem_c/list_directory",
                &["filesystem/filesystem_c/get_file_info", "filesystem/filesystem_c/zip_folder"],
            ),
            task("c", "filesystem/filesystem_c/zip_folder", &[]),
        ];
        let mut imported = Imported {
            catalog: bench,
            dataset: Dataset { name: "fs".into(), path: "fs.json".into(), tasks },
            defects: vec![],
            summary: super::super::Summary {
                imported: 3,
                repaired: 0,
                skipped: 0,
                uncounted_files: 0,
            },
        };
        let live =
            catalog("files", &["read_file", "read_text_file", "list_directory", "get_file_info"]);
        retarget(&mut imported, live, "live/files", Some("fixtures/root"));
        let t = &imported.dataset.tasks;
        assert_eq!(t.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        // The deprecated name expects the new tool and still accepts the old one, which the server kept.
        assert_eq!(t[0].expected[0].tool, "files/files_c/read_text_file");
        assert_eq!(t[0].expected[0].alternatives, ["files/files_c/read_file"]);
        // Alternatives the server lacks are dropped; candidate sets give way to the server's tools.
        assert_eq!(t[1].expected[0].tool, "files/files_c/list_directory");
        assert_eq!(t[1].expected[0].alternatives, ["files/files_c/get_file_info"]);
        assert!(t.iter().all(|t| t.candidates.is_empty()
            && t.live.as_ref().unwrap().fixture.as_deref() == Some("fixtures/root")));
        let actions: Vec<(&str, &str)> =
            imported.defects.iter().map(|d| (d.id.as_str(), d.action)).collect();
        assert_eq!(actions, [("a", "repaired"), ("c", "skipped")]);
        assert!(
            imported.defects[0].reason.contains("`read_file` is `read_text_file`"),
            "{}",
            imported.defects[0].reason
        );
        assert!(imported.defects[1].reason.contains("no tool `zip_folder`"));
        assert_eq!(imported.catalog.name, "files");
    }
}
