//! The hand-written inputs — catalog, dataset, experiment file — each reached through every command
//! that reads it, damaged every generic way (`generic`) and every way its format allows (a field of
//! the wrong type, out of range, naming nothing, duplicated, reaching outside its directory …).

use super::damage::*;
use super::harness::*;
use super::world::{MCP_SESSION, SMALL_RUN};
use serde_json::{Value, json};
use std::path::Path;

/// Where generic damage goes in a file.
#[derive(Clone, Copy)]
pub enum Shape {
    /// One record per line: damage line `n` (the others stay valid).
    Lines(usize),
    /// One JSON document.
    Json,
    /// A TOML document.
    Toml,
    /// Plain text (a prompt template).
    Text,
}

pub fn slot(path: &'static str, name: &str, args: &[&str]) -> Slot {
    Slot {
        path,
        name: format!("{path}/{name}"),
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: None,
        serves: false,
        prepare: None,
        import_out: None,
    }
}

pub fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The base file name of `rel`, which a correct error names.
pub fn base_name(rel: &str) -> String {
    Path::new(rel).file_name().unwrap().to_string_lossy().into_owned()
}

/// Every generic damage of the file `rel` (except the names in `skip`).
pub fn generic(world: &Path, rel: &str, shape: Shape, skip: &[&str]) -> Vec<Mutation> {
    let file = base_name(rel);
    let bytes = clean(world, rel);
    let whole = || refused(std::slice::from_ref(&file));
    let line = |n: usize| refused(&[at(&file, n)]);
    let mut v = vec![
        with("missing", remove(rel), whole()),
        with("directory", directory(rel), whole()),
        with("empty", put(rel, vec![]), whole()),
        with(
            "bom",
            put(rel, with_bom(&bytes)),
            Expect::RefusedOrAccepted { names: vec![file.clone()] },
        ),
        with("utf16", put(rel, utf16le(&bytes)), whole()),
    ];
    match shape {
        Shape::Lines(n) => v.extend([
            with(&format!("invalid-utf8-line{n}"), put(rel, invalid_utf8_at(&bytes, n)), line(n)),
            with(&format!("cut-in-line{n}"), put(rel, cut_in_line(&bytes, n)), line(n)),
            with(&format!("torn-line{n}"), put(rel, torn_line(&bytes, n)), line(n)),
            with(
                &format!("array-line{n}"),
                put(rel, replace_line(&bytes, n, Some(b"[1, 2]"))),
                line(n),
            ),
            with(
                &format!("string-line{n}"),
                put(rel, replace_line(&bytes, n, Some(b"\"a line of text\""))),
                line(n),
            ),
            with(
                &format!("nul-line{n}"),
                put(rel, replace_line(&bytes, n, Some(&[0u8; 16]))),
                line(n),
            ),
        ]),
        Shape::Json | Shape::Toml => {
            let n = line_of(&bytes, "\"");
            v.extend([
                with(
                    &format!("invalid-utf8-line{n}"),
                    put(rel, invalid_utf8_at(&bytes, n)),
                    line(n),
                ),
                with("cut-in-half", put(rel, bytes[..bytes.len() / 2].to_vec()), whole()),
                with("nul-bytes", put(rel, vec![0u8; 64]), whole()),
            ]);
            if matches!(shape, Shape::Json) {
                v.push(with("top-level-array", put(rel, b"[]\n".to_vec()), whole()));
                v.push(with("top-level-string", put(rel, b"\"a server\"\n".to_vec()), whole()));
            }
        }
        Shape::Text => v.push(with(
            "invalid-utf8",
            put(rel, invalid_utf8_at(&bytes, line_of(&bytes, "{{"))),
            whole(),
        )),
    }
    v.retain(|m| !skip.contains(&m.name.as_str()));
    v
}

