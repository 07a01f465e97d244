#!/usr/bin/env bash
# Installs the reference MCP servers toolpick's live tests and suites run against, pinned, into a cache
# folder (default: target/mcp-servers; or $TOOLPICK_MCP_SERVERS), and prints that folder.
#
#   scripts/install-mcp-servers.sh            install if missing, print the folder
#   scripts/install-mcp-servers.sh --python   the PyPI servers too (a venv in <folder>/venv)
#   scripts/install-mcp-servers.sh --check [--python]
#                                             install nothing: print the folder when installed, else
#                                             say what is missing and exit 1 (what the tests ask)
#
# scripts/install-test-deps.sh runs this for the test tiers that need it (tests/common/tiers.rs).
#
# Pinned: npm @modelcontextprotocol/server-{everything,filesystem,memory,sequential-thinking}@2026.8.31
# and, with --python, PyPI mcp-server-time and mcp-server-git==2026.10.19 plus the Python MCP SDK
# mcp==2.3.0 (for examples/mcp_agent.py) into <folder>/venv (their
# commands are <folder>/venv/bin/mcp-server-time and …-git). See ../shared/notes/mcp-live.md for what
# each lists and how it behaves. Needs node and npm (python3 with venv for --python), and the
# registries once; after that everything runs offline. Never `npx -y` at run time: it resolves
# "latest" then, which is neither reproducible nor offline.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${TOOLPICK_MCP_SERVERS:-$PWD/target/mcp-servers}
version=2026.8.31
stamp="$dest/.installed-$version"
python= check=
for arg in "$@"; do
  case "$arg" in
    --python) python=--python ;;
    --check) check=1 ;;
    *) echo "install-mcp-servers: unknown argument \`$arg\`; use --python and/or --check" >&2; exit 2 ;;
  esac
done
pypi_version=2026.10.19
pypi_stamp="$dest/.installed-pypi-$pypi_version-mcp-2.3.0"
if [[ -f "$stamp" && ( "$python" != "--python" || -f "$pypi_stamp" ) ]]; then echo "$dest"; exit 0; fi
if [[ -n "$check" ]]; then
  [[ -f "$stamp" ]] || echo "install-mcp-servers: the npm servers @$version are not installed in $dest" >&2
  [[ "$python" != "--python" || -f "$pypi_stamp" ]] || echo "install-mcp-servers: the PyPI servers ($pypi_version) and mcp 2.3.0 are not installed in $dest/venv" >&2
  exit 1
fi
command -v npm > /dev/null || { echo "install-mcp-servers: npm not found; install Node.js 20+ and npm" >&2; exit 1; }
mkdir -p "$dest"
# One installer at a time (test binaries may ask together).
exec 9> "$dest/.lock"
flock 9
if [[ ! -f "$stamp" ]]; then
  npm install --prefix "$dest" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-everything@$version" \
    "@modelcontextprotocol/server-filesystem@$version" \
    "@modelcontextprotocol/server-memory@$version" \
    "@modelcontextprotocol/server-sequential-thinking@$version" >&2
  touch "$stamp"
fi
if [[ "$python" == "--python" && ! -f "$pypi_stamp" ]]; then
  command -v python3 > /dev/null || { echo "install-mcp-servers: python3 not found" >&2; exit 1; }
  python3 -m venv "$dest/venv" >&2
  "$dest/venv/bin/pip" install --quiet --disable-pip-version-check \
    "mcp-server-time==$pypi_version" "mcp-server-git==$pypi_version" "mcp==2.3.0" >&2
  touch "$pypi_stamp"
fi
echo "$dest"
