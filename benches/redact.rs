//! What redaction costs per trial record: `Redactor::redact_bytes` over a trial-sized JSON line with
//! one and with three configured keys, when nothing matches (every normal record) and when the key is
//! echoed in it; and over a record with escapes (tool-call arguments are JSON inside JSON), which is
//! searched decoded too, clean and with the key echoed `\u`-escaped. `cargo bench --bench redact`;
//! prints `key value` lines (ns per record).

use std::hint::black_box;
use std::time::Instant;
use toolpick::redact::Redactor;

fn record(echo: Option<&str>) -> Vec<u8> {
    let mut messages = Vec::new();
    for i in 0..12 {
        messages.push(serde_json::json!({"role": if i % 2 == 0 { "assistant" } else { "tool" }, "content": format!("step {i}: the forecast for Lisbon on 2026-12-0{} is sunny, 18 °C, wind 12 km/h from the north-west", i % 9)}));
    }
    let mut v = serde_json::json!({"trial_id": "starter/good/flat/openai/t-0042#0", "messages": messages, "score": {"pass": true, "error_detail": ""}});
    if let Some(k) = echo {
        v["score"]["error_detail"] = serde_json::json!(format!(
            "client_error after 1 attempt(s): HTTP 401: Incorrect API key provided: {k}"
        ));
    }
    serde_json::to_vec(&v).unwrap()
}

fn time(label: &str, r: &Redactor, line: &[u8]) {
    let rounds = 200_000;
    let t = Instant::now();
    for _ in 0..rounds {
        black_box(r.redact_bytes(black_box(line)));
    }
    println!("{label}_ns_per_record {:.0}", t.elapsed().as_secs_f64() * 1e9 / rounds as f64);
}

fn main() {
    let key = "sk-proj-4f9a0c1e7b2d8e6f3a5c9b1d0e7f2a4c";
    let clean = record(None);
    let echoed = record(Some(key));
    println!("record_bytes {}", clean.len());
    let one = Redactor::new([key]);
    let three = Redactor::new([
        key,
        "sk-ant-api03-x9y8z7w6v5u4t3s2r1q0",
        "gsk_0123456789abcdefghijABCDEFGHIJ",
    ]);
    time("one_key_clean", &one, &clean);
    time("one_key_echoed", &one, &echoed);
    time("three_keys_clean", &three, &clean);
    time("three_keys_echoed", &three, &echoed);
    // A record with escapes (tool-call arguments are JSON inside JSON): the decoded views are searched.
    let mut v: serde_json::Value = serde_json::from_slice(&clean).unwrap();
    v["calls"] = serde_json::json!([{"name": "get_forecast", "arguments": "{\"city\": \"Lisbon\", \"date\": \"2026-12-04\", \"units\": \"metric\"}"}]);
    let escaped = serde_json::to_vec(&v).unwrap();
    println!("escaped_record_bytes {}", escaped.len());
    time("one_key_escaped_clean", &one, &escaped);
    time("three_keys_escaped_clean", &three, &escaped);
    v["error"] = serde_json::json!(format!(
        "HTTP 401: {{\"error\": \"bad key {}\"}}",
        key.replace('-', "\\u002d")
    ));
    let escaped_echo = serde_json::to_vec(&v).unwrap();
    time("one_key_escaped_echoed", &one, &escaped_echo);
}
