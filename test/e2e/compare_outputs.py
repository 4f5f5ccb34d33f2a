"""Compares ortc's outputs with ONNX Runtime's, output by output (.npy files of the same names).
Usage: compare_outputs.py LABEL ORT_DIR ORTC_DIR [rtol] [atol]
"""
import os
import sys

import numpy as np


def main(label, ort_dir, ortc_dir, rtol=1e-3, atol=1e-4):
    names = sorted(f for f in os.listdir(ort_dir) if f.endswith(".npy"))
    assert names, "ONNX Runtime wrote no outputs"
    worst = 0.0
    for name in names:
        want = np.load(os.path.join(ort_dir, name))
        got = np.load(os.path.join(ortc_dir, name))
        assert got.shape == want.shape, f"{label} {name}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"{label} {name}: dtype {got.dtype} != {want.dtype}"
        err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else 0.0
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        worst = max(worst, err)
        assert np.allclose(got, want, rtol=rtol, atol=atol), f"{label} {name}: max abs error {err} (output scale {scale})"
        print(f"{label}: {name[:-4]} {list(want.shape)} max abs error {err:.3g} (max |value| {scale:.3g})")
    return worst


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], *[float(a) for a in sys.argv[4:]])
