// Runtime sessions: compiled models give the source model's numbers, buffer loads, the version
// gate (every refusal names both sides), verdict policy, concurrent Run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <thread>

#include "bundle/context_binary_writer.h"
#include "compile/compile_driver.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "exec/buffer_pool.h"
#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "loader/binary_cache.h"
#include "model_builder.h"
#include "ortc/runtime.h"
#include "run_ortc.h"
#include "test_data.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::LoadProto;
using ortc::test::ModelBuilder;
using ortc::test::RandomTensor;
using ortc::test::SaveProto;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Conv -> BatchNorm -> Relu -> GlobalAveragePool -> Flatten -> Gemm(transB) -> Softmax:
// exercises BN folding and Gemm pre-transposition, so compiled and source runs differ in form.
ModelBuilder CnnModel() {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  auto rnd = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
  };
  ModelBuilder b;
  b.Input("x", {2, 3, 8, 8}).Initializer("W", {4, 3, 3, 3}, rnd(108)).Initializer("B", {4}, rnd(4));
  b.Initializer("s", {4}, {1, 2, 0.5f, 1})
      .Initializer("o", {4}, rnd(4))
      .Initializer("m", {4}, rnd(4));
  b.Initializer("v", {4}, {1, 0.5f, 2, 1})
      .Initializer("fc", {5, 4}, rnd(20))
      .Initializer("fcb", {5}, rnd(5));
  b.Node("Conv", {"x", "W", "B"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
  b.Node("BatchNormalization", {"c", "s", "o", "m", "v"}, {"n"}).Node("Relu", {"n"}, {"r"});
  b.Node("GlobalAveragePool", {"r"}, {"g"}).Node("Flatten", {"g"}, {"f"});
  b.Node("Gemm", {"f", "fc", "fcb"}, {"l"}, {Attr("transB", int64_t{1})})
      .Node("Softmax", {"l"}, {"y"});
  b.Output("y");
  return b;
}

struct Compiled {
  TempDir dir;
  fs::path ctx, bin;
};

std::unique_ptr<Compiled> CompileCnn(int embed_mode = 0) {
  auto c = std::make_unique<Compiled>();
  CnnModel().Save(c->dir / "cnn.onnx");
  compile::CompileOptions o;
  o.model = c->dir / "cnn.onnx";
  o.embed_mode = embed_mode;
  auto r = compile::Compile(o);
  REQUIRE(r.ok());
  c->ctx = c->dir / "cnn_ctx.onnx";
  c->bin = c->dir / "cnn_cpu.bin";
  return c;
}

// Edits the (single) EPContext node of a ctx model.
template <typename F>
void EditEpNode(const fs::path& ctx, F&& edit) {
  auto m = LoadProto(ctx);
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (format::IsEpContextNode(n)) {
      auto e = format::EpContextNode::FromNodeProto(n);
      REQUIRE(e.ok());
      edit(*e);
      n = e->ToNodeProto();
    }
  }
  SaveProto(m, ctx);
}

