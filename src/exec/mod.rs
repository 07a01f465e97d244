//! Simulated execution of tool calls.
//!
//! A call is checked against the tool's **real** input schema (the catalog as written, whatever variant
//! the model was shown) with a JSON Schema validator. An invalid call gets a teaching error the model can
//! act on; a valid call gets the tool's mock response. Nothing here knows about layouts or scoring.
//!
//! A catalog's mock response is a template over the call's arguments (`"{{repository}}"` becomes the
//! repository the call named; the syntax is in [`crate::catalog::mock`]), so a result never contradicts
//! the call it answers. Imported tools carry upstream data and are answered verbatim
//! ([`MockMode::Static`]); every answer says which it was, and trials record it per call.
//!
//! In a live run a validated call goes to the trial's real server instead: the run installs a
//! [`LiveExecutor`] for the episode ([`LIVE`], a task-local, so layouts shared by many trials stay
//! unaware of which sandbox a call belongs to) and its answer replaces the mock.

use crate::catalog::{Catalog, MockMode, Tool, mock};
use crate::text::echo;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

pub use crate::record::Rejection;

/// Outcome of executing one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Execution {
    /// The arguments validated; `response` is the tool's mock response, rendered for these arguments
    /// unless `mock` is [`MockMode::Static`].
    Ok { response: Value, mock: MockMode },
    /// The arguments did not validate; `message` teaches the fix.
    Rejected { kind: Rejection, message: String },
    /// The arguments validated and the call went to the trial's live server: `response` is what it
    /// answered (or the policy's refusal), `call` how it went.
    Live { response: Value, call: crate::record::live::LiveCall },
}

/// Executes validated calls on a live server (one per trial; see `run::live`).
pub trait LiveExecutor: Send + Sync {
    /// Run `tool_id` (a written catalog id) with validated `arguments`; `None` when the tool is not
    /// served live (the simulator answers).
    fn execute(
        &self,
        tool_id: &str,
        arguments: &Value,
    ) -> Option<(Value, crate::record::live::LiveCall)>;
}

tokio::task_local! {
    /// The live executor of the episode being polled, if its run executes live.
    pub static LIVE: std::sync::Arc<dyn LiveExecutor>;
}

/// Validates calls against compiled schemas and answers with mock responses.
pub struct Executor {
    tools: std::sync::Arc<HashMap<String, (jsonschema::Validator, Tool)>>,
    /// Tools added for one scenario (a poisoning test), on top of the shared catalog.
    extra: HashMap<String, (jsonschema::Validator, Tool)>,
}

fn compile(tool: &Tool) -> anyhow::Result<jsonschema::Validator> {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&tool.input_schema)
        .map_err(|e| anyhow::anyhow!("schema of {} does not compile: {e}", tool.id))
}

impl Executor {
    /// Compile a validator for every tool of the written catalog (schemas were checked at load time).
    pub fn new(catalog: &Catalog) -> anyhow::Result<Self> {
        let mut tools = HashMap::new();
        for t in catalog.tools() {
            tools.insert(t.tool.id.clone(), (compile(t.tool)?, t.tool.clone()));
        }
        Ok(Executor { tools: std::sync::Arc::new(tools), extra: HashMap::new() })
    }

    /// Another handle on the same compiled catalog.
    pub fn clone_shared(&self) -> Executor {
        Executor { tools: self.tools.clone(), extra: HashMap::new() }
    }

    /// This executor plus one more tool (sharing the compiled catalog).
    pub fn with_extra(&self, tool: &Tool) -> anyhow::Result<Executor> {
        let mut extra = HashMap::new();
        extra.insert(tool.id.clone(), (compile(tool)?, tool.clone()));
        Ok(Executor { tools: self.tools.clone(), extra })
    }

