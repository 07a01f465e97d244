#!/usr/bin/env bash
# Installs what the test tiers beyond the hermetic one need (tests/common/tiers.rs names and
# documents them), so that no test installs anything. Idempotent: what is installed is kept (under
# target/, and Debian's chromium system-wide) and checked in a moment the next time.
#
#   scripts/install-test-deps.sh            every tier
#   scripts/install-test-deps.sh TIER...    these: mcp-npm, mcp-pypi, bfcl, anthropic-sdk, openai-sdk, gemini-sdk, packaging, inspect, chromium
#
# Needs, the first time: Node.js with npm and the npm registry (mcp-npm), python3 with venv and PyPI
# (mcp-pypi, bfcl, anthropic-sdk, openai-sdk, gemini-sdk, packaging, inspect), root and Debian's registry (chromium). scripts/test.sh (what .ci/run runs) calls
# this, then `cargo test --locked`.
set -euo pipefail
cd "$(dirname "$0")/.."
tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(mcp-npm mcp-pypi bfcl anthropic-sdk openai-sdk gemini-sdk packaging inspect chromium)
chromium() {
  [ -x /usr/bin/chromium ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "install-test-deps: /usr/bin/chromium is missing and installing it needs root (apt-get install chromium)" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq chromium >&2 || { apt-get update -qq >&2 && apt-get install -y -qq chromium >&2; }
  [ -x /usr/bin/chromium ] || { echo "install-test-deps: apt-get left no /usr/bin/chromium" >&2; return 1; }
}
for tier in "${tiers[@]}"; do
  start=$SECONDS
  case "$tier" in
    mcp-npm) scripts/install-mcp-servers.sh > /dev/null ;;
    mcp-pypi) scripts/install-mcp-servers.sh --python > /dev/null ;;
    bfcl) scripts/install-venv.sh bfcl > /dev/null ;;
    anthropic-sdk) scripts/install-anthropic-sdk.sh > /dev/null ;;
    openai-sdk) scripts/install-venv.sh openai-sdk > /dev/null ;;
    gemini-sdk) scripts/install-venv.sh gemini-sdk > /dev/null ;;
    packaging) scripts/install-venv.sh packaging > /dev/null ;;
    inspect) scripts/install-venv.sh inspect > /dev/null ;;
    chromium) chromium ;;
    *) echo "install-test-deps: unknown tier \`$tier\`; the tiers are mcp-npm, mcp-pypi, bfcl, anthropic-sdk, openai-sdk, gemini-sdk, packaging, inspect, chromium" >&2; exit 2 ;;
  esac
  echo "install-test-deps: $tier ready ($((SECONDS - start)) s)" >&2
done
