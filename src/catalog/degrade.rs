//! Degrade operators: each one deterministic function applying one violation of the tool-design rules
//! to a catalog. They change names, text and presentation only — never tool ids, and never the contract
//! the simulated tool enforces (execution validates against the written schema) — so a change in what a
//! model picks is caused by the description alone. Each operator violates exactly one lint rule
//! ([`Degrade::rule`]); a test checks the linter catches every one.

use super::{Catalog, Category, Dispatch, Tool};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};

/// Longest description providers accept; longer ones are cut here (see [`provider_text`]).
pub const DESCRIPTION_LIMIT: usize = 1024;

/// One named degrade operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Degrade {
    /// Replace the description with a vague, short one ("Works with email.").
    VagueDescription,
    /// Remove "Use when… / Do not use for…" guidance sentences.
    DropGuidance,
    /// Cryptic camelCase names with vowels dropped (`send_email` → `sndEml`).
    CrypticNames,
    /// Bake an argument into the name (`get_forecast` → `get_forecast_for_metric`).
    ArgsInName,
    /// Drop every parameter description.
    DropParameterDescriptions,
    /// Turn enums into plain strings (the allowed values move into prose).
    EnumsToStrings,
    /// Drop `pattern` and `format` from parameters (ids become free text).
    DropPatterns,
    /// Bury the description after > 1024 characters of boilerplate; providers then cut it off.
    OverlongDescription,
    /// Merge each category's tools into one `manage_<category>` tool with an `action` parameter.
    MergeSiblings,
    /// Remove the MCP annotations.
    DropAnnotations,
}

impl Degrade {
    /// Every operator, in the order `bad` applies them.
    pub const ALL: [Degrade; 10] = [
        Degrade::DropGuidance,
        Degrade::VagueDescription,
        Degrade::OverlongDescription,
        Degrade::EnumsToStrings,
        Degrade::DropParameterDescriptions,
        Degrade::DropPatterns,
        Degrade::DropAnnotations,
        Degrade::MergeSiblings,
        Degrade::ArgsInName,
        Degrade::CrypticNames,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Degrade::VagueDescription => "vague_description",
            Degrade::DropGuidance => "drop_guidance",
            Degrade::CrypticNames => "cryptic_names",
            Degrade::ArgsInName => "args_in_name",
            Degrade::DropParameterDescriptions => "drop_parameter_descriptions",
            Degrade::EnumsToStrings => "enums_to_strings",
            Degrade::DropPatterns => "drop_patterns",
            Degrade::OverlongDescription => "overlong_description",
            Degrade::MergeSiblings => "merge_siblings",
            Degrade::DropAnnotations => "drop_annotations",
        }
    }

    /// The lint rule this operator violates.
    pub fn rule(self) -> &'static str {
        match self {
            Degrade::VagueDescription => "TP-D001",
            Degrade::DropGuidance => "TP-D003",
            Degrade::CrypticNames => "TP-N001",
            Degrade::ArgsInName => "TP-N004",
            Degrade::DropParameterDescriptions => "TP-S005",
            Degrade::EnumsToStrings => "TP-S001",
            Degrade::DropPatterns => "TP-S003",
            Degrade::OverlongDescription => "TP-D002",
            Degrade::MergeSiblings => "TP-S006",
            Degrade::DropAnnotations => "TP-A001",
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
            Degrade::ArgsInName => catalog.map_tools(args_in_name),
            Degrade::DropParameterDescriptions => catalog.map_tools(drop_parameter_descriptions),
            Degrade::EnumsToStrings => catalog.map_tools(enums_to_strings),
            Degrade::DropPatterns => catalog.map_tools(drop_patterns),
            Degrade::OverlongDescription => {
                let servers: BTreeMap<String, String> =
                    catalog.tools().map(|t| (t.tool.id.clone(), t.server.name.clone())).collect();
                catalog.map_tools(|t| overlong_description(t, &servers[&t.id]))
            }
            Degrade::MergeSiblings => merge_siblings(catalog),
            Degrade::DropAnnotations => catalog.map_tools(drop_annotations),
        }
    }
}

