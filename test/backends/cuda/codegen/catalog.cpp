// Catalog builders shared by every family's list, and the family registry.
#include "catalog.h"

#include <cstring>

#include "reference_conversions.h"

namespace ortc::test::cuda {

using onnx::AttributeProto;
using onnx::TensorProto;

cg::TensorDesc T(int32_t dtype, std::vector<int64_t> dims) {
  cg::TensorDesc t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  return t;
}

AttributeProto AttrInt(const std::string& name, int64_t v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::INT);
  a.set_i(v);
  return a;
}
AttributeProto AttrFloat(const std::string& name, float v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
AttributeProto AttrInts(const std::string& name, std::vector<int64_t> v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}
AttributeProto AttrString(const std::string& name, const std::string& v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::STRING);
  a.set_s(v);
  return a;
}

cg::OpDesc Op(const std::string& type, int since_version, std::vector<cg::TensorDesc> inputs,
              std::vector<cg::TensorDesc> outputs, std::vector<AttributeProto> attrs) {
  cg::OpDesc op;
  op.op_type = type;
  op.since_version = since_version;
  op.constants.resize(inputs.size());
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.attributes = std::move(attrs);
  return op;
}

namespace {
std::string Encode(int32_t dtype, const std::vector<double>& values) {
  std::string bytes;
  auto put = [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); };
  for (double v : values) {
    switch (dtype) {
      case TensorProto::FLOAT: {
        const float f = static_cast<float>(v);
        put(&f, 4);
        break;
      }
      case TensorProto::FLOAT16: {
        const uint16_t h = RefFloatToHalf(static_cast<float>(v));
        put(&h, 2);
        break;
      }
      case TensorProto::BFLOAT16: {
        const uint16_t h = RefFloatToBf16(static_cast<float>(v));
        put(&h, 2);
        break;
      }
      case TensorProto::INT32: {
        const auto i = static_cast<int32_t>(v);
        put(&i, 4);
        break;
      }
      case TensorProto::INT64: {
        const auto i = static_cast<int64_t>(v);
        put(&i, 8);
        break;
      }
      default: {
        const uint8_t b = v != 0;
        put(&b, 1);
      }
    }
  }
  return bytes;
}

void Retype(cg::TensorDesc& t, int32_t dtype) {
  if (t.dtype == TensorProto::FLOAT) t.dtype = dtype;
}

// Constants are re-encoded in the new type (their values are read back from float32).
void RetypeOp(cg::OpDesc& op, int32_t dtype) {
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (op.inputs[i].dtype == TensorProto::FLOAT && i < op.constants.size() && op.constants[i]) {
      const std::string& b = *op.constants[i];
      std::vector<double> v(b.size() / 4);
      for (size_t k = 0; k < v.size(); ++k) {
        float f;
        std::memcpy(&f, b.data() + 4 * k, 4);
        v[k] = f;
      }
      op.constants[i] = Encode(dtype, v);
    }
    Retype(op.inputs[i], dtype);
  }
  for (auto& t : op.outputs) Retype(t, dtype);
  for (auto& a : op.attributes)
    if (a.name() == "to" && a.i() == TensorProto::FLOAT) a.set_i(dtype);
}
}  // namespace

void SetConstant(cg::OpDesc& op, size_t i, const std::vector<double>& values) {
  if (op.constants.size() < op.inputs.size()) op.constants.resize(op.inputs.size());
  op.constants[i] = Encode(op.inputs[i].dtype, values);
}

CatalogEntry WithFloatType(const CatalogEntry& e, int32_t dtype) {
  CatalogEntry r = e;
  r.name += dtype == TensorProto::FLOAT16 ? "_f16" : dtype == TensorProto::BFLOAT16 ? "_bf16" : "";
  RetypeOp(r.op, dtype);
  if (r.group) {
    for (auto& t : r.group->inputs) Retype(t, dtype);
    for (auto& f : r.group->ops) RetypeOp(f.op, dtype);
  }
  return r;
}

std::vector<CatalogFamily> AllCatalogs() {
  return {{"elementwise", ElementwiseCatalog()},
          {"normalization", NormalizationCatalog()},
          {"reduction", ReductionCatalog()},
          {"data_movement", DataMovementCatalog()},
          {"pooling", PoolingCatalog()},
          {"channels_last", ChannelsLastCatalog()},
          {"scan", ScanCatalog()},
          {"indexing", IndexingCatalog()}};
}

std::vector<CatalogEntry> FamilyEntries(const std::string& family) {
  for (auto& f : AllCatalogs())
    if (f.name == family) return std::move(f.entries);
  return {};
}

size_t StorageBytes(int32_t dtype) {
  switch (dtype) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
      return 4;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::INT64:
      return 8;
    default:
      return 1;
  }
}

Result<cg::KernelSource> Emit(const CatalogEntry& e) {
  if (e.group) return cg::EmitFused(e.name, *e.group);
  return cg::EmitOp(e.name, e.op);
}

}  // namespace ortc::test::cuda
