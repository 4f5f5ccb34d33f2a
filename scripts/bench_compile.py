"""Compile benchmark: is `ortc compile` disk-bound, and does it stream weights?

Generates a model with GIB GiB of float32 weights in external data (distinct random tensors, so
nothing deduplicates), then measures in the same run on the same disk:
  - compile time vs. the time to copy the same bytes with fsync (goal <= 1.5x),
  - peak RSS of the compile vs. the weight bytes (goal <= 0.5x).
Prints the ratios and writes them as JSON. A benchmark, not a test: it asserts nothing.
Usage: python3 scripts/bench_compile.py [--gib 1] [--work DIR] [--ortc build/tools/ortc]
"""
import argparse
import json
import os
import shutil
import subprocess
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

CHUNK = 4 << 20


def make_model(folder, gib):
    side = 4096  # each weight is 4096 x 4096 float32 = 64 MiB
    count = max(1, int(gib * 1024 / 64))
    data_path = os.path.join(folder, "big.data")
    rng = np.random.default_rng(1)
    inits = []
    with open(data_path, "wb") as f:
        for i in range(count):
            w = rng.standard_normal((side, side), dtype=np.float32)
            offset = f.tell()
            f.write(w.tobytes())
            t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[side, side])
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "big.data"), ("offset", str(offset)), ("length", str(w.nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)
    nodes, prev = [], "x"
    for i in range(count):
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"], name=f"mm{i}"))
        prev = f"h{i}"
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, side])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(folder, "big.onnx"))
    return os.path.getsize(data_path)


def copy_with_fsync(src, dst):
    start = time.perf_counter()
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        while True:
            buf = fin.read(CHUNK)
            if not buf:
                break
            fout.write(buf)
        fout.flush()
        os.fsync(fout.fileno())
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--work", default="build/bench-compile")
    ap.add_argument("--ortc", default="build/tools/ortc")
    ap.add_argument("--json", default="build/bench-compile.json")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    weight_bytes = make_model(args.work, args.gib)

    # Warm both the same way: the source data is in the page cache for both measurements.
    copy_s = copy_with_fsync(os.path.join(args.work, "big.data"), os.path.join(args.work, "copy.data"))
    os.remove(os.path.join(args.work, "copy.data"))

    out = os.path.join(args.work, "out")
    os.makedirs(out)
    # GNU time reports the compile's own peak RSS (a fork of this process would also count the
    # generator's memory, so getrusage of children is not used).
    rss_file = os.path.join(args.work, "rss.txt")
    start = time.perf_counter()
    report = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, args.ortc, "compile",
                             os.path.join(args.work, "big.onnx"), "-o", out + "/", "--json"],
                            check=True, capture_output=True, text=True).stdout
    compile_s = time.perf_counter() - start
    peak_rss = int(open(rss_file).read().split()[-1]) * 1024  # KiB -> bytes
    bin_bytes = os.path.getsize(os.path.join(out, "big_cpu.bin"))

    result = {
        "weight_bytes": weight_bytes,
        "bin_bytes": bin_bytes,
        "copy_with_fsync_s": round(copy_s, 3),
        "compile_s": round(compile_s, 3),
        "compile_vs_copy": round(compile_s / copy_s, 3),
        "peak_rss_bytes": peak_rss,
        "peak_rss_vs_weights": round(peak_rss / weight_bytes, 4),
        "ortc_report_phases_ms": json.loads(report)["phases_ms"],
    }
    print(f"weights {weight_bytes / 2**30:.2f} GiB; bin {bin_bytes / 2**30:.2f} GiB")
    print(f"copy with fsync {copy_s:.2f} s; ortc compile {compile_s:.2f} s; ratio {result['compile_vs_copy']:.2f}x "
          f"(goal <= 1.5x)")
    print(f"peak RSS {peak_rss / 2**20:.0f} MiB = {result['peak_rss_vs_weights']:.3f}x weights (goal <= 0.5x)")
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
