//! Preflight: the one place where a command's path-, URL- and name-valued settings are checked before
//! any request is sent or any file is written, so a typo costs an exit 2 and not a paid run.
//!
//! Each command calls these right after reading its flags and configuration (and, for names that only
//! the loaded inputs know — catalogs for `--execute`, datasets for `--judge-method`, cells for
//! `--gate-cells` — right after loading them, still before the first request). The checks:
//!
//! - an **output file** (`--history`, `--step-summary`, `-o`, `--record`, …): not a directory; its
//!   directory exists (a typo in it is not silently created) and accepts a new file; an existing file
//!   can be opened for appending. Nothing is changed: the probe file is removed at once.
//! - an **output directory** (`--out`, `--cache-dir`, …): a directory if it exists, else created under
//!   the nearest existing ancestor, which must be a writable directory.
//! - an **input** file or directory: there, of the right kind; a **run directory** (`--baseline`, the
//!   runs of `compare`): a directory holding `trials.jsonl`.
//! - **names** (`--execute` catalogs, `--judge-method` datasets): each given name is one of the valid
//!   ones, which the error lists.
//!
//! - **provider limits** ([`provider_limits`]): every (backend, layout, catalog variant) cell whose
//!   first request a provider would refuse — more tools than its protocol accepts, a tool name it does
//!   not, an estimated prompt over the model's context window — is named with the limit, the numbers
//!   and what to do; exit 2 unless `--allow-provider-errors` (then the refusals are recorded as
//!   `provider_limit` trials).
//!
//! Every error names the flag (exit 2). URLs are checked by their flags' parsers ([`crate::rules`]).

use crate::error::InputError;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The directory a relative file name without one lives in.
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Can a new file be made in `dir`? Tried, not guessed from permission bits (root ignores them, a
/// read-only mount does not): a temporary file is created and removed at once.
fn writable_dir(dir: &Path) -> Result<(), String> {
    tempfile::Builder::new().prefix(".toolpick-preflight-").tempfile_in(dir).map(drop).map_err(
        |e| {
            // The OS's reason, without the probe's random file name.
            e.raw_os_error()
                .map(|code| std::io::Error::from_raw_os_error(code).to_string())
                .unwrap_or_else(|| e.kind().to_string())
        },
    )
}

/// A file the command will write or append to.
pub fn output_file(flag: &str, path: &Path) -> Result<(), InputError> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err(InputError::new(flag, "the file name is empty"));
    }
    if path.is_dir() {
        return Err(InputError::new(flag, format!("`{shown}` is a directory; name a file")));
    }
    let dir = parent_of(path);
    if !dir.exists() {
        return Err(InputError::new(
            flag,
            format!(
                "`{shown}`: the directory `{}` does not exist; create it first or fix the path",
                dir.display()
            ),
        ));
    }
    if !dir.is_dir() {
        return Err(InputError::new(
            flag,
            format!("`{shown}`: `{}` is not a directory", dir.display()),
        ));
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| InputError::new(flag, format!("`{shown}` cannot be written: {e}")))?;
    }
    // Files are replaced by a rename from a temporary file beside them.
    writable_dir(&dir).map_err(|e| {
        InputError::new(
            flag,
            format!("`{shown}`: no file can be written in `{}`: {e}", dir.display()),
        )
    })
}

/// A directory the command will create (with its missing parents) or write into.
pub fn output_dir(flag: &str, path: &Path) -> Result<(), InputError> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err(InputError::new(flag, "the directory name is empty"));
    }
    let existing = path
        .ancestors()
        .find(|a| !a.as_os_str().is_empty() && a.exists())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    if !existing.is_dir() {
        let what = if existing == path {
            format!("`{shown}` is a file, not a directory")
        } else {
            format!("`{shown}` cannot be created: `{}` is a file", existing.display())
        };
        return Err(InputError::new(flag, what));
    }
    writable_dir(&existing).map_err(|e| {
        InputError::new(
            flag,
            format!("`{shown}`: nothing can be written in `{}`: {e}", existing.display()),
        )
    })
}

