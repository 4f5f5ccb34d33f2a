// Writer and validating reader of the npu program blob (format in npu_program.h).
#include "npu_program.h"

#include <cmath>
#include <cstring>

namespace npu {
namespace {

constexpr uint64_t kHeaderBytes = 28;
constexpr uint64_t kMinTensorBytes = 16;  // empty name, rank 0
constexpr uint64_t kMinSlotBytes = 8;
constexpr uint64_t kStepBytes = 20 + 8 * 8 + 4 * 4 + 2 * 4;
constexpr uint32_t kMaxNameBytes = 4096;

// Little-endian encoding, independent of the host's byte order.
class Writer {
 public:
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void I64(int64_t v) {
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) out_ += static_cast<char>((u >> (8 * i)) & 0xff);
  }
  void F32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    U32(bits);
  }
  void Bytes(const std::string& s) { out_ += s; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Bounds-checked little-endian decoding: every read fails instead of passing the end.
class Reader {
 public:
  Reader(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  uint64_t remaining() const { return size_ - pos_; }
  bool U32(uint32_t* v) {
    if (remaining() < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= static_cast<uint32_t>(data_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return true;
  }
  bool I32(int32_t* v) {
    uint32_t u;
    if (!U32(&u)) return false;
    *v = static_cast<int32_t>(u);
    return true;
  }
  bool I64(int64_t* v) {
    if (remaining() < 8) return false;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
    pos_ += 8;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool F32(float* v) {
    uint32_t bits;
    if (!U32(&bits)) return false;
    std::memcpy(v, &bits, 4);
    return true;
  }
  bool Bytes(uint64_t n, std::string* s) {
    if (remaining() < n) return false;
    s->assign(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
    pos_ += n;
    return true;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

bool Bad(std::string* error, const std::string& what) {
  *error = "npu program: " + what;
  return false;
}

bool ReadDims(Reader& r, std::vector<int64_t>* dims, std::string* error, const std::string& what) {
  uint32_t rank;
  if (!r.U32(&rank)) return Bad(error, "truncated in " + what);
  if (rank > kMaxRank) return Bad(error, what + " has rank " + std::to_string(rank));
  dims->resize(rank);
  for (auto& d : *dims)
    if (!r.I64(&d)) return Bad(error, "truncated in " + what);
  std::string why;
  if (!CheckDims(*dims, nullptr, &why)) return Bad(error, what + ": " + why);
  return true;
}

bool InRange(int64_t v, int64_t lo, int64_t hi) {
  return v >= lo && v <= hi;
}

bool ZeroPointFits(int32_t dtype, int32_t zero) {
  return dtype == kInt8 ? InRange(zero, -128, 127) : InRange(zero, 0, 255);
}

bool ScaleOk(float s) {
  return std::isfinite(s) && s > 0;
}

// The list of input or output tensors: each index valid, listed once, of the right role, and
// every tensor of that role listed.
bool CheckList(const Program& p, const std::vector<uint32_t>& list, uint32_t role, const char* what,
               std::string* error) {
  std::vector<bool> seen(p.tensors.size(), false);
  for (const uint32_t t : list) {
    if (t >= p.tensors.size() || seen[t] || p.tensors[t].role != role)
      return Bad(error, std::string(what) + " list names tensor " + std::to_string(t) +
                            ", which is out of range, repeated or of another role");
    seen[t] = true;
  }
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (p.tensors[t].role == role && !seen[t])
      return Bad(error, "tensor " + std::to_string(t) + " is missing from the " + what + " list");
  return true;
}

bool CheckStep(const Program& p, size_t index, const StepRecord& s, std::string* error) {
  const std::string what = "step " + std::to_string(index);
  if (s.kind != StepKind::kConv && s.kind != StepKind::kMatMul)
    return Bad(error, what + " has unknown kind " + std::to_string(static_cast<uint32_t>(s.kind)));
  if (s.input >= p.tensors.size() || s.output >= p.tensors.size() || s.input == s.output)
    return Bad(error, what + " names tensors out of range (" + std::to_string(s.input) + ", " +
                          std::to_string(s.output) + " of " + std::to_string(p.tensors.size()) +
                          ")");
  if (s.weight_slot >= p.slots.size())
    return Bad(error, what + " names weight slot " + std::to_string(s.weight_slot) + " of " +
                          std::to_string(p.slots.size()));
  const TensorRecord& x = p.tensors[s.input];
  const TensorRecord& y = p.tensors[s.output];
  const SlotRecord& w = p.slots[s.weight_slot];
  if ((x.dtype != kInt8 && x.dtype != kUint8) || (y.dtype != kInt8 && y.dtype != kUint8))
    return Bad(error, what + " reads or writes a tensor that is not int8 or uint8");
  if (w.dtype != kInt8) return Bad(error, what + " has a weight slot that is not int8");
  if (!ScaleOk(s.sx) || !ScaleOk(s.sw) || !ScaleOk(s.sy) || !std::isfinite(s.sb) || s.sb < 0)
    return Bad(error, what + " has a scale that is not finite and positive");
  if (!ZeroPointFits(x.dtype, s.zx) || !ZeroPointFits(y.dtype, s.zy))
    return Bad(error, what + " has a zero point outside its type's range");

  std::vector<int64_t> expected;
  std::string why;
  if (s.kind == StepKind::kConv) {
    if (!ConvOutputDims(x.dims, w.dims, s.conv, &expected, &why))
      return Bad(error, what + ": " + why);
    if (s.bias_slot != -1) {
      if (s.bias_slot < 0 || static_cast<size_t>(s.bias_slot) >= p.slots.size())
        return Bad(error, what + " names bias slot " + std::to_string(s.bias_slot) + " of " +
                              std::to_string(p.slots.size()));
      const SlotRecord& b = p.slots[static_cast<size_t>(s.bias_slot)];
      if (b.dtype != kInt32 || b.dims.size() != 1 || b.dims[0] != w.dims[0] || !ScaleOk(s.sb))
        return Bad(error, what + " has a bias slot that is not int32 [" +
                              std::to_string(w.dims[0]) + "] with a positive scale");
    }
  } else {
    if (!MatMulOutputDims(x.dims, w.dims, &expected, &why)) return Bad(error, what + ": " + why);
    if (s.bias_slot != -1) return Bad(error, what + ": a MatMul step has no bias");
  }
  if (expected != y.dims)
    return Bad(error,
               what + " output is " + DimsText(y.dims) + ", its inputs make " + DimsText(expected));
  return true;
}

// Every step reads a graph input or an earlier step's output and writes a tensor nobody wrote;
// every output and intermediate is written.
bool CheckDataflow(const Program& p, std::string* error) {
  std::vector<bool> defined(p.tensors.size(), false);
  for (const uint32_t t : p.inputs) defined[t] = true;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const StepRecord& s = p.steps[i];
    if (!defined[s.input])
      return Bad(error, "step " + std::to_string(i) + " reads tensor " + std::to_string(s.input) +
                            " before anything writes it");
    if (defined[s.output])
      return Bad(error, "step " + std::to_string(i) + " writes tensor " + std::to_string(s.output) +
                            ", which is already written");
    defined[s.output] = true;
  }
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (!defined[t]) return Bad(error, "tensor " + std::to_string(t) + " is never written");
  return true;
}

}  // namespace

uint64_t DtypeSize(int32_t dtype) {
  switch (dtype) {
    case kFloat:
    case kInt32:
      return 4;
    case kUint8:
    case kInt8:
      return 1;
    default:
      return 0;
  }
}

uint64_t ByteSize(int32_t dtype, const std::vector<int64_t>& dims) {
  uint64_t n = DtypeSize(dtype);
  for (const int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

std::string WriteProgram(const Program& p) {
  Writer w;
  w.Bytes(std::string(kProgramMagic, 4));
  w.U32(kProgramFormatVersion);
  w.U32(static_cast<uint32_t>(p.tensors.size()));
  w.U32(static_cast<uint32_t>(p.inputs.size()));
  w.U32(static_cast<uint32_t>(p.outputs.size()));
  w.U32(static_cast<uint32_t>(p.slots.size()));
  w.U32(static_cast<uint32_t>(p.steps.size()));
  for (const TensorRecord& t : p.tensors) {
    w.U32(static_cast<uint32_t>(t.name.size()));
    w.Bytes(t.name);
    w.I32(t.dtype);
    w.U32(t.role);
    w.U32(static_cast<uint32_t>(t.dims.size()));
    for (const int64_t d : t.dims) w.I64(d);
  }
  for (const uint32_t t : p.inputs) w.U32(t);
  for (const uint32_t t : p.outputs) w.U32(t);
  for (const SlotRecord& s : p.slots) {
    w.I32(s.dtype);
    w.U32(static_cast<uint32_t>(s.dims.size()));
    for (const int64_t d : s.dims) w.I64(d);
  }
  for (const StepRecord& s : p.steps) {
    w.U32(static_cast<uint32_t>(s.kind));
    w.U32(s.input);
    w.U32(s.output);
    w.U32(s.weight_slot);
    w.I32(s.bias_slot);
    for (const int64_t v : s.conv.strides) w.I64(v);
    for (const int64_t v : s.conv.pads) w.I64(v);
    for (const int64_t v : s.conv.dilations) w.I64(v);
    w.F32(s.sx);
    w.F32(s.sw);
    w.F32(s.sb);
    w.F32(s.sy);
    w.I32(s.zx);
    w.I32(s.zy);
  }
  return w.Take();
}

bool ReadProgram(const void* data, uint64_t size, Program* out, std::string* error) {
  if (!data && size) return Bad(error, "no bytes");
  Reader r(static_cast<const uint8_t*>(data), data ? size : 0);
  if (r.remaining() < kHeaderBytes)
    return Bad(error, "truncated header (" + std::to_string(size) + " bytes)");
  std::string magic;
  r.Bytes(4, &magic);
  if (magic != std::string(kProgramMagic, 4)) return Bad(error, "bad magic (not an npu program)");
  uint32_t version, num_tensors, num_inputs, num_outputs, num_slots, num_steps;
  r.U32(&version);
  r.U32(&num_tensors);
  r.U32(&num_inputs);
  r.U32(&num_outputs);
  r.U32(&num_slots);
  r.U32(&num_steps);
  if (version != kProgramFormatVersion)
    return Bad(error, "format version " + std::to_string(version) + ", this plugin reads " +
                          std::to_string(kProgramFormatVersion));
  // Counts bounded by the bytes left before anything is allocated for them.
  const uint64_t least = uint64_t{num_tensors} * kMinTensorBytes +
                         (uint64_t{num_inputs} + num_outputs) * 4 +
                         uint64_t{num_slots} * kMinSlotBytes + uint64_t{num_steps} * kStepBytes;
  if (least > r.remaining())
    return Bad(error, "counts need at least " + std::to_string(least + kHeaderBytes) +
                          " bytes, the blob has " + std::to_string(size));

  Program p;
  p.tensors.resize(num_tensors);
  for (uint32_t i = 0; i < num_tensors; ++i) {
    TensorRecord& t = p.tensors[i];
    const std::string what = "tensor " + std::to_string(i);
    uint32_t name_length;
    if (!r.U32(&name_length)) return Bad(error, "truncated in " + what);
    if (name_length > kMaxNameBytes || !r.Bytes(name_length, &t.name))
      return Bad(error, what + " has a name longer than the blob or 4096 bytes");
    if (!r.I32(&t.dtype) || !r.U32(&t.role)) return Bad(error, "truncated in " + what);
    if (t.dtype != kInt8 && t.dtype != kUint8)
      return Bad(error, what + " has dtype " + std::to_string(t.dtype) + " (int8 or uint8 only)");
    if (t.role > kGraphOutput) return Bad(error, what + " has unknown role");
    if (!ReadDims(r, &t.dims, error, what)) return false;
  }
  p.inputs.resize(num_inputs);
  for (auto& t : p.inputs)
    if (!r.U32(&t)) return Bad(error, "truncated in the input list");
  p.outputs.resize(num_outputs);
  for (auto& t : p.outputs)
    if (!r.U32(&t)) return Bad(error, "truncated in the output list");
  p.slots.resize(num_slots);
  for (uint32_t i = 0; i < num_slots; ++i) {
    SlotRecord& s = p.slots[i];
    const std::string what = "weight slot " + std::to_string(i);
    if (!r.I32(&s.dtype)) return Bad(error, "truncated in " + what);
    if (s.dtype != kInt8 && s.dtype != kInt32)
      return Bad(error, what + " has dtype " + std::to_string(s.dtype) + " (int8 or int32 only)");
    if (!ReadDims(r, &s.dims, error, what)) return false;
  }
  p.steps.resize(num_steps);
  for (uint32_t i = 0; i < num_steps; ++i) {
    StepRecord& s = p.steps[i];
    uint32_t kind = 0;
    bool ok = r.U32(&kind) && r.U32(&s.input) && r.U32(&s.output) && r.U32(&s.weight_slot) &&
              r.I32(&s.bias_slot);
    for (auto& v : s.conv.strides) ok = ok && r.I64(&v);
    for (auto& v : s.conv.pads) ok = ok && r.I64(&v);
    for (auto& v : s.conv.dilations) ok = ok && r.I64(&v);
    ok = ok && r.F32(&s.sx) && r.F32(&s.sw) && r.F32(&s.sb) && r.F32(&s.sy) && r.I32(&s.zx) &&
         r.I32(&s.zy);
    if (!ok) return Bad(error, "truncated in step " + std::to_string(i));
    s.kind = static_cast<StepKind>(kind);
  }
  if (r.remaining() != 0)
    return Bad(error, std::to_string(r.remaining()) + " bytes after the last step");

  if (!CheckList(p, p.inputs, kGraphInput, "input", error) ||
      !CheckList(p, p.outputs, kGraphOutput, "output", error))
    return false;
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (!CheckStep(p, i, p.steps[i], error)) return false;
  if (!CheckDataflow(p, error)) return false;
  *out = std::move(p);
  return true;
}

}  // namespace npu
