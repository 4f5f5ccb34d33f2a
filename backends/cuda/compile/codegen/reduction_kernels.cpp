// Reduction kernels: Reduce{Mean,Sum,Max,Min,Prod,L2,SumSquare} over any axes and the global
// pools, one block per output element with a shared-memory tree reduction; global pools over
// channels-last input, one block per run of adjacent channels, or, over many positions, split
// into runs of positions (ChannelsLastPoolPartial) and merged (ChannelsLastPoolMerge).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace {

// Which axes are reduced; `identity` when noop_with_empty_axes applies (output = input).
struct Plan {
  std::vector<bool> reduced;
  bool identity = false;
};

Result<Plan> PlanOf(const OpDesc& op) {
  const auto& d = op.inputs[0].dims;
  const auto rank = static_cast<int64_t>(d.size());
  Plan p;
  const std::string& t = op.op_type;
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") {
    if (rank < 3) return NotImplemented(t + " needs [N, C, spatial...] input");
    p.reduced.assign(d.size(), false);
    for (size_t a = 2; a < d.size(); ++a) p.reduced[a] = true;
    return p;
  }
  // Axes: an input since opset 18 (13 for ReduceSum), an attribute before.
  const int input_since = t == "ReduceSum" ? 13 : 18;
  std::vector<int64_t> axes;
  if (op.since_version >= input_since) {
    if (op.inputs.size() > 1 && op.inputs[1].dtype != 0) {
      auto v = ConstantValues(op, 1);
      if (!v) return NotImplemented(t + " with axes computed at run time is not supported");
      for (double a : *v) {
        // Checked in double first: INT64_MAX arrives as 2^63, whose conversion is undefined.
        if (!(std::fabs(a) <= 64)) return InvalidArgument(t + ": axis out of range");
        axes.push_back(static_cast<int64_t>(a));
      }
    }
  } else {
    axes = IntsAttr(op, "axes");
  }
  if (axes.empty() && IntAttr(op, "noop_with_empty_axes", 0) != 0) {
    p.identity = true;
    return p;
  }
  p.reduced.assign(d.size(), axes.empty());
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return InvalidArgument(t + ": axis out of range");
    p.reduced[static_cast<size_t>(a)] = true;
  }
  return p;
}

struct Reducer {
  std::string init, combine, accumulate;  // accumulate: statement using `acc` and `v`
  std::string finish;                     // expression of `acc` (and the count)
};

bool IsIntegerReduction(const OpDesc& op) {
  const int32_t t = op.inputs[0].dtype;
  return t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32;
}

// Integer reductions accumulate exactly in int64 (a mask's row sum: GenAI's seqlens_k), with
// the CPU runtime's wrapping on overflow.
Reducer IntegerReducerOf(const std::string& t) {
  if (t == "ReduceMax")
    return {"(ortc_i64)(-9223372036854775807LL - 1)", "ortc_maxi", "acc = ortc_maxi(acc, v);",
            "acc"};
  if (t == "ReduceMin")
    return {"(ortc_i64)9223372036854775807LL", "ortc_mini", "acc = ortc_mini(acc, v);", "acc"};
  if (t == "ReduceProd") return {"(ortc_i64)1", "ortc_muli", "acc = ortc_muli(acc, v);", "acc"};
  return {"(ortc_i64)0", "ortc_addi", "acc = ortc_addi(acc, v);", "acc"};  // ReduceSum
}

Reducer ReducerOf(const std::string& t, int64_t count) {
  const std::string n = FloatLiteral(static_cast<float>(count));
  if (t == "ReduceMax" || t == "GlobalMaxPool")
    return {FloatLiteral(-INFINITY), "ortc_max", "acc = ortc_max(acc, v);", "acc"};
  if (t == "ReduceMin")
    return {FloatLiteral(INFINITY), "ortc_min", "acc = ortc_min(acc, v);", "acc"};
  if (t == "ReduceProd") return {"1.f", "ortc_mul", "acc *= v;", "acc"};
  if (t == "ReduceL2") return {"0.f", "ortc_add", "acc += v * v;", "sqrtf(acc)"};
  if (t == "ReduceSumSquare") return {"0.f", "ortc_add", "acc += v * v;", "acc"};
  if (t == "ReduceMean" || t == "GlobalAveragePool")
    return {"0.f", "ortc_add", "acc += v;", "acc / " + n};
  return {"0.f", "ortc_add", "acc += v;", "acc"};  // ReduceSum
}

