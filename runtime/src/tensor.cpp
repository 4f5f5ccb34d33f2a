// Tensor storage.
#include "ortc/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "base/element_types.h"
#include "base/shape_limit.h"
#include "exec/buffer_pool.h"

namespace ortc {

size_t ElementSize(DataType t) {
  return HeldElementBytes(static_cast<int32_t>(t));
}

std::string DataTypeName(DataType t) {
  return ElementTypeName(static_cast<int32_t>(t));
}

int64_t Tensor::elements() const {
  if (kind_ != Kind::kTensor) return 0;  // sequences and optionals hold no elements themselves
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

size_t Tensor::byte_size() const {
  return static_cast<size_t>(elements()) * ElementSize(dtype_);
}

Tensor Tensor::Allocate(DataType dtype, std::vector<int64_t> shape) {
  return AllocateImpl(dtype, std::move(shape), true);
}

Tensor Tensor::AllocateUninitialized(DataType dtype, std::vector<int64_t> shape) {
  return AllocateImpl(dtype, std::move(shape), false);
}

Tensor Tensor::AllocateImpl(DataType dtype, std::vector<int64_t> shape, bool zero) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  if (!exec::ShapeWithinLimit(t.shape_)) throw std::length_error("invalid tensor shape");
  if (dtype == DataType::kString) {
    t.strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(t.elements()));
    return t;
  }
  t.owned_ = exec::AcquireBuffer(t.byte_size(), zero);
  void* p = t.owned_.get();
  t.data_ = p;
  return t;
}

Tensor Tensor::Borrow(DataType dtype, std::vector<int64_t> shape, const void* data,
                      std::shared_ptr<const void> keep_alive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  t.keep_alive_ = keep_alive ? std::move(keep_alive) : std::make_shared<int>(0);
  return t;
}

Tensor Tensor::WrapWritable(DataType dtype, std::vector<int64_t> shape, void* data,
                            std::shared_ptr<void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.owned_ = std::shared_ptr<void>(std::move(owner), data);
  t.data_ = data;
  return t;
}

Tensor Tensor::OnDevice(DataType dtype, std::vector<int64_t> shape, void* device_data,
                        MemoryLocation where, std::shared_ptr<void> owner) {
  Tensor t = WrapWritable(dtype, std::move(shape), device_data, std::move(owner));
  t.location_ = where;
  return t;
}

Tensor Tensor::FromBytes(DataType dtype, std::vector<int64_t> shape, const void* data,
                         size_t bytes) {
  Tensor t = Allocate(dtype, std::move(shape));
  std::memcpy(t.mutable_raw(), data, std::min(bytes, t.byte_size()));
  return t;
}

Tensor Tensor::Sequence(DataType element_type, std::vector<Tensor> items) {
  Tensor t;
  t.kind_ = Kind::kSequence;
  t.dtype_ = element_type;
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::move(items));
  return t;
}

Tensor Tensor::NoneOptional(DataType element_type) {
  Tensor t;
  t.kind_ = Kind::kNone;
  t.dtype_ = element_type;
  return t;
}

const std::vector<Tensor>& Tensor::items() const {
  static const std::vector<Tensor> kNoItems;
  return items_ ? *items_ : kNoItems;
}

Tensor Tensor::Clone() const {
  if (kind_ == Kind::kNone) return *this;
  if (kind_ == Kind::kSequence) {
    std::vector<Tensor> copies;
    for (const auto& item : items()) copies.push_back(item.Clone());
    return Sequence(dtype_, std::move(copies));
  }
  if (location_ != MemoryLocation::kHost) return *this;  // device memory: the caller's to copy
  Tensor t = Allocate(dtype_, shape_);
  if (dtype_ == DataType::kString) {
    *t.strings_ = strings();
  } else if (byte_size()) {
    std::memcpy(t.mutable_raw(), data_, byte_size());
  }
  return t;
}

void* Tensor::mutable_raw() {
  return keep_alive_ ? nullptr : const_cast<void*>(data_);
}

const std::vector<std::string>& Tensor::strings() const {
  static const std::vector<std::string> kEmpty;
  return strings_ ? *strings_ : kEmpty;
}

std::vector<std::string>& Tensor::mutable_strings() {
  if (!strings_) strings_ = std::make_shared<std::vector<std::string>>();
  return *strings_;
}

Tensor Tensor::Reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace ortc
