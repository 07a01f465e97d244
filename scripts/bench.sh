#!/usr/bin/env bash
# toolpick's benchmarks: builds with the `dist` profile (what is shipped: Cargo.toml), measures every
# figure of BENCHMARKS.md on this machine, prints one table (figure, value, bound or peer, ratio) and
# rewrites BENCHMARKS.md with the machine description.
#
#   scripts/bench.sh                 everything (about 5 minutes after the build)
#   TRIALS_AT_SCALE=100000 scripts/bench.sh    a smaller scoring/reporting run
#   BENCH_CI=1 scripts/bench.sh      also time `.ci/run` on a fresh clone (about 15 minutes)
#   BENCH_ONLY=runner,curve scripts/bench.sh   only these sections (runner, lexical, default, scale,
#                                    curve, mcp, live), printing the rows without rewriting BENCHMARKS.md
#
# Needs: node (the shared fake endpoint), python3 (the shared catalog generator), taskset, curl.
# Numbers come from benchmarks only, never from timed unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SHARED=${TOOLPICK_SHARED_DIR:-$ROOT/../shared}
TRIALS_AT_SCALE=${TRIALS_AT_SCALE:-1000000}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

echo "building (dist profile)…" >&2
cargo build --profile dist --quiet
cargo bench --profile dist --no-run --quiet --bench lexical --bench report_scale --bench endpoint_capacity 2> /dev/null
BIN=$ROOT/target/dist/toolpick
bench_bin() { find target/dist/deps -maxdepth 1 -type f -executable -name "$1-*" -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2; }

rows=()   # figure|value|bound or peer|ratio
phase_rows=()   # phase|seconds (the scale section)
want() { [[ -z "${BENCH_ONLY:-}" || ",$BENCH_ONLY," == *",$1,"* ]]; }
row() { rows+=("$1|$2|$3|$4"); }
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.2f}' if b else 'n/a')" "$1" "$2"; }

# --- 1. Runner overhead against a 50 ms endpoint: 2 000 one-turn episodes, 10 tools, concurrency 64 ----------
if want runner; then
python3 - "$work/suite" <<'PY'
import json, os, sys
out = sys.argv[1]
os.makedirs(f"{out}/catalog", exist_ok=True)
verbs = ["get", "list", "create", "update", "delete", "search", "send", "cancel", "export", "archive"]
tools = [{"name": f"{v}_record", "description": f"{v.capitalize()} a record in the store. Use when the user wants to {v} a record.",
          "inputSchema": {"type": "object", "properties": {"record_id": {"type": "string", "description": "Record id."}}, "required": ["record_id"]},
          "mockResponse": {"ok": True}} for v in verbs]
json.dump({"name": "store", "description": "A record store.", "categories": [{"name": "records", "description": "Records.", "tools": tools}]},
          open(f"{out}/catalog/store.json", "w"))
with open(f"{out}/tasks.jsonl", "w") as f:
    for i in range(2000):
        f.write(json.dumps({"id": f"t{i:04d}", "query": f"Please get record r{i}", "kind": "single",
                            "expected": [{"tool": "store/records/get_record", "arguments": {"record_id": [f"r{i}"]}}],
                            "category": "records", "tags": []}) + "\n")
