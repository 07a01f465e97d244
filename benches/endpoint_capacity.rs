//! What an OpenAI-compatible endpoint can serve for the runner benchmark's workload, measured by the
//! smallest client that does the same HTTP work: `requests` POSTs of a one-turn chat completion with 10
//! tools, `concurrency` in flight over keep-alive connections, nothing else (no episode loop, no scoring,
//! no records). `scripts/bench.sh` runs it against the same endpoint right before toolpick's runner and
//! reports the runner's throughput as a ratio to this one, so the endpoint's own ceiling (its timer, its
//! HTTP stack) is measured rather than argued.
//!
//! `cargo bench --bench endpoint_capacity -- BASE_URL [REQUESTS] [CONCURRENCY]`; prints `key value` lines.

use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The body of a first turn as the runner sends it for the benchmark suite: the user's query and 10
/// function tools with one required string parameter.
fn body(i: usize) -> Vec<u8> {
    let verbs = [
        "get", "list", "create", "update", "delete", "search", "send", "cancel", "export",
        "archive",
    ];
    let tools: Vec<_> = verbs
        .iter()
        .map(|v| {
            json!({"type": "function", "function": {
                "name": format!("store__records__{v}_record"),
                "description": format!("{v} a record in the store. Use when the user wants to {v} a record."),
                "parameters": {"type": "object", "properties": {"record_id": {"type": "string", "description": "Record id."}}, "required": ["record_id"]}
            }})
        })
        .collect();
    serde_json::to_vec(&json!({
        "model": "bench",
        "messages": [{"role": "user", "content": format!("Please get record r{i}")}],
        "tools": tools,
        "tool_choice": "auto",
    }))
    .expect("a JSON value serialises")
}

fn main() {
    // `cargo bench` passes `--bench`; positional arguments are ours.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let Some(base) = args.first().cloned() else {
        eprintln!("usage: endpoint_capacity BASE_URL [REQUESTS] [CONCURRENCY]");
        std::process::exit(2);
    };
    let requests: usize =
        args.get(1).map(|s| s.parse().expect("REQUESTS is a number")).unwrap_or(2000);
    let concurrency: usize =
        args.get(2).map(|s| s.parse().expect("CONCURRENCY is a number")).unwrap_or(64);
    let rt =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    let (wall, failed) = rt.block_on(async move {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(concurrency)
            .build()
            .expect("an HTTP client");
        let url = format!("{}/chat/completions", base.trim_end_matches('/'));
        let next = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let workers: Vec<_> = (0..concurrency)
            .map(|_| {
                let (client, url, next, failed) =
                    (client.clone(), url.clone(), next.clone(), failed.clone());
                tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= requests {
                            break;
                        }
                        let ok = match client
                            .post(&url)
                            .header("content-type", "application/json")
                            .body(body(i))
                            .send()
                            .await
                        {
                            Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                            Err(_) => false,
                        };
                        if !ok {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.await.expect("a worker finishes");
        }
        (started.elapsed().as_secs_f64(), failed.load(Ordering::Relaxed))
    });
    println!("requests {requests}");
    println!("concurrency {concurrency}");
    println!("failed {failed}");
    println!("wall_s {wall:.3}");
    println!("requests_per_s {:.1}", requests as f64 / wall);
}
