// Small text helpers shared by the kernel emitters: storage types, loads and stores through the
// prelude's conversions, literals, attribute lookup and launch sizes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "cuda/compile/codegen/kernel_codegen.h"

namespace ortc::backends::cuda::codegen {

// float32, float16, bfloat16, int32, int64, int8, uint8 and bool are the storage types kernels
// handle.
bool IsStorageType(int32_t dtype);
bool IsFloatType(int32_t dtype);
// The C type of one stored element ("float", "ortc_u16", "ortc_i32", "ortc_i64", "ortc_i8",
// "ortc_u8").
std::string StorageCType(int32_t dtype);
// The C type a kernel computes in: float for every float type, the integer type, or bool.
std::string ComputeCType(int32_t dtype);
// `element` (a stored element, e.g. "in0[i]") converted to the compute type.
std::string LoadExpr(int32_t dtype, const std::string& element);
// `value` (in the compute type) converted for storage.
std::string StoreExpr(int32_t dtype, const std::string& value);
// A float constant as an exact C++ expression (hex float, or bits for Inf/NaN).
std::string FloatLiteral(float v);
std::string IntLiteral(int64_t v);

// Attribute lookup (nullptr when absent).
const onnx::AttributeProto* FindAttribute(const OpDesc& op, const std::string& name);
int64_t IntAttr(const OpDesc& op, const std::string& name, int64_t fallback);
float FloatAttr(const OpDesc& op, const std::string& name, float fallback);
std::string StringAttr(const OpDesc& op, const std::string& name, const std::string& fallback);
std::vector<int64_t> IntsAttr(const OpDesc& op, const std::string& name);

// The constant input i read as numbers (float types decoded), nullopt when not constant.
std::optional<std::vector<double>> ConstantValues(const OpDesc& op, size_t i);

// Kernel signature: `const void* p0, ..., void* pN`, one per input then per output.
std::string KernelParams(int num_inputs, int num_outputs);

// Grid-stride launch over n elements: fixed block size, grid capped (the loop covers the rest).
constexpr uint32_t kBlockSize = 256;
uint32_t GridFor(int64_t n);

std::string DtypeName(int32_t dtype);

// Storage layouts (Layout in kernel_codegen.h). The logical axes of a rank-`rank` tensor in the
// order memory walks them: 0..rank-1 for kNchw (and below rank 3); 0, 2, ..., rank-1, 1 for
// kNhwc.
std::vector<size_t> StorageOrder(size_t rank, Layout layout);
// Per logical axis of `dims`: the distance in elements between neighbours along it in storage.
std::vector<int64_t> StorageStrides(const std::vector<int64_t>& dims, Layout layout);

// Block size for one-block-per-row kernels: a power of two (the tree reduction halves it),
// at least a warp, at most kBlockSize, no larger than needed for `row` elements.
uint32_t RowBlockSize(int64_t row);
// Statements reducing the float `var` of every thread of the block into `var` of every thread,
// through `__shared__ float red[block]` (declared by the kernel) and __syncthreads(); `combine`
// names a prelude function such as ortc_add or ortc_max. Every thread must execute it.
std::string BlockReduceCode(const std::string& var, const std::string& combine, uint32_t block,
                            const std::string& indent);

}  // namespace ortc::backends::cuda::codegen