Result<KernelSource> EmitIdentity(const std::string& name, const OpDesc& op) {
  const int64_t n = op.inputs[0].elements();
  const std::string t = StorageCType(op.inputs[0].dtype);
  std::ostringstream s;
  s << "extern \"C\" __global__ void " << name << "("
    << KernelParams(static_cast<int>(op.inputs.size()), 1) << ") {\n"
    << "  const " << t << "* __restrict__ in0 = (const " << t << "*)p0;\n"
    << "  " << t << "* __restrict__ out0 = (" << t << "*)p" << op.inputs.size() << ";\n"
    << "  for (ortc_i64 i = (ortc_i64)blockIdx.x * blockDim.x + threadIdx.x; i < " << IntLiteral(n)
    << "; i += (ortc_i64)gridDim.x * blockDim.x) out0[i] = in0[i];\n}\n";
  KernelSource k;
  k.name = name;
  k.source = s.str();
  k.num_inputs = static_cast<int>(op.inputs.size());
  k.num_outputs = 1;
  k.grid = {GridFor(n), 1, 1};
  k.block = {kBlockSize, 1, 1};
  return k;
}

// Offset expression of a linear index over `dims` (with input strides `strides`).
std::string OffsetCode(const std::string& index, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& strides, const std::string& prefix,
                       const std::string& in, std::string* offset) {
  std::ostringstream s;
  s << in << "ortc_i64 " << prefix << "r = " << index << ";\n";
  std::string o;
  for (size_t k = dims.size(); k-- > 0;) {
    s << in << "const ortc_i64 " << prefix << k << " = " << prefix << "r % " << IntLiteral(dims[k])
      << ";\n";
    if (k > 0) s << in << prefix << "r /= " << IntLiteral(dims[k]) << ";\n";
    o += (o.empty() ? "" : " + ") + prefix + std::to_string(k) + " * " + IntLiteral(strides[k]);
  }
  *offset = o.empty() ? "0" : o;
  return s.str();
}

}  // namespace

int64_t ChannelsLastPoolSplits(int64_t images, int64_t channels, int64_t positions) {
  if (positions < kPoolSplitMinPositions) return 1;
  const int64_t tiles = (channels + 31) / 32;
  int64_t splits = (positions + kPoolSplitRun - 1) / kPoolSplitRun;
  // Enough blocks for every SM of a large GPU several times over, no more.
  splits = std::min(
      splits, std::max<int64_t>(1, kPoolSplitMaxBlocks / std::max<int64_t>(1, images * tiles)));
  return std::max<int64_t>(splits, 1);
}

