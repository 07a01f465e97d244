//! Run ids and the names around them: the rule a run id follows, the UTC stamp default ids (and
//! `run.json`'s start time) carry, and the `latest` pointer to the newest run. (`run.json` itself is
//! `record::meta`.)

use anyhow::{Result, bail};
use std::path::Path;

/// The name of the pointer to the newest run inside an output directory: no run may take it.
pub const LATEST: &str = "latest";

/// The longest run id: one directory name (`NAME_MAX` on Linux and macOS file systems).
pub const MAX_RUN_ID_BYTES: usize = 255;

/// Whether `id` may name a run directory under the output directory; the reason when not. A run id is
/// one plain directory name: not empty, not `.` or `..` nor anything else starting with `.` (hidden,
/// and where the response cache lives), without a path separator or control character, and not
/// [`LATEST`] (the pointer [`point_latest`] replaces after every run: a run of that name would be
/// deleted by it), and at most [`MAX_RUN_ID_BYTES`] long.
pub fn check_run_id(id: &str) -> Result<(), String> {
    let why = if id.is_empty() {
        "is empty"
    } else if id == LATEST {
        "is the name of the pointer to the newest run, which every run replaces"
    } else if id.starts_with('.') {
        "starts with `.` (`.` and `..` are not directories of their own; others are hidden)"
    } else if id.contains(['/', '\\']) {
        "contains a path separator"
    } else if id.chars().any(char::is_control) {
        "contains a control character"
    } else if id.len() > MAX_RUN_ID_BYTES {
        "is longer than 255 bytes, the longest directory name file systems allow"
    } else {
        return Ok(());
    };
    Err(format!(
        "`{}` {why}: a run id is one plain directory name, e.g. starter-1",
        id.escape_debug()
    ))
}

/// `YYYYMMDD-HHMMSS` (UTC) for a unix time.
pub fn utc_stamp(unix: u64) -> String {
    let (days, secs) = ((unix / 86_400) as i64, unix % 86_400);
    let (y, m, d) = crate::mcp::live::civil(days);
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Atomically replace `out_root/latest` with a symlink to `run_id` (a copy where symlinks don't exist).
/// A run id [`check_run_id`] refuses is refused here too: pointing `latest` at itself would replace the
/// run it names.
pub fn point_latest(out_root: &Path, run_id: &str) -> Result<()> {
    if let Err(why) = check_run_id(run_id) {
        bail!("cannot point {} at the run: {why}", out_root.join(LATEST).display());
    }
    let latest = out_root.join(LATEST);
    #[cfg(unix)]
    {
        // Unique per process and call: two runs finishing at once each build their own link.
        let tmp = crate::files::temp_path_tagged(&out_root.join(".latest"), "link");
        std::os::unix::fs::symlink(run_id, &tmp)?;
        if latest.is_dir() && !latest.is_symlink() {
            std::fs::remove_dir_all(&latest)?;
        }
        if let Err(e) = std::fs::rename(&tmp, &latest) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.into());
        }
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

    #[test]
    fn run_ids_that_would_break_the_layout_are_refused_and_plain_names_kept() {
        for bad in [
            "",
            "latest",
            ".",
            "..",
            ".hidden",
            "a/b",
            "/abs",
            "a\\b",
            "..\\x",
            "a\nb",
            "tab\there",
            "x\u{0}",
        ] {
            let why = check_run_id(bad).expect_err(bad);
            assert!(why.contains("run id"), "{why}");
        }
        for good in [
            "starter-20261203-101010",
            "a.b",
            "latest-1",
            "Latest2",
            "r",
            "mcp-dev-001-20261203-000000",
            "run with spaces",
            "..a".trim_start_matches('.'),
        ] {
            assert_eq!(check_run_id(good), Ok(()), "{good}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn latest_never_points_at_itself_and_leaves_no_temporary_link() {
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir(out.path().join("r1")).unwrap();
        assert!(point_latest(out.path(), "latest").is_err());
        point_latest(out.path(), "r1").unwrap();
        point_latest(out.path(), "r1").unwrap();
        assert_eq!(std::fs::read_link(out.path().join(LATEST)).unwrap(), Path::new("r1"));
        let names: Vec<String> = std::fs::read_dir(out.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
