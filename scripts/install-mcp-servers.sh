#!/usr/bin/env bash
# Installs the reference MCP servers toolpick's live tests and suites run against, pinned, into a cache
# folder (default: target/mcp-servers; or $TOOLPICK_MCP_SERVERS), and prints that folder.
#
#   scripts/install-mcp-servers.sh            install if missing, print the folder
#
# Pinned: npm @modelcontextprotocol/server-{everything,filesystem,memory,sequential-thinking}@2026.8.31
# (see ../shared/notes/mcp-live.md for what each lists and how it behaves). Needs node and npm, and the
# npm registry once; after that everything runs offline. Never `npx -y` at run time: it resolves
# "latest" then, which is neither reproducible nor offline.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${TOOLPICK_MCP_SERVERS:-$PWD/target/mcp-servers}
version=2026.8.31
stamp="$dest/.installed-$version"
if [[ -f "$stamp" ]]; then echo "$dest"; exit 0; fi
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
echo "$dest"