/// What a provider passes on of a description: at most [`DESCRIPTION_LIMIT`] characters.
pub fn provider_text(description: &str) -> String {
    if description.chars().count() <= DESCRIPTION_LIMIT {
        description.to_string()
    } else {
        description.chars().take(DESCRIPTION_LIMIT).collect()
    }
}
/// Words of a snake_case or camelCase identifier, lower-cased (the same split the BM25 analyzer uses).
pub fn name_words(name: &str) -> Vec<String> {
    crate::text::words(name)
}

/// (a) A vague, short description that names the object but not what is done with it.
pub fn vague_description(tool: &mut Tool) {
    let words = name_words(&tool.name);
    let object = if words.len() > 1 { words[1..].join(" ") } else { words.join(" ") };
    tool.description = format!("Works with {object}.");
}

/// Sentence starts that carry selection guidance.
const GUIDANCE: [&str; 8] = [
    "use when",
    "use this when",
    "use it when",
    "do not use",
    "don't use",
    "not for",
    "prefer ",
    "use for",
];

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

/// Apply `f` to every parameter schema (recursing into `items` and nested `properties`).
fn each_parameter(tool: &mut Tool, f: &mut impl FnMut(&mut serde_json::Map<String, Value>)) {
    fn walk(schema: &mut Value, f: &mut impl FnMut(&mut serde_json::Map<String, Value>)) {
        let Some(obj) = schema.as_object_mut() else { return };
        f(obj);
        if let Some(items) = obj.get_mut("items") {
            walk(items, f);
        }
        if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
            for (_, p) in props.iter_mut() {
                walk(p, f);
            }
        }
    }
    if let Some(props) = tool.input_schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (_, p) in props.iter_mut() {
            walk(p, f);
        }
    }
}

/// Drop every parameter description.
pub fn drop_parameter_descriptions(tool: &mut Tool) {
    each_parameter(tool, &mut |p| {
        p.remove("description");
    });
}

/// Turn enums into plain strings; the allowed values survive only as prose ("One of: a, b.").
pub fn enums_to_strings(tool: &mut Tool) {
    each_parameter(tool, &mut |p| {
        let Some(values) = p.remove("enum") else { return };
        let list: Vec<String> = values
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v.as_str().map(String::from).unwrap_or_else(|| v.to_string()))
            .collect();
        if !p.contains_key("type") {
            let ty = match values.as_array().and_then(|a| a.first()) {
                Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "integer",
                Some(Value::Number(_)) => "number",
                Some(Value::Bool(_)) => "boolean",
                _ => "string",
            };
            p.insert("type".into(), json!(ty));
        }
        let prose = format!("One of: {}.", list.join(", "));
        let desc = match p.get("description").and_then(Value::as_str) {
            Some(d) if !d.is_empty() => format!("{d} {prose}"),
            _ => prose,
        };
        p.insert("description".into(), json!(desc));
    });
}

/// Drop `pattern` and `format`.
pub fn drop_patterns(tool: &mut Tool) {
    each_parameter(tool, &mut |p| {
        p.remove("pattern");
        p.remove("format");
    });
}

/// Remove the annotations (the tool keeps its real behaviour; only the declaration goes).
pub fn drop_annotations(tool: &mut Tool) {
    tool.annotations = Default::default();
    tool.origin.annotations_given = false;
}

/// Bake an argument into the name: the first enum value of the first enum parameter, else the first
/// required parameter (`get_forecast` → `get_forecast_for_metric`).
pub fn args_in_name(tool: &mut Tool) {
    let from_enum = tool.properties().find_map(|(_, s)| {
        s.get("enum")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(String::from)
    });
    let arg = from_enum
        .or_else(|| tool.required().first().map(|s| s.to_string()))
        .unwrap_or_else(|| "default".into());
    let arg: String = arg
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let arg = arg.trim_matches('_').replace("__", "_");
    let suffix = format!("_for_{arg}");
    let keep = 64usize.saturating_sub(suffix.len()).min(tool.name.len());
    tool.name = format!("{}{suffix}", &tool.name[..keep]);
}

