#!/usr/bin/env bash
# The GitHub Action's run step (action.yml), also run by tests/packaging.rs: one `toolpick run` of the
# experiment with the gates, the history and the step summary, whatever the gates decide.
#
# Inputs (environment): TOOLPICK_CONFIG (experiment file; empty: the bundled default), TOOLPICK_ARGS
# (more flags, split at white space, e.g. "--min-pass-rate 80 --gate-cells */gpt-4o-mini"),
# TOOLPICK_OUT (default toolpick-reports), TOOLPICK_RUN_ID (default ci-$GITHUB_RUN_ID, else ci),
# TOOLPICK_HISTORY (a JSONL file the run appends to; empty: none), TOOLPICK_BASELINE (a run directory
# to compare with; empty: none). GITHUB_STEP_SUMMARY and GITHUB_OUTPUT as GitHub sets them.
#
# The history is appended before the gates are checked (toolpick's own order), so a night that fails
# its gates is still in the trend. Outputs: report-dir, exit-code. Exits with toolpick's exit code
# (100 when a gate failed; see docs/ci.md).
set -uo pipefail
out="${TOOLPICK_OUT:-toolpick-reports}"
run_id="${TOOLPICK_RUN_ID:-ci${GITHUB_RUN_ID:+-$GITHUB_RUN_ID}}"
args=(run --out "$out" --run-id "$run_id")
[ -n "${TOOLPICK_CONFIG:-}" ] && args+=(--config "$TOOLPICK_CONFIG")
[ -n "${TOOLPICK_HISTORY:-}" ] && args+=(--history "$TOOLPICK_HISTORY")
[ -n "${TOOLPICK_BASELINE:-}" ] && args+=(--baseline "$TOOLPICK_BASELINE")
[ -n "${GITHUB_STEP_SUMMARY:-}" ] && args+=(--step-summary "$GITHUB_STEP_SUMMARY")
read -r -a extra <<< "${TOOLPICK_ARGS:-}"
args+=("${extra[@]}")
if [ -n "${TOOLPICK_HISTORY:-}" ]; then
  mkdir -p "$(dirname "$TOOLPICK_HISTORY")"
fi
"${TOOLPICK_BIN:-toolpick}" "${args[@]}"
code=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "report-dir=$out/$run_id"
    echo "exit-code=$code"
  } >> "$GITHUB_OUTPUT"
fi
exit "$code"
