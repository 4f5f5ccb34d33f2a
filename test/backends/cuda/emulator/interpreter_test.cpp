// ProgramInterpreter on bad requests: unknown graph names and inputs of the wrong count, type or
// size come back as errors, never as a crash.
#include <catch2/catch.hpp>

#include "emulator_models.h"
#include "program_interpreter.h"
#include "run_ortc.h"
#include "test_data.h"

using namespace ortc::test::cuda;
using ortc::test::TempDir;

TEST_CASE("the interpreter refuses unknown graphs and mismatched inputs", "[interpreter]") {
  TempDir dir;
  Conv1dModel().builder.Save(dir / "m.onnx");
  auto r = ortc::test::RunOrtc("compile " + (dir / "m.onnx").string() +
                                   " --ep cuda,cpu --target-arch sm_80 -q -o " +
                                   (dir / "m_ctx.onnx").string(),
                               true);
  if (ortc::test::NvrtcNotFound(r)) {
    WARN("SKIP: NVRTC is not available here: " << r.out);
    return;
  }
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto bin = ortc::format::ContextBinary::OpenFile(dir / "m_cuda.bin");
  REQUIRE(bin.ok());
  std::shared_ptr<const ortc::format::ContextBinary> shared = std::move(bin).value();
  CHECK_FALSE(ProgramInterpreter::Load(shared, "no_such_graph").ok());

  const std::string graph = shared->manifest().graphs()->Get(0)->name()->str();
  auto interp = ProgramInterpreter::Load(shared, graph);
  REQUIRE(interp.ok());
  StepCounts counts;
  CHECK_FALSE(interp->Run({}, &counts).ok());
  CHECK_FALSE(interp->Run({ortc::test::RandomTensor({2, 6, 9}, 1)}, &counts).ok());
  CHECK_FALSE(
      interp->Run({ortc::Tensor::Allocate(ortc::DataType::kInt32, {2, 6, 10})}, &counts).ok());
  auto ok = interp->Run({ortc::test::RandomTensor({2, 6, 10}, 1)}, &counts);
  REQUIRE(ok.ok());
  CHECK(ok->size() == 1);
  // The grouped 1-D convolution (3 channels per group) is one generated kernel.
  CHECK(counts.launches == 1);
  CHECK(counts.convs == 0);
}
