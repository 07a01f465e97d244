#!/usr/bin/env bash
# Runs the bundled live suite (datasets/live) against the real reference MCP servers: installs them
# (pinned, once), imports each as a catalog into target/live/<server>, then runs its dataset with
# --execute live (a fresh sandbox and server per trial).
#
#   scripts/live-suite.sh                         oracle + lexical, all four layouts, good + bad
#   scripts/live-suite.sh --backends openai --model m --base-url http://127.0.0.1:8080/v1
#
# Extra arguments go to every `toolpick run`. TOOLPICK names the binary (default: target/release/toolpick,
# else target/debug/toolpick, else toolpick on PATH). Runs go to reports/live-<server>.
set -euo pipefail
cd "$(dirname "$0")/.."
export TOOLPICK_MCP_SERVERS="${TOOLPICK_MCP_SERVERS:-$(bash scripts/install-mcp-servers.sh)}"
tp=${TOOLPICK:-}
if [[ -z "$tp" ]]; then
  for candidate in target/release/toolpick target/debug/toolpick; do
    [[ -x "$candidate" ]] && { tp=$candidate; break; }
  done
fi
tp=${tp:-toolpick}
entry() { echo "{servers}/node_modules/@modelcontextprotocol/server-$1/dist/index.js"; }
"$tp" mcp import --out target/live/files --name files -- node "$(entry filesystem)" '{sandbox}'
"$tp" mcp import --out target/live/memory --name memory --env 'MEMORY_FILE_PATH={sandbox}/memory.jsonl' -- node "$(entry memory)"
"$tp" mcp import --out target/live/everything --name everything --capabilities sampling,elicitation -- node "$(entry everything)"
common=(--execute live --layouts flat,progressive,progressive-oss,search --variants good,bad)
"$tp" run --catalog target/live/files --dataset datasets/live/filesystem.jsonl --allow-destructive --run-id live-filesystem "${common[@]}" "$@"
"$tp" run --catalog target/live/memory --dataset datasets/live/memory.jsonl --allow-destructive --run-id live-memory "${common[@]}" "$@"
# server-everything's sampling and URL-elicitation tools say they are open-world: allowed by name
# (the server runs without network where the platform allows it).
"$tp" run --catalog target/live/everything --dataset datasets/live/everything.jsonl \
  --live-allow trigger-sampling-request,trigger-url-elicitation --run-id live-everything "${common[@]}" "$@"
