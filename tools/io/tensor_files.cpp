// .npy and .pb tensor files.
#include "io/tensor_files.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

#include <onnx/onnx_pb.h>
// After onnx_pb.h, which defines the export macros the generated header uses.
#include <onnx/onnx-data.pb.h>

#include "base/atomic_write.h"
#include "base/regular_file.h"
#include "base/shape_limit.h"

namespace ortc::io {
namespace {

// Through the runtime's reader and writer of ONNX tensors: the ones a model's initializers go
// through.
Result<Tensor> FromTensorProto(const onnx::TensorProto& p) {
  const std::string bytes = p.SerializeAsString();
  return TensorFromOnnxBytes(bytes.data(), bytes.size());
}

onnx::TensorProto ToTensorProto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  p.ParseFromString(TensorToOnnxBytes(t, name));
  return p;
}

const std::map<std::string, DataType>& NpyTypes() {
  static const std::map<std::string, DataType> m = {
      {"<f4", DataType::kFloat},  {"<f8", DataType::kDouble}, {"<f2", DataType::kFloat16},
      {"<i8", DataType::kInt64},  {"<i4", DataType::kInt32},  {"<i2", DataType::kInt16},
      {"|i1", DataType::kInt8},   {"|u1", DataType::kUint8},  {"<u2", DataType::kUint16},
      {"<u4", DataType::kUint32}, {"<u8", DataType::kUint64}, {"|b1", DataType::kBool}};
  return m;
}

// The string value of 'key' in a .npy header dict ('descr': '<f4').
bool QuotedValue(const std::string& header, const std::string& key, std::string* out) {
  size_t p = header.find("'" + key + "'");
  if (p == std::string::npos) return false;
  p = header.find(':', p);
  if (p == std::string::npos) return false;
  p = header.find_first_not_of(" \t", p + 1);
  if (p == std::string::npos || header[p] != '\'') return false;
  const size_t end = header.find('\'', p + 1);
  if (end == std::string::npos) return false;
  *out = header.substr(p + 1, end - p - 1);
  return true;
}

// The 'shape' tuple of a .npy header, each dimension a non-negative integer, at most 2^40
// elements in all (Tensor's own limit).
bool ShapeValue(const std::string& header, std::vector<int64_t>* shape, int64_t* elements) {
  size_t p = header.find("'shape'");
  if (p == std::string::npos) return false;
  p = header.find(':', p);
  if (p == std::string::npos) return false;
  p = header.find_first_not_of(" \t", p + 1);
  if (p == std::string::npos || header[p] != '(') return false;
  const size_t end = header.find(')', p);
  if (end == std::string::npos) return false;
  const char* c = header.data() + p + 1;
  const char* const stop = header.data() + end;
  *elements = 1;
  while (c < stop) {
    while (c < stop && (*c == ' ' || *c == ',')) ++c;
    if (c == stop) break;
    int64_t d = 0;
    const auto r = std::from_chars(c, stop, d);
    if (r.ec != std::errc() || d < 0) return false;
    if (d > 0 && *elements > (int64_t{1} << 40) / d) return false;
    *elements *= d;
    shape->push_back(d);
    c = r.ptr;
  }
  return true;
}

}  // namespace

Result<Tensor> ReadNpy(const std::filesystem::path& path) {
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NoSuchFile(path.string() + ": cannot open");
  char magic[8];
  in.read(magic, 8);
  if (in.gcount() != 8 || std::string(magic, 6) != "\x93NUMPY")
    return InvalidArgument(path.string() + ": not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t h;
    in.read(reinterpret_cast<char*>(&h), 2);
    header_len = h;
  } else {
    in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  if (header_len > (1u << 20)) return InvalidArgument(path.string() + ": .npy header too large");
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  // Parsed by hand: std::regex recurses per character and overflowed the stack on long headers.
  std::string descr;
  if (!QuotedValue(header, "descr", &descr))
    return InvalidArgument(path.string() + ": no dtype in .npy header");
  auto it = NpyTypes().find(descr);
  if (it == NpyTypes().end())
    return InvalidArgument(path.string() + ": unsupported .npy dtype " + descr);
  if (header.find("'fortran_order': True") != std::string::npos)
    return InvalidArgument(path.string() + ": Fortran-order arrays are not supported");
  std::vector<int64_t> shape;
  int64_t elements = 1;
  if (!ShapeValue(header, &shape, &elements))
    return InvalidArgument(path.string() + ": no valid shape in .npy header");
  // Every tensor's bound (zero-element shapes included), checked here so that Allocate below
  // cannot throw (fuzz_tensor_files: a (0, 2^62) array aborted on the uncaught length_error).
  if (!exec::ShapeWithinLimit(shape))
    return InvalidArgument(path.string() +
                           ": .npy shape has more than 2^40 elements in its non-zero dimensions");
  // The data must be in the file before anything is allocated for it.
  const uint64_t bytes = static_cast<uint64_t>(elements) * ElementSize(it->second);
  const auto data_at = static_cast<uint64_t>(in.tellg());
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (!in || ec || file_size < data_at || file_size - data_at < bytes)
    return InvalidArgument(path.string() + ": .npy data is truncated");
  Tensor t = Tensor::Allocate(it->second, shape);
  in.read(static_cast<char*>(t.mutable_raw()), static_cast<std::streamsize>(t.byte_size()));
  if (static_cast<size_t>(in.gcount()) != t.byte_size())
    return InvalidArgument(path.string() + ": .npy data is truncated");
  return t;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& t) {
  std::string descr;
  for (const auto& [d, type] : NpyTypes()) {
    if (type == t.dtype()) descr = d;
  }
  if (descr.empty())
    return InvalidArgument("cannot write a " + DataTypeName(t.dtype()) + " tensor as .npy");
  std::string shape;
  for (int64_t d : t.shape()) shape += std::to_string(d) + ",";
  if (t.rank() > 1) shape.pop_back();
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  return format::WriteFileAtomically(path, [&](std::ostream& out) {
    out.write("\x93NUMPY\x01\x00", 8);
    const auto len = static_cast<uint16_t>(header.size());
    out.write(reinterpret_cast<const char*>(&len), 2);
    out << header;
    out.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.byte_size()));
    return static_cast<bool>(out);
  });
}