PY
wait_port() { for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/stats" > /dev/null && return 0; sleep 0.1; done; echo "endpoint on $1 did not start" >&2; exit 1; }
runner() { # name port
  "$BIN" run --catalog "$work/suite/catalog" --dataset "$work/suite/tasks.jsonl" --variants good --layouts flat \
    --backends openai --model bench --base-url "http://127.0.0.1:$2/v1" --concurrency 64 --max-steps 1 --max-attempts 1 \
    --no-cache -q --out "$work/runs" --run-id "$1" > /dev/null
  python3 - "$work/runs/$1" <<'PY'
import json, sys, statistics
d = sys.argv[1]
meta = json.load(open(f"{d}/run.json"))
n, secs, cpu = meta["executed_trials"], meta["episode_phase_seconds"], meta["episode_phase_cpu_seconds"]
lat = sorted(a for l in open(f"{d}/timings.jsonl") for r in json.loads(l)["requests"] for a in r["attempt_ms"])
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print(f"{n} {n / secs:.1f} {1000 * cpu / n:.3f} {q(0.5) - 50:.2f} {q(0.99) - 50:.2f}")
PY
}
capacity() { "$(bench_bin endpoint_capacity)" "http://127.0.0.1:$1/v1" 2000 64 | awk '$1 == "requests_per_s" {print $2}'; }
# Each endpoint's capacity for this workload is measured by a minimal client right before each runner
# run (alternating, BENCH_REPEATS times), so the ratio compares the two under the same machine load.
# Reported: the runner's median throughput and the median of the per-pair ratios, with their range.
repeats=${BENCH_REPEATS:-3}
pairs() { # name port → "median_tps median_cap median_ratio min_ratio max_ratio cpu p50 p99 n"
  local out=()
  for i in $(seq "$repeats"); do
    cap=$(capacity "$2")
    read -r n tps cpu p50 p99 < <(runner "$1$i" "$2")
    out+=("$tps $cap $cpu $p50 $p99 $n")
  done
  printf '%s\n' "${out[@]}" | python3 -c '
import sys, statistics as st
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
r = [t / c for t, c, *_ in rows]
m = lambda k: st.median(x[k] for x in rows)
print(f"{m(0):.1f} {m(1):.1f} {st.median(r):.3f} {min(r):.3f} {max(r):.3f} {m(2):.3f} {m(3):.2f} {m(4):.2f} {int(rows[0][5])}")'
}
port=$((20000 + RANDOM % 20000))
node "$SHARED/bench/fake_endpoint.mjs" --port "$port" --delay-ms 50 > /dev/null 2>&1 & pids+=($!)
wait_port "$port"
read -r tps cap r rmin rmax cpu p50 p99 n < <(pairs fake "$port")
row "runner vs fake_endpoint.mjs (50 ms, c=64, $n trials): trials/s, median of $repeats" "$tps" "bound 1280" "$(ratio "$tps" 1280)"
row "fake_endpoint.mjs capacity, minimal client (benches/endpoint_capacity.rs): req/s" "$cap" "bound 1280" "$(ratio "$cap" 1280)"
row "runner ÷ endpoint capacity (fake_endpoint.mjs), median [range]" "$r [$rmin–$rmax]" "goal ≥ 0.98" "$r"
row "harness CPU per trial (ms)" "$cpu" "goal ≤ 0.5" "$(ratio "$cpu" 0.5)"
row "added latency per request p50 / p99 (ms)" "$p50 / $p99" "" ""
row "peer promptfoo 0.121.20: trials/s (shared/bench)" "36" "ours $tps" "ours ÷ peer $(ratio "$tps" 36)"
row "peer inspect_ai 0.3.285: trials/s (shared/bench)" "30" "ours $tps" "ours ÷ peer $(ratio "$tps" 30)"
row "CPU per trial, promptfoo 28 ms ÷ ours" "$cpu" "28" "$(ratio 28 "$cpu")"
port2=$((port + 1))
"$BIN" mock-endpoint --port "$port2" --latency-ms 50 > /dev/null 2>&1 & pids+=($!)
wait_port "$port2"
read -r tps2 cap2 r2 rmin2 rmax2 cpu2 _ _ _ < <(pairs mock "$port2")
row "runner vs toolpick mock-endpoint (50 ms, c=64): trials/s, median of $repeats" "$tps2" "bound 1280" "$(ratio "$tps2" 1280)"
row "mock-endpoint capacity, minimal client: req/s" "$cap2" "bound 1280" "$(ratio "$cap2" 1280)"
row "runner ÷ endpoint capacity (mock-endpoint), median [range]" "$r2 [$rmin2–$rmax2]" "goal ≥ 0.98" "$r2"
row "harness CPU per trial vs mock-endpoint (ms)" "$cpu2" "goal ≤ 0.5" "$(ratio "$cpu2" 0.5)"
fi

# --- 3. Lexical baseline at ToolBench scale, one core ------------------------------------------------------
if want lexical; then
python3 "$SHARED/bench/gen_catalog.py" "$work/catalog" > /dev/null
lex=$(taskset -c 0 "$(bench_bin lexical)" "$work/catalog")
get() { echo "$lex" | awk -v k="$1" '$1 == k {print $2}'; }
row "lexical: tools indexed / queries" "$(get tools) / $(get queries)" "" ""
row "lexical: index build (ms, 1 core)" "$(get index_build_ms)" "" ""
row "lexical: selections/s per call (1 core)" "$(get per_call_selections_per_s)" "goal 50000 (bm25s 19600)" "$(ratio "$(get per_call_selections_per_s)" 50000)"
row "lexical: selections/s batched (1 core, analysis included)" "$(get batched_selections_per_s)" "goal 100000 (bm25s 45700)" "$(ratio "$(get batched_selections_per_s)" 100000)"
row "lexical: batched scoring only (1 core)" "$(get batched_scoring_only_per_s)" "" ""
row "lexical: top-1 / top-5 accuracy (%)" "$(get top1_pct) / $(get top5_pct)" "bm25s 73.8 / 90.5" "Δ top-1 $(python3 -c "print(f'{$(get top1_pct) - 73.8:+.1f}')") pts"
fi

# --- 5. Default run -----------------------------------------------------------------------------------------
if want default; then
best=""
for i in 1 2 3; do
  s=$(date +%s.%N); "$BIN" run --out "$work/default" --run-id "d$i" -q > /dev/null; e=$(date +%s.%N)
  t=$(python3 -c "print(f'{$e - $s:.2f}')"); best=$(python3 -c "print(min(float('$t'), float('${best:-1e9}')))")
done
row "default run, bundled suite (s, best of 3, 2 cores)" "$best" "goal ≤ 2" "$(ratio "$best" 2)"
fi

# --- 4. Scoring and reporting at scale ----------------------------------------------------------------------
# report_scale writes TRIALS_AT_SCALE trials made from the default run's, then renders every report
# SCALE_REPEATS times (each: wall time and its own peak RSS), then once more with its phases timed
# (TOOLPICK_PHASES, on stderr). Python's json module then parses the same trials.jsonl, line by line
# and nothing else, as the reference for reading the file at all.
if want scale; then
[[ -d "$work/default/d1" ]] || "$BIN" run --out "$work/default" --run-id d1 -q > /dev/null
scale=$(REPORT_REPEATS=${SCALE_REPEATS:-3} REPORT_PHASES=1 "$(bench_bin report_scale)" "$work/default/d1" "$work/scale" "$TRIALS_AT_SCALE" 2> "$work/phases")
sget() { echo "$scale" | awk -v k="$1" '$1 == k {print $2}' | paste -sd' '; }
walls=$(sget report_wall_s); rss=$(sget peak_rss_mib)
median() { python3 -c 'import statistics, sys; print(f"{statistics.median(map(float, sys.argv[1:])):.2f}")' $1; }
py_start=$(date +%s.%N)
python3 -c 'import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    json.loads(line)' "$work/scale/trials.jsonl"
py_end=$(date +%s.%N)
py=$(python3 -c "print(f'{$py_end - $py_start:.2f}')")
wall=$(median "$walls")
row "re-score + all reports, $(sget trials) trials ($(sget trials_file_mib) MiB trials.jsonl): wall (s), $(echo "$walls" | wc -w) runs, median" "$wall ($(echo "$walls" | sed 's/ / · /g'))" "goal ≤ 5" "$(ratio "$wall" 5)"
row "re-score + all reports: peak RSS (MiB), per run" "$(echo "$rss" | sed 's/ / · /g')" "goal ≤ 1024" "$(ratio "$(echo "$rss" | tr ' ' '\n' | sort -n | tail -1)" 1024)"
row "peer: Python $(python3 -c 'import sys; print(".".join(map(str, sys.version_info[:3])))') json.loads, parse only, same trials.jsonl (s)" "$py" "ours $wall" ""
row "ours ÷ Python parse only" "$(ratio "$wall" "$py")" "goal ≤ 0.35" "$(ratio "$(ratio "$wall" "$py")" 0.35)"
row "report.html at that scale (MiB)" "$(sget report_html_mib)" "" ""
# Where the time goes (the extra render with phases; scan phases are CPU summed over threads).
phase_rows=()
while read -r _ rest; do phase_rows+=("${rest% *}|${rest##* }"); done < <(grep '^phase ' "$work/phases")
phase_wall=$(sget phases_wall_s)
rm -rf "$work/scale"
fi

# --- 6. Tool-count curve: cost per trial against a run without distractors on the same data -------------
if want curve; then
levels=0,10,20,50,100,200,500
per_trial() { # label args… → milliseconds of wall time per trial, best of 2 (loading and reports included)
  local best=""
  for i in 1 2; do
    s=$(date +%s.%N); "$BIN" run -q --out "$work/curve" --run-id "$1$i" "${@:2}" > /dev/null; e=$(date +%s.%N)
    n=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['executed_trials'])" "$work/curve/$1$i/run.json")
    best=$(python3 -c "print(f'{min(($e - $s) * 1000 / $n, float(\"${best:-1e9}\")):.3f}')")
  done
  echo "$best $n"
}
read -r plain plain_n < <(per_trial plain)
read -r curve curve_n < <(per_trial curve --variants good --layouts flat,progressive,search --distractors "$levels")
row "default run: ms per trial ($plain_n trials)" "$plain" "" ""
row "curve, bundled suite, levels $levels × flat/progressive/search ($curve_n trials): ms per trial" "$curve" "goal ≤ 1.5 × default" "$(ratio "$curve" "$plain")"
mcp="mcptoolbench:$SHARED/external/mcptoolbench"
read -r iplain iplain_n < <(per_trial iplain --dataset "$mcp")
read -r icurve icurve_n < <(per_trial icurve --dataset "$mcp" --distractors "$levels")
row "imported MCPToolBench++ slice, no distractors ($iplain_n trials): ms per trial" "$iplain" "" ""
row "curve on it, levels $levels ($icurve_n trials): ms per trial" "$icurve" "goal ≤ 1.5 × no distractors" "$(ratio "$icurve" "$iplain")"
rm -rf "$work/curve"
fi

