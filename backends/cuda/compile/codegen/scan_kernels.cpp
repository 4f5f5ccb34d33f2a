// Scan kernels: CumSum (opsets 11 and 14; exclusive, reverse) along a compile-time constant axis,
// one thread per line for short or many coalesced lines, else one block per line (chunked scan).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace {

using onnx::TensorProto;

// The lines a scan walks: `count` lines of `dim` elements `inner` apart; line l starts at
// (l / inner) * dim * inner + l % inner.
struct Lines {
  int64_t count = 0, dim = 0, inner = 1;
};

Result<Lines> LinesOf(const OpDesc& op) {
  const auto& d = op.inputs[0].dims;
  const auto rank = static_cast<int64_t>(d.size());
  auto axis_values = ConstantValues(op, 1);
  if (!axis_values)
    return NotImplemented(
        "CumSum with an axis computed at run time is not supported (the axis "
        "must be a compile-time constant)");
  if (axis_values->size() != 1) return InvalidArgument("CumSum: axis must hold one value");
  // Checked in double: INT64_MAX arrives as 2^63, whose conversion is undefined.
  if (!(std::fabs((*axis_values)[0]) <= static_cast<double>(rank)))
    return InvalidArgument("CumSum: axis out of range");
  auto axis = static_cast<int64_t>((*axis_values)[0]);
  if (axis < -rank || axis >= rank) return InvalidArgument("CumSum: axis out of range");
  if (axis < 0) axis += rank;
  Lines l;
  l.dim = d[static_cast<size_t>(axis)];
  l.count = 1;
  for (int64_t a = 0; a < rank; ++a) {
    if (a < axis) l.count *= d[static_cast<size_t>(a)];
    if (a > axis) l.inner *= d[static_cast<size_t>(a)];
  }
  l.count *= l.inner;
  return l;
}

bool ScanType(int32_t t) {
  return IsFloatType(t) || t == TensorProto::INT32 || t == TensorProto::INT64;
}

// Text shared by both kernels. Integers accumulate in ortc_u64 (wrapping, as two's complement
// addition does); floats in float.
struct Text {
  std::string st, acc, zero;
  int32_t dtype = 0;
  bool exclusive = false, reverse = false;
  Lines lines;

  std::string Load(const std::string& index) const {
    const std::string v = LoadExpr(dtype, "in0[" + index + "]");
    return IsFloatType(dtype) ? v : "(ortc_u64)(" + v + ")";
  }
  std::string Store(const std::string& var) const {
    return StoreExpr(dtype, IsFloatType(dtype) ? var : "(ortc_i64)" + var);
  }
  // Statements walking positions [from, to) of the line at `base`, adding into `acc`, writing
  // the running sums.
  std::string Walk(const std::string& from, const std::string& to, const std::string& in) const {
    const std::string pos = reverse ? "(" + IntLiteral(lines.dim - 1) + " - s)" : std::string("s");
    std::ostringstream s;
    s << in << "for (ortc_i64 s = " << from << "; s < " << to << "; ++s) {\n"
      << in << "  const ortc_i64 at = base + " << pos << " * " << IntLiteral(lines.inner) << ";\n"
      << in << "  const " << acc << " v = " << Load("at") << ";\n";
    if (exclusive) {
      s << in << "  out0[at] = " << Store("acc") << ";\n" << in << "  acc += v;\n";
    } else {
      s << in << "  acc += v;\n" << in << "  out0[at] = " << Store("acc") << ";\n";
    }
    s << in << "}\n";
    return s.str();
  }
  std::string Head(const std::string& name) const {
    std::ostringstream s;
    s << "extern \"C\" __global__ void " << name << "(" << KernelParams(2, 1) << ") {\n"
      << "  const " << st << "* __restrict__ in0 = (const " << st << "*)p0;\n"
      << "  " << st << "* __restrict__ out0 = (" << st << "*)p2;\n";
    return s.str();
  }
  std::string Base(const std::string& line) const {
    return "const ortc_i64 base = (" + line + " / " + IntLiteral(lines.inner) + ") * " +
           IntLiteral(lines.dim * lines.inner) + " + " + line + " % " + IntLiteral(lines.inner) +
           ";\n";
  }
};

// One thread per line, walking it in order.
KernelSource EmitPerThread(const std::string& name, const Text& t) {
  std::ostringstream s;
  s << t.Head(name) << "  for (ortc_i64 line = (ortc_i64)blockIdx.x * blockDim.x + threadIdx.x; "
    << "line < " << IntLiteral(t.lines.count) << "; line += (ortc_i64)gridDim.x * blockDim.x) {\n"
    << "    " << t.Base("line") << "    " << t.acc << " acc = " << t.zero << ";\n"
    << t.Walk("0", IntLiteral(t.lines.dim), "    ") << "  }\n}\n";
  KernelSource k;
  k.name = name;
  k.source = s.str();
  k.grid = {GridFor(t.lines.count), 1, 1};
  k.block = {kBlockSize, 1, 1};
  return k;
}

