// The npu program: the blob compile writes into the context binary (set_program) and
// load_graph reads back. It is this skeleton's own format, standing in for the serialized
// network a vendor's graph compiler produces. The reader trusts nothing: a blob that loads has
// every count, index, shape and value checked, so the kernels cannot read or write outside
// their buffers whatever bytes the file holds.
//
// Layout: little-endian, fixed-width fields, no padding.
//   header      char[4] magic "NPUB", u32 format version (1), u32 num_tensors, u32 num_inputs,
//               u32 num_outputs, u32 num_slots, u32 num_steps
//   tensors     num_tensors x { u32 name_length, name bytes, i32 dtype (2 uint8, 3 int8),
//               u32 role (0 intermediate, 1 graph input, 2 graph output), u32 rank,
//               i64 dims[rank] }
//   inputs      num_inputs x u32 tensor index (the graph's input order)
//   outputs     num_outputs x u32 tensor index (the graph's output order)
//   slots       num_slots x { i32 dtype (3 int8 weight, 6 int32 bias), u32 rank, i64 dims[rank] }
//   steps       num_steps x { u32 kind (1 CONV, 2 MATMUL), u32 input tensor, u32 output tensor,
//               u32 weight slot, i32 bias slot (-1: none), i64 strides[2], i64 pads[4]
//               (top, left, bottom, right), i64 dilations[2], f32 sx, f32 sw, f32 sb, f32 sy,
//               i32 zx, i32 zy }
// A step's activation and output signedness is the dtype of its tensors. Steps run in order;
// each reads a graph input or an earlier step's output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shapes.h"

namespace npu {

// ONNX TensorProto.DataType numbers the npu uses.
inline constexpr int32_t kFloat = 1;
inline constexpr int32_t kUint8 = 2;
inline constexpr int32_t kInt8 = 3;
inline constexpr int32_t kInt32 = 6;

// Bytes of one element; 0 for a dtype the npu does not use.
uint64_t DtypeSize(int32_t dtype);

inline constexpr char kProgramMagic[4] = {'N', 'P', 'U', 'B'};
inline constexpr uint32_t kProgramFormatVersion = 1;

enum TensorRole : uint32_t { kIntermediate = 0, kGraphInput = 1, kGraphOutput = 2 };
enum class StepKind : uint32_t { kConv = 1, kMatMul = 2 };

struct TensorRecord {
  std::string name;
  int32_t dtype = 0;
  uint32_t role = kIntermediate;
  std::vector<int64_t> dims;
};

// A weight slot: what load_graph receives as OrtcGraphLoadInfo.weights[slot].
struct SlotRecord {
  int32_t dtype = 0;
  std::vector<int64_t> dims;
};

struct StepRecord {
  StepKind kind = StepKind::kConv;
  uint32_t input = 0;
  uint32_t output = 0;
  uint32_t weight_slot = 0;
  int32_t bias_slot = -1;
  ConvGeometry conv;  // Conv only; MatMul writes the defaults
  float sx = 1, sw = 1, sb = 0, sy = 1;
  int32_t zx = 0, zy = 0;
};

struct Program {
  std::vector<TensorRecord> tensors;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<SlotRecord> slots;
  std::vector<StepRecord> steps;
};

std::string WriteProgram(const Program& program);

// Parses and validates a blob; false with *error ("npu program: ...") when it is not a valid
// program.
bool ReadProgram(const void* data, uint64_t size, Program* program, std::string* error);

// Bytes of a slot's or tensor's data (dims already validated).
uint64_t ByteSize(int32_t dtype, const std::vector<int64_t>& dims);

}  // namespace npu
