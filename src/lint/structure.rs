//! Catalog-structure rules (TP-D006 for servers and categories, TP-C001): what progressive discovery
//! ranks by — server and category descriptions — and a catalog with more than one server to choose
//! between.

use super::{Finding, NO_CONTENT_WORDS, RuleInfo, rule};
use crate::catalog::{Catalog, Tool};

/// Servers and categories: a description without content words leaves progressive discovery (which
/// ranks servers and categories by their descriptions) nothing to match (TP-D006); a catalog of one
/// server makes discovery's first step a formality (TP-C001). Reported at the server's file, at its
/// first tool's line for a category.
pub(super) fn lint_structure(catalog: &Catalog, out: &mut Vec<Finding>) {
    let structural =
        |r: RuleInfo, tool: String, field: &str, message: String, at: Option<&Tool>| Finding {
            rule: r.id,
            name: r.name,
            severity: r.severity,
            tool,
            field: field.into(),
            message,
            suggestion: None,
            file: at.map(|t| t.origin.file.clone()).unwrap_or_default(),
            line: at.map(|t| t.origin.line).unwrap_or(0),
        };
    let no_words = |d: &str| {
        if crate::text::words(d).is_empty() { "has no words" } else { "has only stop words" }
    };
    for server in &catalog.servers {
        let first = server.categories.iter().flat_map(|c| c.tools.first()).next();
        if !crate::text::has_content_word(&server.description) {
            let message = format!(
                "the description of server `{}` {}: progressive discovery ranks servers by it and has nothing to match; say what the server is for",
                server.name,
                no_words(&server.description)
            );
            out.push(Finding {
                line: first.map_or(0, |_| 1),
                ..structural(
                    rule(NO_CONTENT_WORDS),
                    format!("server:{}", server.name),
                    "description",
                    message,
                    first,
                )
            });
        }
        for category in &server.categories {
            if !crate::text::has_content_word(&category.description) {
                let message = format!(
                    "the description of category `{}` {}: discovery lists categories by it and has nothing to match; say what its tools do",
                    category.name,
                    no_words(&category.description)
                );
                out.push(structural(
                    rule(NO_CONTENT_WORDS),
                    format!("category:{}/{}", server.name, category.name),
                    "description",
                    message,
                    category.tools.first(),
                ));
            }
        }
    }
    if let [server] = catalog.servers.as_slice() {
        let first = server.categories.iter().flat_map(|c| c.tools.first()).next();
        let message = format!(
            "`{}` is the catalog's only server: progressive discovery's first step has nothing to choose between, and the layout's result rests on how the server is described",
            server.name
        );
        out.push(Finding {
            line: first.map_or(0, |_| 1),
            ..structural(rule("TP-C001"), format!("server:{}", server.name), "", message, first)
        });
    }
}
