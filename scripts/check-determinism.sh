#!/usr/bin/env bash
# Run the default job twice with the same seed and compare every output byte for byte
# (run.json — timestamps — and timings.jsonl — measured latencies — are the only ones allowed to differ).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
./target/release/toolpick run --out "$out" --run-id first -q "$@" > /dev/null
./target/release/toolpick run --out "$out" --run-id second -q "$@" > /dev/null
status=0
for f in "$out"/first/*; do
  name=$(basename "$f")
  case "$name" in run.json|timings.jsonl) continue ;; esac
  if cmp -s "$f" "$out/second/$name"; then echo "identical  $name"; else echo "DIFFERENT  $name"; status=1; fi
done
exit $status
