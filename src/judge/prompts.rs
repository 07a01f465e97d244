//! The judge's prompt set: plain template files (`prompts/judge/` in the repository, compiled in as the
//! defaults), any of which `--judge-prompts DIR` replaces by a file of the same name. The set's digest
//! (over every file's name and text) goes into each judgement and into `run.json`, so verdicts asked
//! with different prompts are never compared as if they were the same measurement.
//!
//! Templates hold `{{query}}`, `{{answer}}`, `{{process}}` (pass-rate) and `{{claim}}` (claims); each is
//! replaced by its text as is (the texts are untrusted, the templates fence them in tags and tell the
//! judge to treat them as data). The pass-rate templates get no expected facts: StableToolBench's
//! evaluator judges from the query, the answer and the process only, so a template asking for
//! `{{claims}}` or `{{claim}}` there is refused rather than sent with the placeholder unfilled.
//!
//! Nothing in the directory is passed over in silence: a file that is none of the template names (a
//! misspelt `claims.txt`), a template name that is not a readable file, and a `{{placeholder}}` the
//! template is not filled with are errors naming the file and listing what is valid. Only hidden files
//! (an editor's `.claim.txt.swp`) are not read.

use crate::error::InputError;
use sha2::{Digest, Sha256};
use std::path::Path;

/// The files of a prompt set, with the compiled-in defaults.
pub const FILES: [(&str, &str); 4] = [
    (ANSWER_STATUS, include_str!("../../prompts/judge/answer_status.txt")),
    (TASK_SOLVED, include_str!("../../prompts/judge/task_solved.txt")),
    (CLAIM, include_str!("../../prompts/judge/claim.txt")),
    (GIVE_UP, include_str!("../../prompts/judge/give_up.txt")),
];

pub const ANSWER_STATUS: &str = "answer_status.txt";
pub const TASK_SOLVED: &str = "task_solved.txt";
pub const CLAIM: &str = "claim.txt";
pub const GIVE_UP: &str = "give_up.txt";

/// The placeholders each template must hold (a template without its answer would grade nothing).
const NEEDS: [(&str, &[&str]); 3] = [
    (ANSWER_STATUS, &["{{query}}", "{{answer}}"]),
    (TASK_SOLVED, &["{{query}}", "{{answer}}", "{{process}}"]),
    (CLAIM, &["{{claim}}", "{{answer}}"]),
];

/// Placeholders a template may not hold: the pass-rate questions are asked without expected facts.
const FORBIDS: [(&str, &[&str]); 2] =
    [(ANSWER_STATUS, &["{{claims}}", "{{claim}}"]), (TASK_SOLVED, &["{{claims}}", "{{claim}}"])];

/// The values each template is filled with (`crate::judge` renders the pass-rate questions with the
/// query, answer and process, a claim question with the query, answer and claim). Any other
/// `{{name}}` would reach the judge verbatim.
pub const FILLED: [(&str, &[&str]); 3] = [
    (ANSWER_STATUS, &["query", "answer", "process"]),
    (TASK_SOLVED, &["query", "answer", "process"]),
    (CLAIM, &["query", "answer", "claim"]),
];

/// The `{{name}}` placeholders of `text` (names of letters, digits, `_`, `.` and `-`), in order.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end)
                if end > 0
                    && after[..end]
                        .chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-')) =>
            {
                out.push(&after[..end]);
                rest = &after[end + 2..];
            }
            _ => rest = after,
        }
    }
    out
}

/// The file names of a prompt set, for messages.
fn file_names() -> String {
    FILES.map(|(n, _)| n).join(", ")
}

