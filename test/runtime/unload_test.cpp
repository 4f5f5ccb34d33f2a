// A C++ application that dlopens libortc_runtime.so, runs a model, releases everything and
// dlcloses the library, then goes on living. With OMP_WAIT_POLICY=ACTIVE the OpenMP workers of
// the run (libgomp, under oneDNN) keep spinning; were libgomp unmapped with the runtime, they
// would crash the process at once. That happened inside ONNX Runtime, which dlcloses the plugin
// EP; the libraries are now linked -z nodelete.
//
// Two things would hide the bug, so the test avoids them:
//  - glibc pins a dlopened library that is the first to define one of the standard library's
//    STB_GNU_UNIQUE objects (make_shared's tag, to_chars' digit tables); libdnnl defines three.
//    This program defines them first and exports them (ENABLE_EXPORTS), as a C++ application
//    like ONNX Runtime does, so libdnnl is not pinned by accident.
//  - a thread_local with a destructor (the runtime's oneDNN stream, used by convolutions) keeps
//    its library loaded while its thread lives; the model to use is an MLP (make_mlp_model.py)
//    whose Gemms need none.
//
//   unload_test LIBORTC_RUNTIME MODEL_CTX   (every input float32, zeros; dynamic dims 1)
// Exit 0 when the process outlived the unload, 1 with a message otherwise.
#include <dlfcn.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ortc/ortc_c.h"

namespace {

void* Symbol(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (!f) {
    std::fprintf(stderr, "missing symbol %s\n", name);
    std::exit(1);
  }
  return f;
}

template <typename Fn>
Fn Get(void* lib, const char* name) {
  return reinterpret_cast<Fn>(Symbol(lib, name));
}

// Decimal text through std::to_chars (one of the unique objects above, for both widths).
template <typename T>
std::string Decimal(T value) {
  char text[32];
  auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: unload_test LIBORTC_RUNTIME MODEL_CTX\n");
    return 1;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto message = Get<const char* (*)(const OrtcStatus*)>(lib, "ortc_status_message");
  OrtcSession* session = nullptr;
  if (OrtcStatus* s = Get<OrtcStatus* (*)(const char*, OrtcSession**)>(lib, "ortc_session_create")(
          argv[2], &session)) {
    std::fprintf(stderr, "create: %s\n", message(s));
    return 1;
  }
  using Count = size_t (*)(const OrtcSession*);
  size_t n_in = Get<Count>(lib, "ortc_session_input_count")(session);
  size_t n_out = Get<Count>(lib, "ortc_session_output_count")(session);
  auto shared_inputs = std::make_shared<std::vector<std::vector<float>>>(n_in);
  std::vector<std::vector<int64_t>> shapes(n_in);
  std::vector<const char*> names(n_in);
  std::vector<OrtcTensorView> views(n_in);
  uint64_t elements_total = 0;
  for (size_t i = 0; i < n_in; ++i) {
    names[i] = Get<const char* (*)(const OrtcSession*, size_t)>(lib, "ortc_session_input_name")(
        session, i);
    if (Get<int32_t (*)(const OrtcSession*, size_t)>(lib, "ortc_session_input_dtype")(session, i) !=
        1) {
      std::fprintf(stderr, "input %s is not float32\n", names[i]);
      return 1;
    }
    size_t rank =
        Get<size_t (*)(const OrtcSession*, size_t)>(lib, "ortc_session_input_rank")(session, i);
    const int64_t* dims = Get<const int64_t* (*)(const OrtcSession*, size_t)>(
        lib, "ortc_session_input_shape")(session, i);
    size_t elements = 1;
    for (size_t k = 0; k < rank; ++k) {
      shapes[i].push_back(dims[k] < 1 ? 1 : dims[k]);
      elements *= static_cast<size_t>(shapes[i].back());
    }
    (*shared_inputs)[i].assign(elements, 0.0f);
    elements_total += elements;
    views[i] = {1, shapes[i].data(), rank, (*shared_inputs)[i].data()};
  }
  std::vector<OrtcTensor*> outputs(n_out);
  if (OrtcStatus* s = Get<OrtcStatus* (*)(const OrtcSession*, const char* const*,
                                          const OrtcTensorView*, size_t, OrtcTensor**)>(
          lib, "ortc_session_run")(session, names.data(), views.data(), n_in, outputs.data())) {
    std::fprintf(stderr, "run: %s\n", message(s));
    return 1;
  }
  for (OrtcTensor* t : outputs) Get<void (*)(OrtcTensor*)>(lib, "ortc_tensor_release")(t);
  Get<void (*)(OrtcSession*)>(lib, "ortc_session_release")(session);
  if (dlclose(lib) != 0) {
    std::fprintf(stderr, "dlclose: %s\n", dlerror());
    return 1;
  }
  // Long enough for a worker spinning in unmapped code to fault.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::printf("ran %s input elements into %s outputs, unloaded the runtime, still alive\n",
              Decimal(elements_total).c_str(), Decimal(static_cast<unsigned>(n_out)).c_str());
  return 0;
}
