//! Checking a dataset's ground truth against the catalog it will run on: tool ids exist, arguments
//! are the tool's properties, acceptable values validate, required properties are not omissible. Its
//! own file because it is the one place that reads the dataset and the catalog together.

use super::*;
use crate::catalog::Catalog;
use crate::error::{InputError, InputErrors};

/// Check every task's ground truth against `catalog`: tool ids exist, arguments are properties of the
/// tool, every acceptable value validates against the property's schema, required properties can't be
/// omitted.
pub fn check_against(dataset: &Dataset, catalog: &Catalog) -> Result<(), InputErrors> {
    let mut errors = Vec::new();
    for task in &dataset.tasks {
        let at = |field: &str, msg: String| {
            InputError::new(&dataset.path, msg).at_line(task.line).field(field)
        };
        for (i, id) in task.candidates.iter().enumerate() {
            if catalog.get(id).is_none() {
                errors.push(at(
                    &format!("candidates[{i}]"),
                    format!("tool id `{id}` is not in catalog `{}`", catalog.name),
                ));
            }
        }
        for e in &task.expected {
            if !task.candidates.is_empty() && !task.candidates.contains(&e.tool) {
                errors.push(at(
                    "candidates",
                    format!("expected tool `{}` is not among the task's candidates", e.tool),
                ));
            }
        }
        for (i, pattern) in task.must_not_call.iter().enumerate() {
            let field = format!("must_not_call[{i}]");
            let hits: Vec<&str> = catalog
                .tools()
                .map(|t| t.tool.id.as_str())
                .filter(|id| crate::text::glob(pattern, id))
                .collect();
            if hits.is_empty() {
                errors.push(at(&field, format!("`{pattern}` matches no tool id in catalog `{}` (ids are server/category/tool; `*` and `?` are globs)", catalog.name)));
            }
            for e in &task.expected {
                for hit in hits.iter().filter(|h| e.accepts(h)) {
                    errors.push(at(&field, format!("`{pattern}` matches `{hit}`, which an expected call accepts; a task cannot forbid its own answer")));
                }
            }
        }
        for (i, id) in task.forbidden.iter().enumerate() {
            if catalog.get(id).is_none() {
                errors.push(at(
                    &format!("forbidden[{i}]"),
                    format!("tool id `{id}` is not in catalog `{}`", catalog.name),
                ));
            }
        }
        for (i, want) in task.live.iter().flat_map(|l| l.interactions.iter()).enumerate() {
            if let Some(id) = &want.before
                && catalog.get(id).is_none()
            {
                errors.push(at(
                    &format!("live.interactions[{i}].before"),
                    format!("tool id `{id}` is not in catalog `{}`", catalog.name),
                ));
            }
        }
        if let Some(p) = &task.poison {
            if let Some(t) = &p.target
                && catalog.get(t).is_none()
            {
                errors.push(at(
                    "poison.target",
                    format!("tool id `{t}` is not in catalog `{}`", catalog.name),
                ));
            }
            if let Some(a) = &p.add_tool {
                match catalog
                    .server(&a.server)
                    .map(|s| s.categories.iter().any(|c| c.name == a.category))
                {
                    Some(true) => {
                        if let Err(e) =
                            crate::catalog::load::parse_tool(&a.server, &a.category, &a.tool)
                        {
                            errors.push(at("poison.add_tool.tool", e));
                        }
                    }
                    _ => errors.push(at(
                        "poison.add_tool",
                        format!("no category `{}` in server `{}`", a.category, a.server),
                    )),
                }
            }
            let added = p.add_tool.as_ref().and_then(|a| {
                a.tool["name"].as_str().map(|n| format!("{}/{}/{n}", a.server, a.category))
            });
            let known = |id: &str| catalog.get(id).is_some() || added.as_deref() == Some(id);
            match &p.goal {
                Goal::Call(id) | Goal::Argument { tool: id, .. } if !known(id) => errors.push(at(
                    "poison.goal",
                    format!("goal tool `{id}` is neither in the catalog nor the added tool"),
                )),
                _ => {}
            }
        }
        for (ci, call) in task.expected.iter().enumerate() {
            let at = |field: String, msg: String| {
                InputError::new(&dataset.path, msg).at_line(task.line).field(field)
            };
            let Some(tref) = catalog.get(&call.tool) else {
                errors.push(at(
                    format!("expected[{ci}].tool"),
                    format!(
                        "tool id `{}` is not in catalog `{}` (ids are server/category/tool)",
                        call.tool, catalog.name
                    ),
                ));
                continue;
            };
            for (ai, alt) in call.alternatives.iter().enumerate() {
                if catalog.get(alt).is_none() {
                    errors.push(at(
                        format!("expected[{ci}].alternatives[{ai}]"),
                        format!("tool id `{alt}` is not in catalog `{}`", catalog.name),
                    ));
                }
            }
            let tool = tref.tool;
            let props = tool.input_schema.get("properties").and_then(Value::as_object);
            for (param, values) in &call.arguments {
                let field = format!("expected[{ci}].arguments.{param}");
                let Some(prop_schema) = props.and_then(|p| p.get(param)) else {
                    errors.push(at(
                        field,
                        format!("`{param}` is not a parameter of `{}`", call.tool),
                    ));
                    continue;
                };
                let validator = match jsonschema::draft202012::options()
                    .should_validate_formats(true)
                    .build(prop_schema)
                {
                    Ok(v) => v,
                    Err(e) => {
                        errors
                            .push(at(field, format!("schema of `{param}` does not compile: {e}")));
                        continue;
                    }
                };
                for (vi, v) in values.iter().enumerate() {
                    if v.as_str() == Some("") {
                        continue;
                    }
                    if let Err(e) = validator.validate(v) {
                        errors.push(at(format!("{field}[{vi}]"), format!("acceptable value {v} does not validate against the schema of `{param}`: {e}")));
                    }
                }
            }
            for req in tool.required() {
                match call.arguments.get(req) {
                    None => errors.push(at(
                        format!("expected[{ci}].arguments.{req}"),
                        format!("`{req}` is required by `{}` but has no acceptable values", call.tool),
                    )),
                    Some(values) if values.iter().all(|v| v.as_str() == Some("")) => errors.push(at(
                        format!("expected[{ci}].arguments.{req}"),
                        format!("`{req}` is required by `{}`; it can't be omitted (\"\") and needs a real value", call.tool),
                    )),
                    _ => {}
                }
            }
        }
    }
    InputErrors(errors).into_result()
}
