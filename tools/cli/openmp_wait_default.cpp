// libortc_openmp_wait: bounds how long OpenMP's idle workers spin in the ortc executables.
//
// By default a libgomp worker with nothing to do spins 300,000 times (milliseconds) before it
// sleeps. When other processes keep every core busy, the thread a parallel region waits for may
// share a core with the one spinning for it, and each such wait costs the whole spin:
// MobileNetV2 ran 20x slower with the default threads than with one while two busy loops held
// two cores. A short spin (1,000 pauses, tens of microseconds) still catches the next region
// of a model run back to back, and sleeps soon when the cores are taken.
//
// libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, in its own initializer, so the variable
// must be set before that runs, and after the C library's (which sets up the environment; an
// executable's .preinit_array runs too early). Shared libraries a program needs are initialized
// dependencies first, then in the reverse of the order the program names them: this library is
// named after libgomp by the executables (tools/CMakeLists.txt) and needs nothing but
// the C library, so its initializer runs between the two. e2e.openmp_wait_order checks that
// order. A user's own setting is kept.
#include <stdlib.h>

namespace {

bool g_set_by_ortc = false;

__attribute__((constructor)) void BoundOpenMpSpinning() {
  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
  g_set_by_ortc = setenv("GOMP_SPINCOUNT", "1000", 0) == 0;
}

}  // namespace

// Whether this library set GOMP_SPINCOUNT (the user had set neither variable).
extern "C" __attribute__((visibility("default"))) int ortc_openmp_wait_set_by_ortc() {
  return g_set_by_ortc ? 1 : 0;
}
