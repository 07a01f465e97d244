//! Decoded views of a text, so a key is found however it was escaped: JSON escapes (`\/`, `\"`,
//! `\\`, `\n`, `\uXXXX` with surrogate pairs), `\xHH`, percent-encoding (`%2F`, `%2f`) and HTML
//! character references (`&#47;`, `&#x2F;`, `&amp;`, …), in any mix.
//!
//! Listing every escaped form of a key cannot work: an endpoint may escape any subset of its
//! characters (`\/` only for slashes, `\u002b` only for `+`), which is exponentially many forms. A
//! view decodes the escapes instead and remembers, for every escape it decoded, which bytes of its
//! source it came from, so a key found in the view is cut out of the source whole (the escape
//! sequences included). Escapes nest — a JSON body quoted in an error string and written into a
//! JSON record is `\\/` — so views are taken of views until nothing changes (at most [`MAX_DEPTH`]).

/// How many decoding passes are made at most: a key quoted in JSON quoted in JSON quoted in JSON.
pub const MAX_DEPTH: usize = 4;

/// One decoded escape: `view_len` bytes at `view` came from `src_len` bytes at `src`.
#[derive(Debug, Clone, Copy)]
struct Unit {
    view: usize,
    view_len: usize,
    src: usize,
    src_len: usize,
}

/// A text with its escapes decoded, and where each decoded escape came from. Bytes between escapes
/// are copied as they are.
#[derive(Debug)]
pub struct View {
    pub bytes: Vec<u8>,
    units: Vec<Unit>,
}

/// Whether `text` holds a byte that starts an escape this module decodes (the fast path: most text
/// has none and needs no view).
pub fn may_have_escapes(text: &[u8]) -> bool {
    memchr::memchr3(b'\\', b'%', b'&', text).is_some()
}

impl View {
    /// The source range that the view range `lo..hi` (not empty) came from: widened to whole escapes.
    pub fn to_source(&self, lo: usize, hi: usize) -> (usize, usize) {
        (self.source_of(lo).0, self.source_of(hi - 1).1)
    }

    /// The source range of the view byte at `p`: its escape's, or the one byte it was copied from.
    fn source_of(&self, p: usize) -> (usize, usize) {
        let i = self.units.partition_point(|u| u.view <= p);
        match i.checked_sub(1).map(|i| self.units[i]) {
            Some(u) if p < u.view + u.view_len => (u.src, u.src + u.src_len),
            Some(u) => {
                let s = p - (u.view + u.view_len) + u.src + u.src_len;
                (s, s + 1)
            }
            None => (p, p + 1),
        }
    }
}

fn hex_value(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// `n` hex digits at `at`, as a number.
fn hex_at(text: &[u8], at: usize, n: usize) -> Option<u32> {
    let digits = text.get(at..at + n)?;
    digits.iter().try_fold(0u32, |acc, &b| Some(acc * 16 + hex_value(b)?))
}

/// `\uXXXX` at `at` (the backslash), as a UTF-16 unit.
fn json_unit_at(text: &[u8], at: usize) -> Option<u32> {
    if text.get(at + 1) == Some(&b'u') { hex_at(text, at + 2, 4) } else { None }
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// The escape starting at `at`, if any: the bytes it stands for (written to `out`) and its length.
fn escape_at(text: &[u8], at: usize, out: &mut Vec<u8>) -> Option<usize> {
    match text[at] {
        b'\\' => {
            let next = *text.get(at + 1)?;
            let simple = match next {
                b'/' | b'\\' | b'"' | b'\'' => Some(next),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                b'b' => Some(0x08),
                b'f' => Some(0x0c),
                _ => None,
            };
            if let Some(b) = simple {
                out.push(b);
                return Some(2);
            }
            match next {
                b'x' => {
                    out.push(hex_at(text, at + 2, 2)? as u8);
                    Some(4)
                }
                b'u' => {
                    let first = json_unit_at(text, at)?;
                    if (0xD800..0xDC00).contains(&first)
                        && text.get(at + 6) == Some(&b'\\')
                        && let Some(second) =
                            json_unit_at(text, at + 6).filter(|s| (0xDC00..0xE000).contains(s))
                    {
                        let c =
                            char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))?;
                        push_char(out, c);
                        return Some(12);
                    }
                    push_char(out, char::from_u32(first)?);
                    Some(6)
                }
                _ => None,
            }
        }
        b'%' => {
            out.push(hex_at(text, at + 1, 2)? as u8);
            Some(3)
        }
        b'&' => {
            let rest = &text[at + 1..text.len().min(at + 12)];
            let end = rest.iter().position(|&b| b == b';')?;
            let name = &rest[..end];
            let c = match name {
                b"amp" => '&',
                b"lt" => '<',
                b"gt" => '>',
                b"quot" => '"',
                b"apos" => '\'',
                _ => {
                    let digits = name.strip_prefix(b"#")?;
                    let n = match digits.first() {
                        Some(b'x' | b'X') => std::str::from_utf8(&digits[1..])
                            .ok()
                            .and_then(|d| u32::from_str_radix(d, 16).ok())?,
                        _ => std::str::from_utf8(digits).ok().and_then(|d| d.parse().ok())?,
                    };
                    char::from_u32(n)?
                }
            };
            push_char(out, c);
            Some(end + 2)
        }
        _ => None,
    }
}

