#!/usr/bin/env bash
# Sets up, builds and runs every test suite (ctest, in parallel). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir=${ORTC_BUILD_DIR:-build}
status=0
out="$build_dir/Testing/ctest-output.txt"
mkdir -p "$(dirname "$out")"
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" "$@" 2>&1 | tee "$out" ||
  status=$?
# A skipped test is not a pass: count them, and list each with the reason it printed.
skipped=$(grep -c '(Skipped)$' "$out" || true)
passed=$(sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests failed out of \([0-9]*\)$/\2 \1/p' "$out")
if [ -n "$passed" ]; then
  read -r total failed <<< "$passed"
  echo "Tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped (of $total)"
fi
if [ "$skipped" -gt 0 ]; then
  echo "Skipped:"
  grep '(Skipped)$' "$out" | sed 's/^/  /'
  log="$build_dir/Testing/Temporary/LastTest.log"
  [ -f "$log" ] && grep -h "SKIP:" "$log" | sort -u | sed 's/^/  reason: /'
fi
exit "$status"
