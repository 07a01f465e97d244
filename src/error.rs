//! Error kinds that decide the process exit code.
//!
//! Everything that goes wrong because of what the user handed us (a catalog, a dataset line, a
//! flag) is an [`InputError`] and exits with code 2; anything else is a harness failure (code 1).
//! Messages name the file, the line when there is one, and the field, and say what to change.
//!
//! The readers of native text inputs (catalog files, datasets, experiment files, judge labels,
//! recorded answers, history files, shards) share two helpers here, so every one of them names what
//! the others name: [`read_text`] (the file's bytes as UTF-8 text, a byte-order mark dropped, the
//! first undecodable byte named by its line and column) and [`json_line`] / [`json_file`] (a JSON
//! value read into its type, an error naming the field's path, e.g. `expected[0].arguments.to`).

use std::fmt;
use std::path::{Path, PathBuf};

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: the harness itself failed (I/O, a bug, an unreachable endpoint).
pub const EXIT_HARNESS: i32 = 1;
/// Exit code: invalid input or configuration.
pub const EXIT_INPUT: i32 = 2;
/// Exit code: a quality gate failed (e.g. a lint finding at or above `--fail-on`).
pub const EXIT_GATE: i32 = 100;

/// A gate (lint threshold, pass-rate minimum) was not met: not an error of the harness or the input.
#[derive(Debug, Clone, PartialEq)]
pub struct GateFailed(pub String);

impl fmt::Display for GateFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GateFailed {}

/// A problem with user-supplied input, located as precisely as we can.
#[derive(Debug, Clone, PartialEq)]
pub struct InputError {
    pub file: PathBuf,
    pub line: Option<usize>,
    /// Dotted path of the offending field, e.g. `categories[0].tools[2].inputSchema`.
    pub field: Option<String>,
    pub message: String,
}

impl InputError {
    pub fn new(file: impl AsRef<Path>, message: impl Into<String>) -> Self {
        InputError {
            file: file.as_ref().to_path_buf(),
            line: None,
            field: None,
            message: message.into(),
        }
    }
    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// Several input errors found in one pass (validation reports all of them, not just the first).
#[derive(Debug, Clone, PartialEq)]
pub struct InputErrors(pub Vec<InputError>);

impl fmt::Display for InputErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputErrors {}

impl InputErrors {
    /// `Ok(())` when empty, the collected errors otherwise.
    pub fn into_result(self) -> Result<(), InputErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

/// Where the first undecodable byte of a native text file is, and what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct TextError {
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
}

/// Another Unicode encoding that a file's first bytes announce (a byte-order mark) or show (zero
/// bytes around the first ASCII characters: JSON and TOML text starts with one).
fn foreign_encoding(b: &[u8]) -> Option<&'static str> {
    Some(match b {
        [0x00, 0x00, 0xFE, 0xFF, ..] => "UTF-32 BE with a byte-order mark",
        [0xFF, 0xFE, 0x00, 0x00, ..] => "UTF-32 LE with a byte-order mark",
        [0xFE, 0xFF, ..] => "UTF-16 BE with a byte-order mark",
        [0xFF, 0xFE, ..] => "UTF-16 LE with a byte-order mark",
        [0, 0, 0, x, ..] if *x != 0 => "UTF-32 BE without a byte-order mark",
        [x, 0, 0, 0, ..] if *x != 0 => "UTF-32 LE without a byte-order mark",
        [0, x, 0, y, ..] if *x != 0 && *y != 0 => "UTF-16 BE without a byte-order mark",
        [x, 0, y, 0, ..] if *x != 0 && *y != 0 => "UTF-16 LE without a byte-order mark",
        _ => return None,
    })
}

/// A native file's bytes as text: UTF-8, a UTF-8 byte-order mark allowed and dropped. Another
/// encoding, or a byte that is not UTF-8, is an error naming its line and column.
pub fn decode_text(bytes: Vec<u8>) -> Result<String, TextError> {
    if let Some(encoding) = foreign_encoding(&bytes) {
        return Err(TextError {
            line: 1,
            column: 1,
            message: format!("the file is {encoding}, not UTF-8; save it as UTF-8"),
        });
    }
    let mark = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let body = &bytes[mark..];
    std::str::from_utf8(body).map(str::to_string).map_err(|e| {
        let good = &body[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = std::str::from_utf8(&good[line_start..]).map_or(1, |s| s.chars().count() + 1);
        let byte = body[e.valid_up_to()];
        TextError {
            line,
            column,
            message: format!(
                "byte 0x{byte:02X} at column {column} is not valid UTF-8; save the file as UTF-8"
            ),
        }
    })
}

/// Read the native text file `path` ([`decode_text`]); `what` names it in an error that is not
/// about its bytes ("cannot read <what>: …").
pub fn read_text(path: &Path, what: &str) -> Result<String, InputError> {
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::new(path, format!("cannot read {what}: {e}")))?;
    decode_text(bytes).map_err(|e| InputError::new(path, e.message).at_line(e.line))
}

