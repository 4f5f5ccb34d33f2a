#!/bin/sh
# The plugin must export exactly the two ABI symbols (nm -D --defined-only).
set -eu
lib="$1"
symbols=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtDdBbWwVvRri]$/ {print $3}' | sort | tr '\n' ' ')
expected="ortc_backend_create ortc_backend_release "
echo "exported: $symbols"
if [ "$symbols" != "$expected" ]; then
  echo "FAIL: $lib must export exactly: $expected" >&2
  exit 1
fi
echo "OK: exactly the two ABI symbols"