/// For every top-level field of line `n` of the JSON Lines file `rel`, the field given a value of
/// another JSON type (a string for a number, array, object or boolean; a number for a string or
/// null), named `<field>-<type>` (e.g. `category-number`) — unless `existing` already has a case of
/// that name. The error names `file:n` and the field.
pub fn wrong_types(world: &Path, rel: &str, n: usize, existing: &[Mutation]) -> Vec<Mutation> {
    let bytes = clean(world, rel);
    let record: Value = serde_json::from_slice(&lines(&bytes)[n - 1]).unwrap();
    let file = base_name(rel);
    let mut v = vec![];
    for key in record.as_object().expect("a JSON Lines record is an object").keys() {
        let (kind, value) = match &record[key] {
            Value::String(_) | Value::Null => ("number", json!(5)),
            _ => ("string", json!("a line of text")),
        };
        let name = format!("{}-{kind}", key.replace('_', "-"));
        if existing.iter().any(|m| m.name == name) {
            continue;
        }
        let key2 = key.clone();
        let edited = edit_json_line(&bytes, n, move |r| r[key2.as_str()] = value);
        v.push(writes(&name, rel, edited, refused(&[at(&file, n), key.clone()])));
    }
    v
}

/// A mutation made by `setup`.
pub fn with(name: &str, setup: Setup, expect: Expect) -> Mutation {
    let mut m = Mutation::new(name, expect);
    m.setup = Some(setup);
    m
}

/// A mutation that writes `bytes` to `rel`.
pub fn writes(name: &str, rel: &str, bytes: Vec<u8>, expect: Expect) -> Mutation {
    with(name, put(rel, bytes), expect)
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut s = serde_json::to_vec_pretty(v).unwrap();
    s.push(b'\n');
    s
}