# --- 7. Served-call overhead: stdio vs streamable HTTP (issue 34, item 4) -------------------------------
# `BENCH_ONLY=mcp`. The TypeScript MCP SDK installed with the reference servers (scripts/install-mcp-servers.sh)
# makes 300 sequential tools/call requests on one session against `toolpick mcp serve` (flat, bundled
# catalog), over stdio and then over HTTP on one reused connection; the goal is HTTP within 3× of stdio.
if want mcp; then
servers=${TOOLPICK_MCP_SERVERS:-$ROOT/target/mcp-servers}
if [[ -d "$servers/node_modules/@modelcontextprotocol/sdk" ]]; then
  node scripts/bench-mcp-serve.mjs --binary "$BIN" --calls 300 --servers "$servers" > "$work/mcp.jsonl"
  read -r s_med s_p95 h_med h_p95 < <(python3 - "$work/mcp.jsonl" <<'PY'
import json, sys
rows = {r["transport"]: r for r in map(json.loads, open(sys.argv[1])) if "transport" in r}
print(rows["stdio"]["median_ms"], rows["stdio"]["p95_ms"], rows["http"]["median_ms"], rows["http"]["p95_ms"])
PY
)
  row "mcp serve: tools/call over stdio, median / p95 (ms, TypeScript SDK)" "$s_med / $s_p95" "" ""
  row "mcp serve: tools/call over HTTP, reused connection, median / p95 (ms)" "$h_med / $h_p95" "goal ≤ 3 × stdio" "$(ratio "$h_med" "$s_med")"
