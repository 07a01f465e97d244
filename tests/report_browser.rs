//! report.html in a real browser (Debian's headless Chromium): at 1 280 px the page is no wider than the
//! window, even with very long task ids, categories, tool ids and backend labels; no two labels of a chart
//! overlap; a `#trial=` link opens the drill-down as a panel on the right without scrolling the page, and
//! so does a click on a row of the "Per query" table. Screenshots go to `target/test-artifacts/`.
//!
//! Of the `chromium` tier (tests/common/tiers.rs): Debian's Chromium at `/usr/bin/chromium`,
//! installed before the tests by `scripts/install-test-deps.sh`; without it the tests fail (they
//! never pass without a browser, unless `TOOLPICK_SKIP_TIERS` skips the tier on a developer's
//! machine).

mod common;
#[path = "report_browser/touch.rs"]
mod touch;
#[path = "report_browser/views.rs"]
mod views;
use common::tiers::{self, Tier};
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a single Chromium invocation may take (the starter report is ~25 MB).
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// Measures the page once it has loaded (and handled its `#trial=` hash), clicks a row of the trial table
/// when there is no hash, and writes the results as JSON into `<pre id="browser-checks">`.
const CHECK_SCRIPT: &str = r##"<script>
window.addEventListener("load", function () { setTimeout(function () {
  var out = {}, de = document.documentElement;
  function text(e) { return (e.textContent || "").replace(/\s+/g, " ").trim().slice(0, 160); }
  function finish() {
    var pre = document.createElement("pre");
    pre.id = "browser-checks";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  function panelState() {
    var d = document.getElementById("detail");
    if (!d) return null;
    var r = d.getBoundingClientRect(), cs = getComputedStyle(d), h3 = d.querySelector("h3");
    return { display: cs.display, position: cs.position, top: r.top, bottom: r.bottom, left: r.left, right: r.right,
      width: r.width, scroll_top: d.scrollTop, heading: h3 ? h3.textContent : null, text: d.textContent.slice(0, 300) };
  }
  try {
    out.inner_width = window.innerWidth;
    out.inner_height = window.innerHeight;
    out.client_width = de.clientWidth;
    out.scroll_width = de.scrollWidth;
    out.scroll_y = window.scrollY;
    // What sticks out of the window (only looked for when the page is too wide): innermost elements
    // whose right edge is past it and that no scrolling ancestor clips.
    out.too_wide = [];
    if (de.scrollWidth > de.clientWidth) {
      var clipped = function (e) {
        for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) if (getComputedStyle(p).overflowX !== "visible") return true;
        return false;
      };
      document.querySelectorAll("body *").forEach(function (e) {
        if (out.too_wide.length >= 20 || e.closest("script, #detail")) return;
        if (e.checkVisibility && !e.checkVisibility()) return;
        var right = e.getBoundingClientRect().right;
        if (right <= de.clientWidth + 0.5 || clipped(e)) return;
        if (Array.prototype.some.call(e.children, function (c) { return c.getBoundingClientRect().right > de.clientWidth + 0.5; })) return;
        out.too_wide.push({ element: e.tagName.toLowerCase(), right: right, text: text(e) });
      });
      // Tables wider than the window, under their heading, with the longest words of their cells.
      out.wide_tables = [];
      document.querySelectorAll("table").forEach(function (t) {
        var r = t.getBoundingClientRect();
        if (r.right <= de.clientWidth + 0.5 || clipped(t)) return;
        // The nearest heading before the table (also outside the <details> it is in).
        var h = null;
        for (var n = t; n && !h; n = n.parentElement) for (var p = n.previousElementSibling; p && !h; p = p.previousElementSibling) if (/^H[1-6]$/.test(p.tagName)) h = p;
        var words = [];
        t.querySelectorAll("td").forEach(function (td) { td.textContent.split(/\s+/).forEach(function (w) { if (w.length > 20) words.push(w); }); });
        words.sort(function (a, b) { return b.length - a.length; });
        out.wide_tables.push({ heading: h ? text(h) : null, width: r.width, longest_words: words.filter(function (w, i) { return words.indexOf(w) === i; }).slice(0, 5) });
      });
    }
    // Every pair of rendered <text> elements of one SVG: their boxes must not intersect.
    out.svgs = 0; out.svg_texts = 0; out.overlaps = [];
    document.querySelectorAll("svg").forEach(function (svg, si) {
      out.svgs++;
      var boxes = [];
      svg.querySelectorAll("text").forEach(function (t) {
        var r = t.getBoundingClientRect();
        if (r.width > 0 && r.height > 0) boxes.push({ text: t.textContent, r: r });
      });
      out.svg_texts += boxes.length;
      for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i].r, b = boxes[j].r, eps = 0.01;
        if (a.left < b.right - eps && b.left < a.right - eps && a.top < b.bottom - eps && b.top < a.bottom - eps)
          out.overlaps.push({ svg: si, a: boxes[i].text, b: boxes[j].text, a_box: [a.left, a.top, a.right, a.bottom], b_box: [b.left, b.top, b.right, b.bottom] });
      }
    });
    out.hash = location.hash;
    out.panel = panelState();
  } catch (err) { out.error = String(err && err.stack || err); }
  if (location.hash) { finish(); return; }
  // No hash: scroll a row of the trial table into the middle of the window and click it.
  try {
    var rows = document.querySelectorAll("#trials tbody tr"), row = rows[Math.min(7, rows.length - 1)];
    var trials = JSON.parse(document.getElementById("toolpick-data").textContent).trials;
    window.scrollTo(0, row.getBoundingClientRect().top + window.scrollY - window.innerHeight / 2);
    var click = { trial: trials[Number(row.dataset.i)].id, scroll_y_before: window.scrollY, row_top_before: row.getBoundingClientRect().top };
    row.click();
    setTimeout(function () {
      try {
        click.scroll_y_after = window.scrollY;
        click.row_top_after = row.getBoundingClientRect().top;
        click.row_selected = row.classList.contains("selected");
        click.hash = location.hash;
        click.panel = panelState();
        document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
        click.display_after_escape = getComputedStyle(document.getElementById("detail")).display;
        click.scroll_y_after_escape = window.scrollY;
      } catch (err) { out.error = String(err && err.stack || err); }
      out.click = click;
      finish();
    }, 50);
  } catch (err) { out.error = String(err && err.stack || err); finish(); }
}, 0); });
</script>
"##;

