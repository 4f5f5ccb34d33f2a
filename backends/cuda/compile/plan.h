// The CUDA program of one graph in memory, as lowering builds it and program_writer.cpp
// serializes it (schemas/cuda_program.fbs). Kernel steps carry the request the code generator
// turns into a kernel (an elementwise DAG or one op), so lowering is testable without it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bundle/context_binary_writer.h"
#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda_program_generated.h"

namespace ortc::backends::cuda {

namespace fb = ortc::fb::cuda;

struct PlanBuffer {
  std::string name;
  fb::BufferKind kind = fb::BufferKind::Arena;
  int32_t dtype = 0;
  std::vector<int64_t> dims;  // logical order (N, C, H, W) whatever the layout
  fb::TensorLayout layout = fb::TensorLayout::Plain;
  int weight_slot = -1;
  int io_index = -1;
  uint64_t offset = 0;
  int alias_of = -1;
  uint64_t byte_size = 0;
};

struct PlanLaunch {
  // What to generate: an elementwise DAG (fused) or one op.
  std::optional<codegen::FusedGroup> fused;
  std::optional<codegen::OpDesc> op;
  // Filled by code generation.
  std::string kernel;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  uint32_t shared_bytes = 0;
  // Buffers: kernel inputs then outputs (-1: null). Before generation every op input is
  // listed; generation keeps the ones the kernel takes.
  std::vector<int> inputs, outputs;
  // Filled by code generation: pairs of positions in inputs-then-outputs, an input that may
  // share an output's bytes (codegen::KernelSource::same_index).
  std::vector<int> same_index;
};

struct PlanConv {
  int x = -1, w = -1, bias = -1, z = -1, y = -1;
  std::vector<int64_t> x_dims, w_dims, y_dims, pads, strides, dilations;
  int64_t group = 1;
  bool transposed = false;
  fb::Activation activation = fb::Activation::None;
  float clip_min = 0, clip_max = 6;  // activation Clip
  float alpha = 1, alpha2 = 0;
  fb::TensorLayout layout = fb::TensorLayout::NCHW;
  int32_t compute_dtype = 1;  // FLOAT
};

struct PlanGemm {
  int a = -1, b = -1, c = -1, bias = -1, y = -1;
  int64_t m = 0, n = 0, k = 0, batch = 1, stride_a = 0, stride_b = 0, stride_y = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1, beta = 0;
  fb::Activation epilogue = fb::Activation::None;
  int32_t compute_dtype = 1;
  // Leading dimensions of the row-major operands as stored (0: packed); see cuda_program.fbs.
  int64_t lda = 0, ldb = 0, ldy = 0;
};

struct PlanCopy {
  int src = -1, dst = -1;
  uint64_t bytes = 0;
};

enum class StepKind { kLaunch, kConv, kGemm, kCopy };

struct PlanStep {
  std::string name;
  std::vector<std::string> sources;  // ONNX nodes implemented by this step
  StepKind kind = StepKind::kLaunch;
  PlanLaunch launch;
  PlanConv conv;
  PlanGemm gemm;
  PlanCopy copy;
};

struct PlanModule {
  std::string target;
  fb::ModuleKind kind = fb::ModuleKind::Cubin;
  std::string artefact;
  uint64_t byte_size = 0;
};

// One tunable choice of the plan (backends::TunableChoice; lowering_grouped_conv.h).
struct PlanChoice {
  std::string step, key, choice, source;
  std::vector<std::string> candidates;
};

struct Plan {
  std::string graph;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<int> inputs, outputs;
  uint64_t arena_bytes = 0;
  uint64_t workspace_bytes = 0;
  fb::Precision precision = fb::Precision::FP32;
  fb::TensorLayout conv_layout = fb::TensorLayout::NCHW;
  std::vector<PlanModule> modules;
  std::vector<std::string> kernels;
  std::string source_artefact;
  std::vector<bundle::WeightSpec> weights;  // per weight slot
  std::vector<PlanChoice> choices;
};

// Buffers a step reads and writes (as listed in the step; -1 entries skipped).
std::vector<int> StepReads(const PlanStep& s);
std::vector<int> StepWrites(const PlanStep& s);

}  // namespace ortc::backends::cuda
