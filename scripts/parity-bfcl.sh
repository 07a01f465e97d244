#!/usr/bin/env bash
# Parity run: toolpick's verdicts against BFCL's own AST checker on ../shared/external/bfcl.
#
#   scripts/parity-bfcl.sh [OUT_DIR] [-- harness flags: --seed N --bfcl DIR]
#
# - BFCL's checker comes from PyPI, pinned: bfcl-eval==2026.3.23, installed once by
#   scripts/install-parity-venv.sh with `pip install --no-deps` into an isolated venv (default
#   target/parity-venv; set TOOLPICK_PARITY_VENV to move it). --no-deps because the package's
#   top-level modules import every model SDK; the harness imports only the checker, after putting a stub
#   `bfcl_eval.constants.model_config` in `sys.modules` (its one entry, our pseudo-model, has
#   underscore_to_dot=False), and runs BFCL's runner functions from their source
#   (scripts/parity_bfcl.py explains exactly how). Once the venv exists, everything runs offline.
# - The binary: $TOOLPICK if set, else `cargo build` and target/debug/toolpick.
# - Writes OUT_DIR/parity.csv (default target/parity) and prints the tables; exits 1 when a disagreement
#   is not one of toolpick's documented deliberate differences, a record was lost without a reason, or an
#   imported task dropped its record's system message.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/target/parity}"
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
VENV="$("$ROOT/scripts/install-parity-venv.sh")"

if [ -z "${TOOLPICK:-}" ]; then
  (cd "$ROOT" && cargo build --quiet --locked)
  TOOLPICK="$ROOT/target/debug/toolpick"
fi
mkdir -p "$OUT"
exec "$VENV/bin/python" "$ROOT/scripts/parity_bfcl.py" --toolpick "$TOOLPICK" --out "$OUT" "$@"
