// The CUDA program validator, on the host: a valid program passes, and each damaged field is
// refused with a message naming it, before anything would be allocated on a device.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "cuda_program_generated.h"
#include "program_validator.h"

namespace fbc = ortc::fb::cuda;
using ortc::cuda::ValidateCudaProgram;

namespace {

struct BufferSpec {
  fbc::BufferKind kind;
  std::vector<int64_t> dims;
  uint64_t byte_size;
  int32_t slot = -1, io = -1, alias_of = -1;
  uint64_t offset = 0;
  int32_t dtype = 1;  // float
};

struct ProgramSpec {
  std::vector<BufferSpec> buffers;
  // Step fields: which kind, and the values each damage changes.
  std::vector<uint32_t> grid = {1, 1, 1}, block = {4, 1, 1};
  uint32_t shared = 0;
  std::vector<int32_t> launch_args = {2, 3};
  std::vector<int32_t> same_index;  // KernelLaunch.same_index (absent when empty)
  std::string kernel = "k0", listed_kernel = "k0";
  int64_t m = 1, n = 4, k = 4, batch = 1, stride_a = 0;
  int32_t gemm_a = 0, gemm_b = 1, gemm_y = 2;
  int64_t lda = 0, ldb = 0, ldy = 0;
  bool strided = false;  // the gemm stored as Step.strided_gemm
  std::vector<int64_t> x_dims = {1, 1, 4}, w_dims = {1, 1, 1}, pads = {0, 0}, strides = {1};
  int32_t conv_bias = -1;
  uint64_t copy_bytes = 16;
  bool two_kinds = false;
  std::vector<int32_t> inputs = {0}, outputs = {3};
  uint64_t arena = 64;
};

// in [1,4] (input) x w [4,4] (weight) -> h [1,4] (arena) -> kernel -> out [1,4]; plus a copy,
// a 1-D convolution of in by a 1-element filter into h, and an alias of h.
ProgramSpec Valid() {
  ProgramSpec p;
  p.buffers = {{fbc::BufferKind::Input, {1, 4}, 16, -1, 0},
               {fbc::BufferKind::Weight, {4, 4}, 64, 0},
               {fbc::BufferKind::Arena, {1, 4}, 16},
               {fbc::BufferKind::Output, {1, 4}, 16, -1, 0},
               {fbc::BufferKind::Alias, {4}, 16, -1, -1, 2}};
  return p;
}

std::string Validate(const ProgramSpec& p) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fbc::Buffer>> buffers;
  for (const auto& x : p.buffers) {
    buffers.push_back(fbc::CreateBuffer(b, b.CreateString("b"), x.kind, x.dtype,
                                        b.CreateVector(x.dims), fbc::TensorLayout::Plain, x.slot,
                                        x.io, x.offset, x.alias_of, x.byte_size));
  }
  std::vector<flatbuffers::Offset<fbc::Step>> steps;
  auto launch = fbc::CreateKernelLaunch(
      b, b.CreateString(p.kernel), b.CreateVector(p.grid), b.CreateVector(p.block), p.shared,
      b.CreateVector(p.launch_args), p.same_index.empty() ? 0 : b.CreateVector(p.same_index));
  auto gemm = fbc::CreateGemmCall(b, p.gemm_a, p.gemm_b, -1, -1, p.gemm_y, p.m, p.n, p.k, p.batch,
                                  p.stride_a, 0, 0, false, false, 1.f, 0.f, fbc::Activation::None,
                                  0, p.lda, p.ldb, p.ldy);
  auto conv = fbc::CreateConvCall(b, 0, 1, p.conv_bias, -1, 2, b.CreateVector(p.x_dims),
                                  b.CreateVector(p.w_dims), b.CreateVector(p.x_dims),
                                  b.CreateVector(p.pads), b.CreateVector(p.strides),
                                  b.CreateVector(std::vector<int64_t>{1}));
  auto copy = fbc::CreateCopy(b, 2, 3, p.copy_bytes);
  steps.push_back(fbc::CreateStep(b, b.CreateString("gemm"), 0, p.two_kinds ? launch : 0, 0,
                                  p.strided ? 0 : gemm, 0, p.strided ? gemm : 0));
  steps.push_back(fbc::CreateStep(b, b.CreateString("conv"), 0, 0, conv));
  steps.push_back(fbc::CreateStep(b, b.CreateString("kernel"), 0, launch));
  steps.push_back(fbc::CreateStep(b, b.CreateString("copy"), 0, 0, 0, 0, copy));
  std::vector<flatbuffers::Offset<flatbuffers::String>> kernels = {b.CreateString(p.listed_kernel)};
  auto program = fbc::CreateProgram(b, b.CreateVector(buffers), b.CreateVector(steps),
                                    b.CreateVector(p.inputs), b.CreateVector(p.outputs), p.arena, 0,
                                    fbc::Precision::FP32, fbc::TensorLayout::Plain, 0,
                                    b.CreateVector(kernels));
  fbc::FinishProgramBuffer(b, program);
  flatbuffers::Verifier verifier(b.GetBufferPointer(), b.GetSize());
  REQUIRE(fbc::VerifyProgramBuffer(verifier));
  return ValidateCudaProgram(*fbc::GetProgram(b.GetBufferPointer()), 1);
}

}  // namespace

