#!/usr/bin/env bash
# The nightly job on one machine, or one step of it in CI:
#
#   scripts/nightly.sh shard I N     run shard I of N into $OUT/shard-I
#   scripts/nightly.sh merge N       merge the N shards into $OUT/nightly, compare with the baseline,
#                                    record the history, write the step summary, apply the gates
#   scripts/nightly.sh all [N]       both, locally (default N = 2)
#
# Environment (all optional):
#   TOOLPICK      the binary (default: build and use target/release/toolpick)
#   OUT           output root (default: reports/nightly-work)
#   BASELINE      the last good run directory to compare with (default: none, so no --max-drop gate)
#   HISTORY       history file (default: reports/history.jsonl)
#   MAX_DROP      points pass@1 or selection may fall before the gate fails (default: 2)
#   MIN_PASS      minimum pass@1 in % for the gated cells (default: unset)
#   GATE_CELLS    glob of the gated cells (default: every cell)
#   RUN_ARGS      extra `toolpick run` flags, e.g. "--backends openai --model gpt-4o-mini --trials 3"
#   GITHUB_STEP_SUMMARY  when set (GitHub Actions), the Markdown summary is appended there
#
# Exit codes are toolpick's: 0 ok, 1 harness error, 2 bad input, 100 a gate failed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${TOOLPICK:-}" ]]; then
  cargo build --release --quiet
  TOOLPICK=./target/release/toolpick
fi
OUT=${OUT:-reports/nightly-work}
HISTORY=${HISTORY:-reports/history.jsonl}
MAX_DROP=${MAX_DROP:-2}
read -r -a extra <<< "${RUN_ARGS:-}"

shard() {
  local i=$1 n=$2
  # Same --run-id scheme on every machine; each shard is its own run directory (resumable).
  "$TOOLPICK" run --quiet --out "$OUT" --run-id "shard-$i" --shard "$i/$n" "${extra[@]}"
}

merge() {
  local n=$1 dirs=() gates=()
  for ((i = 1; i <= n; i++)); do dirs+=("$OUT/shard-$i"); done
  rm -rf "$OUT/nightly"
  if [[ -n "${BASELINE:-}" ]]; then
    gates+=(--baseline "$BASELINE" --max-drop "$MAX_DROP" --significant-only)
  fi
  [[ -n "${MIN_PASS:-}" ]] && gates+=(--min-pass-rate "$MIN_PASS")
  [[ -n "${GATE_CELLS:-}" ]] && gates+=(--gate-cells "$GATE_CELLS")
  [[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && gates+=(--step-summary "$GITHUB_STEP_SUMMARY")
  "$TOOLPICK" merge --out "$OUT/nightly" "${dirs[@]}" --history "$HISTORY" \
    --tag "ref=${GITHUB_REF_NAME:-local}" ${gates[@]+"${gates[@]}"}
}

case "${1:-all}" in
  shard) shard "$2" "$3" ;;
  merge) merge "$2" ;;
  all)
    n=${2:-2}
    for ((i = 1; i <= n; i++)); do shard "$i" "$n"; done
    merge "$n"
    ;;
  *) echo "usage: $0 shard I N | merge N | all [N]" >&2; exit 2 ;;
esac
