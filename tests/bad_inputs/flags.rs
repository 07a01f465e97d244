//! Flags: every number outside its range, every name that names nothing, every malformed URL, path and
//! id, on `run` (with and without an endpoint and a judge), on the gates shared by `run`, `report`,
//! `merge` and `compare`, and on the commands that serve or import (`mcp serve`, `mcp import`,
//! `mock-endpoint`, `lint`, `validate`). A needle `A|B` is met by a line naming either: the flag, or the
//! value it was given.

use super::harness::*;
use super::inputs::{slot, strs};
use super::world::{MCP_SESSION, SMALL_RUN};
use std::collections::{BTreeMap, BTreeSet};

/// A key where a variable name belongs: refused, and never echoed.
pub const KEY: &str = "sk-proj-Zq81vTtY3mWc9LpR0aXe4BnKd7Hs2FgJ";

fn flag(name: &str, extra: &[&str], names: &[&str]) -> Mutation {
    Mutation::new(name, refused(names)).extra(extra)
}

fn run_args(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<&str> = SMALL_RUN.to_vec();
    a.extend(extra);
    strs(&a)
}

fn run_mutations() -> Vec<Mutation> {
    let mut v = vec![
        flag("jobs-zero", &["--jobs", "0"], &["--jobs"]),
        flag("jobs-30000", &["--jobs", "30000"], &["--jobs"]),
        flag("jobs-negative", &["--jobs", "-1"], &["--jobs"]),
        flag("jobs-overflow", &["--jobs", "99999999999999999999"], &["--jobs"]),
        flag("trials-zero", &["--trials", "0"], &["--trials"]),
        flag("max-steps-zero", &["--max-steps", "0"], &["--max-steps"]),
        flag("max-steps-overflow", &["--max-steps", "99999999999999999999"], &["--max-steps"]),
        flag("repeat-limit-one", &["--repeat-limit", "1"], &["--repeat-limit"]),
        flag("seed-negative", &["--seed", "-1"], &["--seed"]),
        flag("seed-text", &["--seed", "x"], &["--seed"]),
        flag(
            "discovery-full-max-negative",
            &["--discovery-full-max", "-1"],
            &["--discovery-full-max"],
        ),
        flag(
            "lexical-min-overlap-text",
            &["--lexical-min-overlap", "x"],
            &["--lexical-min-overlap"],
        ),
        flag("variant-unknown", &["--variants", "nosuch"], &["--variants|nosuch"]),
        flag("variant-op-unknown", &["--variants", "op:nosuch"], &["--variants|nosuch"]),
        flag("variant-file-missing", &["--variants", "file:no-such-variant"], &["no-such-variant"]),
        flag("variant-empty", &["--variants", ""], &["--variants"]),
        flag("layout-unknown", &["--layouts", "sideways"], &["--layouts|sideways"]),
        flag("layout-twice", &["--layouts", "flat,flat"], &["--layouts|flat"]),
        flag("backend-unknown", &["--backends", "nosuch"], &["--backends|nosuch"]),
        flag("backend-replay-no-file", &["--backends", "replay:"], &["--backends|replay"]),
        flag(
            "backend-replay-missing-file",
            &["--backends", "replay:no-such-answers.jsonl"],
            &["no-such-answers.jsonl"],
        ),
        flag("backend-agent-no-command", &["--backends", "mcp-agent:"], &["--backends|mcp-agent"]),
        flag("distractors-negative", &["--distractors", "-1"], &["--distractors"]),
        flag("distractors-twice", &["--distractors", "5,5"], &["--distractors"]),
        flag("distractors-text", &["--distractors", "x"], &["--distractors"]),
        flag("tasks-match-nothing", &["--tasks", "nomatch-*"], &["nomatch-*"]),
        flag("tasks-empty", &["--tasks", ""], &["--tasks"]),
        flag("filter-no-key", &["--filter", "single"], &["--filter"]),
        flag("filter-kind-unknown", &["--filter", "kind=sometimes"], &["--filter|sometimes"]),
        flag("filter-key-unknown", &["--filter", "color=red"], &["--filter|color"]),
        flag("filter-keeps-nothing", &["--filter", "category=nosuch"], &["--filter|nosuch"]),
        flag("sample-zero", &["--sample", "0"], &["--sample"]),
        flag("limit-zero", &["--limit", "0"], &["--limit"]),
        flag("shard-beyond-count", &["--shard", "3/2"], &["--shard"]),
        flag("shard-zero", &["--shard", "0/2"], &["--shard"]),
        flag("shard-of-zero", &["--shard", "1/0"], &["--shard"]),
        flag("shard-text", &["--shard", "x"], &["--shard"]),
        flag("execute-unknown-mode", &["--execute", "sometimes"], &["--execute|sometimes"]),
        flag("execute-unknown-catalog", &["--execute", "nosuch=live"], &["--execute|nosuch"]),
        flag(
            "execute-catalog-unknown-mode",
            &["--execute", "smallcat=sometimes"],
            &["--execute|sometimes"],
        ),
        flag("execute-live-not-imported", &["--execute", "live"], &["--execute|smallcat"]),
        flag("config-missing", &["--config", "no-such.toml"], &["no-such.toml"]),
        flag("config-is-a-directory", &["--config", "smallcat"], &["smallcat"]),
    ];
    for (name, id) in bad_run_ids() {
        // A fresh output root: `out/latest` of the world must not decide the case.
        v.push(
            Mutation::new(format!("run-id-{name}"), refused(&["--run-id"]))
                .args(&run_args(&["--backends", "oracle", "--run-id", &id]))
                .extra(&["--out", "fresh"]),
        );
    }
    v.push(Mutation::new("out-is-a-file", refused(&["tasks.jsonl"])).args(&strs(&[
        "run",
        "--catalog",
        "smallcat",
        "--dataset",
        "tasks.jsonl",
        "--variants",
        "good",
        "--layouts",
        "flat",
        "--out",
        "tasks.jsonl",
        "-q",
        "--backends",
        "oracle",
        "--run-id",
        "t1",
    ])));
    v.push(Mutation::new("out-under-a-file", refused(&["tasks.jsonl/out"])).args(&strs(&[
        "run",
        "--catalog",
        "smallcat",
        "--dataset",
        "tasks.jsonl",
        "--variants",
        "good",
        "--layouts",
        "flat",
        "--out",
        "tasks.jsonl/out",
        "-q",
        "--backends",
        "oracle",
        "--run-id",
        "t1",
    ])));
    v
}

