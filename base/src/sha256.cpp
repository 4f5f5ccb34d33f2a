#include "base/sha256.h"

#include <cstring>
#include <fstream>
#include <vector>

#include "base/regular_file.h"
#include "sha256_blocks.h"

namespace ortc::format {
namespace {

constexpr uint32_t Rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

}  // namespace

void Sha256BlocksPortable(uint32_t state[8], const uint8_t* p, size_t blocks) {
  for (; blocks > 0; --blocks, p += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 |
             uint32_t(p[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5],
             g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                          kSha256RoundConstants[i] + w[i];
      const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a, state[1] += b, state[2] += c, state[3] += d;
    state[4] += e, state[5] += f, state[6] += g, state[7] += h;
  }
}

Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::Blocks(const uint8_t* p, size_t count) {
  if (count == 0) return;
  if (Sha256ExtensionsAvailable())
    Sha256BlocksShaNi(h_.data(), p, count);
  else
    Sha256BlocksPortable(h_.data(), p, count);
}

void Sha256::Update(std::span<const std::byte> data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  total_bytes_ += n;
  if (buffered_ > 0) {
    const size_t take = std::min(n, 64 - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take, p += take, n -= take;
    if (buffered_ < 64) return;
    Blocks(buffer_.data(), 1);
    buffered_ = 0;
  }
  Blocks(p, n / 64);
  p += n / 64 * 64;
  n %= 64;
  std::memcpy(buffer_.data(), p, n);
  buffered_ = n;
}

void Sha256::Update(const std::string& text) {
  Update(std::as_bytes(std::span(text.data(), text.size())));
}

std::string Sha256::HexDigest() {
  // Padding: a 1 bit, zeros to 56 mod 64 bytes, then the message length in bits, big-endian.
  const uint64_t bits = total_bytes_ * 8;
  uint8_t pad[72] = {0x80};
  const size_t pad_len = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i) pad[pad_len + i] = uint8_t(bits >> (56 - 8 * i));
  Update(std::as_bytes(std::span(pad, pad_len + 8)));
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h_)
    for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 0xf];
  return out;
}

Result<std::string> Sha256OfFile(const std::filesystem::path& path,
                                 const std::function<void(int64_t done, int64_t total)>& on_bytes) {
  ORTC_RETURN_IF_ERROR(CheckRegularFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NoSuchFile(path.string() + ": cannot open to hash it");
  std::error_code size_ec;
  const auto total = static_cast<int64_t>(std::filesystem::file_size(path, size_ec));
  Sha256 h;
  std::vector<char> chunk(1 << 20);
  int64_t done = 0;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = in.gcount();
    if (got > 0) h.Update(std::as_bytes(std::span(chunk.data(), static_cast<size_t>(got))));
    done += got;
    if (on_bytes) on_bytes(done, size_ec ? done : total);
  }
  if (in.bad()) return IoError(path.string() + ": read failed while hashing it");
  return h.HexDigest();
}

}  // namespace ortc::format
