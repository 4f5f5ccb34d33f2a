// Ops that return their input (lowering/identity_ops.h), each against a near miss that moves
// data: a Pad by zero rows and one by a row in and a row out, a Slice of everything and a
// reversing one, a Transpose moving only unit axes and a real one; and, through common
// subexpressions, a cache padded by zero rows read as the cache itself; and a Transpose moving
// only unit axes rewritten as a Reshape.
#include <catch2/catch.hpp>

#include <cstring>

#include "graph/model.h"
#include "lowering/common_subexpressions.h"
#include "lowering/identity_ops.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

struct Built {
  std::unique_ptr<graph::Model> model;  // the IR borrows from it
  lowering::SubgraphIr ir;
};

Built Build(ModelBuilder& b, const std::vector<std::string>& outputs) {
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "identity");
  REQUIRE(m.ok());
  Built out{std::move(m).value(), {}};
  const auto& g = out.model->graph;
  std::vector<int> nodes(g.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  std::vector<int> outs;
  for (const auto& o : outputs) outs.push_back(g.FindValue(o));
  auto ir = lowering::SubgraphIr::Build(*out.model, "identity", nodes, g.inputs, outs);
  REQUIRE(ir.ok());
  out.ir = std::move(ir).value();
  return out;
}

// ReturnedInput of the op producing `name`, as the name of the value it returns ("" for none).
std::string Returned(const lowering::SubgraphIr& ir, const std::string& name) {
  for (const auto& op : ir.ops) {
    if (op.outputs.empty() || op.outputs[0] < 0 || ir.values[op.outputs[0]].name != name) continue;
    const int v = lowering::ReturnedInput(ir, op);
    return v < 0 ? "" : ir.values[v].name;
  }
  FAIL("no op writes " << name);
  return "";
}

}  // namespace

TEST_CASE("movement ops that move nothing return their input, near misses do not",
          "[lowering][identity]") {
  ModelBuilder b(18);
  b.Input("x", {1, 2, 4, 3});
  b.IntInitializer("zeros", {0, 0, 0, 0, 0, 0, 0, 0});
  b.IntInitializer("shift", {0, 0, 1, 0, 0, 0, -1, 0});  // same shape, rows moved down
  b.IntInitializer("start", {0}).IntInitializer("end", {4}).IntInitializer("axis", {2});
  b.IntInitializer("step", {1}).IntInitializer("back", {-1});
  b.IntInitializer("rstart", {3}).IntInitializer("rend", {-5});
  b.IntInitializer("same_shape", {1, 2, 4, 3}).IntInitializer("flat", {1, 2, 12});
  b.Node("Pad", {"x", "zeros"}, {"pad0"})
      .Node("Pad", {"x", "shift"}, {"pad_shift"})
      .Node("Slice", {"x", "start", "end", "axis", "step"}, {"slice_all"})
      .Node("Slice", {"x", "rstart", "rend", "axis", "back"}, {"slice_reversed"})
      .Node("Transpose", {"x"}, {"t_unit"}, {Attr("perm", std::vector<int64_t>{1, 0, 2, 3})})
      .Node("Transpose", {"x"}, {"t_real"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})})
      .Node("Reshape", {"x", "same_shape"}, {"reshaped"})
      .Node("Reshape", {"x", "flat"}, {"flattened"})
      .Node("Identity", {"x"}, {"ident"});
  const std::vector<std::string> outs = {"pad0",           "pad_shift", "slice_all",
                                         "slice_reversed", "t_unit",    "t_real",
                                         "reshaped",       "flattened", "ident"};
  for (const auto& o : outs) b.Output(o);
  auto built = Build(b, outs);
  const auto& ir = built.ir;
  CHECK(Returned(ir, "pad0") == "x");
  CHECK(Returned(ir, "pad_shift").empty());
  CHECK(Returned(ir, "slice_all") == "x");
  CHECK(Returned(ir, "slice_reversed").empty());
  CHECK(Returned(ir, "t_unit").empty());  // [2, 1, 4, 3]: another shape (a view, not the input)
  CHECK(Returned(ir, "t_real").empty());
  CHECK(Returned(ir, "reshaped") == "x");
  CHECK(Returned(ir, "flattened").empty());
  CHECK(Returned(ir, "ident") == "x");
}

