// Hand-built CUDA context binary and ctx model for the runtime tests (see cuda_fixture.h).
#include "cuda_fixture.h"

#include <onnx/onnx_pb.h>

#include <fstream>

#include "bundle/context_binary_writer.h"
#include "cuda_program_generated.h"
#include "format/ep_context.h"

namespace ortc::test {
namespace {

namespace fbc = ortc::fb::cuda;
constexpr int kFloat = 1;

std::string BuildProgram(const CudaModelSpec& spec) {
  flatbuffers::FlatBufferBuilder b;
  auto dims = b.CreateVector(std::vector<int64_t>{4});
  // 0: input x, 1: output y, 2: arena copy of x.
  std::vector<flatbuffers::Offset<fbc::Buffer>> buffers = {
      fbc::CreateBuffer(b, b.CreateString("x"), fbc::BufferKind::Input, kFloat, dims,
                        fbc::TensorLayout::Plain, -1, 0, 0, -1, 16),
      fbc::CreateBuffer(b, b.CreateString("y"), fbc::BufferKind::Output, kFloat, dims,
                        fbc::TensorLayout::Plain, -1, 0, 0, -1, 16),
      fbc::CreateBuffer(b, b.CreateString("x_copy"), fbc::BufferKind::Arena, kFloat, dims,
                        fbc::TensorLayout::Plain, -1, -1, 0, -1, 16)};
  std::vector<flatbuffers::Offset<fbc::Step>> steps;
  steps.push_back(
      fbc::CreateStep(b, b.CreateString("copy_x"), 0, 0, 0, 0, fbc::CreateCopy(b, 0, 2, 16)));
  std::vector<flatbuffers::Offset<fbc::Module>> modules;
  if (spec.modules.empty()) {
    // Without a kernel, y is the copy itself.
    steps.push_back(
        fbc::CreateStep(b, b.CreateString("copy_y"), 0, 0, 0, 0, fbc::CreateCopy(b, 2, 1, 16)));
  } else {
    auto launch = fbc::CreateKernelLaunch(b, b.CreateString("add_one"),
                                          b.CreateVector(std::vector<uint32_t>{1, 1, 1}),
                                          b.CreateVector(std::vector<uint32_t>{32, 1, 1}), 0,
                                          b.CreateVector(std::vector<int32_t>{2, 1}));
    steps.push_back(fbc::CreateStep(b, b.CreateString("add_one"), 0, launch));
    for (const auto& [target, image] : spec.modules) {
      const bool ptx = target.rfind("compute_", 0) == 0;
      modules.push_back(fbc::CreateModule(b, b.CreateString(target),
                                          ptx ? fbc::ModuleKind::Ptx : fbc::ModuleKind::Cubin,
                                          b.CreateString("g0." + target), image.size()));
    }
  }
  auto program = fbc::CreateProgram(
      b, b.CreateVector(buffers), b.CreateVector(steps), b.CreateVector(std::vector<int32_t>{0}),
      b.CreateVector(std::vector<int32_t>{1}), 256, 0, fbc::Precision::FP32,
      fbc::TensorLayout::NCHW, b.CreateVector(modules),
      b.CreateVectorOfStrings(std::vector<std::string>{"add_one"}));
  fbc::FinishProgramBuffer(b, program);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace

Result<std::filesystem::path> WriteCudaModel(const std::filesystem::path& dir,
                                             const CudaModelSpec& spec) {
  std::filesystem::create_directories(dir);
  const auto bin_path = dir / "add_one_cuda.bin";
  bundle::BinaryInfo info{"ortc test", "cuda", spec.versions, spec.targets, {}};
  auto w = bundle::ContextBinaryWriter::Create(bin_path, info);
  if (!w.ok()) return w.status();
  for (const auto& [target, image] : spec.modules) (*w)->AddArtefact("g0." + target, image, 256);
  bundle::GraphSpec g;
  g.name = "g0";
  g.inputs = {{"x", kFloat, {4}, {}}};
  g.outputs = {{"y", kFloat, {4}, {}}};
  g.program = BuildProgram(spec);
  g.arena_bytes = 256;
  (*w)->AddGraph(g);
  ORTC_RETURN_IF_ERROR((*w)->Finish());
  const std::string id = (*w)->stats().content_id;
  ORTC_RETURN_IF_ERROR((*w)->Commit());

  onnx::ModelProto m;
  m.set_ir_version(10);
  m.add_opset_import()->set_version(17);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto* graph = m.mutable_graph();
  graph->set_name("add_one");
  for (const char* name : {"x", "y"}) {
    auto* vi = std::string(name) == "x" ? graph->add_input() : graph->add_output();
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(kFloat);
    t->mutable_shape()->add_dim()->set_dim_value(4);
  }
  format::EpContextNode ep;
  ep.name = "cuda_0";
  ep.inputs = {"x"};
  ep.outputs = {"y"};
  ep.ep_cache_context = "add_one_cuda.bin";
  ep.ep_sdk_version = "13.0";
  ep.hardware_architecture = "sm_80";
  ep.partition_name = "g0";
  ep.source = "ortc.cuda";
  ep.notes = "content_id=" + id + ";format=1.0";
  ep.max_size = 256;
  *graph->add_node() = ep.ToNodeProto();
  const auto ctx = dir / "add_one_ctx.onnx";
  std::ofstream out(ctx, std::ios::binary);
  if (!m.SerializeToOstream(&out)) return IoError(ctx.string() + ": cannot write");
  return ctx;
}

}  // namespace ortc::test
