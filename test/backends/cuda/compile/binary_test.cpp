// Compiled CUDA binaries through the real `ortc compile`: manifest versions and targets, the
// EPContext attributes, fp16 weights stored as exactly the converted (and repacked) bytes, and
// modules per target when NVRTC is present.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <map>

#include "codegen/reference_conversions.h"
#include "cuda/compile/toolchain/nvrtc.h"
#include "cuda_program_generated.h"
#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "model_builder.h"
#include "run_ortc.h"
#include "test_data.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::NvrtcNotFound;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
namespace fbc = ortc::fb::cuda;

namespace {

// x -> Conv(W, B) -> Sigmoid -> y; the batch is symbolic until --input-shape fixes it.
ModelBuilder SmallCnn(const std::vector<float>& w) {
  ModelBuilder b(17, 8);
  b.Input("x", {-1, 3, 8, 8});
  b.Initializer("W", {4, 3, 3, 3}, w).Initializer("B", {4}, {0.5f, 0.25f, -1.0f, 3.0f});
  b.Node("Conv", {"x", "W", "B"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv");
  b.Node("Sigmoid", {"c"}, {"y"}, {}, "sig").Output("y");
  return b;
}

std::map<std::string, std::string> Versions(const ortc::format::ContextBinary& bin) {
  std::map<std::string, std::string> v;
  for (const auto* kv : *bin.manifest().backend_versions())
    v[kv->key()->str()] = kv->value()->str();
  return v;
}

std::vector<std::string> Targets(const ortc::format::ContextBinary& bin) {
  std::vector<std::string> t;
  for (const auto* s : *bin.manifest().hardware_targets()) t.push_back(s->str());
  return t;
}

const ortc::format::EpContextNode CudaNode(const std::filesystem::path& ctx) {
  const auto model = ortc::test::LoadProto(ctx);
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != "EPContext") continue;
    auto ep = ortc::format::EpContextNode::FromNodeProto(n);
    REQUIRE(ep.ok());
    if (ep->source == "ortc.cuda") return *ep;
  }
  FAIL("no CUDA EPContext node");
  return {};
}

}  // namespace

TEST_CASE("without --input-shape CUDA refuses the dynamic nodes, with it takes them", "[binary]") {
  TempDir dir;
  SmallCnn(ortc::test::RandomFloats(1, 108)).Save(dir / "m.onnx");
  const std::string model = (dir / "m.onnx").string();
  auto r = RunOrtc("partition " + model + " --ep cuda,cpu");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("dynamic shape (dim 'N'): CUDA kernels are specialized to "
                                    "static shapes; fix it with --input-shape"));
  // compile says why CUDA took nothing, in text and in --json.
  r = RunOrtc("compile " + model + " --ep cuda,cpu -o " + (dir / "dyn").string());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("cuda: 0 group(s)"));
  CHECK_THAT(r.out, Catch::Contains("refused 2 node(s): dynamic shape (dim 'N')"));
  r = RunOrtc("compile " + model + " --ep cuda,cpu --json -o " + (dir / "dyn_json").string());
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const auto& cuda = report["backends"][0];
  CHECK(cuda["backend"] == "cuda");
  REQUIRE(cuda["refusals"].size() == 1);
  CHECK(cuda["refusals"][0]["backend"] == "cuda");
  CHECK(cuda["refusals"][0]["node_count"] == 2);
  CHECK(cuda["refusals"][0]["nodes"].size() == 2);
  r = RunOrtc("partition " + model + " --ep cuda,cpu --input-shape x=2x3x8x8");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("cuda_0: 2 node(s)"));
  CHECK_THAT(r.out, !Catch::Contains("dynamic shape"));
  r = RunOrtc("partition " + model + " --ep cuda,cpu --input-shape x=2x3x9x8");
  CHECK(r.exit_code != 0);
  r = RunOrtc("partition " + model + " --ep cuda,cpu --input-shape nope=1");
  CHECK(r.exit_code != 0);
}