TEST_CASE("a Transpose over unit axes of one shape returns its input", "[lowering][identity]") {
  ModelBuilder b(18);
  b.Input("x", {1, 1, 4, 3});
  b.Node("Transpose", {"x"}, {"swap_units"}, {Attr("perm", std::vector<int64_t>{1, 0, 2, 3})})
      .Node("Transpose", {"x"}, {"swap_rows"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})})
      .Output("swap_units")
      .Output("swap_rows");
  auto built = Build(b, {"swap_units", "swap_rows"});
  CHECK(Returned(built.ir, "swap_units") == "x");
  CHECK(Returned(built.ir, "swap_rows").empty());  // [1, 1, 3, 4]
}

TEST_CASE("a cache padded by zero rows is read as the cache", "[lowering][identity][cse]") {
  // A fixed-size cache's update as GroupQueryAttention's expansion writes it:
  // Where(is_past, Pad(past, 0 rows), 0): the Pad goes, the Where reads past.
  ModelBuilder b(18);
  b.Input("past", {1, 2, 8, 4}).Input("is_past", {1, 1, 8, 1}, T::BOOL);
  b.IntInitializer("no_rows", {0, 0, 0, 0, 0, 0, 0, 0}).Initializer("zero", {}, {0.f});
  b.Node("Pad", {"past", "no_rows"}, {"padded"})
      .Node("Where", {"is_past", "padded", "zero"}, {"kept"})
      .Output("kept");
  auto built = Build(b, {"kept"});
  auto& ir = built.ir;
  CHECK(lowering::EliminateCommonSubexpressions(&ir) == 1);
  for (const auto& op : ir.ops) {
    CHECK(op.op_type != "Pad");
    if (op.op_type == "Where") CHECK(ir.values[op.inputs[1]].name == "past");
  }
  // A padded program output stays: its value is what the program hands back.
  ModelBuilder c(18);
  c.Input("past", {1, 2, 8, 4});
  c.IntInitializer("no_rows", {0, 0, 0, 0, 0, 0, 0, 0});
  c.Node("Pad", {"past", "no_rows"}, {"padded"}).Output("padded");
  auto kept = Build(c, {"padded"});
  CHECK(lowering::EliminateCommonSubexpressions(&kept.ir) == 0);
}

TEST_CASE("a Transpose moving only unit axes becomes a Reshape to its shape",
          "[lowering][identity]") {
  // A decode step's head split: [1, 1, 4, 8] -> [1, 4, 1, 8] moves no element.
  ModelBuilder b(18);
  b.Input("x", {1, 1, 4, 8});
  b.Node("Transpose", {"x"}, {"heads"}, {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})})
      .Node("Transpose", {"x"}, {"swapped"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})})
      .Output("heads")
      .Output("swapped");
  auto built = Build(b, {"heads", "swapped"});
  auto& ir = built.ir;
  CHECK(lowering::TransposesToReshapes(&ir) == 1);
  for (const auto& op : ir.ops) {
    const std::string& out = ir.values[op.outputs[0]].name;
    if (out == "swapped") CHECK(op.op_type == "Transpose");
    if (out != "heads") continue;
    REQUIRE(op.op_type == "Reshape");
    REQUIRE(op.inputs.size() == 2);
    CHECK(op.attributes.empty());
    const auto& shape = ir.values[op.inputs[1]];
    auto bytes = shape.bytes->ReadAll();
    REQUIRE(bytes.ok());
    std::vector<int64_t> dims((*bytes)->size() / 8);
    std::memcpy(dims.data(), (*bytes)->data(), (*bytes)->size());
    CHECK(dims == std::vector<int64_t>{1, 4, 1, 8});
  }
}
