#!/usr/bin/env bash
# Run the default job twice with the same seed and compare every output byte for byte
# (run.json, the metadata file with timestamps and timings, is the only one allowed to differ).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
./target/release/toolpick run --out "$out" --run-id first "$@" > /dev/null
./target/release/toolpick run --out "$out" --run-id second "$@" > /dev/null
status=0
for f in "$out"/first/*; do
  name=$(basename "$f")
  [ "$name" = run.json ] && continue
  if cmp -s "$f" "$out/second/$name"; then echo "identical  $name"; else echo "DIFFERENT  $name"; status=1; fi
done
exit $status
