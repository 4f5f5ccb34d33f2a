// CheckCompiledModel: compile through the real CLI, take every CUDA graph's inputs and outputs
// from the CPU runtime running the source model (those values exposed as extra graph outputs),
// run the graph in the emulator on the same inputs and measure the differences.
#include "model_runner.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "cpu/runtime/kernels/kernel_util.h"
#include "format/ep_context.h"
#include "graph/contrib_ops.h"
#include "graph/four_bit_dequantize.h"
#include "graph/model.h"
#include "graph/opset_support.h"
#include "library_reference.h"
#include "ortc/runtime.h"
#include "run_ortc.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

namespace fs = std::filesystem;

std::string ShapeArg(const std::map<std::string, std::vector<int64_t>>& shapes) {
  std::string s;
  for (const auto& [name, dims] : shapes) {
    s += " --input-shape " + name + "=";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) s += "x";
      s += std::to_string(dims[i]);
    }
  }
  return s;
}

double Value(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat:
      return t.data<float>()[i];
    case DataType::kDouble:
      return t.data<double>()[i];
    case DataType::kInt64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    case DataType::kBool:
    case DataType::kUint8:
      return t.data<uint8_t>()[i];
    case DataType::kInt8:
      return t.data<int8_t>()[i];
    case DataType::kFloat16:
      return exec::HalfToFloat(t.data<uint16_t>()[i]);
    case DataType::kBfloat16:
      return exec::Bf16ToFloat(t.data<uint16_t>()[i]);
    default:  // a type this check cannot read: it fails rather than passes
      return std::nan("");
  }
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.elements()));
  for (int64_t i = 0; i < t.elements(); ++i) v[i] = Value(t, i);
  return v;
}

// Elementwise bound atol + rtol * |r|, or with `scale_relative` atol + rtol * max|ref| (the
// tensor's magnitude in place of the element's). A reference value beyond `largest`, the
// largest finite value of the type the program stores it in, cannot be stored: the emulated
// value matches when it saturated (same sign, at least `largest`), as the weight conversion
// saturates float32's lowest value in "minus infinity" masks.
Result<OutputError> Compare(const std::string& name, const std::vector<double>& got,
                            const Tensor& ref, const CheckOptions& o, bool scale_relative,
                            double largest = INFINITY) {
  if (static_cast<int64_t>(got.size()) != ref.elements())
    return InvalidArgument("value " + name + ": emulated and reference differ in size");
  OutputError e;
  e.name = name;
  e.elements = ref.elements();
  for (int64_t i = 0; i < e.elements; ++i)
    e.ref_max_abs = std::max(e.ref_max_abs, std::fabs(Value(ref, i)));
  double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < e.elements; ++i) {
    const double g = got[i], r = Value(ref, i);
    if (std::isfinite(g) && std::isfinite(r)) {
      diff2 += (g - r) * (g - r);
      ref2 += r * r;
    }
    if (std::isfinite(r) && std::fabs(r) > largest && std::fabs(g) >= largest &&
        std::signbit(g) == std::signbit(r))
      continue;
    // Equal values agree, infinities and NaNs included (a -inf mask, a NaN guard's input).
    const double d = g == r || (std::isnan(g) && std::isnan(r)) ? 0.0
                     : std::isnan(g) != std::isnan(r)           ? INFINITY
                                                                : std::fabs(g - r);
    e.max_abs = std::max(e.max_abs, d);
    if (std::fabs(r) > 1e-3) e.max_rel = std::max(e.max_rel, d / std::fabs(r));
    if (!(d <= o.atol + o.rtol * (scale_relative ? e.ref_max_abs : std::fabs(r)))) e.beyond++;
  }
  e.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return e;
}

struct Wanted {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;  // logical N, C, H, W order
  bool nhwc = false;          // stored channels-last: read back in NCHW order
};

