//! Reading a judge's reply: the JSON object the prompts ask for, found wherever it is in the text
//! (models wrap it in prose or code fences), with the status spelled as models spell it. A reply that
//! holds no readable verdict is `None`: the caller asks again, then records a judge error — never a
//! silent "Unsolved".

use crate::record::judgement::{ClaimStatus, Status};
use serde_json::Value;

/// The first JSON object in `text` that has `key`.
fn object_with(text: &str, key: &str) -> Option<Value> {
    for (i, _) in text.match_indices('{') {
        let mut values = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v @ Value::Object(_))) = values.next()
            && v.get(key).is_some()
        {
            return Some(v);
        }
    }
    None
}

fn normal(s: &str) -> String {
    s.trim().trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase().replace(['_', '-'], " ")
}

fn status_word(s: &str) -> Option<Status> {
    match normal(s).as_str() {
        "solved" => Some(Status::Solved),
        "unsolved" | "not solved" => Some(Status::Unsolved),
        "unsure" | "uncertain" => Some(Status::Unsure),
        _ => None,
    }
}

fn claim_word(s: &str) -> Option<ClaimStatus> {
    match normal(s).as_str() {
        "fulfilled" | "yes" | "fully fulfilled" => Some(ClaimStatus::Fulfilled),
        "partly" | "partial" | "partially" | "partially fulfilled" | "partly fulfilled" => {
            Some(ClaimStatus::Partly)
        }
        "not" | "no" | "not fulfilled" | "unfulfilled" => Some(ClaimStatus::Not),
        _ => None,
    }
}

fn reason_of(v: &Value) -> String {
    v.get("reason")
        .map(|r| r.as_str().map(String::from).unwrap_or_else(|| r.to_string()))
        .unwrap_or_default()
}

/// A status under `key` (`answer_status`, `task_status`) and the reason, or the reply as one bare word.
pub fn status(reply: &str, key: &str) -> Option<(Status, String)> {
    match object_with(reply, key) {
        Some(v) => v[key].as_str().and_then(status_word).map(|s| (s, reason_of(&v))),
        None => status_word(reply).map(|s| (s, String::new())),
    }
}

/// A claim verdict under `claim_status` and the reason, or the reply as one bare word.
pub fn claim(reply: &str) -> Option<(ClaimStatus, String)> {
    match object_with(reply, "claim_status") {
        Some(v) => v["claim_status"].as_str().and_then(claim_word).map(|s| (s, reason_of(&v))),
        None => claim_word(reply).map(|s| (s, String::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_found_in_prose_and_fences() {
        let r = "Sure.\n```json\n{\"reason\": \"lists both repos\", \"answer_status\": \"Solved\"}\n```";
        assert_eq!(status(r, "answer_status"), Some((Status::Solved, "lists both repos".into())));
        assert_eq!(
            status("{\"x\": {\"y\": 1}} then {\"answer_status\": \"unsure\"}", "answer_status")
                .map(|s| s.0),
            Some(Status::Unsure)
        );
        assert_eq!(status("Unsolved.", "answer_status").map(|s| s.0), Some(Status::Unsolved));
        assert_eq!(status("{\"answer_status\": \"maybe\"}", "answer_status"), None);
        assert_eq!(status("I think it is fine", "answer_status"), None);
        assert_eq!(
            status("{\"task_status\": \"Solved\"}", "answer_status"),
            None,
            "the other step's key is not this step's verdict"
        );
    }

    #[test]
    fn claim_verdicts_in_their_spellings() {
        assert_eq!(
            claim("{\"claim_status\": \"partially_fulfilled\", \"reason\": \"r\"}"),
            Some((ClaimStatus::Partly, "r".into()))
        );
        assert_eq!(
            claim("{\"claim_status\": \"Not fulfilled\"}").map(|c| c.0),
            Some(ClaimStatus::Not)
        );
        assert_eq!(claim("fulfilled").map(|c| c.0), Some(ClaimStatus::Fulfilled));
        assert_eq!(claim("{\"claim_status\": 1}"), None);
    }
}
