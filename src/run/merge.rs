//! `toolpick merge`: put the run directories of `--shard i/n` runs (or any runs of the same matrix)
//! back together into one run directory that equals an unsharded run's: same trial file byte for byte,
//! same reports. Only `run.json` (timestamps, which runs were merged) and `timings.jsonl` differ.

use super::shard::Shard;
use crate::error::InputError;
use crate::record::lines::JsonLines;
use crate::record::meta::{MergedRun, RunMeta};
use crate::record::{RUN_JSON, Trial, transcripts};
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a merge did.
pub struct Merged {
    pub trials: usize,
    pub runs: usize,
    /// The output directory's lock, still held for the caller to render the reports under.
    pub lock: crate::record::guard::DirLock,
}

/// Merge `runs` into `out` (a new directory); the caller renders its reports under the returned lock.
pub fn merge(runs: &[PathBuf], out: &Path) -> Result<Merged> {
    if runs.is_empty() {
        return Err(InputError::new("merge", "name at least one run directory").into());
    }
    if out.join(crate::record::TRIALS).exists() {
        return Err(InputError::new(
            out,
            "already holds a run; merge into a new directory (if a merge into it was killed, `toolpick report` on it finishes the reports)",
        )
        .into());
    }
    // A run.json without trials is a run just started, or a merge killed before it wrote the trials
    // (which may be done again).
    let merge_started =
        matches!(RunMeta::read_if_present(out), Ok(Some(m)) if m.merged_from.is_some());
    if out.join(RUN_JSON).exists() && !merge_started {
        return Err(InputError::new(out, "already holds a run; merge into a new directory").into());
    }
    let metas: Vec<RunMeta> = runs.iter().map(|d| RunMeta::read(d)).collect::<Result<_, _>>()?;
    let hash = metas[0].matrix_hash.clone();
    for (dir, m) in runs.iter().zip(&metas) {
        if m.matrix_hash != hash {
            return Err(InputError::new(
                dir.join(RUN_JSON),
                format!("was run with another matrix than {} (datasets, catalogs, variants, layouts, models, trials, seed or steps differ); only shards of one run can be merged", runs[0].display()),
            )
            .into());
        }
    }
    // Every shard of a sharded run must be there (an unsharded run covers everything by itself).
    let shards: Vec<Option<Shard>> = metas.iter().map(|m| m.shard).collect();
    if shards.iter().all(Option::is_some) {
        let count = shards[0].map(|s| s.count).unwrap_or(1);
        if let Some((dir, s)) =
            runs.iter().zip(&shards).find(|(_, s)| s.map(|s| s.count) != Some(count))
        {
            return Err(InputError::new(
                dir.join(RUN_JSON),
                format!(
                    "is shard {} but the first run is one of {count}",
                    s.map(|s| s.to_string()).unwrap_or_default()
                ),
            )
            .into());
        }
        let have: BTreeSet<usize> = shards.iter().flatten().map(|s| s.index).collect();
        let missing: Vec<String> =
            (1..=count).filter(|i| !have.contains(i)).map(|i| format!("{i}/{count}")).collect();
        if !missing.is_empty() {
            return Err(InputError::new(
                "merge",
                format!(
                    "shard(s) {} missing; pass every shard's run directory",
                    missing.join(", ")
                ),
            )
            .into());
        }
    }

    // Trials by matrix position; the same trial in two runs must be the same record.
    let mut trials: BTreeMap<usize, (String, String, usize)> = BTreeMap::new();
    for (r, dir) in runs.iter().enumerate() {
        let path = dir.join(crate::record::TRIALS);
        let mut lines = JsonLines::open(&path, "trial file")?;
        while let Some(line) = lines.next_line()? {
            if line.is_blank() {
                continue;
            }
            let at = line.number;
            let t: Trial = serde_json::from_slice(line.text).map_err(|e| {
                InputError::new(&path, format!("not a trial record: {e}")).at_line(at)
            })?;
            let text = String::from_utf8(line.text.to_vec())
                .map_err(|e| InputError::new(&path, format!("not UTF-8: {e}")).at_line(at))?;
            match trials.get(&t.matrix_index) {
                Some((id, _, _)) if *id != t.trial_id => {
                    return Err(InputError::new(
                        &path,
                        format!(
                            "trial {} and {id} claim the same matrix position {}",
                            t.trial_id, t.matrix_index
                        ),
                    )
                    .at_line(at)
                    .into());
                }
                Some((_, existing, _)) if *existing != text && t.is_error() => continue, // keep the finished one
                _ => {
                    trials.insert(t.matrix_index, (t.trial_id, text, r));
                }
            }
        }
    }

    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let lock = crate::record::guard::DirLock::acquire(out)?;
    if !lock.held() {
        anyhow::bail!(
            "{} is in use by another toolpick process; wait for it to end or merge into another directory",
            out.display()
        );
    }
    // A merge is done in seconds: a report of the directory waits for it rather than reading a
    // directory without trials.
    lock.writing_done();
    crate::record::guard::remove_stale(out)?;
    // The per-run files that depend only on the matrix are identical in every shard: take the first's.
    for name in [crate::record::TOOLS, crate::record::LINT, crate::record::DEFECTS] {
        let src = runs[0].join(name);
        if src.exists() {
            crate::files::write_atomic(
                &out.join(name),
                &std::fs::read(&src).with_context(|| format!("cannot read {}", src.display()))?,
            )?;
        }
    }
    let mut timings = Vec::new();
    for dir in runs {
        if let Ok(bytes) = std::fs::read(dir.join(crate::record::TIMINGS)) {
            timings.extend_from_slice(&bytes);
        }
    }
    crate::files::write_atomic(&out.join(crate::record::TIMINGS), &timings)?;
    // The first run's record, less what only describes that run's own execution.
    let merged_from = runs
        .iter()
        .zip(&metas)
        .map(|(d, m)| MergedRun {
            dir: d.display().to_string(),
            run_id: Some(m.run_id.clone()),
            shard: m.shard,
            seconds: m.seconds,
        })
        .collect();
    let meta = RunMeta {
        run_id: out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        shard: None,
        endpoints: None,
        executed_trials: None,
        skipped_trials: None,
        seconds: None,
        merged_from: Some(merged_from),
        ..metas[0].clone()
    };
    meta.write(out)?;
    merge_transcripts(runs, out, &trials)?;
    // The trials last: once they are there, the directory is a complete run that `report` can render.
    crate::crashpoint::reached("merge-trials", 1);
    let mut bytes = Vec::new();
    for (_, line, _) in trials.values() {
        bytes.write_all(line.as_bytes())?;
        bytes.push(b'\n');
    }
    crate::files::write_atomic(&out.join(crate::record::TRIALS), &bytes)?;
    Ok(Merged { trials: trials.len(), runs: runs.len(), lock })
}

