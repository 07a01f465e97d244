//! Scoring and reporting at scale: writes a run directory of N synthetic trial records (default
//! 1 000 000) made from the records of a real run (so sizes, transcripts and score mixes are realistic,
//! each copy with its own trial and task id), then re-scores it and renders every report — what
//! `toolpick report` does — and prints wall time and peak resident memory (`VmHWM`).
//!
//! The run is written in the current trial format (records in `trials.jsonl`, messages in
//! `transcripts.jsonl`), or with `v1` in the format before it (each transcript inside its record), to
//! measure what the split saves.
//!
//! The report is rendered `REPORT_REPEATS` times (default 1) on the same files, each printing its wall
//! time and peak resident memory (the peak is reset before each render, so it is the render's own).
//! With `REPORT_PHASES=1`, one more render follows with its phase times printed to stderr
//! ([`toolpick::report::phases`]); timing them costs a little, so it is not one of the timed renders.
//!
//! `cargo bench --bench report_scale -- <template run dir> <work dir> [N] [v1]`

use std::io::{BufRead, Write};

// The allocator the toolpick binary uses (src/main.rs), so the figure is the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::Instant;

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    toolpick::allocator::tune();
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let template = std::path::PathBuf::from(
        args.first().expect("usage: report_scale <template run dir> <work dir> [N]"),
    );
    let work = std::path::PathBuf::from(
        args.get(1).expect("usage: report_scale <template run dir> <work dir> [N]"),
    );
    let n: usize = args.get(2).map(|s| s.parse().expect("N")).unwrap_or(1_000_000);

    let v1 = args.get(3).is_some_and(|a| a == "v1");
    // REPORT_REUSE=1 renders a work dir a previous invocation generated (an A/B of two binaries then
    // reads the very same files, and the 6 GB of a million trials are written once).
    if std::env::var_os("REPORT_REUSE").is_some() && work.join("trials.jsonl").exists() {
        let bytes = std::fs::metadata(work.join("trials.jsonl")).map(|m| m.len()).unwrap_or(0);
        println!("trials {n}");
        println!("trials_file_mib {:.0}", bytes as f64 / 1048576.0);
        render(&work);
        return;
    }
    let read = |name: &str| -> Vec<serde_json::Value> {
        match std::fs::File::open(template.join(name)) {
            Ok(f) => std::io::BufReader::new(f)
                .lines()
                .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    };
    let records = read("trials.jsonl");
    let transcripts: std::collections::HashMap<String, serde_json::Value> =
        read("transcripts.jsonl")
            .into_iter()
            .map(|t| (t["trial_id"].as_str().unwrap().to_string(), t["transcript"].clone()))
            .collect();
    std::fs::create_dir_all(&work).unwrap();
    for f in ["run.json", "tools.json", "lint.json", "defects.json"] {
        let _ = std::fs::copy(template.join(f), work.join(f));
    }
    let t = Instant::now();
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(work.join("trials.jsonl")).unwrap());
    let mut out_transcripts = (!v1).then(|| {
        std::io::BufWriter::new(std::fs::File::create(work.join("transcripts.jsonl")).unwrap())
    });
    let (mut bytes, mut transcript_bytes) = (0usize, 0usize);
    for i in 0..n {
        let mut r = records[i % records.len()].clone();
        let transcript = r
            .as_object_mut()
            .unwrap()
            .remove("transcript")
            .or_else(|| transcripts.get(r["trial_id"].as_str().unwrap()).cloned())
            .unwrap_or_default();
        let copy = i / records.len();
        let task = format!("{}-{copy}", r["task_id"].as_str().unwrap());
        let id = format!(
            "{}/{}/{}/{}/{task}#{}",
            r["dataset"].as_str().unwrap(),
            r["variant"].as_str().unwrap(),
            r["layout"].as_str().unwrap(),
            r["backend"].as_str().unwrap(),
            r["trial"]
        );
        r["task_id"] = task.into();
        r["trial_id"] = id.clone().into();
        r["matrix_index"] = i.into();
        match out_transcripts.as_mut() {
            Some(w) => {
                let line = serde_json::to_vec(&serde_json::json!({"trial_id": id, "matrix_index": i, "transcript": transcript})).unwrap();
                transcript_bytes += line.len() + 1;
                w.write_all(&line).unwrap();
                w.write_all(b"\n").unwrap();
            }
            None => r["transcript"] = transcript,
        }
        let line = serde_json::to_vec(&r).unwrap();
        bytes += line.len() + 1;
        out.write_all(&line).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    drop(out);
    if let Some(mut w) = out_transcripts {
        w.flush().unwrap();
    }
    println!("trials {n}");
    println!("format {}", if v1 { 1 } else { 2 });
    println!("trials_file_mib {:.0}", bytes as f64 / 1048576.0);
    println!("transcripts_file_mib {:.0}", transcript_bytes as f64 / 1048576.0);
    // As a run ends: compacted (already in order: one read) and the transcripts indexed.
    toolpick::record::store::compact_run(&work, |_, matrix_index| Some(matrix_index))
        .expect("compact");
    println!("generate_s {:.1}", t.elapsed().as_secs_f64());
    render(&work);
}

/// Render the work dir's report `REPORT_REPEATS` times (and once more with phases timed).
fn render(work: &std::path::Path) {
    let work = work.to_path_buf();
    let repeats: usize =
        std::env::var("REPORT_REPEATS").ok().and_then(|r| r.parse().ok()).unwrap_or(1).max(1);
    for run in 1..=repeats {
        // Drop the generator's (or the previous render's) peak: "5" resets VmHWM to the current RSS.
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let before = vm_hwm_kib();
        let t = Instant::now();
        let data = toolpick::report::render_run(&work).expect("render");
        let wall = t.elapsed().as_secs_f64();
        let peak = if reset { vm_hwm_kib() } else { vm_hwm_kib().max(before) };
        println!("report_wall_s {wall:.2}");
        println!("peak_rss_mib {:.0}", peak as f64 / 1024.0);
        if run == 1 {
            println!("cells {}", data.analysis.cells.len());
        }
        drop(data);
    }
    if std::env::var_os("REPORT_PHASES").is_some() {
        // One more render with its phases timed (stderr), apart from the timed renders above.
        toolpick::report::phases::set_enabled(true);
        let t = Instant::now();
        toolpick::report::render_run(&work).expect("render");
        println!("phases_wall_s {:.2}", t.elapsed().as_secs_f64());
    }
    let html = std::fs::metadata(work.join("report.html")).map(|m| m.len()).unwrap_or(0);
    println!("report_html_mib {:.1}", html as f64 / 1048576.0);
}
