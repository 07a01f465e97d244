//! The report's one pass over `trials.jsonl`: a reader thread cuts the file into batches of whole
//! lines, the parsing threads parse (without transcripts or the arguments only scoring reads),
//! re-score stale trials and encode each streaming format's entries, and a writer thread keeps the
//! compact rows and the drill-down sample in file order and feeds the sinks. Also the judgements
//! joined to each trial, and the drill-down sample's transcripts. Apart from `report/mod.rs` (the
//! formats, the locks and the render's order of steps) because this is the part whose speed decides
//! a large run's report time (BENCHMARKS.md's per-phase table names these stages).

use super::{DRILLDOWN_MAX, Encoder, SINK_ENCODE, SINK_WRITE, TrialSink, phases};
use crate::analysis::rows;
use crate::record::Trial;
use anyhow::{Context, Result};
use std::collections::BinaryHeap;
use std::path::Path;

/// Bytes of the trial file read per batch (a batch is the whole lines in it).
const CHUNK: usize = 8 << 20;

/// A batch read from the trial file: a buffer of whole lines and, per non-blank line, its line number
/// and byte range. Lines are parsed straight from the buffer (no copy per line), and buffers go back to
/// the reader to be filled again, so a large file is read through a few reused buffers.
struct Lines {
    data: Vec<u8>,
    lines: Vec<(usize, std::ops::Range<usize>)>,
    /// Number of the last line in the buffer (blank ones included).
    last_line: usize,
}

/// Fill `data` with whole lines (the tail of an incomplete last line is moved to `carry`).
fn read_chunk(
    file: &mut impl std::io::Read,
    mut data: Vec<u8>,
    carry: &mut Vec<u8>,
    first_line: usize,
    size: usize,
) -> std::io::Result<Lines> {
    data.clear();
    data.append(carry);
    loop {
        let start = data.len();
        let want = start.max(size).max(start + size / 8 + 1) - start;
        // Read into the spare capacity: not zeroing the buffer first saves a pass over every byte.
        data.reserve(want);
        let got = std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut *file, want as u64),
            &mut data,
        )?;
        let eof = got < want;
        // Cut after the last newline; keep reading if the chunk holds no whole line yet.
        match memchr_last(&data) {
            Some(cut) if !eof => {
                carry.extend_from_slice(&data[cut + 1..]);
                data.truncate(cut + 1);
                break;
            }
            None if !eof => continue,
            _ => break,
        }
    }
    let mut lines = Vec::new();
    let (mut at, mut no) = (0usize, first_line);
    while at < data.len() {
        let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |i| at + i);
        no += 1;
        if data[at..end].iter().any(|b| !b.is_ascii_whitespace()) {
            lines.push((no, at..end));
        }
        at = end + 1;
    }
    Ok(Lines { data, lines, last_line: no })
}

fn memchr_last(data: &[u8]) -> Option<usize> {
    memchr::memrchr(b'\n', data)
}

/// A parsed line: the record, what the rows derive from it, and each sink's encoded entry.
type Parsed = Result<(Trial, rows::Derived, Vec<Vec<u8>>)>;

/// What the writer stage keeps: the rows, and the drill-down sample candidates — the
/// [`DRILLDOWN_MAX`] smallest `(hash of trial id, position)` with their lines.
struct Kept {
    rows: rows::ScoreRows,
    heap: BinaryHeap<(u64, usize)>,
    lines: rustc_hash::FxHashMap<usize, Vec<u8>>,
}

