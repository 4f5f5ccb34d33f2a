// CheckEntry: random inputs in storage types, the host-shim run, the CPU reference run and the
// tolerance comparison (defaults per output type documented at DefaultTolerance).
#include "entry_runner.h"

#include <cmath>
#include <cstring>
#include <random>

#include "cpu_kernel/kernel_context.h"
#include "reference_conversions.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;

bool IsFloat(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}
// The CPU reference computes fp16/bf16 tensors in float32.
DataType RefType(int32_t t) {
  return IsFloat(t) ? DataType::kFloat : static_cast<DataType>(t);
}

// A tensor as stored for the kernel (bytes) and as the reference sees it.
struct Buffer {
  std::string bytes;
  Tensor ref;
};

double ReadRef(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat:
      return t.data<float>()[i];
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    case DataType::kInt64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kInt8:
      return t.data<int8_t>()[i];
    case DataType::kUint8:
      return t.data<uint8_t>()[i];
    default:
      return t.data<uint8_t>()[i] != 0;
  }
}

double ReadStorage(const std::string& bytes, int32_t dtype, int64_t i) {
  const char* p = bytes.data() + i * StorageBytes(dtype);
  switch (dtype) {
    case TensorProto::FLOAT: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case TensorProto::FLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return RefHalfToFloat(h);
    }
    case TensorProto::BFLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return RefBf16ToFloat(h);
    }
    case TensorProto::INT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case TensorProto::INT64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case TensorProto::INT8:
      return static_cast<int8_t>(*p);
    case TensorProto::UINT8:
      return static_cast<uint8_t>(*p);
    default:
      return static_cast<uint8_t>(*p) != 0;
  }
}

// Writes v (already representable) into element i of both views.
void Put(Buffer& b, int32_t dtype, int64_t i, double v) {
  char* p = b.bytes.data() + i * StorageBytes(dtype);
  switch (dtype) {
    case TensorProto::FLOAT: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      b.ref.mutable_data<float>()[i] = f;
      return;
    }
    case TensorProto::FLOAT16: {
      const uint16_t h = RefFloatToHalf(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      b.ref.mutable_data<float>()[i] = RefHalfToFloat(h);
      return;
    }
    case TensorProto::BFLOAT16: {
      const uint16_t h = RefFloatToBf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      b.ref.mutable_data<float>()[i] = RefBf16ToFloat(h);
      return;
    }
    case TensorProto::INT32: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      b.ref.mutable_data<int32_t>()[i] = x;
      return;
    }
    case TensorProto::INT64: {
      const auto x = static_cast<int64_t>(v);
      std::memcpy(p, &x, 8);
      b.ref.mutable_data<int64_t>()[i] = x;
      return;
    }
    case TensorProto::INT8:
    case TensorProto::UINT8: {
      const auto x = dtype == TensorProto::INT8 ? static_cast<uint8_t>(static_cast<int8_t>(v))
                                                : static_cast<uint8_t>(v);
      *p = static_cast<char>(x);
      static_cast<uint8_t*>(b.ref.mutable_raw())[i] = x;
      return;
    }
    default: {
      const uint8_t x = v != 0;
      *p = static_cast<char>(x);
      b.ref.mutable_data<bool>()[i] = x;
    }
  }
}

Buffer MakeBuffer(const cg::TensorDesc& t) {
  Buffer b;
  b.bytes.assign(static_cast<size_t>(t.elements()) * StorageBytes(t.dtype), '\0');
  b.ref = Tensor::Allocate(RefType(t.dtype), t.dims);
  return b;
}

Buffer RandomBuffer(const cg::TensorDesc& t, std::pair<float, float> range, std::mt19937& rng) {
  Buffer b = MakeBuffer(t);
  std::uniform_real_distribution<double> u(range.first, range.second);
  for (int64_t i = 0; i < t.elements(); ++i) {
    double v = u(rng);
    if (!IsFloat(t.dtype)) v = std::round(v);
    if (t.dtype == TensorProto::BOOL) v = u(rng) < 0.5 * (range.first + range.second) ? 0 : 1;
    Put(b, t.dtype, i, v);
  }
  return b;
}