    /// Execute `tool_id` with `arguments`. Unknown ids are the caller's business (layouts resolve names).
    pub fn execute(&self, tool_id: &str, arguments: &Value) -> Execution {
        let Some((validator, tool)) = self.extra.get(tool_id).or_else(|| self.tools.get(tool_id))
        else {
            return Execution::Rejected {
                kind: Rejection::ValueError,
                message: format!("Unknown tool id {tool_id}."),
            };
        };
        let Some(err) = validator.iter_errors(arguments).next() else {
            if let Ok(Some((response, call))) =
                LIVE.try_with(|live| live.execute(tool_id, arguments))
            {
                return Execution::Live { response, call };
            }
            let response = match tool.mock_mode {
                MockMode::Templated => mock::render(&tool.mock_response, arguments),
                MockMode::Static => tool.mock_response.clone(),
            };
            return Execution::Ok { response, mock: tool.mock_mode };
        };
        use jsonschema::error::ValidationErrorKind as K;
        let path = err.instance_path().to_string();
        let at = if path.is_empty() { String::new() } else { format!(" at {path}") };
        let (kind, what) = match err.kind() {
            K::Required { property } => {
                (Rejection::MissingRequired, format!("{} is required", property))
            }
            K::AdditionalProperties { unexpected } => (
                Rejection::UnexpectedParam,
                format!(
                    "unexpected parameter(s) {}; allowed: {}",
                    quote_list(unexpected),
                    allowed(tool)
                ),
            ),
            // The validator's message quotes the value it rejected: cut like every echo of a call.
            K::Type { .. } => {
                (Rejection::TypeError, format!("wrong type{at}: {}", echo(&err.to_string())))
            }
            _ => (Rejection::ValueError, format!("invalid value{at}: {}", echo(&err.to_string()))),
        };
        let example = serde_json::to_string(&example_arguments(tool)).unwrap_or_default();
        Execution::Rejected { kind, message: format!("Invalid input: {what}. Example: {example}") }
    }
}

fn quote_list(items: &[String]) -> String {
    // The names are the model's keys: each cut like any echo, and the list too.
    let list = items.iter().map(|s| format!("'{}'", echo(s))).collect::<Vec<_>>().join(", ");
    crate::text::capped(&list, 4 * crate::text::ECHO_MAX_CHARS).into_owned()
}

fn allowed(tool: &Tool) -> String {
    let names: Vec<String> = tool.properties().map(|(k, _)| k.clone()).collect();
    quote_list(&names)
}

/// A syntactically helpful example: every required parameter with a placeholder of the right shape.
pub fn example_arguments(tool: &Tool) -> Value {
    let props = tool.input_schema.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    for name in tool.required() {
        let schema = props.and_then(|p| p.get(name)).cloned().unwrap_or(Value::Null);
        out.insert(name.to_string(), example_value(&schema));
    }
    Value::Object(out)
}

