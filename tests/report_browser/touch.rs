//! Taps on a phone: report.html opened in Chromium emulating a 390×844 touch screen (the DevTools
//! protocol's device metrics and touch emulation, driven by `tap.mjs` under Node), then a real touch
//! start and end on a row of the trial explorer and on a drill-down link elsewhere on the page. Each
//! tap must open the drill-down of the very trial tapped, put its deep link in the address, and leave
//! the page 390 px wide. (An outside check found a tapped drill-down link that did not open; clicks
//! dispatched by a script do not go through the touch path, so this test taps.)

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `%XX` escapes decoded (the ids are ASCII; a `#` in them travels as `%23`).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).expect("a %XX escape"));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Tap what `selector` names in `report` on the emulated phone; what the page showed before and after.
fn tap(report: &Path, selector: &str) -> Value {
    let profile = tempfile::tempdir().unwrap();
    let script = repo().join("tests/report_browser/tap.mjs");
    let o = Command::new("node")
        .arg("--experimental-websocket")
        .arg(&script)
        .arg(super::chromium())
        .arg(format!("file://{}", report.display()))
        .arg(selector)
        .arg(profile.path())
        .output()
        .unwrap_or_else(|e| {
            panic!("node does not start ({e}): this test needs Node.js 20.10 or later")
        });
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().rfind(|l| l.starts_with('{')).unwrap_or_else(|| {
        panic!(
            "tap.mjs printed no result ({}):\n{text}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let v: Value = serde_json::from_str(line).unwrap();
    assert!(v.get("error").is_none(), "tap {selector}: {}", v["error"]);
    v
}

#[test]
fn a_tap_on_a_phone_opens_the_tapped_trial() {
    if !super::tiers::ready(super::Tier::Chromium) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let o = toolpick(&argv_with("run --out {} --run-id r -q", &[out]), &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let report = tmp.path().join("r/report.html");

    // A row of the explorer (its first cell).
    let v = tap(&report, "#trials tbody tr td");
    let id = v["target"]["row_id"].as_str().expect("the tapped cell is in a row of a trial");
    assert_eq!(v["before"]["open"], false, "the drill-down is closed before the tap: {v}");
    assert_eq!(v["after"]["open"], true, "a tap on the row opened no drill-down: {v}");
    assert_eq!(v["after"]["heading"].as_str(), Some(id), "{v}");
    let hash = v["after"]["hash"].as_str().unwrap();
    assert_eq!(percent_decoded(hash.strip_prefix("#trial=").unwrap_or(hash)), id, "{v}");

    // A drill-down link outside the explorer (a count in a table links to its first trial).
    let v = tap(&report, "a[href^=\"#trial=\"]");
    let href = v["target"]["href"].as_str().unwrap();
    let id = percent_decoded(href.strip_prefix("#trial=").unwrap());
    assert!(v["target"]["width"].as_f64().unwrap() >= 24.0, "a tap target under 24 px: {v}");
    assert_eq!(v["after"]["open"], true, "a tap on {href} opened no drill-down: {v}");
    assert_eq!(v["after"]["heading"].as_str(), Some(id.as_str()), "{v}");

    let after = &v["after"];
    assert!(
        after["scroll_width"].as_f64().unwrap() <= after["inner_width"].as_f64().unwrap(),
        "the page scrolls sideways on a 390 px phone with the drill-down open: {after}"
    );
}