// Rewrites the binary with other hardware targets (same graphs and weights) and re-pairs the
// ctx model with it, to exercise ISA checks a generic binary never triggers.
void Retarget(const Compiled& c, std::vector<std::string> targets) {
  auto old = format::ContextBinary::OpenFile(c.bin);
  REQUIRE(old.ok());
  const auto& m = (*old)->manifest();
  const fs::path tmp = c.dir / "retarget.bin";
  auto w = bundle::ContextBinaryWriter::Create(tmp, {"ortc test", "cpu", {}, targets, {}});
  REQUIRE(w.ok());
  std::vector<uint32_t> remap;
  for (uint32_t i = 0; i < m.weights()->size(); ++i) {
    const auto* wt = m.weights()->Get(i);
    const auto bytes = (*old)->WeightBytes(i);
    bundle::WeightSpec spec;
    spec.dtype = wt->dtype();
    spec.dims.assign(wt->dims()->begin(), wt->dims()->end());
    spec.bytes = bundle::ByteSource::Memory(std::make_shared<const std::string>(
        reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    remap.push_back(*(*w)->AddWeight(spec));
  }
  auto descs = [](const flatbuffers::Vector<flatbuffers::Offset<fb::TensorDesc>>* v) {
    std::vector<bundle::TensorDescSpec> out;
    for (const auto* d : *v)
      out.push_back({d->name()->str(), d->dtype(), {d->dims()->begin(), d->dims()->end()}, {}});
    return out;
  };
  for (const auto* g : *m.graphs()) {
    const auto prog = (*old)->ProgramBytes(*g);
    std::vector<uint32_t> slots;
    for (uint32_t s : *g->weights()) slots.push_back(remap[s]);
    (*w)->AddGraph({g->name()->str(), descs(g->inputs()), descs(g->outputs()),
                    std::string(reinterpret_cast<const char*>(prog.data()), prog.size()), slots,
                    g->arena_bytes()});
  }
  REQUIRE((*w)->Finish().ok());
  const std::string id = (*w)->stats().content_id;
  REQUIRE((*w)->Commit().ok());
  old = Result<std::shared_ptr<const format::ContextBinary>>(InvalidGraph("closed"));
  fs::rename(tmp, c.bin);
  EditEpNode(c.ctx,
             [&](format::EpContextNode& e) { e.notes = "content_id=" + id + ";format=1.0"; });
}

std::string LoadError(const fs::path& ctx, const SessionOptions& o = {}) {
  auto s = Session::Create(ctx, o);
  REQUIRE_FALSE(s.ok());
  return s.status().ToString();
}

}  // namespace

TEST_CASE("a compiled model gives the numbers of its source model", "[runtime]") {
  auto c = CompileCnn();
  auto compiled = Session::Create(c->ctx);
  REQUIRE(compiled.ok());
  auto source = Session::Create(c->dir / "cnn.onnx");
  REQUIRE(source.ok());
  CHECK((*compiled)->load_report().ep_context_nodes == 1);
  CHECK((*compiled)->load_report().onnx_nodes == 0);
  REQUIRE((*compiled)->load_report().backends.size() == 1);
  CHECK((*compiled)->load_report().backends[0].verdict == Verdict::kOptimal);
  const Tensor x = RandomTensor({2, 3, 8, 8}, 7);
  auto a = (*compiled)->Run({{"x", x}});
  auto b = (*source)->Run({{"x", x}});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE((*a)[0].shape() == std::vector<int64_t>{2, 5});
  double row_sum = 0;
  for (int64_t i = 0; i < 10; ++i) {
    CHECK((*a)[0].data<float>()[i] == Approx((*b)[0].data<float>()[i]).epsilon(1e-5));
    row_sum += (*a)[0].data<float>()[i];
  }
  CHECK(row_sum == Approx(2.0));  // two softmax rows
}

TEST_CASE("Run checks its inputs", "[runtime]") {
  auto c = CompileCnn();
  auto s = Session::Create(c->ctx);
  REQUIRE(s.ok());
  CHECK_THAT((*s)->Run({}).status().message(), Catch::Contains("'x' is missing"));
  CHECK_THAT((*s)->Run({{"nope", RandomTensor({1}, 1)}}).status().message(),
             Catch::Contains("no input named 'nope'"));
  CHECK_THAT((*s)->Run({{"x", RandomTensor({2, 3, 8}, 1)}}).status().message(),
             Catch::Contains("must have shape"));
  CHECK_THAT(
      (*s)->Run({{"x", Tensor::Allocate(DataType::kInt64, {2, 3, 8, 8})}}).status().message(),
      Catch::Contains("must be float"));
}

TEST_CASE("buffer loads need the context file path for an external binary", "[runtime]") {
  auto c = CompileCnn();
  const std::string bytes = ortc::test::ReadFile(c->ctx.string());
  std::span<const std::byte> span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  auto without = Session::CreateFromBuffer(span);
  REQUIRE_FALSE(without.ok());
  CHECK_THAT(without.status().message(), Catch::Contains("context_file_path"));
  SessionOptions o;
  o.context_file_path = c->ctx;
  CHECK(Session::CreateFromBuffer(span, o).ok());
  auto embedded = CompileCnn(1);
  const std::string eb = ortc::test::ReadFile(embedded->ctx.string());
  CHECK(Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(eb.data()), eb.size()}).ok());
}

