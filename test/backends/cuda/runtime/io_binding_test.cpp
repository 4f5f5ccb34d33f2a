// Which device-resident inputs and outputs a run binds into the program instead of copying
// (io_binding.h), on programs built here: a cache read before the step that writes its present
// is bound in place; one read by the very step that writes the present is copied in, its present
// still bound; overlapping outputs, host memory and views of bound buffers.
#include <catch2/catch.hpp>

#include <vector>

#include "io_binding.h"

namespace ortc::cuda_rt {
namespace {

// Buffers: 0 past (Input 0), 1 a view of past 16 bytes in (Alias), 2 scratch (Arena), 3 present
// (Output 0), 4 logits (Output 1). Each step is a kernel launch touching the listed buffers.
struct TestProgram {
  std::vector<uint8_t> bytes;
  const fbc::Program& get() const { return *fbc::GetProgram(bytes.data()); }
};

TestProgram Build(const std::vector<std::vector<int32_t>>& step_args) {
  flatbuffers::FlatBufferBuilder b;
  struct Spec {
    fbc::BufferKind kind;
    int32_t io, alias_of;
    uint64_t offset, bytes;
  };
  const std::vector<Spec> specs = {{fbc::BufferKind::Input, 0, -1, 0, 64},
                                   {fbc::BufferKind::Alias, -1, 0, 16, 48},
                                   {fbc::BufferKind::Arena, -1, -1, 0, 64},
                                   {fbc::BufferKind::Output, 0, -1, 0, 64},
                                   {fbc::BufferKind::Output, 1, -1, 0, 16}};
  std::vector<flatbuffers::Offset<fbc::Buffer>> buffers;
  for (const auto& s : specs)
    buffers.push_back(
        fbc::CreateBuffer(b, b.CreateString("b"), s.kind, 1, b.CreateVector(std::vector<int64_t>{}),
                          fbc::TensorLayout::Plain, -1, s.io, s.offset, s.alias_of, s.bytes));
  std::vector<flatbuffers::Offset<fbc::Step>> steps;
  for (const auto& args : step_args) {
    auto launch = fbc::CreateKernelLaunch(b, b.CreateString("k"), 0, 0, 0, b.CreateVector(args));
    steps.push_back(fbc::CreateStep(b, b.CreateString("s"), 0, launch));
  }
  const auto vb = b.CreateVector(buffers);
  const auto vs = b.CreateVector(steps);
  const auto in = b.CreateVector(std::vector<int32_t>{0});
  const auto out = b.CreateVector(std::vector<int32_t>{3, 4});
  b.Finish(fbc::CreateProgram(b, vb, vs, in, out, 64));
  return {std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize())};
}

const std::vector<int> kInputs = {0}, kOutputs = {3, 4};
const std::vector<uint64_t> kInBytes = {64}, kOutBytes = {64, 16};
constexpr DeviceAddress kCache = 0x10000, kOther = 0x20000, kLogits = 0x30000;

IoBinding Offer(DeviceAddress past, DeviceAddress present, DeviceAddress logits) {
  return {{past}, {present, logits}};
}

IoBinding Choose(const IoTouches& t, const IoBinding& offered, const std::vector<uint64_t>& in,
                 const std::vector<uint64_t>& out) {
  IoBinding chosen;
  ChooseBinding(t, offered, in, out, &chosen);
  return chosen;
}

}  // namespace

TEST_CASE("a cache read before its present is written is bound in place", "[cuda][binding]") {
  // Step 0 reads past through its view into scratch, step 1 writes present, step 2 reads it.
  const auto p = Build({{1, 2}, {2, 3}, {3, 4}});
  const IoTouches t = FindIoTouches(p.get(), kInputs, kOutputs);
  CHECK(t.input_first == std::vector<int>{0});
  CHECK(t.input_last == std::vector<int>{0});
  CHECK(t.output_first == std::vector<int>{1, 2});
  CHECK(t.output_last == std::vector<int>{2, 2});
  const IoBinding b = Choose(t, Offer(kCache, kCache, 0), kInBytes, kOutBytes);
  CHECK(b.inputs == std::vector<DeviceAddress>{kCache});
  CHECK(b.outputs == std::vector<DeviceAddress>{kCache, 0});  // logits in host memory: copied
  CHECK_FALSE(b.empty());

  // The bound addresses, and the view of past 16 bytes into the caller's buffer.
  std::vector<DeviceAddress> own(5);
  for (size_t i = 0; i < own.size(); ++i) own[i] = 0x1000 * (i + 1);
  own[1] = own[0] + 16;
  const auto bound = BoundAddresses(p.get(), own, kInputs, kOutputs, b);
  CHECK(bound[0] == kCache);
  CHECK(bound[1] == kCache + 16);
  CHECK(bound[2] == own[2]);  // the arena stays
  CHECK(bound[3] == kCache);
  CHECK(bound[4] == own[4]);
}

TEST_CASE("a cache the present's own step reads is copied in, the present still bound",
          "[cuda][binding]") {
  // Step 0 reads past and writes present (an elementwise update in one kernel): in place, it
  // could overwrite elements it has yet to read.
  const auto p = Build({{0, 3}, {3, 4}});
  const IoTouches t = FindIoTouches(p.get(), kInputs, kOutputs);
  const IoBinding same = Choose(t, Offer(kCache, kCache, kLogits), kInBytes, kOutBytes);
  CHECK(same.inputs == std::vector<DeviceAddress>{0});
  CHECK(same.outputs == std::vector<DeviceAddress>{kCache, kLogits});
  // Two buffers taking turns do not overlap: both bound.
  const IoBinding turns = Choose(t, Offer(kCache, kOther, 0), kInBytes, kOutBytes);
  CHECK(turns.inputs == std::vector<DeviceAddress>{kCache});
  CHECK(turns.outputs == std::vector<DeviceAddress>{kOther, 0});
  // Overlapping only partly counts as overlapping.
  const IoBinding partial = Choose(t, Offer(kCache, kCache + 48, 0), kInBytes, kOutBytes);
  CHECK(partial.inputs == std::vector<DeviceAddress>{0});
}

TEST_CASE("overlapping outputs and host-only runs bind nothing they should not",
          "[cuda][binding]") {
  const auto p = Build({{1, 2}, {2, 3}, {3, 4}});
  const IoTouches t = FindIoTouches(p.get(), kInputs, kOutputs);
  // Logits inside present's bytes: the later output is copied out instead.
  const IoBinding clash = Choose(t, Offer(0, kCache, kCache + 8), kInBytes, kOutBytes);
  CHECK(clash.outputs == std::vector<DeviceAddress>{kCache, 0});
  const IoBinding host = Choose(t, Offer(0, 0, 0), kInBytes, kOutBytes);
  CHECK(host.empty());
  // A zero-byte tensor is never bound.
  const IoBinding empty_tensor = Choose(t, Offer(kCache, 0, 0), {0}, kOutBytes);
  CHECK(empty_tensor.empty());
}

}  // namespace ortc::cuda_rt
