//! Tool calls written as text.
//!
//! Many small local models put the call in the message `content` instead of `tool_calls`: Hermes-style
//! `<tool_call>{...}</tool_call>` tags, a ```json fenced object, or a bare `{"name": ..., "arguments":
//! {...}}` (seen with Qwen2.5-Coder-0.5B on llama.cpp's server). With `parse_text_calls` on, the openai
//! backend recovers such calls here; each recovered call is marked `from_text` in the trial record, so a
//! report can always tell which path produced it.

use serde_json::Value;

/// A call recovered from text: function name and JSON argument text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    pub name: String,
    pub arguments: String,
}

fn from_value(v: &Value, out: &mut Vec<TextCall>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| from_value(i, out)),
        Value::Object(m) => {
            // {"function": {"name", "arguments"}} (OpenAI shape) or {"name", "arguments"|"parameters"}.
            let inner = m.get("function").filter(|f| f.is_object()).unwrap_or(v);
            let Some(name) = inner.get("name").and_then(Value::as_str) else { return };
            let args = inner
                .get("arguments")
                .or_else(|| inner.get("parameters"))
                .cloned()
                .unwrap_or(Value::Object(Default::default()));
            let arguments = match args {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.push(TextCall { name: name.to_string(), arguments });
        }
        _ => {}
    }
}

/// Every complete top-level JSON value starting at a `{` or `[` in `text`, in order.
fn json_values(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'{' || bytes[i] == b'[' {
            let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = stream.next() {
                i += stream.byte_offset();
                out.push(v);
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Parse tool calls out of message text. Returns nothing when the text holds no recognisable call.
pub fn parse_text_calls(content: &str) -> Vec<TextCall> {
    let mut out = Vec::new();
    // 1. Hermes tags.
    let mut rest = content;
    let mut tagged = false;
    while let Some(start) = rest.find("<tool_call>") {
        tagged = true;
        let after = &rest[start + "<tool_call>".len()..];
        let end = after.find("</tool_call>").unwrap_or(after.len());
        for v in json_values(&after[..end]) {
            from_value(&v, &mut out);
        }
        rest = &after[end..];
    }
    if tagged {
        return out;
    }
    // 2. Fenced blocks, then 3. bare JSON anywhere in the text.
    let mut fenced = false;
    let mut rest = content;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map(|n| n + 1).unwrap_or(0);
        let Some(end) = after[body_start..].find("```") else { break };
        fenced = true;
        for v in json_values(&after[body_start..body_start + end]) {
            from_value(&v, &mut out);
        }
        rest = &after[body_start + end + 3..];
    }
    if fenced {
        return out;
    }
    for v in json_values(content) {
        from_value(&v, &mut out);
    }
    out
}

/// The call a message cut off by the token limit was writing when it stopped, if any: the text ends
/// inside an unclosed `<tool_call>` tag, or inside a ``` fence or a bare JSON object that names a
/// function (`"name"`). Only asked about messages that were cut off (`finish_reason: length`), so an
/// incomplete object in a finished message stays what it was (text). `arguments` is the cut text
/// itself, which never parses.
pub fn cut_call(content: &str) -> Option<TextCall> {
    let fragment = if let Some(start) = content.rfind("<tool_call>") {
        let after = &content[start + "<tool_call>".len()..];
        if after.contains("</tool_call>") {
            return None;
        }
        // An open tag is a call whatever follows it (even nothing).
        return Some(partial(after.trim()));
    } else if content.matches("```").count() % 2 == 1 {
        let after = &content[content.rfind("```").map(|i| i + 3).unwrap_or(0)..];
        let body = after.find('\n').map(|n| &after[n + 1..]).unwrap_or("");
        open_json(body)?
    } else {
        open_json(content)?
    };
    fragment.contains("\"name\"").then(|| partial(fragment))
}

/// The first JSON value in `text` that the end of the text interrupts (complete values are skipped).
fn open_json(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' || bytes[i] == b'[' {
            let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(_)) => {
                    i += stream.byte_offset();
                    continue;
                }
                Some(Err(e)) if e.is_eof() => return Some(&text[i..]),
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// A cut call: the function name as far as it was written (empty when the cut came first).
fn partial(fragment: &str) -> TextCall {
    let name = fragment
        .find("\"name\"")
        .map(|k| fragment[k + 6..].trim_start())
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|rest| rest.trim_start().strip_prefix('"'))
        .map(|rest| rest.split('"').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    TextCall { name, arguments: fragment.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, String)> {
        parse_text_calls(text).into_iter().map(|c| (c.name, c.arguments)).collect()
    }

    #[test]
    fn bare_json_object() {
        assert_eq!(
            names(r#"{"name": "get_weather", "arguments": {"city": "Pune"}}"#),
            vec![("get_weather".into(), r#"{"city":"Pune"}"#.into())]
        );
    }

    #[test]
    fn fenced_block_with_prose_around() {
        let t = "Sure! I'll check.\n```json\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}\n```\nDone.";
        assert_eq!(names(t), vec![("get_weather".into(), r#"{"city":"Oslo"}"#.into())]);
    }

    #[test]
    fn hermes_tags_several_calls_and_string_arguments() {
        let t = "<tool_call>\n{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 1}\"}\n</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
        assert_eq!(names(t), vec![("a".into(), r#"{"x": 1}"#.into()), ("b".into(), "{}".into())]);
    }

    #[test]
    fn openai_shape_and_arrays() {
        let t = r#"[{"type": "function", "function": {"name": "a", "arguments": {"k": "v"}}}, {"name": "b", "arguments": {}}]"#;
        assert_eq!(names(t).len(), 2);
    }

    #[test]
    fn plain_prose_is_not_a_call() {
        assert!(names("I can't do that with the tools I have.").is_empty());
        assert!(
            names("The result was {\"temp\": 21}.").is_empty(),
            "an object without a name is not a call"
        );
    }

    #[test]
    fn a_call_cut_off_mid_way_is_found_with_its_name() {
        let cut = |t: &str| cut_call(t).map(|c| c.name);
        assert_eq!(
            cut(r#"{"name": "get_weather", "arguments": {"city": "Pu"#),
            Some("get_weather".into())
        );
        assert_eq!(
            cut("Let me check.\n```json\n{\"name\": \"get_wea"),
            Some("get_wea".into()),
            "a cut name is kept as far as it went"
        );
        assert_eq!(
            cut(
                "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"na"
            ),
            Some(String::new())
        );
        assert_eq!(
            cut("<tool_call>"),
            Some(String::new()),
            "an open tag is a call even before its JSON"
        );
        // A complete call first, then the cut one: only the cut one is returned.
        assert_eq!(
            cut(r#"{"name": "a", "arguments": {}} {"name": "b", "arguments": {"x": "#),
            Some("b".into())
        );
        // The cut text never parses as arguments.
        let c = cut_call(r#"{"name": "a", "arguments": {"x": 1"#).unwrap();
        assert!(serde_json::from_str::<Value>(&c.arguments).is_err());
    }

    #[test]
    fn finished_or_nameless_text_has_no_cut_call() {
        assert_eq!(cut_call(r#"{"name": "a", "arguments": {}}"#), None, "complete");
        assert_eq!(cut_call("<tool_call>{\"name\": \"a\"}</tool_call>"), None, "closed tag");
        assert_eq!(
            cut_call("The temperature is {\"temp\": 2"),
            None,
            "an object without a name is not a call"
        );
        assert_eq!(cut_call("I would need more information to"), None, "plain prose");
        assert_eq!(cut_call("```python\nprint({'name': 1"), None, "no JSON name key");
    }
}
