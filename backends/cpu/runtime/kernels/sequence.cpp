// Sequence and optional ops. Sequences are immutable Tensors holding their element tensors, so
// an insert or erase builds a new element list that shares the untouched elements. Tensors put
// into a sequence or an optional are copied: the memory plan may reuse an input's arena slot as
// soon as the op has read it, and the container outlives that.
#include <algorithm>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu/runtime/kernels/tensor_pieces.h"

namespace ortc::exec {
namespace {

Result<const Tensor*> SequenceInput(KernelContext& c, size_t i) {
  if (!c.has_input(i) || !c.in(i).is_sequence())
    return c.Error("input " + std::to_string(i) + " must be a sequence");
  return &c.in(i);
}

// A position input (int32/int64 scalar) in [-n, n) (or [-n, n] when `end_ok`), made positive.
Result<int64_t> Position(KernelContext& c, size_t i, int64_t n, bool end_ok, int64_t fallback) {
  if (!c.has_input(i)) return fallback;
  auto p = IntsOf(c.input(i));
  if (!p || p->size() != 1) return c.Error("position must be an int32 or int64 scalar");
  int64_t pos = (*p)[0];
  if (pos < -n || pos > (end_ok ? n : n - 1))
    return c.Error("position " + std::to_string(pos) + " is out of range for a sequence of " +
                   std::to_string(n));
  return pos < 0 ? pos + n : pos;
}

Status SequenceEmpty(KernelContext& c) {
  c.SetOutput(0, Tensor::Sequence(static_cast<DataType>(c.op().Int("dtype", 1)), {}));
  return Status::Ok();
}

Status SequenceConstruct(KernelContext& c) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i) || !c.in(i).is_tensor()) return c.Error("inputs must be tensors");
    if (c.in(i).dtype() != c.in(0).dtype()) return c.Error("inputs differ in element type");
    items.push_back(c.in(i).Clone());
  }
  if (items.empty()) return c.Error("SequenceConstruct needs at least one input");
  c.SetOutput(0, Tensor::Sequence(c.in(0).dtype(), std::move(items)));
  return Status::Ok();
}

Status SequenceAt(KernelContext& c) {
  auto seq = SequenceInput(c, 0);
  if (!seq.ok()) return seq.status();
  if (!c.has_input(1)) return c.Error("SequenceAt needs a position");
  const auto& items = (*seq)->items();
  auto pos = Position(c, 1, static_cast<int64_t>(items.size()), false, 0);
  if (!pos.ok()) return pos.status();
  c.SetOutput(0, items[*pos]);
  return Status::Ok();
}

Status SequenceInsert(KernelContext& c) {
  auto seq = SequenceInput(c, 0);
  if (!seq.ok()) return seq.status();
  if (!c.has_input(1) || !c.in(1).is_tensor())
    return c.Error("the inserted value must be a tensor");
  std::vector<Tensor> items = (*seq)->items();
  if (!items.empty() && c.in(1).dtype() != (*seq)->dtype())
    return c.Error("the inserted tensor's type differs from the sequence's");
  auto pos =
      Position(c, 2, static_cast<int64_t>(items.size()), true, static_cast<int64_t>(items.size()));
  if (!pos.ok()) return pos.status();
  items.insert(items.begin() + *pos, c.in(1).Clone());
  c.SetOutput(0, Tensor::Sequence(c.in(1).dtype(), std::move(items)));
  return Status::Ok();
}

Status SequenceErase(KernelContext& c) {
  auto seq = SequenceInput(c, 0);
  if (!seq.ok()) return seq.status();
  std::vector<Tensor> items = (*seq)->items();
  if (items.empty()) return c.Error("cannot erase from an empty sequence");
  auto pos = Position(c, 1, static_cast<int64_t>(items.size()), false,
                      static_cast<int64_t>(items.size()) - 1);
  if (!pos.ok()) return pos.status();
  items.erase(items.begin() + *pos);
  c.SetOutput(0, Tensor::Sequence((*seq)->dtype(), std::move(items)));
  return Status::Ok();
}

