// ortc runtime tensors.
//
// Ownership: a Tensor either owns its buffer (Allocate, FromBytes) or borrows read-only memory
// kept alive by a shared handle it holds (Borrow: weights used in place from a mapped binary),
// or views device memory the caller owns (OnDevice). Copies of a Tensor share the buffer;
// Clone() makes an owned deep copy of a host tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc {

// Element types, numbered as ONNX's TensorProto.DataType.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

size_t ElementSize(DataType t);  // 0 for strings and undefined

// Where a tensor's bytes are. Host tensors are process memory; device tensors are memory of a
// backend's device (a CUdeviceptr for CUDA), read and written only by that backend's graphs.
enum class MemoryLocation : int32_t { kHost = 0, kCudaDevice = 1 };
std::string DataTypeName(DataType t);

class Tensor;
// Element i (row-major) of a host tensor of a numeric type as a double: exact for every type
// (float16 and bfloat16 included) but 64-bit integers beyond 2^53; 0 for other types.
double ElementAsDouble(const Tensor& t, int64_t i);
// Writes v into element i of a host tensor of a numeric type: floats round to nearest even; for
// integers NaN gives 0 and other values saturate to int64, then wrap to the type (uint8:
// 1 - 2 = 255), as ONNX's integer arithmetic computed in double expects.
void SetElementFromDouble(Tensor& t, int64_t i, double v);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled, 64-byte aligned. Strings get empty strings.
  static Tensor Allocate(DataType dtype, std::vector<int64_t> shape);
  // Like Allocate, without zero-filling (for outputs a kernel overwrites entirely).
  static Tensor AllocateUninitialized(DataType dtype, std::vector<int64_t> shape);
  // Read-only view of memory owned elsewhere; `keep_alive` holds that memory.
  static Tensor Borrow(DataType dtype, std::vector<int64_t> shape, const void* data,
                       std::shared_ptr<const void> keep_alive);
  // Writable view of memory owned by `owner` (e.g. a slot of a run's arena).
  static Tensor WrapWritable(DataType dtype, std::vector<int64_t> shape, void* data,
                             std::shared_ptr<void> owner);
  static Tensor FromBytes(DataType dtype, std::vector<int64_t> shape, const void* data,
                          size_t bytes);
  // A view of device memory the caller owns and keeps alive while a run uses it (an input, or an
  // output buffer of Session::RunBound). raw() / mutable_raw() give the device address; CPU
  // kernels never touch it, and Clone() returns the view itself (the runtime never copies device
  // memory).
  // `owner`, when given, owns the memory instead (Session::AllocateDevice's tensors free it
  // with their last copy).
  static Tensor OnDevice(DataType dtype, std::vector<int64_t> shape, void* device_data,
                         MemoryLocation where = MemoryLocation::kCudaDevice,
                         std::shared_ptr<void> owner = nullptr);
  Tensor Clone() const;

  // ONNX sequence and optional values travel as Tensors too, so kernels, sessions and the
  // executor keep one value type. A sequence holds its element tensors (dtype() is the element
  // type); an empty optional holds nothing; an optional that holds a value is that value itself.
  static Tensor Sequence(DataType element_type, std::vector<Tensor> items);
  static Tensor NoneOptional(DataType element_type = DataType::kUndefined);
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kNone; }
  const std::vector<Tensor>& items() const;  // a sequence's elements (empty otherwise)

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t elements() const;
  size_t byte_size() const;
  // No value at all (not set), as opposed to an empty sequence or an empty optional.
  bool empty() const { return dtype_ == DataType::kUndefined && kind_ == Kind::kTensor; }
  bool is_view() const { return keep_alive_ != nullptr; }
  MemoryLocation location() const { return location_; }

  const void* raw() const { return data_; }
  void* mutable_raw();  // nullptr for views
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data() {
    return static_cast<T*>(mutable_raw());
  }

  // String tensors keep their elements here (data() is not used for them).
  const std::vector<std::string>& strings() const;
  std::vector<std::string>& mutable_strings();

  // Same buffer, another shape with the same element count.
  Tensor Reshaped(std::vector<int64_t> shape) const;

 private:
  static Tensor AllocateImpl(DataType dtype, std::vector<int64_t> shape, bool zero);
  enum class Kind { kTensor, kSequence, kNone };
  Kind kind_ = Kind::kTensor;
  std::shared_ptr<const std::vector<Tensor>> items_;
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> shape_;
  std::shared_ptr<void> owned_;
  std::shared_ptr<const void> keep_alive_;
  const void* data_ = nullptr;
  MemoryLocation location_ = MemoryLocation::kHost;
  std::shared_ptr<std::vector<std::string>> strings_;
};

// A tensor from the bytes of a serialized ONNX TensorProto (ONNX's .pb test-data files), its
// data inline (raw_data or the typed fields); one that names external data is refused.
Result<Tensor> TensorFromOnnxBytes(const void* data, size_t size);
// A host tensor as the bytes of a serialized ONNX TensorProto named `name`, its data inline.
std::string TensorToOnnxBytes(const Tensor& t, const std::string& name);

}  // namespace ortc
