#!/usr/bin/env bash
# Runner throughput against the local mock endpoint: 50 ms injected latency, concurrency 64.
# Ideal = concurrency / latency = 1 280 requests/s. Prints episodes/s, requests/s and client CPU.
# Usage: scripts/bench-endpoint.sh [extra toolpick run flags]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --quiet
work=$(mktemp -d)
trap 'kill $mock 2>/dev/null || true; rm -rf "$work"' EXIT
port=${PORT:-18099}
./target/dist/toolpick mock-endpoint --port "$port" --latency-ms 50 > "$work/mock.log" &
mock=$!
sleep 1
# A 10-tool server (the wiki) and its single-server tasks, replayed 140 times: about 2 100 episodes.
mkdir -p "$work/cat"
cp registries/workspace/wiki.json "$work/cat/"
python3 - "$work" <<'PY'
import json, sys
out = open(sys.argv[1] + "/ds.jsonl", "w")
for line in open("datasets/starter.jsonl"):
    t = json.loads(line)
    if t["expected"] and all(e["tool"].startswith("wiki/") for e in t["expected"]):
        out.write(line)
PY
before=$(curl -s "127.0.0.1:$port/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
/usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak" ./target/dist/toolpick run \
  --catalog "$work/cat" --dataset "$work/ds.jsonl" --backends openai --model mock \
  --base-url "http://127.0.0.1:$port/v1" --layouts flat --variants good --trials 140 \
  --concurrency 64 --no-cache -q --out "$work/out" --run-id bench "$@" 2> "$work/time" | head -1
after=$(curl -s "127.0.0.1:$port/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
seconds=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$work/out/bench/run.json")
python3 - "$before" "$after" "$seconds" "$work/time" <<'PY'
import sys
b, a, s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
req = a - b
print(f"requests: {req} in {s:.2f} s run time -> {req/s:.0f} requests/s (ideal 1280, {100*req/s/1280:.0f} %)")
print("process:", open(sys.argv[4]).read().strip().splitlines()[-1])
PY
