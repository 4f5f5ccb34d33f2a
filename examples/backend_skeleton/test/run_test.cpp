// End to end through both sides: compile each QDQ unit, load and run the program, and compare
// every output with the float reference (proved first on a case worked out by hand).
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "plugin_driver.h"
#include "test_graphs.h"
#include "tests.h"

namespace npu_test {

void TestConv(const Plugin& p, bool external) {
  ConvGraph t;
  ConvOptions o;
  o.external_weight = external;
  o.file = (std::filesystem::temp_directory_path() /
            ("npu_skeleton_conv_" + std::to_string(::getpid()) + ".bin"))
               .string();
  BuildConv(t, o);
  const Capability cap = AskCapability(p.compiler, t.g);
  for (const int32_t n : t.unit)
    CHECK_MSG(cap.claimed[n], cap.reasons.count(n) ? cap.reasons.at(n) : "");
  REQUIRE(cap.reasons.count(t.relu));
  CHECK_MSG(Contains(cap.reasons.at(t.relu), "Relu"), cap.reasons.at(t.relu));
  CHECK(!cap.claimed[t.relu]);

  Compiled c;
  REQUIRE(Compile(p.compiler, t.g, t.unit, {t.x_q}, {t.y_q}, &c) == ORTC_PLUGIN_OK);
  REQUIRE(c.inputs.size() == 1 && c.outputs.size() == 1 && c.weights.size() == 2);
  CHECK(c.inputs[0].name == "x" && c.inputs[0].dtype == kInt8 &&
        c.inputs[0].dims == (std::vector<int64_t>{1, 2, 5, 5}));
  CHECK(c.outputs[0].name == "y" && c.outputs[0].dtype == kInt8 &&
        c.outputs[0].dims == (std::vector<int64_t>{1, 3, 5, 5}));
  CHECK(c.weights[0].desc.dtype == kInt8 && c.weights[0].layout == "plain" &&
        c.weights[0].alignment == 64 &&
        c.weights[0].desc.dims == (std::vector<int64_t>{3, 2, 3, 3}));
  CHECK(c.weights[0].kind == (external ? ORTC_BYTES_FILE_REGION : ORTC_BYTES_COPY));
  CHECK(c.weights[0].bytes == Bytes(t.w));
  CHECK(c.weights[1].desc.dtype == kInt32 && c.weights[1].bytes == Bytes(t.b));
  CHECK(c.program.substr(0, 4) == "NPUB");
  CHECK(c.stats["npu_qdq_conv"] == 1 && c.stats["npu_qdq_matmul"] == 0);
  CHECK(c.notes["npu_units"] == "1");
  CHECK(c.versions["npu_sdk"] == "1.0");
  CHECK(c.progress == (std::vector<std::pair<int32_t, int32_t>>{{1, 1}}));
  if (external) std::filesystem::remove(o.file);

  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes(t.x), &y) == ORTC_PLUGIN_OK);
  const std::vector<int32_t> want =
      ConvRef(t.spec, Ints32(Bytes(t.x), true), t.qx, t.w, t.sw, t.b, t.sb, t.qy);
  CompareOutputs(external ? "conv (external weights)" : "conv", Ints32(y, true), want);

  char text[128];
  size_t length = 0;
  CHECK(p.backend->describe_graph(graph, text, sizeof text, &length) == ORTC_PLUGIN_OK);
  CHECK(std::string(text) == R"({"runs_on":"host simulation","steps":1})");
  CHECK(p.backend->last_run_profile(graph, text, sizeof text, &length) ==
        ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK(std::string(p.backend->last_error(p.backend)) == "npu: profiling not supported");
  p.backend->release_graph(graph);
}

// The tiny case worked out by hand, to prove the reference before trusting it:
//   a = [10, -4] int8, zero point 2, scale 0.5  -> dequantized [4, -3]
//   b = [[3, 1, 127], [5, 1, -128]] int8, scale 0.25
//   y scale 0.5, zero point 1, int8
//   column 0: 4*0.75 + (-3)*1.25 = -0.75; /0.5 = -1.5 -> -2 (half to even); +1 = -1
//   column 1: 4*0.25 + (-3)*0.25 =  0.25; /0.5 =  0.5 ->  0 (half to even, not 1); +1 = 1
//   column 2: 4*31.75 + (-3)*(-32) = 223; /0.5 = 446; +1 = 447 -> saturates to 127
// In integers (what the plugin computes): acc = (10-2)*b0 + (-4-2)*b1 = -6, 2, 1784, times
// 0.5*0.25 = -0.75, 0.25, 223: the same.
void TestHandWorked(const Plugin& p) {
  GraphBuilder g;
  const int a = g.Value("a", kInt8, {1, 2}, true);
  const MatMulUnit u = AddMatMul(g, "", a, {0.5, 2, true}, {1, 2}, 3, {3, 1, 127, 5, 1, -128},
                                 0.25f, {0.5, 1, true}, true);
  g.MarkOutput(u.y_q);
  const std::vector<int32_t> a_values{10, -4};
  const std::vector<int32_t> expected{-1, 1, 127};
  CHECK(MatMulRef(1, 2, 3, a_values, u.qa, u.b, u.sb, u.qy) == expected);

  Compiled c;
  REQUIRE(Compile(p.compiler, g, u.nodes, {a}, {u.y_q}, &c) == ORTC_PLUGIN_OK);
  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes<int8_t>({10, -4}), &y) == ORTC_PLUGIN_OK);
  CHECK(Ints32(y, true) == expected);
  p.backend->release_graph(graph);
}

