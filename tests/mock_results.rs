//! Simulated results never contradict the call (issue 13).
//!
//! Every tool of the bundled catalog is called with several random valid argument sets (seeded; drawn
//! from its input schema: enums, types, formats, patterns, bounds, required and a random share of the
//! optional parameters), through the real [`Executor`]. Each result is checked against these rules:
//!
//! - **R1 same name, same value.** A result field (at any depth) named like a parameter the call gave
//!   carries the given value: equal scalars, or for a list parameter a list holding every given element.
//!   Fields of another JSON kind (`days: 3` given, `days: [...]` returned) are a different thing and are
//!   not compared; a filter given as `all` selects everything, so items may carry any value.
//! - **R2 the subject's identity.** At the top level of the result, `id` / `key` / `number` echo (equal,
//!   or contain: `"WEB-431"` for `project_key: "WEB"`) a parameter the call gave ending in `_id` /
//!   `_key` / `_number`; a tool named after one of its parameters (`get_repository(repository)`) returns
//!   that parameter as its top-level `name` / `id`; a `create_…` tool given a `name` returns it as the
//!   top-level field named like the last word of the tool (`create_chat_channel(name)` → `channel`).
//! - **R3 identifying values come from the call or the catalog.** An identifying value — a string or
//!   number under a key that is `id`, `key`, `name`, `number`, `email`, `repository`, `branch`, `channel`,
//!   `handle`, `user`, `owner`, `author`, `assignee`, `path`, or ends in `_id`, `_key`, `_name`, `_number`,
//!   `_email` — is an argument value, contains one (text built around it), or is a fixed fact of the
//!   simulated world (e.g. another item of a listing): a literal written in the tool's mock response
//!   (any `$switch` branch), or what it renders at that place for a call with only the required
//!   parameters.
//! - **R4 filters hold.** A given `X_contains` (`X_prefix`) keeps every `X` field of the result
//!   containing (starting with) the given text, case-insensitively; `prefix` alone filters `name`s.
//!
//! R3 alone cannot fail on static data (a constant is always constant); R1, R2 and R4 are what a static
//! result that contradicts its call breaks. The rules are a floor: mocks are written to echo more.

mod common;
use common::*;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde_json::{Map, Value, json};
use toolpick::catalog::{MockMode, Tool, load_catalog};
use toolpick::exec::{Execution, Executor};

/// Argument sets per tool: required only, everything, and random subsets.
const SETS: usize = 8;

// ---------------------------------------------------------------------------------------------------
// Random valid arguments

struct Gen(ChaCha8Rng);

