// Runs a compiled model from C++17: loads it with one intra-op thread, feeds every float input
// with 0.5 (dynamic dims as 1), prints each output's name and shape. Usage: run_cpp model_ctx.onnx
#include <iostream>

#include "ortc/runtime.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " model_ctx.onnx\n";
    return 2;
  }
  ortc::SessionOptions options;
  options.intra_op_threads = 1;
  auto session = ortc::Session::Create(argv[1], options);
  if (!session.ok()) {
    std::cerr << session.status().ToString() << "\n";
    return 1;
  }
  std::vector<std::pair<std::string, ortc::Tensor>> feeds;
  for (const auto& in : (*session)->inputs()) {
    std::vector<int64_t> shape = in.shape;
    for (auto& d : shape) d = d < 0 ? 1 : d;
    ortc::Tensor t = ortc::Tensor::Allocate(in.dtype, shape);
    if (in.dtype == ortc::DataType::kFloat) {
      float* p = t.mutable_data<float>();
      for (size_t i = 0; i < t.byte_size() / sizeof(float); ++i) p[i] = 0.5f;
    }
    feeds.emplace_back(in.name, t);
  }
  auto outputs = (*session)->Run(feeds);
  if (!outputs.ok()) {
    std::cerr << outputs.status().ToString() << "\n";
    return 1;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    std::cout << (*session)->outputs()[i].name << ": [";
    const auto& shape = (*outputs)[i].shape();
    for (size_t d = 0; d < shape.size(); ++d) std::cout << (d ? "," : "") << shape[d];
    std::cout << "] " << ortc::DataTypeName((*outputs)[i].dtype()) << "\n";
  }
  return 0;
}
