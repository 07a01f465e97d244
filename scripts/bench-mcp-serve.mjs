// Served-call overhead of `toolpick mcp serve` over stdio and over streamable HTTP (issue 34, item 4),
// seen by the TypeScript MCP SDK (the copy scripts/install-mcp-servers.sh installs with the reference
// servers, target/mcp-servers): after a warm-up, N sequential `tools/call` requests against the flat
// layout of the bundled catalog, on one session (HTTP: one reused keep-alive connection), each timed
// client → server → simulated tool → client. Prints one JSON line per transport (median, p95, mean ms)
// and one with their ratio.
//
//   node scripts/bench-mcp-serve.mjs [--binary target/release/toolpick] [--calls 300] [--servers DIR]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import path from "node:path";

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const binary = path.resolve(flag("--binary", "target/release/toolpick"));
const calls = Number(flag("--calls", "300"));
const servers = path.resolve(flag("--servers", process.env.TOOLPICK_MCP_SERVERS ?? "target/mcp-servers"));
const sdk = (p) => import(path.join(servers, "node_modules/@modelcontextprotocol/sdk/dist/esm", p));
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const serve = ["mcp", "serve", "--layout", "flat", "--variant", "good"];
const CALL = { name: "get_repository", arguments: { repository: "payments-service" } };

async function timed(transport) {
  const client = new Client({ name: "toolpick-bench", version: "1" });
  await client.connect(transport);
  await client.listTools();
  await client.callTool(CALL); // warm-up
  const out = [];
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    const r = await client.callTool(CALL);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.isError) throw new Error(`the call failed: ${JSON.stringify(r)}`);
  }
  await client.close();
  return out;
}

function summary(transport, xs) {
  xs = [...xs].sort((a, b) => a - b);
  const mid = xs.length / 2;
  const median = xs.length % 2 ? xs[Math.floor(mid)] : (xs[mid - 1] + xs[mid]) / 2;
  const r = (x) => Math.round(x * 1000) / 1000;
  return {
    transport,
    calls: xs.length,
    median_ms: r(median),
    p95_ms: r(xs[Math.ceil(0.95 * xs.length) - 1]),
    mean_ms: r(xs.reduce((a, b) => a + b, 0) / xs.length),
  };
}

const stdio = summary("stdio", await timed(new StdioClientTransport({ command: binary, args: serve, stderr: "ignore" })));

// HTTP: a free port is chosen by the server (`127.0.0.1:0`) and read from its first line on stderr.
const server = spawn(binary, [...serve, "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
let http;
try {
  const lines = createInterface({ input: server.stderr });
  let url;
  for await (const line of lines) {
    url = line.split(/\s+/).find((w) => w.startsWith("http://"));
    if (url) break;
  }
  if (!url) throw new Error("the server printed no URL");
  server.stderr.resume();
  http = summary("http", await timed(new StreamableHTTPClientTransport(new URL(url))));
} finally {
  server.kill("SIGINT");
  await once(server, "exit");
}
console.log(JSON.stringify(stdio));
console.log(JSON.stringify(http));
console.log(JSON.stringify({ http_over_stdio_median: Math.round((http.median_ms / stdio.median_ms) * 100) / 100 }));
