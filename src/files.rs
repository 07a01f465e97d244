//! Writing files so that a reader never sees half of one: every output of toolpick (reports, imported
//! catalogs and datasets, merged runs, run metadata) goes through [`write_atomic`]. A ground-floor
//! helper, so importers, the trial store and the reports share it without importing each other.

use anyhow::{Context, Result};
use std::path::Path;

/// Write `bytes` to `path` atomically: a temporary file in the same directory (named after this
/// process, so a leftover of a killed writer is recognisable), then a rename over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot move {} into place", path.display()))
}