TEST_CASE("an fp16 CUDA binary records versions and targets and holds converted weights",
          "[binary]") {
  TempDir dir;
  const auto w = ortc::test::RandomFloats(2, 108);
  SmallCnn(w).Save(dir / "m.onnx");
  auto r = RunOrtc("compile " + (dir / "m.onnx").string() +
                       " --ep cuda,cpu --input-shape x=1x3x8x8 --precision fp16 "
                       "--target-arch sm_90,sm_80 -q",
                   true);
  if (NvrtcNotFound(r)) {
    WARN("SKIP: NVRTC is not available here: " << r.out);
    return;
  }
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto bin = ortc::format::ContextBinary::OpenFile(dir / "m_cuda.bin");
  REQUIRE(bin.ok());
  const auto versions = Versions(**bin);
  CHECK(versions.at("cuda.precision") == "fp16");
  CHECK(versions.at("cuda.layout") == "nhwc");
  CHECK(versions.at("cuda.toolkit") == "13.0");
  CHECK(versions.at("cuda.min_driver") == "13000");
  CHECK(versions.at("cudnn").rfind("9.", 0) == 0);
  CHECK(versions.count("cublas") == 0);  // no GEMM in this model: cuBLAS is not required
  CHECK(versions.count("cuda.nvrtc") == 1);
  CHECK(Targets(**bin) == std::vector<std::string>{"sm_80", "sm_90", "compute_90"});

  const auto ep = CudaNode(dir / "m_ctx.onnx");
  CHECK(ep.ep_sdk_version == "CUDA 13.0");
  CHECK(ep.hardware_architecture == "sm_80,sm_90,compute_90");
  CHECK(ortc::format::NotesValue(ep.notes, "precision") == "fp16");
  CHECK(ortc::format::NotesValue(ep.notes, "layout") == "nhwc");
  // The node names the device-side requirements, the same values as the manifest.
  CHECK(ortc::format::NotesValue(ep.notes, "cuda.min_driver") == versions.at("cuda.min_driver"));
  CHECK(ortc::format::NotesValue(ep.notes, "cuda.nvrtc") == versions.at("cuda.nvrtc"));
  CHECK(ortc::format::NotesValue(ep.notes, "cudnn") == versions.at("cudnn"));
  CHECK(ortc::format::NotesValue(ep.notes, "cublas").empty());
  CHECK(ortc::format::NotesValue(ep.notes, "content_id") == std::string((*bin)->content_id()));

  // The program's filter weight: fp16 (by _Float16) in KRSC order, byte for byte.
  const auto* g = (*bin)->FindGraph(ep.partition_name);
  REQUIRE(g);
  const auto program = (*bin)->ProgramBytes(*g);
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(program.data()), program.size());
  REQUIRE(fbc::VerifyProgramBuffer(verifier));
  const auto* p = fbc::GetProgram(program.data());
  CHECK(p->precision() == fbc::Precision::FP16);
  CHECK(p->conv_layout() == fbc::TensorLayout::NHWC);
  const fbc::ConvCall* conv = nullptr;
  for (const auto* s : *p->steps()) {
    if (s->conv()) conv = s->conv();
  }
  REQUIRE(conv);
  const auto* wbuf = p->buffers()->Get(conv->w());
  REQUIRE(wbuf->kind() == fbc::BufferKind::Weight);
  const auto bytes = (*bin)->WeightBytes(g->weights()->Get(wbuf->weight_slot()));
  REQUIRE(bytes.size() == 108 * 2);
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c)
      for (int rs = 0; rs < 9; ++rs) {
        uint16_t got;
        std::memcpy(&got, bytes.data() + 2 * ((k * 9 + rs) * 3 + c), 2);
        REQUIRE(got == ortc::test::cuda::RefFloatToHalf(w[(k * 3 + c) * 9 + rs]));
      }

  // Modules: one cubin per target plus PTX of the newest, each stored as an artefact.
  std::vector<std::string> modules;
  for (const auto* m : *p->modules()) {
    modules.push_back(m->target()->str());
    CHECK(m->byte_size() > 0);
    bool found = false;
    for (const auto* s : *(*bin)->manifest().sections())
      found = found || (s->name() && s->name()->str() == m->artefact()->str() &&
                        s->size() == m->byte_size());
    CHECK(found);
  }
  CHECK(modules == std::vector<std::string>{"sm_80", "sm_90", "compute_90"});
  CHECK(p->kernels()->size() >= 2);  // the boundary casts and the sigmoid at least
}