else
  echo "mcp: the TypeScript MCP SDK is not in $servers (scripts/install-mcp-servers.sh): skipped" >&2
fi
fi

# --- 8. Live trials with the warm sandbox pool (issue 34, item 8) --------------------------------------------
# `BENCH_ONLY=live`. One npm server (server-filesystem: datasets/live/filesystem.jsonl, 11 tasks × 2 trials)
# and one PyPI server (mcp-server-time: 12 generated tasks), each run by the openai backend against the mock
# endpoint answering every request after LIVE_LATENCY_MS (default 1000: a model's turn; a trial has two), so a
# trial lasts as long as a model makes it. Per server: the cold start is the median `sandbox_setup_ms` with the
# pool off and one sandbox (no other start competes); then the pool off, a pool of 1 and the default pool, with
# the default 4 sandboxes. Per run: median `sandbox_ms` and wall time per trial (episode phase / trials). Goals:
# median `sandbox_ms` with the default pool ≤ 25 % of the cold start; wall per trial with the default pool no
# worse than with a pool of 1.
if want live; then
servers=${TOOLPICK_MCP_SERVERS:-$ROOT/target/mcp-servers}
latency=${LIVE_LATENCY_MS:-1000}
if [[ -d "$servers/node_modules/@modelcontextprotocol/server-filesystem" && -x "$servers/venv/bin/mcp-server-time" ]]; then
  lw="$work/live"; mkdir -p "$lw"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$BIN" mock-endpoint --port "$port" --latency-ms "$latency" > /dev/null 2>&1 & pids+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/stats" > /dev/null && break; sleep 0.1; done
  export TOOLPICK_MCP_SERVERS=$servers
  "$BIN" mcp import --out "$lw/files" --name files -- node '{servers}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js' '{sandbox}' > /dev/null
  "$BIN" mcp import --out "$lw/time" --name time -- "$servers/venv/bin/mcp-server-time" --local-timezone UTC > /dev/null
  python3 - "$lw" <<'PY'
