//! The bundled suite (registries, datasets, example experiment files), embedded in the binary by
//! `build.rs`, so that a `toolpick` copied alone into an empty directory runs its default job.
//!
//! A default path such as `registries/workspace` resolves to the working directory's copy when there
//! is one (a suite written by `toolpick init` and edited there, or a checkout), else to the embedded
//! copy, extracted once into a cache directory named by the content's hash
//! (`$XDG_CACHE_HOME/toolpick/bundled-<hash>`, else `~/.cache/…`, else `.toolpick-cache-<uid>` in the
//! temp directory). The loaders
//! read files, so the embedded copy is written out rather than read from memory; every use checks the
//! extracted files against the embedded bytes and repairs any that differ or that were added, so an
//! edit in the cache cannot change what "the bundled suite" means. The paths a run records (`run.json`,
//! the report) name the suite by its relative path ([`logical`]), never by the cache directory, so a run
//! from an empty directory records what a run from a checkout records.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod table {
    include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
}

/// Every embedded file: relative path (`/`-separated) and contents, sorted by path.
pub fn files() -> &'static [(&'static str, &'static [u8])] {
    table::FILES
}

/// The embedded files under `prefix` (a directory such as `registries/workspace`, or one file).
pub fn files_under(prefix: &str) -> impl Iterator<Item = (&'static str, &'static [u8])> {
    let dir = format!("{}/", prefix.trim_end_matches('/'));
    files().iter().copied().filter(move |(name, _)| *name == prefix || name.starts_with(&dir))
}

/// Whether `relative` names an embedded file or directory.
pub fn contains(relative: &str) -> bool {
    files_under(relative).next().is_some()
}

/// A bundled default path: the working directory's copy if there is one, else the embedded copy
/// (extracted on first use). A path the bundle does not hold is returned as given, so the loader's
/// "not found" error names it.
pub fn resolve(relative: &str) -> PathBuf {
    let local = PathBuf::from(relative);
    if local.exists() || !contains(relative) {
        return local;
    }
    match extracted() {
        Ok(root) => root.join(relative),
        Err(e) => {
            crate::messages::warning(format!(
                "cannot write the bundled suite out ({e:#}); looking for {relative} in the working directory"
            ));
            local
        }
    }
}

/// How a run names a path it was given: a path inside the extracted bundle by its relative name
/// (`registries/workspace`), any other path as it is.
pub fn logical(path: &Path) -> PathBuf {
    match EXTRACTED.get().and_then(|r| r.as_ref().ok()) {
        Some(root) => {
            path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.into())
        }
        None => path.to_path_buf(),
    }
}

static EXTRACTED: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The directory the embedded files are written into, checked and repaired (once per process): under
/// the user's cache directory, else (not writable: a read-only home in a container) the temp directory.
fn extracted() -> Result<PathBuf> {
    EXTRACTED
        .get_or_init(|| {
            let name = format!("bundled-{}", content_hash());
            let mut errors = Vec::new();
            for root in cache_roots() {
                let dir = root.join(&name);
                match sync(&dir, files()) {
                    Ok(()) => return Ok(dir),
                    Err(e) => errors.push(format!("{e:#}")),
                }
            }
            Err(errors.join("; "))
        })
        .clone()
        .map_err(|e| anyhow::anyhow!(e))
}

/// The first 16 hex digits of a SHA-256 over every embedded path and its contents.
fn content_hash() -> String {
    let mut h = Sha256::new();
    for (name, bytes) in files() {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn cache_roots() -> Vec<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let user = var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache")));
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    user.map(|c| c.join("toolpick"))
        .into_iter()
        .chain([std::env::temp_dir().join(format!(".toolpick-cache-{uid}"))])
        .collect()
}

/// Make `root` hold exactly `wanted`: write missing or different files (atomically, so a concurrent
/// toolpick never reads half of one), remove files that are not part of it.
pub fn sync(root: &Path, wanted: &[(&str, &[u8])]) -> Result<()> {
    let wanted: BTreeMap<&str, &[u8]> = wanted.iter().copied().collect();
    let mut present = Vec::new();
    if root.exists() {
        // In a shared temp directory another user could have made it first, and could swap files
        // after they were checked: only a directory of ours is used.
        use std::os::unix::fs::MetadataExt;
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        let owner = std::fs::metadata(root)?.uid();
        if owner != uid {
            anyhow::bail!("{} belongs to another user (uid {owner})", root.display());
        }
        list(root, root, &mut present)?;
    }
    for name in &present {
        // Another toolpick's file being written (`files::temp_path`) is left to it.
        if !wanted.contains_key(name.as_str()) && !name.contains(".tmp-") {
            let path = root.join(name);
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    for (name, bytes) in wanted {
        let path = root.join(name);
        if std::fs::read(&path).is_ok_and(|on_disk| on_disk == bytes) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        crate::files::write_atomic(&path, bytes)?;
    }
    Ok(())
}

/// Every file under `dir`, relative to `root` and `/`-separated.
fn list(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            list(root, &path, out)?;
        } else if let Ok(relative) = path.strip_prefix(root) {
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_suite_is_embedded_with_the_bytes_of_the_source_tree() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (name, bytes) in files() {
            assert_eq!(std::fs::read(source.join(name)).unwrap(), *bytes, "{name}");
        }
        for needed in ["registries/workspace", "datasets/starter.jsonl", "examples/local.toml"] {
            assert!(contains(needed), "{needed}");
        }
        assert!(!contains("registries/works"), "a prefix of a name is not a directory");
    }

    #[test]
    fn sync_repairs_edited_files_and_removes_added_ones() {
        let dir = tempfile::tempdir().unwrap();
        let wanted: &[(&str, &[u8])] = &[("a/one.json", b"{}"), ("two.txt", b"2")];
        sync(dir.path(), wanted).unwrap();
        std::fs::write(dir.path().join("a/one.json"), b"{\"edited\":1}").unwrap();
        std::fs::write(dir.path().join("a/extra.json"), b"{}").unwrap();
        std::fs::remove_file(dir.path().join("two.txt")).unwrap();
        sync(dir.path(), wanted).unwrap();
        let mut present = Vec::new();
        list(dir.path(), dir.path(), &mut present).unwrap();
        present.sort();
        assert_eq!(present, ["a/one.json", "two.txt"]);
        assert_eq!(std::fs::read(dir.path().join("a/one.json")).unwrap(), b"{}");
    }
}
