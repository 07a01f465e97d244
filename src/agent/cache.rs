//! On-disk, content-addressed response cache for model endpoints.
//!
//! The key is the SHA-256 of everything that determines a response: endpoint URL, model, the full
//! messages, the tools, `tool_choice`, every sampling parameter, the seed **and the trial index** — so
//! repeated trials of one prompt are distinct entries (a cache that collapsed them would turn pass@k into
//! pass@1 repeated k times). Only successful, non-empty responses are stored; errors never are, so a
//! rerun retries them. Entries are written to a temporary file and renamed, so a crash never leaves a
//! torn entry.

use anyhow::{Context, Result};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

pub struct Cache {
    dir: PathBuf,
}

/// The cache key of a request, from its serialised body.
pub fn key(endpoint: &str, body: &[u8], trial: usize) -> String {
    let mut h = Sha256::new();
    h.update(b"toolpick-cache-v1\n");
    h.update(endpoint.as_bytes());
    h.update(b"\n");
    // serde_json writes object keys in insertion order; the request body is built in a fixed order.
    h.update(body);
    h.update(format!("\ntrial={trial}").as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    pub fn get(&self, key: &str) -> Option<Value> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub fn put(&self, key: &str, response: &Value) -> Result<()> {
        let path = self.path(key);
        let dir = path.parent().expect("cache path has a parent");
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create cache directory {}", dir.display()))?;
        let tmp = path.with_extension(format!(
            "tmp-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&tmp, serde_json::to_vec(response)?)?;
        std::fs::rename(&tmp, &path)?;
        Ok(())
    }

    /// (entries, bytes)
    pub fn stats(&self) -> (u64, u64) {
        let mut n = 0;
        let mut bytes = 0;
        for sub in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(sub.path()).into_iter().flatten().flatten() {
                if f.path().extension().is_some_and(|e| e == "json") {
                    n += 1;
                    bytes += f.metadata().map(|m| m.len()).unwrap_or(0);
                }
            }
        }
        (n, bytes)
    }

    /// Remove every entry; returns how many were removed.
    pub fn clear(&self) -> Result<u64> {
        let (n, _) = self.stats();
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir)
                .with_context(|| format!("cannot remove {}", self.dir.display()))?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_separates_trials_endpoints_and_bodies() {
        let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0});
        let body = body.to_string().into_bytes();
        let k = key("http://a/v1", &body, 0);
        assert_eq!(k, key("http://a/v1", &body, 0));
        assert_ne!(k, key("http://a/v1", &body, 1), "repeated trials must not collide");
        assert_ne!(k, key("http://b/v1", &body, 0));
        let warmer = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.7}).to_string();
        assert_ne!(k, key("http://a/v1", warmer.as_bytes(), 0));
    }

    #[test]
    fn put_get_stats_clear() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(dir.path().join("c"));
        let k = key("e", b"{}", 0);
        assert!(c.get(&k).is_none());
        c.put(&k, &json!({"ok": 1})).unwrap();
        assert_eq!(c.get(&k), Some(json!({"ok": 1})));
        assert_eq!(c.stats().0, 1);
        assert_eq!(c.clear().unwrap(), 1);
        assert!(c.get(&k).is_none());
    }
}
