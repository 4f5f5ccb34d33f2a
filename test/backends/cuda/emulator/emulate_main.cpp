// ortc_cuda_emulate: the emulator check for any model, from the command line:
//   ortc_cuda_emulate model.onnx x=1x3x224x224 [y=...] [--precision fp16]
//   [--int-range input_ids=0:999] [--input-value sr=16000] [--input x=image.npy]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/tensor_files.h"
#include "model_builder.h"
#include "model_runner.h"

int main(int argc, char** argv) {
  using namespace ortc::test::cuda;
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s model.onnx name=1x3x8x8... [--precision fp32|tf32|fp16|bf16] "
                 "[--rtol R] [--atol A] [--int-range name=lo:hi] [--input-value name=v] "
                 "[--input name=file.npy]\n",
                 argv[0]);
    return 2;
  }
  // The precision first: it sets the default tolerances.
  std::string precision = "fp32";
  for (int i = 2; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--precision") precision = argv[i + 1];
  CheckOptions o = CheckOptions::ForPrecision(precision);
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--precision" && i + 1 < argc) {
      o.precision = argv[++i];
    } else if (a == "--rtol" && i + 1 < argc) {
      o.rtol = std::atof(argv[++i]);
    } else if (a == "--atol" && i + 1 < argc) {
      o.atol = std::atof(argv[++i]);
    } else if (a == "--int-range" && i + 1 < argc) {
      // name=lo:hi, the values of an integer input (token ids below the vocabulary size)
      const std::string r = argv[++i];
      const size_t eq = r.find('='), colon = r.find(':');
      if (eq == std::string::npos || colon == std::string::npos || colon < eq) {
        std::fprintf(stderr, "--int-range wants name=lo:hi, got %s\n", r.c_str());
        return 2;
      }
      o.int_ranges[r.substr(0, eq)] = {std::atoll(r.substr(eq + 1, colon - eq - 1).c_str()),
                                       std::atoll(r.substr(colon + 1).c_str())};
    } else if (a == "--input" && i + 1 < argc) {
      const std::string v = argv[++i];
      const size_t eq = v.find('=');
      auto t = eq == std::string::npos ? ortc::Result<ortc::Tensor>(ortc::InvalidArgument(
                                             "--input wants name=file.npy, got " + v))
                                       : ortc::io::ReadTensorFile(v.substr(eq + 1));
      if (!t.ok()) {
        std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
        return 2;
      }
      o.input_tensors[v.substr(0, eq)] = *t;
    } else if (a == "--input-value" && i + 1 < argc) {
      const std::string v = argv[++i];
      const size_t eq = v.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "--input-value wants name=value, got %s\n", v.c_str());
        return 2;
      }
      o.input_values[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (const size_t eq = a.find('='); eq != std::string::npos) {
      std::vector<int64_t> dims;
      size_t p = eq + 1;
      while (p <= a.size()) {
        const size_t x = a.find('x', p);
        dims.push_back(std::atoll(a.substr(p, x - p).c_str()));
        if (x == std::string::npos) break;
        p = x + 1;
      }
      o.input_shapes[a.substr(0, eq)] = dims;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  ortc::test::TempDir dir;
  auto r = CheckCompiledModel(argv[1], dir / "out", o);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 1;
  }
  if (!r->skipped.empty()) {
    std::printf("skipped: %s\n", r->skipped.c_str());
    return 77;
  }
  std::printf("%s %s\n", o.precision.c_str(), Describe(*r).c_str());
  for (const auto& g : r->graphs)
    for (const auto& e : g.outputs)
      std::printf(
          "  %s / %s: max abs %.3g, max rel %.3g, rel L2 %.3g, |ref| max %.3g, %lld beyond\n",
          g.graph.c_str(), e.name.c_str(), e.max_abs, e.max_rel, e.rel_l2, e.ref_max_abs,
          static_cast<long long>(e.beyond));
  if (std::getenv("ORTC_EMULATE_VERBOSE"))
    for (const auto& g : r->graphs)
      for (const auto& e : g.intermediates)
        std::printf("    %s: max abs %.3g, rel L2 %.3g, |ref| max %.3g, %lld beyond\n",
                    e.name.c_str(), e.max_abs, e.rel_l2, e.ref_max_abs,
                    static_cast<long long>(e.beyond));
  return r->beyond == 0 && r->intermediates_beyond == 0 ? 0 : 6;
}
