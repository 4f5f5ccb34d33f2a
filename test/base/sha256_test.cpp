// SHA-256 against the FIPS 180-4 example digests and sha256sum's answer for a file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "model_builder.h"
#include "sha256_blocks.h"

using ortc::format::Sha256;

namespace {

std::string Digest(const std::string& text) {
  Sha256 h;
  h.Update(text);
  return h.HexDigest();
}

}  // namespace

TEST_CASE("SHA-256 of the standard's examples", "[sha256]") {
  CHECK(Digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's, fed in uneven pieces so the block buffering is exercised.
  Sha256 h;
  const std::string piece(997, 'a');
  size_t fed = 0;
  for (; fed + piece.size() <= 1000000; fed += piece.size()) h.Update(piece);
  h.Update(std::string(1000000 - fed, 'a'));
  CHECK(h.HexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 of a file matches sha256sum", "[sha256]") {
  ortc::test::TempDir dir;
  std::string bytes;
  for (unsigned i = 0; i < 300000; ++i) bytes += static_cast<char>((i * 7919u) & 0xff);
  ortc::test::WriteFile(dir / "f.bin", bytes);
  auto d = ortc::format::Sha256OfFile(dir / "f.bin");
  REQUIRE(d.ok());
  CHECK(*d == Digest(bytes));
  FILE* p = popen(("sha256sum " + (dir / "f.bin").string()).c_str(), "r");
  REQUIRE(p);
  char out[65] = {};
  REQUIRE(fread(out, 1, 64, p) == 64);
  pclose(p);
  CHECK(*d == std::string(out, 64));
  CHECK_FALSE(ortc::format::Sha256OfFile(dir / "absent").ok());
}

TEST_CASE("SHA-256 with the CPU's SHA extensions computes the portable code's state", "[sha256]") {
  using namespace ortc::format;
  if (!Sha256ExtensionsAvailable()) {
    WARN("this CPU has no SHA extensions: only the portable code runs here");
    return;
  }
  std::mt19937 rng(7);
  for (size_t blocks : {1, 2, 3, 17, 64}) {
    std::vector<uint8_t> data(blocks * 64);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    uint32_t portable[8], extensions[8];
    for (int i = 0; i < 8; ++i) portable[i] = extensions[i] = static_cast<uint32_t>(rng());
    Sha256BlocksPortable(portable, data.data(), blocks);
    Sha256BlocksShaNi(extensions, data.data(), blocks);
    INFO(blocks << " blocks");
    CHECK(std::equal(portable, portable + 8, extensions));
  }
}
