//! A benchmark file's bytes as text: the encoding recognised, undecodable bytes replaced and located.
//!
//! - UTF-8, with or without a byte-order mark (the mark is dropped; it is not part of the JSON).
//! - UTF-16 and UTF-32, either byte order, with or without a byte-order mark: recognised by the mark
//!   or, without one, by where the zero bytes of the first characters fall (JSON text starts with an
//!   ASCII character, so `[` is `5B 00` in UTF-16 LE and `00 5B` in UTF-16 BE; RFC 4627 §3), and
//!   decoded. Saved by an editor or a Windows tool, such a file holds the same records.
//! - Bytes that are not valid in the encoding are replaced by U+FFFD; their places are kept so the
//!   reader can name the lines and records they hit.
//! - Text that is not text at all (zero characters, which JSON never holds raw, or more than a quarter
//!   of the bytes undecodable) is marked [`Decoded::binary`]: nothing in it can be read or counted.
//!
//! [`strict`] is the same decoding for native files, where nothing is repaired: the first undecodable
//! byte is an error with its line and column.

/// The encoding a file was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8 { bom: bool },
    Utf16 { big_endian: bool, bom: bool },
    Utf32 { big_endian: bool, bom: bool },
}

impl Encoding {
    /// e.g. "UTF-16 LE with a byte-order mark".
    pub fn describe(self) -> String {
        let (name, big, bom) = match self {
            Encoding::Utf8 { bom } => {
                return if bom { "UTF-8 with a byte-order mark".into() } else { "UTF-8".into() };
            }
            Encoding::Utf16 { big_endian, bom } => ("UTF-16", big_endian, bom),
            Encoding::Utf32 { big_endian, bom } => ("UTF-32", big_endian, bom),
        };
        format!(
            "{name} {}{}",
            if big { "BE" } else { "LE" },
            if bom { " with a byte-order mark" } else { " without a byte-order mark" }
        )
    }
}

/// A file's text after decoding.
#[derive(Debug)]
pub struct Decoded {
    pub text: String,
    pub encoding: Encoding,
    /// Byte offsets (in `text`) of the U+FFFD put where undecodable bytes were.
    pub replaced: Vec<usize>,
    /// How many bytes of the file could not be decoded.
    pub bad_bytes: usize,
    /// Not text: nothing in it can be read or counted.
    pub binary: bool,
}

impl Decoded {
    /// The 1-based lines holding replaced bytes, each once, in order.
    pub fn bad_lines(&self) -> Vec<usize> {
        let mut lines: Vec<usize> =
            self.replaced.iter().map(|&o| self.text[..o].matches('\n').count() + 1).collect();
        lines.dedup();
        lines
    }
}

/// The encoding the first bytes announce (a byte-order mark) or show (zero bytes around the first
/// ASCII characters), and the length of the mark.
fn sniff(b: &[u8]) -> (Encoding, usize) {
    match b {
        [0xEF, 0xBB, 0xBF, ..] => (Encoding::Utf8 { bom: true }, 3),
        [0x00, 0x00, 0xFE, 0xFF, ..] => (Encoding::Utf32 { big_endian: true, bom: true }, 4),
        [0xFF, 0xFE, 0x00, 0x00, ..] => (Encoding::Utf32 { big_endian: false, bom: true }, 4),
        [0xFE, 0xFF, ..] => (Encoding::Utf16 { big_endian: true, bom: true }, 2),
        [0xFF, 0xFE, ..] => (Encoding::Utf16 { big_endian: false, bom: true }, 2),
        [0, 0, 0, x, ..] if *x != 0 => (Encoding::Utf32 { big_endian: true, bom: false }, 0),
        [x, 0, 0, 0, ..] if *x != 0 => (Encoding::Utf32 { big_endian: false, bom: false }, 0),
        [0, x, 0, y, ..] if *x != 0 && *y != 0 => {
            (Encoding::Utf16 { big_endian: true, bom: false }, 0)
        }
        [x, 0, y, 0, ..] if *x != 0 && *y != 0 => {
            (Encoding::Utf16 { big_endian: false, bom: false }, 0)
        }
        [0, x] if *x != 0 => (Encoding::Utf16 { big_endian: true, bom: false }, 0),
        [x, 0] if *x != 0 => (Encoding::Utf16 { big_endian: false, bom: false }, 0),
        _ => (Encoding::Utf8 { bom: false }, 0),
    }
}

/// Decode a sequence of code units, replacing what cannot be decoded.
fn push_units(
    text: &mut String,
    replaced: &mut Vec<usize>,
    bad: &mut usize,
    unit_bytes: usize,
    decoded: impl Iterator<Item = Option<char>>,
) {
    for c in decoded {
        match c {
            Some(c) => text.push(c),
            None => {
                replaced.push(text.len());
                *bad += unit_bytes;
                text.push(char::REPLACEMENT_CHARACTER);
            }
        }
    }
}