/// Run ids that are not one plain directory name, by a short name.
pub fn bad_run_ids() -> Vec<(&'static str, String)> {
    let ids = [
        ("latest", "latest"),
        ("dot", "."),
        ("dotdot", ".."),
        ("empty", ""),
        ("slash", "a/b"),
        ("hidden", ".hidden"),
        ("newline", "a\nb"),
    ];
    let mut v: Vec<(&'static str, String)> =
        ids.iter().map(|(n, id)| (*n, id.to_string())).collect();
    v.push(("300-chars", "r".repeat(300)));
    v
}

fn endpoint_mutations() -> Vec<Mutation> {
    let mut v = vec![
        flag("base-url-not-a-url", &["--base-url", "notaurl"], &["--base-url"]),
        flag("base-url-no-host", &["--base-url", "http:///v1"], &["--base-url"]),
        flag("base-url-ftp", &["--base-url", "ftp://127.0.0.1/v1"], &["--base-url"]),
        flag(
            "base-url-port-out-of-range",
            &["--base-url", "http://127.0.0.1:99999/v1"],
            &["--base-url"],
        ),
        flag("base-url-query", &["--base-url", "http://127.0.0.1:1/v1?x=1"], &["--base-url"]),
        flag("concurrency-zero", &["--concurrency", "0"], &["--concurrency"]),
        flag("concurrency-huge", &["--concurrency", "100000"], &["--concurrency"]),
        flag("rpm-zero", &["--rpm", "0"], &["--rpm"]),
        flag("tpm-negative", &["--tpm", "-5"], &["--tpm"]),
        flag("request-timeout-zero", &["--request-timeout", "0"], &["--request-timeout"]),
        flag("request-timeout-huge", &["--request-timeout", "1000000000"], &["--request-timeout"]),
        flag("request-timeout-nan", &["--request-timeout", "NaN"], &["--request-timeout"]),
        flag("episode-timeout-zero", &["--episode-timeout", "0"], &["--episode-timeout"]),
        flag("max-attempts-zero", &["--max-attempts", "0"], &["--max-attempts"]),
        flag("temperature-3", &["--temperature", "3"], &["--temperature"]),
        flag("temperature-negative", &["--temperature", "-1"], &["--temperature"]),
        flag("temperature-inf", &["--temperature", "inf"], &["--temperature"]),
        flag("top-p-1.5", &["--top-p", "1.5"], &["--top-p"]),
        flag("max-tokens-zero", &["--max-tokens", "0"], &["--max-tokens"]),
        flag("tool-choice-unknown", &["--tool-choice", "sometimes"], &["--tool-choice"]),
        flag(
            "parallel-tool-calls-yes",
            &["--parallel-tool-calls", "yes"],
            &["--parallel-tool-calls"],
        ),
        flag("api-key-env-empty", &["--api-key-env", ""], &["--api-key-env"]),
        flag("model-empty", &["--model", ""], &["--model"]),
        flag("breaker-negative", &["--breaker", "-1"], &["--breaker"]),
        flag("model-seed-text", &["--model-seed", "x"], &["--model-seed"]),
        flag("cache-dir-is-a-file", &["--cache-dir", "tasks.jsonl"], &["tasks.jsonl"]),
        flag(
            "cache-dir-under-a-file",
            &["--cache-dir", "tasks.jsonl/cache"],
            &["tasks.jsonl/cache"],
        ),
        refuse_key("api-key-env-holds-a-key", &["--api-key-env", KEY], &["--api-key-env"]),
        Mutation::new("openai-without-model", refused(&["--model"])).args(&run_args(&[
            "--backends",
            "oracle,openai",
            "--base-url",
            "@MOCK@",
            "--run-id",
            "t1",
        ])),
        Mutation::new("env-base-url-not-a-url", refused(&["OPENAI_BASE_URL"]))
            .args(&run_args(&["--backends", "oracle,openai", "--model", "mock", "--run-id", "t1"]))
            .env("OPENAI_BASE_URL", "notaurl"),
    ];
    v.push(
        Mutation::new("env-base-url-no-host", refused(&["OPENAI_BASE_URL"]))
            .args(&run_args(&["--backends", "oracle,openai", "--model", "mock", "--run-id", "t1"]))
            .env("OPENAI_BASE_URL", "http:///v1"),
    );
    v
}

/// A key given where a variable name belongs: refused naming the flag, the key never printed.
fn refuse_key(name: &str, extra: &[&str], names: &[&str]) -> Mutation {
    Mutation::new(name, refused_without(names, &[KEY])).extra(extra)
}

fn judge_mutations() -> Vec<Mutation> {
    vec![
        flag("judge-empty", &["--judge", ""], &["--judge"]),
        flag("judge-url-without-model", &["--judge", "@MOCK@"], &["--judge"]),
        flag("judge-model-empty", &["--judge", "@@MOCK@"], &["--judge"]),
        flag("judge-url-not-a-url", &["--judge", "mock@notaurl"], &["--judge"]),
        flag("judge-url-no-host", &["--judge", "mock@http:///v1"], &["--judge"]),
        flag("judge-method-unknown", &["--judge-method", "vibes"], &["--judge-method|vibes"]),
        flag(
            "judge-method-unknown-dataset",
            &["--judge-method", "nosuch=claims"],
            &["--judge-method|nosuch"],
        ),
        flag("judge-rounds-zero", &["--judge-rounds", "0"], &["--judge-rounds"]),
        flag("claim-threshold-zero", &["--claim-threshold", "0"], &["--claim-threshold"]),
        flag("claim-threshold-above-one", &["--claim-threshold", "1.5"], &["--claim-threshold"]),
        flag("judge-concurrency-zero", &["--judge-concurrency", "0"], &["--judge-concurrency"]),
        flag("judge-max-attempts-zero", &["--judge-max-attempts", "0"], &["--judge-max-attempts"]),
        flag("judge-temperature-5", &["--judge-temperature", "5"], &["--judge-temperature"]),
        flag("judge-api-key-env-empty", &["--judge-api-key-env", ""], &["--judge-api-key-env"]),
        refuse_key(
            "judge-api-key-env-holds-a-key",
            &["--judge-api-key-env", KEY],
            &["--judge-api-key-env"],
        ),
        Mutation::new("judge-settings-without-judge", refused(&["--judge"])).args(&run_args(&[
            "--backends",
            "oracle",
            "--run-id",
            "t1",
            "--judge-rounds",
            "2",
        ])),
    ]
}

/// The gates, on a command whose arguments are `base` (holding `--baseline out/base` except for
/// `compare`, whose baseline is its first argument).
fn gate_mutations(base: &[String], compare: bool) -> Vec<Mutation> {
    let mut v = vec![
        flag(
            "max-drop-cells-match-nothing",
            &["--max-drop", "2", "--gate-cells", "nomatch-*"],
            &["--gate-cells", "nomatch-*"],
        ),
        flag(
            "min-pass-cells-match-nothing",
            &["--min-pass-rate", "10", "--gate-cells", "nomatch-*"],
            &["--gate-cells", "nomatch-*"],
        ),
        flag("min-pass-rate-101", &["--min-pass-rate", "101"], &["--min-pass-rate"]),
        flag("min-pass-rate-negative", &["--min-pass-rate", "-1"], &["--min-pass-rate"]),
        flag("min-pass-rate-nan", &["--min-pass-rate", "NaN"], &["--min-pass-rate"]),
        flag(
            "min-selection-200",
            &["--min-selection-accuracy", "200"],
            &["--min-selection-accuracy"],
        ),
        flag("max-drop-negative", &["--max-drop", "-1"], &["--max-drop"]),
        flag("max-drop-text", &["--max-drop", "x"], &["--max-drop"]),
        flag("gate-scope-unknown", &["--gate-scope", "everything"], &["--gate-scope"]),
        flag("match-unknown-field", &["--match", "dataset,colour"], &["--match|colour"]),
        flag("match-empty", &["--match", ""], &["--match"]),
        flag("significant-only-without-max-drop", &["--significant-only"], &["--significant-only"]),
        flag(
            "step-summary-under-a-file",
            &["--step-summary", "tasks.jsonl/summary.md"],
            &["tasks.jsonl/summary.md"],
        ),
        flag("step-summary-is-a-directory", &["--step-summary", "smallcat"], &["smallcat"]),
    ];
    if base.iter().any(|a| a == "--backends") {
        // A cell of this run that the baseline lacks (it ran no `random`): a drop gate on it alone
        // would check nothing, which is known before the run.
        let names = ["--gate-cells", "*/random"];
        let extra =
            ["--backends", "oracle,lexical,random", "--max-drop", "2", "--gate-cells", "*/random"];
        v.push(flag("max-drop-cells-match-no-shared-cell", &extra, &names));
    }
    if !compare {
        let without: Vec<String> =
            base.iter().filter(|a| *a != "--baseline" && *a != "out/base").cloned().collect();
        v.push(
            Mutation::new("max-drop-without-baseline", refused(&["--baseline"]))
                .args(&without)
                .extra(&["--max-drop", "2"]),
        );
    }
    v
}

fn serve_mutations() -> Vec<Mutation> {
    let mut http = flag("http-not-loopback", &["--http", "0.0.0.0:0"], &["--http|--allow-remote"]);
    http.serves = true;
    vec![
        flag("layout-unknown", &["--layout", "sideways"], &["--layout|sideways"]),
        flag("variant-unknown", &["--variant", "nosuch"], &["--variant|nosuch"]),
        flag("variant-op-unknown", &["--variant", "op:nosuch"], &["--variant|nosuch"]),
        flag("variant-file-missing", &["--variant", "file:no-such-variant"], &["no-such-variant"]),
        flag("task-unknown", &["--task", "nosuch"], &["--task|nosuch"]),
        flag("distractors-without-task", &["--distractors", "5"], &["--distractors"]),
        flag("distractors-negative", &["--distractors", "-1"], &["--distractors"]),
        http,
        flag("http-not-an-address", &["--http", "notanaddr"], &["--http"]),
        flag("execute-live-not-imported", &["--execute", "live"], &["--execute|smallcat"]),
        flag(
            "record-under-a-file",
            &["--record", "tasks.jsonl/calls.jsonl"],
            &["tasks.jsonl/calls.jsonl"],
        ),
        flag(
            "sessions-under-a-file",
            &["--sessions", "tasks.jsonl/sessions.jsonl"],
            &["tasks.jsonl/sessions.jsonl"],
        ),
        flag("run-id-latest", &["--out", "fresh", "--run-id", "latest"], &["--run-id"]),
        flag("seed-text", &["--seed", "x"], &["--seed"]),
    ]
}

fn mock_endpoint_mutations() -> Vec<Mutation> {
    vec![
        flag("fault-unknown", &["--fault", "nosuch:1"], &["--fault"]),
        flag("fault-every-zero", &["--fault", "rate_limit:0"], &["--fault"]),
        flag("fault-every-text", &["--fault", "rate_limit:x"], &["--fault"]),
        flag("port-out-of-range", &["--port", "70000"], &["--port"]),
        flag("latency-negative", &["--latency-ms", "-5"], &["--latency-ms"]),
        flag("host-not-an-address", &["--host", "not a host"], &["--host"]),
        flag("sampling-noise-negative", &["--sampling-noise", "-1"], &["--sampling-noise"]),
        flag(
            "require-key-env-unset",
            &["--require-key-env", "TP_BAD_INPUTS_UNSET"],
            &["--require-key-env"],
        ),
        flag("down-after-text", &["--down-after", "x"], &["--down-after"]),
    ]
}

fn mcp_import_mutations(server: &[String]) -> Vec<Mutation> {
    let with_server = |extra: &[&str]| {
        let mut a = strs(&["mcp", "import", "--out", "imported"]);
        a.extend(strs(extra));
        a.push("--".into());
        a.extend(server.iter().cloned());
        a
    };
    let url = |u: &str| strs(&["mcp", "import", "--out", "imported", "--url", u]);
    vec![
        Mutation::new("url-not-a-url", refused(&["--url"])).args(&url("notaurl")),
        Mutation::new("url-no-host", refused(&["--url"])).args(&url("http:///mcp")),
        Mutation::new("url-ftp", refused(&["--url"])).args(&url("ftp://127.0.0.1/mcp")),
        Mutation::new("neither-url-nor-command", refused(&["--url|COMMAND"]))
            .args(&strs(&["mcp", "import", "--out", "imported"])),
        Mutation::new("capability-unknown", refused(&["--capabilities|telepathy"]))
            .args(&with_server(&["--capabilities", "sampling,telepathy"])),
        Mutation::new("env-without-value", refused(&["--env"]))
            .args(&with_server(&["--env", "NOEQUALS"])),
        Mutation::new("env-without-name", refused(&["--env"]))
            .args(&with_server(&["--env", "=value"])),
        Mutation::new("categories-missing", refused(&["no-such-categories.json"]))
            .args(&with_server(&["--categories", "no-such-categories.json"])),
        Mutation::new("categories-not-json", refused(&["tasks.jsonl"]))
            .args(&with_server(&["--categories", "tasks.jsonl"])),
        Mutation::new("out-is-a-file", refused(&["tasks.jsonl"])).args(&{
            let mut a = strs(&["mcp", "import", "--out", "tasks.jsonl", "--"]);
            a.extend(server.iter().cloned());
            a
        }),
    ]
}

pub fn cases() -> Vec<(Slot, Vec<Mutation>)> {
    let mut out = vec![];
    out.push((
        Slot {
            args: run_args(&["--backends", "oracle", "--run-id", "t1"]),
            ..slot("flags: run", "run", &[])
        },
        run_mutations(),
    ));
    out.push((
        Slot {
            args: run_args(&[
                "--backends",
                "oracle,openai",
                "--model",
                "mock",
                "--base-url",
                "@MOCK@",
                "--run-id",
                "t1",
            ]),
            ..slot("flags: endpoint", "run", &[])
        },
        endpoint_mutations(),
    ));
    out.push((
        Slot {
            args: run_args(&["--backends", "oracle", "--run-id", "t1", "--judge", "mock@@MOCK@"]),
            ..slot("flags: judge", "run", &[])
        },
        judge_mutations(),
    ));
    for (name, args, compare) in [
        (
            "run",
            run_args(&["--backends", "oracle,lexical", "--run-id", "t1", "--baseline", "out/base"]),
            false,
        ),
        ("report", strs(&["report", "out/b", "--baseline", "out/base"]), false),
        (
            "merge",
            strs(&["merge", "--out", "merged", "out/s1", "out/s2", "--baseline", "out/base"]),
            false,
        ),
        ("compare", strs(&["compare", "out/base", "out/b"]), true),
    ] {
        let m = gate_mutations(&args, compare);
        out.push((Slot { args, ..slot("gates", name, &[]) }, m));
    }
    out.push((
        Slot {
            stdin: Some(MCP_SESSION),
            ..slot(
                "servers",
                "mcp-serve",
                &["mcp", "serve", "--catalog", "smallcat", "--dataset", "tasks.jsonl"],
            )
        },
        serve_mutations(),
    ));
    out.push((
        Slot {
            serves: true,
            ..slot("servers", "mock-endpoint", &["mock-endpoint", "--port", "0"])
        },
        mock_endpoint_mutations(),
    ));
    let server =
        strs(&[env!("CARGO_BIN_EXE_toolpick"), "mcp", "serve", "--catalog", "@DIR@/smallcat"]);
    let mut import = strs(&["mcp", "import", "--out", "imported", "--"]);
    import.extend(server.iter().cloned());
    out.push((
        Slot { args: import, ..slot("servers", "mcp-import", &[]) },
        mcp_import_mutations(&server),
    ));
    out.push((
        slot("servers", "lint", &["lint", "smallcat", "--format", "json", "-o", "lint.json"]),
        vec![
            flag("format-unknown", &["--format", "yaml"], &["--format"]),
            flag("fail-on-unknown", &["--fail-on", "sometimes"], &["--fail-on"]),
            Mutation::new("output-under-a-file", refused(&["tasks.jsonl/lint.json"]))
                .args(&strs(&["lint", "smallcat", "-o", "tasks.jsonl/lint.json"])),
            Mutation::new("output-is-a-directory", refused(&["judge-templates"])).args(&strs(&[
                "lint",
                "smallcat",
                "-o",
                "judge-templates",
            ])),
        ],
    ));
    out
}

/// The flags of `command` that take a value, as its `--help` lists them (`--jobs <JOBS>`,
/// `-o, --output <OUTPUT>`).
fn value_flags(command: &[String]) -> Vec<String> {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_toolpick"))
        .args(command)
        .arg("--help")
        .output()
        .unwrap();
    assert!(o.status.success(), "toolpick {command:?} --help");
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            // `-o, --output <OUTPUT>`: the short name first.
            let l = if l.starts_with('-') && !l.starts_with("--") { l.get(4..)? } else { l };
            let (flag, rest) =
                l.strip_prefix("--").map(|_| l.split_once(' ').unwrap_or((l, "")))?;
            rest.starts_with('<').then(|| flag.to_string())
        })
        .collect()
}