const ALNUM: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.0.next_u64() % n.max(1)
    }
    fn coin(&mut self) -> bool {
        self.below(2) == 0
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1).max(1) as u64) as i64
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    /// Lower-case letters and digits, starting with a letter (so it never reads as a number).
    fn token(&mut self, n: usize) -> String {
        let letters: Vec<char> = "abcdefghijklmnopqrstuvwxyz".chars().collect();
        let chars: Vec<char> = "abcdefghijklmnopqrstuvwxyz0123456789".chars().collect();
        let mut s = String::new();
        s.push(*self.pick(&letters));
        for _ in 1..n {
            s.push(*self.pick(&chars));
        }
        s
    }

    fn value(&mut self, schema: &Value) -> Value {
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            return self.pick(options).clone();
        }
        let num = |k: &str| schema.get(k).and_then(Value::as_f64);
        match schema.get("type").and_then(Value::as_str).unwrap_or("string") {
            "integer" => {
                let lo = num("minimum")
                    .map(|m| m as i64)
                    .or(num("exclusiveMinimum").map(|m| m as i64 + 1))
                    .unwrap_or(1);
                let hi = num("maximum").map(|m| m as i64).unwrap_or(lo + 99_999);
                json!(self.range(lo, hi))
            }
            "number" => {
                let lo =
                    num("minimum").or(num("exclusiveMinimum").map(|m| m + 0.01)).unwrap_or(0.5);
                let hi = num("maximum").unwrap_or(lo + 9_999.0);
                let cents = self.range(0, ((hi - lo) * 100.0) as i64);
                json!(((lo * 100.0).ceil() + cents as f64) / 100.0)
            }
            "boolean" => json!(self.coin()),
            "array" => {
                let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(1).max(1) as i64;
                let max = schema
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .map(|m| m as i64)
                    .unwrap_or(min + 2);
                let n = self.range(min, max.max(min));
                let items = schema.get("items").cloned().unwrap_or(json!({}));
                let mut out: Vec<Value> = Vec::new();
                // Distinct items (some schemas say uniqueItems; none wants duplicates); enums may run out.
                for _ in 0..n * 4 {
                    if out.len() as i64 == n {
                        break;
                    }
                    let v = self.value(&items);
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
                Value::Array(out)
            }
            "object" => {
                let mask = self.0.next_u64();
                self.object(schema, mask)
            }
            _ => json!(self.string(schema)),
        }
    }

    fn string(&mut self, schema: &Value) -> String {
        match (
            schema.get("format").and_then(Value::as_str),
            schema.get("pattern").and_then(Value::as_str),
        ) {
            (Some("date"), _) => {
                format!(
                    "{}-{:02}-{:02}",
                    self.range(2024, 2029),
                    self.range(1, 12),
                    self.range(1, 28)
                )
            }
            (Some("email"), _) => {
                format!("{}.{}@{}.example", self.token(5), self.token(4), self.token(6))
            }
            (Some("uri"), _) => format!("https://{}.example/{}", self.token(6), self.token(5)),
            (_, Some(p)) => self.matching(p),
            _ => {
                let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(1) as usize;
                let max = schema.get("maxLength").and_then(Value::as_u64).unwrap_or(64) as usize;
                let words = (self.range(1, 3)) as usize;
                let mut s = (0..words).map(|_| self.token(8)).collect::<Vec<_>>().join(" ");
                while s.len() < min {
                    s.push_str(&self.token(8));
                }
                s.truncate(max.max(1));
                s
            }
        }
    }

    /// An object with its required properties and a random share of the optional ones; `mask` bit `i`
    /// decides optional property `i` (all ones: everything, zero: required only).
    fn object(&mut self, schema: &Value, mask: u64) -> Value {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        let mut optional = 0;
        for (name, prop) in
            schema.get("properties").and_then(Value::as_object).into_iter().flatten()
        {
            let take = required.contains(&name.as_str()) || {
                optional += 1;
                mask >> ((optional - 1) % 64) & 1 == 1
            };
            if take {
                out.insert(name.clone(), self.value(prop));
            }
        }
        Value::Object(out)
    }

    /// A string matching `pattern` (the regex subset the catalogs use: anchors, literals, escapes,
    /// classes with ranges and negation, `.`, groups with alternatives, `? * + {n} {n,} {n,m}`).
    fn matching(&mut self, pattern: &str) -> String {
        let chars: Vec<char> = pattern.chars().collect();
        let mut pos = 0;
        let alternatives = parse_alternatives(&chars, &mut pos);
        let mut out = String::new();
        let seq = self.pick(&alternatives).clone();
        self.emit(&seq, &mut out);
        out
    }

    fn emit(&mut self, seq: &[Node], out: &mut String) {
        for node in seq {
            match node {
                Node::Lit(c) => out.push(*c),
                Node::Class(set) => out.push(*self.pick(set)),
                Node::Group(alts) => {
                    let alt = self.pick(alts).clone();
                    self.emit(&alt, out);
                }
                Node::Repeat(inner, min, max) => {
                    let hi = max.unwrap_or(min + 6).min(min + 8);
                    for _ in 0..self.range(*min as i64, hi as i64) {
                        self.emit(std::slice::from_ref(inner), out);
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Node {
    Lit(char),
    Class(Vec<char>),
    Group(Vec<Vec<Node>>),
    Repeat(Box<Node>, usize, Option<usize>),
}

fn digits() -> Vec<char> {
    ('0'..='9').collect()
}

fn parse_alternatives(p: &[char], pos: &mut usize) -> Vec<Vec<Node>> {
    let mut alts = vec![Vec::new()];
    while *pos < p.len() {
        let c = p[*pos];
        *pos += 1;
        let atom = match c {
            '^' | '$' => continue,
            '|' => {
                alts.push(Vec::new());
                continue;
            }
            ')' => break,
            '(' => Node::Group(parse_alternatives(p, pos)),
            '[' => parse_class(p, pos),
            '.' => Node::Class(ALNUM.chars().chain(" -_".chars()).collect()),
            '\\' => {
                let e = p[*pos];
                *pos += 1;
                if e == 'd' { Node::Class(digits()) } else { Node::Lit(e) }
            }
            other => Node::Lit(other),
        };
        let atom = match p.get(*pos) {
            Some('?') => {
                *pos += 1;
                Node::Repeat(Box::new(atom), 0, Some(1))
            }
            Some('*') => {
                *pos += 1;
                Node::Repeat(Box::new(atom), 0, None)
            }
            Some('+') => {
                *pos += 1;
                Node::Repeat(Box::new(atom), 1, None)
            }
            Some('{') => {
                let end = p[*pos..].iter().position(|&c| c == '}').unwrap() + *pos;
                let body: String = p[*pos + 1..end].iter().collect();
                *pos = end + 1;
                let (min, max) = match body.split_once(',') {
                    None => (body.parse().unwrap(), Some(body.parse().unwrap())),
                    Some((a, "")) => (a.parse().unwrap(), None),
                    Some((a, b)) => (a.parse().unwrap(), Some(b.parse().unwrap())),
                };
                Node::Repeat(Box::new(atom), min, max)
            }
            _ => atom,
        };
        alts.last_mut().unwrap().push(atom);
    }
    alts
}

fn parse_class(p: &[char], pos: &mut usize) -> Node {
    let negated = p[*pos] == '^';
    if negated {
        *pos += 1;
    }
    let mut set = Vec::new();
    let mut first = true;
    while p[*pos] != ']' || first {
        first = false;
        let mut c = p[*pos];
        *pos += 1;
        if c == '\\' {
            c = p[*pos];
            *pos += 1;
            if c == 'd' {
                set.extend(digits());
                continue;
            }
        }
        if p[*pos] == '-' && p[*pos + 1] != ']' {
            let hi = p[*pos + 1];
            *pos += 2;
            set.extend(c..=hi);
        } else {
            set.push(c);
        }
    }
    *pos += 1;
    if negated {
        Node::Class(ALNUM.chars().chain(" -_.".chars()).filter(|c| !set.contains(c)).collect())
    } else {
        Node::Class(set)
    }
}

/// `SETS` valid argument sets for `tool`, checked valid by the executor itself.
fn argument_sets(g: &mut Gen, ex: &Executor, tool: &Tool) -> Vec<Value> {
    let mut sets = Vec::new();
    for i in 0..SETS {
        let mask = match i {
            0 => 0,
            1 => u64::MAX,
            _ => g.0.next_u64(),
        };
        let args = g.object(&tool.input_schema, mask);
        if let Execution::Rejected { message, .. } = ex.execute(&tool.id, &args) {
            panic!("generated arguments for {} are invalid ({message}): {args}", tool.id);
        }
        sets.push(args);
    }
    sets
}

// ---------------------------------------------------------------------------------------------------
// The rules

fn identifying(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "id",
        "key",
        "name",
        "number",
        "email",
        "repository",
        "branch",
        "channel",
        "handle",
        "user",
        "owner",
        "author",
        "assignee",
        "path",
    ];
    const SUFFIX: &[&str] = &["_id", "_key", "_name", "_number", "_email"];
    EXACT.contains(&key) || SUFFIX.iter().any(|s| key.ends_with(s))
}

/// Every scalar inside the arguments.
fn scalars(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| scalars(x, out)),
        Value::Object(m) => m.values().for_each(|x| scalars(x, out)),
        Value::Null => {}
        other => out.push(other.clone()),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Leaves of the result as (path, key of the nearest object field, value).
fn leaves<'a>(v: &'a Value, path: String, key: &str, out: &mut Vec<(String, String, &'a Value)>) {
    match v {
        Value::Array(a) => {
            a.iter().enumerate().for_each(|(i, x)| leaves(x, format!("{path}[{i}]"), key, out))
        }
        Value::Object(m) => m.iter().for_each(|(k, x)| leaves(x, format!("{path}.{k}"), k, out)),
        other => out.push((path, key.to_string(), other)),
    }
}

/// Fields of every object in the result as (path, key, value).
fn fields<'a>(v: &'a Value, path: String, out: &mut Vec<(String, &'a str, &'a Value)>) {
    match v {
        Value::Array(a) => {
            a.iter().enumerate().for_each(|(i, x)| fields(x, format!("{path}[{i}]"), out))
        }
        Value::Object(m) => {
            for (k, x) in m {
                out.push((format!("{path}.{k}"), k.as_str(), x));
                fields(x, format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// Findings of R1, R2 and R4 for one call; R3 needs every set and is checked by the caller.
fn check_call(tool: &Tool, args: &Value, result: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let given = args.as_object().cloned().unwrap_or_default();
    let mut all = Vec::new();
    fields(result, String::new(), &mut all);
    // R1
    for (path, key, value) in &all {
        let Some(arg) = given.get(*key) else { continue };
        let ok = match (arg, value) {
            (Value::Array(want), Value::Array(got)) => {
                want.iter().all(|w| got.iter().any(|g| same(g, w)))
            }
            (Value::Array(_), _)
            | (_, Value::Array(_))
            | (Value::Object(_), _)
            | (_, Value::Object(_)) => true,
            (Value::String(s), _) if s == "all" => true,
            (a, v) => same(a, v),
        };
        if !ok {
            out.push(format!("R1 {path} = {value} but the call gave {key} = {arg}"));
        }
    }
    // R2
    if let Some(top) = result.as_object() {
        for (p, arg) in &given {
            let Some(want) = text(arg) else { continue };
            let mut aliases = Vec::new();
            for (suffix, alias) in [("_id", "id"), ("_key", "key"), ("_number", "number")] {
                if p.ends_with(suffix) {
                    aliases.push(alias);
                }
            }
            if tool.name.ends_with(&format!("_{p}")) {
                aliases.extend(["name", "id"]);
            }
            // `create_chat_channel(name)` returns the new thing under its own name (`channel`).
            let thing = tool.name.rsplit('_').next().unwrap_or_default();
            if p == "name" && thing != "name" && tool.name.starts_with("create_") {
                aliases.push(thing);
            }
            for alias in aliases {
                let Some(got) = top.get(alias).filter(|v| !v.is_array() && !v.is_object()) else {
                    continue;
                };
                let ok = same(got, arg) || text(got).is_some_and(|g| g.contains(&want));
                if !ok {
                    out.push(format!("R2 .{alias} = {got} but the call's subject is {p} = {arg}"));
                }
            }
        }
    }
    // R4
    for (p, arg) in &given {
        let Some(want) = arg.as_str().map(str::to_lowercase) else {
            continue;
        };
        let (field, prefix) = match (p.strip_suffix("_contains"), p.strip_suffix("_prefix")) {
            (Some(f), _) => (f, false),
            (_, Some(f)) => (f, true),
            _ if p == "prefix" => ("name", true),
            _ => continue,
        };
        for (path, key, value) in &all {
            let Some(got) =
                (*key == field).then(|| value.as_str()).flatten().map(str::to_lowercase)
            else {
                continue;
            };
            let ok = if prefix { got.starts_with(&want) } else { got.contains(&want) };
            if !ok {
                out.push(format!("R4 {path} = {value} does not honour {p} = {arg}"));
            }
        }
    }
    out
}

/// Findings of all rules for one tool over `SETS` random argument sets.
fn check_tool(g: &mut Gen, ex: &Executor, tool: &Tool) -> Vec<String> {
    let sets = argument_sets(g, ex, tool);
    let mut findings = Vec::new();
    // R3's catalog facts: the literals of the mock response, and its rendering for the first set
    // (required parameters only).
    let mut literals = Vec::new();
    scalars(&tool.mock_response, &mut literals);
    let mut baseline = Vec::new();
    let Execution::Ok { response: first, .. } = ex.execute(&tool.id, &sets[0]) else {
        unreachable!("checked valid")
    };
    leaves(&first, String::new(), "", &mut baseline);
    let fact = |path: &str, v: &Value| {
        literals.iter().any(|l| same(l, v))
            || baseline.iter().any(|(p, _, b)| p == path && same(b, v))
    };
    for args in &sets {
        let Execution::Ok { response, .. } = ex.execute(&tool.id, args) else {
            unreachable!("checked valid")
        };
        for f in check_call(tool, args, &response) {
            findings.push(format!("{f}  (arguments {args})"));
        }
        let mut given = Vec::new();
        scalars(args, &mut given);
        let mut ls = Vec::new();
        leaves(&response, String::new(), "", &mut ls);
        for (path, key, value) in ls {
            if !identifying(&key) || !(value.is_string() || value.is_number()) {
                continue;
            }
            let from_call = given.iter().any(|a| same(a, value))
                || value.as_str().is_some_and(|v| {
                    given.iter().filter_map(Value::as_str).any(|a| a.len() >= 2 && v.contains(a))
                });
            if !from_call && !fact(&path, value) {
                findings.push(format!("R3 {path} = {value} comes neither from the call nor from the catalog  (arguments {args})"));
            }
        }
    }
    // One line per rule and place (the first argument set that shows it).
    let mut seen = std::collections::HashSet::new();
    findings.retain(|f| seen.insert(f.split(" = ").next().unwrap_or(f).to_string()));
    findings
}

#[test]
fn bundled_results_never_contradict_the_call() {
    let catalog = load_catalog(&repo().join("registries/workspace")).unwrap();
    let ex = Executor::new(&catalog).unwrap();
    let mut g = Gen(ChaCha8Rng::seed_from_u64(13));
    let mut failed = Vec::new();
    for t in catalog.tools() {
        assert_eq!(
            t.tool.mock_mode,
            MockMode::Templated,
            "{}: bundled tools are templated",
            t.tool.id
        );
        let findings = check_tool(&mut g, &ex, t.tool);
        if !findings.is_empty() {
            failed.push(format!("{}:\n    {}", t.tool.id, findings.join("\n    ")));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} tools answer with results that contradict the call:\n{}",
        failed.len(),
        catalog.tool_count(),
        failed.join("\n")
    );
}

#[test]
fn the_realistic_bad_variant_answers_exactly_as_the_written_catalog() {
    // Execution uses the written catalog; the hand-written variant mirrors its mock responses so that
    // reading either file tells the same story.
    let good = load_catalog(&repo().join("registries/workspace")).unwrap();
    let bad = load_catalog(&repo().join("registries/workspace-realistic-bad")).unwrap();
    for t in good.tools() {
        let b = bad
            .get(&t.tool.id)
            .unwrap_or_else(|| panic!("{} missing from the bad variant", t.tool.id));
        assert_eq!(b.tool.mock_response, t.tool.mock_response, "{}", t.tool.id);
    }
}

/// A one-tool catalog whose mock response is `mock` (JSON text), with `repository` required.
fn write_catalog(dir: &std::path::Path, mock: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        r#"{{
  "name": "code",
  "description": "Code hosting.",
  "categories": [
    {{"name": "code_branches", "description": "Branches.", "tools": [
      {{"name": "delete_branch", "description": "Delete a branch of a repository. Use when a stale branch should go.",
       "inputSchema": {{"type": "object", "properties": {{
          "repository": {{"type": "string", "description": "Repository name."}},
          "branch": {{"type": "string", "description": "Branch name."}}}},
          "required": ["repository", "branch"], "additionalProperties": false}},
       "annotations": {{"readOnlyHint": false, "destructiveHint": true}},
       "mockResponse": {mock}}}
    ]}}
  ]
}}"#
    );
    std::fs::write(dir.join("code.json"), text).unwrap();
}

#[test]
fn validate_and_lint_name_the_file_tool_and_placeholder_of_an_unknown_parameter() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    write_catalog(&cat, r#"{"repository": "{{repo}}", "deleted": true}"#);
    for args in
        [vec!["validate", "--catalog", cat.to_str().unwrap()], vec!["lint", cat.to_str().unwrap()]]
    {
        let cmd = args[0];
        let o = toolpick(&args, tmp.path());
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}{}", stdout(&o), stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("code.json:"), "{cmd} names the file: {err}");
        assert!(
            err.contains("tool `code/code_branches/delete_branch`"),
            "{cmd} names the tool: {err}"
        );
        assert!(err.contains("mockResponse.repository"), "{cmd} names the field: {err}");
        assert!(
            err.contains(
                "`{{repo}}` names no parameter of the tool (its parameters: repository, branch)"
            ),
            "{cmd}: {err}"
        );
    }
    // The same catalog with a declared parameter is fine, and a static tool keeps `{{repo}}` as text.
    write_catalog(&cat, r#"{"repository": "{{repository}}", "deleted": true}"#);
    let data = tmp.path().join("d.jsonl");
    std::fs::write(&data, r#"{"id": "d1", "query": "Delete old in web-app", "kind": "single", "expected": [{"tool": "code/code_branches/delete_branch", "arguments": {"repository": ["web-app"], "branch": ["old"]}}], "category": "code", "tags": []}
"#).unwrap();
    let o = toolpick(
        &["validate", "--catalog", cat.to_str().unwrap(), "--dataset", data.to_str().unwrap()],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(cat.join("code.json"))
        .unwrap()
        .replace(r#""mockResponse""#, r#""mockMode": "static", "mockResponse""#);
    std::fs::write(cat.join("code.json"), text.replace("{{repository}}", "{{repo}}")).unwrap();
    let c = load_catalog(&cat).unwrap();
    let ex = Executor::new(&c).unwrap();
    assert_eq!(
        ex.execute(
            "code/code_branches/delete_branch",
            &json!({"repository": "billing-api", "branch": "old"})
        ),
        Execution::Ok {
            response: json!({"repository": "{{repo}}", "deleted": true}),
            mock: MockMode::Static
        }
    );
}

#[test]
fn the_issue_example_echoes_the_call_and_the_trial_records_a_templated_result() {
    // `delete_branch(repository="billing-api")` used to answer `"repository": "web-app"`.
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("one.jsonl");
    std::fs::write(
        &data,
        r#"{"id": "d1", "query": "Delete feature/old-checkout in billing-api", "kind": "single", "expected": [{"tool": "code_hosting/code_repositories/delete_branch", "arguments": {"repository": ["billing-api"], "branch": ["feature/old-checkout"]}}], "category": "code", "tags": []}
"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends oracle --variants good --layouts flat --out {} \
             --run-id r -q",
            &[data.to_str().unwrap(), out.to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let trial: Value = trials_with_transcripts(&out.join("r")).remove(0);
    assert_eq!(trial["calls"][0]["record"]["mock"], "templated", "{}", trial["calls"]);
    let result = trial["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool result")["content"]
        .as_str()
        .unwrap()
        .to_string();
    let result: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(
        result,
        json!({"repository": "billing-api", "branch": "feature/old-checkout", "deleted": true})
    );
}

#[test]
fn imported_mock_responses_stay_verbatim_and_trials_mark_them_static() {
    // A StableToolBench record whose upstream template response happens to contain `{{…}}`.
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("stb");
    std::fs::create_dir_all(&src).unwrap();
    let record = json!([{
        "query": "Look up item x1", "query_id": 1,
        "api_list": [{"tool_name": "Item Store", "api_name": "Get Item", "category_name": "Data", "api_description": "Get one item by id.",
                      "required_parameters": [{"name": "id", "type": "STRING", "description": "Item id.", "default": "x1"}], "optional_parameters": [],
                      "template_response": {"id": "{{id}}", "name": "Widget {{size}"}}],
        "relevant APIs": [["Item Store", "Get Item"]]
    }]);
    std::fs::write(src.join("G1_test.json"), record.to_string()).unwrap();
    let imported = toolpick::dataset::importers::import("stabletoolbench", &src).unwrap();
    let tool = imported.catalog.tools().next().unwrap().tool.clone();
    assert_eq!(tool.mock_mode, MockMode::Static);
    let ex = Executor::new(&imported.catalog).unwrap();
    let verbatim = json!({"id": "{{id}}", "name": "Widget {{size}"});
    assert_eq!(
        ex.execute(&tool.id, &json!({"id": "x9"})),
        Execution::Ok { response: verbatim.clone(), mock: MockMode::Static }
    );

    // Written as native files, the tool stays static (and loads, although `{{id}}` is no placeholder of it).
    let native = tmp.path().join("native");
    toolpick::dataset::importers::write_native(&imported, &native).unwrap();
    let reloaded = load_catalog(&native.join("catalog")).unwrap();
    let again = reloaded.get(&tool.id).unwrap().tool;
    assert_eq!((again.mock_mode, &again.mock_response), (MockMode::Static, &verbatim));

    // A run over the import records the result as static.
    let out = tmp.path().join("out");
    let spec = format!("stabletoolbench:{}", src.display());
    let o = toolpick(
        &argv_with(
            "run --dataset {} --backends oracle --variants good --layouts flat --out {} \
             --run-id s -q",
            &[&spec, out.to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let trial: Value = serde_json::from_str(
        std::fs::read_to_string(out.join("s/trials.jsonl")).unwrap().lines().next().unwrap(),
    )
    .unwrap();
    assert_eq!(trial["calls"][0]["record"]["mock"], "static", "{}", trial["calls"]);
}
