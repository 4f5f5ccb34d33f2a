#!/usr/bin/env bash
# Sets up, builds and runs every test suite (ctest, in parallel). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir=${ORTC_BUILD_DIR:-build}
status=0
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" "$@" || status=$?
# A skipped test is not a pass: list each one with the reason it printed.
log="$build_dir/Testing/Temporary/LastTest.log"
if [ -f "$log" ] && grep -q "SKIP" "$log"; then
  echo "Skip reasons:"
  grep -h "SKIP" "$log" | sort -u | sed 's/^/  /'
fi
exit "$status"