TEST_CASE("the version gate refuses with both sides named", "[runtime][gate]") {
  auto c = CompileCnn();
  SECTION("wrong magic") {
    std::string b = ortc::test::ReadFile(c->bin.string());
    b[0] = 'Z';
    ortc::test::WriteFile(c->bin, b);
    CHECK_THAT(LoadError(c->ctx),
               Catch::Contains("INVALID_GRAPH") && Catch::Contains("not an ortc binary"));
  }
  SECTION("truncated binary") {
    std::string b = ortc::test::ReadFile(c->bin.string());
    ortc::test::WriteFile(c->bin, b.substr(0, b.size() / 2));
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("truncated"));
  }
  SECTION("format major from the future") {
    std::string b = ortc::test::ReadFile(c->bin.string());
    b[8] = 2;  // format_major
    ortc::test::WriteFile(c->bin, b);
    CHECK_THAT(LoadError(c->ctx),
               Catch::Contains("format version 2.0") && Catch::Contains("(format 1.0)"));
  }
  SECTION("checksum mismatch") {
    std::string b = ortc::test::ReadFile(c->bin.string());
    b[4096 + 5] ^= 1;
    ortc::test::WriteFile(c->bin, b);
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("checksum mismatch"));
  }
  SECTION("stale pairing") {
    EditEpNode(c->ctx, [](format::EpContextNode& e) {
      e.notes = "content_id=00000000000000000000000000000000;format=1.0";
    });
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("stale pairing") &&
                                      Catch::Contains("00000000000000000000000000000000"));
  }
  SECTION("graph missing from the binary") {
    EditEpNode(c->ctx, [](format::EpContextNode& e) { e.partition_name = "ghost_graph"; });
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("graph 'ghost_graph' is not in the binary"));
  }
  SECTION("unknown backend") {
    EditEpNode(c->ctx, [](format::EpContextNode& e) { e.source = "ortc.npu"; });
    CHECK_THAT(LoadError(c->ctx),
               Catch::Contains("needs backend npu") && Catch::Contains("unsupported"));
  }
  SECTION("another runtime's node") {
    EditEpNode(c->ctx, [](format::EpContextNode& e) { e.source = "QNNExecutionProvider"; });
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("'QNNExecutionProvider', not by ortc"));
  }
  SECTION("absolute, escaping and symlinked binary paths") {
    EditEpNode(c->ctx, [&](format::EpContextNode& e) { e.ep_cache_context = c->bin.string(); });
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("absolute"));
    EditEpNode(c->ctx, [](format::EpContextNode& e) { e.ep_cache_context = "../cnn_cpu.bin"; });
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("leaves the model's folder"));
    TempDir other;
    fs::copy_file(c->bin, other / "real.bin");
    fs::create_symlink(other / "real.bin", c->dir / "link.bin");
    EditEpNode(c->ctx, [](format::EpContextNode& e) { e.ep_cache_context = "link.bin"; });
    CHECK_THAT(LoadError(c->ctx), Catch::Contains("resolves outside the model's folder"));
  }
  SECTION("corrupt embedded payload") {
    auto e = CompileCnn(1);
    EditEpNode(e->ctx, [](format::EpContextNode& n) {
      if (n.main_context == 1) n.ep_cache_context[4096 + 10] ^= 0x7f;  // a weight byte
    });
    CHECK_THAT(LoadError(e->ctx), Catch::Contains("embedded payload corrupt"));
  }
  SECTION("a big-endian device (injected)") {
    DeviceDescription d = DeviceDescription::Detect();
    d.little_endian = false;
    SessionOptions o;
    o.device = &d;
    CHECK_THAT(LoadError(c->ctx, o),
               Catch::Contains("little-endian") && Catch::Contains("big-endian"));
  }
  SECTION("an ISA the device lacks (injected)") {
    Retarget(*c, {"avx512f"});
    DeviceDescription d;
    d.cpu_arch = "x86_64";
    d.cpu_isa = {"sse4.2", "avx2"};
    SessionOptions o;
    o.device = &d;
    CHECK_THAT(LoadError(c->ctx, o), Catch::Contains("compiled for CPU ISA avx512f") &&
                                         Catch::Contains("[sse4.2, avx2]") &&
                                         Catch::Contains("recompile"));
  }
}

TEST_CASE("verdicts: optimal, prefer recompilation, and the policy that refuses it",
          "[runtime][gate]") {
  auto c = CompileCnn();
  Retarget(*c, {"avx2"});
  DeviceDescription d;
  d.cpu_arch = "x86_64";
  d.cpu_isa = {"sse4.2", "avx2", "avx512f"};
  SessionOptions o;
  o.device = &d;
  auto report = CheckModel(c->ctx, o);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  REQUIRE(report->backends.size() == 1);
  CHECK(report->backends[0].verdict == Verdict::kPreferRecompilation);
  CHECK_THAT(report->backends[0].reason, Catch::Contains("avx512f"));
  CHECK(Session::Create(c->ctx, o).ok());  // runs under the default policy
  o.policy = VerdictPolicy::kRequireOptimal;
  auto strict = Session::Create(c->ctx, o);
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.status().code() == StatusCode::kModelRequiresCompilation);
  d.cpu_isa = {"sse4.2", "avx2"};
  auto exact = CheckModel(c->ctx, o);
  REQUIRE(exact.ok());
  CHECK(exact->backends[0].verdict == Verdict::kOptimal);
}

TEST_CASE("several threads may Run one session at once", "[runtime][threads]") {
  auto c = CompileCnn();
  auto s = Session::Create(c->ctx);
  REQUIRE(s.ok());
  const Tensor x = RandomTensor({2, 3, 8, 8}, 9);
  auto expected = (*s)->Run({{"x", x}});
  REQUIRE(expected.ok());
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        auto r = (*s)->Run({{"x", x}});
        if (!r.ok() || std::memcmp((*r)[0].raw(), (*expected)[0].raw(), (*r)[0].byte_size()) != 0)
          mismatches[t]++;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches == std::vector<int>{0, 0, 0, 0});
}

