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

// `same_index[s]`: step s's KernelLaunch.same_index (positions in its args), when given.
TestProgram Build(const std::vector<std::vector<int32_t>>& step_args,
                  const std::vector<std::vector<int32_t>>& same_index = {}) {
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
  for (size_t s = 0; s < step_args.size(); ++s) {
    const auto pairs = s < same_index.size() ? b.CreateVector(same_index[s]) : 0;
    auto launch = fbc::CreateKernelLaunch(b, b.CreateString("k"), 0, 0, 0,
                                          b.CreateVector(step_args[s]), pairs);
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

TEST_CASE("a cache its present's step updates element by element is bound in place",
          "[cuda][binding]") {
  // Step 0 reads past (arg 0) and writes present (arg 1), declaring that each thread reads
  // element i of past only to write element i of present.
  const auto p = Build({{0, 3}, {3, 4}}, {{0, 1}});
  const IoTouches t = FindIoTouches(p.get(), kInputs, kOutputs);
  CHECK(t.same_index == std::vector<std::pair<int, int>>{{0, 0}});
  const IoBinding same = Choose(t, Offer(kCache, kCache, kLogits), kInBytes, kOutBytes);
  CHECK(same.inputs == std::vector<DeviceAddress>{kCache});
  CHECK(same.outputs == std::vector<DeviceAddress>{kCache, kLogits});
  // Shifted by one element, element i of present would land on element i + 1 of past.
  const IoBinding shifted = Choose(t, Offer(kCache, kCache + 4, 0), kInBytes, kOutBytes);
  CHECK(shifted.inputs == std::vector<DeviceAddress>{0});
  // A present of another size than the past is not the same elements.
  const IoBinding sizes = Choose(t, Offer(kCache, kCache, 0), {48}, kOutBytes);
  CHECK(sizes.inputs == std::vector<DeviceAddress>{0});

  // Not declared, declared for other positions, or the step reading past through a second
  // argument too (its view, at other offsets): copied in as before.
  for (const auto& [args, pairs] :
       std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>{
           {{0, 3}, {}}, {{0, 3}, {1, 0}}, {{0, 1, 3}, {0, 2}}, {{0, 2, 3}, {0, 1}}}) {
    const auto q = Build({args, {3, 4}}, {pairs});
    const IoTouches u = FindIoTouches(q.get(), kInputs, kOutputs);
    CHECK(u.same_index.empty());
    const IoBinding copied = Choose(u, Offer(kCache, kCache, 0), kInBytes, kOutBytes);
    CHECK(copied.inputs == std::vector<DeviceAddress>{0});
  }
  // A later step reading past again: the update may have overwritten it.
  const auto later = Build({{0, 3}, {1, 4}}, {{0, 1}});
  const IoTouches l = FindIoTouches(later.get(), kInputs, kOutputs);
  CHECK(l.same_index.empty());
  CHECK(Choose(l, Offer(kCache, kCache, 0), kInBytes, kOutBytes).inputs ==
        std::vector<DeviceAddress>{0});
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
