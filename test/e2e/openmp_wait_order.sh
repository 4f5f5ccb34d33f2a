#!/usr/bin/env bash
# ortc's OpenMP spin count reaches libgomp: in both executables the library that sets it
# (libortc_openmp_wait) is initialized after the C library and before libgomp, which reads
# GOMP_SPINCOUNT once when it starts; `run --json` reports the setting, and a user's own
# OMP_WAIT_POLICY or GOMP_SPINCOUNT is kept.
# usage: openmp_wait_order.sh ORTC ORTC_RUN WORK_DIR
set -euo pipefail
ortc=$1 ortc_run=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$(dirname "$0")/../../examples/make_tiny_cnn.py" "$work/tiny.onnx" > /dev/null
"$ortc" compile "$work/tiny.onnx" --input-shape image=1x3x32x32 -q -o "$work/out/"
fail() { echo "FAIL: $*" >&2; exit 1; }
waiting() {  # binary [VAR=value]: the openmp_waiting field of run --json
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT ${2:-} "$1" run "$work/out/tiny_ctx.onnx" --json |
    /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["openmp_waiting"])'
}
for bin in "$ortc" "$ortc_run"; do
  name=$(basename "$bin")
  # The loader's trace of initializers: the setter must come before libgomp.
  order=$(env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT LD_DEBUG=files "$bin" --version 2>&1 |
    sed -n 's/.*calling init: //p' | grep -n -E 'libgomp|libortc_openmp_wait' || true)
  echo "$name initializers: $(echo $order)"
  setter=$(echo "$order" | grep libortc_openmp_wait | cut -d: -f1)
  gomp=$(echo "$order" | grep libgomp | cut -d: -f1)
  [ -n "$setter" ] && [ -n "$gomp" ] || fail "$name: libortc_openmp_wait or libgomp not initialized"
  [ "$setter" -lt "$gomp" ] || fail "$name: libgomp starts before libortc_openmp_wait sets its spin count"
  got=$(waiting "$bin")
  [ "$got" = "GOMP_SPINCOUNT=1000 (ortc's default)" ] || fail "$name default: $got"
  got=$(waiting "$bin" GOMP_SPINCOUNT=5)
  [ "$got" = "GOMP_SPINCOUNT=5 (environment)" ] || fail "$name with GOMP_SPINCOUNT=5: $got"
  got=$(waiting "$bin" OMP_WAIT_POLICY=passive)
  [ "$got" = "OMP_WAIT_POLICY=passive (environment)" ] || fail "$name with OMP_WAIT_POLICY: $got"
  echo "$name: spin count set before libgomp starts; the user's setting kept"
done
echo PASS
