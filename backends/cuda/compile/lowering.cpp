// Units -> plan: buffers (inputs, outputs, weights, arena, aliases), library-call steps,
// kernel requests, and the NHWC layout of tensor-core convolutions, kept through elementwise
// groups and ops with channels-last kernels (choices in lowering_layouts.cpp).
#include "cuda/compile/lowering.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/element_types.h"
#include "cuda/compile/lowering_grouped_conv.h"
#include "cuda/compile/lowering_layouts.h"
#include "cuda/compile/op_desc.h"
#include "cuda/compile/packing.h"
#include "cuda/compile/tuning_choices.h"
#include "graph/graph.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

int64_t Elements(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

uint64_t Bytes(int32_t dtype, const std::vector<int64_t>& dims) {
  return static_cast<uint64_t>((Elements(dims) * ElementBits(dtype) + 7) / 8);
}

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

class Lowerer {
 public:
  Lowerer(const SubgraphIr& ir, const CudaOptions& o, const std::vector<Unit>& units)
      : ir_(ir), o_(o), policy_(ir, units, UsesTensorCores(o.precision)) {
    nchw_.assign(ir.values.size(), -1);
    nhwc_.assign(ir.values.size(), -1);
    plan_.graph = ir.name;
    plan_.precision = o.precision == Precision::kFp16   ? fb::Precision::FP16
                      : o.precision == Precision::kBf16 ? fb::Precision::BF16
                      : o.precision == Precision::kTf32 ? fb::Precision::TF32
                                                        : fb::Precision::FP32;
    nhwc_convs_ = UsesTensorCores(o.precision);
    plan_.conv_layout = nhwc_convs_ ? fb::TensorLayout::NHWC : fb::TensorLayout::NCHW;
  }

  Result<Plan> Run(const std::vector<Unit>& units, std::map<std::string, int>* stats) {
    for (size_t i = 0; i < ir_.inputs.size(); ++i) plan_.inputs.push_back(Buffer(ir_.inputs[i]));
    for (size_t i = 0; i < ir_.outputs.size(); ++i) plan_.outputs.push_back(Buffer(ir_.outputs[i]));
    for (const auto& u : units) {
      if (u.kind == Unit::kFused)
        for (int k : u.ops) in_fused_group_.insert(k);
    }
    for (const auto& u : units) {
      if (u.kind == Unit::kOp && SplitAsViews(u.ops[0])) {
        (*stats)["splits_as_views"]++;
        continue;
      }
      if (u.kind == Unit::kOp && SplitReadInPlace(u.ops[0])) {
        (*stats)["splits_read_in_place"]++;
        continue;
      }
      switch (u.kind) {
        case Unit::kConv:
          ORTC_RETURN_IF_ERROR(Conv(u));
          (*stats)[last_conv_generated_ ? "generated_convs" : "conv_calls"]++;
          break;
        case Unit::kGemm:
          ORTC_RETURN_IF_ERROR(Gemm(u));
          (*stats)["gemm_calls"]++;
          break;
        case Unit::kFused:
          ORTC_RETURN_IF_ERROR(Fused(u));
          (*stats)["fused_kernels"]++;
          (*stats)["fused_ops"] += static_cast<int>(u.ops.size());
          break;
        case Unit::kView:
          View(u);
          (*stats)["views"]++;
          break;
        case Unit::kOp:
          ORTC_RETURN_IF_ERROR(Op(u));
          (*stats)["op_kernels"]++;
          break;
      }
    }
    (*stats)["layout_transposes"] += transposes_;
    (*stats)["nhwc_fused_kernels"] += nhwc_groups_;
    (*stats)["nhwc_pool_kernels"] += nhwc_pools_;
    (*stats)["nhwc_op_kernels"] += nhwc_ops_;
    bool library = false;
    for (const auto& s : plan_.steps)
      library = library || s.kind == StepKind::kConv || s.kind == StepKind::kGemm;
    plan_.workspace_bytes = library ? static_cast<uint64_t>(o_.workspace_bytes) : 0;
    return std::move(plan_);
  }

 private:
  // The buffer holding value v in its own (NCHW / plain) layout.
  int Buffer(int v) {
    if (nchw_[v] >= 0) return nchw_[v];
    if (nhwc_[v] >= 0) return nchw_[v] = Transpose(v, nhwc_[v], kToNchw, fb::TensorLayout::NCHW);
    const auto& value = ir_.values[v];
    PlanBuffer b;
    b.name = value.name;
    b.dtype = value.info.dtype;
    b.dims = StaticDims(value.info);
    b.byte_size = Bytes(b.dtype, b.dims);
    b.layout = b.dims.size() == 4 ? fb::TensorLayout::NCHW : fb::TensorLayout::Plain;
    switch (value.kind) {
      case ValueKind::kInput:
        b.kind = fb::BufferKind::Input;
        b.io_index = Index(ir_.inputs, v);
        break;
      case ValueKind::kOutput:
        b.kind = fb::BufferKind::Output;
        b.io_index = Index(ir_.outputs, v);
        break;
      case ValueKind::kWeight:
        b.kind = fb::BufferKind::Weight;
        b.weight_slot = AddWeight(value, b.dims, value.layout, *value.bytes);
        break;
      default:
        b.kind = fb::BufferKind::Arena;
    }
    plan_.buffers.push_back(std::move(b));
    return nchw_[v] = static_cast<int>(plan_.buffers.size()) - 1;
  }

  // The buffer holding 4-D value v as NHWC (a transposed copy made once, when needed).
  int NhwcBuffer(int v) {
    if (nhwc_[v] >= 0) return nhwc_[v];
    if (LayoutFree(StaticDims(ir_.values[v].info))) return nhwc_[v] = Buffer(v);
    return nhwc_[v] = Transpose(v, Buffer(v), kToNhwc, fb::TensorLayout::NHWC);
  }

  // The buffer a step writes 4-D value v into as NHWC: the value's own buffer when the layouts
  // share their bytes (then it serves NCHW readers too), else a new NHWC arena buffer.
  int NhwcOutput(int v) {
    if (LayoutFree(StaticDims(ir_.values[v].info))) return nhwc_[v] = Buffer(v);
    return nhwc_[v] = NewLayoutBuffer(v, fb::TensorLayout::NHWC);
  }

  // A new arena buffer for 4-D value v in `layout` (dims stay logical NCHW).
  int NewLayoutBuffer(int v, fb::TensorLayout layout) {
    const auto& value = ir_.values[v];
    PlanBuffer b;
    b.name = value.name + (layout == fb::TensorLayout::NHWC ? ".nhwc" : ".nchw");
    b.dtype = value.info.dtype;
    b.dims = StaticDims(value.info);
    b.byte_size = Bytes(b.dtype, b.dims);
    b.layout = layout;
    plan_.buffers.push_back(std::move(b));
    return static_cast<int>(plan_.buffers.size()) - 1;
  }

  int Transpose(int v, int from, const std::vector<int64_t>& perm, fb::TensorLayout to,
                int into = -1) {
    const int dst = into >= 0 ? into : NewLayoutBuffer(v, to);
    codegen::OpDesc d;
    d.op_type = "Transpose";
    d.since_version = 13;
    onnx::AttributeProto a;
    a.set_name("perm");
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t p : perm) a.add_ints(p);
    d.attributes.push_back(a);
    std::vector<int64_t> in = plan_.buffers[from].dims, out(4);
    if (plan_.buffers[from].layout == fb::TensorLayout::NHWC) in = {in[0], in[2], in[3], in[1]};
    for (int i = 0; i < 4; ++i) out[i] = in[perm[i]];
    d.inputs.push_back({plan_.buffers[from].dtype, in});
    d.outputs.push_back({plan_.buffers[from].dtype, out});
    d.constants.push_back(std::nullopt);
    PlanStep s;
    s.name = ir_.values[v].name + (to == fb::TensorLayout::NHWC ? ".to_nhwc" : ".to_nchw");
    s.kind = StepKind::kLaunch;
    s.launch.op = std::move(d);
    s.launch.inputs = {from};
    s.launch.outputs = {dst};
    plan_.steps.push_back(std::move(s));
    transposes_++;
    return dst;
  }

  int AddWeight(const lowering::IrValue& value, const std::vector<int64_t>& dims,
                const std::string& layout, const bundle::ByteSource& bytes) {
    bundle::WeightSpec w;
    w.dtype = value.info.dtype;
    w.dims = dims;
    w.layout = layout;
    w.alignment = 256;
    w.bytes = bytes;
    plan_.weights.push_back(std::move(w));
    return static_cast<int>(plan_.weights.size()) - 1;
  }

  static int Index(const std::vector<int>& list, int v) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i] == v) return static_cast<int>(i);
    }
    return -1;
  }

  std::vector<std::string> Sources(const Unit& u) const {
    std::vector<std::string> names;
    for (int k : u.ops) names.push_back(ir_.ops[k].name);
    return names;
  }

  // A weight as a 1-D vector (bias) buffer.
  int VectorWeight(int v) {
    const auto& value = ir_.values[v];
    PlanBuffer b;
    b.name = value.name;
    b.kind = fb::BufferKind::Weight;
    b.dtype = value.info.dtype;
    b.dims = {Elements(StaticDims(value.info))};
    b.byte_size = Bytes(b.dtype, b.dims);
    b.weight_slot = AddWeight(value, b.dims, "plain", *value.bytes);
    plan_.buffers.push_back(std::move(b));
    return static_cast<int>(plan_.buffers.size()) - 1;
  }

  static std::vector<int64_t> Ints(const IrOp& op, const std::string& name,
                                   std::vector<int64_t> fallback) {
    const auto* a = op.Attr(name);
    if (!a || a->ints_size() == 0) return fallback;
    return {a->ints().begin(), a->ints().end()};
  }

  Status Conv(const Unit& u) {
    const IrOp& op = ir_.ops[u.ops[0]];
    PlanStep s;
    s.name = op.name;
    s.sources = Sources(u);
    s.kind = StepKind::kConv;
    PlanConv& c = s.conv;
    const int x = op.inputs[0], w = op.inputs[1];
    c.x_dims = StaticDims(ir_.values[x].info);
    c.w_dims = StaticDims(ir_.values[w].info);
    c.y_dims = StaticDims(ir_.values[u.out].info);
    const size_t spatial = c.x_dims.size() - 2;
    c.transposed = op.op_type == "ConvTranspose";
    c.group = op.IntAttr("group", 1);
    c.strides = Ints(op, "strides", std::vector<int64_t>(spatial, 1));
    c.dilations = Ints(op, "dilations", std::vector<int64_t>(spatial, 1));
    c.pads = Ints(op, "pads", std::vector<int64_t>(2 * spatial, 0));
    const std::string auto_pad = op.Attr("auto_pad") ? op.Attr("auto_pad")->s() : "NOTSET";
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      for (size_t i = 0; i < spatial; ++i) {
        const int64_t in = c.x_dims[2 + i], k = c.w_dims[2 + i];
        const int64_t total = c.transposed
                                  ? 0
                                  : std::max<int64_t>(0, (c.y_dims[2 + i] - 1) * c.strides[i] +
                                                             (k - 1) * c.dilations[i] + 1 - in);
        c.pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        c.pads[spatial + i] = total - c.pads[i];
      }
    } else if (auto_pad == "VALID") {
      c.pads.assign(2 * spatial, 0);
    }
    for (size_t i = 0; i < spatial; ++i) {
      if (c.pads[i] != c.pads[spatial + i])
        return NotImplemented("node " + op.name + ": asymmetric convolution pads");
    }
    c.activation = u.activation;
    c.clip_min = u.clip_min;
    c.clip_max = u.clip_max;
    c.alpha2 = u.z >= 0 ? 1.0f : 0.0f;
    c.compute_dtype = onnx::TensorProto::FLOAT;
    const bool nhwc = nhwc_convs_ && c.x_dims.size() == 4;
    c.layout = nhwc ? fb::TensorLayout::NHWC : fb::TensorLayout::NCHW;
    last_conv_generated_ = false;
    if (GroupedConvApplies(c)) {
      plan_.choices.push_back(
          ChooseGroupedConv(c, u.bias >= 0, s.name, ir_.values[u.out].info.dtype, o_));
      last_conv_generated_ = plan_.choices.back().choice == kChoiceGenerated;
      if (last_conv_generated_) return GeneratedConv(u, std::move(s), nhwc);
    }
    if (u.bias >= 0) c.bias = VectorWeight(u.bias);
    if (nhwc) {
      c.x = NhwcBuffer(x);
      if (u.z >= 0) c.z = NhwcBuffer(u.z);
      c.w = PackedFilter(w);
      const int y = c.y = NhwcOutput(u.out);
      plan_.steps.push_back(std::move(s));
      // A program output is NCHW: transposed straight into the output buffer (unless the
      // convolution wrote it, the layouts sharing their bytes).
      if (ir_.values[u.out].kind == ValueKind::kOutput && y != nchw_[u.out])
        Transpose(u.out, y, kToNchw, fb::TensorLayout::NCHW, nchw_[u.out]);
      return Status::Ok();
    }
    c.x = Buffer(x);
    if (u.z >= 0) c.z = Buffer(u.z);
    c.w = Buffer(w);
    c.y = Buffer(u.out);
    plan_.steps.push_back(std::move(s));
    return Status::Ok();
  }

  // The convolution of step `s` as a generated GroupedConv kernel (lowering_grouped_conv.h):
  // the same buffers as the cuDNN call would read, the filter packed CRSK.
  Status GeneratedConv(const Unit& u, PlanStep s, bool nhwc) {
    const IrOp& op = ir_.ops[u.ops[0]];
    const PlanConv c = s.conv;
    const int x = op.inputs[0], w = op.inputs[1];
    auto dtype = [&](int v) { return v >= 0 ? ir_.values[v].info.dtype : 0; };
    s.kind = StepKind::kLaunch;
    s.conv = PlanConv{};
    s.launch.op = GroupedConvDesc(c, dtype(x), dtype(w), dtype(u.bias), dtype(u.z), dtype(u.out),
                                  nhwc ? codegen::Layout::kNhwc : codegen::Layout::kNchw);
    s.launch.inputs = {nhwc ? NhwcBuffer(x) : Buffer(x), PackedFilter(w, "CRSK"),
                       u.bias >= 0 ? VectorWeight(u.bias) : -1,
                       u.z < 0 ? -1
                       : nhwc  ? NhwcBuffer(u.z)
                               : Buffer(u.z)};
    const int y = nhwc ? NhwcOutput(u.out) : Buffer(u.out);
    s.launch.outputs = {y};
    plan_.steps.push_back(std::move(s));
    if (nhwc && ir_.values[u.out].kind == ValueKind::kOutput && y != nchw_[u.out])
      Transpose(u.out, y, kToNchw, fb::TensorLayout::NCHW, nchw_[u.out]);
    return Status::Ok();
  }

  // KCRS filter repacked KRSC for NHWC cuDNN convolutions, or CRSK for generated ones.
  int PackedFilter(int w, const std::string& order = "KRSC") {
    const auto& value = ir_.values[w];
    PlanBuffer b;
    const bool krsc = order == "KRSC";
    b.name = value.name + (krsc ? ".krsc" : ".crsk");
    b.kind = fb::BufferKind::Weight;
    b.dtype = value.info.dtype;
    b.dims = StaticDims(value.info);
    b.byte_size = Bytes(b.dtype, b.dims);
    b.layout = krsc ? fb::TensorLayout::NHWC : fb::TensorLayout::Plain;
    auto all = value.bytes->ReadAll();
    const int element = static_cast<int>(ElementBits(b.dtype) / 8);
    std::string packed = !all.ok() ? std::string()
                         : krsc    ? PackFilterKcrsToKrsc(**all, b.dims, element)
                                   : PackFilterKcrsToCrsk(**all, b.dims, element);
    b.weight_slot = AddWeight(
        value, b.dims, order,
        bundle::ByteSource::Memory(std::make_shared<const std::string>(std::move(packed))));
    plan_.buffers.push_back(std::move(b));
    return static_cast<int>(plan_.buffers.size()) - 1;
  }

  // A view of `buffer` starting `elements` elements in, to its end (an operand read in place
  // inside a wider tensor: a head's slice of a fused projection).
  int AliasAt(int buffer, int64_t elements) {
    if (elements == 0) return buffer;
    const PlanBuffer& src = plan_.buffers[buffer];
    const uint64_t element = Bytes(src.dtype, {1});
    PlanBuffer b;
    b.name = src.name + "@" + std::to_string(elements);
    b.kind = fb::BufferKind::Alias;
    b.dtype = src.dtype;
    const bool alias = src.kind == fb::BufferKind::Alias;
    b.alias_of = alias ? src.alias_of : buffer;
    b.offset = (alias ? src.offset : 0) + static_cast<uint64_t>(elements) * element;
    b.byte_size = src.byte_size - static_cast<uint64_t>(elements) * element;
    b.dims = {static_cast<int64_t>(b.byte_size / element)};
    plan_.buffers.push_back(std::move(b));
    return static_cast<int>(plan_.buffers.size()) - 1;
  }

  // lowering_attention_gemm.cpp's StridedMatMul: operands read and written in place, each as
  // (offset, batch stride, leading dimension) in elements.
  void StridedGemm(const IrOp& op, int out, PlanStep* s) {
    PlanGemm& g = s->gemm;
    const auto mnk = Ints(op, "mnk", {1, 1, 1});
    const auto a = Ints(op, "a", {0, 0, 0}), b = Ints(op, "b", {0, 0, 0}),
               y = Ints(op, "y", {0, 0, 0});
    g.m = mnk[0], g.n = mnk[1], g.k = mnk[2];
    g.batch = op.IntAttr("batch", 1);
    g.trans_b = op.IntAttr("trans_b", 0) != 0;
    g.alpha = op.FloatAttr("alpha", 1.0f);
    g.compute_dtype = onnx::TensorProto::FLOAT;
    g.stride_a = a[1], g.stride_b = b[1], g.stride_y = y[1];
    // A leading dimension equal to the packed one is left 0: the step stays a plain gemm.
    g.lda = a[2] == g.k ? 0 : a[2];
    g.ldb = b[2] == (g.trans_b ? g.k : g.n) ? 0 : b[2];
    g.ldy = y[2] == g.n ? 0 : y[2];
    g.a = AliasAt(Buffer(op.inputs[0]), a[0]);
    g.b = AliasAt(Buffer(op.inputs[1]), b[0]);
    g.y = AliasAt(Buffer(out), y[0]);
  }

  Status Gemm(const Unit& u) {
    const IrOp& op = ir_.ops[u.ops[0]];
    PlanStep s;
    s.name = op.name;
    s.sources = Sources(u);
    s.kind = StepKind::kGemm;
    if (op.op_type == "StridedMatMul") {
      StridedGemm(op, u.out, &s);
      plan_.steps.push_back(std::move(s));
      return Status::Ok();
    }
    PlanGemm& g = s.gemm;
    const auto a = StaticDims(ir_.values[op.inputs[0]].info);
    const auto b = StaticDims(ir_.values[op.inputs[1]].info);
    const auto y = StaticDims(ir_.values[u.out].info);
    if (a.size() < 2 || b.size() < 2)
      return NotImplemented("node " + op.name + ": " + op.op_type + " with a 1-D operand");
    g.compute_dtype = onnx::TensorProto::FLOAT;
    if (op.op_type == "Gemm") {
      g.trans_a = op.IntAttr("transA", 0) != 0;
      g.trans_b = op.IntAttr("transB", 0) != 0;
      g.alpha = op.FloatAttr("alpha", 1.0f);
      g.m = g.trans_a ? a[1] : a[0];
      g.k = g.trans_a ? a[0] : a[1];
      g.n = g.trans_b ? b[0] : b[1];
      if (op.inputs.size() > 2 && op.inputs[2] >= 0 && op.inputs[2] != u.bias) {
        const auto cd = StaticDims(ir_.values[op.inputs[2]].info);
        if (cd != std::vector<int64_t>{g.m, g.n})
          return NotImplemented("node " + op.name + ": Gemm's C must be [N] or [M, N]");
        g.c = Buffer(op.inputs[2]);
        g.beta = op.FloatAttr("beta", 1.0f);
      }
    } else {
      g.m = a[a.size() - 2];
      g.k = a.back();
      g.n = b.back();
      // [.., rows, k] @ [k, n]: one GEMM over all rows (A is contiguous), not a batch.
      if (b.size() == 2) g.m = Elements(a) / g.k;
      const int64_t batch_a = Elements(a) / (g.m * g.k), batch_b = Elements(b) / (g.k * g.n);
      g.batch = Elements(y) / (g.m * g.n);
      if ((batch_a != g.batch && batch_a != 1) || (batch_b != g.batch && batch_b != 1))
        return NotImplemented("node " + op.name + ": MatMul batch broadcasting beyond 1 vs N");
      g.stride_a = batch_a == 1 ? 0 : g.m * g.k;
      g.stride_b = batch_b == 1 ? 0 : g.k * g.n;
      g.stride_y = g.m * g.n;
      // Attention's Q K^T carries its softmax scale here (lowering_attention_gemm.cpp): scaled
      // in fp32 inside the GEMM, so fp16 scores are stored after scaling.
      g.alpha = op.FloatAttr("alpha", 1.0f);
    }
    if (u.z >= 0) {  // residual Add: C with beta 1
      g.c = Buffer(u.z);
      g.beta = 1.0f;
    }
    g.epilogue = u.activation;
    g.a = Buffer(op.inputs[0]);
    g.b = Buffer(op.inputs[1]);
    if (u.bias >= 0) g.bias = VectorWeight(u.bias);
    g.y = Buffer(u.out);
    plan_.steps.push_back(std::move(s));
    return Status::Ok();
  }

  // An elementwise group reads each input in a layout it already exists in (the kernel
  // addresses every input through its own strides) and writes each result in the layouts its
  // readers need: a layout change next to a group is fused into it rather than a transpose.
  Status Fused(const Unit& u) {
    codegen::FusedGroup group;
    PlanStep s;
    s.name = ir_.ops[u.ops[0]].name;
    s.sources = Sources(u);
    const std::set<int> members(u.ops.begin(), u.ops.end());
    std::set<int> inner;
    for (int k : u.ops) inner.insert(ir_.ops[k].outputs[0]);
    std::vector<int> outside;  // the group's inputs, in first-use order
    for (int k : u.ops) {
      for (int v : ir_.ops[k].inputs) {
        if (v >= 0 && !inner.count(v) &&
            std::find(outside.begin(), outside.end(), v) == outside.end())
          outside.push_back(v);
      }
    }
    const LayoutPolicy::State state{nchw_, nhwc_};
    // Outputs: values read outside the group or by the program, in the layouts wanted.
    struct Write {
      int op, value;
      LayoutPolicy::Writes layouts;
    };
    std::vector<Write> writes;
    bool any_nhwc = false, any_nchw = false;
    for (size_t j = 0; j < u.ops.size(); ++j) {
      const int v = ir_.ops[u.ops[j]].outputs[0];
      bool read_outside = ir_.values[v].kind == ValueKind::kOutput;
      for (size_t k = 0; k < ir_.ops.size() && !read_outside; ++k) {
        if (members.count(static_cast<int>(k)) || ir_.ops[k].removed) continue;
        for (int in : ir_.ops[k].inputs) read_outside = read_outside || in == v;
      }
      if (!read_outside) continue;
      writes.push_back({static_cast<int>(j), v, policy_.GroupOutput(v, members, outside, state)});
      any_nhwc = any_nhwc || writes.back().layouts.nhwc;
      any_nchw = any_nchw || writes.back().layouts.nchw;
    }
    // Threads walk the first output's storage order: NHWC when some result is wanted NHWC and
    // the inputs lean that way (or nothing is wanted NCHW).
    const bool walk_nhwc = any_nhwc && (!any_nchw || policy_.LeansNhwc(outside, state));
    for (int pass = 0; pass < 2; ++pass) {
      for (const Write& w : writes) {
        const bool nhwc_first = pass == 0 ? walk_nhwc : !walk_nhwc;
        const bool wanted = nhwc_first ? w.layouts.nhwc : w.layouts.nchw;
        if (!wanted) continue;
        group.outputs.push_back(w.op);
        group.output_layouts.push_back(nhwc_first ? codegen::Layout::kNhwc
                                                  : codegen::Layout::kNchw);
        s.launch.outputs.push_back(nhwc_first ? NhwcOutput(w.value) : Buffer(w.value));
      }
    }
    // Inputs: an NHWC copy when that is all there is, or when it matches the walk.
    std::map<int, int> input_of;  // value -> group input index
    for (int v : outside) {
      input_of[v] = static_cast<int>(group.inputs.size());
      group.inputs.push_back({ir_.values[v].info.dtype, StaticDims(ir_.values[v].info)});
      if (auto it = split_views_.find(v); it != split_views_.end()) {  // read in place
        group.input_layouts.push_back(codegen::Layout::kNchw);
        group.input_views.resize(group.inputs.size());
        group.input_views.back() = it->second.second;
        s.launch.inputs.push_back(Buffer(it->second.first));
        continue;
      }
      const bool nhwc = policy_.enabled() && nhwc_[v] >= 0 && (nchw_[v] < 0 || walk_nhwc);
      group.input_layouts.push_back(nhwc ? codegen::Layout::kNhwc : codegen::Layout::kNchw);
      s.launch.inputs.push_back(nhwc ? nhwc_[v] : Buffer(v));
      any_nhwc = any_nhwc || nhwc;
    }
    std::map<int, int> produced;  // value -> -1 - j
    for (size_t j = 0; j < u.ops.size(); ++j) {
      const IrOp& op = ir_.ops[u.ops[j]];
      auto desc = OpDescFromIr(ir_, op);
      if (!desc.ok()) return desc.status();
      codegen::FusedOp f{std::move(desc).value(), {}};
      for (int v : op.inputs) {
        if (v < 0) {
          f.args.push_back(0);  // omitted optional input: never read (codegen checks dtype 0)
        } else if (auto it = produced.find(v); it != produced.end()) {
          f.args.push_back(it->second);
        } else {
          f.args.push_back(input_of.at(v));
        }
      }
      produced[op.outputs[0]] = -1 - static_cast<int>(j);
      group.ops.push_back(std::move(f));
    }
    s.launch.fused = std::move(group);
    plan_.steps.push_back(std::move(s));
    if (any_nhwc) nhwc_groups_++;
    return Status::Ok();
  }

  struct SplitShape {
    int in = -1;
    std::vector<int64_t> dims;  // of the input
    int64_t axis = 0;           // normalised
  };
  // A Split's input, dims and axis; nullopt for another op, or an axis outside the input or on
  // a value stored channels-last.
  std::optional<SplitShape> SplitOf(const IrOp& op) const {
    if (op.op_type != "Split" || op.inputs.empty() || op.inputs[0] < 0) return std::nullopt;
    SplitShape s;
    s.in = op.inputs[0];
    s.dims = StaticDims(ir_.values[s.in].info);
    const auto rank = static_cast<int64_t>(s.dims.size());
    s.axis = op.IntAttr("axis", 0);
    if (s.axis < 0) s.axis += rank;
    if (s.axis < 0 || s.axis >= rank || nhwc_[s.in] >= 0) return std::nullopt;
    return s;
  }

  // A Split whose outputs are contiguous ranges of its input (every axis before the split axis
  // has size 1: a decode step's merged projection [1, 1, q + k + v]) is views at offsets into
  // it, which any reader can take. Outputs of the program stay copies.
  bool SplitAsViews(int op_index) {
    const IrOp& op = ir_.ops[op_index];
    const auto split = SplitOf(op);
    if (!split) return false;
    const int in = split->in;
    const auto& dims = split->dims;
    const int64_t axis = split->axis, rank = static_cast<int64_t>(dims.size());
    const int32_t dtype = ir_.values[in].info.dtype;
    if (ElementBits(dtype) % 8 != 0) return false;
    for (int64_t a = 0; a < axis; ++a)
      if (dims[a] != 1) return false;
    for (int o : op.outputs)
      if (o < 0 || ir_.values[o].kind == ValueKind::kOutput) return false;
    int64_t inner = 1;  // elements of one step along the axis
    for (int64_t a = axis + 1; a < rank; ++a) inner *= dims[a];
    const int src = Buffer(in);
    const bool alias = plan_.buffers[src].kind == fb::BufferKind::Alias;
    uint64_t offset = alias ? plan_.buffers[src].offset : 0;
    for (int o : op.outputs) {
      PlanBuffer b;
      b.name = ir_.values[o].name;
      b.kind = fb::BufferKind::Alias;
      b.dtype = ir_.values[o].info.dtype;
      b.dims = StaticDims(ir_.values[o].info);
      b.byte_size = Bytes(b.dtype, b.dims);
      b.alias_of = alias ? plan_.buffers[src].alias_of : src;
      b.offset = offset;
      offset += static_cast<uint64_t>(b.dims[axis] * inner) * (ElementBits(dtype) / 8);
      plan_.buffers.push_back(std::move(b));
      nchw_[o] = static_cast<int>(plan_.buffers.size()) - 1;
    }
    return true;
  }

  // A Split whose every output only elementwise groups read (SwiGLU's gate and up halves of a
  // merged projection) runs no kernel: each output becomes a strided view of the Split's input,
  // which the groups read in place (codegen::InputView). False when it must run.
  bool SplitReadInPlace(int op_index) {
    const IrOp& op = ir_.ops[op_index];
    const auto split = SplitOf(op);
    if (!split) return false;
    const int in = split->in;
    const auto& dims = split->dims;
    const int64_t axis = split->axis;
    for (int o : op.outputs) {
      if (o < 0 || ir_.values[o].kind == ValueKind::kOutput) return false;
      for (size_t k = 0; k < ir_.ops.size(); ++k) {
        if (ir_.ops[k].removed) continue;
        const auto& ins = ir_.ops[k].inputs;
        if (std::find(ins.begin(), ins.end(), o) != ins.end() &&
            !in_fused_group_.count(static_cast<int>(k)))
          return false;
      }
    }
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t a = dims.size(); a-- > 1;) strides[a - 1] = strides[a] * dims[a];
    int64_t start = 0;
    for (int o : op.outputs) {
      split_views_[o] = {in, codegen::InputView{start * strides[axis], strides}};
      start += StaticDims(ir_.values[o].info)[axis];
    }
    return true;
  }

  void View(const Unit& u) {
    const IrOp& op = ir_.ops[u.ops[0]];
    const int in = op.inputs[0], out = op.outputs[0];
    const int src = Buffer(in);
    if (ir_.values[out].kind == ValueKind::kOutput) {
      PlanStep s;
      s.name = op.name;
      s.sources = Sources(u);
      s.kind = StepKind::kCopy;
      s.copy = {src, Buffer(out), plan_.buffers[src].byte_size};
      plan_.steps.push_back(std::move(s));
      return;
    }
    PlanBuffer b;
    b.name = ir_.values[out].name;
    b.kind = fb::BufferKind::Alias;
    b.dtype = ir_.values[out].info.dtype;
    b.dims = StaticDims(ir_.values[out].info);
    b.byte_size = Bytes(b.dtype, b.dims);
    b.alias_of =
        plan_.buffers[src].kind == fb::BufferKind::Alias ? plan_.buffers[src].alias_of : src;
    b.offset = plan_.buffers[src].kind == fb::BufferKind::Alias ? plan_.buffers[src].offset : 0;
    plan_.buffers.push_back(std::move(b));
    nchw_[out] = static_cast<int>(plan_.buffers.size()) - 1;
  }

  Status Op(const Unit& u) {
    const IrOp& op = ir_.ops[u.ops[0]];
    auto desc = OpDescFromIr(ir_, op);
    if (!desc.ok()) return desc.status();
    policy_.ChooseOpLayouts(u.ops[0], {nchw_, nhwc_}, &*desc);
    if (std::string why = codegen::Unsupported(*desc); !why.empty())
      return NotImplemented("node " + op.name + ": " + why);
    const bool in_nhwc = desc->input_layout == codegen::Layout::kNhwc;
    const bool out_nhwc = desc->output_layout == codegen::Layout::kNhwc;
    if (in_nhwc && (op.op_type == "GlobalAveragePool" || op.op_type == "GlobalMaxPool")) {
      const auto& d = desc->inputs[0].dims;
      int64_t positions = 1;
      for (size_t a = 2; a < d.size(); ++a) positions *= d[a];
      const int64_t splits = codegen::ChannelsLastPoolSplits(d[0], d[1], positions);
      if (splits > 1) return SplitGlobalPool(op, u, std::move(desc).value(), positions, splits);
    }
    PlanStep s;
    s.name = op.name;
    s.sources = Sources(u);
    s.launch.op = std::move(desc).value();
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const int v = op.inputs[i];
      const bool nhwc = in_nhwc && codegen::LayoutApplies(op.op_type, i);
      s.launch.inputs.push_back(v < 0 ? -1 : nhwc ? NhwcBuffer(v) : Buffer(v));
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const int v = op.outputs[i];
      s.launch.outputs.push_back(v < 0 ? -1 : i == 0 && out_nhwc ? NhwcOutput(v) : Buffer(v));
    }
    plan_.steps.push_back(std::move(s));
    if (in_nhwc || out_nhwc) {
      const bool pool = op.op_type == "MaxPool" || op.op_type == "AveragePool" ||
                        op.op_type == "GlobalAveragePool" || op.op_type == "GlobalMaxPool";
      (pool ? nhwc_pools_ : nhwc_ops_)++;
    }
    return Status::Ok();
  }

  // A channels-last global pool over many positions: partials of runs of positions into a float
  // arena buffer [N, splits, C], then their merge into the output (reduction_kernels.cpp).
  Status SplitGlobalPool(const IrOp& op, const Unit& u, codegen::OpDesc desc, int64_t positions,
                         int64_t splits) {
    const int64_t images = desc.inputs[0].dims[0], channels = desc.inputs[0].dims[1];
    const std::vector<int64_t> partial_dims{images, splits, channels};
    PlanBuffer b;
    b.name = ir_.values[op.outputs[0]].name + ".runs";
    b.dtype = onnx::TensorProto::FLOAT;
    b.dims = partial_dims;
    b.byte_size = Bytes(b.dtype, b.dims);
    plan_.buffers.push_back(std::move(b));
    const int partial = static_cast<int>(plan_.buffers.size()) - 1;
    auto int_attr = [](const std::string& name, int64_t v) {
      onnx::AttributeProto a;
      a.set_name(name);
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(v);
      return a;
    };
    const int64_t max = op.op_type == "GlobalMaxPool";
    codegen::OpDesc p = desc;
    p.op_type = codegen::kPoolPartialOp;
    p.attributes = {int_attr("splits", splits), int_attr("max", max)};
    p.outputs = {{onnx::TensorProto::FLOAT, partial_dims}};
    p.output_layout = codegen::Layout::kNchw;
    codegen::OpDesc m;
    m.op_type = codegen::kPoolMergeOp;
    m.attributes = {int_attr("count", positions), int_attr("max", max)};
    m.inputs = {{onnx::TensorProto::FLOAT, partial_dims}};
    m.outputs = desc.outputs;
    m.constants.assign(1, std::nullopt);
    for (const auto* d : {&p, &m})
      if (std::string why = codegen::Unsupported(*d); !why.empty())
        return NotImplemented("node " + op.name + ": " + why);
    PlanStep first;
    first.name = op.name + "/runs";
    first.sources = Sources(u);
    first.launch.op = std::move(p);
    first.launch.inputs = {NhwcBuffer(op.inputs[0])};
    first.launch.outputs = {partial};
    plan_.steps.push_back(std::move(first));
    PlanStep merge;
    merge.name = op.name;
    merge.sources = Sources(u);
    merge.launch.op = std::move(m);
    merge.launch.inputs = {partial};
    // [N, C, 1...]: the same bytes in either layout, so NHWC readers take it as it is.
    const int out = op.outputs[0];
    merge.launch.outputs = {desc.output_layout == codegen::Layout::kNhwc ? NhwcOutput(out)
                                                                         : Buffer(out)};
    plan_.steps.push_back(std::move(merge));
    ++nhwc_pools_;
    return Status::Ok();
  }

  const SubgraphIr& ir_;
  const CudaOptions& o_;
  std::set<int> in_fused_group_;  // IR ops lowered inside an elementwise group
  // Split outputs read in place: value -> (the Split's input, the view of it).
  std::map<int, std::pair<int, codegen::InputView>> split_views_;
  Plan plan_;
  LayoutPolicy policy_;
  std::vector<int> nchw_, nhwc_;  // per value: its buffer in that layout, -1 when none yet
  bool nhwc_convs_ = false;
  bool last_conv_generated_ = false;  // the last Conv unit became a GroupedConv kernel
  int transposes_ = 0;
  int nhwc_groups_ = 0;
  int nhwc_pools_ = 0;
  int nhwc_ops_ = 0;
};

}  // namespace

Result<Plan> LowerToPlan(const SubgraphIr& ir, const CudaOptions& options,
                         std::map<std::string, int>* stats) {
  auto units = SelectUnits(ir);
  if (!units.ok()) return units.status();
  return Lowerer(ir, options, *units).Run(*units, stats);
}

}  // namespace ortc::backends::cuda
