// Kernels given operands of unexpected types, sizes or values: each gives a clear error or a
// defined result, never an out-of-bounds access, a division trap or undefined arithmetic. Found
// by reviewing the kernels after fuzz_model's Slice finding (the fuzz target and the sanitizer
// build run these too): Where and the int64 Add path read a narrower operand with the wider
// operand's element size; int64 Div of INT64_MIN by -1 trapped and uint64 Div was signed; Abs and
// Neg overflowed on INT64_MIN; bitwise ops went through double (wrong above 2^53, undefined
// conversions); quantization parameters were read past their ends; Einsum indexed a repeated
// output label past its input; Unique sorted NaN with no strict order; Loop, window and DFT
// sizes converted from double undefined or allocated terabytes for empty tensors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model_builder.h"
#include "ortc/runtime.h"

using ortc::DataType;
using ortc::Tensor;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

using Inputs = std::vector<std::pair<std::string, Tensor>>;

// The run's outputs, or its error message (load errors prefixed "load: ").
struct Outcome {
  std::vector<Tensor> outputs;
  std::string error;
  bool ok() const { return error.empty(); }
};

Outcome RunModel(const ModelBuilder& m, const Inputs& inputs) {
  const std::string bytes = m.Serialize();
  auto session = ortc::Session::CreateFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  if (!session.ok()) return {{}, "load: " + session.status().message()};
  auto out = (*session)->Run(inputs);
  if (!out.ok()) return {{}, out.status().message().empty() ? "error" : out.status().message()};
  return {*out, ""};
}

template <typename E>
Tensor Make(DataType dtype, std::vector<int64_t> shape, const std::vector<E>& values) {
  return Tensor::FromBytes(dtype, std::move(shape), values.data(), values.size() * sizeof(E));
}

template <typename E>
std::vector<E> Values(const Tensor& t) {
  return std::vector<E>(t.data<E>(), t.data<E>() + t.elements());
}

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr uint64_t kAllOnes = std::numeric_limits<uint64_t>::max();

}  // namespace

TEST_CASE("Where needs a bool condition and one type on both sides", "[hostile_operands]") {
  ModelBuilder m;
  m.Input("c", {2}, T::FLOAT).Input("a", {2}, T::DOUBLE).Input("b", {2}, T::INT8);
  m.Node("Where", {"c", "a", "b"}, {"y"}).Output("y", T::DOUBLE);
  const Tensor a = Make<double>(DataType::kDouble, {2}, {1, 2});
  const Tensor b = Make<int8_t>(DataType::kInt8, {2}, {3, 4});
  CHECK_THAT(
      RunModel(m, {{"c", Make<float>(DataType::kFloat, {2}, {0, 1})}, {"a", a}, {"b", b}}).error,
      Catch::Contains("the condition must be bool"));
  ModelBuilder mixed;
  mixed.Input("c", {2}, T::BOOL).Input("a", {2}, T::DOUBLE).Input("b", {2}, T::INT8);
  mixed.Node("Where", {"c", "a", "b"}, {"y"}).Output("y", T::DOUBLE);
  const std::vector<uint8_t> cond = {0, 1};
  const Tensor c = Tensor::FromBytes(DataType::kBool, {2}, cond.data(), 2);
  CHECK_THAT(RunModel(mixed, {{"c", c}, {"a", a}, {"b", b}}).error,
             Catch::Contains("X and Y must have one type"));
}

