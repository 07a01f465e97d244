#!/usr/bin/env bash
# Installs a model provider's official Python SDK, pinned, into an isolated venv of its own (default
# target/<sdk>-sdk-venv; $TOOLPICK_<SDK>_SDK_VENV to move it), and prints the venv's folder. The
# provider-SDK test tiers validate toolpick's requests and the mock endpoint's answers against the
# SDK's own types: tests/anthropic_sdk.rs (scripts/anthropic_sdk_server.py); `openai` is pinned here
# for the Responses backend's SDK tier (issue 35), which has no test yet.
#
#   scripts/install-provider-sdk.sh SDK           install if missing, print the folder
#   scripts/install-provider-sdk.sh --check SDK   install nothing: print the folder when installed,
#                                                 else say what is missing and exit 1 (what the tests ask)
#
# SDK is `anthropic` (anthropic==2.10.0, tier `anthropic-sdk`) or `openai` (openai==3.51.0), each with its dependencies (pydantic, httpx, …). Needs python3 with its venv module,
# and PyPI once; after that everything runs offline. scripts/install-test-deps.sh runs this for the
# tiers (tests/common/tiers.rs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
check=0
sdk=""
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    anthropic|openai) [ -z "$sdk" ] || { echo "install-provider-sdk: one SDK at a time" >&2; exit 2; }; sdk="$arg" ;;
    *) echo "install-provider-sdk: unknown argument \`$arg\`; use [--check] anthropic|openai" >&2; exit 2 ;;
  esac
done
case "$sdk" in
  anthropic) PIN="anthropic==2.10.0"; VENV="${TOOLPICK_ANTHROPIC_SDK_VENV:-$ROOT/target/anthropic-sdk-venv}" ;;
  openai) PIN="openai==3.51.0"; VENV="${TOOLPICK_OPENAI_SDK_VENV:-$ROOT/target/openai-sdk-venv}" ;;
  *) echo "install-provider-sdk: name the SDK: anthropic or openai" >&2; exit 2 ;;
esac
MARK="$VENV/.installed-$PIN"
if [ -f "$MARK" ]; then echo "$VENV"; exit 0; fi
if [ "$check" = 1 ]; then
  echo "install-provider-sdk: $PIN is not installed in $VENV" >&2
  exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "install-provider-sdk: python3 not found; install Python 3.9+ with its venv module (Debian/Ubuntu: apt-get install python3 python3-venv)" >&2
  exit 1
fi
mkdir -p "$(dirname "$VENV")"
# One installer at a time (parallel runs share the venv); a half-made venv is rebuilt.
exec 9>"$VENV.lock"
flock 9
if [ ! -f "$MARK" ]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV"; then
    echo "install-provider-sdk: cannot create a venv at $VENV; install the venv module (Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
  fi
  if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install --quiet "$PIN" >&2; then
    echo "install-provider-sdk: pip could not install $PIN from the package index; the first run needs network access to PyPI (later runs are offline)" >&2
    exit 1
  fi
  touch "$MARK"
fi
echo "$VENV"