// The source model with `extra` values added as graph outputs, so the CPU runtime returns them.
Result<std::unique_ptr<Session>> ReferenceSession(const onnx::ModelProto& source,
                                                  const fs::path& model,
                                                  const std::vector<Wanted>& extra) {
  onnx::ModelProto proto = source;
  std::set<std::string> have;
  for (const auto& out : proto.graph().output()) have.insert(out.name());
  for (const auto& w : extra) {
    if (!have.insert(w.name).second) continue;
    auto* vi = proto.mutable_graph()->add_output();
    vi->set_name(w.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(w.dtype);
    auto* shape = tt->mutable_shape();
    for (int64_t x : w.dims) shape->add_dim()->set_dim_value(x);
  }
  const std::string bytes = proto.SerializeAsString();
  SessionOptions so;
  so.context_file_path = model;
  return Session::CreateFromBuffer(BytesOf(bytes), so);
}

Wanted FromDesc(const fb::TensorDesc& d) {
  Wanted w{d.name() ? d.name()->str() : "", d.dtype(), {}};
  if (d.dims()) w.dims.assign(d.dims()->begin(), d.dims()->end());
  return w;
}

// Arena buffers of `p` that hold a float value of the source model, in NCHW/plain layout or
// channels-last (then compared in NCHW order).
std::vector<std::pair<int, Wanted>> Intermediates(const fb::cuda::Program& p,
                                                  const std::set<std::string>& source_values) {
  std::vector<std::pair<int, Wanted>> r;
  for (uint32_t i = 0; i < p.buffers()->size(); ++i) {
    const auto* b = p.buffers()->Get(i);
    if (b->kind() != fb::cuda::BufferKind::Arena || !b->name() || !IsFloatStorage(b->dtype()))
      continue;
    const bool nhwc = b->layout() == fb::cuda::TensorLayout::NHWC;
    if (nhwc && (!b->dims() || b->dims()->size() != 4)) continue;
    // A value transposed for a consumer of the other layout is "<value>.nchw" / "<value>.nhwc".
    std::string name = b->name()->str();
    for (const char* suffix : {".nchw", ".nhwc"}) {
      if (name.size() > 5 && name.compare(name.size() - 5, 5, suffix) == 0)
        name.resize(name.size() - 5);
    }
    if (!source_values.count(name)) continue;
    Wanted w{name, onnx::TensorProto::FLOAT, {}, nhwc};
    if (b->dims()) w.dims.assign(b->dims()->begin(), b->dims()->end());
    r.emplace_back(static_cast<int>(i), std::move(w));
  }
  return r;
}

// Element i of a logical NCHW tensor stored channels-last: its index in storage.
int64_t NhwcIndex(const std::vector<int64_t>& d, int64_t i) {
  const int64_t w = i % d[3], h = (i / d[3]) % d[2], c = (i / (d[3] * d[2])) % d[1],
                n = i / (d[3] * d[2] * d[1]);
  return ((n * d[2] + h) * d[3] + w) * d[1] + c;
}

// Uniform integers in [lo, hi] (token ids, 0/1 masks), as int64 or int32.
Tensor RandomIntTensor(const std::vector<int64_t>& dims, int32_t dtype, int64_t lo, int64_t hi,
                       unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(lo, hi);
  const bool wide = dtype == onnx::TensorProto::INT64;
  const bool boolean = dtype == onnx::TensorProto::BOOL;
  Tensor t = Tensor::Allocate(boolean ? DataType::kBool
                              : wide  ? DataType::kInt64
                                      : DataType::kInt32,
                              dims);
  for (int64_t i = 0; i < t.elements(); ++i) {
    const int64_t v = u(rng);
    if (boolean) {
      t.mutable_data<bool>()[i] = v != 0;
    } else if (wide) {
      t.mutable_data<int64_t>()[i] = v;
    } else {
      t.mutable_data<int32_t>()[i] = static_cast<int32_t>(v);
    }
  }
  return t;
}

std::string ValueArg(const std::map<std::string, std::string>& values) {
  std::string args;
  for (const auto& [name, value] : values) args += " --input-value " + name + "=" + value;
  return args;
}

// The source model as the CPU runtime can run it. One with ONNX Runtime's contrib ops is read the
// way `ortc compile` reads it (graph/contrib_ops.h rewrites them into standard ops, whose values
// the CUDA graphs read and write); any other is used as it is.
Result<onnx::ModelProto> ReferenceSource(const fs::path& model, const CheckOptions& o) {
  onnx::ModelProto proto = LoadProto(model);
  std::map<std::string, int64_t> opsets;
  for (const auto& o : proto.opset_import())
    opsets[graph::IsDefaultDomain(o.domain()) ? "" : o.domain()] = o.version();
  bool contrib = false;
  for (const auto& n : proto.graph().node()) {
    const std::string domain = graph::IsDefaultDomain(n.domain()) ? "" : n.domain();
    contrib = contrib || graph::IsExpandableContribOp(n.domain(), n.op_type(), opsets[domain]);
  }
  if (!contrib && o.input_values.empty() && !graph::HasFourBitOrBlockedDequantize(proto.graph()))
    return proto;
  graph::LoadOptions load;
  load.input_shapes = o.input_shapes;
  load.input_values = o.input_values;
  load.fold_shapes = true;
  auto loaded = graph::LoadModelFromFile(model, load);
  if (!loaded.ok()) return loaded.status();
  return (*loaded)->proto;
}

}  // namespace

