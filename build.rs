//! Embeds the bundled suite (registries/, datasets/, examples/) in the binary, so a `toolpick` copied
//! alone anywhere (a wheel, a release archive, a container) runs its default job: writes
//! `$OUT_DIR/bundled.rs`, a sorted table of `(relative path, include_bytes!)` read by `src/bundle.rs`.
//! Written by hand rather than with a crate such as `include_dir` because a dozen lines do it and the
//! table must be sorted (the extraction directory is named by a hash of it, so it must not depend on
//! the file system's listing order).

use std::path::{Path, PathBuf};

const ROOTS: [&str; 3] = ["registries", "datasets", "examples"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for root in ROOTS {
        // A directory given to rerun-if-changed is scanned whole: any file added, removed or edited
        // under it rebuilds the table.
        println!("cargo:rerun-if-changed={root}");
        walk(&manifest.join(root), &mut files);
    }
    let mut table = String::from("pub static FILES: &[(&str, &[u8])] = &[\n");
    for path in &files {
        let relative = path.strip_prefix(&manifest).expect("under the manifest directory");
        let name: Vec<String> =
            relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        // Relative to the manifest at compile time, not this checkout's absolute path: a target
        // directory shared by two checkouts (CARGO_TARGET_DIR) may reuse this table for the other.
        let name = name.join("/");
        table.push_str(&format!(
            "    ({name:?}, include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?}))),\n",
            format!("/{name}")
        ));
    }
    table.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("bundled.rs");
    std::fs::write(&out, table).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
