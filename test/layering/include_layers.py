#!/usr/bin/env python3
"""The include graph against the layers of ARCHITECTURE.md: which folder may include which.

Every quoted #include of the source folders is resolved to a file the way the build's include
folders resolve it (the including file's own folder first, then the roots below), and both ends
are mapped to their area. An include breaks the rules when it runs from a lower floor to a
higher one, or into another area's private part (runtime/src is the runtime's alone).

The includes that break them today are listed, file by file, in known_exceptions.txt: the work
left to do (issue: one layer per folder). The check fails on an include that breaks the rules
and is not listed (a new arrow up, or into private code), and on a listed one that no longer
exists (so the list only shrinks, and says the truth). --write rewrites the list from the code,
for after a move that removed exceptions.

Usage: include_layers.py REPO_ROOT [--write]
"""
import argparse
import os
import re
import sys

# The areas, lowest floor first. An area may include its own floor and the floors below.
FLOORS = [
    ("base", 0),                # Status, files, hashing, shape bounds and texts: the ground
    ("schemas", 1),             # formats and the plugin ABI
    ("runtime/include", 2),     # the runtime's public API
    ("runtime/kernel_api", 3),  # what the CPU kernels see of the executor
    ("runtime/src", 3),         # the runtime's private code
    ("ir", 4),                  # the IR that the compiler and every backend's compile side share
    ("backends", 5),            # every backend, compile and runtime sides
    ("compiler", 6),            # the driver: partition, compile, emit
    ("tools", 7),               # the commands and what they share
    ("onnxruntime_ep", 8),      # ONNX Runtime's plugin EP, above everything it wraps
    ("examples", 9),            # users of the installed package
]
# Private parts: only the area itself includes them.
PRIVATE = {"runtime/src"}
# Where a quoted include is looked up after the including file's folder, in the build's order.
INCLUDE_ROOTS = ["base/include", "runtime/include", "runtime/kernel_api", "runtime/src", "tools", "ir", "compiler", "backends",
                 "schemas", "onnxruntime_ep"]
SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cc", ".cpp", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
EXCEPTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "known_exceptions.txt")


def area_of(path):
    for area, floor in FLOORS:
        if path == area or path.startswith(area + "/"):
            return area, floor
    return None, None


def resolve(root, including, name):
    for base in [os.path.dirname(including)] + INCLUDE_ROOTS:
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None  # a system header, or one generated into the build folder


def broken_includes(root, folder_edges=None):
    """Sorted 'from -> to (why)' lines, one per include that breaks the rules. Adds each
    include's (top folder, top folder) pair to folder_edges when given."""
    found = set()
    for top in sorted({area.split("/")[0] for area, _ in FLOORS}):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for file in files:
                if not file.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(folder, file), root)
                from_area, from_floor = area_of(path)
                if from_area is None:
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for name in INCLUDE.findall(text):
                    target = resolve(root, path, name)
                    to_area, to_floor = area_of(target) if target else (None, None)
                    if to_area is None or to_area == from_area:
                        continue
                    if folder_edges is not None:
                        folder_edges.add((path.split("/")[0], target.split("/")[0]))
                    if to_area in PRIVATE:
                        found.add(f"{path} -> {target} (private to {to_area})")
                    elif to_floor > from_floor:
                        found.add(f"{path} -> {target} (up: floor {from_floor} to {to_floor})")
    return sorted(found)


def folder_cycle(edges):
    """A cycle among the top folders (as a list of names, first repeated last), or None."""
    graph = {}
    for a, b in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
    state = {}  # 1 while on the current path, 2 when done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [nxt])
                if cycle:
                    return cycle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--write", action="store_true",
                        help="rewrite known_exceptions.txt from the code")
    args = parser.parse_args()
    edges = set()
    broken = broken_includes(os.path.abspath(args.root), edges)
    # Floors rule out most cycles; this catches two top folders that reach into each other at
    # one floor, or through the known exceptions (which may not close a loop either).
    cycle = folder_cycle(edges)
    if cycle:
        print("CYCLE between top folders: " + " -> ".join(cycle))
        return 1
    if args.write:
        with open(EXCEPTIONS, "w", encoding="utf-8") as f:
            f.write("# Includes that break the layers of ARCHITECTURE.md today: the work left.\n"
                    "# Written by include_layers.py --write; the check fails when this list and\n"
                    "# the code differ. Remove lines as moves fix them; never add one by hand.\n")
            f.writelines(line + "\n" for line in broken)
        print(f"{len(broken)} exceptions written to {EXCEPTIONS}")
        return 0
    with open(EXCEPTIONS, encoding="utf-8") as f:
        known = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    new = [line for line in broken if line not in known]
    gone = sorted(known - set(broken))
    for line in new:
        print(f"NEW  {line}")
    for line in gone:
        print(f"GONE {line}  (fixed: remove it from known_exceptions.txt)")
    by_kind = {"up": sum(" (up: " in b for b in broken),
               "private": sum(" (private to " in b for b in broken)}
    print(f"{len(broken)} includes break the layers ({by_kind['up']} up a floor, "
          f"{by_kind['private']} into private code), all known: {not new}; "
          f"{len(gone)} known ones gone")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