// Explicit values (CatalogEntry::values), repeated when fewer than the tensor's elements.
Buffer ValuesBuffer(const cg::TensorDesc& t, const std::vector<double>& values) {
  Buffer b = MakeBuffer(t);
  for (int64_t i = 0; i < t.elements(); ++i)
    Put(b, t.dtype, i, values[static_cast<size_t>(i) % values.size()]);
  return b;
}

Buffer ConstantBuffer(const cg::TensorDesc& t, const std::string& bytes) {
  Buffer b = MakeBuffer(t);
  for (int64_t i = 0;
       i < t.elements() && static_cast<size_t>(i) < bytes.size() / StorageBytes(t.dtype); ++i)
    Put(b, t.dtype, i, ReadStorage(bytes, t.dtype, i));
  return b;
}

Result<exec::Attribute> ToExec(const onnx::AttributeProto& a) {
  exec::Attribute r;
  using A = onnx::AttributeProto;
  using K = exec::Attribute::Kind;
  switch (a.type()) {
    case A::INT:
      r.kind = K::kInt;
      r.i = a.i();
      break;
    case A::FLOAT:
      r.kind = K::kFloat;
      r.f = a.f();
      break;
    case A::STRING:
      r.kind = K::kString;
      r.s = a.s();
      break;
    case A::INTS:
      r.kind = K::kInts;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case A::FLOATS:
      r.kind = K::kFloats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    default:
      return InvalidArgument("attribute " + a.name() + " has a type the test does not convert");
  }
  return r;
}

// Runs one op on the CPU kernels. Float types are float32 there (Cast's `to` included).
Result<std::vector<Tensor>> RunCpu(const cg::OpDesc& op, const std::vector<const Tensor*>& in) {
  exec::ExecOp e;
  e.op_type = op.op_type;
  e.version = op.since_version;
  e.kernel = exec::FindKernel("", op.op_type);
  if (!e.kernel) return InvalidArgument("no CPU kernel for " + op.op_type);
  for (const auto& a : op.attributes) {
    auto x = ToExec(a);
    if (!x.ok()) return x.status();
    exec::Attribute attr = std::move(x).value();
    if (a.name() == "to" && IsFloat(static_cast<int32_t>(attr.i))) attr.i = TensorProto::FLOAT;
    e.attrs[a.name()] = std::move(attr);
  }
  for (size_t i = 0; i < in.size(); ++i) e.inputs.push_back(in[i] ? static_cast<int>(i) : -1);
  for (size_t i = 0; i < op.outputs.size(); ++i) e.outputs.push_back(static_cast<int>(i));
  std::vector<Tensor> out(op.outputs.size());
  exec::KernelContext c(e, in, &out);
  if (Status s = e.kernel(c); !s.ok()) return s;
  return out;
}

// The bytes of a [N, C, spatial...] tensor (logical dims) moved between NCHW order and channels
// last ([N, spatial..., C]): the kernel of a channels-last entry reads and writes that order,
// the CPU reference stays NCHW.
std::string Relayout(const std::string& bytes, const std::vector<int64_t>& dims, size_t es,
                     bool to_channels_last) {
  if (dims.size() < 3) return bytes;
  const int64_t n = dims[0], c = dims[1];
  int64_t plane = 1;
  for (size_t d = 2; d < dims.size(); ++d) plane *= dims[d];
  std::string out(bytes.size(), '\0');
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t first = (b * c + ch) * plane + p, last = (b * plane + p) * c + ch;
        const int64_t from = to_channels_last ? first : last, to = to_channels_last ? last : first;
        std::memcpy(out.data() + to * es, bytes.data() + from * es, es);
      }
  return out;
}

