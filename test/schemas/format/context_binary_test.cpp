// Context binary format: writer/reader round trip, every check_header state, and every
// corrupted field the reader must catch (with the section and check named).
#include <xxhash.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>

#include "bundle/context_binary_writer.h"
#include "format/context_binary_reader.h"
#include "model_builder.h"

using namespace ortc;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<const std::string> Bytes(std::string s) {
  return std::make_shared<const std::string>(std::move(s));
}

bundle::WeightSpec Weight(std::string bytes, std::vector<int64_t> dims = {}) {
  bundle::WeightSpec w;
  w.dtype = onnx::TensorProto::UINT8;
  w.dims = dims.empty() ? std::vector<int64_t>{static_cast<int64_t>(bytes.size())} : dims;
  w.bytes = bundle::ByteSource::Memory(Bytes(std::move(bytes)));
  return w;
}

// Writes a binary with two graphs sharing one weight, and one artefact.
std::string WriteSample(const fs::path& path) {
  auto w = bundle::ContextBinaryWriter::Create(
      path, {"ortc test", "cpu", {{"sdk", "1.2"}}, {"isa-x"}, {}});
  REQUIRE(w.ok());
  auto a = (*w)->AddWeight(Weight(std::string(1000, 'a')));
  auto b = (*w)->AddWeight(Weight(std::string(300, 'b')));
  auto a2 = (*w)->AddWeight(Weight(std::string(1000, 'a')));  // same bytes: stored once
  REQUIRE((a.ok() && b.ok() && a2.ok()));
  CHECK(*a2 == *a);
  (*w)->AddGraph({"g0",
                  {{"x", 1, {1, -1}, {"", "n"}}},
                  {{"y", 1, {1, 4}, {}}},
                  "PROGRAM-ZERO",
                  {*a, *b},
                  128});
  (*w)->AddGraph({"g1", {{"x", 1, {2}, {}}}, {{"z", 1, {2}, {}}}, "PROGRAM-ONE", {*a}, 0});
  (*w)->AddArtefact("blob", "ARTEFACT", 256);
  REQUIRE((*w)->Finish().ok());
  CHECK((*w)->stats().weights_added == 3);
  CHECK((*w)->stats().weights_stored == 2);
  CHECK((*w)->stats().weight_bytes_added == 2300);
  CHECK((*w)->stats().weight_bytes_stored == 1300);
  REQUIRE((*w)->Commit().ok());
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Result<std::shared_ptr<const format::ContextBinary>> OpenBytes(std::string bytes) {
  return format::ContextBinary::Open(format::MappedFile::FromBytes(std::move(bytes)));
}

format::FixedHeader HeaderOf(const std::string& bytes) {
  format::FixedHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  return h;
}

void SetHeader(std::string& bytes, const format::FixedHeader& h) {
  std::memcpy(bytes.data(), &h, sizeof h);
}

// Mutates the manifest in place, then fixes the manifest checksum so the structural checks
// behind it are what fails.
template <typename F>
std::string MutateManifest(std::string bytes, F&& mutate) {
  auto h = HeaderOf(bytes);
  auto* m = fb::GetMutableManifest(bytes.data() + h.manifest_offset);
  mutate(m);
  h.manifest_checksum = XXH3_64bits(bytes.data() + h.manifest_offset, h.manifest_size);
  SetHeader(bytes, h);
  return bytes;
}

}  // namespace