import json, sys
from pathlib import Path
lw = Path(sys.argv[1])
tool = next(f"time/{c['name']}/{t['name']}" for f in (lw / "time").glob("*.json") if f.name != "catalog.json"
            for c in json.load(open(f))["categories"] for t in c["tools"] if t["name"] == "get_current_time")
zones = ["Europe/Paris", "Asia/Tokyo", "America/New_York", "Europe/London", "Australia/Sydney", "Asia/Kolkata",
         "America/Chicago", "Europe/Berlin", "Africa/Cairo", "America/Sao_Paulo", "Asia/Singapore", "Pacific/Auckland"]
with open(lw / "time.jsonl", "w") as f:
    for i, z in enumerate(zones):
        f.write(json.dumps({"id": f"time-{i:02d}", "query": f"What time is it now in {z}?", "kind": "single",
                            "expected": [{"tool": tool, "arguments": {"timezone": [z]}}]}) + "\n")
PY
  printf '[live]\nsandboxes = 1\n' > "$lw/one.toml"
  printf '[live]\n' > "$lw/default.toml"
  live_run() { # catalog dataset trials config pool(N|default) id → "median_sandbox_ms median_setup_ms wall_ms_per_trial trials"
    local pool=(); [[ $5 == default ]] || pool=(--live-pool "$5")
    "$BIN" run --catalog "$lw/$1" --dataset "$2" --trials "$3" --config "$lw/$4.toml" "${pool[@]}" \
      --execute live --allow-destructive --allow-open-world --backends openai --model bench \
      --base-url "http://127.0.0.1:$port/v1" --layouts flat --variants good --no-cache -q \
      --out "$lw/runs" --run-id "$6" > /dev/null
    python3 - "$lw/runs/$6" <<'PY'
import json, statistics, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(f"{d}/timings.jsonl")]
meta = json.load(open(f"{d}/run.json"))
n = meta["executed_trials"]
print(f'{statistics.median(r["sandbox_ms"] for r in rows):.0f} {statistics.median(r["sandbox_setup_ms"] for r in rows):.0f} '
      f'{1000 * meta["episode_phase_seconds"] / n:.0f} {n}')