Status SequenceLength(KernelContext& c) {
  auto seq = SequenceInput(c, 0);
  if (!seq.ok()) return seq.status();
  Tensor& y = c.Output(0, DataType::kInt64, {});
  y.mutable_data<int64_t>()[0] = static_cast<int64_t>((*seq)->items().size());
  return Status::Ok();
}

Status SplitToSequence(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (!x.is_tensor()) return c.Error("input must be a tensor");
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  // An axis of 2^40 in a tensor with no elements would make as many empty pieces.
  constexpr int64_t kMaxPieces = int64_t{1} << 24;
  if (!c.has_input(1)) {
    if (dim > kMaxPieces) return c.Error("SplitToSequence would make more than 2^24 pieces");
    sizes.assign(static_cast<size_t>(dim), 1);
    squeeze = c.op().Int("keepdims", 1) == 0;
  } else {
    auto split = IntsOf(c.input(1));
    if (!split) return c.Error("split must be int32 or int64");
    if (c.in(1).rank() == 0) {
      const int64_t chunk = (*split)[0];
      if (chunk <= 0) return c.Error("split must be positive");
      if (dim / chunk > kMaxPieces)
        return c.Error("SplitToSequence would make more than 2^24 pieces");
      for (int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
    } else {
      sizes = *split;
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0 || s > dim - total)  // checked before adding: a huge size overflowed
          return c.Error("split sizes must not be negative and must add up to the axis length");
        total += s;
      }
      if (total != dim) return c.Error("split sizes do not add up to the axis length");
    }
  }
  std::vector<Tensor> items;
  int64_t at = 0;
  for (int64_t s : sizes) {
    items.push_back(squeeze ? TakeAlong(x, axis, at) : SliceAlong(x, axis, at, s));
    at += s;
  }
  c.SetOutput(0, Tensor::Sequence(x.dtype(), std::move(items)));
  return Status::Ok();
}

Status ConcatFromSequence(KernelContext& c) {
  auto seq = SequenceInput(c, 0);
  if (!seq.ok()) return seq.status();
  const auto& items = (*seq)->items();
  if (items.empty()) return c.Error("cannot concatenate an empty sequence");
  for (const Tensor& item : items) {
    if (!item.is_tensor()) return c.Error("the sequence's items must be tensors");
  }
  const bool new_axis = c.op().Int("new_axis", 0) != 0;
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, items[0].rank() + (new_axis ? 1 : 0)))
    return c.Error("axis out of range");
  auto y = new_axis ? StackAlong(items, axis) : ConcatAlong(items, axis);
  if (!y.ok()) return c.Error(y.status().message());
  c.SetOutput(0, std::move(y).value());
  return Status::Ok();
}

Status Optional(KernelContext& c) {
  if (c.has_input(0)) {
    c.SetOutput(0, c.in(0).Clone());
    return Status::Ok();
  }
  c.SetOutput(0, Tensor::NoneOptional());
  return Status::Ok();
}

Status OptionalHasElement(KernelContext& c) {
  Tensor& y = c.Output(0, DataType::kBool, {});
  y.mutable_data<bool>()[0] = c.has_input(0) && !c.in(0).is_none();
  return Status::Ok();
}

Status OptionalGetElement(KernelContext& c) {
  if (!c.has_input(0) || c.in(0).is_none()) return c.Error("the optional holds no value");
  c.SetOutput(0, c.in(0));
  return Status::Ok();
}

}  // namespace

void RegisterSequenceKernels(KernelTable& t) {
  t["SequenceEmpty"] = SequenceEmpty;
  t["SequenceConstruct"] = SequenceConstruct;
  t["SequenceAt"] = SequenceAt;
  t["SequenceInsert"] = SequenceInsert;
  t["SequenceErase"] = SequenceErase;
  t["SequenceLength"] = SequenceLength;
  t["SplitToSequence"] = SplitToSequence;
  t["ConcatFromSequence"] = ConcatFromSequence;
  t["Optional"] = Optional;
  t["OptionalHasElement"] = OptionalHasElement;
  t["OptionalGetElement"] = OptionalGetElement;
}

}  // namespace ortc::exec
