// Rotary position embeddings as exporters write them, recognised by what they compute: Llama's
// q * cos + rotate_half(q) * sin on the heads of a merged QKV projection (one RotaryEmbedding
// per tensor reading the projection through a view, no Split, Transpose or Slice kernel left,
// attention still fused), operand orders, a Sub form, a Split instead of Slices, a Mul by -1
// instead of Neg, cos/sin as activations, partial rotary; and near-misses that compute something
// else (slices that are not the halves, the Concat in the other order, the sign on the wrong
// half), which must stay unfused.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cuda/compile/codegen/kernel_text.h"
#include "plan_helpers.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

namespace cg = backends::cuda::codegen;
using backends::cuda::Plan;
using backends::cuda::StepKind;
const std::vector<int64_t> kHeads = {0, 2, 1, 3};

std::vector<const cg::OpDesc*> LaunchesOf(const Plan& plan, const std::string& op_type) {
  std::vector<const cg::OpDesc*> out;
  for (const auto& s : plan.steps)
    if (s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == op_type)
      out.push_back(&*s.launch.op);
  return out;
}

int Rotary(const Planned& p) {
  return p.graph.stats.at("rotary_fused");
}

// x[..., begin:end] as a Slice on the last axis, its parameters named after `out`.
void SliceLast(ModelBuilder& b, const std::string& in, const std::string& out, int64_t begin,
               int64_t end) {
  b.IntInitializer(out + ".starts", {begin}).IntInitializer(out + ".ends", {end});
  b.IntInitializer(out + ".axes", {-1});
  b.Node("Slice", {in, out + ".starts", out + ".ends", out + ".axes"}, {out});
}

// Llama's rotate_half(x) * sin + x * cos on the last axis of `x` (d columns), into `out`.
void LlamaRope(ModelBuilder& b, const std::string& x, const std::string& out, int64_t d,
               const std::string& cos = "cos", const std::string& sin = "sin") {
  SliceLast(b, x, x + "_1", 0, d / 2);
  SliceLast(b, x, x + "_2", d / 2, d);
  b.Node("Neg", {x + "_2"}, {x + "_neg"});
  b.Node("Concat", {x + "_neg", x + "_1"}, {x + "_rot"}, {Attr("axis", int64_t{-1})});
  b.Node("Mul", {x, cos}, {x + "_cos"});
  b.Node("Mul", {x + "_rot", sin}, {x + "_sin"});
  b.Node("Add", {x + "_cos", x + "_sin"}, {out});
}

