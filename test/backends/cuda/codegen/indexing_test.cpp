// Indexing kernels beyond the catalog: out-of-range indices (which the CPU kernels refuse, so
// the catalog cannot compare them) worked out by hand, with guard bytes around every buffer;
// the reasons given for what is not generated.
#include <catch2/catch.hpp>

#include <cstring>

#include "data_movement_test_util.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t I32 = TensorProto::INT32, I64 = TensorProto::INT64;

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}
template <typename T>
std::vector<T> As(const std::string& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Runs the op's kernel with every buffer inside 64 guard bytes on each side: a write outside
// an output changes its guards, a read outside an input reads the guards' pattern (NaN as
// float32, huge as integers), which the expected values would not contain.
std::vector<std::string> RunGuarded(const cg::OpDesc& op, const std::string& name,
                                    const std::vector<std::string>& inputs) {
  constexpr size_t kGuard = 64;
  auto k = cg::EmitOp(name, op);
  INFO(name << ": " << k.status().message());
  REQUIRE(k.ok());
  auto module = HostModule::Compile({k.value()});
  INFO(module.status().message());
  REQUIRE(module.ok());
  std::vector<std::string> buffers;
  for (const auto& in : inputs)
    buffers.push_back(std::string(kGuard, '\xff') + in + std::string(kGuard, '\xff'));
  for (const auto& o : op.outputs) {
    const auto bytes = static_cast<size_t>(o.elements()) * StorageBytes(o.dtype);
    buffers.push_back(std::string(kGuard, '\x5a') + std::string(bytes, '\x7f') +
                      std::string(kGuard, '\x5a'));
  }
  std::vector<void*> args;
  for (auto& b : buffers) args.push_back(b.data() + kGuard);
  REQUIRE(module.value().Launch(k.value(), args).ok());
  std::vector<std::string> outs;
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const std::string& b = buffers[inputs.size() + o];
    CHECK(b.substr(0, kGuard) == std::string(kGuard, '\x5a'));
    CHECK(b.substr(b.size() - kGuard) == std::string(kGuard, '\x5a'));
    outs.push_back(b.substr(kGuard, b.size() - 2 * kGuard));
  }
  return outs;
}

TEST_CASE("Out-of-range gather indices are clamped to the axis", "[cuda][indexing]") {
  const std::string data = Floats({1, 2, 3, 4, 5, 6});  // [3, 2]
  // Gather (the existing rule): 5 -> 2, -9 -> -6 -> 0, -1 -> 2.
  {
    const cg::OpDesc op = Op("Gather", 13, {T(F, {3, 2}), T(I64, {3})}, {T(F, {3, 2})});
    const auto out = RunGuarded(op, "oob_gather", {data, Bytes<int64_t>({5, -9, -1})});
    CHECK(AsFloats(out[0]) == std::vector<float>{5, 6, 1, 2, 5, 6});
  }
  // GatherND on [3, 2]: (5, 0) -> (2, 0); (-7, 1) -> (-4 -> 0, 1); (1, -1) -> (1, 1);
  // (0, 9) -> (0, 1).
  {
    const cg::OpDesc op = Op("GatherND", 13, {T(F, {3, 2}), T(I64, {4, 2})}, {T(F, {4})});
    const auto out =
        RunGuarded(op, "oob_gathernd", {data, Bytes<int64_t>({5, 0, -7, 1, 1, -1, 0, 9})});
    CHECK(AsFloats(out[0]) == std::vector<float>{5, 2, 4, 2});
  }
  // GatherElements along axis 1 of [3, 2] with int32 indices [3, 2]: 3 -> 1, -4 -> 0,
  // -1 -> 1, 100 -> 1, -3 -> 0, 0.
  {
    const cg::OpDesc op = Op("GatherElements", 13, {T(F, {3, 2}), T(I32, {3, 2})}, {T(F, {3, 2})},
                             {AttrInt("axis", 1)});
    const auto out =
        RunGuarded(op, "oob_gatherelements", {data, Bytes<int32_t>({3, -4, -1, 100, -3, 0})});
    CHECK(AsFloats(out[0]) == std::vector<float>{2, 1, 4, 4, 5, 5});
  }
}

