#!/usr/bin/env bash
# Installs Anthropic's official Python SDK, pinned, into an isolated venv (default
# target/anthropic-sdk-venv; $TOOLPICK_ANTHROPIC_SDK_VENV to move it), and prints the venv's folder.
# tests/anthropic_sdk.rs validates toolpick's Messages requests and the mock endpoint's answers against
# the SDK's own types (scripts/anthropic_sdk_server.py).
#
#   scripts/install-anthropic-sdk.sh           install if missing, print the folder
#   scripts/install-anthropic-sdk.sh --check   install nothing: print the folder when installed, else
#                                              say what is missing and exit 1 (what the tests ask)
#
# anthropic==2.10.0 with its dependencies (pydantic, httpx, …). Needs python3 with its venv module, and
# PyPI once; after that everything runs offline. scripts/install-test-deps.sh runs this for the
# `anthropic-sdk` test tier (tests/common/tiers.rs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${TOOLPICK_ANTHROPIC_SDK_VENV:-$ROOT/target/anthropic-sdk-venv}"
PIN="anthropic==2.10.0"
MARK="$VENV/.installed-$PIN"
case "${1:-}" in
  "") ;;
  --check)
    if [ -f "$MARK" ]; then echo "$VENV"; exit 0; fi
    echo "install-anthropic-sdk: $PIN is not installed in $VENV" >&2
    exit 1
    ;;
  *) echo "install-anthropic-sdk: unknown argument \`$1\`; use --check or nothing" >&2; exit 2 ;;
esac
if [ -f "$MARK" ]; then echo "$VENV"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "install-anthropic-sdk: python3 not found; install Python 3.9+ with its venv module (Debian/Ubuntu: apt-get install python3 python3-venv)" >&2
  exit 1
fi
mkdir -p "$(dirname "$VENV")"
# One installer at a time (parallel runs share the venv); a half-made venv is rebuilt.
exec 9>"$VENV.lock"
flock 9
if [ ! -f "$MARK" ]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV"; then
    echo "install-anthropic-sdk: cannot create a venv at $VENV; install the venv module (Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
  fi
  if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install --quiet "$PIN" >&2; then
    echo "install-anthropic-sdk: pip could not install $PIN from the package index; the first run needs network access to PyPI (later runs are offline)" >&2
    exit 1
  fi
  touch "$MARK"
fi
echo "$VENV"
