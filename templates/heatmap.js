  // The confusion matrix of a cell as a heatmap: expected tool (rows) × tool called (columns), each
  // count shaded by its share of the row; a click on a tool marks its row and column, and its line of
  // the per-tool table below, where two cells' precision and recall stand side by side. The counts
  // are the report's analysis' (`confusion.csv`): this only draws them.
  var matrices = data.matrices || [];
  var NOT_TOOLS = ["(invented)", "(unreadable)", "(nothing)"];
  function cellLabel(m) { return m.backend + " · " + m.variant + " · " + m.layout + " · " + m.dataset; }
  var hm = { a: -1, b: -1, tool: "", drawn: false };
  function fill(sel, none) {
    if (none) { var o = el("option", "(none)"); o.value = "-1"; sel.appendChild(o); }
    matrices.forEach(function (m, k) { var o = el("option", cellLabel(m)); o.value = String(k); sel.appendChild(o); });
  }
  function heatmapInit() {
    var selA = document.getElementById("hm-a"), selB = document.getElementById("hm-b");
    if (!selA || !matrices.length) return;
    fill(selA, false); fill(selB, true);
    pickCells();
    // A choice is kept in the address (`cell`, `beside`, `tool`: see explorer.js).
    selA.addEventListener("change", function () {
      hm.a = Number(selA.value); hm.b = partner(hm.a); selB.value = String(hm.b);
      state.cell = matrices[hm.a].key; state.beside = ""; saveView(); drawHeatmap();
    });
    selB.addEventListener("change", function () {
      hm.b = Number(selB.value); state.beside = hm.b < 0 ? "none" : matrices[hm.b].key; saveView(); drawHeatmap();
    });
    document.getElementById("hm-all").addEventListener("change", drawHeatmap);
    document.getElementById("heatmap").addEventListener("click", function (e) {
      var th = e.target.closest ? e.target.closest("[data-tool]") : null;
      if (th) { hm.tool = hm.tool === th.dataset.tool ? "" : th.dataset.tool; state.tool = hm.tool; saveView(); mark(); return; }
      var td = e.target.closest ? e.target.closest("td[data-count]") : null;
      if (td) pick(td);
    });
    document.getElementById("heatmap").addEventListener("keydown", function (e) {
      if (e.key === "Enter" && e.target.dataset && e.target.dataset.tool !== undefined) { e.preventDefault(); e.target.click(); }
    });
    // Drawn when first opened (a cell's whole matrix can have tens of thousands of squares).
    var fold = document.getElementById("hm-fold");
    fold.addEventListener("toggle", function () { if (fold.open && !hm.drawn) drawHeatmap(); });
    if (fold.open) drawHeatmap();
  }
  // The cells the address names, else the first cell that is not the oracle's, beside the same cell
  // of another backend.
  function pickCells() {
    var at = function (key) { for (var k = 0; k < matrices.length; k++) if (matrices[k].key === key) return k; return -1; };
    hm.a = at(state.cell);
    if (hm.a < 0) {
      hm.a = 0;
      for (var k = 0; k < matrices.length; k++) if (!/oracle$/.test(matrices[k].backend)) { hm.a = k; break; }
    }
    hm.b = state.beside === "none" ? -1 : at(state.beside);
    if (hm.b < 0 && state.beside !== "none") hm.b = partner(hm.a);
    hm.tool = state.tool;
    document.getElementById("hm-a").value = String(hm.a);
    document.getElementById("hm-b").value = String(hm.b);
  }
  // After the address changed: the view it names.
  function heatmapFromState() {
    if (!matrices.length || !document.getElementById("hm-a").options.length) return;
    pickCells();
    if (hm.drawn) drawHeatmap();
  }
  // The same dataset, variant and layout with another backend; else another variant; else none.
  function partner(a) {
    var m = matrices[a];
    for (var pass = 0; pass < 2; pass++) for (var k = 0; k < matrices.length; k++) {
      var o = matrices[k];
      if (k === a || o.dataset !== m.dataset || o.layout !== m.layout) continue;
      if (pass === 0 && o.variant === m.variant && !/oracle$/.test(o.backend)) return k;
      if (pass === 1 && o.backend === m.backend) return k;
    }
    return -1;
  }
  function drawHeatmap() {
    var m = matrices[hm.a], table = document.getElementById("heatmap");
    hm.drawn = true;
    table.textContent = "";
    var rows = [], cols = [], seen = {}, counts = {}, totals = {}, sum = 0;
    m.entries.forEach(function (e) {
      if (!(e[0] in totals)) { rows.push(e[0]); totals[e[0]] = 0; }
      totals[e[0]] += e[2]; sum += e[2];
      counts[e[0] + "\u0000" + e[1]] = e;
    });
    rows.forEach(function (r) { if (!seen[r]) { seen[r] = true; cols.push(r); } });
    var rest = [];
    m.entries.forEach(function (e) { if (!seen[e[1]] && NOT_TOOLS.indexOf(e[1]) < 0) { seen[e[1]] = true; rest.push(e[1]); } });
    rest.sort();
    cols = cols.concat(rest);
    NOT_TOOLS.forEach(function (n) { if (m.entries.some(function (e) { return e[1] === n; })) cols.push(n); });
    // Unless every expected tool is asked for: the rows with a confusion, and the columns they reach.
    var all = document.getElementById("hm-all").checked, allRows = rows.length;
    if (!all) {
      rows = rows.filter(function (r) { return m.entries.some(function (e) { return e[0] === r && e[1] !== r; }); });
      cols = cols.filter(function (c) { return rows.some(function (r) { return counts[r + "\u0000" + c]; }); });
    }
    var shown = 0;
    rows.forEach(function (r) { shown += totals[r]; });
    var thead = el("thead"), head = el("tr");
    head.appendChild(el("th", "expected ↓ · called →", "corner"));
    cols.forEach(function (c) { var th = el("th", null, "col"); th.appendChild(el("span", c)); th.dataset.tool = c; th.title = c; th.tabIndex = 0; head.appendChild(th); });
    head.appendChild(el("th", "calls"));
    thead.appendChild(head); table.appendChild(thead);
    var body = el("tbody");
    rows.forEach(function (r) {
      var tr = el("tr"), th = el("th", r, "row");
      th.dataset.tool = r; th.title = r; th.tabIndex = 0; tr.appendChild(th);
      cols.forEach(function (c) {
        var e = counts[r + "\u0000" + c], td = el("td", e ? e[2] : "", "num");
        td.dataset.expected = r; td.dataset.called = c;
        if (e) {
          var share = e[2] / totals[r];
          td.dataset.count = e[2];
          td.style.background = (r === c ? "rgba(46,125,50," : "rgba(198,40,40,") + (0.12 + 0.75 * share).toFixed(3) + ")";
          td.title = r + " → " + c + ": " + e[2] + " of " + totals[r] + " (" + (100 * share).toFixed(1) + " %)";
        }
        tr.appendChild(td);
      });
      tr.appendChild(el("td", totals[r], "num total"));
      body.appendChild(tr);
    });
    table.appendChild(body);
    document.getElementById("hm-sum").textContent = sum + " expected calls of the scored trials in " + cellLabel(m) + ", " + allRows + " expected tools" +
      (all ? "." : "; shown: the " + rows.length + " tools whose calls went elsewhere at least once (" + shown + " calls) and the " + cols.length + " tools they went to.");
    document.getElementById("hm-pick").textContent = "";
    drawTools();
    mark();
  }
  // Precision and recall with their intervals, the two cells side by side.
  function drawTools() {
    var a = matrices[hm.a], b = hm.b >= 0 ? matrices[hm.b] : null, table = document.getElementById("hm-tools");
    table.textContent = "";
    var tools = Object.keys(a.tools).concat(b ? Object.keys(b.tools) : []).filter(function (t, k, all) { return all.indexOf(t) === k; }).sort();
    var thead = el("thead"), head = el("tr");
    head.appendChild(el("th", "tool"));
    [a, b].forEach(function (m) {
      if (!m) return;
      ["precision %", "recall %", "TP / FP / FN"].forEach(function (h) { head.appendChild(el("th", h + " — " + m.backend + " · " + m.variant + " · " + m.layout)); });
    });
    thead.appendChild(head); table.appendChild(thead);
    var body = el("tbody");
    tools.forEach(function (t) {
      var tr = el("tr"); tr.dataset.tool = t;
      tr.appendChild(el("td")).appendChild(el("code", t));
      [a, b].forEach(function (m) {
        if (!m) return;
        var v = m.tools[t];
        tr.appendChild(el("td", v ? v[3] : "n/a"));
        tr.appendChild(el("td", v ? v[4] : "n/a"));
        tr.appendChild(el("td", v ? v[0] + " / " + v[1] + " / " + v[2] : "", "num"));
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    var note = document.getElementById("hm-tools-note");
    note.textContent = tools.length ? "" : "No per-tool figures for these cells (the oracle's are left out: it selects perfectly by construction).";
  }
  function mark() {
    var t = hm.tool;
    document.querySelectorAll("#heatmap [data-tool]").forEach(function (th) { th.classList.toggle("hl", th.dataset.tool === t); });
    document.querySelectorAll("#heatmap td[data-expected]").forEach(function (td) {
      td.classList.toggle("hl", t !== "" && (td.dataset.expected === t || td.dataset.called === t));
    });
    document.querySelectorAll("#hm-tools tbody tr").forEach(function (tr) { tr.classList.toggle("hl", tr.dataset.tool === t); });
  }
  // A count: what it is, and links to its first trials.
  function pick(td) {
    var m = matrices[hm.a], p = document.getElementById("hm-pick");
    p.textContent = "";
    m.entries.forEach(function (e) {
      if (e[0] !== td.dataset.expected || e[1] !== td.dataset.called) return;
      p.appendChild(el("code", e[0]));
      p.appendChild(document.createTextNode(" → "));
      p.appendChild(el("code", e[1]));
      p.appendChild(document.createTextNode(": " + e[2] + " expected calls; first trials: "));
      e[3].forEach(function (id, k) { var a = el("a", String(k + 1)); a.href = "#trial=" + encodeURIComponent(id); p.appendChild(a); p.appendChild(document.createTextNode(" ")); });
    });
  }
