// Attention as the exporters write it, recognised by what it computes: SDPA's decomposition
// (scale split between Q and K^T, a Where(mask, 0, -inf) added, the Where(IsNaN(P), 0, P)
// guard), GQA's repeated key/value heads (Unsqueeze + Expand + Reshape) with the dynamo
// exporter's K^T (Reshape, Transpose, Reshape), and a mask order the kernels cannot reproduce,
// which must stay unfused. Then the default lowering onto GEMMs around one softmax kernel.
#include <catch2/catch.hpp>

#include <cmath>

#include "cuda/compile/codegen/kernel_text.h"
#include "plan_helpers.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

namespace cg = backends::cuda::codegen;
using backends::cuda::Plan;
using backends::cuda::StepKind;
using T = onnx::TensorProto;
constexpr auto kFused = backends::cuda::CudaOptions::Attention::kFused;
constexpr auto kFp32 = backends::cuda::Precision::kFp32;
const std::vector<int64_t> kHeads = {0, 2, 1, 3};

std::vector<const cg::OpDesc*> LaunchesOf(const Plan& plan, const std::string& op_type) {
  std::vector<const cg::OpDesc*> out;
  for (const auto& s : plan.steps)
    if (s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == op_type)
      out.push_back(&*s.launch.op);
  return out;
}

int Gemms(const Plan& plan) {
  int n = 0;
  for (const auto& s : plan.steps) n += s.kind == StepKind::kGemm;
  return n;
}