/// The runs' transcripts (trial format 2) for the merged trials, in their order: each trial's from the
/// run whose record was merged (the last line of a trial in that run wins, as in compaction). Lines are
/// located in a first pass and copied in a second, so memory holds offsets, not transcripts. Runs of
/// format 1 have no transcripts file: their transcripts stay inside the trial records.
fn merge_transcripts(
    runs: &[PathBuf],
    out: &Path,
    trials: &BTreeMap<usize, (String, String, usize)>,
) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let chosen: HashMap<&str, (usize, usize)> =
        trials.iter().map(|(p, (id, _, run))| (id.as_str(), (*p, *run))).collect();
    // position → (run, start, length) of the line to copy.
    let mut lines: BTreeMap<usize, (usize, u64, usize)> = BTreeMap::new();
    for (r, dir) in runs.iter().enumerate() {
        let path = dir.join(transcripts::FILE);
        // A run of trial format 1 has no transcripts file.
        let Ok(mut reader) = JsonLines::open(&path, "transcripts file") else {
            continue;
        };
        while let Some(line) = reader.next_line()? {
            // A torn last line belongs to a trial without a record (see `record::transcripts`).
            if !line.complete || line.is_blank() {
                continue;
            }
            let id = match transcripts::leading_id(line.text) {
                Some(id) => id,
                None => serde_json::from_slice::<transcripts::TranscriptLine>(line.text)
                    .map_err(|e| {
                        InputError::new(&path, format!("not a transcript line: {e}"))
                            .at_line(line.number)
                    })?
                    .trial_id
                    .into_owned(),
            };
            if let Some(&(p, run)) = chosen.get(id.as_str())
                && run == r
            {
                lines.insert(p, (r, line.offset, line.len_in_file));
            }
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    let mut files: Vec<Option<std::fs::File>> =
        runs.iter().map(|d| std::fs::File::open(d.join(transcripts::FILE)).ok()).collect();
    // Written under a temporary name (unique per process and call, which `guard::remove_stale` knows)
    // and renamed into place; removed if anything fails.
    let dest = out.join(transcripts::FILE);
    let tmp = crate::files::temp_path(&dest);
    let copied = (|| -> Result<Vec<u64>> {
        let mut w = std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(&tmp)
                .with_context(|| format!("cannot create {}", tmp.display()))?,
        );
        let mut buf = Vec::new();
        let (mut offsets, mut written) = (Vec::with_capacity(lines.len()), 0u64);
        for (r, start, len) in lines.into_values() {
            offsets.push(written);
            written += len as u64;
            let f = files[r].as_mut().expect("opened in the first pass");
            f.seek(SeekFrom::Start(start))?;
            buf.resize(len, 0);
            f.read_exact(&mut buf).with_context(|| {
                format!("cannot read {}", runs[r].join(transcripts::FILE).display())
            })?;
            w.write_all(&buf).with_context(|| format!("cannot write {}", tmp.display()))?;
        }
        w.into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &dest)
            .with_context(|| format!("cannot move {} into place", dest.display()))?;
        Ok(offsets)
    })();
    let offsets = copied.inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    transcripts::write_index(out, &offsets)
}
