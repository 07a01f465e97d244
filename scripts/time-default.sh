#!/usr/bin/env bash
# Wall time of the default job (after the build), over several runs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=${RUNS:-5}
for i in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  ./target/dist/toolpick run --out "$out" --run-id "t$i" > /dev/null
  end=$(date +%s.%N)
  echo "run $i: $(echo "$end - $start" | bc) s"
done
