//! `junit.xml`: one test case per task × cell, so CI systems show failures natively. A failed trial's
//! failure message is the matcher's error type and details; infrastructure errors are JUnit `<error>`s
//! (not failures), and every text is XML-escaped.

use std::fmt::Write;

/// Escape text for XML attributes and content (and drop characters XML 1.0 cannot carry).
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s);
    out
}

/// [`xml_escape`], appended to `out`.
fn escape_into(out: &mut String, s: &str) {
    // Most texts need nothing: one pass over the bytes finds out (0xEF leads U+FFFE and U+FFFF).
    let plain = |b: u8| {
        !matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'' | 0xEF)
            && (b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r'))
    };
    if s.bytes().all(plain) {
        out.push_str(s);
        return;
    }
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
}

/// `junit.xml`, streamed: test cases of the current suite (one cell; the trial file is in matrix order,
/// so a cell's trials are contiguous) are buffered until the suite ends, and suites are written to the
/// file as they end. The `<testsuites>` header holds the totals, known only at the end: its line is
/// written first with room for the largest counts, and `finish` writes it again in place, the totals
/// padded with spaces inside the tag (whitespace XML allows there), so the file is never copied.
pub struct JunitXml {
    body: std::io::BufWriter<std::fs::File>,
    suite: Option<String>,
    cases: String,
    counts: (usize, usize, usize),
    totals: (usize, usize, usize),
}

impl JunitXml {
    pub fn create(path: &std::path::Path) -> anyhow::Result<Self> {
        use std::io::Write as _;
        let file = std::fs::File::create(path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        let mut body = std::io::BufWriter::with_capacity(1 << 20, file);
        body.write_all(&header((0, 0, 0)))?;
        Ok(JunitXml {
            body,
            suite: None,
            cases: String::new(),
            counts: (0, 0, 0),
            totals: (0, 0, 0),
        })
    }

    fn end_suite(&mut self) -> anyhow::Result<()> {
        use std::io::Write as _;
        if let Some(name) = self.suite.take() {
            let (tests, failures, errors) = std::mem::take(&mut self.counts);
            writeln!(
                self.body,
                "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">",
                xml_escape(&name)
            )?;
            self.body.write_all(self.cases.as_bytes())?;
            writeln!(self.body, "  </testsuite>")?;
            self.cases.clear();
        }
        Ok(())
    }
}

/// The file's first lines with these totals, always as long as with the largest counts: the
/// `<testsuites>` tag is padded with spaces to that length, so `finish` can write it over the first.
fn header(totals: (usize, usize, usize)) -> Vec<u8> {
    let tag = |(tests, failures, errors): (usize, usize, usize)| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"toolpick\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\""
        )
        .into_bytes()
    };
    let mut line = tag(totals);
    line.resize(tag((usize::MAX, usize::MAX, usize::MAX)).len(), b' ');
    line.extend_from_slice(b">\n");
    line
}

impl super::TrialSink for JunitXml {
    fn encoder(&self) -> super::Encoder {
        encode_case
    }