// How the kernel stores input i / output o of the entry.
cg::Layout InputLayout(const CatalogEntry& e, size_t i) {
  if (e.group)
    return i < e.group->input_layouts.size() ? e.group->input_layouts[i] : cg::Layout::kNchw;
  return cg::LayoutApplies(e.op.op_type, i) ? e.op.input_layout : cg::Layout::kNchw;
}
cg::Layout OutputLayout(const CatalogEntry& e, size_t o) {
  if (e.group)
    return o < e.group->output_layouts.size() ? e.group->output_layouts[o] : cg::Layout::kNchw;
  return o == 0 ? e.op.output_layout : cg::Layout::kNchw;
}

// Default tolerances, from the output's storage type: float32 results differ from the double
// CPU reference by a few float ulps (rtol 1e-5); fp16/bf16 results are rounded once at the
// store, so they may differ from the rounded reference by about one unit in the last place
// (2^-10 for fp16, 2^-7 for bf16) plus an absolute floor for values near zero. Integer and bool
// results must be exact.
std::pair<double, double> DefaultTolerance(int32_t dtype) {
  switch (dtype) {
    case TensorProto::FLOAT:
      return {1e-5, 1e-6};
    case TensorProto::FLOAT16:
      return {1.0 / 1024, 1e-4};
    case TensorProto::BFLOAT16:
      return {1.0 / 128, 1e-3};
    default:
      return {0, 0};
  }
}

// The entry's inputs drawn from `seed`: its constants, its given values, else random ones in its
// ranges (floats [-3, 3), ints [-20, 20] by default); in NCHW order.
std::vector<Buffer> EntryBuffers(const CatalogEntry& entry, unsigned seed) {
  std::mt19937 rng(seed);
  const std::vector<cg::TensorDesc>& inputs = entry.group ? entry.group->inputs : entry.op.inputs;
  std::vector<Buffer> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto range = i < entry.ranges.size()    ? entry.ranges[i]
                       : IsFloat(inputs[i].dtype) ? std::pair<float, float>{-3.f, 3.f}
                                                  : std::pair<float, float>{-20.f, 20.f};
    const bool constant = !entry.group && i < entry.op.constants.size() && entry.op.constants[i];
    const bool given = i < entry.values.size() && !entry.values[i].empty();
    in.push_back(inputs[i].dtype == 0 ? Buffer{}
                 : constant           ? ConstantBuffer(inputs[i], *entry.op.constants[i])
                 : given              ? ValuesBuffer(inputs[i], entry.values[i])
                                      : RandomBuffer(inputs[i], range, rng));
  }
  return in;
}

// Input i's bytes as the kernel reads them (channels-last inputs transposed).
std::string KernelBytes(const CatalogEntry& entry, size_t i, const Buffer& b) {
  const std::vector<cg::TensorDesc>& inputs = entry.group ? entry.group->inputs : entry.op.inputs;
  if (InputLayout(entry, i) != cg::Layout::kNhwc || b.bytes.empty()) return b.bytes;
  return Relayout(b.bytes, inputs[i].dims, StorageBytes(inputs[i].dtype),
                  /*to_channels_last=*/true);
}

}  // namespace

std::vector<std::string> EntryInputBytes(const CatalogEntry& entry, unsigned seed) {
  const std::vector<Buffer> in = EntryBuffers(entry, seed);
  std::vector<std::string> bytes;
  for (size_t i = 0; i < in.size(); ++i) bytes.push_back(KernelBytes(entry, i, in[i]));
  return bytes;
}

