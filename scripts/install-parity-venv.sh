#!/usr/bin/env bash
# Installs BFCL's checker for the parity run (scripts/parity-bfcl.sh), pinned, into an isolated venv
# (default target/parity-venv; $TOOLPICK_PARITY_VENV to move it), and prints the venv's folder.
#
#   scripts/install-parity-venv.sh           install if missing, print the folder
#   scripts/install-parity-venv.sh --check   install nothing: print the folder when installed, else
#                                            say what is missing and exit 1 (what the tests ask)
#
# bfcl-eval==2026.3.23 with `pip install --no-deps`: the package's top-level modules import every
# model SDK, and the harness imports only the checker (scripts/parity_bfcl.py explains how). Needs
# python3 with its venv module, and PyPI once; after that everything runs offline.
# scripts/install-test-deps.sh runs this for the `bfcl` test tier (tests/common/tiers.rs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${TOOLPICK_PARITY_VENV:-$ROOT/target/parity-venv}"
PIN="bfcl-eval==2026.3.23"
MARK="$VENV/.installed-$PIN"
case "${1:-}" in
  "") ;;
  --check)
    if [ -f "$MARK" ]; then echo "$VENV"; exit 0; fi
    echo "install-parity-venv: $PIN is not installed in $VENV" >&2
    exit 1
    ;;
  *) echo "install-parity-venv: unknown argument \`$1\`; use --check or nothing" >&2; exit 2 ;;
esac
if [ -f "$MARK" ]; then echo "$VENV"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "install-parity-venv: python3 not found; install Python 3.9+ with its venv module (Debian/Ubuntu: apt-get install python3 python3-venv)" >&2
  exit 1
fi
mkdir -p "$(dirname "$VENV")"
# One installer at a time (parallel runs share the venv); a half-made venv is rebuilt.
exec 9>"$VENV.lock"
flock 9
if [ ! -f "$MARK" ]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV"; then
    echo "install-parity-venv: cannot create a venv at $VENV; install the venv module (Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
  fi
  if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install --quiet --no-deps "$PIN" >&2; then
    echo "install-parity-venv: pip could not install $PIN from the package index; the first run needs network access to PyPI (later runs are offline)" >&2
    exit 1
  fi
  touch "$MARK"
fi
echo "$VENV"
