// What the generators refuse, and why: each limit gives a reason (shown by `ortc partition`)
// and a malformed request is an error, never a crash.
#include <catch2/catch.hpp>

#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, I32 = TensorProto::INT32, I64 = TensorProto::INT64,
                  B = TensorProto::BOOL;

std::string Why(const cg::OpDesc& op) {
  return cg::Unsupported(op);
}

TEST_CASE("kernel generators refuse unsupported variants with a reason", "[cuda][codegen]") {
  const std::vector<int64_t> s = {2, 3};
  CHECK(Why(Op("Relu", 14, {T(F, s)}, {T(F, s)})) == "");
  CHECK_THAT(Why(Op("Relu", 14, {T(I32, s)}, {T(I32, s)})), Catch::Contains("INT32"));
  CHECK_THAT(Why(Op("Exp", 13, {T(TensorProto::DOUBLE, s)}, {T(TensorProto::DOUBLE, s)})),
             Catch::Contains("DOUBLE"));
  CHECK_THAT(Why(Op("Dropout", 13, {T(F, s)}, {T(F, s), T(B, s)})), Catch::Contains("mask"));
  {
    auto op = Op("Dropout", 13, {T(F, s), T(F, {}), T(B, {})}, {T(F, s)});
    CHECK_THAT(Why(op), Catch::Contains("training"));
    SetConstant(op, 2, {1});
    CHECK_THAT(Why(op), Catch::Contains("training"));
    SetConstant(op, 2, {0});
    CHECK(Why(op) == "");
  }
  CHECK_THAT(Why(Op("Clip", 13, {T(F, s), T(F, {2})}, {T(F, s)})), Catch::Contains("scalar"));
  CHECK_THAT(Why(Op("Cast", 19, {T(F, s)}, {T(TensorProto::STRING, s)},
                    {AttrInt("to", TensorProto::STRING)})),
             Catch::Contains("STRING"));
  CHECK_THAT(Why(Op("Add", 14, {T(F, s), T(I32, s)}, {T(F, s)})), Catch::Contains("mixed"));
  CHECK_THAT(Why(Op("Add", 14, {T(TensorProto::INT8, s), T(TensorProto::INT8, s)},
                    {T(TensorProto::INT8, s)})),
             Catch::Contains("INT8"));
  CHECK(Why(Op("Cast", 19, {T(TensorProto::INT8, s)}, {T(F, s)}, {AttrInt("to", F)})) == "");
  CHECK_THAT(Why(Op("And", 7, {T(I32, s), T(I32, s)}, {T(B, s)})), Catch::Contains("bool"));
  CHECK_THAT(
      Why(Op("LayerNormalization", 17, {T(F, {2, 4}), T(F, {4})}, {T(F, {2, 4}), T(F, {2, 1})})),
      Catch::Contains("Mean"));
  CHECK_THAT(Why(Op("LayerNormalization", 17, {T(F, {2, 4}), T(F, {1})}, {T(F, {2, 4})})),
             Catch::Contains("broadcast"));
  CHECK_THAT(Why(Op("BatchNormalization", 15,
                    {T(F, {2, 3, 4}), T(F, {3}), T(F, {3}), T(F, {3}), T(F, {3})},
                    {T(F, {2, 3, 4})}, {AttrInt("training_mode", 1)})),
             Catch::Contains("training"));
  CHECK_THAT(Why(Op("ReduceSum", 13, {T(F, s), T(I64, {1})}, {T(F, {2})})),
             Catch::Contains("run time"));
  // Integer reductions are Sum/Max/Min/Prod (exact in int64); a mean or a norm is not.
  CHECK_THAT(Why(Op("ReduceMean", 13, {T(I32, s)}, {T(I32, {1})})), Catch::Contains("INT32"));
  CHECK_THAT(Why(Op("ReduceL2", 13, {T(I64, s)}, {T(I64, {1})})), Catch::Contains("INT64"));
  CHECK_THAT(Why(Op("ReduceSum", 11, {T(I64, s)}, {T(F, {1})})), Catch::Contains("INT64"));
  CHECK(Why(Op("ReduceMax", 13, {T(I32, s)}, {T(I32, {1})})).empty());
  CHECK_THAT(Why(Op("ReduceMean", 13, {T(F, s)}, {T(F, {1})}, {AttrInts("axes", {5})})),
             Catch::Contains("axis"));
  CHECK_THAT(Why(Op("Softmax", 13, {T(F, {})}, {T(F, {})})), Catch::Contains("scalar"));
  CHECK_THAT(Why(Op("Conv", 11, {T(F, s)}, {T(F, s)})), Catch::Contains("no CUDA kernel"));
  // EmitOp refuses with the same reason, as NotImplemented.
  auto r = cg::EmitOp("k", Op("Relu", 14, {T(I32, s)}, {T(I32, s)}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotImplemented);
}

TEST_CASE("malformed fused groups are errors, not crashes", "[cuda][codegen]") {
  const std::vector<int64_t> s = {2, 3};
  cg::FusedGroup g;
  g.inputs = {T(F, s)};
  CHECK_FALSE(cg::EmitFused("empty", g).ok());
  g.ops.push_back({Op("Relu", 14, {T(F, s)}, {T(F, s)}), {3}});  // no group input 3
  g.outputs = {0};
  CHECK_FALSE(cg::EmitFused("bad_input", g).ok());
  g.ops[0].args = {-1};  // its own output
  CHECK_FALSE(cg::EmitFused("self", g).ok());
  g.ops[0].args = {0, 0};  // too many arguments
  CHECK_FALSE(cg::EmitFused("arity", g).ok());
  g.ops[0].args = {0};
  g.outputs = {7};
  CHECK_FALSE(cg::EmitFused("bad_output", g).ok());
  g.outputs = {0};
  g.inputs = {T(F, {4})};  // does not broadcast to [2, 3]
  CHECK_FALSE(cg::EmitFused("no_broadcast", g).ok());
  g.inputs = {T(F, s)};
  CHECK(cg::EmitFused("fine", g).ok());
}

}  // namespace
}  // namespace ortc::test::cuda