/// Every entry of a prompt directory is a template name (hidden files aside).
fn check_entries(dir: &Path) -> Result<(), InputError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        InputError::new(dir, format!("cannot read the judge prompt directory: {e}"))
            .field("--judge-prompts")
    })?;
    for entry in entries {
        let entry = entry.map_err(|e| {
            InputError::new(dir, format!("cannot read the judge prompt directory: {e}"))
                .field("--judge-prompts")
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || FILES.iter().any(|(n, _)| *n == name) {
            continue;
        }
        return Err(InputError::new(
            entry.path(),
            format!(
                "is not a judge prompt file, so it would not be used; the files are {}",
                file_names()
            ),
        )
        .field("--judge-prompts"));
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq)]
pub struct PromptSet {
    pub answer_status: String,
    pub task_solved: String,
    pub claim: String,
    /// Lower-case phrases: an answer starting with one gives up.
    pub give_up: Vec<String>,
    /// Hex digest of the set (16 hex digits of SHA-256).
    pub digest: String,
    /// Where each file came from: `built-in` or the path read.
    pub sources: Vec<(String, String)>,
}

impl PromptSet {
    /// The built-in set, with the files found in `dir` (when given) in place of the defaults.
    pub fn load(dir: Option<&Path>) -> Result<PromptSet, InputError> {
        if let Some(d) = dir {
            if !d.is_dir() {
                let what = if d.exists() { "is not a directory" } else { "does not exist" };
                return Err(InputError::new(d, format!("the judge prompt directory {what}"))
                    .field("--judge-prompts"));
            }
            check_entries(d)?;
        }
        let mut texts = Vec::new();
        let mut sources = Vec::new();
        let mut h = Sha256::new();
        for (name, default) in FILES {
            // `symlink_metadata`: a dangling link or a directory under a template's name is an error,
            // not a reason to fall back to the built-in template.
            let (text, source) = match dir
                .map(|d| d.join(name))
                .filter(|p| p.symlink_metadata().is_ok())
            {
                Some(p) => {
                    if !p.is_file() {
                        return Err(InputError::new(&p, "is not a readable file; the judge prompt would be the built-in one instead").field("--judge-prompts"));
                    }
                    (
                        crate::error::read_text(&p, "the template")
                            .map_err(|e| e.field("--judge-prompts"))?,
                        p.display().to_string(),
                    )
                }
                None => (default.to_string(), "built-in".to_string()),
            };
            if let Some((_, needs)) = NEEDS.iter().find(|(n, _)| *n == name) {
                for placeholder in needs.iter() {
                    if !text.contains(placeholder) {
                        return Err(InputError::new(
                            &source,
                            format!("the template lacks {placeholder}; the judge would not see it"),
                        )
                        .field(name));
                    }
                }
            }
            if let Some((_, forbids)) = FORBIDS.iter().find(|(n, _)| *n == name) {
                for placeholder in forbids.iter() {
                    if text.contains(placeholder) {
                        return Err(InputError::new(
                            &source,
                            format!("the template holds {placeholder}, but the pass-rate questions show no expected facts (as StableToolBench's evaluator: query, answer and process only); remove it"),
                        )
                        .field(name));
                    }
                }
            }
            if let Some((_, filled)) = FILLED.iter().find(|(n, _)| *n == name)
                && let Some(unknown) = placeholders(&text).into_iter().find(|p| !filled.contains(p))
            {
                let valid: Vec<String> = filled.iter().map(|p| format!("{{{{{p}}}}}")).collect();
                return Err(InputError::new(&source, format!("{{{{{unknown}}}}} is no placeholder of this template (it would reach the judge as it is); its placeholders are {}", valid.join(", "))).field(name));
            }
            h.update(name.as_bytes());
            h.update([0]);
            h.update(text.as_bytes());
            h.update([0]);
            sources.push((name.to_string(), source));
            texts.push(text);
        }
        let digest: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
        let give_up = texts[3]
            .lines()
            .map(|l| l.trim().to_lowercase())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        Ok(PromptSet {
            answer_status: texts[0].clone(),
            task_solved: texts[1].clone(),
            claim: texts[2].clone(),
            give_up,
            digest,
            sources,
        })
    }

    /// `true` when `answer` gives up (starts with one of the give-up phrases, case and surrounding
    /// space ignored).
    pub fn gives_up(&self, answer: &str) -> bool {
        let a = answer.trim().to_lowercase();
        self.give_up.iter().any(|p| a.starts_with(p.as_str()))
    }
}

/// `template` with each `{{name}}` of `values` replaced. One pass over the template, so a value that
/// itself contains `{{answer}}` is not expanded again.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}").map(|end| (&after[..end], end)) {
            Some((name, end)) if values.iter().any(|(n, _)| *n == name) => {
                out.push_str(
                    values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap_or_default(),
                );
                rest = &after[end + 2..];
            }
            _ => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_outside_a_templates_values_is_refused() {
        // Each template × a name it is not filled with, anywhere in the text: refused, naming it and
        // listing the valid ones; each name it is filled with: accepted.
        let needs = |file: &str| {
            NEEDS.iter().find(|(n, _)| *n == file).map(|(_, p)| p.join(" ")).unwrap_or_default()
        };
        for (file, filled) in FILLED {
            for unknown in ["questoin", "Query", "answers", "tool_calls", "x.y", "a-b", "claim_1"] {
                for at in [0, 1] {
                    let dir = tempfile::tempdir().unwrap();
                    let text = if at == 0 {
                        format!("{{{{{unknown}}}}} {}", needs(file))
                    } else {
                        format!("{} then {{{{{unknown}}}}}.", needs(file))
                    };
                    std::fs::write(dir.path().join(file), &text).unwrap();
                    let e = PromptSet::load(Some(dir.path())).unwrap_err().to_string();
                    assert!(
                        e.contains(&format!("{{{{{unknown}}}}}")) && e.contains(file),
                        "{file} {unknown}: {e}"
                    );
                    for p in filled.iter() {
                        assert!(e.contains(&format!("{{{{{p}}}}}")), "{file}: lists {p}: {e}");
                    }
                }
            }
            for p in filled.iter() {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join(file), format!("{} {{{{{p}}}}}", needs(file)))
                    .unwrap();
                PromptSet::load(Some(dir.path())).unwrap();
            }
        }
        // Braces that are not a placeholder stay text.
        assert_eq!(placeholders("JSON: {\"a\": {}} {{ not one }} {{}} {{ok}}"), ["ok"]);
    }

    #[test]
    fn misnamed_and_unreadable_templates_are_errors_not_the_built_in() {
        for bad in ["claims.txt", "Claim.txt", "answer_status.md", "README"] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(bad), "{{claim}} {{answer}}").unwrap();
            let e = PromptSet::load(Some(dir.path())).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("claim.txt, give_up.txt"), "{bad}: {e}");
        }
        for (name, _) in FILES {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join(name)).unwrap();
            assert!(
                PromptSet::load(Some(dir.path())).unwrap_err().to_string().contains(name),
                "{name} as a directory"
            );
            let dir = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join(name)).unwrap();
            assert!(
                PromptSet::load(Some(dir.path())).unwrap_err().to_string().contains(name),
                "{name} as a dangling link"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".claim.txt.swp"), "").unwrap();
        assert_eq!(
            PromptSet::load(Some(dir.path())).unwrap().digest,
            PromptSet::load(None).unwrap().digest,
            "hidden files are not templates"
        );
        let file = dir.path().join(".claim.txt.swp");
        assert!(
            PromptSet::load(Some(&file)).unwrap_err().to_string().contains("is not a directory")
        );
    }

    #[test]
    fn values_are_not_expanded_twice() {
        let out = render(
            "Q: {{query}} A: {{answer}} {{other}}",
            &[("query", "say {{answer}}"), ("answer", "42")],
        );
        assert_eq!(out, "Q: say {{answer}} A: 42 {{other}}");
    }

    #[test]
    fn built_in_set_loads_and_an_override_changes_the_digest() {
        let built_in = PromptSet::load(None).unwrap();
        assert!(built_in.gives_up("  None of the available tools can do this."));
        assert!(!built_in.gives_up("The repository was created."));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CLAIM),
            "Does {{answer}} state {{claim}}? JSON with claim_status.",
        )
        .unwrap();
        let custom = PromptSet::load(Some(dir.path())).unwrap();
        assert_ne!(custom.digest, built_in.digest);
        assert_eq!(custom.answer_status, built_in.answer_status);
        std::fs::write(dir.path().join(ANSWER_STATUS), "no placeholders").unwrap();
        let e = PromptSet::load(Some(dir.path())).unwrap_err();
        assert!(e.to_string().contains("{{query}}"), "{e}");
        // Pass-rate templates that ask for expected facts are refused, in either file, for either name.
        for (file, extra) in [
            (ANSWER_STATUS, "{{claims}}"),
            (TASK_SOLVED, "{{claims}}"),
            (ANSWER_STATUS, "{{claim}}"),
            (TASK_SOLVED, "{{claim}}"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(
                dir.path().join(file),
                format!("{{{{query}}}} {{{{answer}}}} {{{{process}}}} facts: {extra}"),
            )
            .unwrap();
            let e = PromptSet::load(Some(dir.path())).unwrap_err().to_string();
            assert!(e.contains(extra) && e.contains(file), "{file} {extra}: {e}");
        }
    }
}
