//! Helpers shared by the integration tests: run the real binary, build small catalogs on disk.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn toolpick(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolpick")).args(args).current_dir(cwd).output().expect("toolpick runs")
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/external/<name>`: from `TOOLPICK_SHARED_DIR` if set, else the nearest ancestor of the
/// checkout that has `shared/external` (CI and the development machine keep it beside the checkout).
pub fn shared(name: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("TOOLPICK_SHARED_DIR") {
        return PathBuf::from(dir).join("external").join(name);
    }
    let repo = repo();
    let found = repo.ancestors().skip(1).map(|a| a.join("shared/external")).find(|p| p.is_dir());
    found.unwrap_or_else(|| panic!("../shared/external not found above {}; set TOOLPICK_SHARED_DIR", repo.display())).join(name)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A tiny two-server catalog written into `dir`.
pub fn write_small_catalog(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("weather.json"),
        r#"{
  "name": "weather",
  "description": "Weather conditions and forecasts for cities.",
  "categories": [
    {"name": "weather_now", "description": "Current conditions.", "tools": [
      {"name": "get_current_weather", "description": "Current temperature and sky for a city. Use when the user asks about weather right now. Do not use for future days (use get_forecast).",
       "inputSchema": {"type": "object", "properties": {
          "city": {"type": "string", "description": "City name."},
          "units": {"type": "string", "enum": ["metric", "imperial"], "description": "Unit system."}},
          "required": ["city"], "additionalProperties": false},
       "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
       "mockResponse": {"temp_c": 21, "sky": "clear"}}
    ]},
    {"name": "weather_later", "description": "Forecasts.", "tools": [
      {"name": "get_forecast", "description": "Forecast for the next days for a city. Use when the user asks about coming days.",
       "inputSchema": {"type": "object", "properties": {
          "city": {"type": "string", "description": "City name."},
          "days": {"type": "integer", "minimum": 1, "maximum": 7, "description": "Days ahead."}},
          "required": ["city", "days"], "additionalProperties": false},
       "annotations": {"readOnlyHint": true, "destructiveHint": false},
       "mockResponse": {"days": []}}
    ]}
  ]
}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("mail.json"),
        r#"{
  "name": "mail",
  "description": "E-mail.",
  "categories": [
    {"name": "mail_messages", "description": "Sending mail.", "tools": [
      {"name": "send_email", "description": "Send an e-mail. Use when the user wants a message delivered by e-mail.",
       "inputSchema": {"type": "object", "properties": {
          "to": {"type": "string", "format": "email", "description": "Recipient."},
          "subject": {"type": "string", "description": "Subject."}},
          "required": ["to", "subject"], "additionalProperties": false},
       "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": true},
       "mockResponse": {"id": "m1"}}
    ]}
  ]
}"#,
    )
    .unwrap();
}

/// A dataset for the small catalog.
pub const SMALL_DATASET: &str = r#"{"id": "w1", "query": "How warm is it in Pune right now?", "kind": "single", "expected": [{"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Pune"], "units": ["", "metric"]}}], "category": "weather", "tags": []}
{"id": "w2", "query": "Forecast for Oslo and Lima for 3 days", "kind": "parallel", "expected": [{"tool": "weather/weather_later/get_forecast", "arguments": {"city": ["Oslo"], "days": [3]}}, {"tool": "weather/weather_later/get_forecast", "arguments": {"city": ["Lima"], "days": [3]}}], "category": "weather", "tags": []}
{"id": "m1", "query": "Mail ana@example.com with subject \"Hi\" and tell me the weather in Rome", "kind": "multi", "expected": [{"tool": "mail/mail_messages/send_email", "arguments": {"to": ["ana@example.com"], "subject": ["Hi"]}}, {"tool": "weather/weather_now/get_current_weather", "arguments": {"city": ["Rome"]}}], "category": "mail", "tags": []}
{"id": "a1", "query": "Book me a taxi to the airport", "kind": "abstain", "expected": [], "category": "none", "tags": []}
"#;