CheckOptions CheckOptions::ForPrecision(const std::string& precision) {
  CheckOptions o;
  o.precision = precision;
  if (precision == "fp16") {
    o.rtol = o.atol = 1e-2;
  } else if (precision == "bf16") {
    o.rtol = o.atol = 8e-2;
  }
  return o;
}

Result<ModelCheck> CheckCompiledModel(const fs::path& model, const fs::path& work,
                                      const CheckOptions& o) {
  ModelCheck check;
  fs::create_directories(work);
  const fs::path ctx = work / (model.stem().string() + "_ctx.onnx");
  // One target keeps NVRTC's share of the test short; the emulator runs the source text.
  auto r = RunOrtc("compile '" + model.string() + "' --ep cuda,cpu --target-arch sm_80 -q" +
                       ShapeArg(o.input_shapes) + ValueArg(o.input_values) + " --precision " +
                       o.precision + " " + o.extra_flags + " -o '" + ctx.string() + "'",
                   true);
  if (r.exit_code != 0) {
    if (NvrtcNotFound(r)) {
      check.skipped = "NVRTC is not available here: " + r.out;
      return check;
    }
    return InvalidArgument("ortc compile failed (" + std::to_string(r.exit_code) + "): " + r.out);
  }

  // The CUDA EPContext nodes and the binary they name.
  const onnx::ModelProto ctx_proto = LoadProto(ctx);
  std::vector<format::EpContextNode> nodes;
  for (const auto& n : ctx_proto.graph().node()) {
    if (n.op_type() != "EPContext") continue;
    auto ep = format::EpContextNode::FromNodeProto(n);
    if (!ep.ok()) return ep.status();
    if (ep->source == "ortc.cuda") {
      nodes.push_back(*ep);
      check.cuda_nodes++;
    } else {
      check.cpu_nodes++;
    }
  }
  if (nodes.empty()) return check;
  if (nodes[0].embed_mode != 0) return NotImplemented("embedded CUDA binaries");
  auto opened = format::ContextBinary::OpenFile(work / nodes[0].ep_cache_context);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<const format::ContextBinary> bin = std::move(opened).value();

  // Reference values of every CUDA graph's inputs, outputs and intermediates, on one set of
  // random inputs.
  auto reference_source = ReferenceSource(model, o);
  if (!reference_source.ok()) return reference_source.status();
  const onnx::ModelProto& source = *reference_source;
  std::set<std::string> source_values;
  for (const auto& n : source.graph().node())
    for (const auto& out : n.output()) source_values.insert(out);
  std::vector<Wanted> wanted;
  std::vector<const fb::Graph*> graphs;
  std::vector<ProgramInterpreter> programs;
  std::vector<std::vector<std::pair<int, Wanted>>> inner;
  for (const auto& n : nodes) {
    const fb::Graph* g = bin->FindGraph(n.partition_name);
    if (!g || !g->inputs() || !g->outputs())
      return InvalidGraph("the binary lacks graph " + n.partition_name);
    graphs.push_back(g);
    for (const auto* d : *g->inputs()) wanted.push_back(FromDesc(*d));
    for (const auto* d : *g->outputs()) wanted.push_back(FromDesc(*d));
    auto interp = ProgramInterpreter::Load(bin, n.partition_name);
    if (!interp.ok()) return interp.status();
    inner.push_back(Intermediates(interp->program(), source_values));
    for (const auto& [index, w] : inner.back()) wanted.push_back(w);
    programs.push_back(std::move(interp).value());
  }
  auto session = ReferenceSession(source, model, wanted);
  if (!session.ok()) return session.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  unsigned seed = o.seed;
  for (const auto& [name, dims] : o.input_shapes) {
    if (auto given = o.input_tensors.find(name); given != o.input_tensors.end()) {
      if (given->second.shape() != dims)
        return InvalidArgument("input " + name + ": the given tensor's shape differs from " +
                               "the one compiled for");
      feeds.emplace_back(name, given->second);
      continue;
    }
    int32_t dtype = onnx::TensorProto::FLOAT;
    for (const auto& in : source.graph().input())
      if (in.name() == name) dtype = in.type().tensor_type().elem_type();
    // Boolean inputs (attention masks) are drawn from {false, true}, integers from their
    // --int-range (0:1 without one).
    if (dtype == onnx::TensorProto::INT64 || dtype == onnx::TensorProto::INT32 ||
        dtype == onnx::TensorProto::BOOL) {
      const auto it = o.int_ranges.find(name);
      const auto range =
          it == o.int_ranges.end() ? std::make_pair<int64_t, int64_t>(0, 1) : it->second;
      feeds.emplace_back(name, RandomIntTensor(dims, dtype, range.first, range.second, seed++));
    } else {
      feeds.emplace_back(name, RandomTensor(dims, seed++));
    }
  }
  std::vector<std::string> names;
  for (const auto& w : wanted) names.push_back(w.name);
  auto values = (*session)->Run(feeds, names);
  if (!values.ok()) return values.status();
  std::map<std::string, Tensor> reference;
  for (size_t i = 0; i < names.size(); ++i) reference[names[i]] = (*values)[i];

  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    std::vector<Tensor> inputs;
    for (const auto* d : *graphs[gi]->inputs()) inputs.push_back(reference.at(d->name()->str()));
    GraphCheck gc;
    gc.graph = nodes[gi].partition_name;
    // Each intermediate as it was right after its (last) write, in double.
    std::map<int, std::vector<double>> snapshots;
    std::map<int, const Wanted*> watched;
    for (const auto& [index, w] : inner[gi]) watched[index] = &w;
    const auto& program = programs[gi].program();
    auto observe = [&](int buffer, const void* data) {
      auto it = watched.find(buffer);
      if (it == watched.end()) return;
      const auto* b = program.buffers()->Get(buffer);
      StoredTensor t{const_cast<void*>(data), b->dtype(), 1};
      for (int64_t d : it->second->dims) t.elements *= d;
      auto& v = snapshots[buffer];
      v.resize(static_cast<size_t>(t.elements));
      const Wanted& w = *it->second;
      for (int64_t i = 0; i < t.elements; ++i)
        v[i] = LoadElement(t, w.nhwc ? NhwcIndex(w.dims, i) : i);
    };
    auto outs = programs[gi].Run(inputs, &gc.counts, observe);
    if (!outs.ok()) return outs.status().WithContext("graph " + gc.graph);
    for (size_t k = 0; k < outs->size(); ++k) {
      const std::string name = graphs[gi]->outputs()->Get(k)->name()->str();
      if ((*outs)[k].dtype() != reference.at(name).dtype())
        return InvalidArgument("output " + name + ": emulated and reference types differ");
      auto e = Compare(name, Values((*outs)[k]), reference.at(name), o, false);
      if (!e.ok()) return e.status();
      check.max_abs = std::max(check.max_abs, e->max_abs);
      check.max_rel = std::max(check.max_rel, e->max_rel);
      check.rel_l2 = std::max(check.rel_l2, e->rel_l2);
      check.ref_max_abs = std::max(check.ref_max_abs, e->ref_max_abs);
      check.beyond += e->beyond;
      check.elements += e->elements;
      gc.outputs.push_back(*e);
    }
    for (const auto& [index, v] : snapshots) {
      const int32_t stored = programs[gi].program().buffers()->Get(index)->dtype();
      const double largest = stored == onnx::TensorProto::FLOAT16    ? 65504.0
                             : stored == onnx::TensorProto::BFLOAT16 ? 3.38953139e38
                                                                     : INFINITY;
      auto e =
          Compare(watched[index]->name, v, reference.at(watched[index]->name), o, true, largest);
      if (!e.ok()) return e.status();
      check.intermediates++;
      gc.intermediates.push_back(*e);
      check.intermediates_beyond += e->beyond;
      if (e->max_abs >= check.worst_intermediate.max_abs) check.worst_intermediate = *e;
    }
    check.graphs.push_back(std::move(gc));
  }
  return check;
}

