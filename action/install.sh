#!/usr/bin/env bash
# The GitHub Action's install step (action.yml), also run by tests/packaging.rs: installs a pinned
# toolpick into its own venv and puts it on PATH. TOOLPICK_VERSION (a PyPI version, required unless
# TOOLPICK_WHEEL is given) or TOOLPICK_WHEEL (a wheel file, e.g. one built in the same workflow).
# Writes the venv's bin directory to $GITHUB_PATH when set, else prints it.
set -euo pipefail
venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/toolpick-venv"
index=()
if [ -n "${TOOLPICK_WHEEL:-}" ]; then
  # The wheel has no dependencies: nothing to fetch.
  spec="$TOOLPICK_WHEEL"
  index=(--no-index)
elif [ -n "${TOOLPICK_VERSION:-}" ]; then
  spec="toolpick==${TOOLPICK_VERSION}"
else
  echo "toolpick action: give the input \`version\` (a released version, e.g. 0.1.0) or \`wheel\`" >&2
  exit 2
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${index[@]}" "$spec"
"$venv/bin/toolpick" --version >&2
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$venv/bin" >> "$GITHUB_PATH"
else
  echo "$venv/bin"
fi
