// Shared test helpers.
#include "test_data.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "model_builder.h"
#include "run_ortc.h"

namespace ortc::test {

std::vector<float> RandomFloats(unsigned seed, size_t n) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

Tensor RandomTensor(std::vector<int64_t> shape, unsigned seed) {
  Tensor t = Tensor::Allocate(DataType::kFloat, shape);
  const auto v = RandomFloats(seed, static_cast<size_t>(t.elements()));
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

std::vector<std::string> FilesIn(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

onnx::ModelProto LoadProto(const std::filesystem::path& path) {
  onnx::ModelProto m;
  if (!m.ParseFromString(ReadFile(path.string())))
    throw std::runtime_error("not a model: " + path.string());
  return m;
}

void SaveProto(const onnx::ModelProto& model, const std::filesystem::path& path) {
  WriteFile(path, model.SerializeAsString());
}

std::span<const std::byte> BytesOf(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string TempFileName(const std::string& file, long pid) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string host(name);
  for (char& c : host) c = (c == '-' || c == '/' || c == '.') ? '_' : c;
  return "." + file + ".ortc-tmp-" + host + "-" + std::to_string(pid) + "-1234abcd";
}

long DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  if (child > 0) waitpid(child, nullptr, 0);
  return static_cast<long>(child);
}

}  // namespace ortc::test
