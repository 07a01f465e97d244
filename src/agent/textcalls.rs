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
            let args = inner.get("arguments").or_else(|| inner.get("parameters")).cloned().unwrap_or(Value::Object(Default::default()));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, String)> {
        parse_text_calls(text).into_iter().map(|c| (c.name, c.arguments)).collect()
    }

    #[test]
    fn bare_json_object() {
        assert_eq!(names(r#"{"name": "get_weather", "arguments": {"city": "Pune"}}"#), vec![("get_weather".into(), r#"{"city":"Pune"}"#.into())]);
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
        assert!(names("The result was {\"temp\": 21}.").is_empty(), "an object without a name is not a call");
    }
}
