//! Lint output: human text (grouped by tool, coloured on a terminal), JSON, and SARIF 2.1.0 (so GitHub
//! code scanning shows findings on the pull request).

use super::{Finding, Severity, all_rules};
use serde_json::{Value, json};
use std::fmt::Write;
use std::path::Path;

/// Human-readable findings grouped by tool, with a summary line.
pub fn text(findings: &[Finding], color: bool) -> String {
    let mut s = String::new();
    let paint = |sev: Severity| -> (&str, &str) {
        if !color {
            return ("", "");
        }
        match sev {
            Severity::Block => ("\x1b[31m", "\x1b[0m"),
            Severity::Warn => ("\x1b[33m", "\x1b[0m"),
            Severity::Info => ("\x1b[36m", "\x1b[0m"),
        }
    };
    let mut current = "";
    for f in findings {
        if f.tool != current {
            current = &f.tool;
            let _ = writeln!(s, "\n{} ({}:{})", f.tool, f.file.display(), f.line);
        }
        let (on, off) = paint(f.severity);
        let _ = writeln!(
            s,
            "  {on}{:<5}{off} {} {}: {} [{}]",
            f.severity.as_str(),
            f.rule,
            f.name,
            f.message,
            f.field
        );
        if let Some(sug) = &f.suggestion {
            let _ = writeln!(s, "        suggested: {sug}");
        }
    }
    let count = |sev| findings.iter().filter(|f| f.severity == sev).count();
    let _ = writeln!(
        s,
        "\n{} findings: {} block, {} warn, {} info",
        findings.len(),
        count(Severity::Block),
        count(Severity::Warn),
        count(Severity::Info)
    );
    s
}

pub fn json(findings: &[Finding]) -> String {
    let v: Vec<Value> = findings
        .iter()
        .map(|f| {
            let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
            v["file"] = json!(f.file.display().to_string());
            v["line"] = json!(f.line);
            v
        })
        .collect();
    serde_json::to_string_pretty(&json!({"findings": v})).unwrap_or_default() + "\n"
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Block => "error",
        Severity::Warn => "warning",
        Severity::Info => "note",
    }
}

/// SARIF 2.1.0. File URIs are relative to `root` when possible (what code scanning expects).
pub fn sarif(findings: &[Finding], root: &Path) -> String {
    let rules = all_rules();
    let rule_json: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "defaultConfiguration": {"level": level(r.severity)},
                "properties": {"tags": ["tool-design"], "severity": r.severity.as_str()}
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let uri = f.file.strip_prefix(root).unwrap_or(&f.file).to_string_lossy().replace('\\', "/");
            let mut message = format!("{}: {}", f.tool, f.message);
            if let Some(s) = &f.suggestion {
                message.push_str(&format!(" Suggested: {s}"));
            }
            json!({
                "ruleId": f.rule,
                "ruleIndex": rules.iter().position(|r| r.id == f.rule).unwrap_or(0),
                "level": level(f.severity),
                "message": {"text": message},
                "locations": [{
                    "physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": f.line.max(1)}},
                    "logicalLocations": [{"fullyQualifiedName": format!("{}#{}", f.tool, f.field), "kind": "member"}]
                }]
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "toolpick",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/toolpick/toolpick",
                "rules": rule_json
            }},
            "results": results
        }]
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}
