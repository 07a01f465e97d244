//! `junit.xml`: one test case per task × cell, so CI systems show failures natively. A failed trial's
//! failure message is the matcher's error type and details; infrastructure errors are JUnit `<error>`s
//! (not failures), and every text is XML-escaped.

use super::{Exporter, ReportData};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Escape text for XML attributes and content (and drop characters XML 1.0 cannot carry).
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

pub struct JunitXml;

impl Exporter for JunitXml {
    fn file_name(&self) -> &'static str {
        "junit.xml"
    }

    fn render(&self, data: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut suites: BTreeMap<String, Vec<&crate::run::Trial>> = BTreeMap::new();
        for t in &data.trials {
            suites.entry(format!("{}/{}/{}/{}", t.dataset, t.variant, t.layout.as_str(), t.backend)).or_default().push(t);
        }
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let failures = data.trials.iter().filter(|t| !t.score.pass && !t.is_error()).count();
        let errors = data.trials.iter().filter(|t| t.is_error()).count();
        writeln!(s, "<testsuites name=\"toolpick\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">", data.trials.len())?;
        for (name, trials) in &suites {
            let f = trials.iter().filter(|t| !t.score.pass && !t.is_error()).count();
            let e = trials.iter().filter(|t| t.is_error()).count();
            writeln!(s, "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\" errors=\"{e}\">", xml_escape(name), trials.len())?;
            for t in trials {
                let case = format!("{}#{}", t.task_id, t.trial);
                write!(s, "    <testcase classname=\"{}\" name=\"{}\"", xml_escape(name), xml_escape(&case))?;
                if t.is_error() {
                    writeln!(s, ">\n      <error type=\"infrastructure\" message=\"{}\"/>\n    </testcase>", xml_escape(t.error.as_deref().unwrap_or_default()))?;
                } else if !t.score.pass {
                    let kind = t.score.error_type.map(|e| e.as_str()).unwrap_or("failed");
                    writeln!(
                        s,
                        ">\n      <failure type=\"{kind}\" message=\"{}\">{}</failure>\n    </testcase>",
                        xml_escape(&format!("{kind}: {}", t.score.error_detail)),
                        xml_escape(&t.query)
                    )?;
                } else {
                    writeln!(s, "/>")?;
                }
            }
            writeln!(s, "  </testsuite>")?;
        }
        writeln!(s, "</testsuites>")?;
        Ok(s.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_control_characters() {
        assert_eq!(xml_escape("a<b>&\"c'\u{1}d\n"), "a&lt;b&gt;&amp;&quot;c&apos;d\n");
    }
}