namespace {

// GlobalAveragePool / GlobalMaxPool over a channels-last input [N, spatial..., C], its positions
// cut into `splits` runs (1: the whole pool). One block per image, run and `lanes` adjacent
// channels: thread (row, lane) reads channel lane at positions row, row + rows, ... of the run,
// so adjacent threads read adjacent channels (coalesced) where a block per output would read
// elements C apart; a shared-memory tree then combines the rows. With one run the block writes
// the pool's output ([N, C, 1...]: the same bytes in either layout); with several
// (ChannelsLastPoolPartial) each run's float partial goes to [N, splits, C]. Why runs: one block
// per 32 channels alone left PP-OCRv4 det's pools over 160x160 positions (24 and 96 channels) to
// one to three blocks, each reading megabytes with a few loads in flight.
Result<KernelSource> EmitChannelsLastPool(const std::string& name, const OpDesc& op,
                                          const Reducer& r, int64_t splits) {
  const auto& d = op.inputs[0].dims;
  const int64_t images = d[0], channels = d[1];
  int64_t count = 1;
  for (size_t a = 2; a < d.size(); ++a) count *= d[a];
  const int64_t run = (count + splits - 1) / splits;
  uint32_t lanes = 1, rows = 1;
  while (lanes < 32 && lanes < channels) lanes *= 2;
  while (lanes * rows < kBlockSize && rows < run) rows *= 2;
  const int64_t tiles = (channels + lanes - 1) / lanes, blocks = images * splits * tiles;
  const int32_t dt = op.inputs[0].dtype;
  const bool partial = splits > 1;
  const std::string st = StorageCType(dt), ot = partial ? "float" : st, c = IntLiteral(channels);

  std::ostringstream s;
  s << "extern \"C\" __global__ void " << name << "("
    << KernelParams(static_cast<int>(op.inputs.size()), 1) << ") {\n"
    << "  const " << st << "* __restrict__ in0 = (const " << st << "*)p0;\n"
    << "  " << ot << "* __restrict__ out0 = (" << ot << "*)p" << op.inputs.size() << ";\n"
    << "  __shared__ float red[" << lanes * rows << "];\n"
    << "  const unsigned lane = threadIdx.x % " << lanes << "u, row = threadIdx.x / " << lanes
    << "u;\n"
    << "  for (ortc_i64 b = blockIdx.x; b < " << IntLiteral(blocks) << "; b += gridDim.x) {\n"
    << "    const ortc_i64 img = b / " << IntLiteral(splits * tiles) << ";\n"
    << "    const ortc_i64 split = (b / " << IntLiteral(tiles) << ") % " << IntLiteral(splits)
    << ";\n"
    << "    const ortc_i64 ch = (b % " << IntLiteral(tiles) << ") * " << lanes << " + lane;\n"
    << "    const ortc_i64 end = ortc_mini((split + 1) * " << IntLiteral(run) << ", "
    << IntLiteral(count) << ");\n"
    << "    float acc = " << r.init << ";\n"
    << "    if (ch < " << c << ") {\n"
    << "      for (ortc_i64 q = split * " << IntLiteral(run) << " + row; q < end; q += " << rows
    << ") {\n"
    << "        const float v = "
    << LoadExpr(dt, "in0[(img * " + IntLiteral(count) + " + q) * " + c + " + ch]") << ";\n"
    << "        " << r.accumulate << "\n"
    << "      }\n"
    << "    }\n"
    << "    red[threadIdx.x] = acc;\n"
    << "    __syncthreads();\n"
    << "    for (unsigned s = " << rows / 2 << "u; s > 0; s >>= 1) {\n"
    << "      if (row < s) red[threadIdx.x] = " << r.combine
    << "(red[threadIdx.x], red[threadIdx.x + s * " << lanes << "u]);\n"
    << "      __syncthreads();\n"
    << "    }\n"
    << "    if (row == 0 && ch < " << c << ") {\n"
    << "      acc = red[lane];\n";
  if (partial)
    s << "      out0[(img * " << IntLiteral(splits) << " + split) * " << c << " + ch] = acc;\n";
  else
    s << "      out0[img * " << c << " + ch] = " << StoreExpr(dt, r.finish) << ";\n";
  s << "    }\n"
    // The next run overwrites red: every thread must have passed the read above.
    << "    __syncthreads();\n"
    << "  }\n}\n";

  KernelSource k;
  k.name = name;
  k.source = s.str();
  k.num_inputs = static_cast<int>(op.inputs.size());
  k.num_outputs = 1;
  k.grid = {static_cast<uint32_t>(std::clamp<int64_t>(blocks, 1, 65535)), 1, 1};
  k.block = {lanes * rows, 1, 1};
  k.uses_block_sync = true;
  return k;
}

int64_t Positions(const TensorDesc& t) {
  int64_t count = 1;
  for (size_t a = 2; a < t.dims.size(); ++a) count *= t.dims[a];
  return count;
}

// The split pool's reducer: `max` for GlobalMaxPool, else the mean over `count` positions.
Reducer SplitPoolReducer(const OpDesc& op, int64_t count) {
  return ReducerOf(IntAttr(op, "max", 0) ? "GlobalMaxPool" : "GlobalAveragePool", count);
}

// ChannelsLastPoolMerge: the runs' partials [N, splits, C] (float) combined per image and
// channel, the mean's division applied once, stored as the pool's output [N, C, 1...].
Result<KernelSource> EmitChannelsLastPoolMerge(const std::string& name, const OpDesc& op) {
  const auto& d = op.inputs[0].dims;  // [N, splits, C]
  const int64_t splits = d[1], channels = d[2], n = d[0] * channels;
  const Reducer r = SplitPoolReducer(op, IntAttr(op, "count", 1));
  const int32_t dt = op.outputs[0].dtype;
  const std::string st = StorageCType(dt), c = IntLiteral(channels);
  std::ostringstream s;
  s << "extern \"C\" __global__ void " << name << "(" << KernelParams(1, 1) << ") {\n"
    << "  const float* __restrict__ in0 = (const float*)p0;\n"
    << "  " << st << "* __restrict__ out0 = (" << st << "*)p1;\n"
    << "  for (ortc_i64 i = (ortc_i64)blockIdx.x * blockDim.x + threadIdx.x; i < " << IntLiteral(n)
    << "; i += (ortc_i64)gridDim.x * blockDim.x) {\n"
    << "    const ortc_i64 img = i / " << c << ", ch = i % " << c << ";\n"
    << "    float acc = " << r.init << ";\n"
    << "    for (ortc_i64 q = 0; q < " << IntLiteral(splits) << "; ++q) {\n"
    << "      const float v = in0[(img * " << IntLiteral(splits) << " + q) * " << c << " + ch];\n"
    << "      " << r.accumulate << "\n"
    << "    }\n"
    << "    out0[i] = " << StoreExpr(dt, r.finish) << ";\n"
    << "  }\n}\n";
  KernelSource k;
  k.name = name;
  k.source = s.str();
  k.num_inputs = 1;
  k.num_outputs = 1;
  k.grid = {GridFor(n), 1, 1};
  k.block = {kBlockSize, 1, 1};
  return k;
}

std::string SplitPoolUnsupported(const OpDesc& op) {
  const std::string& t = op.op_type;
  if (op.inputs.size() != 1 || op.outputs.size() != 1) return t + " takes one input and one output";
  const bool partial = t == kPoolPartialOp;
  const auto& in = op.inputs[0].dims;
  if (partial ? in.size() < 3 || op.input_layout != Layout::kNhwc || IntAttr(op, "splits", 0) < 2
              : in.size() != 3 || op.inputs[0].dtype != onnx::TensorProto::FLOAT ||
                    IntAttr(op, "count", 0) < 1)
    return t + ": not the form lowering writes";
  for (int64_t v : in)
    if (v <= 0) return t + ": empty or dynamic dimension";
  if (!IsFloatType(partial ? op.inputs[0].dtype : op.outputs[0].dtype))
    return t + " on " + DtypeName(op.inputs[0].dtype) + " is not supported";
  return "";
}

}  // namespace

