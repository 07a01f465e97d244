//! The data island of `report.html`: trial details as JSON inside a `<script type="application/json">`
//! element, with every character that could end the element (or a line, in old parsers) escaped as a
//! JSON `\u` escape. Its own file because it is the page's one path for untrusted text into markup.

use super::super::ReportData;
use serde_json::{Value, json};

/// Serialise JSON for embedding in a `<script>` element (the island's escaping of one value).
#[cfg(test)]
fn json_island(v: &Value) -> String {
    let mut out = String::new();
    escape_into(&serde_json::to_string(v).unwrap_or_else(|_| "null".into()), &mut out);
    out
}

/// Append serialized JSON to `out` with the characters that could end a `<script>` element (or a line
/// in old parsers) escaped as JSON `\u` escapes, which parse back to the same value.
fn escape_into(s: &str, out: &mut String) {
    out.reserve(s.len() + s.len() / 16);
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

/// Longest message text kept in the page's drill-down.
const MESSAGE_LIMIT: usize = 1500;

fn compact_message(m: &crate::protocol::Message, full_text_in: &str) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if let Some(Value::String(c)) = v.get_mut("content")
        && c.chars().count() > MESSAGE_LIMIT
    {
        let cut: String = c.chars().take(MESSAGE_LIMIT).collect();
        *c = format!(
            "{cut} … [cut at {MESSAGE_LIMIT} characters; the full text is in {full_text_in}]"
        );
    }
    v
}

/// The page's data island, serialized one trial at a time (a drill-down of 10 000 trials with
/// transcripts never exists as one JSON tree in memory).
pub(super) fn island(data: &ReportData) -> String {
    let mut out = String::from("{\"trials\":[");
    for (i, t) in data.sample.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut v = json!({
                "id": t.trial_id, "dataset": t.dataset, "task": t.task_id, "variant": t.variant, "layout": t.layout.as_str(), "backend": t.backend,
                "kind": t.kind.as_str(), "category": t.category, "tags": t.tags, "query": t.query,
                "pass": t.score.pass, "selection": t.score.selection_correct,
                "error": t.score.error_type.map(|e| e.as_str()).unwrap_or(""), "detail": t.error.clone().unwrap_or_else(|| t.score.error_detail.clone()),
                "steps": t.steps, "tokens": t.tokens.tool_context_total, "expected": t.expected,
                "stop": t.stop_reason.as_str(), "upfront": t.tokens.definitions_upfront, "peak": t.tokens.peak_context,
                // The expected calls compared with the calls, argument by argument (the analysis').
                "compare": data.arguments.get(i),
                "calls": t.calls.iter().map(|c| &c.record).collect::<Vec<_>>(),
                // The system prompt is the same everywhere; skip it, and cut long tool results, to keep
                // the page small. transcripts.jsonl has every message in full.
                "transcript": t.transcript.iter().skip(1).map(|m| compact_message(m, data.transcripts_in)).collect::<Vec<_>>(),
        });
        // Live runs: the server, the sandbox's final-state checks and the sampling tokens (absent for
        // simulated trials, whose pages stay as they were).
        let u = &t.usage;
        if u.prompt_tokens > 0 || u.completion_tokens > 0 {
            v["usage"] = json!([u.prompt_tokens, u.completion_tokens]);
        }
        if let Some(live) = &t.live {
            v["live"] = json!(live);
        }
        // Judged runs: the final answer and the judge's verdicts with their reasons.
        if let Some(j) = &t.judgement {
            v["final_answer"] = json!(t.final_answer);
            v["judgement"] = json!(j);
        }
        escape_into(&serde_json::to_string(&v).unwrap_or_else(|_| "null".into()), &mut out);
    }
    out.push_str("],\"offered\":");
    let offered: serde_json::Map<String, Value> = data
        .offered
        .iter()
        .map(|(k, fs)| {
            (
                k.clone(),
                json!(
                    fs.iter()
                        .map(|f| json!({"name": f.name, "description": f.description}))
                        .collect::<Vec<_>>()
                ),
            )
        })
        .collect();
    escape_into(&serde_json::to_string(&offered).unwrap_or_else(|_| "null".into()), &mut out);
    out.push_str(",\"matrices\":");
    escape_into(
        &serde_json::to_string(&super::matrix::matrices(data)).unwrap_or_else(|_| "null".into()),
        &mut out,
    );
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn island_escapes_markup_and_line_separators() {
        let v = json!({"q": "</script><img src=x onerror=alert(1)> & \u{2028}\u{2029}"});
        let s = json_island(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}') && !s.contains('\u{2029}'));
        // and it still parses back to the same value
        assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v);
    }
}