fn example_value(schema: &Value) -> Value {
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|a| a.first()) {
        return first.clone();
    }
    if let Some(examples) = schema.get("examples").and_then(Value::as_array).and_then(|a| a.first())
    {
        return examples.clone();
    }
    match schema.get("type").and_then(Value::as_str).unwrap_or("string") {
        "integer" => json!(1),
        "number" => json!(1.0),
        "boolean" => json!(true),
        "array" => json!([example_value(schema.get("items").unwrap_or(&Value::Null))]),
        "object" => json!({}),
        _ => match (
            schema.get("format").and_then(Value::as_str),
            schema.get("pattern").and_then(Value::as_str),
        ) {
            (Some("date"), _) => json!("2026-01-31"),
            (Some("date-time"), _) => json!("2026-01-31T09:00:00Z"),
            (Some("email"), _) => json!("name@example.com"),
            (_, Some(p)) => json!(format!("<text matching {p}>")),
            _ => json!("<text>"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Annotations, Category, Server};

    fn executor() -> Executor {
        let tool = Tool {
            id: "w/weather/get_weather".into(),
            name: "get_weather".into(),
            title: None,
            description: "".into(),
            input_schema: json!({"type":"object","properties":{
                "city":{"type":"string"},
                "units":{"type":"string","enum":["metric","imperial"]},
                "days":{"type":"integer","minimum":1},
                "date":{"type":"string","format":"date"}
            },"required":["city"],"additionalProperties":false}),
            output_schema: None,
            annotations: Annotations::default(),
            mock_response: json!({"temp_c": 21}),
            mock_mode: Default::default(),
            origin: Default::default(),
            dispatch: None,
        };
        let cat = Catalog::new(
            "t",
            "",
            vec![Server {
                name: "w".into(),
                title: None,
                description: "".into(),
                categories: vec![Category {
                    name: "weather".into(),
                    description: "".into(),
                    tools: vec![tool],
                }],
            }],
        );
        Executor::new(&cat).unwrap()
    }

    fn rejection(args: Value) -> (Rejection, String) {
        match executor().execute("w/weather/get_weather", &args) {
            Execution::Rejected { kind, message } => (kind, message),
            other => panic!("expected rejection, got {other:?}"),
        }
    }

    #[test]
    fn valid_call_returns_mock_response() {
        assert_eq!(
            executor().execute("w/weather/get_weather", &json!({"city":"Pune"})),
            Execution::Ok { response: json!({"temp_c": 21}), mock: MockMode::Templated }
        );
    }

    fn with_mock(mock_response: Value, mock_mode: MockMode) -> Executor {
        let ex = executor();
        let mut tool = ex.tools["w/weather/get_weather"].1.clone();
        tool.id = "w/weather/echo".into();
        tool.mock_response = mock_response;
        tool.mock_mode = mock_mode;
        ex.with_extra(&tool).unwrap()
    }

    #[test]
    fn templated_mock_echoes_the_call_and_static_mock_stays_verbatim() {
        let mock = json!({"city": "{{city}}", "days": "{{days|1}}", "summary": "{{days|1}} days in {{city}}"});
        let args = json!({"city": "Pune", "days": 3});
        assert_eq!(
            with_mock(mock.clone(), MockMode::Templated).execute("w/weather/echo", &args),
            Execution::Ok {
                response: json!({"city": "Pune", "days": 3, "summary": "3 days in Pune"}),
                mock: MockMode::Templated
            }
        );
        assert_eq!(
            with_mock(mock.clone(), MockMode::Templated)
                .execute("w/weather/echo", &json!({"city": "Oslo"})),
            Execution::Ok {
                response: json!({"city": "Oslo", "days": 1, "summary": "1 days in Oslo"}),
                mock: MockMode::Templated
            }
        );
        assert_eq!(
            with_mock(mock.clone(), MockMode::Static).execute("w/weather/echo", &args),
            Execution::Ok { response: mock, mock: MockMode::Static }
        );
    }

    #[test]
    fn missing_required_teaches_with_example() {
        let (kind, msg) = rejection(json!({}));
        assert_eq!(kind, Rejection::MissingRequired);
        assert_eq!(msg, "Invalid input: \"city\" is required. Example: {\"city\":\"<text>\"}");
    }

    #[test]
    fn each_rejection_kind() {
        assert_eq!(rejection(json!({"city":"Pune","country":"IN"})).0, Rejection::UnexpectedParam);
        assert_eq!(rejection(json!({"city":5})).0, Rejection::TypeError);
        assert_eq!(rejection(json!({"city":"Pune","units":"kelvin"})).0, Rejection::ValueError);
        assert_eq!(rejection(json!({"city":"Pune","days":0})).0, Rejection::ValueError);
        // formats are checked too: a real validator, not a type check
        assert_eq!(rejection(json!({"city":"Pune","date":"tomorrow"})).0, Rejection::ValueError);
        assert_eq!(rejection(json!("Pune")).0, Rejection::TypeError);
    }
}
