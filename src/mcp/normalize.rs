//! What a live trial's results look like to the model: the sandbox shown as [`VIRTUAL_ROOT`] and
//! the model's paths mapped back ([`Normalizer`]), UUIDs numbered in order of appearance and the
//! trial's own clock readings shown as the fixture time, so two runs of the same trial read the same
//! text; and what a `tools/call` result shows the model ([`shown_result`]).

use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The sandbox as the model sees it.
pub const VIRTUAL_ROOT: &str = "/sandbox";

/// Rewrites one trial's traffic: the model's `/sandbox` paths to the real sandbox on the way out, the
/// real sandbox to `/sandbox` and UUIDs to numbered ones on the way back.
pub struct Normalizer {
    real: String,
    uuids: std::sync::Mutex<HashMap<String, String>>,
}

impl Normalizer {
    pub fn new(sandbox: &Path) -> Normalizer {
        Normalizer { real: sandbox.display().to_string(), uuids: Default::default() }
    }

    /// Arguments as the server must get them: strings that are `/sandbox` or start with `/sandbox/`
    /// point into the real sandbox.
    pub fn outbound(&self, v: &Value) -> Value {
        match v {
            Value::String(s) if s == VIRTUAL_ROOT => Value::String(self.real.clone()),
            Value::String(s) if s.starts_with("/sandbox/") => {
                Value::String(format!("{}{}", self.real, &s[VIRTUAL_ROOT.len()..]))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.outbound(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), self.outbound(x))).collect())
            }
            other => other.clone(),
        }
    }

    /// Text from the server as the model may see it.
    pub fn inbound(&self, text: &str) -> String {
        let text = text.replace(&self.real, VIRTUAL_ROOT);
        let text = clock_readings_to_fixture_time(&text, today());
        let re = uuid_pattern();
        let mut seen = self.uuids.lock().expect("uuid map");
        re.replace_all(&text, |c: &regex::Captures<'_>| {
            let n = seen.len() + 1;
            seen.entry(c[0].to_ascii_lowercase())
                .or_insert_with(|| format!("00000000-0000-4000-8000-{n:012}"))
                .clone()
        })
        .into_owned()
    }

    /// Every string of a JSON value as [`Self::inbound`] makes it.
    pub fn inbound_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.inbound(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.inbound_value(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), self.inbound_value(x))).collect())
            }
            other => other.clone(),
        }
    }
}

/// Today's date (UTC) as (year, month, day).
fn today() -> (i64, u32, u32) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    civil((secs / 86_400) as i64)
}

/// The civil date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Clock readings a server took during the trial (a file's creation time, "now"), in ISO 8601 or
/// JavaScript's `Date.toString` form, dated today or the day before or after (UTC), become
/// [`super::live::FIXTURE_TIME`] in the same form: the sandbox's files all read 2000-01-01, and so does any time
/// the trial itself produced, whichever day it ran.
fn clock_readings_to_fixture_time(text: &str, today: (i64, u32, u32)) -> String {
    static ISO: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static JS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let iso = ISO.get_or_init(|| {
        regex::Regex::new(
            r"\b(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
        )
        .expect("iso pattern")
    });
    let js = JS.get_or_init(|| {
        regex::Regex::new(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{2}) (\d{4}) \d{2}:\d{2}:\d{2} GMT([+-]\d{4})").expect("js date pattern")
    });
    let days = |y: i64, m: u32, d: u32| -> i64 {
        // Days since 1970-01-01 of a civil date (the inverse of `civil`).
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
        let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    };
    let now = days(today.0, today.1, today.2);
    let near = |y: i64, m: u32, d: u32| (days(y, m, d) - now).abs() <= 1;
    let text = iso.replace_all(text, |c: &regex::Captures<'_>| {
        let (y, m, d) =
            (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0), c[3].parse().unwrap_or(0));
        if !near(y, m, d) {
            return c[0].to_string();
        }
        let frac =
            c.get(7).map(|f| format!(".{}", "0".repeat(f.as_str().len() - 1))).unwrap_or_default();
        let zone = c
            .get(8)
            .map(|z| if z.as_str() == "Z" { "Z".to_string() } else { "+00:00".to_string() })
            .unwrap_or_default();
        let sep = &c[0][10..11];
        format!("2000-01-01{sep}00:00:00{frac}{zone}")
    });
    js.replace_all(&text, |c: &regex::Captures<'_>| {
        let m = MONTHS.iter().position(|x| *x == &c[2]).map_or(0, |i| i as u32 + 1);
        if !near(c[4].parse().unwrap_or(0), m, c[3].parse().unwrap_or(0)) {
            return c[0].to_string();
        }
        "Sat Jan 01 2000 00:00:00 GMT+0000".to_string()
    })
    .into_owned()
}

fn uuid_pattern() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
            .expect("uuid pattern")
    })
}