// The QDQ MatMul unit of the brief: a [2,4] uint8 x b [4,3] int8 (in an external file), the
// output uint8 through a QuantizeLinear without zero point.
void TestMatMul(const Plugin& p) {
  GraphBuilder g;
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("npu_skeleton_matmul_" + std::to_string(::getpid()) + ".bin"))
                               .string();
  const int a = g.Value("a", kUint8, {2, 4}, true);
  const MatMulUnit u =
      AddMatMul(g, "", a, {0.02, 128, false}, {2, 4}, 3, RandomVector<int8_t>(12, -40, 127), 0.03f,
                {0.1, 0, false}, false, file);
  g.MarkOutput(u.y_q);
  const Capability cap = AskCapability(p.compiler, g);
  for (const int32_t n : u.nodes) CHECK(cap.claimed[n]);

  Compiled c;
  REQUIRE(Compile(p.compiler, g, u.nodes, {a}, {u.y_q}, &c) == ORTC_PLUGIN_OK);
  std::filesystem::remove(file);
  REQUIRE(c.weights.size() == 1);
  CHECK(c.weights[0].kind == ORTC_BYTES_FILE_REGION);
  CHECK(c.weights[0].bytes == Bytes(u.b));
  CHECK(c.outputs[0].dtype == kUint8);
  CHECK(c.stats["npu_qdq_matmul"] == 1);

  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  // Mostly above the zero point, with mostly positive weights: mostly positive outputs, which
  // a uint8 output without zero point (0) can represent.
  const std::vector<uint8_t> a_values = RandomVector<uint8_t>(8, 90, 255);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes(a_values), &y) == ORTC_PLUGIN_OK);
  CompareOutputs("matmul", Ints32(y, false),
                 MatMulRef(2, 4, 3, Ints32(Bytes(a_values), false), u.qa, u.b, u.sb, u.qy));
  p.backend->release_graph(graph);
}

// Two MatMul units chained through a quantized intermediate, compiled as one group.
void TestChain(const Plugin& p) {
  GraphBuilder g;
  const int a = g.Value("a", kInt8, {2, 3, 8}, true);
  const MatMulUnit u1 = AddMatMul(g, "l1_", a, {0.04, -2, true}, {2, 3, 8}, 6,
                                  RandomVector<int8_t>(48, -127, 127), 0.02f, {0.5, 4, true}, true);
  const MatMulUnit u2 =
      AddMatMul(g, "l2_", u1.y_q, u1.qy, {2, 3, 6}, 5, RandomVector<int8_t>(30, -127, 127), 0.03f,
                {2.0, -3, true}, true);
  g.MarkOutput(u2.y_q);
  const Capability cap = AskCapability(p.compiler, g);
  std::vector<int32_t> nodes = u1.nodes;
  nodes.insert(nodes.end(), u2.nodes.begin(), u2.nodes.end());
  for (const int32_t n : nodes) CHECK(cap.claimed[n]);

  Compiled c;
  REQUIRE(Compile(p.compiler, g, nodes, {a}, {u2.y_q}, &c) == ORTC_PLUGIN_OK);
  CHECK(c.weights.size() == 2);
  CHECK(c.notes["npu_units"] == "2");
  CHECK(c.progress == (std::vector<std::pair<int32_t, int32_t>>{{1, 2}, {2, 2}}));
  // Half a group is not a group: the second unit's QuantizeLinear left out.
  Compiled partial;
  CHECK(Compile(p.compiler, g, std::vector<int32_t>(nodes.begin(), nodes.end() - 1), {a}, {u1.y_q},
                &partial) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(p.compiler->last_error(p.compiler), "outside the group"),
            p.compiler->last_error(p.compiler));

  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  const std::vector<int8_t> a_values = RandomVector<int8_t>(48, -128, 127);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes(a_values), &y) == ORTC_PLUGIN_OK);
  const std::vector<int32_t> mid =
      MatMulRef(6, 8, 6, Ints32(Bytes(a_values), true), u1.qa, u1.b, u1.sb, u1.qy);
  CompareOutputs("chained matmuls", Ints32(y, true),
                 MatMulRef(6, 6, 5, mid, u2.qa, u2.b, u2.sb, u2.qy));
  p.backend->release_graph(graph);
}

}  // namespace npu_test
