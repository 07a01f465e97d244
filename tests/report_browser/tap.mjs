// Taps with touch events, on a 390×844 touch phone (Chromium's device emulation over the DevTools
// protocol), the element a CSS selector names in report.html, and prints what the page then shows.
// Used by tests/report_browser/touch.rs: `node --experimental-websocket tap.mjs CHROMIUM URL SELECTOR PROFILE`.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const [chromium, url, selector, profile] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const browser = spawn(chromium, ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--remote-debugging-port=0", `--user-data-dir=${profile}`, "about:blank"], { stdio: "ignore" });
const fail = (why) => { console.log(JSON.stringify({ error: why })); browser.kill("SIGKILL"); process.exit(0); };
setTimeout(() => fail("timed out"), 120000).unref();

// The port Chromium chose is written to the profile's DevToolsActivePort.
let port = null;
for (let i = 0; i < 300 && port === null; i++) {
  try { port = readFileSync(`${profile}/DevToolsActivePort`, "utf8").split("\n")[0]; } catch { await sleep(100); }
}
if (!port) fail("no DevToolsActivePort");
let page = null;
for (let i = 0; i < 100 && !page; i++) {
  try { page = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()).find((t) => t.type === "page"); } catch { }
  if (!page) await sleep(100);
}
if (!page) fail("no page target");
const ws = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((r, j) => { ws.addEventListener("open", r); ws.addEventListener("error", j); });
let id = 0; const pending = new Map(); let loaded = null;
ws.addEventListener("message", (e) => {
  const m = JSON.parse(e.data);
  if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); }
  if (m.method === "Page.loadEventFired" && loaded) loaded();
});
const send = (method, params = {}) => new Promise((r) => { const i = ++id; pending.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
const value = async (expr) => (await send("Runtime.evaluate", { expression: expr, returnByValue: true })).result?.result?.value;

await send("Emulation.setDeviceMetricsOverride", { width: 390, height: 844, deviceScaleFactor: 3, mobile: true });
await send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 5 });
await send("Page.enable");
const load = new Promise((r) => { loaded = r; });
await send("Page.navigate", { url });
await load;
await sleep(300);
const target = await value(`(function () {
  var a = document.querySelector(${JSON.stringify(selector)});
  if (!a) return null;
  a.scrollIntoView({ block: "center" });
  var r = a.getBoundingClientRect();
  var row = a.closest("tr");
  return { x: r.x + r.width / 2, y: r.y + r.height / 2, width: r.width, height: r.height,
           href: a.getAttribute("href"), row_id: row && row.dataset ? row.dataset.id || null : null };
})()`);
if (!target) fail(`nothing matches ${selector}`);
await sleep(200);
const panel = `(function () { var p = document.getElementById("detail"); var h = p.querySelector("h3");
  return { open: getComputedStyle(p).display !== "none", heading: h ? h.textContent : null, hash: location.hash,
           scroll_width: document.documentElement.scrollWidth, inner_width: window.innerWidth }; })()`;
const before = await value(panel);
await send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x: target.x, y: target.y }] });
await sleep(50);
await send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
let after = null;
for (let i = 0; i < 40; i++) { await sleep(100); after = await value(panel); if (after.open) break; }
console.log(JSON.stringify({ target, before, after }));
ws.close();
browser.kill("SIGKILL");
process.exit(0);
