#!/usr/bin/env python3
"""`ortc inspect` and `ortc run` on context binaries whose manifest was damaged and whose
manifest checksum was then recomputed (a buggy producer, or an altered file): every run must end
with exit 0 or a clear error (3 INVALID_GRAPH, 4 refused by the version gate), never a signal, an abort or a hang.

Deterministic: runs of 2, 16 and 71 zero bytes at every 4-byte position of the manifest of a
compiled tiny CNN, then random bytes at the same places from a fixed seed. An inspect that read
a backend_versions entry without a key crashed here with SIGSEGV before the reader checked it.
Usage: manifest_mutations.py ORTC WORKDIR
"""
import ctypes
import os
import random
import shutil
import struct
import subprocess
import sys

ortc, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
subprocess.run(["/usr/bin/python3", f"{here}/../../examples/make_tiny_cnn.py", f"{work}/tiny.onnx"],
               check=True, stdout=subprocess.DEVNULL)
subprocess.run([ortc, "compile", f"{work}/tiny.onnx", "-o", f"{work}/good/", "-q"], check=True)

xxhash = ctypes.CDLL("libxxhash.so.0")
xxhash.XXH3_64bits.restype = ctypes.c_uint64
xxhash.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]

good = open(f"{work}/good/tiny_cpu.bin", "rb").read()
# FixedHeader (schemas/context_binary_format.h): manifest_offset and manifest_size at 24,
# manifest_checksum at 48.
manifest_offset, manifest_size = struct.unpack_from("<QQ", good, 24)
os.makedirs(f"{work}/bad")
shutil.copy(f"{work}/good/tiny_ctx.onnx", f"{work}/bad/tiny_ctx.onnx")

rng = random.Random(7)
runs, failures = 0, []
for mode in ("zero", "random"):
    for length in (2, 16, 71):
        for at in range(0, manifest_size, 4 if mode == "zero" else 8):
            data = bytearray(good)
            end = min(manifest_offset + at + length, manifest_offset + manifest_size)
            for i in range(manifest_offset + at, end):
                data[i] = 0 if mode == "zero" else rng.randrange(256)
            manifest = bytes(data[manifest_offset:manifest_offset + manifest_size])
            struct.pack_into("<Q", data, 48, xxhash.XXH3_64bits(manifest, manifest_size))
            open(f"{work}/bad/tiny_cpu.bin", "wb").write(data)
            # Every 8th damage also loads and runs (slower); inspect reads every field.
            commands = [["inspect", f"{work}/bad/tiny_cpu.bin", "--json"]]
            if at % 32 == 0:
                commands.append(["run", f"{work}/bad/tiny_ctx.onnx"])
            for args in commands:
                runs += 1
                r = subprocess.run(["timeout", "30", ortc] + args, capture_output=True)
                # 3: INVALID_GRAPH; 4: the version gate refuses (a damaged ISA or version).
                if r.returncode not in (0, 3, 4):
                    failures.append(f"{args[0]}: {mode} {length} bytes at manifest+{at}: "
                                    f"exit {r.returncode} {r.stderr[-200:]!r}")
                    shutil.copy(f"{work}/bad/tiny_cpu.bin", f"{work}/failure_{len(failures)}.bin")

print(f"{runs} runs on damaged manifests ({manifest_size} bytes), {len(failures)} failures")
for f in failures[:20]:
    print("  " + f)
sys.exit(1 if failures or runs < 1000 else 0)
