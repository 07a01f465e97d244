//! `toolpick init [DIR]`: write the bundled suite (registries, datasets, example experiment files)
//! and a starting experiment file, `toolpick.toml`, into a directory for a user to edit. `toolpick run`
//! in that directory then reads the edited copies (see [`crate::bundle::resolve`]). Nothing existing is
//! overwritten unless `--force`: every target is checked before the first file is written, so a refused
//! init writes nothing.

use crate::error::InputError;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The experiment file `init` writes beside the suite.
pub const EXPERIMENT_FILE: &str = "toolpick.toml";

const EXPERIMENT: &str = r#"# An experiment for `toolpick run --config toolpick.toml` (written by `toolpick init`; edit freely).
# Paths are relative to this file. Runs offline as it is: the lexical baseline and the oracle need no
# key and no network. To measure a model, add a [[models]] entry like those in examples/*.toml.

datasets = ["datasets/starter.jsonl"]
catalogs = ["registries/workspace"]
variants = ["good", "bad"]            # or ablate, op:<operator>, file:registries/workspace-realistic-bad
layouts = ["flat", "progressive"]     # also progressive-oss, search
trials = 1
seed = 0
max_steps = 8
out = "reports"

[[models]]
backend = "lexical"

[[models]]
backend = "oracle"
"#;

/// Write the suite into `dir` (created if missing); `force` overwrites files that exist.
pub(super) fn cmd_init(dir: &Path, force: bool) -> Result<()> {
    let mut writes: Vec<(PathBuf, &[u8])> =
        crate::bundle::files().iter().map(|(name, bytes)| (dir.join(name), *bytes)).collect();
    writes.push((dir.join(EXPERIMENT_FILE), EXPERIMENT.as_bytes()));
    if !force {
        let existing: Vec<String> = writes
            .iter()
            .filter(|(path, _)| path.exists())
            .map(|(path, _)| path.display().to_string())
            .collect();
        if let Some(first) = existing.first() {
            let more = match existing.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            return Err(InputError::new(
                first,
                format!("exists{more}; nothing was written. Use another directory, or --force to overwrite the bundled files there"),
            )
            .into());
        }
    }
    for (path, bytes) in &writes {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        crate::files::write_atomic(path, bytes)?;
    }
    outln!(
        "wrote the bundled suite and {EXPERIMENT_FILE} into {} ({} files); next: cd {} && toolpick run --config {EXPERIMENT_FILE}",
        dir.display(),
        writes.len(),
        dir.display()
    );
    Ok(())
}
