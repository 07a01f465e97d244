//! Reading a catalog directory and checking it before anything runs on it.
//!
//! All problems in all files are collected and reported together, each with the file, the nearest
//! line and the field path, so a person editing by hand can fix them in one pass.

use super::{Annotations, Catalog, Category, Server, Tool};
use crate::error::{InputError, InputErrors};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalogMeta {
    name: Option<String>,
    #[serde(default)]
    description: String,
    /// Where an imported catalog came from (`toolpick mcp import`): kept for people and for live
    /// execution, not read when loading.
    #[serde(default)]
    #[allow(dead_code)]
    mcp: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    title: Option<String>,
    description: String,
    categories: Vec<RawCategory>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCategory {
    name: String,
    description: String,
    tools: Vec<RawTool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawTool {
    /// Only in hand-written description variants: the id of the tool in the written catalog this entry
    /// describes (its name may differ).
    id: Option<String>,
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    #[serde(default)]
    annotations: Option<Annotations>,
    mock_response: Option<Value>,
    /// `static` returns `mockResponse` verbatim (no placeholders); absent means `templated`.
    #[serde(default)]
    mock_mode: super::MockMode,
}

/// `true` when `name` is a valid server, category or tool name.
pub fn is_valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// 1-based line of the first occurrence of `needle` in `text`, if any.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.find(needle).map(|pos| text[..pos].matches('\n').count() + 1)
}

/// 1-based line of `needle` at or after the first `anchor`, else the anchor's line.
fn line_after(text: &str, anchor: &str, needle: &str) -> Option<usize> {
    let start = text.find(anchor)?;
    let pos = text[start..].find(needle).map(|p| start + p).unwrap_or(start);
    Some(text[..pos].matches('\n').count() + 1)
}

/// Load and validate the catalog in `dir` (see `docs/formats.md`).
pub fn load_catalog(dir: &Path) -> Result<Catalog, InputErrors> {
    let mut errors = Vec::new();
    if !dir.is_dir() {
        // Which flag or file named the directory is the caller's to say (`--catalog`, `lint DIR`, a
        // sessions file's header): the message names only the directory.
        let what = if dir.exists() {
            "is a file, not a catalog directory"
        } else {
            "no such catalog directory"
        };
        return Err(InputErrors(vec![InputError::new(
            dir,
            format!("{what}; a catalog is a folder of server JSON files"),
        )]));
    }
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(e) => {
            return Err(InputErrors(vec![InputError::new(
                dir,
                format!("cannot read directory: {e}"),
            )]));
        }
    };
    files.sort();

    let mut name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "catalog".into());
    let mut description = String::new();
    let mut servers = Vec::new();
    let mut ids: HashMap<String, PathBuf> = HashMap::new();
    let mut categories: HashMap<String, PathBuf> = HashMap::new();
    let mut server_names: HashMap<String, PathBuf> = HashMap::new();

    for file in &files {
        let text = match crate::error::read_text(file, "file") {
            Ok(t) => t,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if file.file_name().is_some_and(|n| n == "catalog.json") {
            match crate::error::json_file::<RawCatalogMeta>(file, &text) {
                Ok(meta) => {
                    if let Some(n) = meta.name {
                        name = n;
                    }
                    description = meta.description;
                }
                Err(e) => errors.push(e),
            }
            continue;
        }
        let raw: RawServer = match crate::error::json_file(file, &text) {
            Ok(r) => r,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        match check_server(
            file,
            &text,
            raw,
            &mut ids,
            &mut categories,
            &mut server_names,
            &mut errors,
        ) {
            Some(server) => servers.push(server),
            None => continue,
        }
    }
    if servers.is_empty() && errors.is_empty() {
        errors.push(InputError::new(
            dir,
            "catalog has no server files (*.json other than catalog.json)",
        ));
    }
    InputErrors(errors).into_result()?;
    Ok(Catalog::new(name, description, servers))
}

fn check_server(
    file: &Path,
    text: &str,
    raw: RawServer,
    ids: &mut HashMap<String, PathBuf>,
    categories: &mut HashMap<String, PathBuf>,
    server_names: &mut HashMap<String, PathBuf>,
    errors: &mut Vec<InputError>,
) -> Option<Server> {
    let err = |field: String, needle: &str, msg: String| {
        let mut e = InputError::new(file, msg).field(field);
        e.line = line_of(text, needle);
        e
    };
    let before = errors.len();
    if !is_valid_name(&raw.name) {
        errors.push(err(
            "name".into(),
            &raw.name,
            format!("server name `{}` must match ^[a-z][a-z0-9_]{{0,63}}$", raw.name),
        ));
    }
    if let Some(other) = server_names.insert(raw.name.clone(), file.to_path_buf()) {
        errors.push(err(
            "name".into(),
            &raw.name,
            format!("server `{}` is also defined in {}", raw.name, other.display()),
        ));
    }
    let mut server = Server {
        name: raw.name.clone(),
        title: raw.title,
        description: raw.description,
        categories: vec![],
    };
    for (ci, rc) in raw.categories.into_iter().enumerate() {
        let cfield = format!("categories[{ci}]");
        let cneedle = format!("\"{}\"", rc.name);
        if !is_valid_name(&rc.name) {
            errors.push(err(
                format!("{cfield}.name"),
                &cneedle,
                format!("category name `{}` must match ^[a-z][a-z0-9_]{{0,63}}$", rc.name),
            ));
        }
        if let Some(other) = categories.insert(rc.name.clone(), file.to_path_buf()) {
            errors.push(err(
                format!("{cfield}.name"),
                &cneedle,
                format!("category `{}` is already defined in {}; category names must be unique across the catalog", rc.name, other.display()),
            ));
        }
        let mut category =
            Category { name: rc.name.clone(), description: rc.description, tools: vec![] };
        for (ti, rt) in rc.tools.into_iter().enumerate() {
            let tfield = format!("{cfield}.tools[{ti}]");
            let tneedle = format!("\"{}\"", rt.name);
            // Names must be usable as function names; style (snake_case, verb_noun) is the linter's job.
            if !crate::protocol::is_valid_function_name(&rt.name) {
                errors.push(err(
                    format!("{tfield}.name"),
                    &tneedle,
                    format!("tool name `{}` must match ^[a-zA-Z0-9_-]{{1,64}}$", rt.name),
                ));
            }
            let id =
                rt.id.clone().unwrap_or_else(|| format!("{}/{}/{}", raw.name, rc.name, rt.name));
            if let Some(other) = ids.insert(id.clone(), file.to_path_buf()) {
                errors.push(err(
                    format!("{tfield}.name"),
                    &tneedle,
                    format!("tool id `{id}` is already defined in {}", other.display()),
                ));
            }
            for (suffix, message, needle) in schema_problems(&rt.input_schema, true) {
                let mut e =
                    InputError::new(file, message).field(format!("{tfield}.inputSchema{suffix}"));
                e.line = line_after(text, &tneedle, &needle);
                errors.push(e);
            }
            for p in mock_problems(&rt) {
                let mut e = InputError::new(file, format!("tool `{id}`: {}", p.message))
                    .field(format!("{tfield}.mockResponse{}", p.field));
                // Anchor on the tool's own `"name": …` line (its bare name may appear earlier in a description).
                let anchor = format!("\"name\": {tneedle}");
                e.line = line_after(
                    text,
                    if text.contains(&anchor) { &anchor } else { &tneedle },
                    &p.needle,
                );
                errors.push(e);
            }
            if let Some(out) = &rt.output_schema {
                for (suffix, message, needle) in schema_problems(out, false) {
                    let mut e = InputError::new(file, message)
                        .field(format!("{tfield}.outputSchema{suffix}"));
                    e.line = line_after(text, &tneedle, &needle);
                    errors.push(e);
                }
            }
            category.tools.push(Tool {
                id,
                name: rt.name,
                title: rt.title,
                description: rt.description,
                input_schema: rt.input_schema,
                output_schema: rt.output_schema,
                origin: super::Origin {
                    file: file.to_path_buf(),
                    line: line_of(text, &format!("\"name\": {tneedle}"))
                        .or_else(|| line_of(text, &tneedle))
                        .unwrap_or(0),
                    annotations_given: rt.annotations.is_some(),
                },
                dispatch: None,
                annotations: rt.annotations.unwrap_or_default(),
                mock_response: rt.mock_response.unwrap_or_else(|| serde_json::json!({"ok": true})),
                mock_mode: rt.mock_mode,
            });
        }
        server.categories.push(category);
    }
    (errors.len() == before).then_some(server)
}

/// Parse one tool object (catalog format) outside a server file — e.g. a tool a poisoning scenario adds.
pub fn parse_tool(server: &str, category: &str, value: &Value) -> Result<Tool, String> {
    let rt: RawTool =
        serde_json::from_value(value.clone()).map_err(|e| format!("not a tool: {e}"))?;
    if !crate::protocol::is_valid_function_name(&rt.name) {
        return Err(format!("tool name `{}` must match ^[a-zA-Z0-9_-]{{1,64}}$", rt.name));
    }
    if let Some((field, message, _)) = schema_problems(&rt.input_schema, true).into_iter().next() {
        return Err(format!("inputSchema{field}: {message}"));
    }
    if let Some(p) = mock_problems(&rt).into_iter().next() {
        return Err(format!("mockResponse{}: {}", p.field, p.message));
    }
    Ok(Tool {
        id: format!("{server}/{category}/{}", rt.name),
        name: rt.name,
        title: rt.title,
        description: rt.description,
        input_schema: rt.input_schema,
        output_schema: rt.output_schema,
        origin: super::Origin { annotations_given: rt.annotations.is_some(), ..Default::default() },
        dispatch: None,
        annotations: rt.annotations.unwrap_or_default(),
        mock_response: rt.mock_response.unwrap_or_else(|| serde_json::json!({"ok": true})),
        mock_mode: rt.mock_mode,
    })
}

/// Placeholder problems of a templated mock response (none for a static one, or one whose schema
/// is itself invalid — that is reported on its own).
fn mock_problems(rt: &RawTool) -> Vec<super::mock::Problem> {
    match (&rt.mock_response, rt.mock_mode) {
        (Some(mock), super::MockMode::Templated) => super::mock::check(mock, &rt.input_schema),
        _ => Vec::new(),
    }
}

/// Problems with a schema as (field suffix, message, text to locate). `input` adds the tool-input rules.
fn schema_problems(schema: &Value, input: bool) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        let at = e.instance_path().to_string();
        let needle = at.rsplit('/').next().map(|k| format!("\"{k}\"")).unwrap_or_default();
        out.push((
            at.replace('/', "."),
            format!("not a valid JSON Schema (draft 2020-12): {e}"),
            needle,
        ));
        return out;
    }
    if let Err(e) = jsonschema::draft202012::new(schema) {
        out.push((String::new(), format!("JSON Schema does not compile: {e}"), String::new()));
        return out;
    }
    if !input {
        return out;
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        out.push((
            ".type".into(),
            "a tool's inputSchema must have \"type\": \"object\"".into(),
            "\"type\"".into(),
        ));
    }
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for (i, r) in req.iter().enumerate() {
            let name = r.as_str().unwrap_or_default();
            if !props.is_some_and(|p| p.contains_key(name)) {
                out.push((
                    format!(".required[{i}]"),
                    format!("required property `{name}` is not defined in `properties`; define it or remove it from `required`"),
                    format!("\"{name}\""),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule() {
        assert!(is_valid_name("send_email"));
        assert!(is_valid_name("a1"));
        assert!(!is_valid_name("SendEmail"));
        assert!(!is_valid_name("1abc"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("send-email"));
        assert!(!is_valid_name(&"a".repeat(65)));
    }

    #[test]
    fn schema_rules() {
        let ok = serde_json::json!({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]});
        assert!(schema_problems(&ok, true).is_empty());
        let missing = serde_json::json!({"type":"object","properties":{"a":{"type":"string"}},"required":["b"]});
        let p = schema_problems(&missing, true);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].0, ".required[0]");
        let bad_type = serde_json::json!({"type":"object","properties":{"a":{"type":"strin"}}});
        assert!(!schema_problems(&bad_type, true).is_empty());
        let not_object = serde_json::json!({"type":"string"});
        assert_eq!(schema_problems(&not_object, true)[0].0, ".type");
    }

    #[test]
    fn line_of_finds_line() {
        assert_eq!(line_of("a\nb\n\"x\"", "\"x\""), Some(3));
        assert_eq!(line_of("abc", "z"), None);
    }
}