TEST_CASE("a context binary round-trips through writer and reader", "[format]") {
  TempDir dir;
  const std::string bytes = WriteSample(dir / "m_cpu.bin");
  auto bin = format::ContextBinary::OpenFile(dir / "m_cpu.bin");
  REQUIRE(bin.ok());
  const auto& m = (*bin)->manifest();
  CHECK(m.backend()->str() == "cpu");
  CHECK(m.producer()->str() == "ortc test");
  CHECK(m.hardware_targets()->Get(0)->str() == "isa-x");
  CHECK((*bin)->content_id().size() == 32);
  REQUIRE(m.weights()->size() == 2);
  CHECK(std::string(reinterpret_cast<const char*>((*bin)->WeightBytes(0).data()), 1000) ==
        std::string(1000, 'a'));
  CHECK(std::string(reinterpret_cast<const char*>((*bin)->WeightBytes(1).data()), 300) ==
        std::string(300, 'b'));
  const auto* g0 = (*bin)->FindGraph("g0");
  REQUIRE(g0);
  auto program = (*bin)->ProgramBytes(*g0);
  CHECK(std::string(reinterpret_cast<const char*>(program.data()), program.size()) ==
        "PROGRAM-ZERO");
  CHECK(g0->weights()->size() == 2);
  CHECK(g0->arena_bytes() == 128);
  CHECK(g0->inputs()->Get(0)->symbols()->Get(1)->str() == "n");
  CHECK((*bin)->FindGraph("g1"));
  CHECK_FALSE((*bin)->FindGraph("g2"));
  // Alignment rules: weights section page aligned, each weight 64-aligned, artefact 256.
  for (const auto* s : *m.sections()) {
    CHECK(s->offset() % s->alignment() == 0);
    if (s->kind() == fb::SectionKind::Weights) CHECK(s->offset() % 4096 == 0);
    if (s->kind() == fb::SectionKind::Artefact) CHECK(s->offset() % 256 == 0);
  }
  for (const auto* w : *m.weights()) CHECK(w->offset() % 64 == 0);
}

TEST_CASE("identical weights are stored once, but not across types or shapes", "[format][dedup]") {
  TempDir dir;
  auto w = bundle::ContextBinaryWriter::Create(dir / "d.bin", {"t", "cpu", {}, {}, {}});
  REQUIRE(w.ok());
  auto a = (*w)->AddWeight(Weight("abcdefgh", {8}));
  auto same = (*w)->AddWeight(Weight("abcdefgh", {8}));
  auto other_shape = (*w)->AddWeight(Weight("abcdefgh", {2, 4}));
  auto other_bytes = (*w)->AddWeight(Weight("abcdefgX", {8}));
  CHECK(*same == *a);
  CHECK(*other_shape != *a);
  CHECK(*other_bytes != *a);
  CHECK((*w)->stats().weights_stored == 3);
}

TEST_CASE("check_header sorts files into four states", "[format][header]") {
  TempDir dir;
  const std::string good = WriteSample(dir / "m.bin");
  auto check = [](const std::string& b) {
    return format::CheckHeader({reinterpret_cast<const std::byte*>(b.data()), b.size()});
  };

  CHECK(check(good).state == format::HeaderState::kCompatible);
  CHECK(check("PK\x03\x04 zip file").state == format::HeaderState::kNotOrtc);
  CHECK(check("").state == format::HeaderState::kNotOrtc);
  CHECK(check(good.substr(0, 5)).state == format::HeaderState::kTruncated);
  CHECK(check(good.substr(0, 40)).state == format::HeaderState::kTruncated);
  auto cut = check(good.substr(0, good.size() - 1));
  CHECK(cut.state == format::HeaderState::kTruncated);
  CHECK_THAT(cut.message, Catch::Contains(std::to_string(good.size())));

  std::string newer_major = good;
  auto h = HeaderOf(newer_major);
  h.format_major = 2;
  h.format_minor = 3;
  SetHeader(newer_major, h);
  auto inc = check(newer_major);
  CHECK(inc.state == format::HeaderState::kIncompatible);
  CHECK_THAT(inc.message, Catch::Contains("2.3") && Catch::Contains("1.0") &&
                              Catch::Contains("newer ortc runtime"));

  std::string newer_minor = good;
  h = HeaderOf(newer_minor);
  h.format_minor = 7;
  SetHeader(newer_minor, h);
  auto minor = check(newer_minor);
  CHECK(minor.state == format::HeaderState::kCompatible);
  CHECK_THAT(minor.message, Catch::Contains("1.7"));
  CHECK(OpenBytes(newer_minor).ok());  // a newer minor is readable
}