    fn write(&mut self, t: &crate::record::Trial, encoded: &[u8]) -> anyhow::Result<()> {
        let cell = [t.dataset.as_str(), &t.variant, t.layout.as_str(), &t.backend];
        if !self.suite.as_deref().is_some_and(|s| joined_eq(s, cell, '/')) {
            self.end_suite()?;
            self.suite = Some(cell.join("/"));
        }
        self.cases.push_str(std::str::from_utf8(encoded)?);
        self.counts.0 += 1;
        self.totals.0 += 1;
        if t.is_error() {
            self.counts.2 += 1;
            self.totals.2 += 1;
        } else if !t.score.pass {
            self.counts.1 += 1;
            self.totals.1 += 1;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<()> {
        use std::io::{Seek as _, Write as _};
        self.end_suite()?;
        writeln!(self.body, "</testsuites>")?;
        let mut file = self.body.into_inner().map_err(|e| e.into_error())?;
        file.seek(std::io::SeekFrom::Start(0))?;
        file.write_all(&header(self.totals))?;
        Ok(())
    }
}

/// `s == parts.join(sep)`, without building the joined string (asked once per trial).
fn joined_eq(s: &str, parts: [&str; 4], sep: char) -> bool {
    let mut rest = s;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            match rest.strip_prefix(sep) {
                Some(r) => rest = r,
                None => return false,
            }
        }
        match rest.strip_prefix(p) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// One `<testcase>` element (built in one buffer: it runs for every trial of a report).
fn encode_case(t: &crate::record::Trial) -> anyhow::Result<Vec<u8>> {
    let mut s = String::with_capacity(160);
    s.push_str("    <testcase classname=\"");
    for (i, part) in
        [t.dataset.as_str(), &t.variant, t.layout.as_str(), &t.backend].into_iter().enumerate()
    {
        if i > 0 {
            s.push('/');
        }
        escape_into(&mut s, part);
    }
    s.push_str("\" name=\"");
    escape_into(&mut s, &t.task_id);
    write!(s, "#{}\"", t.trial)?;
    if t.is_error() {
        s.push_str(">\n      <error type=\"infrastructure\" message=\"");
        escape_into(&mut s, t.error.as_deref().unwrap_or_default());
        s.push_str("\"/>\n    </testcase>\n");
    } else if !t.score.pass {
        let kind = t.score.error_type.map(|e| e.as_str()).unwrap_or("failed");
        write!(s, ">\n      <failure type=\"{kind}\" message=\"")?;
        escape_into(&mut s, kind);
        s.push_str(": ");
        escape_into(&mut s, &t.score.error_detail);
        s.push_str("\">");
        escape_into(&mut s, &t.query);
        s.push_str("</failure>\n    </testcase>\n");
    } else {
        s.push_str("/>\n");
    }
    Ok(s.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_has_one_length_for_every_total_and_states_them() {
        // `finish` writes the header over the one `create` wrote: any totals must fit exactly.
        let first = header((0, 0, 0)).len();
        let mut totals = vec![(usize::MAX, usize::MAX, usize::MAX), (1, 0, usize::MAX)];
        let mut n = 1usize;
        while let Some(next) = n.checked_mul(7) {
            totals.push((n, next % 1000, n / 3));
            n = next;
        }
        for (tests, failures, errors) in totals {
            let text = String::from_utf8(header((tests, failures, errors))).unwrap();
            assert_eq!(text.len(), first, "{text}");
            let tag = text.lines().nth(1).unwrap();
            let want = format!(
                "<testsuites name=\"toolpick\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\""
            );
            assert_eq!(tag.strip_suffix('>').unwrap().trim_end(), want);
        }
    }

    #[test]
    fn a_cell_name_is_compared_piece_by_piece_as_its_joined_form() {
        let cases = [
            ("a/b/c/d", ["a", "b", "c", "d"]),
            ("a/b/c/d", ["a", "b/c", "", "d"]),
            ("a/b/c/d", ["a", "b", "c", "d/"]),
            ("a/b/c/de", ["a", "b", "c", "d"]),
            ("ab/c/d", ["a", "b", "c", "d"]),
            ("x/file:v/1/flat/y", ["x", "file:v/1", "flat", "y"]),
            ("", ["", "", "", ""]),
            ("///", ["", "", "", ""]),
        ];
        for (s, parts) in cases {
            assert_eq!(joined_eq(s, parts, '/'), s == parts.join("/"), "{s} vs {parts:?}");
        }
    }

    #[test]
    fn escapes_markup_quotes_and_control_characters() {
        assert_eq!(xml_escape("a<b>&\"c'\u{1}d\n"), "a&lt;b&gt;&amp;&quot;c&apos;d\n");
        // Texts with nothing to escape come back as they are, and the characters XML cannot carry
        // are dropped wherever they are.
        assert_eq!(
            xml_escape("plain text\twith é, ✓ and \u{FFFD}"),
            "plain text\twith é, ✓ and \u{FFFD}"
        );
        assert_eq!(xml_escape("x\u{FFFE}y\u{FFFF}z\u{1F}"), "xyz");
        assert_eq!(xml_escape("只\u{FFFF}"), "只");
    }
}
