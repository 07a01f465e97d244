//! Description variants: the same tools, described well or badly.
//!
//! `good` is the catalog as written. `bad` is derived from it by **degrade operators**, each one
//! deterministic function applying one violation of the tool-design rules. Operators change names and
//! text only; tool ids (and so ground truth) and the real input contract stay the same, so any change in
//! a model's choices is caused by the description alone. Both layouts are built from the same variant
//! catalog, so they see exactly the same text.

use super::{Catalog, Tool};
use serde_json::Value;
use std::collections::HashSet;

/// One named degrade operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Degrade {
    /// (a) Replace the description with a vague, short one ("Works with email.").
    VagueDescription,
    /// (b) Remove "Use when… / Do not use for…" guidance sentences.
    DropGuidance,
    /// (c) Cryptic camelCase names with vowels dropped (`send_email` → `sndEml`).
    CrypticNames,
    /// (d) Drop parameter descriptions and turn enums into plain strings.
    StripParameterDocs,
}

impl Degrade {
    pub const ALL: [Degrade; 4] =
        [Degrade::DropGuidance, Degrade::VagueDescription, Degrade::CrypticNames, Degrade::StripParameterDocs];

    pub fn name(self) -> &'static str {
        match self {
            Degrade::VagueDescription => "vague_description",
            Degrade::DropGuidance => "drop_guidance",
            Degrade::CrypticNames => "cryptic_names",
            Degrade::StripParameterDocs => "strip_parameter_docs",
        }
    }

    pub fn from_name(name: &str) -> Option<Degrade> {
        Degrade::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Apply this operator to the whole catalog.
    pub fn apply(self, catalog: &mut Catalog) {
        match self {
            Degrade::VagueDescription => catalog.map_tools(vague_description),
            Degrade::DropGuidance => catalog.map_tools(drop_guidance),
            Degrade::CrypticNames => cryptic_names(catalog),
            Degrade::StripParameterDocs => catalog.map_tools(strip_parameter_docs),
        }
    }
}

/// A description variant: a name and the operators that produce it from the written catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub name: String,
    pub operators: Vec<Degrade>,
}

impl Variant {
    /// `good`, `bad`, or `op:<operator>` (a single operator, for ablations).
    pub fn parse(name: &str) -> Option<Variant> {
        let operators = match name {
            "good" => vec![],
            "bad" => Degrade::ALL.to_vec(),
            other => vec![Degrade::from_name(other.strip_prefix("op:")?)?],
        };
        Some(Variant { name: name.to_string(), operators })
    }

    /// The catalog as this variant shows it.
    pub fn apply(&self, catalog: &Catalog) -> Catalog {
        let mut out = catalog.clone();
        for op in &self.operators {
            op.apply(&mut out);
        }
        out
    }
}

/// Words of a snake_case or camelCase identifier, lower-cased.
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if !ch.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
        cur.extend(ch.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// (a) A vague, short description that names the object but not what is done with it.
pub fn vague_description(tool: &mut Tool) {
    let words = name_words(&tool.name);
    let object = if words.len() > 1 { words[1..].join(" ") } else { words.join(" ") };
    tool.description = format!("Works with {object}.");
}

/// Sentence starts that carry selection guidance.
const GUIDANCE: [&str; 8] =
    ["use when", "use this when", "use it when", "do not use", "don't use", "not for", "prefer ", "use for"];

/// (b) Remove every sentence that tells when (not) to use the tool, keeping what it does.
pub fn drop_guidance(tool: &mut Tool) {
    let kept: Vec<&str> = split_sentences(&tool.description)
        .into_iter()
        .filter(|s| {
            let lower = s.trim_start().to_lowercase();
            !GUIDANCE.iter().any(|g| lower.starts_with(g))
        })
        .collect();
    tool.description = kept.concat().trim().to_string();
}

/// Split text into sentences, keeping each sentence's trailing punctuation and space.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'.' | b'!' | b'?' if depth <= 0 => {
                let next = bytes.get(i + 1);
                if next.is_none() || next == Some(&b' ') || next == Some(&b'\n') {
                    let end = if next.is_some() { i + 2 } else { i + 1 };
                    out.push(&text[start..end.min(text.len())]);
                    start = end.min(text.len());
                }
            }
            _ => {}
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Abbreviate one word: keep the first letter, drop later vowels, at most 4 letters.
fn abbreviate(word: &str) -> String {
    let mut chars = word.chars();
    let mut out: String = chars.next().into_iter().collect();
    out.extend(chars.filter(|c| !"aeiou".contains(*c)).take(3));
    out
}

/// The cryptic camelCase form of a snake_case name, before collision handling.
pub fn cryptic_name(name: &str) -> String {
    let mut out = String::new();
    for (i, w) in name_words(name).iter().enumerate() {
        let a = abbreviate(w);
        if i == 0 {
            out.push_str(&a);
        } else {
            let mut c = a.chars();
            if let Some(f) = c.next() {
                out.extend(f.to_uppercase());
                out.push_str(c.as_str());
            }
        }
    }
    out
}

