//! Where a comparison's pages link to: each run's `report.html` relative to the directory the
//! compare.* files are written to, and trial ids encoded as URL fragments. Kept apart from
//! [`super::render`] because it is path arithmetic, not drawing: the same links serve the HTML page,
//! `compare.md` and the step summary.

use std::fmt::Write;
use std::path::{Component, Path};

/// Where each run's `report.html` is, relative to the directory the comparison is written to.
#[derive(Debug, Clone)]
pub struct Links {
    pub a: String,
    pub b: String,
    /// Run labels (directory names) for headings.
    pub a_name: String,
    pub b_name: String,
}

impl Links {
    pub fn new(out_dir: &Path, a: &Path, b: &Path) -> Links {
        let name = |p: &Path| {
            std::fs::canonicalize(p)
                .ok()
                .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| p.display().to_string())
        };
        Links {
            a: relative(out_dir, &a.join("report.html")),
            b: relative(out_dir, &b.join("report.html")),
            a_name: name(a),
            b_name: name(b),
        }
    }
}

/// `to` relative to the directory `from` (both made absolute), with `/` separators; `to` as given when
/// no relative path exists (another drive).
pub fn relative(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| {
        std::path::absolute(p).map(|p| normalize(&p)).unwrap_or_else(|_| p.to_path_buf())
    };
    let (from, to_abs) = (abs(from), abs(to));
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to_abs.components().collect();
    if f.first() != t.first() {
        return to.display().to_string();
    }
    let common = f.iter().zip(&t).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_string(), f.len() - common).collect();
    parts.extend(t[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

/// Resolve `.` and `..` lexically (the paths may not exist yet).
fn normalize(p: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Percent-encode like JavaScript's `encodeURIComponent`, for `#trial=<id>` fragments.
pub fn encode_component(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            write!(out, "%{b:02X}").unwrap();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_between_run_directories() {
        assert_eq!(relative(Path::new("/r/b"), Path::new("/r/a/report.html")), "../a/report.html");
        assert_eq!(relative(Path::new("/r/b"), Path::new("/r/b/report.html")), "report.html");
        assert_eq!(
            relative(Path::new("/r/x/../b"), Path::new("/q/a/report.html")),
            "../../q/a/report.html"
        );
    }

    #[test]
    fn fragments_are_encoded_like_encode_uri_component() {
        assert_eq!(
            encode_component("starter/good/flat/lexical/t-1#0"),
            "starter%2Fgood%2Fflat%2Flexical%2Ft-1%230"
        );
        assert_eq!(encode_component("a\"<é"), "a%22%3C%C3%A9");
    }
}