bool IsReductionOp(const std::string& t) {
  return t == kPoolPartialOp || t == kPoolMergeOp || t == "ReduceMean" || t == "ReduceSum" ||
         t == "ReduceMax" || t == "ReduceMin" || t == "ReduceProd" || t == "ReduceL2" ||
         t == "ReduceSumSquare" || t == "GlobalAveragePool" || t == "GlobalMaxPool";
}

std::string ReductionUnsupported(const OpDesc& op) {
  const std::string& t = op.op_type;
  if (!IsReductionOp(t)) return "no CUDA kernel generator for " + t;
  if (t == kPoolPartialOp || t == kPoolMergeOp) return SplitPoolUnsupported(op);
  if (op.inputs.empty() || op.outputs.empty()) return t + " without inputs or outputs";
  const bool integer_form = IsIntegerReduction(op) && (t == "ReduceSum" || t == "ReduceMax" ||
                                                       t == "ReduceMin" || t == "ReduceProd");
  if ((!IsFloatType(op.inputs[0].dtype) && !integer_form) ||
      op.outputs[0].dtype != op.inputs[0].dtype)
    return t + " on " + DtypeName(op.inputs[0].dtype) + " is not supported";
  for (int64_t v : op.inputs[0].dims)
    if (v < 0) return t + ": dynamic dimension";
  if (op.input_layout != Layout::kNchw && t != "GlobalAveragePool" && t != "GlobalMaxPool")
    return "no channels-last (NHWC) kernel for " + t;
  auto plan = PlanOf(op);
  if (!plan.ok()) return plan.status().message();
  if (plan.value().identity) return "";
  int64_t count = 1;
  for (size_t a = 0; a < plan.value().reduced.size(); ++a)
    if (plan.value().reduced[a]) count *= op.inputs[0].dims[a];
  if (count == 0) return t + " over an empty axis is not supported";
  return "";
}

