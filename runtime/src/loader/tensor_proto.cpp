// TensorProto decoding: raw data, typed fields and external data, with size checks.
#include "loader/tensor_proto.h"

#include <charconv>
#include <cstring>
#include <fstream>

#include "base/path_inside.h"
#include "base/shape_limit.h"

namespace ortc::loader {
namespace {

namespace fs = std::filesystem;

template <typename Dst, typename Field>
void CopyField(const Field& f, Tensor* t) {
  Dst* out = t->mutable_data<Dst>();
  for (int i = 0; i < f.size() && i < t->elements(); ++i) out[i] = static_cast<Dst>(f.Get(i));
}

// How many values the typed field that holds dtype's data has (TensorProto's storage rules).
int64_t TypedFieldCount(const onnx::TensorProto& p, DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return p.float_data_size();
    case DataType::kDouble:
      return p.double_data_size();
    case DataType::kInt64:
      return p.int64_data_size();
    case DataType::kUint64:
    case DataType::kUint32:
      return p.uint64_data_size();
    default:
      return p.int32_data_size();
  }
}

// The element count of dims, refused above Tensor's own limit (2^40) without overflowing; the
// non-zero dimensions are bounded too, as every tensor's are (exec/shape_limit.h).
Result<int64_t> ElementCount(const onnx::TensorProto& p) {
  const std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  for (int64_t d : dims) {
    if (d < 0) return InvalidGraph("tensor '" + p.name() + "' has a negative dimension");
  }
  if (!exec::ShapeWithinLimit(dims))
    return InvalidGraph("tensor '" + p.name() + "' declares more than 2^40 elements");
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Result<fs::path> Inside(const fs::path& base, const std::string& location) {
  if (location.empty() || fs::path(location).is_absolute())
    return InvalidGraph("external data location '" + location + "' must be a relative path");
  return format::ResolveInside(base, location, "external data location");
}

}  // namespace

Result<Tensor> TensorFromProtoUnchecked(const onnx::TensorProto& p, const fs::path* base_dir);

// Decoding never throws: a shape too large to allocate (a corrupt file) becomes an error.
Result<Tensor> TensorFromProto(const onnx::TensorProto& p, const fs::path* base_dir) {
  try {
    return TensorFromProtoUnchecked(p, base_dir);
  } catch (const std::exception& e) {
    return InvalidGraph("tensor '" + p.name() + "': " + e.what());
  }
}

Result<Tensor> TensorFromProtoUnchecked(const onnx::TensorProto& p, const fs::path* base_dir) {
  const auto dtype = static_cast<DataType>(p.data_type());
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  // Every size the proto claims is checked against the data it holds before anything is
  // allocated: a 1e9-element tensor with no data must not become 4 GB of zeros.
  auto elements = ElementCount(p);
  if (!elements.ok()) return elements.status();
  if (dtype == DataType::kString) {
    if (p.string_data_size() != *elements)
      return InvalidGraph("tensor '" + p.name() + "': string count mismatch");
    Tensor t = Tensor::Allocate(dtype, dims);
    for (int i = 0; i < p.string_data_size(); ++i) t.mutable_strings()[i] = p.string_data(i);
    return t;
  }
  const size_t es = ElementSize(dtype);
  if (es == 0)
    return NotImplemented("tensor '" + p.name() + "': element type " +
                          std::to_string(p.data_type()) + " is not supported");
  const size_t want = static_cast<size_t>(*elements) * es;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!base_dir)
      return InvalidArgument("tensor '" + p.name() +
                             "' uses external data but the model's folder is unknown");
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : p.external_data()) {
      const std::string& v = kv.value();
      auto number = [&](int64_t* out) {
        const auto r = std::from_chars(v.data(), v.data() + v.size(), *out);
        return r.ec == std::errc() && r.ptr == v.data() + v.size() && *out >= 0;
      };
      if (kv.key() == "location") location = v;
      if ((kv.key() == "offset" && !number(&offset)) || (kv.key() == "length" && !number(&length)))
        return InvalidGraph("tensor '" + p.name() + "': external data " + kv.key() + " '" + v +
                            "' is not a non-negative integer");
    }
    auto path = Inside(*base_dir, location);
    if (!path.ok()) return path.status();
    // A FIFO would block the read forever and a device would be read as weights.
    std::error_code ec;
    if (fs::exists(*path, ec) && !fs::is_regular_file(*path, ec))
      return InvalidGraph("external data file " + path->string() + " is not a regular file");
    if (length >= 0 && static_cast<size_t>(length) != want)
      return InvalidGraph("tensor '" + p.name() + "': external length mismatch");
    const auto file_size = fs::file_size(*path, ec);
    if (ec) return NoSuchFile("external data file " + path->string() + " not found");
    if (static_cast<uint64_t>(offset) > file_size || want > file_size - offset)
      return InvalidGraph("external data file " + path->string() + " is truncated: tensor '" +
                          p.name() + "' needs " + std::to_string(want) + " bytes at offset " +
                          std::to_string(offset) + ", the file has " + std::to_string(file_size));
    std::ifstream in(*path, std::ios::binary);
    if (!in) return NoSuchFile("external data file " + path->string() + " not found");
    Tensor t = Tensor::AllocateUninitialized(dtype, dims);
    in.seekg(offset);
    in.read(static_cast<char*>(t.mutable_raw()), static_cast<std::streamsize>(want));
    if (static_cast<size_t>(in.gcount()) != want)
      return InvalidGraph("external data file " + path->string() + " is truncated");
    return t;
  }
  if (p.has_raw_data()) {
    if (p.raw_data().size() != want) {
      return InvalidGraph("tensor '" + p.name() + "' holds " + std::to_string(p.raw_data().size()) +
                          " bytes, needs " + std::to_string(want));
    }
    Tensor t = Tensor::AllocateUninitialized(dtype, dims);
    std::memcpy(t.mutable_raw(), p.raw_data().data(), want);
    return t;
  }
  if (TypedFieldCount(p, dtype) != *elements)
    return InvalidGraph("tensor '" + p.name() + "' holds " +
                        std::to_string(TypedFieldCount(p, dtype)) + " values but its shape needs " +
                        std::to_string(*elements));
  Tensor t = Tensor::AllocateUninitialized(dtype, dims);
  switch (dtype) {
    case DataType::kFloat:
      CopyField<float>(p.float_data(), &t);
      break;
    case DataType::kDouble:
      CopyField<double>(p.double_data(), &t);
      break;
    case DataType::kInt64:
      CopyField<int64_t>(p.int64_data(), &t);
      break;
    case DataType::kUint64:
      CopyField<uint64_t>(p.uint64_data(), &t);
      break;
    case DataType::kUint32:
      CopyField<uint32_t>(p.uint64_data(), &t);
      break;
    case DataType::kInt32:
      CopyField<int32_t>(p.int32_data(), &t);
      break;
    case DataType::kInt16:
      CopyField<int16_t>(p.int32_data(), &t);
      break;
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBfloat16:
      CopyField<uint16_t>(p.int32_data(), &t);
      break;
    case DataType::kInt8:
      CopyField<int8_t>(p.int32_data(), &t);
      break;
    case DataType::kUint8:
    case DataType::kBool:
      CopyField<uint8_t>(p.int32_data(), &t);
      break;
    default:
      break;
  }
  return t;
}

onnx::TensorProto TensorToProto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  if (t.dtype() == DataType::kString) {
    for (const auto& s : t.strings()) p.add_string_data(s);
  } else {
    p.set_raw_data(t.raw(), t.byte_size());
  }
  return p;
}

}  // namespace ortc::loader
