// libFuzzer target: the context binary reader and everything a session builds and runs from a
// binary (FlatBuffers verifier, section and weight bounds, the CPU program loader, the memory
// plan, the executor). The input is a context binary; it is embedded (embed_mode 1) into a
// template ctx model whose EPContext node names it, read from $ORTC_FUZZ_CTX_TEMPLATE
// (scripts/fuzz makes it). Fuzzing builds skip checksums (context_binary_reader.cpp).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <onnx/onnx_pb.h>

#include "format/ep_context.h"
#include "fuzz_session.h"

namespace {

onnx::ModelProto g_template;
onnx::AttributeProto* g_payload = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const auto path = ortc::fuzz::EnvPath("ORTC_FUZZ_CTX_TEMPLATE");
  std::ifstream in(path, std::ios::binary);
  if (path.empty() || !in || !g_template.ParseFromIstream(&in)) {
    std::fprintf(stderr, "set ORTC_FUZZ_CTX_TEMPLATE to an embed-mode-1 ctx model\n");
    std::exit(1);
  }
  for (auto& n : *g_template.mutable_graph()->mutable_node()) {
    if (!ortc::format::IsEpContextNode(n)) continue;
    for (auto& a : *n.mutable_attribute())
      if (a.name() == "ep_cache_context") g_payload = &a;
    break;
  }
  if (!g_payload) {
    std::fprintf(stderr, "%s has no EPContext node\n", path.c_str());
    std::exit(1);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  g_payload->set_s(std::string(reinterpret_cast<const char*>(data), size));
  const std::string model = g_template.SerializeAsString();
  ortc::SessionOptions options;
  options.intra_op_threads = 1;
  options.max_tensor_bytes = 256 << 20;  // what the fuzzer's memory limit allows
  ortc::fuzz::LoadAndRun(reinterpret_cast<const uint8_t*>(model.data()), model.size(), options);
  return 0;
}