Result<KernelSource> EmitReduction(const std::string& name, const OpDesc& op) {
  if (std::string why = ReductionUnsupported(op); !why.empty()) return NotImplemented(why);
  if (op.op_type == kPoolPartialOp)
    return EmitChannelsLastPool(name, op, SplitPoolReducer(op, Positions(op.inputs[0])),
                                IntAttr(op, "splits", 1));
  if (op.op_type == kPoolMergeOp) return EmitChannelsLastPoolMerge(name, op);
  auto plan_or = PlanOf(op);
  if (!plan_or.ok()) return plan_or.status();
  const Plan& plan = plan_or.value();
  if (plan.identity) return EmitIdentity(name, op);
  if (op.input_layout == Layout::kNhwc)
    return EmitChannelsLastPool(name, op, ReducerOf(op.op_type, Positions(op.inputs[0])), 1);

  // Kept and reduced axes with their input strides; outputs enumerate the kept axes in order
  // (keepdims only inserts size-1 axes, which do not change the order of elements).
  const auto& d = op.inputs[0].dims;
  std::vector<int64_t> stride(d.size(), 1);
  for (size_t k = d.size(); k-- > 1;) stride[k - 1] = stride[k] * d[k];
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  for (size_t a = 0; a < d.size(); ++a) {
    (plan.reduced[a] ? red_dims : kept_dims).push_back(d[a]);
    (plan.reduced[a] ? red_strides : kept_strides).push_back(stride[a]);
  }
  int64_t outputs = 1, count = 1;
  for (int64_t v : kept_dims) outputs *= v;
  for (int64_t v : red_dims) count *= v;
  const bool integer = IsIntegerReduction(op);
  const Reducer r = integer ? IntegerReducerOf(op.op_type) : ReducerOf(op.op_type, count);
  const std::string acc_type = integer ? "ortc_i64" : "float";
  const uint32_t block = RowBlockSize(count);
  const int32_t dt = op.inputs[0].dtype;
  const std::string st = StorageCType(dt);
  const std::string in = "    ";

  std::ostringstream s;
  s << "extern \"C\" __global__ void " << name << "("
    << KernelParams(static_cast<int>(op.inputs.size()), 1) << ") {\n"
    << "  const " << st << "* __restrict__ in0 = (const " << st << "*)p0;\n"
    << "  " << st << "* __restrict__ out0 = (" << st << "*)p" << op.inputs.size() << ";\n"
    << "  __shared__ " << acc_type << " red[" << block << "];\n"
    << "  for (ortc_i64 o = blockIdx.x; o < " << IntLiteral(outputs) << "; o += gridDim.x) {\n";
  std::string base, offset;
  s << OffsetCode("o", kept_dims, kept_strides, "k", in, &base);
  s << in << "const ortc_i64 base = " << base << ";\n"
    << in << acc_type << " acc = " << r.init << ";\n"
    << in << "for (ortc_i64 j = threadIdx.x; j < " << IntLiteral(count) << "; j += " << block
    << "u) {\n"
    << OffsetCode("j", red_dims, red_strides, "q", in + "  ", &offset) << in << "  const "
    << acc_type << " v = " << LoadExpr(dt, "in0[base + " + offset + "]") << ";\n"
    << in << "  " << r.accumulate << "\n"
    << in << "}\n"
    << BlockReduceCode("acc", r.combine, block, in) << in
    << "if (threadIdx.x == 0) out0[o] = " << StoreExpr(dt, r.finish) << ";\n"
    << "  }\n}\n";

  KernelSource k;
  k.name = name;
  k.source = s.str();
  k.num_inputs = static_cast<int>(op.inputs.size());
  k.num_outputs = 1;
  k.grid = {static_cast<uint32_t>(std::clamp<int64_t>(outputs, 1, 65535)), 1, 1};
  k.block = {block, 1, 1};
  k.uses_block_sync = true;
  return k;
}

}  // namespace ortc::backends::cuda::codegen
