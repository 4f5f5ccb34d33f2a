// The kernel catalog: representative ops (shapes, broadcasting, attribute variants) for every op
// a kernel family claims. The NVRTC test compiles all of them; the semantics test runs them
// through the host shim against the CPU kernels. Each family defines its list in its own file.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuda/compile/codegen/kernel_codegen.h"

namespace ortc::test::cuda {

namespace cg = backends::cuda::codegen;

struct CatalogEntry {
  std::string name;                     // unique across the catalog: the kernel's entry point
  cg::OpDesc op;                        // the op (unused when `group` is set)
  std::optional<cg::FusedGroup> group;  // a fused elementwise DAG
  // Per input: float data is drawn uniformly from [lo, hi) (default [-3, 3)); ints from
  // [lo, hi] rounded (default [-20, 20]).
  std::vector<std::pair<float, float>> ranges;
  // Per input (fused groups included): explicit element values in order, used instead of
  // random ones when not empty (NaN and infinities for IsNaN/IsInf, index tuples whose every
  // position has its own range). A constant op input keeps its constant.
  std::vector<std::vector<double>> values;
  // 0: the default tolerance of the output type (see semantics_test.cpp); else |got - ref| <=
  // atol + rtol * |ref|.
  double rtol = 0, atol = 0;
  // Semantics are not checked against the CPU (the reason is printed); NVRTC still compiles it.
  std::string no_cpu_reference;
};

// Builders for catalog entries.
cg::TensorDesc T(int32_t dtype, std::vector<int64_t> dims);
onnx::AttributeProto AttrInt(const std::string& name, int64_t v);
onnx::AttributeProto AttrFloat(const std::string& name, float v);
onnx::AttributeProto AttrInts(const std::string& name, std::vector<int64_t> v);
onnx::AttributeProto AttrString(const std::string& name, const std::string& v);
cg::OpDesc Op(const std::string& type, int since_version, std::vector<cg::TensorDesc> inputs,
              std::vector<cg::TensorDesc> outputs, std::vector<onnx::AttributeProto> attrs = {});
// Marks input i of `op` as a compile-time constant with these values, stored as the input's
// dtype (little-endian raw bytes, fp16/bf16 rounded to nearest even).
void SetConstant(cg::OpDesc& op, size_t i, const std::vector<double>& values);
// The same entry with every FLOAT tensor (op, group, constants) changed to `dtype`, renamed
// with a suffix.
CatalogEntry WithFloatType(const CatalogEntry& e, int32_t dtype);

// The families' lists (one file each).
std::vector<CatalogEntry> ElementwiseCatalog();
std::vector<CatalogEntry> NormalizationCatalog();
std::vector<CatalogEntry> ReductionCatalog();
std::vector<CatalogEntry> DataMovementCatalog();
std::vector<CatalogEntry> PoolingCatalog();
std::vector<CatalogEntry> ScanCatalog();
std::vector<CatalogEntry> IndexingCatalog();
// NHWC variants of elementwise groups and data movement (channels_last_catalog.cpp).
std::vector<CatalogEntry> ChannelsLastCatalog();

struct CatalogFamily {
  std::string name;
  std::vector<CatalogEntry> entries;
};
// Every family, in a fixed order.
std::vector<CatalogFamily> AllCatalogs();
// The entries of one family (empty for an unknown name).
std::vector<CatalogEntry> FamilyEntries(const std::string& family);
// Bytes of one element of a kernel storage type (float32, float16, bfloat16, int32, int64,
// int8, uint8, bool).
size_t StorageBytes(int32_t dtype);

// Generates the entry's kernel (EmitFused for groups, else EmitOp).
Result<cg::KernelSource> Emit(const CatalogEntry& e);

}  // namespace ortc::test::cuda
