#!/usr/bin/env bash
# Installs Anthropic's official Python SDK, pinned, into an isolated venv (default
# target/anthropic-sdk-venv; $TOOLPICK_ANTHROPIC_SDK_VENV to move it), and prints the venv's folder:
# scripts/install-venv.sh's `anthropic-sdk` tier, where the pin is.
#
#   scripts/install-anthropic-sdk.sh           install if missing, print the folder
#   scripts/install-anthropic-sdk.sh --check   install nothing: print the folder when installed, else
#                                              say what is missing and exit 1 (what the tests ask)
exec "$(dirname "$0")/install-venv.sh" anthropic-sdk "$@"
