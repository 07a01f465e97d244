//! The mock endpoint as a judge: a deterministic stand-in for an LLM judge, so judged runs can be
//! tested offline. **It is a test double, not a judge.** A request is a judge request when it offers no
//! tools and its last user message asks for `answer_status`, `task_status` or `claim_status` (as
//! toolpick's prompts do); it reads the tagged sections of the prompt (`<answer>`, `<claim>`,
//! `<expected_facts>`, `<process>`) and decides by words:
//!
//! - a fact is **stated** when every content word of it (lower-cased letters and digits, three
//!   characters or more or all digits, minus a few stop words) appears in the answer; **partly** when at
//!   least half do; else **not**;
//! - `claim_status`: the claim's verdict (fulfilled / partly / not);
//! - `answer_status`: with expected facts, Solved when all are stated, Unsolved when none is (even
//!   partly), else Unsure; without facts, Unsure;
//! - `task_status`: with expected facts, Solved when all are stated, else Unsolved; without, Solved
//!   when the answer states at least half the content words of some tool result of the process that is
//!   not an error, else Unsolved.

use serde_json::json;
use std::collections::HashSet;

const STOP: [&str; 24] = [
    "the", "and", "for", "with", "was", "are", "has", "have", "that", "this", "from", "its", "our", "your", "into", "not", "all", "any", "but",
    "who", "what", "which", "there", "their",
];

/// The content words of a text.
pub fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(|w| w.to_lowercase())
        .filter(|w| (w.chars().count() >= 3 || (!w.is_empty() && w.chars().all(|c| c.is_ascii_digit()))) && !STOP.contains(&w.as_str()))
        .collect()
}

/// How much of `fact` the answer states: 1 all, 0.5 at least half, 0 less.
pub fn stated(fact: &str, answer: &HashSet<String>) -> f64 {
    let want = words(fact);
    if want.is_empty() {
        return 1.0;
    }
    let have = want.iter().filter(|w| answer.contains(*w)).count();
    if have == want.len() {
        1.0
    } else if 2 * have >= want.len() {
        0.5
    } else {
        0.0
    }
}

/// The text between `<tag>` and `</tag>` (the last such section: templates put the data last).
fn section<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.rfind(&open)? + open.len();
    let end = start + text[start..].find(&close)?;
    Some(text[start..end].trim())
}

/// The expected facts listed in a prompt (`- fact` lines; the reference answer is not a fact).
fn facts(prompt: &str) -> Vec<String> {
    section(prompt, "expected_facts")
        .map(|s| s.lines().filter_map(|l| l.trim().strip_prefix("- ")).map(String::from).collect())
        .unwrap_or_default()
}

/// The reply to a judge request, or `None` when `prompt` is not one.
pub fn reply(prompt: &str) -> Option<String> {
    let key = ["claim_status", "task_status", "answer_status"].into_iter().find(|k| prompt.contains(&format!("\"{k}\"")))?;
    let answer = words(section(prompt, "answer")?);
    let verdict = match key {
        "claim_status" => {
            let claim = section(prompt, "claim")?;
            let s = stated(claim, &answer);
            let v = if s == 1.0 { "fulfilled" } else if s > 0.0 { "partly" } else { "not" };
            json!({"reason": format!("mock judge: {} of the claim's words are in the answer", if s == 1.0 { "all" } else if s > 0.0 { "half or more" } else { "fewer than half" }), "claim_status": v})
        }
        "answer_status" => {
            let facts = facts(prompt);
            let scores: Vec<f64> = facts.iter().map(|f| stated(f, &answer)).collect();
            let full = scores.iter().filter(|s| **s == 1.0).count();
            let v = if facts.is_empty() {
                "Unsure"
            } else if full == facts.len() {
                "Solved"
            } else if scores.iter().all(|s| *s == 0.0) {
                "Unsolved"
            } else {
                "Unsure"
            };
            json!({"reason": format!("mock judge: {full} of {} expected facts stated", facts.len()), "answer_status": v})
        }
        _ => {
            let facts = facts(prompt);
            let solved = if facts.is_empty() {
                let process = section(prompt, "process").unwrap_or_default();
                process
                    .lines()
                    .filter_map(|l| l.strip_prefix("result: "))
                    .filter(|r| !r.contains("\"error\""))
                    .any(|r| stated(r, &answer) >= 0.5 && !words(r).is_empty())
            } else {
                facts.iter().all(|f| stated(f, &answer) == 1.0)
            };
            json!({"reason": "mock judge: checked the answer against the process", "task_status": if solved { "Solved" } else { "Unsolved" }})
        }
    };
    Some(verdict.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_stated_by_their_words() {
        let answer = words("Done. What the tools returned:\n- get_repository: {\"name\": \"payments-service\", \"visibility\": \"private\", \"default_branch\": \"main\"}");
        assert_eq!(stated("payments-service is private", &answer), 1.0);
        assert_eq!(stated("The default branch is develop", &answer), 0.5, "default, branch of default, branch, develop");
        assert_eq!(stated("It was archived in 2024", &answer), 0.0);
    }

    #[test]
    fn judge_requests_get_verdicts_and_others_none() {
        let p = "grade\n<expected_facts>\n- ledger-rs is in Rust\n- billing-api\n</expected_facts>\n<answer>\nledger-rs (Rust) and billing-api\n</answer>\nReply {\"answer_status\": ...}";
        assert!(reply(p).unwrap().contains("\"Solved\""));
        let p2 = p.replace("billing-api\n</answer>", "nothing else\n</answer>");
        assert!(reply(&p2).unwrap().contains("\"Unsure\""), "one of two facts");
        assert_eq!(reply("What is the weather in Oslo?"), None);
        let c = "<claim>\nthe invoice total is 120 EUR\n</claim>\n<answer>\nTotal: 120 EUR for the invoice\n</answer> {\"claim_status\": ...}";
        assert!(reply(c).unwrap().contains("\"fulfilled\""));
    }
}
