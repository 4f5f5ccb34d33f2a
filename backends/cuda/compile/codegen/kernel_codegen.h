// CUDA kernel generation: turns ONNX ops with static shapes into CUDA C++ kernels. The same
// translation unit is compiled by NVRTC (toolchain/nvrtc.h) for the device and, in tests, as
// host C++ with a small shim, so the kernels' semantics are checked without a GPU.
#pragma once

#include <onnx/onnx_pb.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ortc/status.h"

namespace ortc::backends::cuda::codegen {

// A tensor as a kernel sees it: the element type stored on the device (after --precision) and
// static dims.
struct TensorDesc {
  int32_t dtype = 0;  // onnx::TensorProto::DataType; 0 for an omitted optional input
  std::vector<int64_t> dims;
  int64_t elements() const;
};

// How a [N, C, spatial...] data tensor is stored: kNchw row-major in the order of its dims,
// kNhwc channels last ([N, spatial..., C], NHWC for 4-D; rank 3 or more). TensorDesc dims stay
// in the logical (N, C, spatial...) order either way, so attributes keep their ONNX meaning.
enum class Layout { kNchw, kNhwc };

// One ONNX op with everything fixed at compile time.
struct OpDesc {
  std::string op_type;
  int since_version = 0;  // the opset version of the op's schema (semantics changed over time)
  std::vector<onnx::AttributeProto> attributes;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  // Per input: its raw little-endian bytes when it is a compile-time constant (Reshape shape,
  // Slice starts, Resize scales, Pad pads, Clip bounds...), else nullopt.
  std::vector<std::optional<std::string>> constants;
  // Storage of the data inputs (input 0; every input of Concat: LayoutApplies) and of output 0.
  // Only ops with SupportsLayouts(op_type) accept kNhwc; Unsupported() refuses it for every
  // other op.
  Layout input_layout = Layout::kNchw, output_layout = Layout::kNchw;
};

// One generated kernel and how to launch it.
struct KernelSource {
  std::string name;    // extern "C" entry point
  std::string source;  // the kernel and its helpers (no prelude)
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  uint32_t shared_bytes = 0;  // dynamic shared memory
  // Parameters: one device pointer per kernel input, then one per output, in order.
  int num_inputs = 0, num_outputs = 0;
  bool uses_block_sync = false;  // __shared__ + __syncthreads(): the host shim runs fibers
  // (input, output) pairs that may share their bytes: each thread reads element i of the input
  // only to compute element i of the output (same element size), so the runtime can bind a
  // cache passed as both a past input and its present output to the same memory.
  std::vector<std::pair<int, int>> same_index;
};

// A DAG of elementwise ops over a group's inputs, generated as one kernel.
struct FusedOp {
  OpDesc op;
  // Per op input: >= 0 a group input; < 0 the output of op (-1 - j) of this group (j earlier).
  std::vector<int> args;
};
// Dims are logical (numpy broadcasting applies to them as in ONNX); the layouts say how each
// input and output is stored, so one kernel can read NCHW and NHWC tensors and write either (a
// layout change fused into the computation). A kNhwc tensor has rank 3 or more. The kernel
// walks the outputs in the storage order of output 0, so stores to output 0 are contiguous.
// A group input read in place inside a larger buffer (a Split output of a merged projection):
// element (i0, i1, ...) of the input's logical dims is at offset + sum(i_k * strides[k]).
struct InputView {
  int64_t offset = 0;
  std::vector<int64_t> strides;  // one per dim of the input's TensorDesc
};

struct FusedGroup {
  std::vector<TensorDesc> inputs;
  std::vector<FusedOp> ops;
  std::vector<int> outputs;  // index of the op whose output is each group output, in order
  // Per input / per output (missing entries: kNchw). One op may be listed twice in `outputs`
  // with two layouts, writing its result in both.
  std::vector<Layout> input_layouts, output_layouts;
  // Per input (missing or nullopt entries: the input is its own contiguous tensor). A viewed
  // input is kNchw.
  std::vector<std::optional<InputView>> input_views;
};

// True for ops computed per element (with broadcasting) that EmitFused can chain.
bool IsElementwise(const std::string& op_type);
// True when EmitOp (or EmitFused, for elementwise ops) can generate the op. The CUDA capability
// table claims only these, library calls (Conv, Gemm, MatMul...) and views (Reshape...).
bool HasKernel(const std::string& op_type);
// True for ops generated for channels-last data too (OpDesc::input_layout / output_layout, any
// combination): MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, Concat, Pad, Resize,
// Transpose, BatchNormalization, GroupedConv (its z input stored like its output). Elementwise
// ops take layouts through FusedGroup instead.
bool SupportsLayouts(const std::string& op_type);
// Whether OpDesc::input_layout describes input i of an op of this type: input 0, and every
// input of Concat (the others are parameters: pads, scales, sizes...).
bool LayoutApplies(const std::string& op_type, size_t i);
// Why this particular op cannot be generated (attribute or shape limits), "" when it can.
std::string Unsupported(const OpDesc& op);
// Attention of at most kDecodeMaxRows query rows (a generation step against its cache) runs as
// the decode kernel (decode_attention_kernels.cpp): one block per row over at most
// kDecodeMaxKeys keys (its scores fill shared memory), or split over the keys into runs of at
// least kDecodeMinChunk keys and merged; lowering keeps such attention fused rather than on GEMMs.
constexpr int64_t kDecodeMaxRows = 4, kDecodeMaxKeys = 8192, kDecodeMinChunk = 256;
bool DecodeAttentionFits(int64_t rows, int64_t keys);
// How many runs the keys of a decode attention are split into, given the blocks of one run each
// (batch x heads x rows): 1 when the rows alone fill the GPU or the keys are few; at least what
// keeps each run within kDecodeMaxKeys. Every run has ceil(keys / splits) keys but the last.
int64_t DecodeKeySplits(int64_t blocks, int64_t keys);
// The two ops of a split decode attention (emitters.h): the runs' records, then their merge.
// Lowering forms them (lowering_decode_split.cpp).
inline constexpr const char* kDecodePartialOp = "DecodeAttentionPartial";
inline constexpr const char* kDecodeMergeOp = "DecodeAttentionMerge";
// A global pool over a channels-last input of at least kPoolSplitMinPositions positions runs as
// two ops (reduction_kernels.cpp): ChannelsLastPoolPartial (attributes splits, max) reduces runs
// of about kPoolSplitRun positions into float partials [N, splits, C], ChannelsLastPoolMerge
// (attributes count, max) combines them into the output. Lowering forms them (lowering.cpp).
inline constexpr const char* kPoolPartialOp = "ChannelsLastPoolPartial";
inline constexpr const char* kPoolMergeOp = "ChannelsLastPoolMerge";
constexpr int64_t kPoolSplitMinPositions = 1024, kPoolSplitRun = 128, kPoolSplitMaxBlocks = 1024;
// The runs a channels-last global pool over `positions` positions is split into (1: not split).
int64_t ChannelsLastPoolSplits(int64_t images, int64_t channels, int64_t positions);

Result<KernelSource> EmitFused(const std::string& name, const FusedGroup& group);
Result<KernelSource> EmitOp(const std::string& name, const OpDesc& op);

// Prelude (element types, fp16/bf16 conversion with round-to-nearest-even, math helpers) plus
// the kernels: the one text both NVRTC and the host shim compile.
std::string TranslationUnit(const std::vector<KernelSource>& kernels);

}  // namespace ortc::backends::cuda::codegen
