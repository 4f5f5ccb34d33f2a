// Host copies split over threads (host_copy.h): every size around the split threshold and the
// 4 KiB part boundaries arrives byte for byte with 1, 3 and 5 threads, copies from several
// callers at once take turns, and sessions asking for one count share one pool.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>
#include <vector>

#include "host_copy.h"

namespace ortc::cuda_rt {
namespace {

std::vector<uint8_t> Pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

}  // namespace

TEST_CASE("host copies arrive byte for byte however they are split", "[cuda][host_copy]") {
  constexpr size_t kSplit = HostCopyPool::kSplitBytes;
  for (unsigned threads : {1u, 3u, 5u}) {
    HostCopyPool pool(threads);
    CHECK(pool.threads() == threads);
    for (size_t n : {size_t{0}, size_t{1}, kSplit - 1, kSplit, kSplit + 1, 3 * kSplit + 4095,
                     size_t{5} * 4096 * 1000 + 7}) {
      INFO(threads << " threads, " << n << " bytes");
      const auto src = Pattern(n, static_cast<unsigned>(n + threads));
      std::vector<uint8_t> dst(n + 2, 0xee);  // a guard byte on each side
      pool.Copy(dst.data() + 1, src.data(), n);
      CHECK(dst.front() == 0xee);
      CHECK(dst.back() == 0xee);
      CHECK(std::memcmp(dst.data() + 1, src.data(), n) == 0);
    }
  }
}

TEST_CASE("copies from several callers take turns on one pool", "[cuda][host_copy]") {
  HostCopyPool pool(4);
  constexpr size_t kBytes = 3 * HostCopyPool::kSplitBytes + 123;
  std::vector<std::vector<uint8_t>> src, dst;
  for (unsigned c = 0; c < 3; ++c) {
    src.push_back(Pattern(kBytes, c));
    dst.emplace_back(kBytes, 0);
  }
  std::vector<std::thread> callers;
  for (unsigned c = 0; c < 3; ++c)
    callers.emplace_back([&, c] {
      for (int k = 0; k < 5; ++k) pool.Copy(dst[c].data(), src[c].data(), kBytes);
    });
  for (auto& t : callers) t.join();
  for (unsigned c = 0; c < 3; ++c) CHECK(dst[c] == src[c]);
}

TEST_CASE("sessions asking for one count of threads share one pool", "[cuda][host_copy]") {
  auto a = SharedHostCopyPool(3), b = SharedHostCopyPool(3), c = SharedHostCopyPool(2);
  CHECK(a.get() == b.get());
  CHECK(a.get() != c.get());
  CHECK(c->threads() == 2);
  const unsigned d = DefaultHostCopyThreads();
  CHECK(d >= 1);
  CHECK(d <= 8);
}

}  // namespace ortc::cuda_rt
