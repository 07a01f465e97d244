//! Error kinds that decide the process exit code.
//!
//! Everything that goes wrong because of what the user handed us (a catalog, a dataset line, a flag)
//! is an [`InputError`] and exits with code 2; anything else is a harness failure (code 1). Messages
//! name the file, the line when there is one, and the field, and say what to change.

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
        InputError { file: file.as_ref().to_path_buf(), line: None, field: None, message: message.into() }
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