/// What a `tools/call` result shows the model: `structuredContent` when the server gave it, else the
/// text of its content blocks (other blocks named by type), as `{"content": …}`, or `{"error": …}` when
/// the result is an error.
pub fn shown_result(result: &Value) -> (Value, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let text = content_text(result);
    if is_error {
        return (serde_json::json!({ "error": text }), true);
    }
    match result.get("structuredContent") {
        Some(s) if !s.is_null() => (s.clone(), false),
        _ => (serde_json::json!({ "content": text }), false),
    }
}

/// The text of a `tools/call` result's content blocks, one per line: text as it is, a resource link
/// by its URI and name (the model may need to ask for it), an embedded resource by its text (or URI),
/// other blocks (image, audio) named by type and MIME type.
pub fn content_text(result: &Value) -> String {
    let str_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(String::from);
    let text: Vec<String> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|block| match block.get("type").and_then(Value::as_str) {
            Some("text") => str_of(block, "text").unwrap_or_default(),
            Some("resource_link") => {
                let uri = str_of(block, "uri").unwrap_or_default();
                match str_of(block, "name") {
                    Some(name) => format!("[resource_link {uri} {name}]"),
                    None => format!("[resource_link {uri}]"),
                }
            }
            Some("resource") => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                str_of(resource, "text").unwrap_or_else(|| {
                    format!("[resource {}]", str_of(resource, "uri").unwrap_or_default())
                })
            }
            Some(kind) => format!(
                "[{kind} {}]",
                block.get("mimeType").and_then(Value::as_str).unwrap_or("content")
            ),
            None => String::new(),
        })
        .collect();
    text.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_map_between_the_model_and_the_sandbox_and_uuids_are_numbered() {
        let n = Normalizer::new(Path::new("/tmp/toolpick-sandbox-ab12"));
        assert_eq!(
            n.outbound(&json!({"path": "/sandbox/notes/a.txt", "paths": ["/sandbox", "/sandboxes/x", "rel.txt"], "n": 3})),
            json!({"path": "/tmp/toolpick-sandbox-ab12/notes/a.txt", "paths": ["/tmp/toolpick-sandbox-ab12", "/sandboxes/x", "rel.txt"], "n": 3})
        );
        assert_eq!(n.inbound("Wrote /tmp/toolpick-sandbox-ab12/a.txt"), "Wrote /sandbox/a.txt");
        let text = n.inbound("id DD9AB4A5-1111-4222-8333-123456789abc then 0f0f0f0f-1111-4222-8333-123456789abc then dd9ab4a5-1111-4222-8333-123456789abc");
        assert_eq!(
            text,
            "id 00000000-0000-4000-8000-000000000001 then 00000000-0000-4000-8000-000000000002 then 00000000-0000-4000-8000-000000000001"
        );
    }

    #[test]
    fn clock_readings_of_the_trial_read_as_the_fixture_time_and_other_dates_stay() {
        let today = (2026, 12, 2);
        assert_eq!(civil(20_423), (2025, 12, 1));
        assert_eq!(civil(0), (1970, 1, 1));
        let text = "created: Wed Dec 02 2026 18:52:28 GMT+0000 (Coordinated Universal Time)\nmodified: Sat Jan 01 2000 00:00:00 GMT+0000\nat 2026-12-03T01:02:03.456Z, born 1815-12-10T00:00:00Z, due 2026-12-25 09:00:00";
        assert_eq!(
            clock_readings_to_fixture_time(text, today),
            "created: Sat Jan 01 2000 00:00:00 GMT+0000 (Coordinated Universal Time)\nmodified: Sat Jan 01 2000 00:00:00 GMT+0000\nat 2000-01-01T00:00:00.000Z, born 1815-12-10T00:00:00Z, due 2026-12-25 09:00:00"
        );
        // Across a month and a year boundary.
        assert_eq!(
            clock_readings_to_fixture_time("2026-12-31T23:59:59Z", (2027, 1, 1)),
            "2000-01-01T00:00:00Z"
        );
    }

    #[test]
    fn results_show_structured_content_or_text_and_errors_as_errors() {
        assert_eq!(shown_result(&json!({"content": [{"type": "text", "text": "hi"}, {"type": "image", "mimeType": "image/png", "data": "…"}]})).0, json!({"content": "hi\n[image image/png]"}));
        let linked = json!({"content": [
            {"type": "resource_link", "uri": "file:///r/a.csv", "name": "a.csv"},
            {"type": "resource", "resource": {"uri": "memo://x", "text": "mild"}},
            {"type": "resource", "resource": {"uri": "memo://bin", "blob": "AA=="}},
        ]});
        assert_eq!(
            content_text(&linked),
            "[resource_link file:///r/a.csv a.csv]\nmild\n[resource memo://bin]"
        );
        assert_eq!(
            shown_result(&json!({"content": [], "structuredContent": {"content": "x"}})).0,
            json!({"content": "x"})
        );
        assert_eq!(
            shown_result(&json!({"content": [{"type": "text", "text": "nope"}], "isError": true})),
            (json!({"error": "nope"}), true)
        );
    }
}
