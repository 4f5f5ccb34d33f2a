#!/usr/bin/env bash
# The example device descriptions (examples/devices/) against a CUDA build of the example CNN:
# `ortc check --device` gives each machine's verdict without that machine.
# Usage: example_devices.sh ORTC_BINARY WORK_DIR
set -euo pipefail
ortc=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$root/examples/make_tiny_cnn.py" "$work/tiny_cnn.onnx" > /dev/null
"$ortc" compile "$work/tiny_cnn.onnx" --ep cuda,cpu --input-shape image=1x3x32x32 -q
ctx="$work/tiny_cnn_ctx.onnx"
devices="$root/examples/devices"

# expect DEVICE EXIT_CODE TEXT: the check exits with EXIT_CODE and prints TEXT.
expect() {
  local out code=0
  out=$("$ortc" check "$ctx" --device "$devices/$1" 2>&1) || code=$?
  if [ "$code" -ne "$2" ] || ! grep -qF -- "$3" <<< "$out"; then
    echo "FAIL $1: exit $code (want $2), output:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "ok $1: $3"
}
expect a100.json 0 "cuda ($work/tiny_cnn_cuda.bin): optimal"
expect rtx4090_old_driver.json 4 "needs CUDA driver 13.0 (13000) or newer; this machine has 12.4 (12040): update the driver"
expect rtx5090.json 0 "prefer recompilation: JIT from PTX compute_90 on this sm_120 GPU; recompile with --target-arch sm_120"