const BOILERPLATE: &str = "This operation is part of the {server} integration and is provided as-is under the workspace \
service terms. Requests are authenticated with the connected account and are subject to the provider's rate limits, retention \
policies and regional data-processing agreements. Responses may be cached for up to five minutes and can include fields that \
are reserved for future use; clients should ignore unknown fields. Errors follow the standard error envelope with a machine-readable \
code and a human-readable message. Timestamps are returned in UTC unless the account has a different default. Availability of some \
fields depends on the plan of the workspace. For compliance reasons, administrators can audit every call made through this \
integration. Deprecated parameters continue to be accepted for a transition period but may be removed without further notice. ";

/// Bury the description behind more than 1024 characters of boilerplate. Providers cut descriptions at
/// 1024 characters ([`provider_text`]), so the part that says what the tool does is never seen.
pub fn overlong_description(tool: &mut Tool, server: &str) {
    let mut pre = String::new();
    while pre.chars().count() <= DESCRIPTION_LIMIT {
        pre.push_str(&BOILERPLATE.replace("{server}", server));
    }
    tool.description = format!("{pre}{}", tool.description);
}

/// Merge each category's tools into one `manage_<category>` tool whose `action` parameter names the
/// original tool. Calls are dispatched back to the original tool (same id, arguments without `action`),
/// which is the same as rewriting the ground truth to the merged tool with the right `action`.
pub fn merge_siblings(catalog: &mut Catalog) {
    for server in &mut catalog.servers {
        for category in &mut server.categories {
            if category.tools.len() < 2 {
                continue;
            }
            let merged = merged_tool(&server.name, category);
            category.tools = vec![merged];
        }
    }
    catalog.map_tools(|_| {});
}

