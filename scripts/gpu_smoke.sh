#!/usr/bin/env bash
# GPU smoke test, for whoever has an NVIDIA GPU (CI machines have none): builds ortc and the CUDA
# backend library, runs the CUDA runtime tests (including the kernel run that skips elsewhere),
# then compiles with --ep cuda,cpu and compares against --ep cpu / ONNX Runtime:
#   1. the examples (random inputs, same seed, CUDA+CPU vs CPU only);
#   2. ONNX's node conformance cases (expected outputs from the test data);
#   3. the real-model reference suite (test/e2e/reference_real_models.sh, against ONNX Runtime).
# Without a CUDA device it exits 77 and says why. Usage: scripts/gpu_smoke.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${ORTC_BUILD_DIR:-$root/build}}
python=/usr/bin/python3

# 1. A device: the driver library and at least one GPU.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "SKIP: no CUDA device: no CUDA driver found (libcuda.so.1 is not known to the dynamic loader)"
  exit 77
fi
if command -v nvidia-smi >/dev/null && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIP: no CUDA device: nvidia-smi lists no GPU"
  exit 77
fi

# 2. Build.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" ortc ortc_backend_cuda ortc_cuda_runtime_tests ortc_cuda_gpu_run_test
ortc="$build/tools/ortc"
export ORTC_BACKEND_PATH="$build/tools"

# 3. The plugin's own tests; the kernel run must pass here, not skip.
ctest --test-dir "$build" -R '^cuda_runtime\.' --output-on-failure
"$build/test/backends/cuda/runtime/ortc_cuda_gpu_run_test"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# `ortc` with --ep cuda,cpu added to every compile, for suites that call `ortc compile` plainly.
wrapper="$work/ortc_cuda"
cat >"$wrapper" <<WRAP
#!/bin/sh
if [ "\$1" = compile ]; then shift; exec "$ortc" compile --ep cuda,cpu "\$@"; fi
exec "$ortc" "\$@"
WRAP
chmod +x "$wrapper"

# 4. Examples: CUDA+CPU against CPU only, same random inputs.
for gen in "$root"/examples/make_*.py; do
  name=$(basename "$gen" .py)
  name=${name#make_}
  dir="$work/examples/$name"
  mkdir -p "$dir/cuda" "$dir/cpu"
  "$python" "$gen" "$dir/$name.onnx" >/dev/null
  for onnx in "$dir"/*.onnx; do
    stem=$(basename "$onnx" .onnx)
    "$ortc" compile "$onnx" --ep cuda,cpu -o "$dir/cuda/" -q
    "$ortc" compile "$onnx" --ep cpu -o "$dir/cpu/" -q
    "$ortc" run "$dir/cuda/${stem}_ctx.onnx" --seed 7 --output-dir "$dir/cuda/out_$stem" >/dev/null
    "$ortc" run "$dir/cpu/${stem}_ctx.onnx" --seed 7 --output-dir "$dir/cpu/out_$stem" >/dev/null
    if ! "$python" "$root/test/e2e/compare_outputs.py" "$name/$stem" "$dir/cpu/out_$stem" \
      "$dir/cuda/out_$stem" 1e-3 1e-3; then
      failures=$((failures + 1))
    fi
  done
done

# 5. ONNX node conformance through --ep cuda,cpu (cases the CPU suite lists as expected
# failures are skipped; a CUDA-specific failure is reported with its case name).
data=""
for d in /usr/include/onnx/backend/test/data /usr/share/onnx/backend/test/data; do
  [ -d "$d/node" ] && data="$d" && break
done
if [ -n "$data" ]; then
  if ! "$python" - "$wrapper" "$data/node" "$root/test/conformance/expected_failures.txt" \
    "$work/conformance" <<'PY'; then
import os, subprocess, sys
import numpy as np
import onnx
from onnx import numpy_helper
ortc, node_root, expected_file, work = sys.argv[1:]
expected = {l.split()[0] for l in open(expected_file) if l.strip() and not l.startswith("#")}
failed, passed = [], 0
for case in sorted(os.listdir(node_root)):
    cdir = os.path.join(node_root, case)
    data_dir = os.path.join(cdir, "test_data_set_0")
    if case in expected or not os.path.isdir(data_dir):
        continue
    model = onnx.load(os.path.join(cdir, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    out = os.path.join(work, case)
    os.makedirs(out, exist_ok=True)
    args = [ortc, "run", None, "--output-dir", os.path.join(out, "got")]
    for k, n in enumerate(names):
        args += ["--input", f"{n}={os.path.join(data_dir, f'input_{k}.pb')}"]
    if subprocess.run([ortc, "compile", os.path.join(cdir, "model.onnx"), "-o", out + "/", "-q"]).returncode:
        failed.append(case + ": compile failed"); continue
    args[2] = os.path.join(out, "model_ctx.onnx")
    if subprocess.run(args, stdout=subprocess.DEVNULL).returncode:
        failed.append(case + ": run failed"); continue
    ok = True
    for k, o in enumerate(model.graph.output):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(data_dir, f"output_{k}.pb"), "rb").read())
        want = numpy_helper.to_array(t)
        got = np.load(os.path.join(out, "got", o.name + ".npy"), allow_pickle=True)
        if got.shape != want.shape or (want.dtype.kind in "fc" and not np.allclose(got, want, rtol=1e-3, atol=1e-5)) or (want.dtype.kind not in "fc" and not np.array_equal(got, want)):
            ok = False
    if ok: passed += 1
    else: failed.append(case + ": outputs differ")
print(f"conformance (--ep cuda,cpu): {passed} passed, {len(failed)} failed")
for f in failed: print("  " + f)
sys.exit(1 if failed else 0)
PY
    failures=$((failures + 1))
  fi
else
  echo "conformance: ONNX test data not installed (libonnx-testdata); not run"
fi

# 6. Real models against ONNX Runtime, every compile through --ep cuda,cpu.
set +e
"$root/test/e2e/reference_real_models.sh" "$wrapper" "$build/test-models" "$work/reference"
rc=$?
set -e
if [ $rc -eq 77 ]; then
  echo "reference suite skipped (see its message above)"
elif [ $rc -ne 0 ]; then
  failures=$((failures + 1))
fi

if [ $failures -ne 0 ]; then
  echo "gpu_smoke: $failures part(s) failed"
  exit 1
fi
echo "gpu_smoke: all parts passed"
