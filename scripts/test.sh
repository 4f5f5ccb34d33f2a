#!/usr/bin/env bash
# Sets up, builds and runs every test suite (ctest, in parallel). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${ORTC_BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)" "$@"
