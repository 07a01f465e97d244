  // The drill-down of one trial: the verdict, the stop reason, steps and tokens; each expected call
  // beside the call compared with it, argument by argument (computed by the report's analysis with
  // the scorer's own matcher: this only draws it); the same task in the other cells of its row; the
  // messages as a conversation, tool calls and results folded.
  function json(v) { return JSON.stringify(v); }
  function codes(td, values) {
    values.forEach(function (v, k) {
      if (k > 0) td.appendChild(document.createTextNode(" or "));
      td.appendChild(el("code", json(v)));
    });
  }
  var HEADS = ["argument", "expected (acceptable)", "given", "verdict", "rule"];
  function boxed(table) { var box = el("div", null, "table-box"); box.appendChild(table); return box; }
  // Trials of the page by task (dataset, task, trial number): the same task in the other cells.
  var byTask = {};
  trials.forEach(function (t, i) {
    var k = t.dataset + "\u0000" + t.task + "\u0000" + t.id.slice(t.id.lastIndexOf("#"));
    (byTask[k] = byTask[k] || []).push(i);
  });
  function facts(t) {
    var s = t.kind + " task · stopped: " + t.stop + " · " + t.steps + " step" + (t.steps === 1 ? "" : "s") +
      " · tool-context tokens " + t.tokens + " (upfront " + t.upfront + ", peak request " + t.peak + ")";
    if (t.usage) s += " · endpoint tokens " + t.usage[0] + " prompt / " + t.usage[1] + " completion";
    return s;
  }
  function comparison(d, t) {
    var used = {};
    d.appendChild(el("h4", "Expected and called, argument by argument"));
    if (!t.compare || !t.compare.length) {
      d.appendChild(el("p", t.kind === "single" || t.kind === "multi" || t.kind === "parallel" ? "No expected call." : "A " + t.kind + " task: no call is expected, so no argument is compared."));
    }
    (t.compare || []).forEach(function (c, k) {
      var box = el("div", null, "cmp");
      box.dataset.expected = k;
      if (c.call !== null) { box.dataset.call = c.call; used[c.call] = true; }
      var p = el("p", null, c.verdict === "match" ? "ok" : "bad");
      p.appendChild(document.createTextNode("expected "));
      p.appendChild(el("code", c.expected));
      if (c.alternatives) p.appendChild(document.createTextNode(" (or " + c.alternatives.join(", ") + ")"));
      if (c.call === null) p.appendChild(document.createTextNode(" — not called"));
      else {
        p.appendChild(document.createTextNode(" ← call " + (c.call + 1) + ": "));
        p.appendChild(el("code", c.called));
        p.appendChild(document.createTextNode(" (" + c.status + ") — " + c.verdict + (c.detail ? ": " + c.detail : "")));
      }
      box.appendChild(p);
      if (c.arguments.length) {
        var table = el("table", null, "args"), head = el("tr");
        HEADS.forEach(function (h) { head.appendChild(el("th", h)); });
        var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
        var body = el("tbody");
        // Each argument: [name, acceptable (null: not expected), given ([]: not given), verdict, rule, decisive].
        c.arguments.forEach(function (x) {
          var a = { name: x[0], acceptable: x[1], given: x[2], verdict: x[3], rule: x[4], decisive: x[5] === 1 };
          var tr = el("tr", null, a.decisive ? "decisive" : null);
          tr.dataset.arg = a.name;
          tr.appendChild(el("td")).appendChild(el("code", a.name));
          var acc = el("td", a.acceptable ? null : "(not expected)", "acceptable");
          if (a.acceptable) codes(acc, a.acceptable);
          tr.appendChild(acc);
          var given = el("td", a.given.length ? null : "(not given)", "given");
          codes(given, a.given);
          tr.appendChild(given);
          tr.appendChild(el("td", a.verdict, "verdict " + (a.verdict === "ok" ? "ok" : "bad")));
          tr.appendChild(el("td", a.rule + (a.decisive ? " — decided the call" : "")));
          tr.querySelectorAll("td").forEach(function (td, n) { td.dataset.label = HEADS[n]; keepWords(td); });
          body.appendChild(tr);
        });
        table.appendChild(body);
        box.appendChild(boxed(table));
      }
      d.appendChild(box);
    });
    var others = [];
    t.calls.forEach(function (c, n) { if (!used[n]) others.push("call " + (n + 1) + ": " + (c.tool_id || c.name) + " (" + c.status + ")"); });
    if (others.length && t.compare && t.compare.length) d.appendChild(el("p", "Compared with no expected call: " + others.join("; ")));
    var raw = el("details"); raw.appendChild(el("summary", "Expected calls and calls made, as recorded"));
    raw.appendChild(el("h4", "Expected calls")); raw.appendChild(pre(t.expected));
    raw.appendChild(el("h4", "Calls made")); raw.appendChild(pre(t.calls));
    d.appendChild(raw);
  }
  // The same task (and trial number) in the other cells: other variants, layouts, backends.
  function elsewhere(d, t, i) {
    var same = byTask[t.dataset + "\u0000" + t.task + "\u0000" + t.id.slice(t.id.lastIndexOf("#"))] || [];
    if (same.length < 2) return;
    d.appendChild(el("h4", "The same task in the other cells"));
    var table = el("table", null, "elsewhere"), head = el("tr");
    ["variant", "layout", "backend", "result", "trial"].forEach(function (h) { head.appendChild(el("th", h)); });
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var body = el("tbody");
    same.forEach(function (j) {
      var o = trials[j], tr = el("tr", null, j === i ? "selected" : null);
      [o.variant, o.layout, o.backend].forEach(function (x) { tr.appendChild(el("td", x)); });
      tr.appendChild(el("td", o.pass ? "pass" : "fail" + (o.error ? " (" + o.error + ")" : ""), o.pass ? "ok" : "bad"));
      var td = el("td");
      if (j === i) td.textContent = "this one";
      else { var a = el("a", "open"); a.href = "#trial=" + encodeURIComponent(o.id); td.appendChild(a); }
      tr.appendChild(td);
      body.appendChild(tr);
    });
    table.appendChild(body);
    d.appendChild(boxed(table));
  }
  // The messages as a conversation: text as it was said, each tool call and result folded.
  function conversation(d, t) {
    d.appendChild(el("h4", "Conversation"));
    var names = {};
    t.transcript.forEach(function (m) {
      var box = el("div", null, "msg msg-" + m.role);
      box.appendChild(el("div", m.role + (m.name ? " (" + m.name + ")" : ""), "msg-role"));
      if (m.role === "tool") {
        var f = el("details");
        var label = names[m.tool_call_id] || m.name || "a tool";
        f.appendChild(el("summary", "result of " + label + " (" + String(m.content || "").length + " characters)"));
        f.appendChild(pre(m.content || ""));
        box.appendChild(f);
      } else if (m.content) box.appendChild(pre(m.content));
      (m.tool_calls || []).forEach(function (c) {
        if (c.id) names[c.id] = c.name;
        var f = el("details");
        var args = typeof c.arguments === "string" ? c.arguments : json(c.arguments);
        f.appendChild(el("summary", "calls " + c.name + "(" + (args.length > 60 ? args.slice(0, 60) + "…" : args) + ")"));
        f.appendChild(pre(c.name + "(" + args + ")"));
        box.appendChild(f);
      });
      d.appendChild(box);
    });
  }
  function show(i) {
    var t = trials[i], d = document.getElementById("detail-body");
    selected = i;
    markSelected();
    d.textContent = "";
    panel.style.display = "block";
    var h = el("h3"); var a = el("a", t.id); a.href = "#trial=" + encodeURIComponent(t.id); h.appendChild(a); d.appendChild(h);
    d.appendChild(el("p", (t.pass ? "PASS" : "FAIL") + (t.error ? " — " + t.error + ": " + t.detail : ""), t.pass ? "ok" : "bad"));
    d.appendChild(el("p", facts(t), "facts"));
    d.appendChild(el("h4", "Query")); d.appendChild(pre(t.query));
    comparison(d, t);
    if (t.live) { d.appendChild(el("h4", "Live server (protocol, final state, sampling)")); d.appendChild(pre(t.live)); }
    if (t.final_answer !== undefined) { d.appendChild(el("h4", "Final answer")); d.appendChild(pre(t.final_answer || "(none)")); }
    if (t.judgement) {
      var j = t.judgement;
      d.appendChild(el("h4", "Judge: " + j.judge + " (" + j.method + ", prompts " + j.prompts + ")"));
      var verdict = j.error ? ("JUDGE ERROR — " + j.error) : ((j.done ? "DONE" : "NOT DONE") + " — score " + j.score + (j.short_circuit ? " (not asked: " + j.short_circuit + ")" : ""));
      d.appendChild(el("p", verdict, j.error ? "bad" : (j.done ? "ok" : "bad")));
      var ol = el("ol");
      (j.rounds || []).forEach(function (r) {
        ol.appendChild(el("li", r.status + " — answer: " + r.answer_status + ": " + r.answer_reason + (r.process_status ? " · process: " + r.process_status + ": " + r.process_reason : "")));
      });
      (j.claims || []).forEach(function (c) { ol.appendChild(el("li", c.status + " — " + c.claim + (c.reason ? " (" + c.reason + ")" : ""))); });
      d.appendChild(ol);
    }
    elsewhere(d, t, i);
    var offered = data.offered[t.dataset + "/" + t.variant + "/" + t.layout] || [];
    var det = el("details"); det.appendChild(el("summary", "Offered tools (" + offered.length + ")"));
    var ul = el("ul");
    offered.forEach(function (f) { var li = el("li"); li.appendChild(el("code", f.name)); li.appendChild(document.createTextNode(" — " + f.description)); ul.appendChild(li); });
    det.appendChild(ul); d.appendChild(det);
    conversation(d, t);
    panel.scrollTop = 0;
  }
