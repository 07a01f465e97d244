//! The drill-down's argument comparison and the per-cell confusion heatmap, in Chromium, against the
//! trial records: the argument table of a trial has the rows its record implies (expected parameters,
//! then parameters given and not expected, then required ones neither expected nor given), with the
//! record's acceptable values and given values; a passing trial's verdicts are all `ok`, and a failing
//! trial's decisive row carries the record's error type and detail. Every cell's heatmap counts sum to
//! the expected calls of the cell's scored trials (counted here from `trials.jsonl`: one for a single
//! task, one per expected call for multi and parallel tasks, none otherwise; trials the backend or a
//! provider limit ended are in no count); a click on a tool marks exactly its row and column. The page
//! stays within 1 280 and 390 px with both views open, and hostile text in queries, tool names and
//! arguments never runs.

use super::{measure_with, num};
use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// After load (the hash has opened a trial): the drill-down's comparison, every cell's heatmap sum
/// (all rows shown; only when the hash ends in `&sums`, a key the page ignores), a click on a tool of the first cell and what it marked, and the page's width.
const VIEWS_SCRIPT: &str = r##"<script>
window.addEventListener("load", function () { setTimeout(function () {
  var out = {};
  function texts(td) { return Array.prototype.map.call(td.querySelectorAll("code"), function (c) { return c.textContent; }); }
  try {
    out.heading = (document.querySelector("#detail h3") || {}).textContent || null;
    out.compared = Array.prototype.map.call(document.querySelectorAll("#detail-body .cmp"), function (box) {
      return { expected: Number(box.dataset.expected), call: box.dataset.call === undefined ? null : Number(box.dataset.call),
        line: box.querySelector("p").textContent,
        rows: Array.prototype.map.call(box.querySelectorAll("table.args tbody tr"), function (tr) {
          var td = tr.querySelectorAll("td");
          return { name: td[0].textContent, acceptable: td[1].querySelector("code") ? texts(td[1]) : null,
            given: td[2].querySelector("code") ? texts(td[2])[0] : null, verdict: td[3].textContent, rule: td[4].textContent,
            decisive: tr.classList.contains("decisive") };
        }) };
    });
    var d0 = JSON.parse(document.getElementById("toolpick-data").textContent), s0 = document.getElementById("hm-a");
    out.initial = { cell: d0.matrices[Number(s0.value)].key, beside: document.getElementById("hm-b").value,
      marked: Array.prototype.map.call(document.querySelectorAll("#heatmap th.hl"), function (th) { return th.dataset.tool; }) };
    document.getElementById("hm-fold").open = true;
    var all = document.getElementById("hm-all"), sel = document.getElementById("hm-a");
    all.checked = true; all.dispatchEvent(new Event("change"));
    out.sums = {};
    var data = JSON.parse(document.getElementById("toolpick-data").textContent);
    if (/&sums$/.test(location.hash)) data.matrices.forEach(function (m, k) {
      sel.value = String(k); sel.dispatchEvent(new Event("change"));
      var sum = 0;
      document.querySelectorAll("#heatmap td[data-count]").forEach(function (td) { sum += Number(td.textContent); });
      out.sums[m.key] = { sum: sum, said: document.getElementById("hm-sum").textContent };
    });
    // The first cell that is not the oracle's, its fourth expected tool clicked.
    var first = 0;
    data.matrices.forEach(function (m, k) { if (first === 0 && !/oracle$/.test(m.backend)) first = k + 1; });
    sel.value = String(first - 1); sel.dispatchEvent(new Event("change"));
    var rows = document.querySelectorAll("#heatmap th.row"), th = rows[Math.min(3, rows.length - 1)], tool = th.dataset.tool;
    th.click();
    var cols = Array.prototype.map.call(document.querySelectorAll("#heatmap th.col"), function (c) { return c.dataset.tool; });
    var marked = document.querySelectorAll("#heatmap td.hl"), wrong = 0;
    marked.forEach(function (td) { if (td.dataset.expected !== tool && td.dataset.called !== tool) wrong++; });
    out.click = { tool: tool, rows: rows.length, cols: cols.length, in_cols: cols.indexOf(tool) >= 0, marked: marked.length, wrong: wrong,
      row_marked: document.querySelectorAll("#heatmap td.hl[data-expected=\"" + CSS.escape(tool) + "\"]").length,
      headers_marked: document.querySelectorAll("#heatmap th.hl").length,
      tools_row_marked: Array.prototype.map.call(document.querySelectorAll("#hm-tools tr.hl"), function (tr) { return tr.dataset.tool; }) };
    out.scroll_width = document.documentElement.scrollWidth;
    out.inner_width = window.innerWidth;
    out.pwned = window.__pwned === undefined ? null : String(window.__pwned);
    out.images = document.querySelectorAll("img").length;
  } catch (err) { out.error = String(err && err.stack || err); }
  if (window.parent !== window) { window.parent.postMessage(JSON.stringify(out), "*"); return; }
  var pre = document.createElement("pre");
  pre.id = "browser-checks";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 0); });
</script>
"##;

fn records(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// JSON values equal, numbers by value (the page writes `3.0` as `3`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn attempts(t: &Value) -> Vec<usize> {
    let calls = t["calls"].as_array().unwrap();
    (0..calls.len())
        .filter(|&i| {
            matches!(
                calls[i]["record"]["status"].as_str(),
                Some("executed" | "rejected" | "malformed" | "invented")
            )
        })
        .collect()
}

/// The argument table shown for `t` (one expected call, one attempt) has the rows its record implies.
fn assert_arguments(name: &str, t: &Value, v: &Value) {
    let id = t["trial_id"].as_str().unwrap();
    assert_eq!(v["heading"].as_str(), Some(id), "{name}: the drill-down shows another trial");
    let compared = v["compared"].as_array().unwrap();
    assert_eq!(compared.len(), 1, "{name}: one expected call, one comparison: {compared:?}");
    let c = &compared[0];
    let call = attempts(t)[0];
    assert_eq!(c["call"].as_u64(), Some(call as u64), "{name}: not compared with its one attempt");
    let record = &t["calls"][call]["record"];
    let expected = &t["expected"][0];
    let tool = record["tool_id"].as_str().unwrap();
    let given = record["arguments"].as_object().unwrap();
    let acceptable = expected["arguments"].as_object().unwrap();
    // Expected parameters, then given ones not expected, then required ones neither expected nor given.
    let mut names: Vec<&String> = acceptable.keys().collect();
    names.extend(given.keys().filter(|k| !acceptable.contains_key(*k)));
    if let Some(declared) = t["declared"][tool].as_object() {
        names.extend(
            declared
                .iter()
                .filter(|(k, d)| {
                    d["required"] == true && !acceptable.contains_key(*k) && !given.contains_key(*k)
                })
                .map(|(k, _)| k),
        );
    }
    let rows = c["rows"].as_array().unwrap();
    let shown: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(shown, names, "{name}: the argument rows");
    let parse = |s: &Value| serde_json::from_str::<Value>(s.as_str().unwrap()).unwrap();
    for (r, n) in rows.iter().zip(&names) {
        let want = acceptable.get(*n);
        let shown_acceptable: Option<Vec<Value>> =
            r["acceptable"].as_array().map(|a| a.iter().map(parse).collect());
        match (want, &shown_acceptable) {
            (None, None) => {}
            (Some(w), Some(s)) => assert!(
                same(w, &Value::Array(s.clone())),
                "{name}: `{n}` acceptable {s:?}, the record says {w}"
            ),
            _ => panic!("{name}: `{n}` acceptable {shown_acceptable:?}, the record says {want:?}"),
        }
        let shown_given = (!r["given"].is_null()).then(|| parse(&r["given"]));
        match (given.get(*n), &shown_given) {
            (None, None) => {}
            (Some(w), Some(s)) => assert!(same(w, s), "{name}: `{n}` given {s}, the record {w}"),
            (w, s) => panic!("{name}: `{n}` given {s:?}, the record says {w:?}"),
        }
        let verdict = r["verdict"].as_str().unwrap();
        // Facts that need no matcher: a value equal to an acceptable one is accepted; a parameter
        // the task does not expect is not.
        if let (Some(g), Some(w)) = (given.get(*n), want)
            && w.as_array().unwrap().iter().any(|x| same(x, g))
        {
            assert_eq!(verdict, "ok", "{name}: `{n}` = {g} is acceptable");
        }
        if want.is_none() && given.contains_key(*n) {
            assert_eq!(verdict, "unexpected_param", "{name}: `{n}` is not expected");
        }
    }
    let score = &t["score"];
    if score["pass"] == true {
        assert!(rows.iter().all(|r| r["verdict"] == "ok"), "{name}: a passing trial: {rows:?}");
        assert!(c["line"].as_str().unwrap().ends_with("match"), "{name}: {}", c["line"]);
    } else {
        let decisive: Vec<&Value> = rows.iter().filter(|r| r["decisive"] == true).collect();
        assert_eq!(decisive.len(), 1, "{name}: one argument decided the call: {rows:?}");
        assert_eq!(decisive[0]["verdict"], score["error_type"], "{name}: the record's error type");
        let detail = score["error_detail"].as_str().unwrap();
        assert!(
            decisive[0]["rule"].as_str().unwrap().starts_with(detail),
            "{name}: the decisive rule {} is not the record's detail {detail}",
            decisive[0]["rule"]
        );
    }
    println!("{name}: {id}: {} argument rows as in trials.jsonl", rows.len());
}

/// Every cell's heatmap sums to the expected calls of its scored trials in `trials.jsonl`.
fn assert_sums(name: &str, trials: &[Value], v: &Value) {
    let sums = v["sums"].as_object().unwrap();
    let mut want: std::collections::BTreeMap<String, u64> = Default::default();
    for t in trials {
        let key = ["dataset", "catalog", "variant", "layout", "backend"]
            .map(|k| t[k].as_str().unwrap().to_string())
            .join("/");
        let scored = !matches!(t["stop_reason"].as_str(), Some("backend_error" | "provider_limit"));
        let n = t["expected"].as_array().map_or(0, Vec::len) as u64;
        let calls = match t["kind"].as_str().unwrap() {
            "single" => n.min(1),
            "multi" | "parallel" => n,
            _ => 0,
        };
        if scored && calls > 0 {
            *want.entry(key).or_default() += calls;
        }
    }
    let got: std::collections::BTreeMap<String, u64> =
        sums.iter().map(|(k, s)| (k.clone(), s["sum"].as_u64().unwrap())).collect();
    assert_eq!(got, want, "{name}: heatmap sums per cell");
    for (k, s) in sums {
        let said = s["said"].as_str().unwrap();
        assert!(said.starts_with(&format!("{} expected calls", want[k])), "{name}: {k}: {said}");
    }
    assert_click(name, v);
    println!("{name}: {} cells' heatmaps sum as trials.jsonl", got.len());
}

/// A click on a tool marked exactly its row and column.
fn assert_click(name: &str, v: &Value) {
    let c = &v["click"];
    let (rows, cols) = (c["rows"].as_u64().unwrap(), c["cols"].as_u64().unwrap());
    assert_eq!(c["wrong"], 0, "{name}: a click marked cells of other tools: {c}");
    assert_eq!(c["row_marked"], cols, "{name}: the clicked tool's whole row is marked: {c}");
    let col = if c["in_cols"] == true { rows - 1 } else { 0 };
    assert_eq!(c["marked"], cols + col, "{name}: its row and column, nothing else: {c}");
    assert_eq!(c["headers_marked"], 1 + u64::from(c["in_cols"] == true), "{name}: {c}");
    println!("{name}: a click marked its row and column: {c}");
}

#[test]
fn drill_down_arguments_and_heatmaps_match_the_records() {
    if !super::tiers::ready(super::Tier::Chromium) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let o = toolpick(&argv_with("run --out {} --run-id r -q", &[out]), &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp.path().join("r");
    let report = dir.join("report.html");
    let trials = records(&dir);
    let one = |t: &&Value| {
        t["kind"] == "single"
            && attempts(t).len() == 1
            && t["expected"][0]["arguments"] != serde_json::json!({})
    };
    let failing = trials
        .iter()
        .filter(one)
        .find(|t| t["score"]["error_type"] == "value_error")
        .expect("the bundled run has a value_error trial");
    let passing = trials
        .iter()
        .filter(one)
        .find(|t| t["score"]["pass"] == true && t["backend"] == "lexical")
        .expect("the bundled run has a passing lexical trial");
    let work = tempfile::tempdir().unwrap();
    // The heatmap's view in the address: a cell, no second cell, a tool of it that took no call of its own.
    let confused = trials
        .iter()
        .find(|t| {
            t["variant"] == "bad"
                && t["layout"] == "progressive"
                && t["backend"] == "lexical"
                && t["kind"] == "single"
                && t["score"]["error_type"] == "wrong_tool"
        })
        .expect("a wrong_tool trial in bad/progressive/lexical");
    let cell = ["dataset", "catalog", "variant", "layout", "backend"]
        .map(|k| confused[k].as_str().unwrap().to_string())
        .join("/");
    let tool = confused["expected"][0]["tool"].as_str().unwrap();
    let view = format!(
        "&cell={}&beside=none&tool={}",
        super::encode_component(&cell),
        super::encode_component(tool)
    );
    for (name, t, phone, width, extra) in [
        ("views-failing", failing, None, 1280.0, "&sums"),
        ("views-passing", passing, None, 1280.0, view.as_str()),
        ("views-phone", failing, Some((390, 844)), 390.0, ""),
    ] {
        let sums = extra == "&sums";
        let id = super::encode_component(t["trial_id"].as_str().unwrap());
        let hash = format!("#trial={id}{extra}");
        let v = measure_with(&report, work.path(), name, &hash, VIEWS_SCRIPT, phone);
        assert_eq!(num(&v, "inner_width"), width, "{name}: the window is not {width} px wide");
        assert_arguments(name, t, &v);
        if extra == view {
            let initial = &v["initial"];
            assert_eq!(initial["cell"].as_str(), Some(cell.as_str()), "{name}: the address's cell");
            assert_eq!(initial["beside"], "-1", "{name}: beside=none shows no second cell");
            assert!(
                initial["marked"].as_array().unwrap().iter().any(|m| m == tool),
                "{name}: the address's tool {tool} is marked: {initial}"
            );
        }
        if sums {
            assert_sums(name, &trials, &v);
        } else {
            assert_click(name, &v);
        }
        let (scroll, inner) = (num(&v, "scroll_width"), num(&v, "inner_width"));
        assert!(scroll <= inner, "{name}: the page is {scroll} px wide in a {inner} px window");
    }
}

/// Each payload sets `window.__pwned` if it ever runs.
const PAYLOADS: [&str; 5] = [
    "<img src=x onerror=\"window.__pwned='img'\">",
    "\"><svg onload=\"window.__pwned='svg'\">",
    "</script><script>window.__pwned='script'</script>",
    "javascript:window.__pwned='href'",
    "' onmouseover='window.__pwned=1' x='",
];

#[test]
fn hostile_arguments_and_tool_names_never_run_in_the_new_views() {
    if !super::tiers::ready(super::Tier::Chromium) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_small_catalog(&dir.join("cat"));
    let tool = "weather/weather_now/get_current_weather";
    let mut tasks = String::new();
    let mut answers = String::new();
    for (k, p) in PAYLOADS.iter().enumerate() {
        let id = format!("t{k}{p}");
        tasks += &format!(
            "{}\n",
            serde_json::json!({"id": id, "query": format!("Weather in Pune {p}"), "kind": "single",
                "expected": [{"tool": tool, "arguments": {"city": [p], "units": ["", "metric"]}}], "category": p, "tags": [p]})
        );
        // A call to the right tool with hostile values and a hostile parameter, and an invented name.
        answers += &format!(
            "{}\n",
            serde_json::json!({"id": id, "calls": [
                {"name": tool, "arguments": {"city": format!("{p}!"), p.to_string(): p}},
                {"name": p, "arguments": {"x": p}}]})
        );
    }
    std::fs::write(dir.join("ds.jsonl"), tasks).unwrap();
    std::fs::write(dir.join("answers.jsonl"), answers).unwrap();
    let args = argv(
        "run --catalog cat --dataset ds.jsonl --layouts flat --backends lexical,replay:answers.jsonl \
         --out out --run-id r -q",
    );
    let o = toolpick(&args, dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = dir.join("out/r/report.html");
    let trials = records(&dir.join("out/r"));
    let work = tempfile::tempdir().unwrap();
    for t in trials.iter().filter(|t| t["backend"].as_str().unwrap().starts_with("replay:")) {
        let id = t["trial_id"].as_str().unwrap();
        // `encodeURIComponent` keeps `'`, which Debian's chromium launcher does not pass on intact.
        let hash = format!("#trial={}&sums", super::encode_component(id).replace('\'', "%27"));
        let v = measure_with(&report, work.path(), "views-hostile", &hash, VIEWS_SCRIPT, None);
        assert_eq!(v["pwned"], Value::Null, "{id}: a payload ran");
        assert_eq!(v["images"], 0, "{id}: an injected element");
        let rows = v["compared"][0]["rows"].as_array().unwrap();
        assert!(rows.len() >= 3, "{id}: the hostile arguments are shown as rows: {rows:?}");
        assert_sums("views-hostile", &trials, &v);
    }
}
