// libFuzzer target: the tensor file readers of `ortc run --input` (.npy, and the TensorProto,
// SequenceProto and OptionalProto .pb files). The readers take paths: each input is written to
// one scratch file first.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/tensor_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("ortc_fuzz_" + std::to_string(::getpid()) + ".pb");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  (void)ortc::io::ReadNpy(file);
  (void)ortc::io::ReadTensorFile(file);
  (void)ortc::io::ReadSequenceFile(file);
  (void)ortc::io::ReadOptionalFile(file);
  return 0;
}