TEST_CASE("integer arithmetic at the int64 limits is defined", "[hostile_operands]") {
  // int64 + int32: the exact int64 path read B as int64 (16 bytes of an 8-byte buffer).
  ModelBuilder add;
  add.Input("a", {2}, T::INT64).Input("b", {2}, T::INT32).Node("Add", {"a", "b"}, {"y"});
  auto r =
      RunModel(add.Output("y", T::INT64), {{"a", Make<int64_t>(DataType::kInt64, {2}, {1, 2})},
                                           {"b", Make<int32_t>(DataType::kInt32, {2}, {3, 4})}});
  REQUIRE(r.ok());
  CHECK(Values<int64_t>(r.outputs[0]) == std::vector<int64_t>{4, 6});

  ModelBuilder div;
  div.Input("a", {2}, T::INT64).Input("b", {2}, T::INT64).Node("Div", {"a", "b"}, {"y"});
  r = RunModel(div.Output("y", T::INT64), {{"a", Make<int64_t>(DataType::kInt64, {2}, {kMin, 7})},
                                           {"b", Make<int64_t>(DataType::kInt64, {2}, {-1, -2})}});
  REQUIRE(r.ok());
  CHECK(Values<int64_t>(r.outputs[0]) == std::vector<int64_t>{kMin, -3});

  ModelBuilder udiv;
  udiv.Input("a", {2}, T::UINT64).Input("b", {2}, T::UINT64).Node("Div", {"a", "b"}, {"y"});
  r = RunModel(udiv.Output("y", T::UINT64),
               {{"a", Make<uint64_t>(DataType::kUint64, {2}, {uint64_t{1} << 63, kAllOnes})},
                {"b", Make<uint64_t>(DataType::kUint64, {2}, {kAllOnes, 2})}});
  REQUIRE(r.ok());
  CHECK(Values<uint64_t>(r.outputs[0]) == std::vector<uint64_t>{0, kAllOnes / 2});

  for (const char* op : {"Abs", "Neg"}) {
    ModelBuilder m;
    m.Input("a", {2}, T::INT64).Node(op, {"a"}, {"y"});
    r = RunModel(m.Output("y", T::INT64),
                 {{"a", Make<int64_t>(DataType::kInt64, {2}, {kMin, -5})}});
    REQUIRE(r.ok());
    CHECK(Values<int64_t>(r.outputs[0]) ==
          std::vector<int64_t>{kMin, std::string(op) == "Abs" ? 5 : 5});
  }
}

TEST_CASE("bitwise ops work on the bits of integers of one type", "[hostile_operands]") {
  ModelBuilder shift;
  shift.Input("a", {1}, T::UINT64).Input("b", {1}, T::UINT64);
  shift.Node("BitShift", {"a", "b"}, {"y"}, {Attr("direction", "RIGHT")});
  auto r = RunModel(shift.Output("y", T::UINT64),
                    {{"a", Make<uint64_t>(DataType::kUint64, {1}, {kAllOnes})},
                     {"b", Make<uint64_t>(DataType::kUint64, {1}, {1})}});
  REQUIRE(r.ok());
  CHECK(Values<uint64_t>(r.outputs[0]) == std::vector<uint64_t>{kAllOnes >> 1});

  ModelBuilder signed_shift;
  signed_shift.Input("a", {1}, T::INT8).Input("b", {1}, T::INT8);
  signed_shift.Node("BitShift", {"a", "b"}, {"y"}, {Attr("direction", "LEFT")});
  CHECK_THAT(
      RunModel(signed_shift.Output("y", T::INT8), {{"a", Make<int8_t>(DataType::kInt8, {1}, {-1})},
                                                   {"b", Make<int8_t>(DataType::kInt8, {1}, {-1})}})
          .error,
      Catch::Contains("operands must be unsigned integers of one type"));

  ModelBuilder band;
  band.Input("a", {1}, T::UINT64).Input("b", {1}, T::UINT64).Node("BitwiseAnd", {"a", "b"}, {"y"});
  r = RunModel(band.Output("y", T::UINT64),
               {{"a", Make<uint64_t>(DataType::kUint64, {1}, {kAllOnes})},
                {"b", Make<uint64_t>(DataType::kUint64, {1}, {(uint64_t{1} << 63) | 1})}});
  REQUIRE(r.ok());
  CHECK(Values<uint64_t>(r.outputs[0]) == std::vector<uint64_t>{(uint64_t{1} << 63) | 1});

  ModelBuilder bnot;
  bnot.Input("a", {2}, T::INT8).Node("BitwiseNot", {"a"}, {"y"});
  r = RunModel(bnot.Output("y", T::INT8), {{"a", Make<int8_t>(DataType::kInt8, {2}, {-1, 0})}});
  REQUIRE(r.ok());
  CHECK(Values<int8_t>(r.outputs[0]) == std::vector<int8_t>{0, -1});

  ModelBuilder fnot;
  fnot.Input("a", {1}, T::FLOAT).Node("BitwiseNot", {"a"}, {"y"});
  CHECK_THAT(RunModel(fnot.Output("y"), {{"a", Make<float>(DataType::kFloat, {1}, {NAN})}}).error,
             Catch::Contains("the operand must be an integer"));
}

