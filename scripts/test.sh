#!/usr/bin/env bash
# The whole test suite on a fresh machine: install what the test tiers need
# (scripts/install-test-deps.sh; tests/common/tiers.rs lists the tiers), then every test. Arguments
# go to `cargo test --locked`. `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
exec cargo test --locked "$@"