/// Why a JSON value could not be read into its type.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonError {
    /// The dotted path of the field it failed at (`expected[0].arguments.to`), or the field serde's
    /// message names (`unknown field `kindd``); none for the value as a whole.
    pub field: Option<String>,
    /// serde's message without its position (a caller names the line).
    pub message: String,
    /// 1-based line within the parsed text.
    pub line: usize,
}

/// The field a serde message names (`missing field `query``, `unknown field `kindd``), if any.
pub fn serde_field(msg: &str) -> Option<String> {
    let start = msg.find("field `")? + "field `".len();
    let end = start + msg[start..].find('`')?;
    Some(msg[start..end].to_string())
}

/// Parse `text` as one JSON value of type `T` (trailing text is an error).
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let result = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| (e.path().to_string(), e.into_inner()));
    let result = result.and_then(|v| de.end().map(|()| v).map_err(|e| (String::new(), e)));
    result.map_err(|(path, inner)| {
        let full = inner.to_string();
        // "… at line 1 column 112": the column of a record is no help; its line is named by the
        // caller.
        let message = match full.rfind(" at line ") {
            Some(i) if inner.line() > 0 => full[..i].to_string(),
            _ => full,
        };
        let field = if path.is_empty() || path == "." { serde_field(&message) } else { Some(path) };
        JsonError { field, message, line: inner.line().max(1) }
    })
}

impl JsonError {
    /// This error in `path`, on line `line` (a JSON Lines record) or, when `None`, on the line of
    /// the file the parser stopped at (a whole JSON file).
    pub fn in_file(self, path: &Path, line: Option<usize>) -> InputError {
        InputError {
            file: path.to_path_buf(),
            line: Some(line.unwrap_or(self.line)),
            field: self.field,
            message: self.message,
        }
    }
}

/// Line `line` of the JSON Lines file `path` read into `T`: an error names file, line and field.
pub fn json_line<T: serde::de::DeserializeOwned>(
    path: &Path,
    line: usize,
    text: &str,
) -> Result<T, InputError> {
    parse_json(text).map_err(|e| e.in_file(path, Some(line)))
}

/// The JSON file `path` (its text) read into `T`: an error names file, line and field.
pub fn json_file<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, InputError> {
    parse_json(text).map_err(|e| e.in_file(path, None))
}

/// The exit code for an error coming out of a command.
pub fn exit_code_for(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if cause.is::<InputError>() || cause.is::<InputErrors>() {
            return EXIT_INPUT;
        }
        if cause.is::<GateFailed>() {
            return EXIT_GATE;
        }
    }
    EXIT_HARNESS
}

/// What a JSON value is, for an error message: "null", "a boolean", "a number", "a string", "an array",
/// "an object".
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecodable_bytes_are_named_by_line_and_column_and_a_bom_is_dropped() {
        assert_eq!(decode_text(b"\xEF\xBB\xBFa = 1\n".to_vec()).unwrap(), "a = 1\n");
        let e = decode_text(b"{\"a\": 1}\n{\"b\": \"caf\xe9\"}\n".to_vec()).unwrap_err();
        assert_eq!((e.line, e.column), (2, 11));
        assert!(e.message.contains("0xE9"), "{}", e.message);
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("{}".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert!(decode_text(utf16).unwrap_err().message.contains("UTF-16 LE"));
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Call {
        tool: String,
        #[serde(default)]
        arguments: std::collections::BTreeMap<String, Vec<i64>>,
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Record {
        id: String,
        #[serde(default)]
        expected: Vec<Call>,
    }

    #[test]
    fn a_json_error_names_the_field_path_and_the_line_not_the_column() {
        let path = Path::new("d.jsonl");
        let e = json_line::<Record>(
            path,
            7,
            r#"{"id": "a", "expected": [{"tool": "t", "arguments": {"n": 5}}]}"#,
        )
        .unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(7), Some("expected[0].arguments.n")));
        assert!(!e.message.contains("column"), "{}", e.message);
        let e = json_line::<Record>(path, 2, r#"{"id": "a", "kindd": 1}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("kindd"), "{e}");
        let e = json_line::<Record>(path, 2, r#"{"expected": []}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("id"), "{e}");
        let e = json_line::<Record>(path, 2, r#"{"id": "a"} x"#).unwrap_err();
        assert_eq!(e.field, None, "{e}");
        let e = json_file::<Record>(path, "{\n\"id\": 5\n}").unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(2), Some("id")));
    }
}