TEST_CASE("quantization parameters must match the axis and each other", "[hostile_operands]") {
  const Tensor x = Make<float>(DataType::kFloat, {1, 4}, {1, 2, 3, 4});
  struct Case {
    std::vector<float> scale;
    std::vector<int64_t> zero_point;  // int64 elements; empty: a float zero point of 1 element
    bool float_zero_point;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{1, 1}, {}, false, "the scale must have one element or one per index of the axis"},
      {{}, {}, false, "the scale must have one element or one per index of the axis"},
      {{1, 1, 1, 1}, {0}, false, "the zero point must be an integer tensor"},
      {{1}, {}, true, "the zero point must be an integer tensor"}};
  for (const auto& k : cases) {
    ModelBuilder m;
    m.Input("x", {1, 4}).Initializer("s", {static_cast<int64_t>(k.scale.size())}, k.scale);
    std::vector<std::string> ins = {"x", "s"};
    if (k.float_zero_point) {
      m.Initializer("z", {1}, {0.f});
      ins.push_back("z");
    } else if (!k.zero_point.empty()) {
      m.IntInitializer("z", k.zero_point);
      ins.push_back("z");
    }
    m.Node("QuantizeLinear", ins, {"y"}, {Attr("axis", int64_t{1})});
    INFO(k.expect);
    CHECK_THAT(RunModel(m.Output("y", T::UINT8), {{"x", x}}).error, Catch::Contains(k.expect));
  }
  ModelBuilder dq;
  dq.Input("x", {2}, T::UINT8).Initializer("s", {}, {1.f}).Input("z", {}, T::INT32);
  dq.Node("DequantizeLinear", {"x", "s", "z"}, {"y"});
  const std::vector<uint8_t> xq = {0, 200};
  CHECK_THAT(
      RunModel(dq.Output("y"),
               {{"x", Tensor::FromBytes(DataType::kUint8, {2}, xq.data(), 2)},
                {"z", Make<int32_t>(DataType::kInt32, {}, {std::numeric_limits<int32_t>::min()})}})
          .error,
      Catch::Contains("the zero point must have x's type"));

  // An infinite input made the zero point inf / inf = NaN, converted to uint8 undefined.
  ModelBuilder dyn;
  dyn.Input("x", {2}).Node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"});
  auto r = RunModel(dyn.Output("y", T::UINT8).Output("s").Output("z", T::UINT8),
                    {{"x", Make<float>(DataType::kFloat, {2}, {-INFINITY, 1})}});
  REQUIRE(r.ok());
  CHECK(r.outputs[2].data<uint8_t>()[0] == 0);

  ModelBuilder qmm;
  qmm.Input("a", {1, 1}, T::UINT8).Initializer("sa", {0}, {}).IntInitializer("za", {0});
  qmm.Input("b", {1, 1}, T::UINT8).Initializer("sb", {}, {1.f}).Initializer("sy", {}, {1.f});
  qmm.Input("zy", {}, T::UINT8);
  qmm.Node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "za", "sy", "zy"}, {"y"});
  const uint8_t one = 1;
  CHECK_THAT(RunModel(qmm.Output("y", T::UINT8),
                      {{"a", Tensor::FromBytes(DataType::kUint8, {1, 1}, &one, 1)},
                       {"b", Tensor::FromBytes(DataType::kUint8, {1, 1}, &one, 1)},
                       {"zy", Tensor::FromBytes(DataType::kUint8, {}, &one, 1)}})
                 .error,
             Catch::Contains("scales and zero points must not be empty"));
}