Result<Tensor> ReadTensorFile(const std::filesystem::path& path) {
  if (path.extension() == ".npy") return ReadNpy(path);
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NoSuchFile(path.string() + ": cannot open");
  // numpy.savez writes a zip archive of .npy files: named as such rather than misread.
  char magic[4] = {};
  in.read(magic, sizeof magic);
  if (path.extension() == ".npz" || (in.gcount() == 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0))
    return InvalidArgument(path.string() +
                           ": a .npz archive; give each array as its own .npy (numpy.save) "
                           "or .pb file: --input name=file.npy");
  in.clear();
  in.seekg(0);
  onnx::TensorProto p;
  if (!p.ParseFromIstream(&in))
    return InvalidArgument(path.string() + ": not a TensorProto (.pb) file");
  return FromTensorProto(p);
}

namespace {

Result<Tensor> FromSequenceProto(const onnx::SequenceProto& p) {
  if (p.elem_type() != onnx::SequenceProto::TENSOR && p.elem_type() != 0)
    return InvalidArgument("not a SequenceProto of tensors (elem_type " +
                           std::to_string(p.elem_type()) + "); ortc runs sequences of tensors");
  std::vector<Tensor> items;
  for (const auto& t : p.tensor_values()) {
    auto item = FromTensorProto(t);
    if (!item.ok()) return item.status();
    items.push_back(std::move(item).value());
  }
  const DataType dt = items.empty() ? DataType::kFloat : items[0].dtype();
  return Tensor::Sequence(dt, std::move(items));
}

}  // namespace

Result<Tensor> ReadSequenceFile(const std::filesystem::path& path) {
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NoSuchFile(path.string() + ": cannot open");
  onnx::SequenceProto p;
  if (!p.ParseFromIstream(&in))
    return InvalidArgument(path.string() + ": not a SequenceProto (.pb) file");
  return FromSequenceProto(p);
}

Result<Tensor> ReadOptionalFile(const std::filesystem::path& path) {
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NoSuchFile(path.string() + ": cannot open");
  onnx::OptionalProto p;
  if (!p.ParseFromIstream(&in))
    return InvalidArgument(path.string() + ": not an OptionalProto (.pb) file");
  if (p.has_tensor_value()) return FromTensorProto(p.tensor_value());
  if (p.has_sequence_value()) return FromSequenceProto(p.sequence_value());
  return Tensor::NoneOptional();
}

Status WriteContainerFile(const std::filesystem::path& path, const Tensor& value,
                          const std::string& name) {
  std::filesystem::path out = path;
  out.replace_extension(".pb");
  if (value.is_sequence()) {
    onnx::SequenceProto p;
    p.set_name(name);
    p.set_elem_type(onnx::SequenceProto::TENSOR);
    for (const auto& item : value.items()) *p.add_tensor_values() = ToTensorProto(item, "");
    return format::WriteFileAtomically(out,
                                       [&](std::ostream& f) { return p.SerializeToOstream(&f); });
  }
  onnx::OptionalProto p;
  p.set_name(name);
  return format::WriteFileAtomically(out,
                                     [&](std::ostream& f) { return p.SerializeToOstream(&f); });
}

Status WriteTensorFile(const std::filesystem::path& path, const Tensor& t,
                       const std::string& name) {
  if (path.extension() == ".npy") return WriteNpy(path, t);
  const onnx::TensorProto p = ToTensorProto(t, name);
  return format::WriteFileAtomically(path,
                                     [&](std::ostream& out) { return p.SerializeToOstream(&out); });
}

}  // namespace ortc::io
