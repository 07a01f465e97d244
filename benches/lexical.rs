//! The lexical baseline at ToolBench scale: index build time, selections per second one query per call
//! and batched, and top-1/top-5 accuracy, on the seeded synthetic catalog of
//! `shared/bench/gen_catalog.py` (16 464 tools, 10 000 queries) read through the `bench-catalog`
//! importer and presented as the flat layout presents it.
//!
//! `cargo bench --bench lexical -- <dir with catalog.jsonl and queries.jsonl>`; `scripts/bench.sh` pins
//! it to one core (`taskset -c 0`) as the bm25s figures were measured. Prints `key value` lines.

use std::time::Instant;
use toolpick::agent::backends::lexical::function_doc;
use toolpick::text::{Analyzer, Bm25, Scratch};

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .expect("usage: lexical <dir with catalog.jsonl and queries.jsonl>");
    let imported =
        toolpick::dataset::importers::import("bench-catalog", std::path::Path::new(&dir))
            .expect("import");
    let catalog = imported.catalog;
    let executor =
        std::sync::Arc::new(toolpick::exec::Executor::new(&catalog).expect("schemas compile"));
    let flat = toolpick::layout::FlatLayout::new(&catalog, executor);
    let functions = toolpick::layout::Layout::functions(&flat).to_vec();
    let tools: Vec<String> =
        functions.iter().map(|f| flat.tool_id(&f.name).unwrap_or_default().to_string()).collect();
    let queries: Vec<(String, String)> = imported
        .dataset
        .tasks
        .iter()
        .map(|t| (t.query.clone(), t.expected[0].tool.clone()))
        .collect();
    println!("tools {}", functions.len());
    println!("queries {}", queries.len());

    let analyzer = Analyzer::default();
    let t = Instant::now();
    let docs: Vec<Vec<String>> =
        functions.iter().map(|f| analyzer.terms(&function_doc(f))).collect();
    let index = Bm25::new(&docs);
    println!("index_build_ms {:.1}", t.elapsed().as_secs_f64() * 1000.0);

    // One query per call: analyse, score, pick — what the baseline does for every episode.
    let rounds = 3;
    let mut best = f64::INFINITY;
    let mut top1 = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        top1 = 0;
        for (q, target) in &queries {
            let hit = index.top_k(&analyzer.terms(q), 1);
            top1 += hit.first().is_some_and(|(d, _)| tools[*d] == *target) as usize;
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("per_call_selections_per_s {:.0}", queries.len() as f64 / best);

    // Batched: analyse every query, then score them back to back with one accumulator.
    let mut best_total = f64::INFINITY;
    let mut best_scoring = f64::INFINITY;
    let mut top5 = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let ids: Vec<Vec<u32>> =
            queries.iter().map(|(q, _)| index.query_ids(&analyzer.terms(q))).collect();
        let scoring = Instant::now();
        let mut scratch = Scratch::default();
        top5 = 0;
        for (i, q) in ids.iter().enumerate() {
            let hits = index.top_k_ids(q, 5, &mut scratch);
            top5 += hits.iter().any(|(d, _)| tools[*d] == queries[i].1) as usize;
        }
        best_scoring = best_scoring.min(scoring.elapsed().as_secs_f64());
        best_total = best_total.min(t.elapsed().as_secs_f64());
    }
    println!("batched_selections_per_s {:.0}", queries.len() as f64 / best_total);
    println!("batched_scoring_only_per_s {:.0}", queries.len() as f64 / best_scoring);
    println!("top1_pct {:.1}", 100.0 * top1 as f64 / queries.len() as f64);
    println!("top5_pct {:.1}", 100.0 * top5 as f64 / queries.len() as f64);
}