TEST_CASE("Einsum refuses a repeated output label and an unbounded sum", "[hostile_operands]") {
  ModelBuilder diag;
  diag.Input("x", {3}).Node("Einsum", {"x"}, {"y"}, {Attr("equation", "i->ii")});
  CHECK_THAT(
      RunModel(diag.Output("y"), {{"x", Make<float>(DataType::kFloat, {3}, {1, 2, 3})}}).error,
      Catch::Contains("an output label is repeated"));
  ModelBuilder outer;
  outer.Input("a", {int64_t{1} << 21}).Input("b", {int64_t{1} << 20});
  outer.Node("Einsum", {"a", "b"}, {"y"}, {Attr("equation", "i,j->")});
  const std::vector<float> a(size_t{1} << 21, 1.f), b(size_t{1} << 20, 1.f);
  CHECK_THAT(RunModel(outer.Output("y"), {{"a", Make<float>(DataType::kFloat, {1 << 21}, a)},
                                          {"b", Make<float>(DataType::kFloat, {1 << 20}, b)}})
                 .error,
             Catch::Contains("sums over more than 2^40 terms"));
}

TEST_CASE("SplitToSequence sizes cannot overflow their sum", "[hostile_operands]") {
  ModelBuilder m(17);
  m.Input("x", {2}).IntInitializer("split", {std::numeric_limits<int64_t>::max(), 3});
  m.Node("SplitToSequence", {"x", "split"}, {"s"});
  m.Node("ConcatFromSequence", {"s"}, {"y"}, {Attr("axis", int64_t{0})});
  CHECK_THAT(
      RunModel(m.Output("y"), {{"x", Make<float>(DataType::kFloat, {2}, {1, 2})}}).error,
      Catch::Contains("split sizes must not be negative and must add up to the axis length"));
}

TEST_CASE("Unique orders NaN after every number and counts NaNs as one value",
          "[hostile_operands]") {
  ModelBuilder m;
  m.Input("x", {6}).Node("Unique", {"x"}, {"y", "first", "inverse", "counts"});
  m.Output("y").Output("first", T::INT64).Output("inverse", T::INT64).Output("counts", T::INT64);
  auto r = RunModel(m, {{"x", Make<float>(DataType::kFloat, {6}, {NAN, 1, NAN, 0, 1, -2})}});
  REQUIRE(r.ok());
  const auto y = Values<float>(r.outputs[0]);
  REQUIRE(y.size() == 4);
  CHECK(y[0] == -2.f);
  CHECK(y[1] == 0.f);
  CHECK(y[2] == 1.f);
  CHECK(std::isnan(y[3]));
  CHECK(Values<int64_t>(r.outputs[3]) == std::vector<int64_t>{1, 1, 2, 2});
  CHECK(Values<int64_t>(r.outputs[2]) == std::vector<int64_t>{3, 2, 3, 1, 2, 0});
}

TEST_CASE("sizes read from integer inputs convert without going through double",
          "[hostile_operands]") {
  // HannWindow's size of 2^63 + 5 through double converted back undefined.
  ModelBuilder window(17);
  window.Input("n", {}, T::UINT64).Node("HannWindow", {"n"}, {"y"});
  const auto huge = Make<uint64_t>(DataType::kUint64, {}, {(uint64_t{1} << 63) + 5});
  CHECK_THAT(RunModel(window.Output("y"), {{"n", huge}}).error,
             Catch::Contains("size must not be negative"));
  // DFT of an empty signal with a 2^39-point length: the plan alone took terabytes.
  ModelBuilder dft(17);
  dft.Input("x", {0, 4, 1}).IntInitializer("n", {int64_t{1} << 39});
  dft.proto().mutable_graph()->mutable_initializer(0)->clear_dims();
  dft.Node("DFT", {"x", "n"}, {"y"}, {Attr("axis", int64_t{1})});
  auto r = RunModel(dft.Output("y"), {{"x", Tensor::Allocate(DataType::kFloat, {0, 4, 1})}});
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(r.outputs[0].elements() == 0);
}