/// Is `v` a negative number (`-1`, `-0.5`)?
fn negative(v: &str) -> bool {
    v.strip_prefix('-').is_some_and(|n| n.parse::<f64>().is_ok())
}

/// A negative number for every flag that takes a value, on every command a slot runs (from the
/// command's first slot, whose base is valid input): clap must hand `-1` to the flag — whose parser
/// or check then names the flag, or takes the value — and never read it as an unknown flag `-1`.
/// Flags another case already gives a negative number are left to that case. Commands whose slot
/// ends in a server's command line (`mcp import -- …`) are left out: a flag after `--` is the
/// server's.
pub fn negative_values(groups: &[(Slot, Vec<Mutation>)]) -> Vec<(Slot, Vec<Mutation>)> {
    let mut covered: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (slot, mutations) in groups {
        let flags = covered.entry(command_of(&slot.args)).or_default();
        for m in mutations {
            flags.extend(m.extra.windows(2).filter(|w| negative(&w[1])).map(|w| w[0].clone()));
        }
    }
    let mut out = vec![];
    let mut seen = BTreeSet::new();
    for (slot, _) in groups {
        let command = command_of(&slot.args);
        if slot.args.iter().any(|a| a == "--") || !seen.insert(command.clone()) {
            continue;
        }
        let mutations: Vec<Mutation> = value_flags(&command)
            .into_iter()
            .filter(|f| !covered[&command].contains(f))
            .map(|f| {
                Mutation::new(
                    format!("{}-minus-one", &f[2..]),
                    Expect::ValueTaken { names: vec![format!("{f}|-1")] },
                )
                .extra(&[f.as_str(), "-1"])
            })
            .collect();
        let copy = Slot {
            path: "negative values",
            name: format!("negative values/{}", command.join(" ")),
            args: slot.args.clone(),
            stdin: slot.stdin,
            serves: slot.serves,
            prepare: slot.prepare.clone(),
            import_out: None,
        };
        out.push((copy, mutations));
    }
    out
}

