  var data = JSON.parse(document.getElementById("toolpick-data").textContent);
  var trials = data.trials;
  var LIMIT = 500;
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  // Table cells wrap anywhere (style.css), so a long label never makes the page wider than the window;
  // a cell whose words are all short keeps them whole, so numbers, names and error counts stay readable.
  var LONG_WORD = 20;
  function keepWords(td) {
    var words = td.textContent.split(/\s+/);
    for (var k = 0; k < words.length; k++) if (words[k].length > LONG_WORD) return;
    td.classList.add("words");
  }
  document.querySelectorAll("table td").forEach(keepWords);
  // Printed, every folded section is unfolded (CSS cannot open a closed <details>).
  window.addEventListener("beforeprint", function () { document.querySelectorAll("details").forEach(function (d) { d.open = true; }); });
  // Every table scrolls inside its own box, so a wide one never widens the page (a phone's 390 px).
  document.querySelectorAll("table").forEach(function (t) {
    var box = el("div", null, "table-box");
    t.parentNode.insertBefore(box, t);
    box.appendChild(t);
  });
  // Per-trial values the filters read (tools expected and called, tags): computed once per trial.
  trials.forEach(function (t) {
    t._expected = (t.expected || []).map(function (e) { return e.tool; });
    t._called = (t.calls || []).map(function (c) { return c.tool_id || c.name; });
    t._text = (t.task + " " + t.query + " " + (t.final_answer || "") + " " + t.error + " " + t.detail + " " + t.category + " " + t.tags.join(" ")).toLowerCase();
  });
  // Filter name (in the address) → the trial's values it matches against.
  var FILTERS = {
    dataset: function (t) { return [t.dataset]; }, variant: function (t) { return [t.variant]; },
    layout: function (t) { return [t.layout]; }, backend: function (t) { return [t.backend]; },
    kind: function (t) { return [t.kind]; }, error: function (t) { return [t.error]; },
    expected: function (t) { return t._expected; }, called: function (t) { return t._called; },
    tag: function (t) { return t.tags; }
  };
  var state = { q: "", pass: "", sort: "", trial: "" };
  Object.keys(FILTERS).forEach(function (k) {
    state[k] = "";
    var seen = {}, sel = document.getElementById("f-" + k);
    trials.forEach(function (t) { FILTERS[k](t).forEach(function (v) { if (v !== "") seen[v] = true; }); });
    Object.keys(seen).sort().forEach(function (v) { var o = el("option", v); o.value = v; sel.appendChild(o); });
    sel.addEventListener("change", function () { state[k] = sel.value; changed(); });
  });
  // The heatmap's view (heatmap.js): its cell, the cell beside it, the marked tool.
  var HEATMAP_KEYS = ["cell", "beside", "tool"];
  HEATMAP_KEYS.forEach(function (k) { state[k] = ""; });
  document.getElementById("f-pass").addEventListener("change", function () { state.pass = this.value; changed(); });
  document.getElementById("f-q").addEventListener("input", function () { state.q = this.value; changed(); });
  document.querySelectorAll("#trials th[data-sort]").forEach(function (th) {
    th.tabIndex = 0;
    function sortBy() { var k = th.dataset.sort; state.sort = state.sort === k ? "-" + k : (state.sort === "-" + k ? "" : k); changed(); }
    th.addEventListener("click", sortBy);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortBy(); });
  });
  // The view as an address fragment: every non-empty filter, the sort, the open trial.
  function fragment() {
    var parts = [];
    Object.keys(state).forEach(function (k) { if (state[k] !== "" && k !== "trial") parts.push(k + "=" + encodeURIComponent(state[k])); });
    if (state.trial !== "") parts.push("trial=" + encodeURIComponent(state.trial));
    return parts.length ? "#" + parts.join("&") : "";
  }
  function changed() {
    render();
    saveView();
  }
  function saveView() {
    var f = fragment();
    if (f !== location.hash) { try { history.replaceState(null, "", f || (location.pathname + location.search)); } catch (e) { /* keep the address */ } }
  }
  function matches(t) {
    for (var k in FILTERS) if (state[k] !== "" && FILTERS[k](t).indexOf(state[k]) < 0) return false;
    if (state.pass === "pass" && !t.pass) return false;
    if (state.pass === "fail" && t.pass) return false;
    if (state.q && t._text.indexOf(state.q.toLowerCase()) < 0) return false;
    return true;
  }
  function ordered() {
    var idx = [];
    for (var i = 0; i < trials.length; i++) if (matches(trials[i])) idx.push(i);
    if (state.sort) {
      var desc = state.sort.charAt(0) === "-", key = desc ? state.sort.slice(1) : state.sort;
      idx.sort(function (a, b) {
        var x = trials[a][key], y = trials[b][key];
        var c = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
        return (desc ? -c : c) || a - b;
      });
    }
    return idx;
  }
  function render() {
    var body = document.querySelector("#trials tbody");
    body.textContent = "";
    var idx = ordered(), shown = Math.min(idx.length, LIMIT);
    document.querySelectorAll("#trials th[data-sort]").forEach(function (th) {
      var k = th.dataset.sort;
      th.setAttribute("aria-sort", state.sort === k ? "ascending" : (state.sort === "-" + k ? "descending" : "none"));
    });
    for (var n = 0; n < shown; n++) {
      var i = idx[n], t = trials[i];
      var tr = document.createElement("tr");
      [t.task, t.variant, t.layout, t.backend, t.kind].forEach(function (x) { tr.appendChild(el("td", x)); });
      tr.appendChild(el("td", t.pass ? "pass" : "fail", t.pass ? "ok" : "bad"));
      tr.appendChild(el("td", t.selection ? "right" : "wrong", t.selection ? "ok" : "bad"));
      tr.appendChild(el("td", t.error));
      tr.appendChild(el("td", t.steps));
      tr.appendChild(el("td", t.query));
      tr.querySelectorAll("td").forEach(keepWords);
      tr.dataset.i = i;
      tr.dataset.id = t.id;
      tr.tabIndex = 0;
      if (i === selected) tr.className = "selected";
      body.appendChild(tr);
    }
    document.getElementById("f-count").textContent = idx.length > shown ? ("showing " + shown + " of " + idx.length + " (narrow the filter)") : (idx.length + " trials");
  }
  // One listener for the whole table body (rows are rebuilt on every filter change).
  var tbody = document.querySelector("#trials tbody");
  tbody.addEventListener("click", function (e) {
    var tr = e.target.closest ? e.target.closest("tr") : null;
    if (tr && tr.dataset.i !== undefined) openTrial(Number(tr.dataset.i));
  });
  tbody.addEventListener("keydown", function (e) {
    var tr = e.target.closest ? e.target.closest("tr") : null;
    if (!tr) return;
    var next = e.key === "ArrowDown" ? tr.nextElementSibling : (e.key === "ArrowUp" ? tr.previousElementSibling : null);
    if (next) { e.preventDefault(); next.focus(); }
    else if (e.key === "Enter") { e.preventDefault(); openTrial(Number(tr.dataset.i)); }
  });
  function pre(v) { return el("pre", typeof v === "string" ? v : JSON.stringify(v, null, 2)); }
  // The drill-down is a panel fixed to the right of the window: opening it never scrolls the page.
  var panel = document.getElementById("detail"), selected = -1;
  function markSelected() {
    document.querySelectorAll("#trials tbody tr").forEach(function (tr) { tr.classList.toggle("selected", Number(tr.dataset.i) === selected); });
  }
  // A click on a row: open the panel and put the trial's deep link in the address bar (no jump: no
  // element has that id).
  function openTrial(i) {
    state.trial = trials[i].id;
    var h = fragment();
    show(i);
    if (location.hash !== h) location.hash = h;
  }
  function closePanel() {
    panel.style.display = "none";
    selected = -1;
    markSelected();
    state.trial = "";
    // Drop the deep link without a jump (location.hash = "" would scroll to the top); the filters stay.
    var f = fragment();
    if (f !== location.hash) {
      try { history.replaceState(null, "", f || (location.pathname + location.search)); } catch (e) { /* keep the hash */ }
    }
  }
  document.getElementById("detail-close").addEventListener("click", closePanel);
  document.addEventListener("keydown", function (e) { if (e.key === "Escape" && panel.style.display === "block") closePanel(); });
  // Deep links: report.html#trial=<trial id> opens that trial's drill-down; the filter keys of
  // `fragment()` (each `key=value`, URL-encoded, joined by `&`) set the filters.
  function fromHash() {
    var h = location.hash.replace(/^#/, ""), next = { q: "", pass: "", sort: "", trial: "" };
    Object.keys(FILTERS).concat(HEATMAP_KEYS).forEach(function (k) { next[k] = ""; });
    var ok = true;
    h.split("&").forEach(function (p) {
      var eq = p.indexOf("=");
      if (eq < 0) return;
      var k = p.slice(0, eq), v;
      try { v = decodeURIComponent(p.slice(eq + 1)); } catch (e) { ok = false; return; }
      if (Object.prototype.hasOwnProperty.call(next, k)) next[k] = v;
    });
    if (!ok) return;
    var filtersChanged = false;
    Object.keys(next).forEach(function (k) { if (k !== "trial" && HEATMAP_KEYS.indexOf(k) < 0 && next[k] !== state[k]) filtersChanged = true; });
    var heatmapChanged = HEATMAP_KEYS.some(function (k) { return next[k] !== state[k]; });
    state = next;
    if (heatmapChanged) heatmapFromState();
    Object.keys(FILTERS).concat(["q", "pass"]).forEach(function (k) { document.getElementById("f-" + k).value = state[k]; });
    if (filtersChanged) render();
    if (state.trial === "") {
      if (panel.style.display === "block") { panel.style.display = "none"; selected = -1; markSelected(); }
      return;
    }
    for (var i = 0; i < trials.length; i++) if (trials[i].id === state.trial) { if (i !== selected || panel.style.display !== "block") show(i); return; }
  }
  window.addEventListener("hashchange", fromHash);
  // A link to the trial already in the address bar fires no hashchange: open it anyway.
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest('a[href^="#"]') : null;
    if (a && a.getAttribute("href") === location.hash) { e.preventDefault(); fromHash(); }
  });
