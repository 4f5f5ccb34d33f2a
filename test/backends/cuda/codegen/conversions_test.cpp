// The prelude's fp16/bf16 conversions, run through the host shim, against independent
// references: the compiler's _Float16 for half, exact distance comparison for bfloat16. Bit for
// bit over every special value, every rounding boundary pattern and a large random sample.
#include <catch2/catch.hpp>

#include <random>

#include "host_module.h"
#include "reference_conversions.h"

namespace ortc::test::cuda {
namespace {

using backends::cuda::codegen::KernelSource;

constexpr int kChunk = 1 << 20;

const std::string kKernels = R"(
extern "C" __global__ void to_half(const void* in, void* out) {
  for (int i = 0; i < )" + std::to_string(kChunk) +
                             R"(; ++i)
    ((ortc_u16*)out)[i] = ortc_f2h(((const float*)in)[i]);
}
extern "C" __global__ void to_bf16(const void* in, void* out) {
  for (int i = 0; i < )" + std::to_string(kChunk) +
                             R"(; ++i)
    ((ortc_u16*)out)[i] = ortc_f2bf(((const float*)in)[i]);
}
extern "C" __global__ void from_half(const void* in, void* out) {
  for (int i = 0; i < 65536; ++i) ((float*)out)[i] = ortc_h2f(((const ortc_u16*)in)[i]);
}
extern "C" __global__ void from_bf16(const void* in, void* out) {
  for (int i = 0; i < 65536; ++i) ((float*)out)[i] = ortc_bf2f(((const ortc_u16*)in)[i]);
}
)";

KernelSource K(const std::string& name) {
  KernelSource k;
  k.name = name;
  k.num_inputs = 1;
  k.num_outputs = 1;
  return k;
}

const HostModule& Module() {
  static const HostModule m = [] {
    auto r = HostModule::CompileText(backends::cuda::codegen::TranslationUnit({}) + kKernels,
                                     {K("to_half"), K("to_bf16"), K("from_half"), K("from_bf16")});
    if (!r.ok()) FAIL(r.status().message());
    return std::move(r).value();
  }();
  return m;
}

// Every float whose low `low_bits` take each value of `lows`: all exponents and high mantissa
// bits with the patterns around the rounding point (ties, just below, just above).
std::vector<uint32_t> BoundaryPatterns(int low_bits, std::vector<uint32_t> lows) {
  std::vector<uint32_t> v;
  for (uint32_t high = 0; high < (1u << (32 - low_bits)); ++high)
    for (uint32_t low : lows) v.push_back((high << low_bits) | low);
  return v;
}

std::vector<uint32_t> RandomAndSpecial(unsigned seed) {
  std::vector<uint32_t> v = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                             0xffc00000, 0x7f800001, 0x7fbfffff, 0x00000001, 0x807fffff,
                             0x7f7fffff, 0xff7fffff, 0x477fefff, 0x477ff000, 0x477ff001,
                             0x33000000, 0x33000001, 0x387fffff, 0x38800000, 0x3f800000};
  std::mt19937 rng(seed);
  for (int i = 0; i < 4 * kChunk; ++i) v.push_back(rng());
  return v;
}

// Converts `bits` in chunks through kernel `name`; returns the first mismatch against `ref`.
template <typename Ref>
std::string Compare(const char* name, const std::vector<uint32_t>& bits, Ref ref, int64_t* n) {
  std::vector<float> in(kChunk);
  std::vector<uint16_t> out(kChunk);
  for (size_t start = 0; start < bits.size(); start += kChunk) {
    for (int i = 0; i < kChunk; ++i)
      in[i] = BitsFloat(start + i < bits.size() ? bits[start + i] : 0u);
    const Status s = Module().Launch(K(name), {in.data(), out.data()});
    if (!s.ok()) return s.message();
    for (int i = 0; i < kChunk && start + i < bits.size(); ++i) {
      const uint16_t want = ref(in[i]);
      ++*n;
      if (out[i] != want) {
        char msg[128];
        std::snprintf(msg, sizeof msg, "%s(0x%08x) = 0x%04x, reference 0x%04x", name,
                      bits[start + i], out[i], want);
        return msg;
      }
    }
  }
  return "";
}

TEST_CASE("prelude float to half matches _Float16 bit for bit", "[cuda][conversions]") {
  int64_t n = 0;
  // The low 13 bits decide rounding to half: ties, neighbours of ties, zero and all ones.
  auto bits = BoundaryPatterns(13, {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff});
  const auto more = RandomAndSpecial(1);
  bits.insert(bits.end(), more.begin(), more.end());
  auto ref = [](float f) { return RefFloatToHalf(f); };
  CHECK(Compare("to_half", bits, ref, &n) == "");
  INFO(n << " conversions");
  CHECK(n > 5'000'000);
}

TEST_CASE("prelude float to bfloat16 matches an exact-distance reference", "[cuda][conversions]") {
  int64_t n = 0;
  auto bits = BoundaryPatterns(16, {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff});
  const auto more = RandomAndSpecial(2);
  bits.insert(bits.end(), more.begin(), more.end());
  CHECK(Compare("to_bf16", bits, RefFloatToBf16, &n) == "");
  CHECK(n > 4'000'000);
}

TEST_CASE("prelude half and bfloat16 to float are exact for all 65536 patterns",
          "[cuda][conversions]") {
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> h(65536), b(65536);
  REQUIRE(Module().Launch(K("from_half"), {all.data(), h.data()}).ok());
  REQUIRE(Module().Launch(K("from_bf16"), {all.data(), b.data()}).ok());
  int bad_h = 0, bad_b = 0;
  for (int i = 0; i < 65536; ++i) {
    const float rh = RefHalfToFloat(all[i]), rb = RefBf16ToFloat(all[i]);
    if (std::isnan(rh) ? !std::isnan(h[i]) || std::signbit(h[i]) != std::signbit(rh)
                       : FloatBits(h[i]) != FloatBits(rh))
      ++bad_h;
    if (std::isnan(rb) ? !std::isnan(b[i]) : FloatBits(b[i]) != FloatBits(rb)) ++bad_b;
  }
  CHECK(bad_h == 0);
  CHECK(bad_b == 0);
}

}  // namespace
}  // namespace ortc::test::cuda
