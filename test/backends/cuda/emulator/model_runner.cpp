// CheckCompiledModel: compile through the real CLI, take every CUDA graph's inputs and outputs
// from the CPU runtime running the source model (those values exposed as extra graph outputs),
// run the graph in the emulator on the same inputs and measure the differences.
#include "model_runner.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "format/ep_context.h"
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
    default:
      return std::nan("");
  }
}

Result<OutputError> Compare(const std::string& name, const Tensor& got, const Tensor& ref,
                            const CheckOptions& o) {
  if (got.dtype() != ref.dtype() || got.elements() != ref.elements())
    return InvalidArgument("output " + name + ": emulated and reference differ in type or size");
  OutputError e;
  e.name = name;
  e.elements = ref.elements();
  for (int64_t i = 0; i < e.elements; ++i) {
    const double g = Value(got, i), r = Value(ref, i);
    const double d = std::isnan(g) != std::isnan(r) ? INFINITY : std::fabs(g - r);
    e.max_abs = std::max(e.max_abs, d);
    e.ref_max_abs = std::max(e.ref_max_abs, std::fabs(r));
    if (std::fabs(r) > 1e-3) e.max_rel = std::max(e.max_rel, d / std::fabs(r));
    if (!(d <= o.atol + o.rtol * std::fabs(r))) e.beyond++;
  }
  return e;
}

// The source model with `names` added as graph outputs, so the CPU runtime returns them.
Result<std::unique_ptr<Session>> ReferenceSession(const fs::path& model,
                                                  const std::vector<const fb::TensorDesc*>& extra) {
  onnx::ModelProto proto = LoadProto(model);
  std::set<std::string> have;
  for (const auto& out : proto.graph().output()) have.insert(out.name());
  for (const auto* d : extra) {
    if (!d->name() || !have.insert(d->name()->str()).second) continue;
    auto* vi = proto.mutable_graph()->add_output();
    vi->set_name(d->name()->str());
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(d->dtype());
    auto* shape = tt->mutable_shape();
    if (d->dims())
      for (int64_t x : *d->dims()) shape->add_dim()->set_dim_value(x);
  }
  const std::string bytes = proto.SerializeAsString();
  SessionOptions so;
  so.context_file_path = model;
  return Session::CreateFromBuffer(BytesOf(bytes), so);
}

}  // namespace

Result<ModelCheck> CheckCompiledModel(const fs::path& model, const fs::path& work,
                                      const CheckOptions& o) {
  ModelCheck check;
  fs::create_directories(work);
  const fs::path ctx = work / (model.stem().string() + "_ctx.onnx");
  // One target keeps NVRTC's share of the test short; the emulator runs the source text.
  auto r = RunOrtc("compile '" + model.string() + "' --ep cuda,cpu --target-arch sm_80 -q" +
                       ShapeArg(o.input_shapes) + " --precision " + o.precision + " -o '" +
                       ctx.string() + "'",
                   true);
  if (r.exit_code != 0) {
    if (r.out.find("NVRTC") != std::string::npos) {
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

  // Reference values of every CUDA graph's inputs and outputs, on one set of random inputs.
  std::vector<const fb::TensorDesc*> wanted;
  std::vector<const fb::Graph*> graphs;
  for (const auto& n : nodes) {
    const fb::Graph* g = bin->FindGraph(n.partition_name);
    if (!g || !g->inputs() || !g->outputs())
      return InvalidGraph("the binary lacks graph " + n.partition_name);
    graphs.push_back(g);
    for (const auto* d : *g->inputs()) wanted.push_back(d);
    for (const auto* d : *g->outputs()) wanted.push_back(d);
  }
  auto session = ReferenceSession(model, wanted);
  if (!session.ok()) return session.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  unsigned seed = o.seed;
  for (const auto& [name, dims] : o.input_shapes)
    feeds.emplace_back(name, RandomTensor(dims, seed++));
  std::vector<std::string> names;
  for (const auto* d : wanted) names.push_back(d->name()->str());
  auto values = (*session)->Run(feeds, names);
  if (!values.ok()) return values.status();
  std::map<std::string, Tensor> reference;
  for (size_t i = 0; i < names.size(); ++i) reference[names[i]] = (*values)[i];

  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    auto interp = ProgramInterpreter::Load(bin, nodes[gi].partition_name);
    if (!interp.ok()) return interp.status();
    std::vector<Tensor> inputs;
    for (const auto* d : *graphs[gi]->inputs()) inputs.push_back(reference.at(d->name()->str()));
    GraphCheck gc;
    gc.graph = nodes[gi].partition_name;
    auto outs = interp->Run(inputs, &gc.counts);
    if (!outs.ok()) return outs.status().WithContext("graph " + gc.graph);
    for (size_t k = 0; k < outs->size(); ++k) {
      const std::string name = graphs[gi]->outputs()->Get(k)->name()->str();
      auto e = Compare(name, (*outs)[k], reference.at(name), o);
      if (!e.ok()) return e.status();
      check.max_abs = std::max(check.max_abs, e->max_abs);
      check.max_rel = std::max(check.max_rel, e->max_rel);
      check.ref_max_abs = std::max(check.ref_max_abs, e->ref_max_abs);
      check.beyond += e->beyond;
      check.elements += e->elements;
      gc.outputs.push_back(*e);
    }
    check.graphs.push_back(std::move(gc));
  }
  return check;
}

std::string Describe(const ModelCheck& c) {
  char buf[256];
  int launches = 0, convs = 0, gemms = 0, copies = 0;
  for (const auto& g : c.graphs) {
    launches += g.counts.launches;
    convs += g.counts.convs;
    gemms += g.counts.gemms;
    copies += g.counts.copies;
  }
  std::snprintf(buf, sizeof buf,
                "%zu CUDA graph(s), %d CPU node(s); steps: %d kernels, %d conv, %d gemm, %d copy; "
                "%lld elements: max abs %.3g, max rel %.3g (|ref| max %.3g), %lld beyond tolerance",
                c.graphs.size(), c.cpu_nodes, launches, convs, gemms, copies,
                static_cast<long long>(c.elements), c.max_abs, c.max_rel, c.ref_max_abs,
                static_cast<long long>(c.beyond));
  return buf;
}

}  // namespace ortc::test::cuda