fn merged_tool(server: &str, category: &Category) -> Tool {
    let mut properties = serde_json::Map::new();
    let names: Vec<&str> = category.tools.iter().map(|t| t.name.as_str()).collect();
    properties.insert(
        "action".into(),
        json!({"type": "string", "enum": names, "description": "Which operation to perform."}),
    );
    let mut lines = Vec::new();
    let mut targets = BTreeMap::new();
    for t in &category.tools {
        for (k, v) in t.properties() {
            properties.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let first = t.description.split(". ").next().unwrap_or("").trim_end_matches('.');
        lines.push(format!("'{}': {first}.", t.name));
        targets.insert(t.name.clone(), t.id.clone());
    }
    let words = name_words(&category.name).join(" ");
    let annotations = super::Annotations {
        read_only_hint: category.tools.iter().all(|t| t.annotations.read_only_hint),
        destructive_hint: category.tools.iter().any(|t| t.annotations.destructive_hint),
        idempotent_hint: category.tools.iter().all(|t| t.annotations.idempotent_hint),
        open_world_hint: category.tools.iter().any(|t| t.annotations.open_world_hint),
    };
    let name = format!("manage_{}", category.name);
    Tool {
        id: format!("{server}/{}/{name}", category.name),
        name,
        title: None,
        description: format!("Manage {words}. Actions: {}", lines.join(" ")),
        input_schema: json!({"type": "object", "properties": properties, "required": ["action"], "additionalProperties": false}),
        output_schema: None,
        annotations,
        mock_response: json!({"ok": true}),
        mock_mode: Default::default(),
        origin: category.tools[0].origin.clone(),
        dispatch: Some(Dispatch { param: "action".into(), targets }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::variant::Variant;
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
            mock_mode: Default::default(),
            origin: Default::default(),
            dispatch: None,
        }
    }

    fn catalog(tools: Vec<Tool>) -> Catalog {
        Catalog::new(
            "t",
            "",
            vec![Server {
                name: "s".into(),
                title: None,
                description: "".into(),
                categories: vec![Category { name: "c".into(), description: "".into(), tools }],
            }],
        )
    }

    #[test]
    fn every_operator_has_a_distinct_name_and_rule() {
        let names: HashSet<&str> = Degrade::ALL.iter().map(|d| d.name()).collect();
        let rules: HashSet<&str> = Degrade::ALL.iter().map(|d| d.rule()).collect();
        assert_eq!(names.len(), Degrade::ALL.len());
        assert_eq!(rules.len(), Degrade::ALL.len());
        for d in Degrade::ALL {
            assert_eq!(Degrade::from_name(d.name()), Some(d));
        }
    }

    #[test]
    fn vague_description_is_short_and_names_the_object() {
        let mut t = tool(
            "get_weather_forecast",
            "Get the forecast for a city for up to 7 days. Use when planning.",
        );
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
    fn parameter_operators() {
        let mut t = tool("a_b", "");
        drop_parameter_descriptions(&mut t);
        assert_eq!(
            t.input_schema,
            json!({"type":"object","properties":{
                "units":{"type":"string","enum":["metric","imperial"]},
                "tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},
                "level":{"enum":[1,2,3]}
            }})
        );
        let mut t = tool("a_b", "");
        enums_to_strings(&mut t);
        assert_eq!(
            t.input_schema["properties"]["units"],
            json!({"type":"string","description":"Unit system. One of: metric, imperial."})
        );
        assert_eq!(
            t.input_schema["properties"]["level"],
            json!({"type":"integer","description":"Level. One of: 1, 2, 3."})
        );
        let mut t = tool("a_b", "");
        t.input_schema["properties"]["id"] =
            json!({"type":"string","pattern":"^X-[0-9]+$","format":"uuid"});
        drop_patterns(&mut t);
        assert_eq!(t.input_schema["properties"]["id"], json!({"type":"string"}));
    }

    #[test]
    fn args_in_name_and_annotations() {
        let mut t = tool("get_forecast", "");
        args_in_name(&mut t);
        assert_eq!(t.name, "get_forecast_for_metric");
        let mut t = tool("x_y", "");
        t.origin.annotations_given = true;
        t.annotations.read_only_hint = true;
        drop_annotations(&mut t);
        assert!(!t.origin.annotations_given && !t.annotations.read_only_hint);
    }

    #[test]
    fn overlong_descriptions_lose_their_point_at_the_provider_limit() {
        let mut t = tool("x_y", "Sends the weekly report.");
        overlong_description(&mut t, "mail");
        assert!(t.description.chars().count() > DESCRIPTION_LIMIT);
        assert!(t.description.ends_with("Sends the weekly report."));
        let seen = provider_text(&t.description);
        assert_eq!(seen.chars().count(), DESCRIPTION_LIMIT);
        assert!(!seen.contains("weekly report"));
        assert_eq!(provider_text("short"), "short");
    }

    #[test]
    fn merge_siblings_builds_one_dispatching_tool() {
        let mut c = catalog(vec![
            tool("send_email", "Send mail. More."),
            tool("save_draft", "Save a draft."),
        ]);
        merge_siblings(&mut c);
        let t = c.get("s/c/manage_c").expect("merged tool").tool;
        assert_eq!(
            t.input_schema["properties"]["action"]["enum"],
            json!(["send_email", "save_draft"])
        );
        assert_eq!(t.input_schema["required"], json!(["action"]));
        let d = t.dispatch.as_ref().unwrap();
        assert_eq!(d.targets["save_draft"], "s/c/save_draft");
        assert!(t.description.contains("'send_email': Send mail."));
        assert!(c.get("s/c/send_email").is_none());
    }

    #[test]
    fn variants_parse_and_apply_deterministically() {
        assert!(Variant::parse("good").unwrap().operators().is_empty());
        assert_eq!(Variant::parse("bad").unwrap().operators().len(), Degrade::ALL.len());
        assert_eq!(
            Variant::parse("op:cryptic_names").unwrap().operators(),
            &[Degrade::CrypticNames]
        );
        assert!(Variant::parse("worse").is_none());
        let c = catalog(vec![tool("send_email", "Send mail. Use when asked.")]);
        let bad = Variant::parse("bad").unwrap();
        let a = bad.apply(&c).unwrap();
        let b = bad.apply(&c).unwrap();
        assert_eq!(a.servers, b.servers);
        let t = a.get("s/c/send_email").unwrap().tool;
        assert_eq!(
            t.name,
            cryptic_name("send_email_for_default"),
            "enums are gone by the time args_in_name runs"
        );
        assert!(t.description.ends_with("Works with email."));
        // the written catalog is untouched
        assert_eq!(c.get("s/c/send_email").unwrap().tool.name, "send_email");
    }
}