PY
  }
  dflt=$(( $(nproc) > 4 ? $(nproc) : 4 ))   # the default pool: the cores or the 4 sandboxes, whichever is more
  row "live: load average (1/5/15 min) before the live runs" "$(cut -d' ' -f1-3 /proc/loadavg)" "" ""
  for server in files time; do
    if [[ $server == files ]]; then ds=$ROOT/datasets/live/filesystem.jsonl; trials=2; label="npm server-filesystem"
    else ds=$lw/time.jsonl; trials=1; label="PyPI mcp-server-time"; fi
    read -r _ cold cold_wall n < <(live_run "$server" "$ds" "$trials" one 0 "$server-cold")
    read -r off_ms _ off_wall _ < <(live_run "$server" "$ds" "$trials" default 0 "$server-off")
    read -r one_ms _ one_wall _ < <(live_run "$server" "$ds" "$trials" default 1 "$server-pool1")
    read -r def_ms _ def_wall _ < <(live_run "$server" "$ds" "$trials" default default "$server-pool")
    row "live $label ($n trials): cold start (median sandbox_setup_ms, pool off, 1 sandbox)" "$cold" "" ""
    row "live $label: median sandbox_ms, pool off / 1 / default ($dflt), 4 sandboxes" "$off_ms / $one_ms / $def_ms" "goal default ≤ 0.25 × cold start" "$(ratio "$def_ms" "$cold")"
    row "live $label: wall ms per trial, 1 sandbox pool off / 4 pool off / 4 pool 1 / 4 default pool" "$cold_wall / $off_wall / $one_wall / $def_wall" "goal default ≤ pool 1" "$(ratio "$def_wall" "$one_wall")"
  done
  row "live: load average (1/5/15 min) after the live runs" "$(cut -d' ' -f1-3 /proc/loadavg)" "" ""
else
  echo "live: server-filesystem or mcp-server-time is not in $servers (scripts/install-test-deps.sh mcp-npm mcp-pypi): skipped" >&2
fi
fi

if [[ "${BENCH_CI:-0}" == 1 ]]; then
  git clone -q "$ROOT" "$work/ci"
  s=$(date +%s); (cd "$work/ci" && .ci/run > /dev/null 2>&1); e=$(date +%s)
  row "CI (.ci/run on a fresh clone, s)" "$((e - s))" "goal ≤ 900" "$(ratio $((e - s)) 900)"
fi

phase_table=""
if [[ ${#phase_rows[@]} -gt 0 ]]; then
  phase_table="| phase of one render, $TRIALS_AT_SCALE trials (render with phases timed: ${phase_wall} s wall) | seconds |
|---|---|"
  for r in "${phase_rows[@]}"; do IFS='|' read -r a b <<< "$r"; phase_table+=$'\n'"| $a | $b |"; done
fi

if [[ -n "${BENCH_ONLY:-}" ]]; then printf '%s\n' "${rows[@]}"; [[ -z "$phase_table" ]] || printf '\n%s\n' "$phase_table"; exit 0; fi

# The notes written by hand live in BENCHMARKS.md itself, below the marker line; read them before the
# file is rewritten, and refuse to rewrite it when the marker is gone rather than drop the notes.
notes_marker='<!-- scripts/bench.sh keeps everything below this line'
if ! grep -qF -- "$notes_marker" BENCHMARKS.md; then
  echo "BENCHMARKS.md has no line starting with '$notes_marker': not rewriting it (the rows are above)" >&2
  printf '%s\n' "${rows[@]}"; exit 1
fi
notes=$(awk -v m="$notes_marker" 'index($0, m) == 1 { keep = 1 } keep' BENCHMARKS.md)

# --- the table ----------------------------------------------------------------------------------------------
machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(uname -sr), $(rustc --version), node $(node --version)"
table="| figure | value | bound / peer / goal | ratio |
|---|---|---|---|"
for r in "${rows[@]}"; do IFS='|' read -r a b c d <<< "$r"; table+=$'\n'"| $a | $b | $c | $d |"; done
echo "$table"
{
  echo "# toolpick benchmarks"
  echo
  echo "Measured by \`scripts/bench.sh\` on $(date -u +%Y-%m-%d): $machine."
  echo
  echo "$table"
  echo
  if [[ -n "$phase_table" ]]; then
    echo "Where the re-score and report time goes: the \`scan\` phases run in a pipeline (a reader thread,"
    echo "parsing on every core, a writer thread) and are CPU seconds summed over threads; \`scan (wall)\` is"
    echo "the scan's wall time; the later phases are wall time (\`finish\` runs beside \`analyze\`, the \`render\`"
    echo "phases side by side)."
    echo
    echo "$phase_table"
    echo
  fi
  echo "$notes"
} > BENCHMARKS.md
echo "wrote BENCHMARKS.md" >&2
