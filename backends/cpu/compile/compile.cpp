// CPU lowering pipeline and program serialization.
#include "cpu/compile/compile.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/element_types.h"
#include "base/shape_limit.h"
#include "cpu/compile/channels_last.h"
#include "cpu/compile/fusion.h"
#include "cpu/compile/int4_weights.h"
#include "cpu/compile/quantized_fusion.h"
#include "cpu/compile/transposed_operands.h"
#include "cpu/compile/weight_packing.h"
#include "cpu_program_generated.h"
#include "format/cpu_program_validator.h"
#include "lowering/constant_folding.h"
#include "lowering/memory_plan.h"
#include "lowering/weight_rewrites.h"

namespace ortc::backends::cpu {
namespace {

namespace fbc = ortc::fb::cpu;

std::vector<int64_t> Dims(const graph::TensorInfo& info) {
  std::vector<int64_t> dims;
  for (const auto& d : info.shape.dims) dims.push_back(d.known() ? d.value : -1);
  return dims;
}

// -1 for no static size, also for shapes past the runtime's bound (declared graph input dims can
// be anything): such a value is left to run-time allocation, which refuses it, and the sums of
// sizes in the memory plan cannot overflow.
int64_t StaticBytes(const graph::TensorInfo& info) {
  if (!info.shape.is_static()) return -1;
  const int64_t bits = ElementBits(info.dtype);
  if (bits == 0) return -1;
  std::vector<int64_t> dims;
  for (const auto& d : info.shape.dims) dims.push_back(d.value);
  if (!exec::ShapeWithinLimit(dims)) return -1;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return (n * bits + 7) / 8;
}

bundle::TensorDescSpec Desc(const lowering::IrValue& v) {
  bundle::TensorDescSpec d{v.name, v.info.dtype, Dims(v.info), {}};
  bool any_symbol = false;
  for (const auto& dim : v.info.shape.dims) any_symbol = any_symbol || !dim.symbol.empty();
  if (any_symbol) {
    for (const auto& dim : v.info.shape.dims) d.symbols.push_back(dim.symbol);
  }
  return d;
}

flatbuffers::Offset<fbc::Attribute> SerializeAttribute(flatbuffers::FlatBufferBuilder& b,
                                                       const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  fbc::AttributeBuilder* unused = nullptr;
  (void)unused;
  auto name = b.CreateString(a.name());
  fbc::AttributeType type = fbc::AttributeType::Undefined;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> s, proto;
  flatbuffers::Offset<flatbuffers::Vector<float>> floats;
  flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> strings;
  switch (a.type()) {
    case A::FLOAT:
      type = fbc::AttributeType::Float;
      break;
    case A::INT:
      type = fbc::AttributeType::Int;
      break;
    case A::STRING:
      type = fbc::AttributeType::String;
      s = b.CreateVector(reinterpret_cast<const uint8_t*>(a.s().data()), a.s().size());
      break;
    case A::TENSOR: {
      type = fbc::AttributeType::Tensor;
      const std::string bytes = a.t().SerializeAsString();
      proto = b.CreateVector(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      break;
    }
    case A::GRAPH: {
      type = fbc::AttributeType::Graph;
      const std::string bytes = a.g().SerializeAsString();
      proto = b.CreateVector(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      break;
    }
    case A::FLOATS:
      type = fbc::AttributeType::Floats;
      floats = b.CreateVector(std::vector<float>(a.floats().begin(), a.floats().end()));
      break;
    case A::INTS:
      type = fbc::AttributeType::Ints;
      ints = b.CreateVector(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
      break;
    case A::STRINGS:
      type = fbc::AttributeType::Strings;
      strings =
          b.CreateVectorOfStrings(std::vector<std::string>(a.strings().begin(), a.strings().end()));
      break;
    default:
      break;
  }
  return fbc::CreateAttribute(b, name, type, a.f(), a.i(), s, floats, ints, strings, proto);
}

// Ops whose runtime kernel may hand back its first input's memory as its output.
bool MayAliasInput(const std::string& op) {
  static const std::set<std::string> ops = {
      "Identity",   "Reshape",  "Flatten",   "Squeeze",      "Unsqueeze",       "Dropout",
      "Cast",       "CastLike", "ReduceSum", "ReduceMean",   "ReduceMax",       "ReduceMin",
      "ReduceProd", "ReduceL1", "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  return ops.count(op) > 0;
}

}  // namespace

namespace {

// Writes programs (the top one and any nested ones) into one builder; the weights of all of
// them go into one slot list, the graph's weight table in the binary.
class ProgramWriter {
 public:
  ProgramWriter(flatbuffers::FlatBufferBuilder& b, std::vector<bundle::WeightSpec>* weights)
      : b_(b), weights_(weights) {}

  // `offsets` gives each value's arena offset (-1 for run-time allocation); nested programs run
  // with their own allocations, so they pass none.
  flatbuffers::Offset<fbc::Program> Write(const lowering::SubgraphIr& ir,
                                          const std::vector<int64_t>& offsets, uint64_t arena_bytes,
                                          const std::string& isa) {
    std::vector<flatbuffers::Offset<fbc::Value>> values;
    for (size_t i = 0; i < ir.values.size(); ++i) {
      const auto& v = ir.values[i];
      fbc::ValueKind kind = fbc::ValueKind::Intermediate;
      int slot = -1;
      if (v.kind == lowering::ValueKind::kInput) kind = fbc::ValueKind::Input;
      if (v.kind == lowering::ValueKind::kOutput) kind = fbc::ValueKind::Output;
      if (v.kind == lowering::ValueKind::kWeight) {
        kind = fbc::ValueKind::Weight;
        slot = static_cast<int>(weights_->size());
        bundle::WeightSpec w;
        w.dtype = v.info.dtype;
        w.dims = Dims(v.info);
        w.layout = v.layout;
        w.alignment = 64;
        w.bytes = *v.bytes;
        weights_->push_back(std::move(w));
      }
      const int64_t offset = i < offsets.size() ? offsets[i] : -1;
      values.push_back(fbc::CreateValue(b_, b_.CreateString(v.name), kind, v.info.dtype,
                                        b_.CreateVector(Dims(v.info)), slot, offset,
                                        StaticBytes(v.info)));
    }
    std::vector<flatbuffers::Offset<fbc::Op>> ops;
    for (const auto& op : ir.ops) {
      std::vector<flatbuffers::Offset<fbc::Attribute>> attrs;
      for (const auto& a : op.attributes) {
        // Type attributes (Optional's `type`) only inform type inference; kernels never read them.
        if (a.type() == onnx::AttributeProto::TYPE_PROTO ||
            a.type() == onnx::AttributeProto::TYPE_PROTOS)
          continue;
        attrs.push_back(SerializeAttribute(b_, a));
      }
      for (const auto& sub : op.subgraphs) {
        // Nested programs are finished before the attribute that holds them is started.
        auto program = Write(*sub.ir, {}, 0, isa);
        auto captures = b_.CreateVector(sub.captures);
        auto name = b_.CreateString(sub.attribute);
        fbc::AttributeBuilder ab(b_);
        ab.add_name(name);
        ab.add_type(fbc::AttributeType::Graph);
        ab.add_program(program);
        ab.add_captures(captures);
        attrs.push_back(ab.Finish());
      }
      ops.push_back(fbc::CreateOp(b_, b_.CreateString(op.name), b_.CreateString(op.op_type),
                                  b_.CreateString(op.domain), op.since_version,
                                  b_.CreateVector(op.inputs), b_.CreateVector(op.outputs),
                                  b_.CreateVector(attrs), op.explicit_inputs));
    }
    return fbc::CreateProgram(b_, b_.CreateVector(values), b_.CreateVector(ops),
                              b_.CreateVector(ir.inputs), b_.CreateVector(ir.outputs), arena_bytes,
                              b_.CreateString(isa));
  }

 private:
  flatbuffers::FlatBufferBuilder& b_;
  std::vector<bundle::WeightSpec>* weights_;
};

}  // namespace

CompiledGraph SerializeProgram(const lowering::SubgraphIr& ir, const std::string& isa) {
  CompiledGraph out;
  // Intermediates with static sizes go in the arena.
  std::vector<int> buffer_of(ir.values.size(), -1);
  std::vector<lowering::BufferRequest> buffers;
  for (size_t i = 0; i < ir.values.size(); ++i) {
    const auto& v = ir.values[i];
    if (v.kind == lowering::ValueKind::kIntermediate && StaticBytes(v.info) >= 0) {
      buffer_of[i] = static_cast<int>(buffers.size());
      buffers.push_back({StaticBytes(v.info), INT32_MAX, -1});
    }
  }
  // Lifetimes. The runtime's view ops (Reshape, Squeeze, Identity...) may return their input's
  // memory as their output, so a buffer lives as long as any value aliasing it; a value the
  // program outputs lives to the end.
  const int n_ops = static_cast<int>(ir.ops.size());
  std::vector<int> last_use(ir.values.size(), -1), alias_of(ir.values.size(), -1);
  for (int op = 0; op < n_ops; ++op) {
    for (int v : ir.ops[op].outputs) {
      if (v >= 0 && buffer_of[v] >= 0)
        buffers[buffer_of[v]].first_use = std::min(buffers[buffer_of[v]].first_use, op);
    }
    for (int v : ir.ops[op].inputs) {
      if (v >= 0) last_use[v] = std::max(last_use[v], op);
    }
    if (MayAliasInput(ir.ops[op].op_type) && !ir.ops[op].inputs.empty() &&
        ir.ops[op].inputs[0] >= 0) {
      for (int v : ir.ops[op].outputs) {
        if (v >= 0) alias_of[v] = ir.ops[op].inputs[0];
      }
    }
  }
  for (int v : ir.outputs) last_use[v] = n_ops;
  for (int op = n_ops - 1; op >= 0; --op) {  // children before parents: transitive extension
    for (int v : ir.ops[op].outputs) {
      if (v >= 0 && alias_of[v] >= 0)
        last_use[alias_of[v]] = std::max(last_use[alias_of[v]], last_use[v]);
    }
  }
  for (size_t v = 0; v < ir.values.size(); ++v) {
    if (buffer_of[v] >= 0) buffers[buffer_of[v]].last_use = last_use[v];
  }
  // A FusedConv's output takes its residual's buffer when nothing reads the residual later and
  // the convolution reads it only as the residual: oneDNN's sum post-op adds what the output
  // holds, so the runtime then has no residual to copy there first.
  for (int op = 0; op < n_ops; ++op) {
    const auto& o = ir.ops[op];
    if (o.op_type != "FusedConv" || o.inputs.size() < 4 || o.inputs[3] < 0 || o.outputs.empty())
      continue;
    const int r = o.inputs[3], y = o.outputs[0];
    if (y < 0 || buffer_of[r] < 0 || buffer_of[y] < 0 || buffer_of[r] == buffer_of[y] ||
        last_use[r] != op || std::count(o.inputs.begin(), o.inputs.end(), r) != 1)
      continue;
    auto& shared = buffers[buffer_of[r]];
    auto& own = buffers[buffer_of[y]];
    if (shared.size != own.size) continue;
    shared.last_use = std::max(shared.last_use, own.last_use);
    own = {0, op, op};  // left empty
    buffer_of[y] = buffer_of[r];
  }
  for (auto& b : buffers) {
    if (b.first_use == INT32_MAX) b.first_use = 0;
    b.last_use = std::max(b.last_use, b.first_use);  // written but never read: live at its op
  }
  auto plan = lowering::PlanMemory(buffers, 64);
  // An arena the runtime would refuse as damage (more than 2^40 bytes): every intermediate is
  // then allocated at run time instead, where each tensor is checked on its own.
  if (static_cast<uint64_t>(plan.arena_bytes) > format::kMaxArenaBytes) {
    std::fill(buffer_of.begin(), buffer_of.end(), -1);
    plan.arena_bytes = 0;
  }

  std::vector<int64_t> offsets(ir.values.size(), -1);
  for (size_t i = 0; i < ir.values.size(); ++i) {
    if (buffer_of[i] >= 0) offsets[i] = plan.offsets[buffer_of[i]];
  }
  flatbuffers::FlatBufferBuilder b(1 << 14);
  auto program = ProgramWriter(b, &out.weights)
                     .Write(ir, offsets, static_cast<uint64_t>(plan.arena_bytes), isa);
  fbc::FinishProgramBuffer(b, program);
  out.program.assign(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  out.arena_bytes = static_cast<uint64_t>(plan.arena_bytes);
  for (int v : ir.inputs) out.inputs.push_back(Desc(ir.values[v]));
  for (int v : ir.outputs) out.outputs.push_back(Desc(ir.values[v]));
  return out;
}

namespace {

// Sets attribute name to value on every float Conv and FusedConv; answers how many.
int MarkFloatConvolutions(lowering::SubgraphIr* ir, const char* name, const char* value) {
  int marked = 0;
  for (auto& op : ir->ops) {
    if ((op.op_type != "Conv" && op.op_type != "FusedConv") || !op.domain.empty() || op.removed ||
        ir->values[op.inputs[0]].info.dtype != onnx::TensorProto::FLOAT)
      continue;
    op.SetStringAttr(name, value);
    ++marked;
  }
  return marked;
}

}  // namespace

Result<CompiledGraph> CompileCpuSubgraph(const graph::Model& model, const Subgraph& sg,
                                         const CpuCompileOptions& options) {
  auto ir = lowering::SubgraphIr::Build(model, sg.name, sg.nodes, sg.inputs, sg.outputs);
  if (!ir.ok()) return ir.status();
  // Before folding: folding would turn the weights' DequantizeLinear into float constants.
  auto qdq = FuseQdqConvolutions(&ir.value());
  if (!qdq.ok()) return qdq.status();
  // Before folding: the 4-bit weights' constants are found in their cones, and each weight is
  // built, matched and packed alone, so a large model's weights never all exist as floats.
  const std::vector<Int4Candidate> int4 = FindInt4Candidates(*ir);
  auto int4_matmuls = UseInt4Weights(&ir.value(), int4);
  if (!int4_matmuls.ok()) return int4_matmuls.status();
  auto folded = lowering::FoldConstants(&ir.value());
  if (!folded.ok()) return folded.status();
  auto transposed = ReadTransposedOperands(&ir.value());
  if (!transposed.ok()) return transposed.status();
  auto bn = lowering::FoldBatchNormIntoConv(&ir.value());
  if (!bn.ok()) return bn.status();
  auto gemm = lowering::PretransposeGemmWeights(&ir.value());
  if (!gemm.ok()) return gemm.status();
  auto fused = FuseConvEpilogues(&ir.value());
  if (!fused.ok()) return fused.status();
  auto nhwc = UseChannelsLast(&ir.value());
  if (!nhwc.ok()) return nhwc.status();
  const int bf16_convolutions =
      options.precision == "bf16" ? MarkFloatConvolutions(&ir.value(), "compute_precision", "bf16")
                                  : 0;
  const int conv_algorithm_marked =
      options.conv_algorithm != "auto"
          ? MarkFloatConvolutions(&ir.value(), "conv_algorithm", options.conv_algorithm.c_str())
          : 0;
  auto packed = PackConvWeightsForIsa(&ir.value(), options.target_isa);
  if (!packed.ok()) return packed.status();
  CompiledGraph out = SerializeProgram(*ir, kCpuIsa);
  out.stats["folded_ops"] = folded->folded_ops;
  out.stats["int4_matmuls"] = *int4_matmuls;
  out.stats["transposed_operands_read"] = *transposed;
  out.stats["batchnorms_folded"] = *bn;
  out.stats["gemm_weights_pretransposed"] = *gemm;
  out.stats["residual_adds_fused"] = fused->residual_adds;
  out.stats["activations_fused"] = fused->activations;
  out.stats["affine_steps_fused"] = fused->affine_steps;
  out.stats["channels_last_convolutions"] = nhwc->convolutions;
  out.stats["channels_last_pools"] = nhwc->pools;
  out.stats["channels_last_concats"] = nhwc->concats;
  out.stats["channels_last_resizes"] = nhwc->resizes;
  out.stats["layout_transposes"] = nhwc->transposes;
  out.stats["layout_reshapes"] = nhwc->reshapes;
  out.stats["bf16_convolutions"] = bf16_convolutions;
  out.stats["conv_algorithm_marked"] = conv_algorithm_marked;
  out.stats["packed_convolutions"] = *packed;
  out.stats["qdq_convolutions_fused"] = *qdq;
  out.stats["ops"] = static_cast<int>(ir->ops.size());
  return out;
}

}  // namespace ortc::backends::cpu
