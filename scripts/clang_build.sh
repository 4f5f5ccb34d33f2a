# Sourced by scripts/fuzz and scripts/sanitize: configures a runtime-only clang build folder once
# (a later run reuses it, and ninja reconfigures it when a CMakeLists.txt changes).
#   configure_clang_build DIR CMAKE_OPTION...      e.g. -DORTC_SANITIZE=thread
#   configure_fuzz_build DIR                       ASan + UBSan + libFuzzer (scripts/fuzz)
configure_clang_build() {
  local dir=$1
  shift
  [ -f "$dir/build.ninja" ] && return 0
  echo "== configuring $dir (clang, runtime only, $*)"
  mkdir -p "$dir"
  # -O1 with line tables only (and NDEBUG, as the release build): what the sanitizers'
  # documentation recommends (reports keep their file:line stacks), and it compiles faster than
  # -O2 -g on CI's two cores, where these builds are a large part of the test run.
  cmake -S "$(dirname "${BASH_SOURCE[0]}")/.." -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DORTC_BUILD_COMPILER=OFF "$@" \
    > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; return 1; }
}

configure_fuzz_build() {
  configure_clang_build "$1" -DORTC_BUILD_FUZZERS=ON
}