/// A directory the command reads.
pub fn input_dir(flag: &str, path: &Path) -> Result<(), InputError> {
    if !path.exists() {
        return Err(InputError::new(flag, format!("`{}` does not exist", path.display())));
    }
    if !path.is_dir() {
        return Err(InputError::new(flag, format!("`{}` is not a directory", path.display())));
    }
    std::fs::read_dir(path)
        .map(drop)
        .map_err(|e| InputError::new(flag, format!("`{}` cannot be read: {e}", path.display())))
}

/// A file the command reads.
pub fn input_file(flag: &str, path: &Path) -> Result<(), InputError> {
    if !path.exists() {
        return Err(InputError::new(flag, format!("`{}` does not exist", path.display())));
    }
    if path.is_dir() {
        return Err(InputError::new(
            flag,
            format!("`{}` is a directory; name a file", path.display()),
        ));
    }
    std::fs::File::open(path)
        .map(drop)
        .map_err(|e| InputError::new(flag, format!("`{}` cannot be read: {e}", path.display())))
}

/// A run directory the command reads (a baseline, a run to compare): a directory with `trials.jsonl`
/// and a readable `run.json` if any.
pub fn run_dir(flag: &str, path: &Path) -> Result<(), InputError> {
    input_dir(flag, path)?;
    let trials = path.join("trials.jsonl");
    if !trials.is_file() {
        return Err(InputError::new(
            flag,
            format!("`{}` is not a run directory: it has no trials.jsonl", path.display()),
        ));
    }
    // Its run.json, when it has one, is read now: a damaged one is refused before anything is written.
    crate::run::RunMeta::read_if_present(path)?;
    Ok(())
}

/// Each of `given` is one of `valid`, the run's names of `what` (e.g. "catalog").
pub fn known_names<'a>(
    flag: &str,
    given: impl IntoIterator<Item = &'a str>,
    valid: &[String],
    what: &str,
) -> Result<(), InputError> {
    for name in given {
        if !valid.iter().any(|v| v == name) {
            let list = if valid.is_empty() { "(none)".to_string() } else { valid.join(", ") };
            return Err(InputError::new(
                flag,
                format!("`{name}` is not a {what} of this run; its {what}s are: {list}"),
            ));
        }
    }
    Ok(())
}

/// `run`'s paths, once its flags and experiment file are merged: the output root and the cache.
pub fn run_paths(config: &crate::run::RunConfig, out: &Path) -> Result<()> {
    output_dir("--out", out)?;
    if let Some(dir) = &config.cache_dir {
        output_dir("--cache-dir", dir)?;
    }
    Ok(())
}

/// `run`'s names that only the loaded inputs know, checked once they are loaded and before anything
/// runs: the catalogs `--execute NAME=…` names, the datasets of per-dataset judge methods and the cells
/// `--gate-cells` selects.
pub fn run_names(
    prepared: &crate::run::Prepared,
    execute: &[String],
    gates: &crate::gate::GateSpec,
    judge: Option<(
        &super::judge::JudgeArgs,
        Option<&crate::judge::config::JudgeFile>,
        Option<&Path>,
    )>,
) -> Result<()> {
    let set = |v: Vec<String>| {
        v.into_iter().collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>()
    };
    let catalogs = set(prepared.kept.iter().map(|k| k.catalog.clone()).collect());
    known_names(
        "--execute",
        execute.iter().filter_map(|e| e.split_once('=').map(|(name, _)| name)),
        &catalogs,
        "catalog",
    )?;
    if let Some((args, file, path)) = judge {
        let datasets = set(prepared.kept.iter().map(|k| k.dataset.clone()).collect());
        crate::judge::config::check_method_datasets(
            file,
            path,
            args.judge_method.iter().map(|(d, _)| d.as_str()),
            &datasets,
        )?;
    }
    let keys = prepared.cell_keys();
    crate::gate::check_cells(gates, keys.iter().map(String::as_str), "cell of this run")
        .map_err(|u| InputError::new("--gate-cells", u.to_string()))?;
    Ok(())
}