/// (c) Give every tool a cryptic camelCase name. Collisions get a numeric suffix in catalog order, so
/// names stay unique and the mapping is deterministic.
pub fn cryptic_names(catalog: &mut Catalog) {
    let mut used = HashSet::new();
    catalog.map_tools(|tool| {
        let base = cryptic_name(&tool.name);
        let mut name = base.clone();
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{base}{n}");
            n += 1;
        }
        tool.name = name;
    });
}

/// (d) Drop every parameter description and turn enums into plain strings (the set of allowed values
/// disappears from the schema the model sees; the tool still only accepts them).
pub fn strip_parameter_docs(tool: &mut Tool) {
    if let Some(props) = tool.input_schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (_, p) in props.iter_mut() {
            strip_schema(p);
        }
    }
}

fn strip_schema(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else { return };
    obj.remove("description");
    if let Some(values) = obj.remove("enum")
        && !obj.contains_key("type") {
            let ty = match values.as_array().and_then(|a| a.first()) {
                Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "integer",
                Some(Value::Number(_)) => "number",
                Some(Value::Bool(_)) => "boolean",
                _ => "string",
            };
            obj.insert("type".into(), Value::String(ty.into()));
        }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = obj.get_mut(key) {
            strip_schema(inner);
        }
    }
    if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
        for (_, p) in props.iter_mut() {
            strip_schema(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Annotations, Category, Server};
    use serde_json::json;

    fn tool(name: &str, description: &str) -> Tool {
        Tool {
            id: format!("s/c/{name}"),
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema: json!({"type":"object","properties":{
                "units":{"type":"string","enum":["metric","imperial"],"description":"Unit system."},
                "tags":{"type":"array","items":{"type":"string","enum":["a","b"],"description":"tag"}},
                "level":{"enum":[1,2,3],"description":"Level."}
            }}),
            output_schema: None,
            annotations: Annotations::default(),
            mock_response: json!({}),
            origin: Default::default(),
        }
    }

    fn catalog(tools: Vec<Tool>) -> Catalog {
        Catalog::new("t", "", vec![Server { name: "s".into(), title: None, description: "".into(), categories: vec![Category { name: "c".into(), description: "".into(), tools }] }])
    }

    #[test]
    fn vague_description_is_short_and_names_the_object() {
        let mut t = tool("get_weather_forecast", "Get the forecast for a city for up to 7 days. Use when planning.");
        vague_description(&mut t);
        assert_eq!(t.description, "Works with weather forecast.");
    }

    #[test]
    fn drop_guidance_keeps_what_it_does() {
        let mut t = tool(
            "send_email",
            "Send an e-mail now (e.g. a note). Use when the user wants mail delivered. Do not use for chat (use post_message). Returns the id.",
        );
        drop_guidance(&mut t);
        assert_eq!(t.description, "Send an e-mail now (e.g. a note). Returns the id.");
        let mut plain = tool("x_y", "Nothing to drop here.");
        drop_guidance(&mut plain);
        assert_eq!(plain.description, "Nothing to drop here.");
    }

    #[test]
    fn cryptic_names_are_camel_case_unique_and_keep_ids() {
        assert_eq!(cryptic_name("send_email"), "sndEml");
        assert_eq!(cryptic_name("list_channel_messages"), "lstChnnMssg");
        let mut c = catalog(vec![tool("send_email", ""), tool("send_emil", "")]);
        cryptic_names(&mut c);
        let names: Vec<_> = c.tools().map(|t| t.tool.name.clone()).collect();
        assert_eq!(names, vec!["sndEml", "sndEml2"]);
        assert!(c.get("s/c/send_email").is_some(), "ids survive renaming");
        assert_eq!(c.get("s/c/send_emil").unwrap().tool.name, "sndEml2");
    }

    #[test]
    fn strip_parameter_docs_drops_descriptions_and_enums() {
        let mut t = tool("a_b", "");
        strip_parameter_docs(&mut t);
        assert_eq!(
            t.input_schema,
            json!({"type":"object","properties":{
                "units":{"type":"string"},
                "tags":{"type":"array","items":{"type":"string"}},
                "level":{"type":"integer"}
            }})
        );
    }

    #[test]
    fn variants_parse_and_apply_deterministically() {
        assert!(Variant::parse("good").unwrap().operators.is_empty());
        assert_eq!(Variant::parse("bad").unwrap().operators.len(), 4);
        assert_eq!(Variant::parse("op:cryptic_names").unwrap().operators, vec![Degrade::CrypticNames]);
        assert!(Variant::parse("worse").is_none());
        let c = catalog(vec![tool("send_email", "Send mail. Use when asked.")]);
        let bad = Variant::parse("bad").unwrap();
        let a = bad.apply(&c);
        let b = bad.apply(&c);
        assert_eq!(a.servers, b.servers);
        let t = a.get("s/c/send_email").unwrap().tool;
        assert_eq!(t.name, "sndEml");
        assert_eq!(t.description, "Works with email.");
        // the written catalog is untouched
        assert_eq!(c.get("s/c/send_email").unwrap().tool.name, "send_email");
    }
}