/// For a screenshot: hides everything before the heading of the trial table and clicks its second row.
const QUERY_EXCERPT_SCRIPT: &str = r##"<script>
window.addEventListener("load", function () { setTimeout(function () {
  var h = document.getElementById("filters");
  while (h && h.tagName !== "H2") h = h.previousElementSibling;
  for (var n = h && h.previousElementSibling; n; n = n.previousElementSibling) n.style.display = "none";
  var rows = document.querySelectorAll("#trials tbody tr");
  if (rows.length) rows[Math.min(1, rows.length - 1)].click();
}, 0); });
</script>
"##;

/// Debian's Chromium (the `chromium` tier, installed before the tests).
fn chromium() -> PathBuf {
    tiers::installed(Tier::Chromium)
}

/// Runs headless Chromium at 1280×900 on `url` with `extra` flags; stdout goes to `stdout_to`.
fn browse(url: &str, extra: &[String], stdout_to: &Path) {
    let profile = tempfile::tempdir().unwrap();
    let stderr_to = profile.path().join("stderr.txt");
    let chromium = chromium();
    let mut cmd = Command::new(&chromium);
    cmd.args([
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--window-size=1280,900",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(extra)
    .arg(url)
    .stdin(Stdio::null())
    .stdout(std::fs::File::create(stdout_to).unwrap())
    .stderr(std::fs::File::create(&stderr_to).unwrap());
    let mut child =
        cmd.spawn().unwrap_or_else(|e| panic!("{} does not start: {e}", chromium.display()));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let err = std::fs::read_to_string(&stderr_to).unwrap_or_default();
            assert!(status.success(), "chromium {extra:?} {url} failed ({status}):\n{err}");
            return;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium {extra:?} {url} took more than {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `encodeURIComponent`.
fn encode_component(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'!'
            | b'~'
            | b'*'
            | b'\''
            | b'('
            | b')' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The trials of a report's data island.
fn island_trials(html: &str) -> Vec<Value> {
    let open = "<script type=\"application/json\" id=\"toolpick-data\">";
    let start = html.find(open).expect("report.html has its data island") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let island: Value = serde_json::from_str(&html[start..end]).unwrap();
    island["trials"].as_array().unwrap().clone()
}

fn artifacts() -> PathBuf {
    let dir = repo().join("target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Copies `report` with the check script before `</body>` into `work`, opens it at `hash` and returns the
/// measured results.
fn measure(report: &Path, work: &Path, name: &str, hash: &str) -> Value {
    let html = std::fs::read_to_string(report).unwrap();
    let at = html.rfind("</body>").expect("</body>");
    let copy = work.join(format!("{name}.html"));
    std::fs::write(&copy, format!("{}{CHECK_SCRIPT}{}", &html[..at], &html[at..])).unwrap();
    let dump = work.join(format!("{name}.dom.html"));
    browse(&format!("file://{}{hash}", copy.display()), &["--dump-dom".to_string()], &dump);
    let dom = std::fs::read_to_string(&dump).unwrap();
    let open = "<pre id=\"browser-checks\">";
    let start = dom.rfind(open).unwrap_or_else(|| {
        panic!("{name}: the check script wrote no results (did the page load?)")
    }) + open.len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{name}: {e}: {json}"));
    std::fs::write(
        artifacts().join(format!("{name}.json")),
        serde_json::to_string_pretty(&v).unwrap(),
    )
    .unwrap();
    assert!(v.get("error").is_none(), "{name}: the check script failed: {}", v["error"]);
    v
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("no number {key} in {v}"))
}

/// The page is no wider than the window and no two labels of one chart overlap.
fn assert_page(name: &str, v: &Value, min_svg_texts: u64) {
    let (scroll, client, inner) =
        (num(v, "scroll_width"), num(v, "client_width"), num(v, "inner_width"));
    assert!(
        scroll <= client && client <= inner,
        "{name}: the page is {scroll} px wide, the window {client} px (inner {inner}); tables too wide:\n{}\nsticking out:\n{}",
        serde_json::to_string_pretty(&v["wide_tables"]).unwrap(),
        serde_json::to_string_pretty(&v["too_wide"]).unwrap()
    );
    let texts = v["svg_texts"].as_u64().unwrap();
    assert!(texts >= min_svg_texts, "{name}: only {texts} chart labels measured");
    let overlaps = v["overlaps"].as_array().unwrap();
    assert!(
        overlaps.is_empty(),
        "{name}: {} pairs of chart labels overlap:\n{}",
        overlaps.len(),
        overlaps
            .iter()
            .take(20)
            .map(|o| format!(
                "  svg {}: {} ({}) × {} ({})",
                o["svg"], o["a"], o["a_box"], o["b"], o["b_box"]
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
    println!(
        "{name}: page {scroll} px wide, window {client} px (inner {inner}); {texts} labels in {} SVGs, no overlap",
        v["svgs"]
    );
}

/// The drill-down is a panel fixed in the window, showing `trial` from its top.
fn assert_panel(name: &str, panel: &Value, trial: &str, inner_width: f64, inner_height: f64) {
    let short: String = panel["text"].as_str().unwrap_or("").chars().take(300).collect();
    assert_eq!(panel["display"], "block", "{name}: the drill-down is not shown: {short}");
    assert_eq!(
        panel["position"], "fixed",
        "{name}: the drill-down is not a panel fixed in the window"
    );
    assert_eq!(
        panel["heading"].as_str(),
        Some(trial),
        "{name}: the panel shows another trial: {short}"
    );
    let (top, left, right) = (num(panel, "top"), num(panel, "left"), num(panel, "right"));
    assert!(
        (0.0..inner_height).contains(&top),
        "{name}: the panel's top is at {top}, the window is {inner_height} px high"
    );
    assert!(
        left >= 0.0 && right <= inner_width && num(panel, "width") > 200.0,
        "{name}: the panel is at x {left}–{right}"
    );
    assert_eq!(num(panel, "scroll_top"), 0.0, "{name}: the panel opens at its top");
}

/// Runs the checks on `report`: once as is (a row click opens the panel in place, Escape closes it), once
/// at `#trial=<trial>` (the panel opens, the page stays at its top); takes the screenshots.
fn check_report(report: &Path, name: &str, trial: &str, min_svg_texts: u64, tall_screenshot: bool) {
    let work = tempfile::tempdir().unwrap();
    let started = Instant::now();

    let v = measure(report, work.path(), name, "");
    assert_page(name, &v, min_svg_texts);
    assert_eq!(
        v["panel"]["display"], "none",
        "{name}: the drill-down is shown before anything was clicked"
    );
    let click = &v["click"];
    let clicked = click["trial"].as_str().unwrap();
    assert_panel(
        &format!("{name}, row clicked"),
        &click["panel"],
        clicked,
        num(&v, "inner_width"),
        num(&v, "inner_height"),
    );
    assert!(num(click, "scroll_y_before") > 0.0, "{name}: the row was not scrolled to: {click}");
    assert_eq!(
        click["scroll_y_after"], click["scroll_y_before"],
        "{name}: clicking a row scrolled the page: {click}"
    );
    assert_eq!(
        click["row_top_after"], click["row_top_before"],
        "{name}: the clicked row moved: {click}"
    );
    assert_eq!(click["row_selected"], true, "{name}: the clicked row is not marked");
    assert_eq!(
        click["hash"].as_str(),
        Some(format!("#trial={}", encode_component(clicked)).as_str()),
        "{name}: the address has no deep link"
    );
    assert_eq!(click["display_after_escape"], "none", "{name}: Escape does not close the panel");
    assert_eq!(
        click["scroll_y_after_escape"], click["scroll_y_before"],
        "{name}: closing the panel scrolled the page"
    );
    println!(
        "{name}: row click at scrollY {} opened {clicked} in a panel at x {}–{}, the page did not move",
        click["scroll_y_before"], click["panel"]["left"], click["panel"]["right"]
    );

    let hash = format!("#trial={}", encode_component(trial));
    let linked = format!("{name}-trial");
    let v = measure(report, work.path(), &linked, &hash);
    assert_page(&linked, &v, min_svg_texts);
    assert_panel(&linked, &v["panel"], trial, num(&v, "inner_width"), num(&v, "inner_height"));
    assert_eq!(num(&v, "scroll_y"), 0.0, "{linked}: opening {hash} scrolled the page");
    println!(
        "{linked}: {hash} opens the panel at top {}, x {}–{} (window {}×{}), scrollY 0",
        v["panel"]["top"],
        v["panel"]["left"],
        v["panel"]["right"],
        v["inner_width"],
        v["inner_height"]
    );

    // Screenshots (1280×900, and a tall one of the tables) for people to look at.
    let url = format!("file://{}", report.display());
    let shot = |file: &str, url: &str, size: &str| {
        let path = artifacts().join(file);
        let _ = std::fs::remove_file(&path);
        browse(
            url,
            &[format!("--screenshot={}", path.display()), size.to_string()],
            &work.path().join("shot.out"),
        );
        assert!(path.is_file(), "no screenshot {}", path.display());
        println!("screenshot: {}", path.display());
    };
    shot(&format!("{name}.png"), &url, "--window-size=1280,900");
    shot(&format!("{name}-trial.png"), &format!("{url}{hash}"), "--window-size=1280,900");
    // The "Per query" table with a row clicked. Headless screenshots do not follow scrolling, so this copy
    // hides what comes before the table's heading.
    let html = std::fs::read_to_string(report).unwrap();
    let at = html.rfind("</body>").unwrap();
    let excerpt = work.path().join(format!("{name}-query.html"));
    std::fs::write(&excerpt, format!("{}{QUERY_EXCERPT_SCRIPT}{}", &html[..at], &html[at..]))
        .unwrap();
    shot(
        &format!("{name}-query.png"),
        &format!("file://{}", excerpt.display()),
        "--window-size=1280,900",
    );
    if tall_screenshot {
        shot(&format!("{name}-tall.png"), &url, "--window-size=1280,3200");
    }
    println!("{name}: browser checks took {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn starter_report_reads_from_the_top() {
    if !tiers::ready(Tier::Chromium) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let args = argv_with(
        "run --backends lexical,oracle --layouts flat,progressive,progressive-oss,search \
         --variants good,bad --out {} --run-id r -q",
        &[out],
    );
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let report = tmp.path().join("r/report.html");
    let trials = island_trials(&std::fs::read_to_string(&report).unwrap());
    // A trial far down the list.
    let trial = trials.last().unwrap()["id"].as_str().unwrap().to_string();
    // 2 backends × 8 cells × 2 bars (value labels) + group and axis labels.
    check_report(&report, "report-starter", &trial, 2 * (8 * 2 + 8 * 2 + 3), false);
}

const LONG_TASK: &str = "an-extremely-long-task-identifier-without-any-spaces-that-keeps-going-and-going-and-going-0001";
const LONG_CATEGORY: &str =
    "a_very_long_category_name_that_has_no_spaces_at_all_anywhere_in_it_whatsoever";
const LONG_CATEGORY_IN_CATALOG: &str =
    "weather_conditions_right_now_for_any_city_on_the_planet_earth";
const LONG_TOOL: &str = "get_current_weather_conditions_for_a_named_city_with_sky";
const LONG_REPLAY: &str = "recorded-answers-from-a-model-with-an-exceptionally-long-file-name-v2";
const LONG_DATASET: &str = "a-dataset-file-with-a-remarkably-long-name-for-testing-wrapping";

#[test]
fn long_labels_wrap_within_the_window() {
    if !tiers::ready(Tier::Chromium) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cat = dir.join("cat");
    write_small_catalog(&cat);
    let weather = std::fs::read_to_string(cat.join("weather.json")).unwrap();
    std::fs::write(
        cat.join("weather.json"),
        weather
            .replace("\"weather_now\"", &format!("\"{LONG_CATEGORY_IN_CATALOG}\""))
            .replace("get_current_weather", LONG_TOOL),
    )
    .unwrap();
    let tool_id = format!("weather/{LONG_CATEGORY_IN_CATALOG}/{LONG_TOOL}");
    let long_word = "Averyveryverylongwordwithoutanyspacesinsideitthatmustwrapsomewhere".repeat(2);
    let tasks = [
        serde_json::json!({"id": LONG_TASK, "query": format!("How warm is it in Pune right now? {long_word}"), "kind": "single",
            "expected": [{"tool": tool_id, "arguments": {"city": ["Pune"]}}], "category": LONG_CATEGORY, "tags": []}),
        serde_json::json!({"id": "m1", "query": "Mail ana@example.com with subject \"Hi\"", "kind": "single",
            "expected": [{"tool": "mail/mail_messages/send_email", "arguments": {"to": ["ana@example.com"], "subject": ["Hi"]}}], "category": LONG_CATEGORY, "tags": []}),
    ];
    std::fs::write(
        dir.join(format!("{LONG_DATASET}.jsonl")),
        tasks.iter().map(|t| format!("{t}\n")).collect::<String>(),
    )
    .unwrap();
    let answer = serde_json::json!({"id": LONG_TASK, "calls": [{"name": tool_id, "arguments": {"city": "Pune"}}]});
    std::fs::write(dir.join(format!("{LONG_REPLAY}.jsonl")), format!("{answer}\n")).unwrap();
    let dataset = format!("{LONG_DATASET}.jsonl");
    let backends = format!("lexical,replay:{LONG_REPLAY}.jsonl");
    // Replay plays the flat layout only; a second, long variant label exercises the chart's group labels.
    let args = argv_with(
        "run --catalog cat --dataset {} --layouts flat \
        --variants good,op:drop_parameter_descriptions --backends {} --out out --run-id r -q",
        &[&dataset, &backends],
    );
    let o = toolpick(&args, dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = dir.join("out/r/report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains(&format!("replay:{LONG_REPLAY}")) && html.contains(LONG_CATEGORY),
        "the long labels are in the report"
    );
    let trials = island_trials(&html);
    let trial = trials
        .iter()
        .find(|t| {
            t["task"] == LONG_TASK
                && t["backend"].as_str().is_some_and(|b| b.starts_with("replay:"))
        })
        .expect("the replayed trial of the long task")["id"]
        .as_str()
        .unwrap()
        .to_string();
    // 2 backends × 2 cells × 2 bars + 2 × 2 group labels + 3 axis labels.
    check_report(&report, "report-long-labels", &trial, 2 * (2 * 2 + 2 * 2 + 3), true);
}

#[test]
fn judged_report_fits_the_window() {
    if !tiers::ready(Tier::Chromium) {
        return;
    }
    // The judged-answers table has 16 columns; with an oracle's full intervals, token counts and the
    // judge's prompt digest in them it was 1 298 px wide in a 1 280 px window.
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mock = rt
        .block_on(toolpick::mock::spawn("127.0.0.1:0".parse().unwrap(), Default::default()))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let judge = format!("mock@{}", mock.base_url());
    let url = mock.base_url();
    let args = argv_with(
        "run --backends lexical,oracle,openai --model mock --base-url {} --judge {} --limit 40 \
         --layouts flat,progressive --variants good,bad --out {} --run-id r -q",
        &[&url, &judge, out],
    );
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let report = tmp.path().join("r/report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("Judged final answers"), "the run was judged");
    let trial = island_trials(&html).last().unwrap()["id"].as_str().unwrap().to_string();
    // 3 backends × 4 cells × 2 bars (value labels) + group and axis labels.
    check_report(&report, "report-judged", &trial, 3 * (4 * 2 + 4 * 2 + 3), false);
}

/// After load (the page has applied its address fragment): the ids of the explorer's visible rows, the
/// page's width, the fragment, and the load time; then opens the first visible row and reads the
/// drill-down's heading.
const EXPLORER_SCRIPT: &str = r##"<script>
window.addEventListener("load", function () { setTimeout(function () {
  var out = {};
  try {
    out.load_ms = performance.now();
    out.hash = location.hash;
    out.scroll_width = document.documentElement.scrollWidth;
    out.inner_width = window.innerWidth;
    out.rows = Array.prototype.map.call(document.querySelectorAll("#trials tbody tr"), function (tr) { return tr.dataset.id; });
    out.count = document.getElementById("f-count").textContent;
    out.error_filter = document.getElementById("f-error").value;
  } catch (err) { out.error = String(err && err.stack || err); }
  if (window.parent !== window) { window.parent.postMessage(JSON.stringify(out), "*"); return; }
  var pre = document.createElement("pre");
  pre.id = "browser-checks";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 0); });
</script>
"##;

/// Like [`measure`], with `script` injected and the window `size` (`W,H`).
fn measure_with(
    report: &Path,
    work: &Path,
    name: &str,
    hash: &str,
    script: &str,
    phone: Option<(u32, u32)>,
) -> Value {
    let html = std::fs::read_to_string(report).unwrap();
    let at = html.rfind("</body>").expect("</body>");
    let copy = work.join(format!("{name}.html"));
    std::fs::write(&copy, format!("{}{script}{}", &html[..at], &html[at..])).unwrap();
    let dump = work.join(format!("{name}.dom.html"));
    // A phone: headless Chromium keeps windows at least 500 px wide, so the page is opened in a frame
    // of the phone's size, which posts its results to this page.
    let url = match phone {
        None => format!("file://{}{hash}", copy.display()),
        Some((w, h)) => {
            let frame = work.join(format!("{name}-frame.html"));
            let src = format!("{}{hash}", copy.file_name().unwrap().to_str().unwrap());
            std::fs::write(&frame, format!(
                "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"{}\" width=\"{w}\" height=\"{h}\" style=\"border:0\"></iframe>\
                 <script>window.addEventListener(\"message\", function (e) {{ var p = document.createElement(\"pre\"); p.id = \"browser-checks\"; p.textContent = e.data; document.body.appendChild(p); }});</script></body></html>",
                src.replace('&', "&amp;")
            )).unwrap();
            format!("file://{}", frame.display())
        }
    };
    browse(&url, &["--dump-dom".to_string()], &dump);
    let dom = std::fs::read_to_string(&dump).unwrap();
    let open = "<pre id=\"browser-checks\">";
    let start = dom.rfind(open).unwrap_or_else(|| panic!("{name}: no results")) + open.len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{name}: {e}: {json}"));
    std::fs::write(
        artifacts().join(format!("{name}.json")),
        serde_json::to_string_pretty(&v).unwrap(),
    )
    .unwrap();
    assert!(v.get("error").is_none(), "{name}: the check script failed: {}", v["error"]);
    v
}

#[test]
fn explorer_fragment_filters_to_the_records_trials() {
    if !tiers::ready(Tier::Chromium) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let args = argv_with(
        "run --backends lexical,oracle --layouts flat,progressive,progressive-oss,search \
         --variants good,bad --out {} --run-id r -q",
        &[out],
    );
    let o = toolpick(&args, &repo());
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp.path().join("r");
    let report = dir.join("report.html");
    // The expected rows, from the trial records themselves.
    let want: Vec<String> = std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|t| {
            t["variant"] == "bad"
                && t["layout"] == "progressive"
                && t["backend"] == "lexical"
                && t["score"]["error_type"] == "wrong_tool"
        })
        .map(|t| t["trial_id"].as_str().unwrap().to_string())
        .collect();
    assert!(!want.is_empty(), "the bundled run has wrong_tool trials in bad/progressive/lexical");
    let hash = "#variant=bad&layout=progressive&backend=lexical&error=wrong_tool";
    let work = tempfile::tempdir().unwrap();
    let size = std::fs::metadata(&report).unwrap().len();
    for (name, phone, width) in
        [("explorer-desktop", None, 1280.0), ("explorer-phone", Some((390, 844)), 390.0)]
    {
        let v = measure_with(&report, work.path(), name, hash, EXPLORER_SCRIPT, phone);
        assert_eq!(num(&v, "inner_width"), width, "{name}: the window is not {width} CSS px wide");
        let mut rows: Vec<String> =
            v["rows"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
        let mut want = want.clone();
        rows.sort();
        want.sort();
        assert_eq!(
            rows, want,
            "{name}: the visible rows are not the records' trials ({})",
            v["count"]
        );
        assert_eq!(v["hash"], hash, "{name}: the fragment did not stay as given");
        assert_eq!(v["error_filter"], "wrong_tool", "{name}: the error filter shows another value");
        let (scroll, inner) = (num(&v, "scroll_width"), num(&v, "inner_width"));
        assert!(scroll <= inner, "{name}: the page is {scroll} px wide in a {inner} px window");
        println!(
            "{name}: {} rows as in trials.jsonl; page {scroll} px in {inner} px; report.html {size} bytes; load end at {:.0} ms",
            rows.len(),
            num(&v, "load_ms")
        );
    }
}