std::string Describe(const ModelCheck& c) {
  char buf[512];
  int launches = 0, convs = 0, gemms = 0, copies = 0;
  for (const auto& g : c.graphs) {
    launches += g.counts.launches;
    convs += g.counts.convs;
    gemms += g.counts.gemms;
    copies += g.counts.copies;
  }
  std::snprintf(buf, sizeof buf,
                "%zu CUDA graph(s), %d CPU node(s); steps: %d kernels, %d conv, %d gemm, %d copy; "
                "%lld elements: max abs %.3g, max rel %.3g, rel L2 %.3g (|ref| max %.3g), %lld "
                "beyond tolerance",
                c.graphs.size(), c.cpu_nodes, launches, convs, gemms, copies,
                static_cast<long long>(c.elements), c.max_abs, c.max_rel, c.rel_l2, c.ref_max_abs,
                static_cast<long long>(c.beyond));
  std::string s = buf;
  if (c.intermediates > 0) {
    std::snprintf(buf, sizeof buf,
                  "; %d intermediates: worst %s max abs %.3g (|ref| max %.3g), %lld beyond",
                  c.intermediates, c.worst_intermediate.name.c_str(), c.worst_intermediate.max_abs,
                  c.worst_intermediate.ref_max_abs, static_cast<long long>(c.intermediates_beyond));
    s += buf;
  }
  return s;
}

}  // namespace ortc::test::cuda