Result<EntryCheck> CheckEntry(const CatalogEntry& entry, const cg::KernelSource& kernel,
                              const HostModule& module, unsigned seed) {
  std::vector<Buffer> in = EntryBuffers(entry, seed);

  // Reference outputs, op by op for a fused group.
  std::vector<cg::TensorDesc> out_desc;
  std::vector<Tensor> expected;
  if (entry.group) {
    std::vector<std::vector<Tensor>> results;
    for (const auto& f : entry.group->ops) {
      std::vector<const Tensor*> args;
      for (int a : f.args) args.push_back(a >= 0 ? &in[a].ref : &results[-1 - a][0]);
      auto r = RunCpu(f.op, args);
      if (!r.ok()) return r.status();
      results.push_back(std::move(r).value());
    }
    for (int o : entry.group->outputs) {
      out_desc.push_back(entry.group->ops[o].op.outputs[0]);
      expected.push_back(results[o][0]);
    }
  } else {
    out_desc = entry.op.outputs;
  }
  EntryCheck check;
  if (!entry.group && entry.no_cpu_reference.empty()) {
    std::vector<const Tensor*> args;
    for (const auto& b : in) args.push_back(b.ref.empty() ? nullptr : &b.ref);
    auto r = RunCpu(entry.op, args);
    if (!r.ok()) return r.status();
    expected = std::move(r).value();
  }

  // The kernel run: outputs pre-filled with a pattern so unwritten elements show.
  std::vector<std::string> outs;
  for (const auto& d : out_desc)
    outs.emplace_back(static_cast<size_t>(d.elements()) * StorageBytes(d.dtype), '\x7f');
  for (size_t i = 0; i < in.size(); ++i) in[i].bytes = KernelBytes(entry, i, in[i]);
  std::vector<void*> args;
  for (auto& b : in) args.push_back(b.bytes.empty() ? nullptr : b.bytes.data());
  for (auto& o : outs) args.push_back(o.data());
  if (Status s = module.Launch(kernel, args); !s.ok()) return s;
  for (size_t o = 0; o < outs.size(); ++o) {
    if (OutputLayout(entry, o) == cg::Layout::kNhwc) {
      outs[o] = Relayout(outs[o], out_desc[o].dims, StorageBytes(out_desc[o].dtype),
                         /*to_channels_last=*/false);
    }
  }
  if (!entry.no_cpu_reference.empty()) {
    check.skipped = entry.no_cpu_reference;
    return check;
  }

  std::string report;
  int shown = 0;
  for (size_t o = 0; o < out_desc.size(); ++o) {
    const Tensor& want = expected[o];
    if (want.elements() != out_desc[o].elements()) {
      return InvalidArgument("output " + std::to_string(o) + ": reference has " +
                             std::to_string(want.elements()) + " elements, kernel " +
                             std::to_string(out_desc[o].elements()));
    }
    auto [rtol, atol] = DefaultTolerance(out_desc[o].dtype);
    if (entry.rtol > 0 || entry.atol > 0) {
      rtol = std::max(rtol, entry.rtol);
      atol = std::max(atol, entry.atol);
    }
    for (int64_t i = 0; i < want.elements(); ++i) {
      const double got = ReadStorage(outs[o], out_desc[o].dtype, i);
      const double ref = ReadRef(want, i);
      ++check.elements;
      // int64 results are compared as integers: doubles would hide a difference in the low bits
      // of values beyond 2^53 (wrapped sums, the limits of Abs or Div).
      if (out_desc[o].dtype == TensorProto::INT64 && want.dtype() == DataType::kInt64) {
        int64_t got64;
        std::memcpy(&got64, outs[o].data() + i * 8, 8);
        const int64_t ref64 = want.data<int64_t>()[i];
        if (got64 != ref64 && shown++ < 5)
          report += "output " + std::to_string(o) + "[" + std::to_string(i) + "]: kernel " +
                    std::to_string(got64) + " vs CPU " + std::to_string(ref64) + "\n";
        continue;
      }
      const bool same_nan = std::isnan(got) && std::isnan(ref);
      const bool same_inf = std::isinf(got) && got == ref;
      if (same_nan || same_inf || std::fabs(got - ref) <= atol + rtol * std::fabs(ref)) continue;
      if (shown++ < 5) {
        report += "output " + std::to_string(o) + "[" + std::to_string(i) + "]: kernel " +
                  std::to_string(got) + " vs CPU " + std::to_string(ref) + "\n";
      }
    }
  }
  if (shown > 0) report += std::to_string(shown) + " elements outside tolerance\n";
  check.mismatch = report;
  return check;
}

}  // namespace ortc::test::cuda