TEST_CASE("Out-of-range scatter indices land on the clamped element", "[cuda][indexing]") {
  // ScatterND into [4], reduction add: 9 -> 3 and -1 -> 3 both add to 40; -9 -> -5 -> 0 adds
  // to 10.
  {
    const cg::OpDesc op = Op("ScatterND", 18, {T(I64, {4}), T(I64, {3, 1}), T(I64, {3})},
                             {T(I64, {4})}, {AttrString("reduction", "add")});
    const auto out = RunGuarded(
        op, "oob_scatternd",
        {Bytes<int64_t>({10, 20, 30, 40}), Bytes<int64_t>({9, -9, -1}), Bytes<int64_t>({1, 2, 3})});
    CHECK(As<int64_t>(out[0]) == std::vector<int64_t>{12, 20, 30, 44});
  }
  // ScatterElements along axis 1 of [2, 3], reduction none: row 0 gets 5 -> 2 and -5 -> 0,
  // row 1 gets -1 -> 2 and then 7 -> 2 (the later update wins, as on the CPU).
  {
    const cg::OpDesc op = Op("ScatterElements", 18, {T(F, {2, 3}), T(I64, {2, 2}), T(F, {2, 2})},
                             {T(F, {2, 3})}, {AttrInt("axis", 1)});
    const auto out = RunGuarded(
        op, "oob_scatterelements",
        {Floats({0, 0, 0, 0, 0, 0}), Bytes<int64_t>({5, -5, -1, 7}), Floats({1, 2, 3, 4})});
    CHECK(AsFloats(out[0]) == std::vector<float>{2, 0, 1, 0, 0, 4});
  }
}

TEST_CASE("Scatter reductions combine duplicates in update order, by hand", "[cuda][indexing]") {
  // Three updates of row 1 of [3, 2] (-2 is row 1 too): max keeps the largest, min the
  // smallest, mul multiplies them all in, add sums them, none keeps the last.
  const std::string data = Floats({1, 1, 5, -5, 2, 2});
  const std::string idx = Bytes<int64_t>({1, -2, 1});
  const std::string upd = Floats({3, -1, 7, -2, 4, 0.5f});
  auto run = [&](const std::string& red) {
    const cg::OpDesc op = Op("ScatterND", 18, {T(F, {3, 2}), T(I64, {3, 1}), T(F, {3, 2})},
                             {T(F, {3, 2})}, {AttrString("reduction", red)});
    return AsFloats(RunGuarded(op, "reduce_" + red, {data, idx, upd})[0]);
  };
  CHECK(run("max") == std::vector<float>{1, 1, 7, 0.5f, 2, 2});
  CHECK(run("min") == std::vector<float>{1, 1, 3, -5, 2, 2});
  CHECK(run("mul") == std::vector<float>{1, 1, 420, -5, 2, 2});
  CHECK(run("add") == std::vector<float>{1, 1, 19, -7.5f, 2, 2});
  CHECK(run("none") == std::vector<float>{1, 1, 4, 0.5f, 2, 2});
}