/// Decode a file's bytes (see the module documentation).
pub fn decode(bytes: Vec<u8>) -> Decoded {
    let (encoding, mark) = sniff(&bytes);
    let body = &bytes[mark..];
    let mut text = String::new();
    let mut replaced = Vec::new();
    let mut bad = 0;
    match encoding {
        Encoding::Utf8 { .. } => match std::str::from_utf8(body) {
            Ok(s) => text.push_str(s),
            Err(_) => {
                text.reserve(body.len());
                for chunk in body.utf8_chunks() {
                    text.push_str(chunk.valid());
                    if !chunk.invalid().is_empty() {
                        replaced.push(text.len());
                        bad += chunk.invalid().len();
                        text.push(char::REPLACEMENT_CHARACTER);
                    }
                }
            }
        },
        Encoding::Utf16 { big_endian, .. } => {
            let units = body.chunks_exact(2).map(|c| {
                if big_endian {
                    u16::from_be_bytes([c[0], c[1]])
                } else {
                    u16::from_le_bytes([c[0], c[1]])
                }
            });
            push_units(
                &mut text,
                &mut replaced,
                &mut bad,
                2,
                char::decode_utf16(units).map(Result::ok),
            );
            if body.len() % 2 == 1 {
                push_units(&mut text, &mut replaced, &mut bad, 1, std::iter::once(None));
            }
        }
        Encoding::Utf32 { big_endian, .. } => {
            let chars = body.chunks_exact(4).map(|c| {
                let n = if big_endian {
                    u32::from_be_bytes([c[0], c[1], c[2], c[3]])
                } else {
                    u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                };
                char::from_u32(n)
            });
            push_units(&mut text, &mut replaced, &mut bad, 4, chars);
            let rest = body.len() % 4;
            if rest > 0 {
                push_units(&mut text, &mut replaced, &mut bad, rest, std::iter::once(None));
            }
        }
    }
    let binary = text.contains('\0') || bad * 4 > body.len();
    Decoded { text, encoding, replaced, bad_bytes: bad, binary }
}

/// Decoding a native file (a dataset, a catalog) is the one shared reader's
/// ([`crate::error::decode_text`]): UTF-8, a byte-order mark allowed and dropped; another encoding,
/// or a byte that is not UTF-8, is an error naming its line and column.
pub use crate::error::{TextError as StrictError, decode_text as strict};

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(s: &str, big_endian: bool, bom: bool) -> Vec<u8> {
        let mut out = Vec::new();
        if bom {
            out.extend(if big_endian { [0xFE, 0xFF] } else { [0xFF, 0xFE] });
        }
        for u in s.encode_utf16() {
            out.extend(if big_endian { u.to_be_bytes() } else { u.to_le_bytes() });
        }
        out
    }

    #[test]
    fn every_unicode_encoding_is_recognised_and_decoded() {
        let json = "[{\"q\": \"café 😀\"}]\n";
        for big_endian in [false, true] {
            for bom in [false, true] {
                let d = decode(utf16(json, big_endian, bom));
                assert_eq!(
                    (d.text.as_str(), d.encoding, d.bad_bytes, d.binary),
                    (json, Encoding::Utf16 { big_endian, bom }, 0, false)
                );
                let mut b32: Vec<u8> = if bom {
                    if big_endian { vec![0, 0, 0xFE, 0xFF] } else { vec![0xFF, 0xFE, 0, 0] }
                } else {
                    vec![]
                };
                for c in json.chars() {
                    b32.extend(if big_endian {
                        (c as u32).to_be_bytes()
                    } else {
                        (c as u32).to_le_bytes()
                    });
                }
                let d = decode(b32);
                assert_eq!(
                    (d.text.as_str(), d.encoding),
                    (json, Encoding::Utf32 { big_endian, bom })
                );
            }
        }
        let mut bom8 = vec![0xEF, 0xBB, 0xBF];
        bom8.extend_from_slice(json.as_bytes());
        assert_eq!(decode(bom8).text, json);
        assert_eq!(decode(json.as_bytes().to_vec()).encoding, Encoding::Utf8 { bom: false });
    }

    #[test]
    fn bad_bytes_are_located_and_binary_is_told_from_text() {
        let d = decode(b"{\"a\": 1}\n{\"b\": \"x\xff\"}\n\n{\"c\": \"\xfe\"}\n".to_vec());
        assert_eq!((d.bad_bytes, d.bad_lines(), d.binary), (2, vec![2, 4], false));
        // An unpaired surrogate in UTF-16, and an odd last byte.
        let mut b = utf16("[1, 2]", false, true);
        b.extend([0x00, 0xD8, 0x31, 0x00, 0x5D]);
        let d = decode(b);
        assert_eq!(d.bad_bytes, 3);
        assert!(decode(vec![0x1F, 0x8B, 0x08, 0x00, 0xFF, 0xFE, 0x12, 0x00]).binary, "gzip magic");
        assert!(decode(b"[1,\x002]".to_vec()).binary, "a raw zero byte");
    }

    #[test]
    fn strict_decoding_names_line_and_column() {
        assert_eq!(strict(b"\xEF\xBB\xBF{\"a\": 1}\n".to_vec()).unwrap(), "{\"a\": 1}\n");
        let e = strict(b"{\"a\": 1}\n{\"b\": \"caf\xe9\"}\n".to_vec()).unwrap_err();
        assert_eq!((e.line, e.column), (2, 11));
        assert!(e.message.contains("0xE9") && e.message.contains("UTF-8"), "{}", e.message);
        let e = strict(utf16("{}", false, true)).unwrap_err();
        assert!(e.message.contains("UTF-16 LE"), "{}", e.message);
    }
}