TEST_CASE("kernels on an empty tensor with a long axis allocate nothing for it",
          "[hostile_operands]") {
  // MeanVarianceNormalization's statistics were 2^37 entries each for an empty input.
  ModelBuilder mvn;
  mvn.Input("x", {-1, -1, -1, -1}).Node("MeanVarianceNormalization", {"x"}, {"y"});
  const std::vector<int64_t> shape = {0, int64_t{1} << 37, 1, 1};
  auto r =
      RunModel(mvn.Output("y"), {{"x", Tensor::Borrow(DataType::kFloat, shape, nullptr, nullptr)}});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == shape);
  // MaxUnpool's natural output of 2^96 elements overflowed its strides.
  ModelBuilder unpool;
  const int64_t w = int64_t{1} << 31;
  unpool.Input("x", {1, 1, 2, 2, 2}).Input("i", {1, 1, 2, 2, 2}, T::INT64);
  unpool.IntInitializer("shape", {1, 1, 1, 1, 1});
  unpool.Node("MaxUnpool", {"x", "i", "shape"}, {"y"},
              {Attr("kernel_shape", std::vector<int64_t>{w, w, w}),
               Attr("strides", std::vector<int64_t>{w, w, w})});
  r = RunModel(unpool.Output("y"), {{"x", Tensor::Allocate(DataType::kFloat, {1, 1, 2, 2, 2})},
                                    {"i", Tensor::Allocate(DataType::kInt64, {1, 1, 2, 2, 2})}});
  CHECK_THAT(r.error, Catch::Contains("MaxUnpool's output would have more than 2^40 elements"));
}

TEST_CASE("integer convolutions take 8-bit operands and zero points of their types",
          "[hostile_operands]") {
  ModelBuilder conv;
  conv.Input("x", {1, 1, 1, 1}, T::INT32).Input("w", {1, 1, 1, 1}, T::INT32);
  conv.Node("ConvInteger", {"x", "w"}, {"y"});
  const Tensor one32 = Make<int32_t>(DataType::kInt32, {1, 1, 1, 1}, {1});
  CHECK_THAT(RunModel(conv.Output("y", T::INT32), {{"x", one32}, {"w", one32}}).error,
             Catch::Contains("input and weights must be uint8 or int8 tensors"));
  ModelBuilder q;
  q.Input("x", {1, 1, 1, 1}, T::UINT8).Initializer("xs", {}, {1.f}).Initializer("xz", {}, {NAN});
  q.Input("w", {1, 1, 1, 1}, T::INT8).Initializer("ws", {}, {1.f});
  q.Input("wz", {}, T::INT8).Initializer("ys", {}, {1.f}).Input("yz", {}, T::UINT8);
  q.Node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"});
  const uint8_t u = 1;
  const int8_t s = 1, z = 0;
  CHECK_THAT(RunModel(q.Output("y", T::UINT8),
                      {{"x", Tensor::FromBytes(DataType::kUint8, {1, 1, 1, 1}, &u, 1)},
                       {"w", Tensor::FromBytes(DataType::kInt8, {1, 1, 1, 1}, &s, 1)},
                       {"wz", Tensor::FromBytes(DataType::kInt8, {}, &z, 1)},
                       {"yz", Tensor::FromBytes(DataType::kUint8, {}, &u, 1)}})
                 .error,
             Catch::Contains("x_zero_point and w_zero_point must have x's and w's types"));
}

TEST_CASE("convolution and pooling geometry checks come before arithmetic on it",
          "[hostile_operands]") {
  // ConvTranspose divided by group before checking it (SIGFPE for group 0).
  ModelBuilder ct;
  ct.Input("x", {1, 1, 2, 2}).Input("w", {1, 1, 1, 1});
  ct.Node("ConvTranspose", {"x", "w"}, {"y"}, {Attr("group", int64_t{0})});
  const Tensor x = Tensor::Allocate(DataType::kFloat, {1, 1, 2, 2});
  CHECK_THAT(
      RunModel(ct.Output("y"), {{"x", x}, {"w", Tensor::Allocate(DataType::kFloat, {1, 1, 1, 1})}})
          .error,
      Catch::Contains("channels do not match the weights and groups"));
  // A Conv over 0 channels accepted any group, and its loops ran 2^62 times.
  ModelBuilder conv;
  conv.Input("x", {1, 0, 1, 1}, T::DOUBLE).Input("w", {0, 0, 1, 1}, T::DOUBLE);
  conv.Node("Conv", {"x", "w"}, {"y"}, {Attr("group", int64_t{1} << 62)});
  CHECK_THAT(RunModel(conv.Output("y", T::DOUBLE),
                      {{"x", Tensor::Allocate(DataType::kDouble, {1, 0, 1, 1})},
                       {"w", Tensor::Allocate(DataType::kDouble, {0, 0, 1, 1})}})
                 .error,
             Catch::Contains("channels do not match the weights and groups"));
  // MaxPool's column-major indices of a window with no tap inside took best % 0.
  ModelBuilder pool;
  pool.Input("x", {1, 1, 1, 0});
  pool.Node("MaxPool", {"x"}, {"y", "i"},
            {Attr("kernel_shape", std::vector<int64_t>{1, 1}),
             Attr("pads", std::vector<int64_t>{0, 0, 0, 1}), Attr("storage_order", int64_t{1})});
  auto r = RunModel(pool.Output("y").Output("i", T::INT64),
                    {{"x", Tensor::Allocate(DataType::kFloat, {1, 1, 1, 0})}});
  REQUIRE(r.ok());
  CHECK(r.outputs[0].shape() == std::vector<int64_t>{1, 1, 1, 1});
}

