// Benchmark helper (not a test): opens each given model as a session, one after another, runs
// it once on zero inputs, and prints JSON with each load time and the process RSS after it.
// Usage: session_probe MODEL_CTX.onnx...
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "ortc/runtime.h"

namespace {

long RssKiB() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::unique_ptr<ortc::Session>> keep;
  for (int i = 1; i < argc; ++i) {
    const auto t = std::chrono::steady_clock::now();
    auto s = ortc::Session::Create(argv[i]);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    if (!s.ok()) {
      std::cerr << s.status().ToString() << "\n";
      return 1;
    }
    std::vector<std::pair<std::string, ortc::Tensor>> feeds;
    for (const auto& in : (*s)->inputs()) {
      std::vector<int64_t> shape = in.shape;
      for (auto& d : shape) d = d < 0 ? 1 : d;
      feeds.push_back({in.name, ortc::Tensor::Allocate(in.dtype, shape)});
    }
    if (!(*s)->Run(feeds).ok()) return 1;
    out.push_back({{"model", argv[i]}, {"load_ms", ms}, {"rss_kib_after", RssKiB()}});
    keep.push_back(std::move(s).value());
  }
  std::cout << out.dump() << "\n";
  return 0;
}