/// What an error about an edited server file must name besides the file.
enum Names {
    /// The line holding this text (a value the reader rejects where it stands).
    LineOf(&'static str),
    /// This dotted field, or one inside it (`inputSchema` for `inputSchema.type`).
    Field(&'static str),
    /// This text (the name the error is about).
    Also(&'static str),
}

/// The server file `weather.json` parsed, edited and written back pretty-printed.
fn server_edit(world: &Path, name: &str, names: Names, edit: impl FnOnce(&mut Value)) -> Mutation {
    let rel = "smallcat/weather.json";
    let mut v: Value = serde_json::from_slice(&clean(world, rel)).unwrap();
    edit(&mut v);
    let bytes = pretty(&v);
    let expect = match names {
        Names::LineOf(marker) => refused(&[at("weather.json", line_of(&bytes, marker))]),
        // The field itself or one inside it (`inputSchema.type`).
        Names::Field(field) => refused(&["weather.json".to_string(), format!("`{field}")]),
        Names::Also(text) => refused(&["weather.json", text]),
    };
    writes(name, rel, bytes, expect)
}

/// The first tool of the server file.
fn tool(v: &mut Value) -> &mut Value {
    v.pointer_mut("/categories/0/tools/0").unwrap()
}

fn catalog_mutations(world: &Path) -> Vec<Mutation> {
    let mut v = generic(world, "smallcat/weather.json", Shape::Json, &["missing"]);
    for m in &mut v {
        m.name = format!("server-file-{}", m.name);
    }
    let dir = || refused(&["smallcat"]);
    v.push(with("dir-missing", remove("smallcat"), dir()));
    v.push(with("dir-is-a-file", file_for_dir("smallcat"), dir()));
    v.push(with("dir-empty", emptied_dir("smallcat"), dir()));
    v.extend([
        server_edit(world, "unknown-server-key", Names::LineOf("\"servr\""), |v| {
            v["servr"] = json!(1)
        }),
        server_edit(world, "server-name-number", Names::LineOf("\"name\": 5"), |v| {
            v["name"] = json!(5)
        }),
        server_edit(world, "server-name-pattern", Names::Field("name"), |v| {
            v["name"] = json!("Weather Server")
        }),
        server_edit(world, "server-name-traversal", Names::Field("name"), |v| {
            v["name"] = json!("../escape")
        }),
        server_edit(world, "server-description-number", Names::LineOf("\"description\": 5"), |v| {
            v["description"] = json!(5)
        }),
        server_edit(world, "categories-object", Names::LineOf("\"categories\": {}"), |v| {
            v["categories"] = json!({})
        }),
        server_edit(world, "category-name-pattern", Names::Field("categories[0].name"), |v| {
            v["categories"][0]["name"] = json!("Now!")
        }),
        server_edit(world, "category-duplicate-across-files", Names::Also("mail_messages"), |v| {
            v["categories"][0]["name"] = json!("mail_messages")
        }),
        server_edit(
            world,
            "tool-name-65-chars",
            Names::Field("categories[0].tools[0].name"),
            |v| tool(v)["name"] = json!("t".repeat(65)),
        ),
        server_edit(world, "tool-name-space", Names::Field("categories[0].tools[0].name"), |v| {
            tool(v)["name"] = json!("get weather")
        }),
        server_edit(world, "tool-duplicate", Names::Also("get_current_weather"), |v| {
            let t = tool(v).clone();
            v["categories"][0]["tools"].as_array_mut().unwrap().push(t);
        }),
        server_edit(world, "unknown-tool-key", Names::LineOf("\"inputschema\""), |v| {
            tool(v)["inputschema"] = json!({})
        }),
        server_edit(world, "input-schema-missing", Names::Also("inputSchema"), |v| {
            tool(v).as_object_mut().unwrap().remove("inputSchema");
        }),
        server_edit(
            world,
            "input-schema-array",
            Names::Field("categories[0].tools[0].inputSchema"),
            |v| tool(v)["inputSchema"]["type"] = json!("array"),
        ),
        server_edit(
            world,
            "input-schema-invalid",
            Names::Also("categories[0].tools[0].inputSchema"),
            |v| tool(v)["inputSchema"]["properties"]["city"]["type"] = json!(5),
        ),
        server_edit(
            world,
            "required-undefined",
            Names::Also("categories[0].tools[0].inputSchema"),
            |v| tool(v)["inputSchema"]["required"] = json!(["town"]),
        ),
        server_edit(
            world,
            "output-schema-invalid",
            Names::Also("categories[0].tools[0].outputSchema"),
            |v| tool(v)["outputSchema"] = json!({"type": 5}),
        ),
        server_edit(world, "mock-placeholder-unknown", Names::Also("cty"), |v| {
            tool(v)["mockResponse"] = json!({"city": "{{cty}}"})
        }),
        server_edit(
            world,
            "mock-switch-unknown",
            Names::Also("categories[0].tools[0].mockResponse"),
            |v| tool(v)["mockResponse"] = json!({"$switch": "season", "cases": {}, "default": 1}),
        ),
        server_edit(world, "mock-mode-unknown", Names::LineOf("\"nosuch\""), |v| {
            tool(v)["mockMode"] = json!("nosuch")
        }),
        server_edit(world, "annotations-string", Names::LineOf("\"annotations\": \"yes\""), |v| {
            tool(v)["annotations"] = json!("yes")
        }),
        server_edit(
            world,
            "annotation-hint-string",
            Names::LineOf("\"readOnlyHint\": \"yes\""),
            |v| tool(v)["annotations"]["readOnlyHint"] = json!("yes"),
        ),
    ]);
    v.push(writes(
        "catalog-json-cut",
        "smallcat/catalog.json",
        b"{\"name\": \"small\", \"descr".to_vec(),
        refused(&["catalog.json"]),
    ));
    v.push(writes(
        "catalog-json-array",
        "smallcat/catalog.json",
        b"[]\n".to_vec(),
        refused(&["catalog.json"]),
    ));
    v.push(writes(
        "catalog-json-name-number",
        "smallcat/catalog.json",
        b"{\"name\": 5}\n".to_vec(),
        refused(&["catalog.json:1"]),
    ));
    v
}

fn task_edit(world: &Path, name: &str, field: &str, edit: impl FnOnce(&mut Value)) -> Mutation {
    let bytes = edit_json_line(&clean(world, "tasks.jsonl"), 3, edit);
    writes(name, "tasks.jsonl", bytes, refused(&[at("tasks.jsonl", 3), field.to_string()]))
}

fn dataset_mutations(world: &Path) -> Vec<Mutation> {
    let mut v = generic(world, "tasks.jsonl", Shape::Lines(3), &[]);
    let clean_tasks = clean(world, "tasks.jsonl");
    v.push(writes(
        "comments-only",
        "tasks.jsonl",
        b"// no task here\n\n".to_vec(),
        refused(&["tasks.jsonl"]),
    ));
    v.push(writes(
        "empty-object-line3",
        "tasks.jsonl",
        replace_line(&clean_tasks, 3, Some(b"{}")),
        refused(&[at("tasks.jsonl", 3)]),
    ));
    v.extend([
        task_edit(world, "unknown-field", "kindd", |t| t["kindd"] = json!("multi")),
        task_edit(world, "id-number", "id", |t| t["id"] = json!(3)),
        task_edit(world, "id-empty", "id", |t| t["id"] = json!("")),
        task_edit(world, "id-duplicate", "id", |t| t["id"] = json!("w1")),
        task_edit(world, "kind-unknown", "kind", |t| t["kind"] = json!("sometimes")),
        task_edit(world, "query-empty", "query", |t| t["query"] = json!("")),
        task_edit(world, "query-number", "query", |t| t["query"] = json!(42)),
        task_edit(world, "expected-object", "expected", |t| t["expected"] = json!({"tool": "mail/mail_messages/send_email"})),
        task_edit(world, "expected-tool-unknown", "expected[0].tool", |t| t["expected"][0]["tool"] = json!("mail/mail_messages/send_fax")),
        task_edit(world, "expected-tool-traversal", "expected[0].tool", |t| t["expected"][0]["tool"] = json!("../mail/send_email")),
        task_edit(world, "argument-not-a-parameter", "expected[0].arguments", |t| t["expected"][0]["arguments"]["cc"] = json!(["bo@example.com"])),
        task_edit(world, "argument-wrong-type", "expected[0].arguments", |t| t["expected"][0]["arguments"]["to"] = json!([5])),
        task_edit(world, "argument-not-a-list", "expected[0].arguments", |t| t["expected"][0]["arguments"]["to"] = json!("ana@example.com")),
        task_edit(world, "required-argument-missing", "expected[0].arguments", |t| {
            t["expected"][0]["arguments"].as_object_mut().unwrap().remove("subject");
        }),
        task_edit(world, "multi-with-no-call", "expected", |t| t["expected"] = json!([])),
        task_edit(world, "abstain-with-a-call", "expected", |t| t["kind"] = json!("abstain")),
        task_edit(world, "refuse-without-risk", "risk", |t| {
            t["kind"] = json!("refuse");
            t["expected"] = json!([]);
        }),
        task_edit(world, "risk-unknown", "risk", |t| {
            t["kind"] = json!("refuse");
            t["expected"] = json!([]);
            t["risk"] = json!("boredom");
        }),
        task_edit(world, "history-role-unknown", "history[0].role", |t| t["history"] = json!([{"role": "tool", "content": "x"}])),
        task_edit(world, "history-content-empty", "history[0].content", |t| t["history"] = json!([{"role": "system", "content": ""}])),
        task_edit(world, "must-not-call-matches-nothing", "must_not_call", |t| t["must_not_call"] = json!(["nosuch/*"])),
        task_edit(world, "must-not-call-matches-expected", "must_not_call", |t| t["must_not_call"] = json!(["mail/*"])),
        task_edit(world, "candidates-unknown", "candidates", |t| t["candidates"] = json!(["mail/mail_messages/send_fax"])),
        task_edit(world, "poison-target-unknown", "poison", |t| {
            t["poison"] = json!({"style": "inline", "target": "mail/mail_messages/send_fax", "text": "x", "goal": {"leak": "M"}})
        }),
        task_edit(world, "live-file-traversal", "live.files", |t| t["live"] = json!({"files": {"../escape.txt": "x"}})),
        task_edit(world, "live-file-absolute", "live.files", |t| t["live"] = json!({"files": {"/etc/escape.txt": "x"}})),
        task_edit(world, "tags-string", "tags", |t| t["tags"] = json!("paraphrase")),
    ]);
    let typed = wrong_types(world, "tasks.jsonl", 3, &v);
    v.extend(typed);
    v
}

/// Where a TOML edit goes.
enum Target {
    /// The first line starting with this text is replaced.
    Replace(&'static str),
    /// A new line after the first line starting with this text.
    After(&'static str),
    /// A new first line (a top-level key).
    Top,
    /// A new last line (a key of the last table, `[judge]`).
    End,
}

/// The experiment file edited at `target` with `line`. The error must name `exp.toml`, the line (when
/// `at_line`: a value the file's reader rejects where it stands) and `field`.
fn toml_edit(
    world: &Path,
    name: &str,
    target: Target,
    line: &str,
    field: &str,
    at_line: bool,
) -> Mutation {
    toml_edit_names(world, name, target, line, field, at_line, true)
}

/// A path that does not exist: naming the path is naming the input (the file need not be named too).
fn toml_path(world: &Path, name: &str, target: Target, line: &str, path: &str) -> Mutation {
    toml_edit_names(world, name, target, line, path, false, false)
}

fn toml_edit_names(
    world: &Path,
    name: &str,
    target: Target,
    line: &str,
    field: &str,
    at_line: bool,
    file: bool,
) -> Mutation {
    let bytes = clean(world, "exp.toml");
    let ls = super::damage::lines(&bytes);
    let find = |prefix: &str| {
        ls.iter()
            .position(|l| l.starts_with(prefix.as_bytes()))
            .unwrap_or_else(|| panic!("exp.toml has no line {prefix:?}"))
    };
    let (bytes, n) = match target {
        Target::Replace(prefix) => {
            (replace_line(&bytes, find(prefix) + 1, Some(line.as_bytes())), find(prefix) + 1)
        }
        Target::After(prefix) => (insert_line(&bytes, find(prefix) + 1, line), find(prefix) + 2),
        Target::Top => (insert_line(&bytes, 0, line), 1),
        Target::End => (insert_line(&bytes, ls.len(), line), ls.len() + 1),
    };
    let names = match (at_line, file) {
        (true, _) => vec![at("exp.toml", n), field.to_string()],
        (false, true) => vec!["exp.toml".to_string(), field.to_string()],
        (false, false) => vec![field.to_string()],
    };
    writes(name, "exp.toml", bytes, refused(&names))
}

/// A key of the experiment file's endpoint model (replaced where it is, added after its last key
/// otherwise); the error names its line and the key.
fn model_key(world: &Path, name: &str, key: &'static str, value: &str) -> Mutation {
    let prefix: &'static str = Box::leak(format!("{key} =").into_boxed_str());
    let present =
        String::from_utf8_lossy(&clean(world, "exp.toml")).lines().any(|l| l.starts_with(prefix));
    let target = if present { Target::Replace(prefix) } else { Target::After("max_attempts =") };
    toml_edit(world, name, target, &format!("{key} = {value}"), key, true)
}

/// A `[live]` section (the live policy and limits) with one key, put before `[judge]`: the error names
/// the key's line and the key (a misspelt limit must never be silently the default).
fn live_key(world: &Path, name: &str, key: &str, value: &str) -> Mutation {
    let bytes = clean(world, "exp.toml");
    let judge = super::damage::lines(&bytes)
        .iter()
        .position(|l| l == b"[judge]")
        .expect("exp.toml has a [judge] table")
        + 1;
    let section = format!("[live]\n{key} = {value}\n[judge]");
    let bytes = replace_line(&bytes, judge, Some(section.as_bytes()));
    writes(name, "exp.toml", bytes, refused(&[at("exp.toml", judge + 1), key.to_string()]))
}

fn config_mutations(world: &Path) -> Vec<Mutation> {
    use Target::*;
    let mut v = generic(world, "exp.toml", Shape::Toml, &["empty"]);
    let key = "sk-proj-Zq81vTtY3mWc9LpR0aXe4BnKd7Hs2FgJ";
    v.extend([
        toml_edit(world, "unknown-key", Top, "trails = 1", "trails", true),
        toml_edit(world, "trials-string", Replace("trials ="), "trials = \"one\"", "trials", true),
        toml_edit(world, "trials-zero", Replace("trials ="), "trials = 0", "trials", true),
        toml_edit(world, "trials-negative", Replace("trials ="), "trials = -1", "trials", true),
        toml_edit(
            world,
            "max-steps-zero",
            Replace("max_steps ="),
            "max_steps = 0",
            "max_steps",
            true,
        ),
        toml_edit(
            world,
            "max-steps-overflow",
            Replace("max_steps ="),
            "max_steps = 18446744073709551616",
            "max_steps",
            true,
        ),
        toml_edit(
            world,
            "repeat-limit-one",
            Replace("repeat_limit ="),
            "repeat_limit = 1",
            "repeat_limit",
            true,
        ),
        toml_edit(world, "seed-negative", Replace("seed ="), "seed = -1", "seed", true),
        toml_edit(
            world,
            "layout-unknown",
            Replace("layouts ="),
            "layouts = [\"sideways\"]",
            "sideways",
            false,
        ),
        toml_edit(
            world,
            "variant-op-unknown",
            Replace("variants ="),
            "variants = [\"op:nosuch\"]",
            "op:nosuch",
            false,
        ),
        toml_path(
            world,
            "variant-file-missing",
            Replace("variants ="),
            "variants = [\"file:no-such-variant\"]",
            "no-such-variant",
        ),
        toml_path(
            world,
            "dataset-missing",
            Replace("datasets ="),
            "datasets = [\"no-such-tasks.jsonl\"]",
            "no-such-tasks.jsonl",
        ),
        toml_path(
            world,
            "catalog-missing",
            Replace("catalogs ="),
            "catalogs = [\"no-such-catalog\"]",
            "no-such-catalog",
        ),
        toml_edit(
            world,
            "run-id-traversal",
            Replace("run_id ="),
            "run_id = \"../t1\"",
            "run_id",
            true,
        ),
        toml_path(
            world,
            "out-under-a-file",
            Replace("out ="),
            "out = \"tasks.jsonl/out\"",
            "tasks.jsonl/out",
        ),
        toml_edit(
            world,
            "filter-no-key",
            Replace("filter ="),
            "filter = [\"single\"]",
            "filter",
            true,
        ),
        toml_edit(
            world,
            "filter-kind-unknown",
            Replace("filter ="),
            "filter = [\"kind=sometimes\"]",
            "filter",
            true,
        ),
        toml_edit(
            world,
            "tasks-match-nothing",
            Replace("filter ="),
            "tasks = [\"nomatch-*\"]",
            "nomatch-*",
            false,
        ),
        toml_edit(world, "sample-zero", Replace("filter ="), "sample = 0", "sample", true),
        toml_edit(
            world,
            "distractors-repeated",
            Replace("filter ="),
            "distractors = [10, 10]",
            "distractors",
            true,
        ),
        toml_edit(
            world,
            "execute-unknown-catalog",
            Replace("filter ="),
            "execute = [\"nosuch=live\"]",
            "nosuch",
            false,
        ),
        toml_edit(
            world,
            "execute-unknown-mode",
            Replace("filter ="),
            "execute = [\"sometimes\"]",
            "execute",
            false,
        ),
        live_key(world, "live-key-unknown", "call_timeout_msx", "5000"),
        live_key(world, "live-key-wrong-type", "sandboxes", "\"four\""),
        model_key(world, "model-key-unknown", "temprature", "0.0"),
        model_key(world, "concurrency-zero", "concurrency", "0"),
        model_key(world, "concurrency-huge", "concurrency", "100000"),
        model_key(world, "temperature-3", "temperature", "3.0"),
        model_key(world, "temperature-negative", "temperature", "-0.5"),
        model_key(world, "top-p-1.5", "top_p", "1.5"),
        model_key(world, "max-tokens-zero", "max_tokens", "0"),
        model_key(world, "timeout-zero", "request_timeout_s", "0"),
        model_key(world, "timeout-huge", "request_timeout_s", "100000000"),
        model_key(world, "attempts-zero", "max_attempts", "0"),
        model_key(world, "tool-choice-unknown", "tool_choice", "\"sometimes\""),
        model_key(world, "base-url-not-a-url", "base_url", "\"notaurl\""),
        model_key(world, "base-url-no-host", "base_url", "\"http:///v1\""),
        model_key(world, "base-url-ftp", "base_url", "\"ftp://127.0.0.1/v1\""),
        model_key(world, "base-url-port-out-of-range", "base_url", "\"http://127.0.0.1:99999/v1\""),
        model_key(world, "model-empty", "model", "\"\""),
        model_key(world, "api-key-env-empty", "api_key_env", "\"\""),
        model_key(
            world,
            "price-negative",
            "price",
            "{ input_per_mtok = -1.0, output_per_mtok = 1.0 }",
        ),
        // A key that is well-formed but does not belong to this backend: file and key, any line.
        toml_edit(
            world,
            "replay-file-on-openai",
            After("max_attempts ="),
            "replay_file = \"answers.jsonl\"",
            "replay_file",
            false,
        ),
        toml_edit(
            world,
            "backend-unknown",
            Replace("backend = \"openai\""),
            "backend = \"nosuch\"",
            "backend",
            false,
        ),
        toml_edit(
            world,
            "replay-without-file",
            Replace("backend = \"oracle\""),
            "backend = \"replay\"",
            "replay_file",
            false,
        ),
    ]);
    // Every bad run id of the flag's cases, as the file's `run_id` (a JSON string is a TOML one).
    for (name, id) in super::flags::bad_run_ids() {
        let line = format!("run_id = {}", serde_json::to_string(&id).unwrap());
        v.push(toml_edit(
            world,
            &format!("run-id-{name}"),
            Replace("run_id ="),
            &line,
            "run_id",
            true,
        ));
    }
    // The key itself must not be echoed: it belongs in the environment, and an error that prints it
    // puts it in CI logs.
    let mut m = toml_edit(
        world,
        "api-key-env-holds-a-key",
        Replace("api_key_env ="),
        &format!("api_key_env = \"{key}\""),
        "api_key_env",
        false,
    );
    if let Expect::Refused { not, .. } = &mut m.expect {
        not.push(key.into());
    }
    v.push(m);
    // The `[judge]` table is the file's last: its new keys go at the end.
    v.extend([
        toml_edit(
            world,
            "judge-methods-unknown-dataset",
            End,
            "methods = { nosuch = \"claims\" }",
            "nosuch",
            false,
        ),
        toml_edit(world, "judge-method-unknown", End, "method = \"vibes\"", "method", false),
        toml_edit(world, "judge-rounds-zero", Replace("rounds ="), "rounds = 0", "rounds", true),
        toml_edit(
            world,
            "judge-claim-threshold-zero",
            End,
            "claim_threshold = 0.0",
            "claim_threshold",
            true,
        ),
        toml_edit(
            world,
            "judge-claim-threshold-above-one",
            End,
            "claim_threshold = 1.5",
            "claim_threshold",
            true,
        ),
        toml_path(
            world,
            "judge-prompts-missing",
            End,
            "prompts = \"no-such-prompts\"",
            "no-such-prompts",
        ),
        toml_edit(world, "judge-unknown-key", End, "modle = \"mock\"", "modle", true),
    ]);
    // The judge's base_url is the file's second `base_url =` line.
    let bytes = clean(world, "exp.toml");
    let n =
        super::damage::lines(&bytes).iter().rposition(|l| l.starts_with(b"base_url =")).unwrap()
            + 1;
    v.push(writes(
        "judge-base-url-no-host",
        "exp.toml",
        replace_line(&bytes, n, Some(b"base_url = \"http:///v1\"")),
        refused(&[at("exp.toml", n), "base_url".into()]),
    ));
    v
}

pub fn cases(world: &Path) -> Vec<(Slot, Vec<Mutation>)> {
    let run = |name: &str| {
        let mut a: Vec<&str> = SMALL_RUN.to_vec();
        a.extend(["--backends", "oracle", "--run-id", "t1"]);
        slot(if name == "catalog" { "catalog" } else { "dataset" }, "run", &a)
    };
    let serve = |path: &'static str| Slot {
        stdin: Some(MCP_SESSION),
        ..slot(
            path,
            "mcp-serve",
            &[
                "mcp",
                "serve",
                "--catalog",
                "smallcat",
                "--dataset",
                "tasks.jsonl",
                "--task",
                "w1",
                "--sessions",
                "sess.jsonl",
            ],
        )
    };
    let mut out = vec![];
    for s in [
        slot(
            "catalog",
            "validate",
            &["validate", "--catalog", "smallcat", "--dataset", "tasks.jsonl"],
        ),
        run("catalog"),
        slot("catalog", "lint", &["lint", "smallcat", "--format", "json", "-o", "lint.json"]),
        serve("catalog"),
    ] {
        let mut mutations = catalog_mutations(world);
        if s.name == "catalog/validate" {
            // Good input refused: a catalog checked on its own must not be checked against the bundled
            // suite's tasks.
            mutations.push(Mutation::new("catalog-alone", Expect::Accepted).args(&[
                "validate",
                "--catalog",
                "smallcat",
            ]));
        }
        out.push((s, mutations));
    }
    for s in [
        slot(
            "dataset",
            "validate",
            &["validate", "--catalog", "smallcat", "--dataset", "tasks.jsonl"],
        ),
        run("dataset"),
        serve("dataset"),
    ] {
        out.push((s, dataset_mutations(world)));
    }
    out.push((
        slot("config", "run", &["run", "--config", "exp.toml", "-q"]),
        config_mutations(world),
    ));
    out
}
