// Semantic validation of CPU programs: see cpu_program_validator.h.
#include "format/cpu_program_validator.h"

#include <cstdint>
#include <vector>

#include "base/element_types.h"

namespace ortc::format {
namespace {

namespace fbc = ortc::fb::cpu;

// ONNX's element type numbers, 0 included: sequences, optionals and values whose type is only
// known at run time carry 0. Kernels refuse the types they do not handle; sizes come from
// HeldElementBytes, which is 0 for anything the runtime does not hold.
bool KnownDataType(int32_t dtype) {
  return dtype >= 0 && dtype <= 32;
}

// Bytes a value of static `dims` needs, or -1 when a dim is dynamic or the count overflows
// kMaxArenaBytes.
int64_t StaticBytes(const flatbuffers::Vector<int64_t>* dims, int32_t dtype) {
  uint64_t bytes = HeldElementBytes(dtype);
  if (bytes == 0) return -1;
  if (!dims) return static_cast<int64_t>(bytes);
  for (int64_t d : *dims) {
    if (d < 0) return -1;
    if (d > 0 && bytes > kMaxArenaBytes / static_cast<uint64_t>(d)) return -1;
    bytes *= static_cast<uint64_t>(d);
  }
  return static_cast<int64_t>(bytes);
}

// FlatBuffers' verifier checks a vector's length field for 4-byte alignment only, so a vector of
// 8-byte elements can pass it misaligned; reading one is undefined behaviour. Empty vectors are
// read from nowhere (FlatBuffers itself may leave them at 4 mod 8).
template <typename T>
bool Aligned(const flatbuffers::Vector<T>* v) {
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % alignof(T) == 0;
}

class Validator {
 public:
  Validator(uint32_t weight_slots, std::string where)
      : slots_(weight_slots), where_(std::move(where)) {}

  Status Program(const fbc::Program& p, int depth) {
    if (!p.values() || !p.ops() || !p.inputs() || !p.outputs())
      return Error("the program is incomplete (values, ops, inputs or outputs missing)");
    if (p.arena_bytes() > kMaxArenaBytes)
      return Error("arena_bytes " + std::to_string(p.arena_bytes()) + " exceeds " +
                   std::to_string(kMaxArenaBytes));
    const auto& values = *p.values();
    const auto n = static_cast<int64_t>(values.size());
    std::vector<bool> written(values.size(), false);
    for (uint32_t i = 0; i < values.size(); ++i) {
      ORTC_RETURN_IF_ERROR(Value(*values.Get(i), i, p.arena_bytes()));
      const auto kind = values.Get(i)->kind();
      written[i] = kind == fbc::ValueKind::Weight;
    }
    for (uint32_t k = 0; k < p.inputs()->size(); ++k) {
      const int32_t v = p.inputs()->Get(k);
      if (v < 0 || v >= n)
        return Error("program input " + std::to_string(k) + " is value " + std::to_string(v) +
                     " of " + std::to_string(n));
      if (values.Get(static_cast<uint32_t>(v))->kind() != fbc::ValueKind::Input)
        return Error("program input " + std::to_string(k) + " (value " + std::to_string(v) +
                     ") is not of kind Input");
      written[static_cast<size_t>(v)] = true;
    }
    for (uint32_t o = 0; o < p.ops()->size(); ++o) {
      ORTC_RETURN_IF_ERROR(Op(*p.ops()->Get(o), o, values, &written, depth));
    }
    for (uint32_t k = 0; k < p.outputs()->size(); ++k) {
      const int32_t v = p.outputs()->Get(k);
      if (v < 0 || v >= n)
        return Error("program output " + std::to_string(k) + " is value " + std::to_string(v) +
                     " of " + std::to_string(n));
      if (!written[static_cast<size_t>(v)])
        return Error("program output " + std::to_string(k) + " (value " + std::to_string(v) +
                     ") is never written");
    }
    return Status::Ok();
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidGraph(where_ + ": the CPU program is invalid: " + what);
  }

