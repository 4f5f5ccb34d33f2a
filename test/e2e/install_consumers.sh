#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the consumer examples (examples/consumer: C99
# and C++17) built against the installed package twice, with find_package(ortc) and with
# pkg-config, each run on a bundle compiled by the installed ortc. Also checks the installed
# library exports only the API and needs none of the compiler's libraries.
# Usage: install_consumers.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1
work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
lib=$(ls "$prefix"/lib/libortc_runtime.so.*.*.*)
# A versioned soname, and no compile-side library behind it.
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[ "$soname" = "libortc_runtime.so.0" ] || { echo "FAIL: soname $soname" >&2; exit 1; }
if ldd "$lib" | grep -E "libonnx\.so|spdlog|libfmt|nvrtc"; then
  echo "FAIL: libortc_runtime needs a compile-side library" >&2
  exit 1
fi
# Only the C API and ortc:: API symbols are exported.
leaked=$(nm -DC --defined-only "$lib" | awk '{ $1=""; $2=""; print }' | grep -v -E '^ *(ortc_|ortc::)' || true)
[ -z "$leaked" ] || { echo "FAIL: exported beyond the API:" >&2; echo "$leaked" | head >&2; exit 1; }

/usr/bin/python3 "$src/examples/make_tiny_cnn.py" "$work/tiny_cnn.onnx" > /dev/null
"$prefix/bin/ortc" compile "$work/tiny_cnn.onnx" -o "$work/bundle/" -q
ctx=$work/bundle/tiny_cnn_ctx.onnx

check_output() {  # program output: tiny CNN's two outputs, probs [1,10] and label [1]
  grep -q "^probs: \[1,10\]" <<< "$1" && grep -q "^label: \[1\]" <<< "$1" ||
    { echo "FAIL: unexpected output: $1" >&2; exit 1; }
}

# find_package(ortc)
cmake -S "$src/examples/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/cmake-build" > "$work/build.log"
check_output "$(LD_LIBRARY_PATH="$prefix/lib" "$work/cmake-build/run_c" "$ctx")"
check_output "$(LD_LIBRARY_PATH="$prefix/lib" "$work/cmake-build/run_cpp" "$ctx")"
echo "find_package(ortc): run_c (C99) and run_cpp (C++17) ran the bundle"

# pkg-config
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc -std=c99 -Wall -Werror -o "$work/run_c_pc" "$src/examples/consumer/run_c.c" \
  $(pkg-config --cflags --libs ortc)
c++ -std=c++17 -Wall -Werror -o "$work/run_cpp_pc" "$src/examples/consumer/run_cpp.cpp" \
  $(pkg-config --cflags --libs ortc)
check_output "$(LD_LIBRARY_PATH="$prefix/lib" "$work/run_c_pc" "$ctx")"
check_output "$(LD_LIBRARY_PATH="$prefix/lib" "$work/run_cpp_pc" "$ctx")"
echo "pkg-config ortc: the same programs built with cc -std=c99 and c++ -std=c++17 ran it"