// One block per line: each thread sums a chunk of consecutive positions, a shared-memory
// (Hillis-Steele) scan of the chunk sums gives each thread its chunk's offset, and the thread
// walks its chunk again from that offset.
KernelSource EmitPerBlock(const std::string& name, const Text& t) {
  const uint32_t block = RowBlockSize(t.lines.dim);
  const int64_t chunk = (t.lines.dim + block - 1) / block;
  const std::string in = "    ";
  std::ostringstream s;
  s << t.Head(name) << "  __shared__ " << t.acc << " part[" << block << "];\n"
    << "  for (ortc_i64 line = blockIdx.x; line < " << IntLiteral(t.lines.count)
    << "; line += gridDim.x) {\n"
    << in << t.Base("line") << in << "const ortc_i64 first = (ortc_i64)threadIdx.x * "
    << IntLiteral(chunk) << ";\n"
    << in << "const ortc_i64 last = first + " << IntLiteral(chunk) << " < "
    << IntLiteral(t.lines.dim) << " ? first + " << IntLiteral(chunk) << " : "
    << IntLiteral(t.lines.dim) << ";\n"
    << in << t.acc << " acc = " << t.zero << ";\n"
    << in << "for (ortc_i64 s = first; s < last; ++s) {\n"
    << in << "  const ortc_i64 at = base + "
    << (t.reverse ? "(" + IntLiteral(t.lines.dim - 1) + " - s)" : std::string("s")) << " * "
    << IntLiteral(t.lines.inner) << ";\n"
    << in << "  acc += " << t.Load("at") << ";\n"
    << in << "}\n"
    << in << "part[threadIdx.x] = acc;\n"
    << in << "__syncthreads();\n"
    << in << "for (unsigned d = 1; d < " << block << "u; d <<= 1) {\n"
    << in << "  const " << t.acc << " add = threadIdx.x >= d ? part[threadIdx.x - d] : " << t.zero
    << ";\n"
    << in << "  __syncthreads();\n"
    << in << "  part[threadIdx.x] += add;\n"
    << in << "  __syncthreads();\n"
    << in << "}\n"
    << in << "acc = threadIdx.x > 0 ? part[threadIdx.x - 1] : " << t.zero << ";\n"
    << t.Walk("first", "last", in)
    // The next line overwrites part: every thread must have read its offset.
    << in << "__syncthreads();\n"
    << "  }\n}\n";
  KernelSource k;
  k.name = name;
  k.source = s.str();
  k.grid = {static_cast<uint32_t>(std::clamp<int64_t>(t.lines.count, 1, 65535)), 1, 1};
  k.block = {block, 1, 1};
  k.uses_block_sync = true;
  return k;
}

}  // namespace

bool IsScanOp(const std::string& op_type) {
  return op_type == "CumSum";
}

std::string ScanUnsupported(const OpDesc& op) {
  const std::string& t = op.op_type;
  if (!IsScanOp(t)) return "no CUDA kernel generator for " + t;
  if (op.inputs.size() != 2 || op.inputs[1].dtype == 0 || op.outputs.size() != 1)
    return t + " needs two inputs (x, axis) and one output";
  const int32_t dt = op.inputs[0].dtype;
  if (!ScanType(dt)) return t + " on " + DtypeName(dt) + " is not supported";
  if (op.outputs[0].dtype != dt || op.outputs[0].dims != op.inputs[0].dims)
    return t + ": output type or shape differs from the input's";
  if (op.inputs[0].dims.empty()) return t + " on a scalar (rank 0) input";
  for (int64_t v : op.inputs[0].dims)
    if (v < 0) return t + ": dynamic dimension";
  const int32_t at = op.inputs[1].dtype;
  if (at != TensorProto::INT32 && at != TensorProto::INT64)
    return t + ": axis of type " + DtypeName(at);
  if (op.inputs[1].dims.size() > 1 || op.inputs[1].elements() != 1)
    return t + ": axis must be a 0-D or one-element 1-D tensor";
  auto lines = LinesOf(op);
  return lines.ok() ? "" : lines.status().message();
}

Result<KernelSource> EmitScan(const std::string& name, const OpDesc& op) {
  if (std::string why = ScanUnsupported(op); !why.empty()) return NotImplemented(why);
  auto lines = LinesOf(op);
  if (!lines.ok()) return lines.status();
  Text t;
  t.dtype = op.inputs[0].dtype;
  t.st = StorageCType(t.dtype);
  t.acc = IsFloatType(t.dtype) ? "float" : "ortc_u64";
  t.zero = IsFloatType(t.dtype) ? "0.f" : "(ortc_u64)0";
  t.exclusive = IntAttr(op, "exclusive", 0) != 0;
  t.reverse = IntAttr(op, "reverse", 0) != 0;
  t.lines = lines.value();
  // Short lines, or enough lines next to each other (a non-last axis) that one thread per
  // line keeps the GPU busy and reads coalesced: walk each line in one thread.
  const bool per_thread = t.lines.dim <= 32 || (t.lines.inner >= 32 && t.lines.count >= 4096);
  KernelSource k = per_thread ? EmitPerThread(name, t) : EmitPerBlock(name, t);
  k.num_inputs = 2;
  k.num_outputs = 1;
  return k;
}

}  // namespace ortc::backends::cuda::codegen
