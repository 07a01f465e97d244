//! Description rules (TP-D001 to TP-D004, TP-D006 for tools): long enough but within providers'
//! limit, some content word to search on, guidance when a similar sibling exists, and other tools
//! named only to disambiguate. Server and category descriptions are in [`super::structure`].

use super::{Finding, NO_CONTENT_WORDS, finding, rule};
use crate::catalog::variant::name_words;
use crate::catalog::{Catalog, ToolRef};

/// Phrases that tell the model when (not) to use a tool.
const GUIDANCE: &[&str] =
    &["use when", "use this when", "do not use", "don't use", "not for", "instead", "prefer"];

/// The description of one tool.
pub(super) fn lint_description(
    t: &ToolRef<'_>,
    catalog: &Catalog,
    all_names: &[&str],
    out: &mut Vec<Finding>,
) {
    let tool = t.tool;
    let name = tool.name.as_str();
    let d = tool.description.as_str();
    let len = d.chars().count();
    if len < 40 {
        out.push(finding(rule("TP-D001"), t, "description", format!("description has {len} characters; say what the tool does, when to use it and what it returns"), None));
    }
    if len > 1024 {
        out.push(finding(
            rule("TP-D002"),
            t,
            "description",
            format!("description has {len} characters; providers truncate at 1024"),
            None,
        ));
    }
    if !crate::text::has_content_word(d) {
        let what = if crate::text::words(d).is_empty() {
            "description has no words"
        } else {
            "description has only stop words"
        };
        let reach = if crate::text::has_content_word(name) {
            "search and discovery can match this tool only on its name and parameter names"
                .to_string()
        } else {
            format!("its name `{name}` has none either, so search finds it only by its exact name")
        };
        out.push(finding(
            rule(NO_CONTENT_WORDS),
            t,
            "description",
            format!("{what}: no content word to search on; {reach}; say what the tool does"),
            None,
        ));
    }
    let lower = d.to_lowercase();
    if let Some(sib) = similar_sibling(t, catalog)
        && !GUIDANCE.iter().any(|g| lower.contains(g))
    {
        out.push(finding(
            rule("TP-D003"),
            t,
            "description",
            format!("`{sib}` is similar; add \"Use when …\" and \"Do not use for … (use {sib})\""),
            None,
        ));
    }
    for other in all_names.iter().filter(|o| **o != name && o.len() > 6) {
        if let Some(pos) = d.find(*other) {
            let sentence_start = d[..pos].rfind(['.', '!', '?']).map(|p| p + 1).unwrap_or(0);
            let sentence = d[sentence_start..pos].to_lowercase();
            let referral = [
                "use ", "not ", "instead", "prefer", "see ", "(", "than ", "with ", "after ",
                "before ", "from ", "by ",
            ]
            .iter()
            .any(|k| sentence.contains(k));
            if !referral {
                out.push(finding(rule("TP-D004"), t, "description", format!("describes `{other}`; refer to other tools only to disambiguate (\"Do not use for …, use {other}\")"), None));
            }
        }
    }
}

/// A sibling in the same server whose name shares the object words.
fn similar_sibling(t: &ToolRef<'_>, catalog: &Catalog) -> Option<String> {
    let words = name_words(&t.tool.name);
    let objects: Vec<&String> = words.iter().skip(1).filter(|w| w.len() > 2).collect();
    let server = catalog.server(&t.server.name)?;
    server
        .categories
        .iter()
        .flat_map(|c| c.tools.iter())
        .filter(|o| o.id != t.tool.id)
        .find(|o| {
            let ow = name_words(&o.name);
            objects.iter().any(|w| ow.iter().skip(1).any(|x| x == *w))
        })
        .map(|o| o.name.clone())
}
