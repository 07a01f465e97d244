//! Description variants: the same tools, described well or badly.
//!
//! - `good`: the catalog as written;
//! - `bad`: every [`Degrade`] operator applied;
//! - `op:<operator>`: one operator alone; `ablate` expands to one such variant per operator;
//! - `file:<dir>`: a hand-written variant (e.g. `registries/workspace-realistic-bad`, or a user's fixed
//!   `good+fix` version) whose tools name the id of the written tool they describe.
//!
//! Tool ids (and so ground truth) and the schema the simulated tool enforces never change; both layouts
//! are built from the same variant catalog, so they see exactly the same text.

pub use super::degrade::{Degrade, cryptic_name, name_words};
use super::{Catalog, load_catalog};
use crate::error::InputError;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Derived from the written catalog by operators (none for `good`).
    Operators(Vec<Degrade>),
    /// Read from a directory.
    File(PathBuf),
}

/// A description variant: a name and how to produce it from the written catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub name: String,
    pub source: Source,
}

impl Variant {
    /// `good`, `bad`, `op:<operator>` or `file:<dir>` (`ablate` is expanded by [`expand`]).
    pub fn parse(name: &str) -> Option<Variant> {
        let source = match name {
            "good" => Source::Operators(vec![]),
            "bad" => Source::Operators(Degrade::ALL.to_vec()),
            other => match other.strip_prefix("file:") {
                Some(dir) => Source::File(PathBuf::from(dir)),
                None => Source::Operators(vec![Degrade::from_name(other.strip_prefix("op:")?)?]),
            },
        };
        Some(Variant { name: name.to_string(), source })
    }

    /// The operators of an operator variant (empty for files).
    pub fn operators(&self) -> &[Degrade] {
        match &self.source {
            Source::Operators(o) => o,
            Source::File(_) => &[],
        }
    }

    /// A short label for reports: the directory name for file variants.
    pub fn label(&self) -> String {
        match &self.source {
            Source::File(dir) => dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| self.name.clone()),
            Source::Operators(_) => self.name.clone(),
        }
    }

    /// The catalog as this variant shows it. File variants must describe exactly the written tools.
    pub fn apply(&self, catalog: &Catalog) -> Result<Catalog, InputError> {
        match &self.source {
            Source::Operators(ops) => {
                let mut out = catalog.clone();
                for op in ops {
                    op.apply(&mut out);
                }
                Ok(out)
            }
            Source::File(dir) => {
                let shown = load_catalog(dir).map_err(|e| {
                    e.0.into_iter().next().unwrap_or_else(|| InputError::new(dir, "cannot load"))
                })?;
                for t in catalog.tools() {
                    let Some(v) = shown.get(&t.tool.id) else {
                        return Err(InputError::new(
                            dir,
                            format!(
                                "variant does not describe tool `{}`; give one of its tools \"id\": \"{}\"",
                                t.tool.id, t.tool.id
                            ),
                        ));
                    };
                    let names = |c: &Catalog, id: &str| -> Vec<String> {
                        c.get(id)
                            .map(|r| r.tool.properties().map(|(k, _)| k.clone()).collect())
                            .unwrap_or_default()
                    };
                    if names(&shown, &t.tool.id) != names(catalog, &t.tool.id) {
                        return Err(InputError::new(&v.tool.origin.file, format!("tool `{}` must keep the parameters of the written tool (names and order)", t.tool.id))
                            .at_line(v.tool.origin.line));
                    }
                }
                if shown.tool_count() != catalog.tool_count() {
                    return Err(InputError::new(
                        dir,
                        format!(
                            "variant has {} tools, the catalog {}",
                            shown.tool_count(),
                            catalog.tool_count()
                        ),
                    ));
                }
                Ok(shown)
            }
        }
    }
}

/// Expand variant names: `ablate` becomes `op:<operator>` for every operator.
pub fn expand(names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for n in names {
        if n == "ablate" {
            out.extend(Degrade::ALL.iter().map(|d| format!("op:{}", d.name())));
        } else {
            out.push(n.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(n.clone()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_expand() {
        assert_eq!(Variant::parse("good").unwrap().operators(), &[] as &[Degrade]);
        assert_eq!(
            Variant::parse("op:merge_siblings").unwrap().operators(),
            &[Degrade::MergeSiblings]
        );
        assert_eq!(Variant::parse("file:registries/x").unwrap().label(), "x");
        assert!(Variant::parse("op:nope").is_none());
        let e = expand(&["good".into(), "ablate".into(), "good".into()]);
        assert_eq!(e.len(), 1 + Degrade::ALL.len());
        assert_eq!(e[1], "op:drop_guidance");
    }
}