/// `text` with every escape decoded once; `None` when it has none.
pub fn decode(text: &[u8]) -> Option<View> {
    let mut bytes = Vec::new();
    let mut units = Vec::new();
    let mut copied = 0; // source bytes up to here are in `bytes` (copied or decoded)
    let mut at = 0;
    while let Some(found) = memchr::memchr3(b'\\', b'%', b'&', &text[at..]) {
        let pos = at + found;
        if units.is_empty() && bytes.capacity() == 0 {
            bytes.reserve(text.len());
        }
        bytes.extend_from_slice(&text[copied..pos]);
        let view = bytes.len();
        match escape_at(text, pos, &mut bytes) {
            Some(len) => {
                units.push(Unit { view, view_len: bytes.len() - view, src: pos, src_len: len });
                copied = pos + len;
                at = copied;
            }
            None => {
                copied = pos;
                at = pos + 1;
            }
        }
    }
    if units.is_empty() {
        return None;
    }
    bytes.extend_from_slice(&text[copied..]);
    Some(View { bytes, units })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(s: &str) -> String {
        String::from_utf8(
            decode(s.as_bytes()).map(|v| v.bytes).unwrap_or_else(|| s.as_bytes().to_vec()),
        )
        .unwrap()
    }

    #[test]
    fn every_escape_kind_decodes() {
        assert_eq!(view(r#"a\/b \"c\" \\ \u0041\u00e9 \ud83d\ude00 \x41"#), "a/b \"c\" \\ Aé 😀 A");
        assert_eq!(view("k=sk%2Dab%2fc%zz 100%"), "k=sk-ab/c%zz 100%");
        assert_eq!(
            view("&#47;&#x2F;&#X2f;&amp;&lt;&gt;&quot;&apos; & &bogus; &#xZZ;"),
            "///&<>\"' & &bogus; &#xZZ;"
        );
        assert!(decode(b"nothing to decode").is_none());
        assert!(decode(br"\q \u12 %g1").is_none(), "incomplete escapes are text");
    }

    #[test]
    fn view_ranges_map_back_to_whole_escapes() {
        let src = r"xy\/ab\u0063d%41z";
        let v = decode(src.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(v.bytes.clone()).unwrap(), "xy/abcdAz");
        // `/abcdA` in the view is `\/ab\u0063d%41` in the source.
        assert_eq!(v.to_source(2, 8), (2, 16));
        assert_eq!(&src[2..16], r"\/ab\u0063d%41");
        assert_eq!(v.to_source(0, 1), (0, 1));
        assert_eq!(v.to_source(8, 9), (16, 17));
    }
}
