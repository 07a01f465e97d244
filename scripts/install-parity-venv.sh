#!/usr/bin/env bash
# Installs BFCL's checker for the parity run (scripts/parity-bfcl.sh), pinned, into an isolated venv
# (default target/parity-venv; $TOOLPICK_PARITY_VENV to move it), and prints the venv's folder:
# scripts/install-venv.sh's `bfcl` tier, where the pin and the reasons for it are.
#
#   scripts/install-parity-venv.sh           install if missing, print the folder
#   scripts/install-parity-venv.sh --check   install nothing: print the folder when installed, else
#                                            say what is missing and exit 1 (what the tests ask)
exec "$(dirname "$0")/install-venv.sh" bfcl "$@"