/// The cells a provider would refuse, one line each: the cell, the limit, the numbers. `Err` (exit 2,
/// nothing run) names them all and what to do; with `allow` they are returned as notes and the run
/// goes on, recording each refusal as a `provider_limit` trial.
pub fn provider_limits(
    cells: &[crate::run::provider_limits::Presented],
    allow: bool,
) -> Result<Vec<String>, InputError> {
    use crate::agent::backends::limits::{Breach, check_context};
    use crate::record::LimitKind;
    let mut lines = Vec::new();
    let mut kinds = std::collections::BTreeSet::new();
    for c in cells {
        let mut breaches: Vec<Breach> = Vec::new();
        if let Some(limits) = c.limits {
            breaches.extend(limits.check_count(c.tools));
            breaches.extend(limits.check_names(c.names.iter().map(String::as_str)));
        }
        if let Some((window, from)) = &c.window
            && let Some(mut b) = check_context(c.prompt_tokens, *window)
        {
            b.what.push_str(&format!(" ({from})"));
            breaches.push(b);
        }
        for b in breaches {
            kinds.insert(b.kind);
            lines.push(format!("  {} [{}]: {}", c.cell, b.kind.as_str(), b.what));
        }
    }
    if lines.is_empty() {
        return Ok(lines);
    }
    let mut advice = Vec::new();
    if kinds.contains(&LimitKind::ToolCount) {
        advice.push(
            "present fewer tools per request (--layouts progressive or search, or --distractors)",
        );
    }
    if kinds.contains(&LimitKind::ToolName) {
        advice.push("rename the tools the provider refuses in the catalog");
    }
    if kinds.contains(&LimitKind::Context) {
        advice.push("give the model a larger context (llama-server -c, `context_window` / --context-window) or present fewer tools");
    }
    let what = format!(
        "{} limit(s) of the provider would refuse these cells' requests:\n{}",
        lines.len(),
        lines.join("\n")
    );
    if allow {
        return Ok(vec![format!(
            "{what}\nrunning them anyway (--allow-provider-errors): each refusal is recorded as a provider_limit trial"
        )]);
    }
    let flag = if kinds.iter().all(|k| *k == LimitKind::Context) {
        "--context-window"
    } else {
        "--layouts"
    };
    Err(InputError::new(
        flag,
        format!(
            "{what}\nnothing was run or written; {}; or run them anyway with --allow-provider-errors (each refusal is recorded as a provider_limit trial, in no rate)",
            advice.join("; ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_need_an_existing_writable_directory_and_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("summary.md");
        output_file("--step-summary", &file).unwrap();
        std::fs::write(&file, "kept").unwrap();
        output_file("--step-summary", &file).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "kept",
            "the probe does not touch the file"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the probe file is gone");
        for (bad, says) in [
            (dir.path().join("missing/summary.md"), "does not exist"),
            (dir.path().to_path_buf(), "is a directory"),
            (file.join("x.md"), "is not a directory"),
        ] {
            let e = output_file("--step-summary", &bad).unwrap_err();
            assert!(
                e.to_string().starts_with("--step-summary: ") && e.message.contains(says),
                "{}: {e}",
                bad.display()
            );
        }
    }

    #[test]
    fn output_dirs_are_created_under_a_writable_directory_only() {
        let dir = tempfile::tempdir().unwrap();
        output_dir("--out", &dir.path().join("a/b/c")).unwrap();
        assert!(!dir.path().join("a").exists(), "checking creates nothing");
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(output_dir("--out", &file).unwrap_err().message.contains("is a file"));
        assert!(output_dir("--out", &file.join("run")).unwrap_err().message.contains("is a file"));
    }

    #[test]
    fn unknown_names_are_listed_with_the_valid_ones() {
        let valid = vec!["workspace".to_string(), "files".to_string()];
        known_names("--execute", ["files"], &valid, "catalog").unwrap();
        let e = known_names("--execute", ["files", "nosuch"], &valid, "catalog")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`nosuch`") && e.contains("workspace, files"), "{e}");
    }
}
