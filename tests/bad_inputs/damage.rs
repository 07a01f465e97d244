//! Ways of damaging a file that apply to any input file, whatever its format: gone, a directory in its
//! place, empty, a byte-order mark, UTF-16, undecodable bytes on a known line, a line cut short, a line
//! replaced. Each returns the setup that does it (on the case's copy) and, where a line is damaged, the
//! `file:line` a correct error names. The damaged bytes are worked out here from the world's clean
//! copy, so a case states exactly what it wrote.

use super::harness::Setup;
use std::path::Path;
use std::sync::Arc;

/// The world's copy of `rel` (the clean input).
pub fn clean(world: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(world.join(rel)).unwrap_or_else(|e| panic!("world file {rel}: {e}"))
}

/// Write `bytes` to `rel` in the case directory.
pub fn put(rel: &str, bytes: Vec<u8>) -> Setup {
    let rel = rel.to_string();
    Arc::new(move |dir: &Path| {
        let p = dir.join(&rel);
        if p.is_dir() {
            std::fs::remove_dir_all(&p).unwrap();
        }
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &bytes).unwrap();
    })
}

pub fn remove(rel: &str) -> Setup {
    let rel = rel.to_string();
    Arc::new(move |dir: &Path| {
        let p = dir.join(&rel);
        if p.is_dir() {
            std::fs::remove_dir_all(&p).unwrap()
        } else {
            std::fs::remove_file(&p).unwrap()
        }
    })
}

/// A directory where the file (or directory) `rel` was, holding one file so it is not mistaken for
/// an empty input.
pub fn directory(rel: &str) -> Setup {
    let rel = rel.to_string();
    Arc::new(move |dir: &Path| {
        let p = dir.join(&rel);
        if p.is_dir() {
            std::fs::remove_dir_all(&p).unwrap()
        } else {
            std::fs::remove_file(&p).unwrap()
        }
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("inside.txt"), "a directory, not the input\n").unwrap();
    })
}

/// An empty directory where the directory `rel` was.
pub fn emptied_dir(rel: &str) -> Setup {
    let rel = rel.to_string();
    Arc::new(move |dir: &Path| {
        let p = dir.join(&rel);
        std::fs::remove_dir_all(&p).unwrap();
        std::fs::create_dir_all(&p).unwrap();
    })
}

/// A regular file where the directory `rel` was.
pub fn file_for_dir(rel: &str) -> Setup {
    let rel = rel.to_string();
    Arc::new(move |dir: &Path| {
        let p = dir.join(&rel);
        std::fs::remove_dir_all(&p).unwrap();
        std::fs::write(&p, "a file, not a directory\n").unwrap();
    })
}

pub fn with_bom(bytes: &[u8]) -> Vec<u8> {
    let mut out = b"\xEF\xBB\xBF".to_vec();
    out.extend_from_slice(bytes);
    out
}

/// UTF-16 little-endian with its byte-order mark, as Windows editors save "Unicode" text.
pub fn utf16le(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
    out
}

/// The file's lines (without their `\n`).
pub fn lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    if v.last().is_some_and(Vec::is_empty) {
        v.pop();
    }
    v
}

pub fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// 1-based number of the first line holding `marker`.
pub fn line_of(bytes: &[u8], marker: &str) -> usize {
    lines(bytes)
        .iter()
        .position(|l| String::from_utf8_lossy(l).contains(marker))
        .unwrap_or_else(|| panic!("no line holds {marker:?}"))
        + 1
}

/// Line `n` (1-based) replaced by `text` (or removed when `text` is `None`).
pub fn replace_line(bytes: &[u8], n: usize, text: Option<&[u8]>) -> Vec<u8> {
    let mut ls = lines(bytes);
    assert!(n >= 1 && n <= ls.len(), "line {n} of {}", ls.len());
    match text {
        Some(t) => ls[n - 1] = t.to_vec(),
        None => {
            ls.remove(n - 1);
        }
    }
    join(&ls)
}

/// `text` inserted as a new line after line `n` (0: first).
pub fn insert_line(bytes: &[u8], n: usize, text: &str) -> Vec<u8> {
    let mut ls = lines(bytes);
    ls.insert(n, text.as_bytes().to_vec());
    join(&ls)
}

/// Two bytes that are never UTF-8 put inside the first quoted text of line `n`.
pub fn invalid_utf8_at(bytes: &[u8], n: usize) -> Vec<u8> {
    let mut ls = lines(bytes);
    let line = &mut ls[n - 1];
    let at = line.iter().position(|b| *b == b'"').map(|i| i + 1).unwrap_or(0);
    line.splice(at..at, [0xFF, 0xFE]);
    join(&ls)
}

/// The file cut in the middle of line `n`: what a full disk or a killed writer leaves (no newline,
/// nothing after it).
pub fn cut_in_line(bytes: &[u8], n: usize) -> Vec<u8> {
    let ls = lines(bytes);
    let mut out = join(&ls[..n - 1]);
    let line = &ls[n - 1];
    out.extend_from_slice(&line[..line.len() / 2]);
    out
}

/// Line `n` cut in half, the lines after it kept: a torn line in the middle of a file.
pub fn torn_line(bytes: &[u8], n: usize) -> Vec<u8> {
    let ls = lines(bytes);
    let half = ls[n - 1][..ls[n - 1].len() / 2].to_vec();
    replace_line(bytes, n, Some(&half))
}

/// Line `n` of a JSON Lines file parsed, edited and written back on one line.
pub fn edit_json_line(
    bytes: &[u8],
    n: usize,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Vec<u8> {
    let ls = lines(bytes);
    let mut v: serde_json::Value = serde_json::from_slice(&ls[n - 1]).unwrap();
    edit(&mut v);
    replace_line(bytes, n, Some(serde_json::to_string(&v).unwrap().as_bytes()))
}

/// `file:n`, as an error names a line.
pub fn at(file: &str, n: usize) -> String {
    format!("{file}:{n}")
}