TEST_CASE("Resize checks roi, scales and output lengths before using them", "[hostile_operands]") {
  const Tensor x = Make<float>(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  struct Case {
    std::vector<float> roi, scales;
    std::vector<int64_t> sizes;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{0, 0, 0, 1, 1, 1}, {1, 1}, {}, "roi must have a start and an end per axis"},
      {{0, 0, 1, NAN}, {1, 1}, {}, "roi must be finite"},
      {{}, {1, NAN}, {}, "scales or sizes give an output length that is not in [0, 2^40]"},
      {{}, {1, 0}, {}, "scales must be finite and positive"},
      {{}, {1, 1e30f}, {}, "scales or sizes give an output length that is not in [0, 2^40]"},
      {{}, {}, {2, int64_t{1} << 41}, "the output would have more than 2^40 elements"}};
  for (const auto& k : cases) {
    ModelBuilder m(13);
    m.Input("x", {2, 3}).Initializer("roi", {static_cast<int64_t>(k.roi.size())}, k.roi);
    m.Initializer("scales", {static_cast<int64_t>(k.scales.size())}, k.scales);
    std::vector<std::string> ins = {"x", "roi", "scales"};
    if (!k.sizes.empty()) {
      m.IntInitializer("sizes", k.sizes);
      ins.push_back("sizes");
    }
    m.Node("Resize", ins, {"y"}, {Attr("coordinate_transformation_mode", "tf_crop_and_resize")});
    INFO(k.expect);
    CHECK_THAT(RunModel(m.Output("y"), {{"x", x}}).error, Catch::Contains(k.expect));
  }
  // Cubic with exclude_outside where every tap of an output lies outside: the empty tap list
  // was read at its first entry. It now takes the edge value.
  ModelBuilder cubic(18);
  cubic.Input("x", {1, 1, 4, 3}).Initializer("roi", {0}, {}).Initializer("scales", {0}, {});
  cubic.IntInitializer("sizes", {1, 1, 2, 100});
  cubic.Node("Resize", {"x", "roi", "scales", "sizes"}, {"y"},
             {Attr("mode", "cubic"), Attr("exclude_outside", int64_t{1}),
              Attr("coordinate_transformation_mode", "align_corners"),
              Attr("keep_aspect_ratio_policy", "not_larger")});
  std::vector<float> pixels(12);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>(i);
  auto r =
      RunModel(cubic.Output("y"), {{"x", Make<float>(DataType::kFloat, {1, 1, 4, 3}, pixels)}});
  REQUIRE(r.ok());
  for (float v : Values<float>(r.outputs[0])) CHECK(std::isfinite(v));
}

TEST_CASE("RoiAlign refuses a box that is not finite", "[hostile_operands]") {
  ModelBuilder m;
  m.Input("x", {1, 1, 4, 4}).Initializer("rois", {1, 4}, {0, 0, NAN, 1});
  m.IntInitializer("idx", {0});
  m.Node("RoiAlign", {"x", "rois", "idx"}, {"y"},
         {Attr("sampling_ratio", int64_t{1}), Attr("output_height", int64_t{2}),
          Attr("output_width", int64_t{2})});
  CHECK_THAT(
      RunModel(m.Output("y"), {{"x", Tensor::Allocate(DataType::kFloat, {1, 1, 4, 4})}}).error,
      Catch::Contains("is not finite or needs too many samples"));
}