TEST_CASE("sessions sharing a binary map it once", "[runtime]") {
  auto c = CompileCnn();
  auto first = Session::Create(c->ctx);
  REQUIRE(first.ok());
  const int opens = loader::BinaryOpenCount();
  auto second = Session::Create(c->ctx);
  REQUIRE(second.ok());
  CHECK(loader::BinaryOpenCount() == opens);
  first->reset();
  second->reset();
  auto third = Session::Create(c->ctx);  // the last user went: mapped afresh
  REQUIRE(third.ok());
  CHECK(loader::BinaryOpenCount() == opens + 1);
}

TEST_CASE("the static memory plan keeps views of a buffer alive", "[runtime][memory_plan]") {
  // a = Relu(x); r = Reshape(a) (a view of a's memory at run time); b = Neg(x); c = Add(b, b);
  // y = Add(r, c). If a's slot were freed after the Reshape, b or c could overwrite r.
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {4, 64}).IntInitializer("flat", {256});
  m.Node("Relu", {"x"}, {"a"}).Node("Reshape", {"a", "flat"}, {"r"}).Node("Neg", {"x"}, {"b"});
  m.Node("Add", {"b", "b"}, {"c"})
      .Node("Reshape", {"c", "flat"}, {"c2"})
      .Node("Add", {"r", "c2"}, {"y"});
  m.Output("y");
  m.Save(dir / "alias.onnx");
  compile::CompileOptions o;
  o.model = dir / "alias.onnx";
  REQUIRE(compile::Compile(o).ok());
  auto compiled = Session::Create(dir / "alias_ctx.onnx");
  REQUIRE(compiled.ok());
  CHECK((*compiled)->load_report().arena_bytes > 0);  // the plan is in use
  const Tensor x = RandomTensor({4, 64}, 5);
  auto y = (*compiled)->Run({{"x", x}});
  REQUIRE(y.ok());
  for (int64_t i = 0; i < 256; ++i) {
    const float v = x.data<float>()[i];
    CHECK((*y)[0].data<float>()[i] == Approx(std::max(v, 0.f) - 2 * v));
  }
}

TEST_CASE("a session's load leaves its static outputs' buffers in the pool for the first run",
          "[session][buffer_pool]") {
  // An output size no other test asks for: the pool's change is this session's doing.
  const std::vector<int64_t> shape{333, 257};
  const size_t bytes = (333 * 257 * sizeof(float) + 4095) / 4096 * 4096;
  TempDir dir;
  ModelBuilder m;
  m.Input("x", shape).Node("Relu", {"x"}, {"y"}).Output("y");
  m.Save(dir / "relu.onnx");
  compile::CompileOptions o;  // compiled: the bundle's outputs have their static shapes
  o.model = dir / "relu.onnx";
  REQUIRE(compile::Compile(o).ok());
  const Tensor x = RandomTensor(shape, 7);
  const size_t before = exec::PooledBytes();
  auto s = Session::Create(dir / "relu_ctx.onnx");
  REQUIRE(s.ok());
  const size_t loaded = exec::PooledBytes();
  CHECK(loaded >= before + bytes);  // written once at load, waiting in the pool
  auto y = (*s)->Run({{"x", x}});
  REQUIRE(y.ok());
  CHECK(exec::PooledBytes() <= loaded - bytes);  // the first run's output took it
  CHECK((*y)[0].data<float>()[5] == std::max(x.data<float>()[5], 0.f));
}

TEST_CASE("an op output above max_tensor_bytes fails the run instead of exhausting memory",
          "[session]") {
  // Tile [1, 4] by [1000, 1000]: a 16 MB output, from a 16-byte input.
  ModelBuilder b;
  b.Input("x", {1, 4}).IntInitializer("reps", {1000, 1000});
  b.Node("Tile", {"x", "reps"}, {"y"}).Output("y");
  const std::string bytes = b.Serialize();
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", Tensor::FromBytes(DataType::kFloat, {1, 4}, x.data(), sizeof(float) * 4)}};
  SessionOptions limited;
  limited.max_tensor_bytes = 1 << 20;
  auto small = Session::CreateFromBuffer(bytes.data(), bytes.size(), limited);
  REQUIRE(small.ok());
  auto refused = (*small)->Run(feeds);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kOutOfMemory);
  CHECK_THAT(refused.status().message(),
             Catch::Contains("1.6e+07 bytes") && Catch::Contains("max_tensor_bytes"));
  // The default (physical memory) lets it run.
  auto session = Session::CreateFromBuffer(bytes.data(), bytes.size());
  REQUIRE(session.ok());
  auto out = (*session)->Run(feeds);
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == std::vector<int64_t>{1000, 4000});
}