/// Stream a run's trials once, in three overlapping stages: a reader thread cuts the file into batches
/// of lines; the calling thread parses and re-scores each batch (in parallel, without transcripts) and
/// encodes each sink's entries; a writer thread takes the batches in file order, keeps the compact rows
/// and the drill-down sample, and feeds the sinks. Returns the rows and the sample (in file order).
pub(super) fn scan(
    trials_path: &Path,
    sinks: &mut [Box<dyn TrialSink>],
    check_order: bool,
    judgements: &Judgements,
) -> Result<(rows::ScoreRows, Sample)> {
    use rayon::prelude::*;
    use std::sync::mpsc::sync_channel;
    let file = std::fs::File::open(trials_path).map_err(|e| {
        crate::error::InputError::new(trials_path, format!("cannot open trial file: {e}"))
    })?;
    let encoders: Vec<Encoder> = sinks.iter().map(|s| s.encoder()).collect();
    let kept = std::thread::scope(|scope| -> Result<Kept> {
        let (lines_tx, lines_rx) = sync_channel::<Lines>(2);
        let (spare_tx, spare_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let reader = scope.spawn(move || -> Result<()> {
            let mut file = file;
            let mut carry = Vec::new();
            let mut line_no = 0usize;
            loop {
                let buffer = spare_rx.try_recv().unwrap_or_default();
                let batch = phases::time("read", || {
                    read_chunk(&mut file, buffer, &mut carry, line_no, CHUNK)
                })
                .with_context(|| {
                    format!("{}:{}: cannot read", trials_path.display(), line_no + 1)
                })?;
                line_no = batch.last_line;
                if batch.data.is_empty() || lines_tx.send(batch).is_err() {
                    return Ok(());
                }
            }
        });
        let (parsed_tx, parsed_rx) = sync_channel::<(Lines, Vec<Parsed>)>(2);
        let (spare_parsed_tx, spare_parsed_rx) = std::sync::mpsc::channel::<Vec<Parsed>>();
        let writer = scope.spawn(move || -> Result<Kept> {
            let mut kept = Kept {
                rows: rows::ScoreRows::default(),
                heap: BinaryHeap::new(),
                lines: Default::default(),
            };
            let mut seq = 0usize;
            let mut order = crate::record::store::OrderCheck::default();
            let mut timed = phases::Local::default();
            for (batch, parsed) in parsed_rx {
                for ((no, range), parsed) in batch.lines.iter().zip(&parsed) {
                    let Ok((t, derived, encoded)) = parsed else {
                        unreachable!("a batch with a failed line is not sent to the writer")
                    };
                    let line = &batch.data[range.clone()];
                    let h = crate::record::stable_hash(t.trial_id.as_bytes());
                    if check_order && !order.push(t.matrix_index, h) {
                        return Err(OutOfOrder { line: *no }.into());
                    }
                    timed.time("scan: rows (writer thread)", || kept.rows.push_with(t, derived));
                    for ((sink, bytes), name) in sinks.iter_mut().zip(encoded).zip(SINK_WRITE) {
                        timed.time(name, || sink.write(t, bytes))?;
                    }
                    if kept.heap.len() < DRILLDOWN_MAX {
                        kept.heap.push((h, seq));
                        kept.lines.insert(seq, line.to_vec());
                    } else if let Some(&(top, top_seq)) = kept.heap.peek()
                        && (h, seq) < (top, top_seq)
                    {
                        kept.heap.pop();
                        kept.lines.remove(&top_seq);
                        kept.heap.push((h, seq));
                        kept.lines.insert(seq, line.to_vec());
                    }
                    seq += 1;
                    crate::crashpoint::reached("scan", seq as u64);
                }
                // Freed by the parsing threads that allocated them: this thread is the pipeline's
                // narrowest stage, and a free from another thread costs mimalloc more than a local one.
                // The emptied vector goes back to be filled again (fails harmlessly at the end).
                let spare = spare_parsed_tx.clone();
                rayon::spawn(move || {
                    let mut parsed = parsed;
                    parsed.clear();
                    let _ = spare.send(parsed);
                });
                // The buffer goes back to the reader (fails harmlessly once the reader is done).
                let _ = spare_tx.send(batch.data);
                timed.flush();
            }
            Ok(kept)
        });
        let mut failed = None;
        // Claims and answers are read only to join judgements (and the sample is re-read in full).
        let judged = !judgements.0.is_empty();
        for batch in lines_rx.iter() {
            // Each line's record is written once, in place, into a reused vector (a record is large,
            // and collecting through rayon's lists into a growing vector moved each several times).
            let mut parsed = spare_parsed_rx.try_recv().unwrap_or_default();
            batch
                .lines
                .par_iter()
                .map_init(phases::Local::default, |timed, (no, range)| {
                    let line = &batch.data[range.clone()];
                    let not_a_trial = |e: serde_json::Error| {
                        let message = format!("not a trial record: {e}");
                        crate::error::InputError::new(trials_path, message).at_line(*no)
                    };
                    use crate::record::trial::{parse_for_report, parse_without_transcript};
                    let mut t: Trial = timed
                        .time("scan: parse", || parse_for_report(line, judged))
                        .map_err(not_a_trial)?;
                    if t.score.scorer != crate::score::VERSION {
                        // A stale score: scoring reads what the report's parse left out.
                        t = timed
                            .time("scan: parse again to score", || parse_without_transcript(line))
                            .map_err(not_a_trial)?;
                        timed.time("scan: score", || crate::score::score_if_stale(&mut t));
                    }
                    t.judgement = judgements.of(&t);
                    let encoded = encoders
                        .iter()
                        .zip(SINK_ENCODE)
                        .map(|(e, name)| timed.time(name, || e(&t)))
                        .collect::<Result<Vec<_>>>()?;
                    let derived =
                        timed.time("scan: derive (pairing, diagnostics)", || rows::Derived::of(&t));
                    Ok((t, derived, encoded))
                })
                .collect_into_vec(&mut parsed);
            // The first failed line in file order is the one reported.
            if let Some(i) = parsed.iter().position(Result::is_err) {
                failed = parsed.swap_remove(i).err();
                break;
            }
            if parsed_tx.send((batch, parsed)).is_err() {
                break; // the writer stopped on an error; it reports it
            }
        }
        drop(lines_rx);
        drop(parsed_tx);
        let kept = writer.join().map_err(|_| anyhow::anyhow!("the report writer panicked"))?;
        reader.join().map_err(|_| anyhow::anyhow!("the trial reader panicked"))??;
        match failed {
            Some(e) => Err(e),
            None => kept,
        }
    })?;
    let span = phases::start();
    let mut order: Vec<usize> = kept.lines.keys().copied().collect();
    order.sort_unstable();
    let sample = order
        .iter()
        .map(|&i| {
            let mut t: Trial = serde_json::from_slice(&kept.lines[&i])
                .with_context(|| format!("{}: cannot re-read a trial", trials_path.display()))?;
            crate::score::score_if_stale(&mut t);
            t.judgement = judgements.of(&t);
            Ok(t)
        })
        .collect::<Result<Vec<Trial>>>()?;
    span.end("drill-down sample: re-read");
    Ok((kept.rows, Sample { trials: sample, lines: order }))
}

/// The run's judgements (`judgements.jsonl`) by trial id, joined to each trial as it is read.
pub(super) struct Judgements(
    rustc_hash::FxHashMap<String, std::sync::Arc<crate::record::judgement::Judgement>>,
);

impl Judgements {
    pub(super) fn read(dir: &Path) -> Result<Judgements> {
        Ok(Judgements(
            crate::record::judgement::read(dir)?
                .into_iter()
                .map(|j| (j.trial_id.clone(), std::sync::Arc::new(j)))
                .collect(),
        ))
    }

    /// The trial's judgement, unless it judged another answer (the trial was re-run since: stale).
    fn of(&self, t: &Trial) -> Option<std::sync::Arc<crate::record::judgement::Judgement>> {
        if self.0.is_empty() {
            return None;
        }
        let j = self.0.get(&t.trial_id)?;
        (j.answer_digest
            == crate::record::judgement::answer_digest(t.final_answer.as_deref(), &t.claims))
        .then(|| j.clone())
    }
}

/// The drill-down sample and, per trial, its line among the trial file's records (counted from 0).
pub(super) struct Sample {
    pub(super) trials: Vec<Trial>,
    pub(super) lines: Vec<usize>,
}

/// Give the drill-down sample its transcripts from `transcripts.jsonl` (trial format 2); records of
/// format 1 carry theirs already. With a compacted run's index (`transcripts.idx`) only the sample's
/// lines are read; without one (or a stale one), the file is scanned and only the sample's lines are
/// parsed: the others are skipped by their leading trial id.
pub(super) fn with_transcripts(dir: &Path, sample: &mut Sample, records: usize) -> Result<()> {
    let sample_lines = &sample.lines;
    let sample = &mut sample.trials;
    let wanted: Vec<(usize, &str)> = sample
        .iter()
        .zip(sample_lines)
        .filter(|(t, _)| t.transcript.is_empty())
        .map(|(t, &line)| (line, t.trial_id.as_str()))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    if let Some(found) = crate::record::transcripts::read_indexed(dir, &wanted, records)? {
        let mut found = found.into_iter();
        for t in sample.iter_mut().filter(|t| t.transcript.is_empty()) {
            t.transcript = found.next().unwrap_or_default();
        }
        return Ok(());
    }
    let index: rustc_hash::FxHashMap<&str, usize> = sample
        .iter()
        .enumerate()
        .filter(|(_, t)| t.transcript.is_empty())
        .map(|(i, t)| (t.trial_id.as_str(), i))
        .collect();
    let mut found: Vec<(usize, Vec<crate::protocol::Message>)> = Vec::new();
    crate::record::transcripts::read(
        dir,
        |id| index.contains_key(id),
        |id, messages| found.push((index[id.as_str()], messages)),
    )?;
    for (i, messages) in found {
        sample[i].transcript = messages;
    }
    Ok(())
}

/// The trial file is not in matrix order (a run was killed before it compacted it); the scan stops
/// at the first record out of place, and the caller compacts and scans again.
#[derive(Debug)]
pub(super) struct OutOfOrder {
    line: usize,
}

impl std::fmt::Display for OutOfOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: the trials are not in matrix order (the run was interrupted before compacting them)",
            self.line
        )
    }
}

impl std::error::Error for OutOfOrder {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_whole_lines_with_their_numbers() {
        // Lines shorter and longer than the chunk, a blank line, and no newline at the end.
        let text = "a\nbb\n\n0123456789abcdefghij\nccc\n   \nlast";
        let mut file = std::io::Cursor::new(text.as_bytes().to_vec());
        let (mut carry, mut line_no, mut got) = (Vec::new(), 0, Vec::new());
        loop {
            let chunk = read_chunk(&mut file, Vec::new(), &mut carry, line_no, 8).unwrap();
            if chunk.data.is_empty() {
                break;
            }
            for (no, r) in &chunk.lines {
                got.push((*no, String::from_utf8(chunk.data[r.clone()].to_vec()).unwrap()));
            }
            line_no = chunk.last_line;
        }
        let want: Vec<(usize, String)> =
            [(1, "a"), (2, "bb"), (4, "0123456789abcdefghij"), (5, "ccc"), (7, "last")]
                .iter()
                .map(|(n, l)| (*n, l.to_string()))
                .collect();
        assert_eq!(got, want);
    }
}
