//! Counting the records of a file that is not in the expected shape, so the `skipped` row can say
//! how many records it lost. Its own file because it judges a whole text, not a record.

use super::{parse_reason, plural};
use serde_json::Value;

/// How many records a text that is not in the expected shape holds, and what it is.
#[derive(Debug, PartialEq)]
pub struct Count {
    /// `None` when they cannot be counted.
    pub records: Option<usize>,
    /// What the text holds, e.g. "an object with 40 records in its `data` array".
    pub holds: String,
}

/// The records a parsed value holds when it is not the array expected: an array's elements; an
/// object with exactly one array, of objects, inside (`{"data": [...]}`), that array's; an object of
/// two or more objects (records by id), its members; any other object, one record; a scalar, none.
pub fn records_in(v: &Value) -> Count {
    match v {
        Value::Array(a) => Count {
            records: Some(a.len()),
            holds: format!("an array of {} record{}", a.len(), plural(a.len())),
        },
        Value::Object(m) => {
            let arrays: Vec<(&String, &Vec<Value>)> =
                m.iter().filter_map(|(k, v)| v.as_array().map(|a| (k, a))).collect();
            match arrays.as_slice() {
                [(key, a)] if !a.is_empty() && a.iter().all(Value::is_object) => Count {
                    records: Some(a.len()),
                    holds: format!(
                        "an object with {} record{} in its `{key}` array",
                        a.len(),
                        plural(a.len())
                    ),
                },
                _ if m.len() >= 2 && m.values().all(Value::is_object) => Count {
                    records: Some(m.len()),
                    holds: format!("an object of {} records, one per key", m.len()),
                },
                _ => Count { records: Some(1), holds: "one object (a single record)".into() },
            }
        }
        other => Count {
            records: Some(0),
            holds: format!("{}, no record", crate::error::json_kind(other)),
        },
    }
}

/// Count the records in `text` (a whole file, or what follows its array): as one JSON value
/// ([`records_in`]), else as JSON Lines when every non-blank line is JSON, else unknown.
pub fn count(text: &str) -> Count {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => records_in(&v),
        Err(e) => {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            if lines.len() > 1 && lines.iter().all(|l| serde_json::from_str::<Value>(l).is_ok()) {
                return Count {
                    records: Some(lines.len()),
                    holds: format!("JSON Lines, {} record{}", lines.len(), plural(lines.len())),
                };
            }
            Count {
                records: None,
                holds: format!(
                    "nothing readable as JSON: {}",
                    parse_reason(&e, 1, 1).trim_start_matches("not valid JSON: ")
                ),
            }
        }
    }
}
