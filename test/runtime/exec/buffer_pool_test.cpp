// The run-time buffer pool: large buffers come back to the pool and are handed out again, zero-
// filled when asked, small ones are not pooled, and the idle total never passes the cap.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/buffer_pool.h"

using namespace ortc::exec;

TEST_CASE("a released large buffer is handed out again for the same size", "[buffer_pool]") {
  const size_t bytes = 3 * kPoolMinBytes + 123;  // rounded up to whole pages inside
  void* first = nullptr;
  {
    auto a = AcquireBuffer(bytes, false);
    first = a.get();
    REQUIRE(reinterpret_cast<uintptr_t>(first) % 64 == 0);
    std::memset(a.get(), 0xAB, bytes);
  }
  const size_t idle = PooledBytes();
  CHECK(idle >= bytes);
  auto b = AcquireBuffer(bytes, true);
  CHECK(b.get() == first);
  CHECK(PooledBytes() == idle - (bytes + 4095) / 4096 * 4096);
  // Asked zero-filled: the old contents are gone.
  const auto* p = static_cast<const unsigned char*>(b.get());
  bool all_zero = true;
  for (size_t i = 0; i < bytes; ++i) all_zero = all_zero && p[i] == 0;
  CHECK(all_zero);
}

TEST_CASE("small buffers bypass the pool", "[buffer_pool]") {
  const size_t before = PooledBytes();
  { auto a = AcquireBuffer(1024, true); }
  CHECK(PooledBytes() == before);
}

TEST_CASE("the pool keeps at most its cap of idle memory", "[buffer_pool]") {
  const size_t chunk = size_t{64} << 20;
  std::vector<std::shared_ptr<void>> held;
  for (size_t total = 0; total <= kPoolCapBytes + chunk; total += chunk)
    held.push_back(AcquireBuffer(chunk, false));
  held.clear();
  CHECK(PooledBytes() <= kPoolCapBytes);
}

TEST_CASE("prefaulted buffers wait in the pool, one per size asked", "[buffer_pool]") {
  // Sizes no other test uses, so the pool's change is this test's.
  const size_t a = 11 * kPoolMinBytes + 5, b = 13 * kPoolMinBytes;
  const size_t page = 4096, ra = (a + page - 1) / page * page, rb = b;
  const size_t before = PooledBytes();
  PrefaultBuffers({a, a, b, 100});  // 100: below kPoolMinBytes, never pooled
  CHECK(PooledBytes() == before + 2 * ra + rb);
  auto x = AcquireBuffer(a, false), y = AcquireBuffer(a, false);
  CHECK(x.get() != y.get());
  CHECK(PooledBytes() == before + rb);  // both came from the pool
}

TEST_CASE("prefaulting more than half the pool's cap does nothing", "[buffer_pool]") {
  const size_t before = PooledBytes();
  PrefaultBuffers({kPoolCapBytes / 4 + 4096, kPoolCapBytes / 4 + 4096});
  CHECK(PooledBytes() == before);
}
