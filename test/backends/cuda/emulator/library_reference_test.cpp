// The host references of ConvCall and GemmCall on hand-computed cases, so the emulator's
// library calls are checked independently of the compiler that fills them.
#include <catch2/catch.hpp>

#include <vector>

#include "library_reference.h"

using namespace ortc::test::cuda;
namespace fbc = ortc::fb::cuda;

namespace {

StoredTensor F(std::vector<float>& v) {
  return {v.data(), 1, static_cast<int64_t>(v.size())};
}

const fbc::ConvCall* Conv(flatbuffers::FlatBufferBuilder& fbb, std::vector<int64_t> x,
                          std::vector<int64_t> w, std::vector<int64_t> y, std::vector<int64_t> pads,
                          std::vector<int64_t> strides, bool transposed, fbc::TensorLayout layout,
                          fbc::Activation act = fbc::Activation::None, float alpha2 = 0,
                          int64_t group = 1) {
  std::vector<int64_t> dil(strides.size(), 1);
  auto c = fbc::CreateConvCallDirect(fbb, 0, 1, -1, -1, 2, &x, &w, &y, &pads, &strides, &dil, group,
                                     transposed, act, 1.f, alpha2, layout, 1);
  fbb.Finish(c);
  return flatbuffers::GetRoot<fbc::ConvCall>(fbb.GetBufferPointer());
}

}  // namespace

TEST_CASE("reference conv: 3x3 input, 2x2 filter, pad 0, stride 1", "[reference]") {
  flatbuffers::FlatBufferBuilder fbb;
  const auto* c = Conv(fbb, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 1, 2, 2}, {0, 0, 0, 0}, {1, 1}, false,
                       fbc::TensorLayout::NCHW);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 0, 0, -1}, y(4), bias = {10};
  StoredTensor b = F(bias);
  REQUIRE(ReferenceConv(*c, F(x), F(w), &b, nullptr, F(y)).ok());
  // x[i][j] - x[i+1][j+1] = -4 everywhere, plus the bias.
  CHECK(y == std::vector<float>{6, 6, 6, 6});
}

TEST_CASE("reference conv: NHWC storage and KRSC filter give the NCHW result transposed",
          "[reference]") {
  // 2 input channels, 1x2 image, 1x1 filter to 2 output channels, Relu, residual z (alpha2 1).
  flatbuffers::FlatBufferBuilder fbb;
  const auto* c = Conv(fbb, {1, 2, 1, 2}, {2, 2, 1, 1}, {1, 2, 1, 2}, {0, 0, 0, 0}, {1, 1}, false,
                       fbc::TensorLayout::NHWC, fbc::Activation::Relu, 1.f);
  // NHWC x: pixel0 (c0=1, c1=2), pixel1 (c0=3, c1=4); filter KRSC == KC: k0=(1,1), k1=(1,-1).
  std::vector<float> x = {1, 2, 3, 4}, w = {1, 1, 1, -1}, z = {0.5f, 0.5f, 0.5f, 0.5f}, y(4);
  StoredTensor zt = F(z);
  REQUIRE(ReferenceConv(*c, F(x), F(w), nullptr, &zt, F(y)).ok());
  // pixel0: k0 = 3.5, k1 = relu(-0.5) = 0; pixel1: k0 = 7.5, k1 = relu(-0.5) = 0.
  CHECK(y == std::vector<float>{3.5f, 0, 7.5f, 0});
}

TEST_CASE("reference conv: transposed, stride 2, scatters each input under the filter",
          "[reference]") {
  flatbuffers::FlatBufferBuilder fbb;
  const auto* c = Conv(fbb, {1, 1, 1, 2}, {1, 1, 1, 2}, {1, 1, 1, 4}, {0, 0, 0, 0}, {1, 2}, true,
                       fbc::TensorLayout::NCHW);
  std::vector<float> x = {1, 2}, w = {3, 5}, y(4);
  REQUIRE(ReferenceConv(*c, F(x), F(w), nullptr, nullptr, F(y)).ok());
  CHECK(y == std::vector<float>{3, 5, 6, 10});
}

TEST_CASE("reference conv: groups pair input and output channels", "[reference]") {
  flatbuffers::FlatBufferBuilder fbb;
  const auto* c = Conv(fbb, {1, 2, 1, 1}, {2, 1, 1, 1}, {1, 2, 1, 1}, {0, 0, 0, 0}, {1, 1}, false,
                       fbc::TensorLayout::NCHW, fbc::Activation::None, 0, 2);
  std::vector<float> x = {2, 3}, w = {10, 100}, y(2);
  REQUIRE(ReferenceConv(*c, F(x), F(w), nullptr, nullptr, F(y)).ok());
  CHECK(y == std::vector<float>{20, 300});
}

TEST_CASE("reference gemm: transposes, alpha/beta, bias per column, batch stride 0",
          "[reference]") {
  flatbuffers::FlatBufferBuilder fbb;
  // op(a) = [[1,2],[3,4]] stored transposed as [[1,3],[2,4]]; b = [[1,0],[0,1]] shared by both
  // batches (stride 0); y = 2 * a @ b + 1 * c + bias.
  auto g = fbc::CreateGemmCall(fbb, 0, 1, 2, 3, 4, 2, 2, 2, 2, 4, 0, 4, true, false, 2.f, 1.f,
                               fbc::Activation::None, 1);
  fbb.Finish(g);
  const auto* call = flatbuffers::GetRoot<fbc::GemmCall>(fbb.GetBufferPointer());
  std::vector<float> a = {1, 3, 2, 4, -1, -3, -2, -4}, b = {1, 0, 0, 1}, c(8, 1.f), bias = {0, 100},
                     y(8);
  StoredTensor ct = F(c), bt = F(bias);
  REQUIRE(ReferenceGemm(*call, F(a), F(b), &ct, &bt, F(y)).ok());
  CHECK(y == std::vector<float>{3, 105, 7, 109, -1, 97, -5, 93});
}

TEST_CASE("reference gemm: tanh Gelu epilogue and bfloat16 storage", "[reference]") {
  flatbuffers::FlatBufferBuilder fbb;
  auto g = fbc::CreateGemmCall(fbb, 0, 1, -1, -1, 2, 1, 1, 1, 1, 0, 0, 0, false, false, 1.f, 0.f,
                               fbc::Activation::Gelu, 1);
  fbb.Finish(g);
  const auto* call = flatbuffers::GetRoot<fbc::GemmCall>(fbb.GetBufferPointer());
  // bfloat16 1.0 = 0x3f80, 2.0 = 0x4000: y = gelu_tanh(2) = 1.95459769 -> bf16 1.953125 (0x3ffa).
  std::vector<uint16_t> a = {0x3f80}, b = {0x4000}, y = {0};
  REQUIRE(ReferenceGemm(*call, {a.data(), 16, 1}, {b.data(), 16, 1}, nullptr, nullptr,
                        {y.data(), 16, 1})
              .ok());
  CHECK(y[0] == 0x3ffa);
}

TEST_CASE("reference calls refuse buffers smaller than their dims", "[reference]") {
  flatbuffers::FlatBufferBuilder fbb;
  const auto* c = Conv(fbb, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 1, 2, 2}, {0, 0, 0, 0}, {1, 1}, false,
                       fbc::TensorLayout::NCHW);
  std::vector<float> x(8), w(4), y(4);
  CHECK_FALSE(ReferenceConv(*c, F(x), F(w), nullptr, nullptr, F(y)).ok());
}
