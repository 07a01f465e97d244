//! `--echo-key`: the mock plays a careless endpoint that writes back the key a request carried, in
//! every encoding an endpoint or a URL can produce, so tests can check that none reaches an output.
//!
//! The key comes back as is; inside the JSON body escaped as `\/` and as `\uXXXX` (escapes of the
//! body's own JSON, which a parser undoes); as text holding those escapes (an endpoint that escaped
//! twice); hex (lower and upper case); percent-encoded (every byte, and only reserved bytes);
//! base64 (standard, URL-safe, and in a `Basic` credential); and as HTML character references.
//!
//! Escapes of the body itself cannot be written through a JSON serialiser (it never writes `\/`), so
//! the text carries markers that [`finish_body`] replaces in the serialised body.

/// Replaced in a serialised body by the key with every `/` written `\/`.
const SLASHED: &str = "\u{1}slashed\u{1}";
/// Replaced in a serialised body by the key with every character written `\uXXXX`.
const UNICODE: &str = "\u{1}unicode\u{1}";

/// Every character as a JSON `\uXXXX` escape (UTF-16 units, so surrogate pairs beyond the BMP).
fn unicode_escaped(key: &str) -> String {
    key.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

/// The key as the body of a JSON string, with `/` written `\/`.
fn slash_escaped(key: &str) -> String {
    let quoted = serde_json::to_string(key).expect("a string serialises");
    quoted[1..quoted.len() - 1].replace('/', "\\/")
}

/// The text an echoing endpoint writes about `key`: every encoding, named.
pub fn text(key: &str) -> String {
    let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    let percent: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    let url: String = key
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02x}")
            }
        })
        .collect();
    let html: String =
        key.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_string()
                } else {
                    format!("&#x{:X};", c as u32)
                }
            })
            .collect();
    let b64 = crate::redact::base64(key.as_bytes());
    [
        format!("as is {key}"),
        format!("json-escaped {SLASHED} and {UNICODE}"),
        format!("escaped text {} and {}", slash_escaped(key), unicode_escaped(key)),
        format!("hex {hex} HEX {}", hex.to_uppercase()),
        format!("percent {percent} url ?key={url}"),
        format!("base64 {b64} base64url {}", b64.replace('+', "-").replace('/', "_")),
        format!("Basic {}", crate::redact::base64(format!("user:{key}").as_bytes())),
        format!("html {html}"),
    ]
    .join("; ")
}

/// A serialised body with the markers of [`text`] replaced by `key`'s escaped forms.
pub fn finish_body(body: &[u8], key: &str) -> Vec<u8> {
    let serialised = |marker: &str| {
        serde_json::to_string(marker).expect("a string serialises").trim_matches('"').to_string()
    };
    let text = String::from_utf8_lossy(body);
    text.replace(&serialised(SLASHED), &slash_escaped(key))
        .replace(&serialised(UNICODE), &unicode_escaped(key))
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_escapes_decode_to_the_key_and_text_escapes_stay_visible() {
        let key = "sk-ab/cd+é";
        let body = serde_json::to_vec(&serde_json::json!({"m": text(key)})).unwrap();
        let finished = String::from_utf8(finish_body(&body, key)).unwrap();
        assert!(
            finished.contains(r"sk-ab\/cd+é") && finished.contains(r"\u0073\u006b\u002d"),
            "{finished}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&finished).unwrap();
        let m = parsed["m"].as_str().unwrap();
        assert!(m.contains(&format!("json-escaped {key} and {key};")), "{m}");
        assert!(m.contains(r"escaped text sk-ab\/cd+é and \u0073"), "{m}");
    }
}
