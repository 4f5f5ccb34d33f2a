// libFuzzer target: the model readers of a session: an ONNX model (the runtime's plain-ONNX
// path) or a ctx model (EPContext nodes, their attributes and paths, the version gate), loaded
// from bytes and run once when small. Binaries of file-mode bundles are looked for in
// $ORTC_FUZZ_MODEL_DIR (scripts/fuzz puts the seed bundles there).
#include "fuzz_session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir = ortc::fuzz::EnvPath("ORTC_FUZZ_MODEL_DIR");
  ortc::SessionOptions options;
  options.intra_op_threads = 1;
  options.max_tensor_bytes = 256 << 20;  // what the fuzzer's memory limit allows
  options.context_file_path = (dir.empty() ? std::filesystem::path(".") : dir) / "model.onnx";
  ortc::fuzz::LoadAndRun(data, size, options);
  return 0;
}
