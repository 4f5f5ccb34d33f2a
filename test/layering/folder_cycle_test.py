#!/usr/bin/env python3
"""include_layers.py's cycle finder on graphs with and without a loop among top folders: the
layering check passes on the real tree only if this finder would have caught a loop there."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from include_layers import folder_cycle  # noqa: E402

# The loop the compiler and the backends had before ir/ became its own folder.
assert folder_cycle({("backends", "compiler"), ("compiler", "backends"),
                     ("compiler", "runtime")}) == ["backends", "compiler", "backends"]
# A longer loop, entered from outside it.
assert folder_cycle({("x", "a"), ("a", "b"), ("b", "c"), ("c", "a")}) == ["a", "b", "c", "a"]
# Layers without a loop, a folder's includes of itself ignored.
assert folder_cycle({("compiler", "ir"), ("compiler", "backends"), ("backends", "ir"),
                     ("ir", "runtime"), ("runtime", "runtime"), ("runtime", "base")}) is None
assert folder_cycle(set()) is None
print("folder_cycle: 4 cases pass")