TEST_CASE("TfIdfVectorizer refuses an ngram index whose successor overflows",
          "[hostile_operands]") {
  ModelBuilder m(9);
  m.Input("x", {3}, T::INT64);
  m.Node(
      "TfIdfVectorizer", {"x"}, {"y"},
      {Attr("mode", "TF"), Attr("min_gram_length", int64_t{1}), Attr("max_gram_length", int64_t{1}),
       Attr("max_skip_count", int64_t{0}), Attr("ngram_counts", std::vector<int64_t>{0}),
       Attr("ngram_indexes", std::vector<int64_t>{std::numeric_limits<int64_t>::max()}),
       Attr("pool_int64s", std::vector<int64_t>{5})});
  CHECK_THAT(
      RunModel(m.Output("y"), {{"x", Make<int64_t>(DataType::kInt64, {3}, {5, 5, 1})}}).error,
      Catch::Contains("ngram_indexes must be in [0, 2^40)"));
}

TEST_CASE("Loop reads its trip count as an integer", "[hostile_operands]") {
  // A float M of 1e30 (or INT64_MAX through double, 2^63) converted to int64 undefined.
  ModelBuilder body;
  body.Input("iter", {}, T::INT64).Input("cond_in", {}, T::BOOL);
  body.Node("Identity", {"cond_in"}, {"cond_out"}).Output("cond_out", T::BOOL);
  ModelBuilder m;
  m.Input("x", {1}).Initializer("trips", {}, {1e30f});
  m.Node("Loop", {"trips", ""}, {}, {Attr("body", body.proto().graph())});
  m.Node("Identity", {"x"}, {"y"}).Output("y");
  CHECK_THAT(RunModel(m, {{"x", Make<float>(DataType::kFloat, {1}, {1})}}).error,
             Catch::Contains("M must be an integer scalar"));
}

TEST_CASE("SequenceMap's body must give tensors", "[hostile_operands]") {
  // An empty sequence as the body's output made a sequence of sequences, whose items
  // ConcatFromSequence then copied from null data.
  ModelBuilder body(17);
  body.Input("t", {1}).Node("SequenceEmpty", {}, {"s"}).Output("s");
  ModelBuilder m(17);
  m.Input("x", {1}).Node("SequenceConstruct", {"x"}, {"seq"});
  m.Node("SequenceMap", {"seq"}, {"mapped"}, {Attr("body", body.proto().graph())});
  m.Node("ConcatFromSequence", {"mapped"}, {"y"},
         {Attr("axis", int64_t{0}), Attr("new_axis", int64_t{1})});
  CHECK_THAT(RunModel(m.Output("y"), {{"x", Make<float>(DataType::kFloat, {1}, {1})}}).error,
             Catch::Contains("the body's outputs must be tensors"));
}