TEST_CASE("tf32 and fp32 CUDA binaries record their precision and keep fp32 weights", "[binary]") {
  TempDir dir;
  const auto w = ortc::test::RandomFloats(4, 108);
  SmallCnn(w).Save(dir / "m.onnx");
  struct Expect {
    const char* precision;
    fbc::Precision program;
    const char* layout;
  };
  for (const Expect& e : {Expect{"tf32", fbc::Precision::TF32, "nhwc"},
                          Expect{"fp32", fbc::Precision::FP32, "nchw"}}) {
    INFO(e.precision);
    const std::filesystem::path out = dir / e.precision;
    std::filesystem::create_directories(out);
    auto r =
        RunOrtc("compile " + (dir / "m.onnx").string() +
                    " --ep cuda,cpu --input-shape x=1x3x8x8 --target-arch sm_90 -q --precision " +
                    e.precision + " -o " + out.string() + "/",
                true);
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    auto bin = ortc::format::ContextBinary::OpenFile(out / "m_cuda.bin");
    REQUIRE(bin.ok());
    const auto versions = Versions(**bin);
    CHECK(versions.at("cuda.precision") == e.precision);
    CHECK(versions.at("cuda.layout") == e.layout);
    const auto ep = CudaNode(out / "m_ctx.onnx");
    CHECK(ortc::format::NotesValue(ep.notes, "precision") == e.precision);
    const auto* g = (*bin)->FindGraph(ep.partition_name);
    REQUIRE(g);
    const auto program = (*bin)->ProgramBytes(*g);
    const auto* p = fbc::GetProgram(program.data());
    CHECK(p->precision() == e.program);
    // The filter stays fp32, bit for bit (tf32 rounds on the tensor cores, not in storage).
    const fbc::ConvCall* conv = nullptr;
    for (const auto* s : *p->steps()) {
      if (s->conv()) conv = s->conv();
    }
    REQUIRE(conv);
    const auto bytes =
        (*bin)->WeightBytes(g->weights()->Get(p->buffers()->Get(conv->w())->weight_slot()));
    REQUIRE(bytes.size() == 108 * 4);
    const bool krsc = std::string(e.layout) == "nhwc";
    for (int k = 0; k < 4; ++k)
      for (int c = 0; c < 3; ++c)
        for (int rs = 0; rs < 9; ++rs) {
          float got;
          const int at = krsc ? (k * 9 + rs) * 3 + c : (k * 3 + c) * 9 + rs;
          std::memcpy(&got, bytes.data() + 4 * at, 4);
          REQUIRE(got == w[(k * 3 + c) * 9 + rs]);
        }
  }
}

TEST_CASE("compile options are validated before anything is written", "[binary]") {
  TempDir dir;
  SmallCnn(ortc::test::RandomFloats(3, 108)).Save(dir / "m.onnx");
  const std::string model = (dir / "m.onnx").string();
  auto r = RunOrtc("compile " + model + " --ep cuda,cpu --input-shape x=1x3x8x8 --target-arch sm8",
                   true);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.out, Catch::Contains("not a CUDA architecture"));
  r = RunOrtc("compile " + model + " --ep cuda,cpu --input-shape x=1x3x8x8 --precision fp8");
  CHECK(r.exit_code != 0);
  CHECK_FALSE(std::filesystem::exists(dir / "m_cuda.bin"));
  CHECK_FALSE(std::filesystem::exists(dir / "m_ctx.onnx"));
}

TEST_CASE("a CUDA binary of generated kernels only requires neither cuDNN nor cuBLAS", "[binary]") {
  TempDir dir;
  ModelBuilder b(17, 8);
  b.Input("x", {2, 8});
  b.Node("Sigmoid", {"x"}, {"s"}, {}, "sig");
  b.Node("Tanh", {"s"}, {"y"}, {}, "tanh").Output("y");
  b.Save(dir / "m.onnx");
  auto r = RunOrtc("compile " + (dir / "m.onnx").string() + " --ep cuda,cpu -q", true);
  if (NvrtcNotFound(r)) {
    WARN("SKIP: NVRTC is not available here: " << r.out);
    return;
  }
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto bin = ortc::format::ContextBinary::OpenFile(dir / "m_cuda.bin");
  REQUIRE(bin.ok());
  const auto versions = Versions(**bin);
  CHECK(versions.count("cudnn") == 0);
  CHECK(versions.count("cublas") == 0);
  CHECK(versions.count("cuda.min_driver") == 1);
}

TEST_CASE("without NVRTC a CUDA compile fails clearly and leaves no file behind", "[binary]") {
  TempDir dir;
  SmallCnn(ortc::test::RandomFloats(3, 108)).Save(dir / "m.onnx");
  // The child ortc inherits this environment: NVRTC is looked for only at the given path.
  REQUIRE(setenv("ORTC_NVRTC_LIBRARY", (dir / "no-such-libnvrtc.so").c_str(), 1) == 0);
  auto r = RunOrtc(
      "compile " + (dir / "m.onnx").string() + " --ep cuda,cpu --input-shape x=1x3x8x8", true);
  unsetenv("ORTC_NVRTC_LIBRARY");
  INFO(r.out);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.out, Catch::Contains("NVRTC"));
  CHECK_THAT(r.out, Catch::Contains("ORTC_NVRTC_LIBRARY"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    CHECK(entry.path().filename() == "m.onnx");
}