/// Every bad run id ([`bad_run_ids`]) on every command that takes `--run-id` (from the command's
/// first slot, under a fresh `--out`), except the ids a case of that command already gives.
pub fn run_ids(groups: &[(Slot, Vec<Mutation>)]) -> Vec<(Slot, Vec<Mutation>)> {
    let mut given: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (slot, mutations) in groups {
        let ids = given.entry(command_of(&slot.args)).or_default();
        for m in mutations {
            let args = m.args.iter().flatten().chain(&m.extra);
            ids.extend(
                args.clone()
                    .zip(args.skip(1))
                    .filter(|(f, _)| *f == "--run-id")
                    .map(|(_, id)| id.clone()),
            );
        }
    }
    let mut out = vec![];
    let mut seen = BTreeSet::new();
    for (slot, _) in groups {
        let command = command_of(&slot.args);
        if slot.args.iter().any(|a| a == "--")
            || !seen.insert(command.clone())
            || !value_flags(&command).iter().any(|f| f == "--run-id")
        {
            continue;
        }
        let mutations: Vec<Mutation> = bad_run_ids()
            .into_iter()
            .filter(|(_, id)| !given[&command].contains(id))
            .map(|(name, id)| {
                Mutation::new(format!("run-id-{name}"), refused(&["--run-id"]))
                    .extra(&["--out", "fresh", "--run-id", &id])
            })
            .collect();
        if mutations.is_empty() {
            continue;
        }
        let copy = Slot {
            path: "run ids",
            name: format!("run ids/{}", command.join(" ")),
            args: slot.args.clone(),
            stdin: slot.stdin,
            serves: slot.serves,
            prepare: slot.prepare.clone(),
            import_out: None,
        };
        out.push((copy, mutations));
    }
    out
}