// SDPA-style scaled attention of q over k and the value "v" ([1, 2, rows, 8] each), heads merged
// back into "y" (shape constant "merge").
void Attend(ModelBuilder& b, const std::string& q, const std::string& k) {
  b.Node("Transpose", {k}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("MatMul", {q, "kt"}, {"qk"}).Node("Mul", {"qk", "scale"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MatMul", {"p", "v"}, {"ctx"});
  b.Node("Transpose", {"ctx"}, {"ctx_t"}, {Attr("perm", kHeads)});
  b.Node("Reshape", {"ctx_t", "merge"}, {"y"}).Output("y");
}

// A Llama attention block on [1, 8, 16]: one merged-able Q/K/V projection (2 heads of 8), rotary
// on Q and K with [8, 8] cos/sin constants, SDPA-style scaled attention, heads merged back.
ModelBuilder LlamaBlock() {
  ModelBuilder b(18);
  b.Input("h", {1, 8, 16});
  b.Initializer("cos", {8, 8}, RandomFloats(1, 64)).Initializer("sin", {8, 8}, RandomFloats(2, 64));
  b.IntInitializer("split", {1, 8, 2, 8}).IntInitializer("merge", {1, 8, 16});
  b.Initializer("scale", {}, {0.35355339f});
  for (const char* t : {"q", "k", "v"}) {
    const std::string n = t;
    b.Initializer("W" + n, {16, 16}, RandomFloats(10 + n[0], 256));
    b.Node("MatMul", {"h", "W" + n}, {n + "_proj"});
    b.Node("Reshape", {n + "_proj", "split"}, {n + "_view"});
    b.Node("Transpose", {n + "_view"}, {n}, {Attr("perm", kHeads)});
  }
  LlamaRope(b, "q", "q_embed", 8);
  LlamaRope(b, "k", "k_embed", 8);
  Attend(b, "q_embed", "k_embed");
  return b;
}

// A decode step of that block: Q of one new row [1, 1, 16] projected (2 heads of 8) and rotated
// with [1, 8] tables, against a 32-row cache of keys and values given as inputs (rotated keys, as
// a cache holds them). With `q_also_output`, the rotated Q is a graph output too.
ModelBuilder LlamaDecodeStep(bool q_also_output = false) {
  ModelBuilder b(18);
  b.Input("h", {1, 1, 16}).Input("k", {1, 2, 32, 8}).Input("v", {1, 2, 32, 8});
  b.Initializer("cos", {1, 8}, RandomFloats(1, 8)).Initializer("sin", {1, 8}, RandomFloats(2, 8));
  b.IntInitializer("split", {1, 1, 2, 8}).IntInitializer("merge", {1, 1, 16});
  b.Initializer("scale", {}, {0.35355339f});
  b.Initializer("Wq", {16, 16}, RandomFloats(11, 256));
  b.Node("MatMul", {"h", "Wq"}, {"q_proj"}).Node("Reshape", {"q_proj", "split"}, {"q_view"});
  b.Node("Transpose", {"q_view"}, {"q"}, {Attr("perm", kHeads)});
  LlamaRope(b, "q", "q_embed", 8);
  if (q_also_output) b.Output("q_embed");
  Attend(b, "q_embed", "k");
  return b;
}

// q [1, 2, 8, d] and [8, rot] cos/sin constants (or [1, 1, 8, rot] inputs), ready for a form.
ModelBuilder Base(int64_t d = 8, bool table_inputs = false, int64_t rot = 0) {
  ModelBuilder b(18);
  if (rot == 0) rot = d;
  b.Input("q", {1, 2, 8, d});
  if (table_inputs) {
    b.Input("cos", {1, 1, 8, rot}).Input("sin", {1, 1, 8, rot});
  } else {
    b.Initializer("cos", {8, rot}, RandomFloats(1, 8 * rot));
    b.Initializer("sin", {8, rot}, RandomFloats(2, 8 * rot));
  }
  return b;
}

Planned PlanForm(ModelBuilder b) {
  b.Output("y");
  return PlanAll(b);
}

// ONNX Runtime's rotation of `x` (d columns) with half-width tables: halves (a, b) become
// (a cos - b sin, b cos + a sin) (`sign` -1 puts the plus in the first half: the inverse).
void PairRope(ModelBuilder& b, const std::string& x, const std::string& out, int64_t d,
              float sign = 1.f) {
  b.IntInitializer(x + ".halves", {d / 2, d / 2});
  b.Node("Split", {x, x + ".halves"}, {x + "_a", x + "_b"}, {Attr("axis", int64_t{-1})});
  b.Node("Mul", {x + "_a", "cos"}, {x + "_ac"}).Node("Mul", {x + "_b", "sin"}, {x + "_bs"});
  b.Node("Mul", {x + "_b", "cos"}, {x + "_bc"}).Node("Mul", {x + "_a", "sin"}, {x + "_as"});
  b.Node(sign > 0 ? "Sub" : "Add", {x + "_ac", x + "_bs"}, {x + "_first"});
  b.Node(sign > 0 ? "Add" : "Sub", {x + "_bc", x + "_as"}, {x + "_second"});
  b.Node("Concat", {x + "_first", x + "_second"}, {out}, {Attr("axis", int64_t{-1})});
}

}  // namespace

TEST_CASE("Llama's rotary on a merged QKV projection is one kernel per tensor", "[lowering]") {
  auto p = PlanAll(LlamaBlock());
  const Plan& plan = p.graph.plan;
  CHECK(Rotary(p) == 2);
  CHECK(p.graph.stats.at("projections_merged") == 1);
  CHECK(p.graph.stats.at("fused_attention") == 1);
  const auto rope = LaunchesOf(plan, "RotaryEmbedding");
  REQUIRE(rope.size() == 2);
  for (const char* gone : {"Slice", "Neg", "Concat", "Split", "Mul", "Add"})
    CHECK(LaunchesOf(plan, gone).empty());
  // Q's and K's head transposes are the views: at most the head-merging Transpose is left.
  CHECK(LaunchesOf(plan, "Transpose").size() <= 1);
  // Both read the merged [1, 8, 48] projection: Q's heads at column 0, K's at 16.
  std::vector<int64_t> offsets;
  for (const auto* op : rope) {
    CHECK(op->inputs[0].dims == std::vector<int64_t>{1, 8, 48});
    CHECK(cg::IntsAttr(*op, "x_shape") == std::vector<int64_t>{1, 2, 8, 8});
    CHECK(cg::IntsAttr(*op, "x_strides") == std::vector<int64_t>{0, 8, 48, 1});
    CHECK(cg::IntAttr(*op, "rotary_dim", 0) == 8);
    CHECK(op->outputs[0].dims == std::vector<int64_t>{1, 2, 8, 8});
    offsets.push_back(cg::IntAttr(*op, "x_offset", -1));
  }
  std::sort(offsets.begin(), offsets.end());
  CHECK(offsets == std::vector<int64_t>{0, 16});
  // Attention reads the rotated Q and K, and V straight from the projection.
  CHECK(LaunchesOf(plan, "AttentionSoftmax").size() == 1);
}

TEST_CASE("a decode step's attention rotates its query itself", "[lowering]") {
  for (auto precision : {backends::cuda::Precision::kFp32, backends::cuda::Precision::kFp16}) {
    auto p = PlanAll(LlamaDecodeStep(), precision);
    const Plan& plan = p.graph.plan;
    CHECK(Rotary(p) == 1);
    CHECK(p.graph.stats.at("rotary_in_attention") == 1);
    CHECK(LaunchesOf(plan, "RotaryEmbedding").empty());
    const auto fused = LaunchesOf(plan, "FusedAttention");
    REQUIRE(fused.size() == 1);
    REQUIRE(fused[0]->inputs.size() == 7);
    // q read from the projection through the rotary's view, the tables as given.
    CHECK(fused[0]->inputs[0].dims == std::vector<int64_t>{1, 1, 16});
    CHECK(cg::IntsAttr(*fused[0], "q_shape") == std::vector<int64_t>{1, 2, 1, 8});
    CHECK(cg::IntAttr(*fused[0], "q_rotary_dim", 0) == 8);
    CHECK(fused[0]->inputs[5].dims == std::vector<int64_t>{1, 8});
    CHECK(fused[0]->inputs[6].dims == std::vector<int64_t>{1, 8});
  }
  // The rotated Q is also read elsewhere: it stays a kernel of its own.
  auto kept = PlanAll(LlamaDecodeStep(true));
  CHECK(kept.graph.stats.at("rotary_in_attention") == 0);
  CHECK(LaunchesOf(kept.graph.plan, "RotaryEmbedding").size() == 1);
  // A prefill (8 rows, the GEMM form) keeps its rotary kernels.
  CHECK(PlanAll(LlamaBlock()).graph.stats.at("rotary_in_attention") == 0);
}

TEST_CASE("rotary forms exporters write are recognised", "[lowering]") {
  SECTION("operands in the other order") {
    auto b = Base();
    SliceLast(b, "q", "lo", 0, 4);
    SliceLast(b, "q", "hi", 4, 8);
    b.Node("Neg", {"hi"}, {"neg"});
    b.Node("Concat", {"neg", "lo"}, {"rot"}, {Attr("axis", int64_t{3})});
    b.Node("Mul", {"sin", "rot"}, {"rs"}).Node("Mul", {"cos", "q"}, {"qc"});
    b.Node("Add", {"rs", "qc"}, {"y"});
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 1);
    CHECK(LaunchesOf(p.graph.plan, "Concat").empty());
  }
  SECTION("a Sub of rotate_half with the sign on the other half") {
    // q * cos - Concat(x2, -x1) * sin is the same rotation.
    auto b = Base();
    SliceLast(b, "q", "lo", 0, 4);
    SliceLast(b, "q", "hi", 4, 8);
    b.Node("Neg", {"lo"}, {"neg"});
    b.Node("Concat", {"hi", "neg"}, {"rot"}, {Attr("axis", int64_t{-1})});
    b.Node("Mul", {"q", "cos"}, {"qc"}).Node("Mul", {"rot", "sin"}, {"rs"});
    b.Node("Sub", {"qc", "rs"}, {"y"});
    CHECK(Rotary(PlanForm(b)) == 1);
  }
  SECTION("halves from a Split, the sign as a Mul by -1 after the sin") {
    auto b = Base();
    b.IntInitializer("halves", {4, 4}).Initializer("minus", {}, {-1.f});
    b.Node("Split", {"q", "halves"}, {"lo", "hi"}, {Attr("axis", int64_t{-1})});
    b.Node("Concat", {"hi", "lo"}, {"swapped"}, {Attr("axis", int64_t{-1})});
    b.Node("Mul", {"swapped", "sin"}, {"ss"});
    // (hi, lo) * sin with the first half negated: Slice, Mul by -1 and Concat back.
    SliceLast(b, "ss", "ss_lo", 0, 4);
    SliceLast(b, "ss", "ss_hi", 4, 8);
    b.Node("Mul", {"minus", "ss_lo"}, {"ss_neg"});
    b.Node("Concat", {"ss_neg", "ss_hi"}, {"rs"}, {Attr("axis", int64_t{-1})});
    b.Node("Mul", {"q", "cos"}, {"qc"}).Node("Add", {"qc", "rs"}, {"y"});
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 1);
    CHECK(LaunchesOf(p.graph.plan, "Split").empty());
  }
  SECTION("cos and sin computed at run time, [1, 1, S, D]") {
    auto b = Base(8, true);
    LlamaRope(b, "q", "y", 8);
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 1);
    const auto rope = LaunchesOf(p.graph.plan, "RotaryEmbedding");
    REQUIRE(rope.size() == 1);
    CHECK(rope[0]->inputs[1].dims == std::vector<int64_t>{1, 1, 8, 8});
  }
  SECTION("ONNX Runtime's form: halves rotated with half-width tables (one angle per pair)") {
    // As com.microsoft GroupQueryAttention and RotaryEmbedding expand: [S, D / 2] tables.
    auto b = Base(8, false, 4);
    PairRope(b, "q", "y", 8);
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 1);
    const auto rope = LaunchesOf(p.graph.plan, "RotaryEmbedding");
    REQUIRE(rope.size() == 1);
    CHECK(cg::IntAttr(*rope[0], "rotary_dim", 0) == 8);
    CHECK(rope[0]->inputs[1].dims == std::vector<int64_t>{8, 4});
    for (const char* gone : {"Split", "Mul", "Sub", "Add", "Concat"})
      CHECK(LaunchesOf(p.graph.plan, gone).empty());
  }
  SECTION("partial rotary: the first 8 of 16 columns rotate, the rest pass through") {
    auto b = Base(16, false, 8);
    SliceLast(b, "q", "q_rot", 0, 8);
    SliceLast(b, "q", "q_pass", 8, 16);
    LlamaRope(b, "q_rot", "q_emb", 8);
    b.Node("Concat", {"q_emb", "q_pass"}, {"y"}, {Attr("axis", int64_t{-1})});
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 1);
    const auto rope = LaunchesOf(p.graph.plan, "RotaryEmbedding");
    REQUIRE(rope.size() == 1);
    CHECK(cg::IntAttr(*rope[0], "rotary_dim", 0) == 8);
    CHECK(rope[0]->outputs[0].dims == std::vector<int64_t>{1, 2, 8, 16});
    CHECK(LaunchesOf(p.graph.plan, "Slice").empty());
    CHECK(LaunchesOf(p.graph.plan, "Concat").empty());
  }
  SECTION("fp16: the rotary op stores half, its tables converted") {
    auto b = Base();
    LlamaRope(b, "q", "y", 8);
    b.Output("y");
    auto p = PlanAll(b, backends::cuda::Precision::kFp16);
    CHECK(Rotary(p) == 1);
    const auto rope = LaunchesOf(p.graph.plan, "RotaryEmbedding");
    REQUIRE(rope.size() == 1);
    CHECK(rope[0]->outputs[0].dtype == onnx::TensorProto::FLOAT16);
    CHECK(rope[0]->inputs[1].dtype == onnx::TensorProto::FLOAT16);
  }
}

