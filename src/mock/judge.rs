//! The mock endpoint as a judge: a deterministic stand-in for an LLM judge, so judged runs can be
//! tested offline. **It is a test double, not a judge.** A request is a judge request when it offers no
//! tools and its last user message asks for `answer_status`, `task_status` or `claim_status` (as
//! toolpick's prompts do); it reads the tagged sections of the prompt (`<answer>`, `<claim>`,
//! `<process>`) and decides by words. Like the pass-rate prompts it is asked with, it never sees
//! expected facts: the answer check has only the query and the answer, the process check adds the
//! process.
//!
//! - a text is **stated** when every content word of it (lower-cased letters and digits, three
//!   characters or more or all digits, minus a few stop words) appears in the answer; **partly** when at
//!   least half do; else **not**;
//! - `claim_status`: the claim's verdict (fulfilled / partly / not);
//! - `answer_status`: Unsolved when the answer declines in the first person (it holds one of
//!   [`DECLINES`], case ignored), else Unsure — the answer alone cannot show that its results are real;
//! - `task_status`: Solved when the answer states at least half the content words of some tool result
//!   of the process that is not an error (holds no `"error"` key), else Unsolved.

use serde_json::json;
use std::collections::HashSet;

const STOP: [&str; 24] = [
    "the", "and", "for", "with", "was", "are", "has", "have", "that", "this", "from", "its", "our",
    "your", "into", "not", "all", "any", "but", "who", "what", "which", "there", "their",
];

/// First-person declines that make the mock's answer check Unsolved (matched lower-cased, anywhere).
pub const DECLINES: [&str; 8] = [
    "sorry",
    "i cannot",
    "i can't",
    "i could not",
    "i couldn't",
    "i was unable",
    "i am unable",
    "i'm unable",
];

/// The content words of a text.
pub fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(|w| w.to_lowercase())
        .filter(|w| {
            (w.chars().count() >= 3 || (!w.is_empty() && w.chars().all(|c| c.is_ascii_digit())))
                && !STOP.contains(&w.as_str())
        })
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

/// The reply to a judge request, or `None` when `prompt` is not one.
pub fn reply(prompt: &str) -> Option<String> {
    let key = ["claim_status", "task_status", "answer_status"]
        .into_iter()
        .find(|k| prompt.contains(&format!("\"{k}\"")))?;
    let answer = words(section(prompt, "answer")?);
    let verdict = match key {
        "claim_status" => {
            let claim = section(prompt, "claim")?;
            let s = stated(claim, &answer);
            let v = if s == 1.0 {
                "fulfilled"
            } else if s > 0.0 {
                "partly"
            } else {
                "not"
            };
            json!({"reason": format!("mock judge: {} of the claim's words are in the answer", if s == 1.0 { "all" } else if s > 0.0 { "half or more" } else { "fewer than half" }), "claim_status": v})
        }
        "answer_status" => {
            let text = section(prompt, "answer").unwrap_or_default().to_lowercase();
            let declines = DECLINES.iter().any(|d| text.contains(d));
            let v = if declines { "Unsolved" } else { "Unsure" };
            json!({"reason": format!("mock judge: {}", if declines { "the answer declines" } else { "the answer alone does not show its results are real" }), "answer_status": v})
        }
        _ => {
            let process = section(prompt, "process").unwrap_or_default();
            let solved = process
                .lines()
                .filter_map(|l| l.strip_prefix("result: "))
                .filter(|r| !r.contains("\"error\""))
                .any(|r| stated(r, &answer) >= 0.5 && !words(r).is_empty());
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
        let answer = words(
            "Done. What the tools returned:\n- get_repository: {\"name\": \"payments-service\", \"visibility\": \"private\", \"default_branch\": \"main\"}",
        );
        assert_eq!(stated("payments-service is private", &answer), 1.0);
        assert_eq!(
            stated("The default branch is develop", &answer),
            0.5,
            "default, branch of default, branch, develop"
        );
        assert_eq!(stated("It was archived in 2024", &answer), 0.0);
    }

    #[test]
    fn judge_requests_get_verdicts_and_others_none() {
        // The answer check: a first-person decline is Unsolved, anything else Unsure (whatever it claims).
        for (answer, want) in [
            ("ledger-rs (Rust) and billing-api", "Unsure"),
            ("Sorry, the repository does not exist.", "Unsolved"),
            ("I could NOT reach the server", "Unsolved"),
            ("The server could not be reached, but I retried and it worked: 3 repos.", "Unsure"),
        ] {
            let p = format!(
                "grade\n<query>\nlist repos\n</query>\n<answer>\n{answer}\n</answer>\nReply {{\"answer_status\": ...}}"
            );
            assert!(
                reply(&p).unwrap().contains(&format!("\"{want}\"")),
                "{answer}: {}",
                reply(&p).unwrap()
            );
        }
        // The process check: the answer repeats half of a result that is not an error.
        let t = |result: &str, answer: &str| {
            reply(&format!("<process>\ncall get({{}})\nresult: {result}\n</process>\n<answer>\n{answer}\n</answer> {{\"task_status\": ...}}")).unwrap()
        };
        assert!(
            t("{\"temp_c\": 21, \"sky\": \"clear\"}", "21 degrees, clear sky")
                .contains("\"Solved\"")
        );
        assert!(t("{\"temp_c\": 21, \"sky\": \"clear\"}", "It is sunny").contains("\"Unsolved\""));
        assert!(
            t("{\"error\": \"city 21 clear\"}", "21 clear").contains("\"Unsolved\""),
            "an error result proves nothing"
        );
        assert_eq!(reply("What is the weather in Oslo?"), None);
        let c = "<claim>\nthe invoice total is 120 EUR\n</claim>\n<answer>\nTotal: 120 EUR for the invoice\n</answer> {\"claim_status\": ...}";
        assert!(reply(c).unwrap().contains("\"fulfilled\""));
    }
}