TEST_CASE("index and position kernels check what they read", "[hostile_operands]") {
  // ArgMax over an empty axis read element 0 of each slice of an empty tensor.
  ModelBuilder arg;
  arg.Input("x", {1, 0, 100}).Node("ArgMax", {"x"}, {"y"}, {Attr("axis", int64_t{1})});
  CHECK_THAT(
      RunModel(arg.Output("y", T::INT64), {{"x", Tensor::Allocate(DataType::kFloat, {1, 0, 100})}})
          .error,
      Catch::Contains("cannot take the arg max or min over an empty axis"));
  // OneHot read values[1] of a one-element values, and converted NaN depths and indices.
  const Tensor indices = Make<float>(DataType::kFloat, {3}, {0, NAN, 1e30f});
  struct Case {
    std::vector<float> depth, values;
    std::string expect;
  };
  for (const auto& k : std::vector<Case>{{{3}, {0}, "values must have two elements"},
                                         {{NAN}, {0, 1}, "depth must be in [0, 2^40]"},
                                         {{}, {0, 1}, "depth must be one number"}}) {
    ModelBuilder m;
    m.Input("i", {3}).Initializer("d", {static_cast<int64_t>(k.depth.size())}, k.depth);
    m.Initializer("v", {static_cast<int64_t>(k.values.size())}, k.values);
    m.Node("OneHot", {"i", "d", "v"}, {"y"});
    INFO(k.expect);
    CHECK_THAT(RunModel(m.Output("y"), {{"i", indices}}).error, Catch::Contains(k.expect));
  }
  ModelBuilder hot;
  hot.Input("i", {3}).Initializer("d", {1}, {2}).Initializer("v", {2}, {0, 1});
  hot.Node("OneHot", {"i", "d", "v"}, {"y"});
  auto r = RunModel(hot.Output("y"), {{"i", indices}});
  REQUIRE(r.ok());
  // Index 0 is hot at 0; NaN and 1e30 select nothing.
  CHECK(Values<float>(r.outputs[0]) == std::vector<float>{1, 0, 0, 0, 0, 0});
  // EyeLike's r + k overflowed for k = INT64_MAX.
  ModelBuilder eye;
  eye.Input("x", {2, 2})
      .Node("EyeLike", {"x"}, {"y"}, {Attr("k", std::numeric_limits<int64_t>::max())});
  r = RunModel(eye.Output("y"), {{"x", Tensor::Allocate(DataType::kFloat, {2, 2})}});
  REQUIRE(r.ok());
  CHECK(Values<float>(r.outputs[0]) == std::vector<float>{0, 0, 0, 0});
  // SpaceToDepth's C * b * b overflowed for an empty input of 2^40 channels.
  ModelBuilder s2d;
  s2d.Input("x", {-1, -1, -1, -1})
      .Node("SpaceToDepth", {"x"}, {"y"}, {Attr("blocksize", int64_t{1} << 20)});
  const std::vector<int64_t> wide = {1, int64_t{1} << 40, 0, 0};
  CHECK_FALSE(
      RunModel(s2d.Output("y"), {{"x", Tensor::Borrow(DataType::kFloat, wide, nullptr, nullptr)}})
          .ok());
}

TEST_CASE("kernels on an empty tensor with a 2^40-long axis return at once", "[hostile_operands]") {
  // Each looped over the long axis (or allocated for it) before: a hang or terabytes.
  const int64_t long_axis = int64_t{1} << 40;
  auto empty = [](std::vector<int64_t> shape) {
    return Tensor::Borrow(DataType::kFloat, std::move(shape), nullptr, nullptr);
  };
  ModelBuilder gather;
  gather.Input("x", {-1, -1, -1}).IntInitializer("i", {0});
  gather.Node("Gather", {"x", "i"}, {"y"}, {Attr("axis", int64_t{1})});
  CHECK(RunModel(gather.Output("y"), {{"x", empty({long_axis, 1, 0})}}).ok());
  ModelBuilder cumsum;
  cumsum.Input("x", {-1, -1}).IntInitializer("a", {1});
  cumsum.proto().mutable_graph()->mutable_initializer(0)->clear_dims();
  cumsum.Node("CumSum", {"x", "a"}, {"y"});
  CHECK(RunModel(cumsum.Output("y"), {{"x", empty({0, long_axis})}}).ok());
  ModelBuilder topk;
  topk.Input("x", {-1, -1}).IntInitializer("k", {0});
  topk.Node("TopK", {"x", "k"}, {"v", "i"}, {Attr("axis", int64_t{0})});
  CHECK(RunModel(topk.Output("v").Output("i", T::INT64), {{"x", empty({long_axis, 0})}}).ok());
  ModelBuilder d2s;
  d2s.Input("x", {-1, -1, -1, -1})
      .Node("DepthToSpace", {"x"}, {"y"}, {Attr("blocksize", int64_t{2})});
  CHECK(RunModel(d2s.Output("y"), {{"x", empty({1, 4, int64_t{1} << 38, 0})}}).ok());
  // SoftmaxCrossEntropyLoss normalised 2^40 empty rows before checking the labels.
  ModelBuilder loss;
  loss.Input("x", {-1, -1}).IntInitializer("labels", {0});
  loss.Node("SoftmaxCrossEntropyLoss", {"x", "labels"}, {"y"});
  CHECK_FALSE(RunModel(loss.Output("y"), {{"x", empty({long_axis, 0})}}).ok());
}
