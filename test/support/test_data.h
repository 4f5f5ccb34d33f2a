// Small helpers shared by tests: deterministic random data, folder listings, ONNX protos on
// disk, byte views of strings.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "ortc/tensor.h"

namespace ortc::test {

// n floats uniform in [-1, 1), the same for the same seed.
std::vector<float> RandomFloats(unsigned seed, size_t n);
// A float tensor of that shape filled by RandomFloats.
Tensor RandomTensor(std::vector<int64_t> shape, unsigned seed);
// File names in a folder, sorted.
std::vector<std::string> FilesIn(const std::filesystem::path& dir);
onnx::ModelProto LoadProto(const std::filesystem::path& path);
void SaveProto(const onnx::ModelProto& model, const std::filesystem::path& path);
std::span<const std::byte> BytesOf(const std::string& s);
// The name a writer on this host with process `pid` gives the temporary file of `file`
// (".<file>.ortc-tmp-<host>-<pid>-<random>"), spelled here independently of ortc's code.
std::string TempFileName(const std::string& file, long pid);
// The pid of a process that has exited: a writer that is certainly gone.
long DeadPid();

}  // namespace ortc::test
