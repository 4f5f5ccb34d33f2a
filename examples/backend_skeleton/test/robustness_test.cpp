// What the plugin must survive: a host of another ABI version, bad run arguments, weights that
// do not match the program, unknown load options, and corrupt programs (every truncation, an
// out-of-range tensor index, every byte flipped), none of which may crash.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "plugin_driver.h"
#include "test_graphs.h"
#include "tests.h"

namespace npu_test {

void TestAbiMismatch() {
  OrtcBackend* sentinel = reinterpret_cast<OrtcBackend*>(0x1234);
  OrtcBackend* b = sentinel;
  CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION - 1, nullptr, &b) == ORTC_PLUGIN_ABI_MISMATCH);
  CHECK(b == sentinel);
  CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION + 1, nullptr, &b) == ORTC_PLUGIN_ABI_MISMATCH);
  OrtcBackendCompiler* csentinel = reinterpret_cast<OrtcBackendCompiler*>(0x1234);
  OrtcBackendCompiler* c = csentinel;
  CHECK(ortc_backend_compiler_create(ORTC_BACKEND_ABI_VERSION + 1, nullptr, &c) ==
        ORTC_PLUGIN_ABI_MISMATCH);
  CHECK(c == csentinel);
  CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION, nullptr, nullptr) ==
        ORTC_PLUGIN_INVALID_ARGUMENT);
}

void TestRuntimeErrors(const Plugin& p) {
  ConvGraph t;
  BuildConv(t, {});
  Compiled c;
  REQUIRE(Compile(p.compiler, t.g, t.unit, {t.x_q}, {t.y_q}, &c) == ORTC_PLUGIN_OK);
  OrtcBackend* b = p.backend;
  OrtcGraph* graph = nullptr;
  REQUIRE(Load(b, c, &graph) == ORTC_PLUGIN_OK);

  std::string x = Bytes(t.x), y(Elements(c.outputs[0].dims), '\0');
  OrtcTensorRef in = Ref(c.inputs[0], &x[0]);
  OrtcTensorRef out = Ref(c.outputs[0], &y[0]);
  OrtcTensorRef bad = in;
  bad.dtype = kUint8;
  CHECK(b->run_graph(graph, &bad, 1, &out, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  bad = in;
  bad.byte_size -= 1;
  CHECK(b->run_graph(graph, &bad, 1, &out, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  bad = in;
  bad.location = ORTC_MEMORY_DEVICE;
  CHECK(b->run_graph(graph, &bad, 1, &out, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK_MSG(Contains(b->last_error(b), "npu: inputs must be in host memory"), b->last_error(b));
  CHECK(b->run_graph(graph, &in, 1, &out, 0) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK(b->run_graph(graph, &in, 1, &out, 1) == ORTC_PLUGIN_OK);
  b->release_graph(graph);

  // Weights that do not match the program's slots.
  CHECK(Load(b, c, &graph, nullptr, 1) == ORTC_PLUGIN_INVALID_GRAPH);
  Compiled short_bias = c;
  short_bias.weights[1].bytes.pop_back();
  CHECK(Load(b, short_bias, &graph) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(b->last_error(b), "weight slot 1"), b->last_error(b));

  // Options: this backend has none.
  const OrtcKeyValue opt{"enable_profiling", "1"};
  OrtcGraphLoadInfo info{};
  info.struct_size = sizeof info;
  info.program = c.program.data();
  info.program_size = c.program.size();
  info.options = &opt;
  info.num_options = 1;
  CHECK(b->load_graph(b, &info, &graph) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK_MSG(Contains(b->last_error(b), "unknown option 'enable_profiling'"), b->last_error(b));

  // Corrupt programs: every truncation, an out-of-range tensor index, and every single byte
  // flipped. None may crash; a flipped byte may still load (a changed scale), and then it runs.
  int refused = 0;
  for (size_t n = 0; n < c.program.size(); ++n) {
    const std::string cut = c.program.substr(0, n);
    refused += Load(b, c, &graph, &cut) == ORTC_PLUGIN_INVALID_GRAPH;
  }
  CHECK_MSG(refused == static_cast<int>(c.program.size()),
            std::to_string(refused) + " of " + std::to_string(c.program.size()) + " refused");

  // Walk the documented layout to the first step record; its second field is the input tensor.
  const auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, c.program.data() + at, 4);
    return v;
  };
  size_t at = 28;
  for (uint32_t i = 0; i < u32(8); ++i)
    at += 4 + u32(at) + 8 + 4 + 8 * size_t{u32(at + 4 + u32(at) + 8)};
  at += 4 * (size_t{u32(12)} + u32(16));
  for (uint32_t i = 0; i < u32(20); ++i) at += 8 + 8 * size_t{u32(at + 4)};
  std::string patched = c.program;
  const uint32_t out_of_range = 99;
  std::memcpy(&patched[at + 4], &out_of_range, 4);
  CHECK(Load(b, c, &graph, &patched) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(b->last_error(b), "out of range"), b->last_error(b));

  int loaded = 0;
  for (size_t n = 0; n < c.program.size(); ++n) {
    std::string flipped = c.program;
    flipped[n] = static_cast<char>(flipped[n] ^ 0xff);
    if (Load(b, c, &graph, &flipped) != ORTC_PLUGIN_OK) continue;
    ++loaded;
    const OrtcPluginStatus s = b->run_graph(graph, &in, 1, &out, 1);
    CHECK(s == ORTC_PLUGIN_OK || s == ORTC_PLUGIN_INVALID_ARGUMENT);
    b->release_graph(graph);
  }
  std::printf("  corrupt programs: %d truncations refused, %d of %zu byte flips still load\n",
              refused, loaded, c.program.size());
}

}  // namespace npu_test