TEST_CASE("every corrupted field is caught and named", "[format][corruption]") {
  TempDir dir;
  const std::string good = WriteSample(dir / "m.bin");
  REQUIRE(OpenBytes(good).ok());
  std::string bad;
  std::string expect;

  SECTION("magic") {
    bad = good;
    bad[0] = 'X';
    expect = "not an ortc binary";
  }
  SECTION("truncated file") {
    bad = good.substr(0, good.size() - 100);
    expect = "truncated";
  }
  SECTION("trailing bytes") {
    bad = good + "junk";
    expect = "after the recorded end";
  }
  SECTION("manifest offset beyond the file") {
    bad = good;
    auto h = HeaderOf(bad);
    h.manifest_offset = good.size() + 8;
    SetHeader(bad, h);
    expect = "manifest: offset";
  }
  SECTION("manifest bytes") {
    bad = good;
    bad[HeaderOf(bad).manifest_offset + 20] ^= 0x5a;
    expect = "manifest: checksum mismatch";
  }
  SECTION("manifest structure (checksum recomputed)") {
    bad = good;
    auto h = HeaderOf(bad);
    std::memset(bad.data() + h.manifest_offset, 0xff, 8);  // root offset now points nowhere
    h.manifest_checksum = XXH3_64bits(bad.data() + h.manifest_offset, h.manifest_size);
    SetHeader(bad, h);
    expect = "manifest: not a valid manifest";
  }
  SECTION("a weight byte") {
    bad = good;
    bad[4096 + 10] ^= 1;
    expect = "section 0 (weights): checksum mismatch";
  }
  SECTION("a weight byte, with the section checksum recomputed") {
    // What a buggy producer or an attacker leaves: every checksum valid, one weight changed.
    bad = good;
    auto bin = OpenBytes(good);
    const auto* w = (*bin)->manifest().weights()->Get(1);
    const uint64_t section = (*bin)->manifest().sections()->Get(0)->offset();
    bad[section + w->offset() + 1] ^= 1;
    bad = MutateManifest(bad, [&](fb::Manifest* m) {
      auto* s = m->mutable_sections()->GetMutableObject(0);
      s->mutate_checksum(XXH3_64bits(bad.data() + s->offset(), s->size()));
    });
    expect = "weight 1 (";
    CHECK_THAT(OpenBytes(bad).status().message(),
               Catch::Contains("do not match the manifest's hash"));
  }
  SECTION("a program byte") {
    bad = good;
    auto bin = OpenBytes(good);
    const auto* s = (*bin)->manifest().sections()->Get(1);
    bad[s->offset() + 2] ^= 1;
    expect = "section 1 (programs): checksum mismatch";
  }
  SECTION("section range") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      m->mutable_sections()->GetMutableObject(1)->mutate_size(1u << 30);
    });
    expect = "section 1 (programs): range";
  }
  SECTION("section alignment") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      auto* s = m->mutable_sections()->GetMutableObject(2);
      s->mutate_offset(s->offset() - 1);
    });
    expect = "section 2 (blob): offset";
  }
  SECTION("weight range") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      m->mutable_weights()->GetMutableObject(1)->mutate_size(1u << 20);
    });
    expect = "weight 1: range";
  }
  SECTION("weight alignment") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      auto* w = m->mutable_weights()->GetMutableObject(1);
      w->mutate_offset(w->offset() + 4);
    });
    expect = "weight 1: not aligned";
  }
  SECTION("graph program range") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      m->mutable_graphs()->GetMutableObject(1)->mutate_program_size(1u << 20);
    });
    expect = "graph 'g1': program range";
  }
  SECTION("graph program alignment") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      auto* g = m->mutable_graphs()->GetMutableObject(1);
      g->mutate_program_offset(g->program_offset() + 4);
      g->mutate_program_size(g->program_size() - 4);
    });
    expect = "graph 'g1': program offset";
  }
  SECTION("graph program section") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      m->mutable_graphs()->GetMutableObject(0)->mutate_program_section(9);
    });
    expect = "graph 'g0': program section 9";
  }
  SECTION("graph weight reference") {
    bad = MutateManifest(good, [&](fb::Manifest* m) {
      m->mutable_graphs()->GetMutableObject(0)->mutable_weights()->Mutate(1, 7);
    });
    expect = "graph 'g0': refers to weight 7";
  }
  auto r = OpenBytes(bad);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidGraph);
  CHECK_THAT(r.status().message(), Catch::Contains(expect));
}