TEST_CASE("near-misses of rotary embedding stay unfused", "[lowering]") {
  SECTION("slices that are not the halves") {
    auto b = Base();
    SliceLast(b, "q", "lo", 0, 3);
    SliceLast(b, "q", "hi", 3, 8);
    b.Node("Neg", {"hi"}, {"neg"});
    b.Node("Concat", {"neg", "lo"}, {"rot"}, {Attr("axis", int64_t{-1})});
    b.Node("Mul", {"q", "cos"}, {"qc"}).Node("Mul", {"rot", "sin"}, {"rs"});
    b.Node("Add", {"qc", "rs"}, {"y"});
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 0);
    CHECK(LaunchesOf(p.graph.plan, "RotaryEmbedding").empty());
    CHECK(LaunchesOf(p.graph.plan, "Slice").size() == 2);
  }
  SECTION("the Concat in the other order") {
    auto b = Base();
    SliceLast(b, "q", "lo", 0, 4);
    SliceLast(b, "q", "hi", 4, 8);
    b.Node("Neg", {"hi"}, {"neg"});
    b.Node("Concat", {"lo", "neg"}, {"rot"}, {Attr("axis", int64_t{-1})});
    b.Node("Mul", {"q", "cos"}, {"qc"}).Node("Mul", {"rot", "sin"}, {"rs"});
    b.Node("Add", {"qc", "rs"}, {"y"});
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 0);
    CHECK(LaunchesOf(p.graph.plan, "Concat").size() == 1);
  }
  SECTION("the sign on the wrong half (the inverse rotation)") {
    auto b = Base();
    SliceLast(b, "q", "lo", 0, 4);
    SliceLast(b, "q", "hi", 4, 8);
    b.Node("Neg", {"lo"}, {"neg"});
    b.Node("Concat", {"hi", "neg"}, {"rot"}, {Attr("axis", int64_t{-1})});
    b.Node("Mul", {"q", "cos"}, {"qc"}).Node("Mul", {"rot", "sin"}, {"rs"});
    b.Node("Add", {"qc", "rs"}, {"y"});
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 0);
    CHECK(LaunchesOf(p.graph.plan, "RotaryEmbedding").empty());
  }
  SECTION("half-width tables with the signs of the inverse rotation") {
    auto b = Base(8, false, 4);
    PairRope(b, "q", "y", 8, -1.f);
    auto p = PlanForm(b);
    CHECK(Rotary(p) == 0);
    CHECK(LaunchesOf(p.graph.plan, "RotaryEmbedding").empty());
  }
  SECTION("the halves rotated along another axis") {
    // Slices of the heads axis: not a function of each row of q.
    auto b = Base();
    b.IntInitializer("s0", {0}).IntInitializer("s1", {1}).IntInitializer("s2", {2});
    b.IntInitializer("ax1", {1});
    b.Node("Slice", {"q", "s0", "s1", "ax1"}, {"h0"});
    b.Node("Slice", {"q", "s1", "s2", "ax1"}, {"h1"});
    b.Node("Neg", {"h1"}, {"neg"});
    b.Node("Concat", {"neg", "h0"}, {"rot"}, {Attr("axis", int64_t{1})});
    b.Node("Mul", {"q", "cos"}, {"qc"}).Node("Mul", {"rot", "sin"}, {"rs"});
    b.Node("Add", {"qc", "rs"}, {"y"});
    CHECK(Rotary(PlanForm(b)) == 0);
  }
  SECTION("one table for both cos and sin") {
    auto b = Base();
    LlamaRope(b, "q", "y", 8, "cos", "cos");
    CHECK(Rotary(PlanForm(b)) == 0);
  }
}

}  // namespace ortc::test::cuda
