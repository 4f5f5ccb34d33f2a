// Helpers shared by the data-movement and pooling emitters: reading attributes and constant
// inputs, element storage types, and the text of grid-stride loops and index arithmetic.
#pragma once

#include <string>
#include <vector>

#include "base/shape_math.h"
#include "base/shape_text.h"
#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen::movement {

// Attributes, IsFloatType, DtypeName, LoadExpr and StoreExpr come from kernel_text.h.
std::vector<float> AttrFloats(const OpDesc& op, const std::string& name);

// True when input i exists (not omitted).
bool HasInput(const OpDesc& op, size_t i);
// The values of a constant int32/int64 input, or an error naming `what` when it is not a
// compile-time constant (shapes are static, so such inputs must be known here).
Result<std::vector<int64_t>> ConstInts(const OpDesc& op, size_t i, const std::string& what);
// The values of a constant float32/float16/bfloat16/float64 input.
Result<std::vector<double>> ConstFloats(const OpDesc& op, size_t i, const std::string& what);

// The prelude type that holds one element's bits ("ortc_u32" for float32 and int32...), or ""
// for types without a fixed size (string) or unknown ones.
std::string BitsType(int32_t dtype);
// For float types: the pointer element type of a compute kernel ("float" or "ortc_u16") and the
// LoadExpr / StoreExpr (kernel_text.h) convert an element to float and back.
std::string FloatStorageType(int32_t dtype);
// The bits of `value` as an element of `dtype` (float16/bfloat16 rounded to nearest even), as a
// literal of BitsType(dtype).
std::string BitsLiteral(int32_t dtype, double value);

bool NormaliseAxis(int64_t& axis, int64_t rank);
// Row-major strides and dim products: base/shape_math.h's, as the CPU kernels use.
using exec::Product;
using exec::Strides;
using io::DimsText;                                    // "[2,3]"
std::string Lit(int64_t v);                            // a literal of the index type
std::string Var(const std::string& prefix, size_t n);  // "c3"
std::string BitsOf(int32_t dtype, uint64_t bits);      // "(ortc_u16)15360ull"

// Checks that op has these many outputs and that each output's dims are what the emitter
// computed (the graph's shape inference and the emitter must agree).
std::string CheckOutputDims(const OpDesc& op, size_t k, const std::vector<int64_t>& dims);

// Kernel skeleton: the signature (one untyped pointer per input, then per output, each viewed
// inside as `inK` / `outK` of its element type; "" leaves it unused), then a grid-stride loop
// over `total` elements with the index `i` of type `I` around `body`. Fills grid/block/params.
struct KernelText {
  std::string name;
  std::vector<std::string> input_types, output_types;  // pointee types; "" = const void*
  int64_t total = 0;                                   // elements of the loop
  std::string body;                                    // uses `i` (type I)
  std::string globals;                                 // tables placed before the kernel
};
KernelSource Finish(const KernelText& k, int64_t largest_index);
// "int" or "long long": the index type able to address `largest` elements.
std::string IndexType(int64_t largest);

// Statements splitting `index` into coordinates `prefix0..prefix{n-1}` over dims (row major);
// coordinates of size-1 dims are 0.
std::string Decompose(const std::string& index, const std::vector<int64_t>& dims,
                      const std::string& prefix, const std::string& type);

// The same for an index walking a tensor of logical `dims` stored in `layout`: prefix0.. are
// still the logical coordinates (axis 1 the channel), whatever order memory holds them in.
std::string DecomposeStored(const std::string& index, const std::vector<int64_t>& dims,
                            Layout layout, const std::string& prefix, const std::string& type);

// An affine gather: output element i (coordinates over `dims`) reads source element
// base + sum_d ((c_d % modulo_d) * stride_d) (modulo 0: none). Adjacent dims that walk memory
// contiguously are merged and size-1 dims dropped before emitting.
struct AffineMap {
  std::vector<int64_t> dims, strides, modulo;
  int64_t base = 0;
};
void Simplify(AffineMap& m);
// The statements computing `src` (type I) for output index `i`.
std::string AffineSource(const AffineMap& m, const std::string& type);

// Data-movement emitters with files of their own (pad_kernels.cpp, resize_kernels.cpp).
Result<KernelSource> EmitPad(const std::string& name, const OpDesc& op);
Result<KernelSource> EmitResize(const std::string& name, const OpDesc& op);

}  // namespace ortc::backends::cuda::codegen::movement
