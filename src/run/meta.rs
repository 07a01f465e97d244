//! Run metadata helpers: UTC stamps for run ids and `run.json`, the `latest` pointer, process CPU time.

use anyhow::Result;
use std::path::Path;

/// CPU time (user + system, all threads) this process has used, from `/proc/self/stat` (Linux; `None`
/// elsewhere). The kernel reports it in clock ticks of 1/100 s (`USER_HZ`).
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let (utime, stime): (f64, f64) = (fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?);
    Some((utime + stime) / 100.0)
}

/// `YYYYMMDD-HHMMSS` (UTC) for a unix time.
pub fn utc_stamp(unix: u64) -> String {
    let (days, secs) = ((unix / 86_400) as i64, unix % 86_400);
    let (y, m, d) = crate::mcp::live::civil(days);
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Atomically replace `out_root/latest` with a symlink to `run_id` (a copy where symlinks don't exist).
pub fn point_latest(out_root: &Path, run_id: &str) -> Result<()> {
    let latest = out_root.join("latest");
    #[cfg(unix)]
    {
        let tmp = out_root.join(format!(".latest-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(run_id, &tmp)?;
        if latest.is_dir() && !latest.is_symlink() {
            std::fs::remove_dir_all(&latest)?;
        }
        std::fs::rename(&tmp, &latest)?;
    }
    #[cfg(not(unix))]
    {
        let _ = std::fs::remove_dir_all(&latest);
        std::fs::create_dir_all(&latest)?;
        for entry in std::fs::read_dir(out_root.join(run_id))? {
            let entry = entry?;
            std::fs::copy(entry.path(), latest.join(entry.file_name()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamp_known_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_795_996_800 + 3_723), "20261130-010203");
    }
}