TEST_CASE("a valid CUDA program passes the validator", "[cuda][validator]") {
  CHECK(Validate(Valid()) == "");
  // The same gemm as a strided_gemm with its packed leading dimensions spelled out.
  ProgramSpec p = Valid();
  p.strided = true;
  p.lda = 4, p.ldb = 4, p.ldy = 4;
  CHECK(Validate(p) == "");
}

TEST_CASE("each damaged CUDA program field is refused and named", "[cuda][validator]") {
  struct Case {
    const char* name;
    std::function<void(ProgramSpec&)> damage;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"buffer kind", [](ProgramSpec& p) { p.buffers[2].kind = static_cast<fbc::BufferKind>(7); },
       "buffer 2: unknown kind 7"},
      {"element type", [](ProgramSpec& p) { p.buffers[2].dtype = 8; },  // strings
       "buffer 2: unknown element type 8"},
      {"byte_size below the shape", [](ProgramSpec& p) { p.buffers[2].byte_size = 12; },
       "buffer 2: byte_size 12 below its shape's 16"},
      {"arena range", [](ProgramSpec& p) { p.buffers[2].offset = 56; },
       "buffer 2: arena range 56+16 outside arena_bytes 64"},
      {"arena range overflowing", [](ProgramSpec& p) { p.buffers[2].offset = ~uint64_t{0} - 4; },
       "buffer 2: arena range"},
      {"weight slot", [](ProgramSpec& p) { p.buffers[1].slot = 1; },
       "buffer 1: weight_slot 1 of 1"},
      {"io index", [](ProgramSpec& p) { p.buffers[0].io = 3; }, "buffer 0: io_index 3 of 1 inputs"},
      {"alias of a later buffer", [](ProgramSpec& p) { p.buffers[4].alias_of = 4; },
       "buffer 4: alias_of 4 is not an earlier buffer"},
      {"alias range", [](ProgramSpec& p) { p.buffers[4].offset = 8; },
       "buffer 4: alias range 8+16 outside buffer 2"},
      {"program input kind", [](ProgramSpec& p) { p.inputs = {2}; },
       "input 0 names buffer 2, not an Input buffer"},
      {"program output index", [](ProgramSpec& p) { p.outputs = {9}; }, "output 0 names buffer 9"},
      {"arena_bytes", [](ProgramSpec& p) { p.arena = uint64_t{1} << 50; }, "arena_bytes"},
      {"a step of two kinds", [](ProgramSpec& p) { p.two_kinds = true; },
       "step 0 ('gemm'): has 2 kinds"},
      {"gemm a too small", [](ProgramSpec& p) { p.k = 8; },
       "step 0 ('gemm'): gemm a needs 8 elements; buffer 0 has 16 bytes"},
      {"gemm batch stride past the buffer",
       [](ProgramSpec& p) {
         p.batch = 2;
         p.stride_a = 4;
       },
       "step 0 ('gemm'): gemm a needs 8 elements"},
      {"gemm non-positive size", [](ProgramSpec& p) { p.m = 0; },
       "step 0 ('gemm'): gemm m, n, k and batch must be positive"},
      {"gemm buffer index", [](ProgramSpec& p) { p.gemm_y = 5; },
       "step 0 ('gemm'): gemm y names buffer 5"},
      {"leading dimensions outside strided_gemm", [](ProgramSpec& p) { p.ldb = 8; },
       "step 0 ('gemm'): a gemm step with leading dimensions"},
      {"a leading dimension shorter than a row",
       [](ProgramSpec& p) {
         p.strided = true;
         p.ldb = 2;
       },
       "step 0 ('gemm'): gemm leading dimension shorter than a row"},
      {"a leading dimension reaching past the buffer",
       [](ProgramSpec& p) {
         p.strided = true;
         p.ldb = 5;  // b [4, 4] with rows 5 apart: 3 * 5 + 4 = 19 elements of 16
       },
       "step 0 ('gemm'): gemm b needs 19 elements"},
      {"conv x too small",
       [](ProgramSpec& p) {
         p.x_dims = {1, 1, 8};
       },
       "step 1 ('conv'): conv x needs 8 elements; buffer 0 has 16 bytes"},
      {"conv rank",
       [](ProgramSpec& p) {
         p.w_dims = {1, 1};
       },
       "step 1 ('conv'): conv dims must be 3-D to 5-D and agree"},
      {"conv pads", [](ProgramSpec& p) { p.pads = {0}; },
       "step 1 ('conv'): conv pads, strides or dilations"},
      {"conv stride 0", [](ProgramSpec& p) { p.strides = {0}; },
       "step 1 ('conv'): conv pads, strides or dilations"},
      {"conv bias", [](ProgramSpec& p) { p.conv_bias = 7; },
       "step 1 ('conv'): conv bias names buffer 7"},
      {"kernel not listed", [](ProgramSpec& p) { p.kernel = "k9"; },
       "step 2 ('kernel'): kernel 'k9' is not among the program's kernels"},
      {"block too large",
       [](ProgramSpec& p) {
         p.block = {64, 32, 1};
       },
       "step 2 ('kernel'): a block of 2048 threads"},
      {"grid of 0",
       [](ProgramSpec& p) {
         p.grid = {0, 1, 1};
       },
       "step 2 ('kernel'): launch geometry grid[0]=0"},
      {"grid y too large",
       [](ProgramSpec& p) {
         p.grid = {1, 70000, 1};
       },
       "step 2 ('kernel'): launch geometry grid[1]=70000"},
      {"shared memory", [](ProgramSpec& p) { p.shared = 1 << 20; },
       "step 2 ('kernel'): shared_bytes 1048576"},
      {"launch argument",
       [](ProgramSpec& p) {
         p.launch_args = {2, 5};
       },
       "step 2 ('kernel'): argument 1 names buffer 5"},
      {"same_index past the arguments",
       [](ProgramSpec& p) {
         p.same_index = {0, 2};
       },
       "step 2 ('kernel'): same_index pairs argument 0 with argument 2 of 2"},
      {"same_index pairing an argument with itself",
       [](ProgramSpec& p) {
         p.same_index = {1, 1};
       },
       "step 2 ('kernel'): same_index pairs argument 1 with argument 1 of 2"},
      {"same_index of odd length",
       [](ProgramSpec& p) {
         p.same_index = {0, 1, 0};
       },
       "step 2 ('kernel'): same_index has 3 entries, not pairs"},
      {"copy length", [](ProgramSpec& p) { p.copy_bytes = 32; },
       "step 3 ('copy'): copies 32 bytes between buffers of 16 and 16"},
  };
  for (const auto& c : cases) {
    ProgramSpec p = Valid();
    c.damage(p);
    const std::string got = Validate(p);
    INFO(c.name << ": " << got);
    CHECK_THAT(got, Catch::StartsWith(c.expect));
  }
}