// TorchScript's SDPA: q, k, v [1, 8, 2, 8] -> heads; q * 8^-0.25, K^T * 8^-0.25; scores +
// Where(mask, 0, -inf); Softmax; Where(IsNaN(p), 0, p); @ v.
ModelBuilder Sdpa() {
  ModelBuilder b(17);
  b.Input("q_in", {1, 8, 2, 8}).Input("k_in", {1, 8, 2, 8}).Input("v_in", {1, 8, 2, 8});
  b.Input("keep", {1, 1, 8, 8}, T::BOOL);
  const float s = std::pow(8.f, -0.25f);
  b.Initializer("s", {}, {s}).Initializer("zero", {1}, {0.f}).Initializer("ninf", {1}, {-INFINITY});
  b.Node("Transpose", {"q_in"}, {"q"}, {Attr("perm", kHeads)});
  b.Node("Transpose", {"k_in"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 2, 3, 1})});
  b.Node("Transpose", {"v_in"}, {"v"}, {Attr("perm", kHeads)});
  b.Node("Mul", {"q", "s"}, {"qs"}).Node("Mul", {"kt", "s"}, {"kts"});
  b.Node("MatMul", {"qs", "kts"}, {"qk"});
  b.Node("Where", {"keep", "zero", "ninf"}, {"bias"});
  b.Node("Add", {"qk", "bias"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("IsNaN", {"p"}, {"nan"}).Node("Where", {"nan", "zero", "p"}, {"pg"});
  b.Node("MatMul", {"pg", "v"}, {"ctx"});
  b.Node("Transpose", {"ctx"}, {"y"}, {Attr("perm", kHeads)}).Output("y");
  return b;
}

// Llama through the dynamo exporter: 4 query heads, 2 key/value heads repeated twice; K^T as
// Reshape [4, 8, 8] -> Transpose -> Reshape [1, 4, 8, 8].
ModelBuilder Gqa() {
  ModelBuilder b(18);
  b.Input("q", {1, 4, 8, 8}).Input("k", {1, 2, 8, 8}).Input("v", {1, 2, 8, 8});
  b.IntInitializer("ax2", {2}).IntInitializer("rep", {1, 2, 2, 8, 8});
  b.IntInitializer("heads4", {1, 4, 8, 8}).IntInitializer("flat", {4, 8, 8});
  b.Initializer("scale", {}, {1 / std::sqrt(8.f)});
  b.Node("Unsqueeze", {"k", "ax2"}, {"k5"}).Node("Expand", {"k5", "rep"}, {"ke"});
  b.Node("Unsqueeze", {"v", "ax2"}, {"v5"}).Node("Expand", {"v5", "rep"}, {"ve"});
  b.Node("Reshape", {"ve", "heads4"}, {"vr"});
  b.Node("Reshape", {"ke", "flat"}, {"k3"});
  b.Node("Transpose", {"k3"}, {"k3t"}, {Attr("perm", std::vector<int64_t>{0, 2, 1})});
  b.Node("Reshape", {"k3t", "heads4"}, {"kt"});
  b.Node("MatMul", {"q", "kt"}, {"qk"}).Node("Mul", {"qk", "scale"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MatMul", {"p", "vr"}, {"y"}).Output("y");
  return b;
}

// One generation step of a GQA decoder: 4 query heads of one row against a cache of `keys`
// positions of 2 key/value heads, repeated as Llama's code writes it.
ModelBuilder GqaDecodeStep(int64_t keys = 32) {
  ModelBuilder b(18);
  b.Input("q", {1, 4, 1, 8}).Input("k", {1, 2, keys, 8}).Input("v", {1, 2, keys, 8});
  b.Input("mask", {1, 1, 1, keys});
  b.IntInitializer("ax2", {2}).IntInitializer("rep", {1, 2, 2, keys, 8});
  b.IntInitializer("heads4", {1, 4, keys, 8});
  b.Initializer("scale", {}, {1 / std::sqrt(8.f)});
  for (const char* t : {"k", "v"}) {
    const std::string n = t;
    b.Node("Unsqueeze", {n, "ax2"}, {n + "5"}).Node("Expand", {n + "5", "rep"}, {n + "e"});
    b.Node("Reshape", {n + "e", "heads4"}, {n + "r"});
  }
  b.Node("Transpose", {"kr"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("MatMul", {"q", "kt"}, {"qk"}).Node("Mul", {"qk", "scale"}, {"qks"});
  b.Node("Add", {"qks", "mask"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MatMul", {"p", "vr"}, {"y"}).Output("y");
  return b;
}

}  // namespace

TEST_CASE("eager GPT-2's Where before the padding mask fuses in the model's order", "[lowering]") {
  // scores / sqrt(d) -> Where(causal, s, lowest) -> + padding -> Softmax: masked scores are
  // lowest + padding, which the kernels reproduce by adding the mask after the Where.
  ModelBuilder b(17);
  b.Input("q", {1, 2, 8, 8}).Input("kt", {1, 2, 8, 8}).Input("v", {1, 2, 8, 8});
  b.Input("causal", {1, 1, 8, 8}, T::BOOL).Input("padding", {1, 1, 1, 8});
  b.Initializer("d", {}, {std::sqrt(8.f)}).Initializer("lowest", {}, {-3.4028234663852886e38f});
  b.Node("MatMul", {"q", "kt"}, {"qk"}).Node("Div", {"qk", "d"}, {"s"});
  b.Node("Where", {"causal", "s", "lowest"}, {"masked"});
  b.Node("Add", {"masked", "padding"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"p", "v"}, {"y"}).Output("y");
  auto p = PlanAll(b, kFp32, kFused);
  CHECK(p.graph.stats.at("fused_attention") == 1);
  const auto fused = LaunchesOf(p.graph.plan, "FusedAttention");
  REQUIRE(fused.size() == 1);
  CHECK(cg::IntAttr(*fused[0], "mask_after_where", 0) == 1);
  CHECK(cg::FloatAttr(*fused[0], "fill", 0.f) == -3.4028234663852886e38f);
  // On GEMMs (the default), the softmax kernel keeps the order.
  auto gemm = PlanAll(b);
  const auto sm = LaunchesOf(gemm.graph.plan, "AttentionSoftmax");
  REQUIRE(sm.size() == 1);
  CHECK(cg::IntAttr(*sm[0], "mask_after_where", 0) == 1);
}

TEST_CASE("a generation step's attention stays one decode kernel, not GEMMs", "[lowering]") {
  auto p = PlanAll(GqaDecodeStep());
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("fused_attention") == 1);
  CHECK(p.graph.stats.at("decode_attention") == 1);
  CHECK(p.graph.stats.at("attention_on_gemms") == 0);
  CHECK(Gemms(plan) == 0);
  CHECK(LaunchesOf(plan, "AttentionSoftmax").empty());
  CHECK(LaunchesOf(plan, "Expand").empty());
  const auto fused = LaunchesOf(plan, "FusedAttention");
  REQUIRE(fused.size() == 1);
  CHECK(fused[0]->inputs[1].dims == std::vector<int64_t>{1, 2, 32, 8});  // the cache itself
  CHECK(cg::IntAttr(*fused[0], "k_head_group", 1) == 2);
  REQUIRE(plan.steps.size() == 1);
  // The same attention with 8 query rows (a prefill) is no decode step: GEMMs.
  auto prefill = PlanAll(Gqa());
  CHECK(prefill.graph.stats.at("decode_attention") == 0);
  CHECK(prefill.graph.stats.at("attention_on_gemms") == 1);
}

TEST_CASE("a decode step's attention splits over a long cache's keys into runs and a merge",
          "[lowering]") {
  // 4 heads of one row: 4 blocks would leave the GPU idle, so a 4096-key cache is read in 16 runs
  // of 256 keys (cg::DecodeKeySplits); the runs' records stay fp32 at fp16.
  auto p = PlanAll(GqaDecodeStep(4096), backends::cuda::Precision::kFp16);
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("decode_attention") == 1);
  CHECK(p.graph.stats.at("decode_attention_split") == 1);
  CHECK(Gemms(plan) == 0);
  CHECK(LaunchesOf(plan, "FusedAttention").empty());
  const auto partial = LaunchesOf(plan, "DecodeAttentionPartial");
  const auto merge = LaunchesOf(plan, "DecodeAttentionMerge");
  REQUIRE(partial.size() == 1);
  REQUIRE(merge.size() == 1);
  CHECK(cg::IntAttr(*partial[0], "key_splits", 0) == 16);
  CHECK(cg::IntAttr(*partial[0], "k_head_group", 1) == 2);  // the cache read in place
  CHECK(partial[0]->inputs[1].dims == std::vector<int64_t>{1, 2, 4096, 8});
  CHECK(partial[0]->outputs[0].dtype == T::FLOAT);
  CHECK(partial[0]->outputs[0].dims == std::vector<int64_t>{1, 4, 1, 16, 10});
  CHECK(merge[0]->inputs[0].dims == partial[0]->outputs[0].dims);
  CHECK(merge[0]->outputs[0].dtype == T::FLOAT16);
  // Past one block's kDecodeMaxKeys, the fused form splits too (it took the tiled kernel), and
  // so do the GEMM form's decode steps (they took three GEMM steps).
  for (auto mode : {kFused, backends::cuda::CudaOptions::Attention::kGemm}) {
    auto lng = PlanAll(GqaDecodeStep(cg::kDecodeMaxKeys + 100), kFp32, mode);
    CHECK(lng.graph.stats.at("decode_attention_split") == 1);
    CHECK(Gemms(lng.graph.plan) == 0);
    const auto runs = LaunchesOf(lng.graph.plan, "DecodeAttentionPartial");
    REQUIRE(runs.size() == 1);
    CHECK(cg::IntAttr(*runs[0], "key_splits", 0) ==
          cg::DecodeKeySplits(4, cg::kDecodeMaxKeys + 100));
  }
  // A short cache keeps the one-kernel form.
  auto short_cache = PlanAll(GqaDecodeStep(32));
  CHECK(short_cache.graph.stats.at("decode_attention_split") == 0);
  CHECK(LaunchesOf(short_cache.graph.plan, "FusedAttention").size() == 1);
}

TEST_CASE("SDPA's decomposition fuses: split scale, Where bias, IsNaN guard", "[lowering]") {
  auto p = PlanAll(Sdpa(), kFp32, kFused);
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("fused_attention") == 1);
  const auto fused = LaunchesOf(plan, "FusedAttention");
  REQUIRE(fused.size() == 1);
  CHECK(LaunchesOf(plan, "Softmax").empty());
  CHECK(LaunchesOf(plan, "Transpose").empty());
  // 8^-0.25 twice is 8^-0.5, up to float rounding.
  CHECK(std::fabs(cg::FloatAttr(*fused[0], "scale", 0) - 1 / std::sqrt(8.f)) < 1e-6);
  // The additive bias is the Where's output, computed before: the mask of the fused op.
  CHECK(fused[0]->inputs[3].dims == std::vector<int64_t>{1, 1, 8, 8});
  CHECK(cg::IntsAttr(*fused[0], "q_strides") == std::vector<int64_t>{0, 8, 16, 1});
  CHECK(cg::IntsAttr(*fused[0], "out_perm") == kHeads);
  // Nothing of the guard is left: no step implements the IsNaN (unnamed nodes are named
  // "<op>_<index>").
  for (const auto& s : plan.steps)
    for (const auto& src : s.sources) CHECK(src.find("IsNaN") == std::string::npos);
  REQUIRE(plan.steps.size() == 2);  // the bias Where, then the attention
}

// torchlib's SDPA at opset 18 with is_causal and no mask: the scale matched to q's type by
// CastLike, both operands scaled by its square root, the causal mask built from Trilu over ones
// and CastLike'd to q's type, added before the Softmax; no IsNaN guard.
ModelBuilder TorchlibCausal() {
  ModelBuilder b(18, 10);
  b.Input("q", {1, 2, 8, 8}).Input("k", {1, 2, 8, 8}).Input("v", {1, 2, 8, 8});
  b.Initializer("scale", {}, {1 / std::sqrt(8.f)})
      .Initializer("ones", {8, 8}, std::vector<float>(64, 1));
  b.Initializer("zero", {}, {0.f}).Initializer("ninf", {}, {-INFINITY});
  b.Node("CastLike", {"scale", "q"}, {"scale_q"}).Node("Sqrt", {"scale_q"}, {"root"});
  b.Node("Transpose", {"k"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("Mul", {"q", "root"}, {"qs"}).Node("Mul", {"kt", "root"}, {"kts"});
  b.Node("Trilu", {"ones"}, {"tril"}, {Attr("upper", int64_t{0})});
  b.Node("Equal", {"tril", "zero"}, {"hidden"}).Node("Where", {"hidden", "ninf", "zero"}, {"m"});
  b.Node("CastLike", {"m", "q"}, {"mask"});
  b.Node("MatMul", {"qs", "kts"}, {"qk"}).Node("Add", {"qk", "mask"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MatMul", {"p", "v"}, {"y"}).Output("y");
  return b;
}

TEST_CASE("torchlib's causal SDPA fuses: CastLike'd scale and mask are constants", "[lowering]") {
  auto p = PlanAll(TorchlibCausal(), kFp32, kFused);
  const Plan& plan = p.graph.plan;
  const auto fused = LaunchesOf(plan, "FusedAttention");
  REQUIRE(fused.size() == 1);
  CHECK(std::fabs(cg::FloatAttr(*fused[0], "scale", 0) - 1 / std::sqrt(8.f)) < 1e-6);
  for (const auto& n : p.model->graph.nodes) CHECK(n.op_type != "CastLike");
  CHECK(LaunchesOf(plan, "Softmax").empty());
}

TEST_CASE("GQA's repeated key/value heads become a head group, not a copy", "[lowering]") {
  auto p = PlanAll(Gqa(), kFp32, kFused);
  const Plan& plan = p.graph.plan;
  const auto fused = LaunchesOf(plan, "FusedAttention");
  REQUIRE(fused.size() == 1);
  CHECK(LaunchesOf(plan, "Expand").empty());
  CHECK(LaunchesOf(plan, "Transpose").empty());
  const auto& op = *fused[0];
  CHECK(op.inputs[1].dims == std::vector<int64_t>{1, 2, 8, 8});  // k itself
  CHECK(cg::IntAttr(op, "k_head_group", 1) == 2);
  CHECK(cg::IntAttr(op, "v_head_group", 1) == 2);
  CHECK(cg::IntsAttr(op, "k_shape") == std::vector<int64_t>{1, 4, 8, 8});
  CHECK(cg::IntsAttr(op, "k_strides") == std::vector<int64_t>{0, 64, 8, 1});
}

TEST_CASE("a mask added before a non-unit scale stays unfused", "[lowering]") {
  // softmax((q k^T + mask) * 0.5): the kernels add the mask after scaling, so 0.5 * mask would
  // be lost.
  ModelBuilder b(17);
  b.Input("q", {1, 2, 8, 8}).Input("kt", {1, 2, 8, 8}).Input("v", {1, 2, 8, 8});
  b.Input("mask", {1, 1, 8, 8}).Initializer("half", {}, {0.5f});
  b.Node("MatMul", {"q", "kt"}, {"qk"}).Node("Add", {"qk", "mask"}, {"m"});
  b.Node("Mul", {"m", "half"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"p", "v"}, {"y"}).Output("y");
  auto p = PlanAll(b, kFp32, kFused);
  CHECK(p.graph.stats.at("fused_attention") == 0);
  CHECK(LaunchesOf(p.graph.plan, "Softmax").size() == 1);
}

TEST_CASE("by default attention runs as GEMMs around one softmax kernel", "[lowering]") {
  auto gemms = [](const Plan& plan) {
    std::vector<const backends::cuda::PlanGemm*> out;
    for (const auto& s : plan.steps)
      if (s.kind == StepKind::kGemm) out.push_back(&s.gemm);
    return out;
  };
  SECTION("SDPA: heads read in place (rows 16 apart), the scale as the Q K^T GEMM's alpha") {
    auto p = PlanAll(Sdpa());
    const Plan& plan = p.graph.plan;
    CHECK(p.graph.stats.at("fused_attention") == 1);
    CHECK(p.graph.stats.at("attention_on_gemms") == 1);
    CHECK(LaunchesOf(plan, "FusedAttention").empty());
    const auto sm = LaunchesOf(plan, "AttentionSoftmax");
    REQUIRE(sm.size() == 1);
    CHECK(sm[0]->inputs[1].dims == std::vector<int64_t>{1, 1, 8, 8});
    // q_in [1, 8 rows, 2 heads, 8]: head h's rows are 16 elements apart, heads 8 apart. No copy
    // of q, k or v and no transpose of the output: the GEMMs read and write through the heads.
    CHECK(LaunchesOf(plan, "StridedView").empty());
    CHECK(LaunchesOf(plan, "Transpose").empty());
    const auto g = gemms(plan);
    REQUIRE(g.size() == 2);
    CHECK(std::fabs(g[0]->alpha - 1 / std::sqrt(8.f)) < 1e-6);
    CHECK((g[0]->batch == 2 && g[0]->m == 8 && g[0]->n == 8 && g[0]->k == 8));
    CHECK((g[0]->lda == 16 && g[0]->stride_a == 8));                   // q
    CHECK((g[0]->trans_b && g[0]->ldb == 16 && g[0]->stride_b == 8));  // k, read as K^T
    CHECK((g[0]->ldy == 0 && g[0]->stride_y == 64));                   // packed scores
    CHECK((g[1]->ldb == 16 && g[1]->stride_b == 8));                   // v
    CHECK((g[1]->ldy == 16 && g[1]->stride_y == 8));  // y [1, 8, 2, 8]: heads merged
    CHECK(plan.buffers[g[1]->y].name == "y");
  }
  SECTION("GQA: the query heads of one key/value head are one matrix; k and v read in place") {
    auto p = PlanAll(Gqa());
    const Plan& plan = p.graph.plan;
    CHECK(LaunchesOf(plan, "StridedView").empty());
    CHECK(LaunchesOf(plan, "Expand").empty());
    const auto g = gemms(plan);
    REQUIRE(g.size() == 2);
    // 2 key/value heads, each with 2 query heads of 8 rows: a batch of 2 [16, 8] x [8, 8].
    CHECK((g[0]->batch == 2 && g[0]->m == 16 && g[0]->n == 8 && g[0]->k == 8));
    CHECK((g[0]->stride_a == 128 && g[0]->stride_b == 64 && g[0]->stride_y == 128));
    CHECK((g[1]->batch == 2 && g[1]->m == 16 && g[1]->stride_b == 64 && g[1]->stride_y == 128));
  }
  SECTION("batch 2 from a fused projection: one GEMM pair per batch element, no copies") {
    // x [2, 8, 16] @ [16, 48] -> Split -> heads [2, 2, 8, 8]: batch elements 8 * 48 apart but
    // heads 8 apart, so no single batch stride describes (b, h); each b's heads are one batch.
    ModelBuilder b(17);
    b.Input("x", {2, 8, 16});
    b.Initializer("w", {16, 48}, RandomFloats(3, 16 * 48));
    b.IntInitializer("sizes", {16, 16, 16}).IntInitializer("heads", {2, 8, 2, 8});
    b.IntInitializer("merge", {2, 8, 16});
    b.Node("MatMul", {"x", "w"}, {"qkv"});
    b.Node("Split", {"qkv", "sizes"}, {"q0", "k0", "v0"}, {Attr("axis", int64_t{2})});
    for (const std::string n : {"q", "k", "v"}) b.Node("Reshape", {n + "0", "heads"}, {n + "1"});
    b.Node("Transpose", {"q1"}, {"q"}, {Attr("perm", kHeads)});
    b.Node("Transpose", {"k1"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 2, 3, 1})});
    b.Node("Transpose", {"v1"}, {"v"}, {Attr("perm", kHeads)});
    b.Node("MatMul", {"q", "kt"}, {"s"});
    b.Node("Softmax", {"s"}, {"p"}, {Attr("axis", int64_t{-1})});
    b.Node("MatMul", {"p", "v"}, {"o"});
    b.Node("Transpose", {"o"}, {"ot"}, {Attr("perm", kHeads)});
    b.Node("Reshape", {"ot", "merge"}, {"y"}).Output("y");
    auto p = PlanAll(b);
    const Plan& plan = p.graph.plan;
    CHECK(LaunchesOf(plan, "StridedView").empty());
    CHECK(LaunchesOf(plan, "Transpose").empty());
    const auto g = gemms(plan);
    REQUIRE(g.size() == 5);  // the projection, then Q K^T and P V per batch element
    for (size_t i = 1; i < 5; ++i) {
      CHECK(g[i]->batch == 2);
      CHECK(g[i]->stride_b == 8);  // k or v: heads 8 apart
    }
    CHECK(g[1]->lda == 48);  // q rows: the projection's width apart
  }
  SECTION("a view whose columns are not adjacent is copied before its GEMM") {
    // q stored [1, 2, d, s] and read transposed: its rows are not row-major matrices.
    ModelBuilder b(17);
    b.Input("q_t", {1, 2, 8, 8}).Input("kt", {1, 2, 8, 8}).Input("v", {1, 2, 8, 8});
    b.Node("Transpose", {"q_t"}, {"q"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
    b.Node("MatMul", {"q", "kt"}, {"scores"});
    b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})});
    b.Node("MatMul", {"p", "v"}, {"y"}).Output("y");
    auto p = PlanAll(b);
    const auto views = LaunchesOf(p.graph.plan, "StridedView");
    REQUIRE(views.size() == 1);
    CHECK(views[0]->inputs[0].dims == std::vector<int64_t>{1, 2, 8, 8});
    // kt, handed over as K^T [d, keys] row-major, is read as it is (no trans_b).
    const auto g = gemms(p.graph.plan);
    REQUIRE(g.size() == 2);
    CHECK_FALSE(g[0]->trans_b);
  }
}

}  // namespace ortc::test::cuda
