// SHA-256 against the FIPS 180-4 example digests and sha256sum's answer for a file.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "format/sha256.h"
#include "model_builder.h"

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