  Status Value(const fbc::Value& v, uint32_t i, uint64_t arena_bytes) const {
    const std::string what = "value " + std::to_string(i);
    if (v.kind() < fbc::ValueKind::MIN || v.kind() > fbc::ValueKind::MAX)
      return Error(what + ": unknown kind " + std::to_string(static_cast<int>(v.kind())));
    if (!KnownDataType(v.dtype()))
      return Error(what + ": unknown element type " + std::to_string(v.dtype()));
    if (!Aligned(v.dims())) return Error(what + ": dims are not aligned to 8 bytes");
    if (v.dims()) {
      if (v.dims()->size() > kMaxProgramRank)
        return Error(what + ": rank " + std::to_string(v.dims()->size()) + " exceeds " +
                     std::to_string(kMaxProgramRank));
      for (int64_t d : *v.dims()) {
        if (d < -1) return Error(what + ": dimension " + std::to_string(d));
      }
    }
    if (v.kind() == fbc::ValueKind::Weight) {
      if (v.weight_slot() < 0 || static_cast<uint32_t>(v.weight_slot()) >= slots_)
        return Error(what + ": weight_slot " + std::to_string(v.weight_slot()) + " of " +
                     std::to_string(slots_));
    } else if (v.weight_slot() != -1) {
      return Error(what + ": weight_slot " + std::to_string(v.weight_slot()) +
                   " on a value that is not a weight");
    }
    if (v.arena_offset() != -1) {
      const int64_t need = StaticBytes(v.dims(), v.dtype());
      if (v.kind() != fbc::ValueKind::Intermediate || v.arena_offset() < 0 || v.byte_size() < 0 ||
          need < 0 || v.byte_size() < need ||
          static_cast<uint64_t>(v.arena_offset()) > arena_bytes ||
          static_cast<uint64_t>(v.byte_size()) > arena_bytes - v.arena_offset())
        return Error(what + ": arena range " + std::to_string(v.arena_offset()) + "+" +
                     std::to_string(v.byte_size()) + " does not fit arena_bytes " +
                     std::to_string(arena_bytes) + " and its shape");
    }
    return Status::Ok();
  }

  Status Op(const fbc::Op& op, uint32_t index,
            const flatbuffers::Vector<flatbuffers::Offset<fbc::Value>>& values,
            std::vector<bool>* written, int depth) {
    const std::string what = "op " + std::to_string(index) + " ('" +
                             (op.name() ? op.name()->str() : std::string()) + "')";
    if (!op.op_type() || op.op_type()->size() == 0) return Error(what + ": no op_type");
    const auto n = static_cast<int32_t>(values.size());
    const int32_t n_inputs = op.inputs() ? static_cast<int32_t>(op.inputs()->size()) : 0;
    if (op.inputs()) {
      for (uint32_t k = 0; k < op.inputs()->size(); ++k) {
        const int32_t v = op.inputs()->Get(k);
        if (v < -1 || v >= n)
          return Error(what + ": input " + std::to_string(k) + " is value " + std::to_string(v) +
                       " of " + std::to_string(n));
        if (v >= 0 && !(*written)[static_cast<size_t>(v)])
          return Error(what + ": input " + std::to_string(k) + " (value " + std::to_string(v) +
                       ") is read before any op writes it");
      }
    }
    if (op.explicit_inputs() < -1 || op.explicit_inputs() > n_inputs)
      return Error(what + ": explicit_inputs " + std::to_string(op.explicit_inputs()) + " with " +
                   std::to_string(n_inputs) + " inputs");
    if (op.outputs()) {
      for (uint32_t k = 0; k < op.outputs()->size(); ++k) {
        const int32_t v = op.outputs()->Get(k);
        if (v < -1 || v >= n)
          return Error(what + ": output " + std::to_string(k) + " is value " + std::to_string(v) +
                       " of " + std::to_string(n));
        if (v < 0) continue;
        const auto kind = values.Get(static_cast<uint32_t>(v))->kind();
        if (kind == fbc::ValueKind::Weight || kind == fbc::ValueKind::Input || (*written)[v])
          return Error(what + ": output " + std::to_string(k) + " (value " + std::to_string(v) +
                       ") is a weight, an input or already written");
        (*written)[static_cast<size_t>(v)] = true;
      }
    }
    if (op.attributes()) {
      for (const auto* a : *op.attributes()) {
        if (a->type() < fbc::AttributeType::MIN || a->type() > fbc::AttributeType::MAX)
          return Error(what + ": an attribute of unknown type");
        if (!Aligned(a->ints()) || !Aligned(a->floats()) || !Aligned(a->captures()))
          return Error(what + ": an attribute's numbers are not aligned");
        if (!a->program()) continue;
        if (a->type() != fbc::AttributeType::Graph)
          return Error(what + ": a nested program in an attribute that is not a graph");
        ORTC_RETURN_IF_ERROR(Program(*a->program(), depth + 1));
        const uint32_t nested_inputs = a->program()->inputs()->size();
        const uint32_t captures = a->captures() ? a->captures()->size() : 0;
        if (captures > nested_inputs)
          return Error(what + ": " + std::to_string(captures) +
                       " captures for a nested program of " + std::to_string(nested_inputs) +
                       " inputs");
        for (uint32_t k = 0; k < captures; ++k) {
          const int32_t c = a->captures()->Get(k);
          if (c < 0 || c >= n_inputs)
            return Error(what + ": capture " + std::to_string(k) + " is input " +
                         std::to_string(c) + " of " + std::to_string(n_inputs));
        }
      }
    }
    return Status::Ok();
  }

  uint32_t slots_;
  std::string where_;
};

}  // namespace

Status ValidateCpuProgram(const fbc::Program& program, uint32_t weight_slots,
                          const std::string& where) {
  return Validator(weight_slots, where).Program(program, 0);
}

}  // namespace ortc::format