TEST_CASE("Trilu with k read on the device, by hand", "[cuda][indexing]") {
  const cg::OpDesc op =
      Op("Trilu", 14, {T(F, {3, 3}), T(I64, {})}, {T(F, {3, 3})}, {AttrInt("upper", 0)});
  const std::string x = Floats({1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(AsFloats(RunGuarded(op, "trilu_k", {x, Bytes<int64_t>({-1})})[0]) ==
        std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0});
  CHECK(AsFloats(RunGuarded(op, "trilu_k", {x, Bytes<int64_t>({1})})[0]) ==
        std::vector<float>{1, 2, 0, 4, 5, 6, 7, 8, 9});
  // The most negative k keeps nothing below the diagonal, without overflowing col - row - k.
  CHECK(AsFloats(RunGuarded(op, "trilu_k", {x, Bytes<int64_t>({INT64_MIN})})[0]) ==
        std::vector<float>(9, 0.f));
}

TEST_CASE("Indexing ops are claimed, with reasons for what is refused", "[cuda][indexing]") {
  for (const char* op :
       {"GatherND", "GatherElements", "ScatterND", "ScatterElements", "Scatter", "Trilu"}) {
    INFO(op);
    CHECK(cg::HasKernel(op));
  }
  CHECK(cg::Unsupported(Op("GatherND", 13, {T(F, {3, 2}), T(I64, {4, 2})}, {T(F, {4})})) == "");
  CHECK_THAT(cg::Unsupported(Op("GatherND", 13, {T(F, {3, 2}), T(F, {4, 2})}, {T(F, {4})})),
             Catch::Contains("indices of type FLOAT"));
  CHECK_THAT(cg::Unsupported(Op("GatherND", 13, {T(F, {3, 2}), T(I64, {2, 1})}, {T(F, {2, 2})},
                                {AttrInt("batch_dims", 1)})),
             Catch::Contains("batch dimensions differ"));
  CHECK_THAT(cg::Unsupported(Op("GatherND", 13, {T(F, {3, 2}), T(I64, {4, 3})}, {T(F, {4})})),
             Catch::Contains("last dimension"));
  CHECK_THAT(cg::Unsupported(Op("GatherElements", 13, {T(F, {3, 2}), T(I64, {4, 2})},
                                {T(F, {4, 2})}, {AttrInt("axis", 1)})),
             Catch::Contains("no larger off the axis"));
  CHECK_THAT(
      cg::Unsupported(Op("GatherElements", 13, {T(F, {3, 2}), T(I64, {3, 2})}, {T(F, {3, 3})})),
      Catch::Contains("declared [3,3]"));
  CHECK_THAT(cg::Unsupported(Op("ScatterElements", 18, {T(F, {3, 2}), T(I64, {3, 2}), T(F, {3, 2})},
                                {T(F, {3, 2})}, {AttrString("reduction", "mean")})),
             Catch::Contains("unknown reduction 'mean'"));
  CHECK_THAT(cg::Unsupported(Op("ScatterND", 18, {T(F, {3, 2}), T(I64, {2, 1}), T(I32, {2, 2})},
                                {T(F, {3, 2})})),
             Catch::Contains("updates differ in type"));
  CHECK_THAT(cg::Unsupported(
                 Op("ScatterND", 18, {T(F, {3, 2}), T(I64, {2, 1}), T(F, {2, 3})}, {T(F, {3, 2})})),
             Catch::Contains("indices.shape[:-1] + data.shape[k:]"));
  // Every output element scans every tuple: 2^16 tuples into 2^16 rows of 2^4 is refused.
  CHECK_THAT(cg::Unsupported(Op("ScatterND", 18,
                                {T(F, {65536, 16}), T(I64, {65536, 1}), T(F, {65536, 16})},
                                {T(F, {65536, 16})})),
             Catch::Contains("2^31"));
  CHECK_THAT(cg::Unsupported(Op("Trilu", 14, {T(F, {3, 3}), T(I32, {})}, {T(F, {3, 3})})),
             Catch::Contains("k must be one int64"));
  CHECK_THAT(cg::Unsupported(Op("Trilu", 14, {T(F, {3})}, {T(F, {3})})),
             Catch::Contains("rank >= 2"));
  CHECK_THAT(cg::Unsupported(Op("GatherND", 13, {T(TensorProto::STRING, {3, 2}), T(I64, {4, 2})},
                                {T(TensorProto::STRING, {4})})),
             Catch::Contains("no fixed size"));
  CHECK_THAT(
      cg::Unsupported(Op("ScatterND", 18,
                         {T(TensorProto::DOUBLE, {3}), T(I64, {1, 1}), T(TensorProto::DOUBLE, {1})},
                         {T(TensorProto::DOUBLE, {3})}, {AttrString("reduction", "add")})),
      Catch::Contains("reduction on DOUBLE"));
  // Without a reduction a scatter moves bits: any fixed-size type.
  CHECK(
      cg::Unsupported(Op("ScatterND", 18,
                         {T(TensorProto::DOUBLE, {3}), T(I64, {1, 1}), T(TensorProto::DOUBLE, {1})},
                         {T(TensorProto::DOUBLE, {3})})) == "");
}

}  // namespace
}  // namespace ortc::test::cuda
