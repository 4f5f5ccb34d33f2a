// RunCtxModel: stages of CPU runtime sessions and emulated CUDA graphs over one value map, so
// models that mix CUDA and CPU nodes run whatever the order of their parts.
#include "cuda_ctx_executor.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "ortc/runtime.h"
#include "program_interpreter.h"

namespace ortc::test::cuda {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCudaSource = "ortc.cuda";

Result<onnx::ModelProto> ReadModel(const fs::path& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  if (!in || !m.ParseFromIstream(&in)) return InvalidArgument("cannot read " + path.string());
  return m;
}

bool IsCuda(const onnx::NodeProto& n) {
  if (!format::IsEpContextNode(n)) return false;
  auto ep = format::EpContextNode::FromNodeProto(n);
  return ep.ok() && ep->source == kCudaSource;
}

void SetType(onnx::ValueInfoProto* vi, const Tensor& t) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(t.dtype()));
  auto* shape = tt->mutable_shape();
  for (int64_t d : t.shape()) shape->add_dim()->set_dim_value(d);
}

// One CPU stage: the ctx model reduced to `nodes`, fed from `values`; adds their outputs.
Status RunCpuStage(const onnx::ModelProto& ctx, const fs::path& ctx_path,
                   const std::vector<int>& nodes, std::map<std::string, Tensor>* values) {
  onnx::ModelProto stage = ctx;
  auto* g = stage.mutable_graph();
  g->clear_node();
  g->clear_input();
  g->clear_output();
  std::set<std::string> initializers, produced, fed;
  for (const auto& t : ctx.graph().initializer()) initializers.insert(t.name());
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> outputs;
  // The loader opens a backend's binary through its main context node (main_context=1); a
  // stage without it gets its first node of that backend promoted to main, naming the binary.
  std::map<std::string, format::EpContextNode> mains;
  std::set<std::string> have_main;
  for (const auto& n : ctx.graph().node()) {
    if (!format::IsEpContextNode(n)) continue;
    auto ep = format::EpContextNode::FromNodeProto(n);
    if (ep.ok() && ep->main_context == 1) mains.emplace(ep->source, *ep);
  }
  for (int i : nodes) {
    auto ep = format::EpContextNode::FromNodeProto(ctx.graph().node(i));
    if (ep.ok() && ep->main_context == 1) have_main.insert(ep->source);
  }
  for (int i : nodes) {
    const auto& n = ctx.graph().node(i);
    *g->add_node() = n;
    if (format::IsEpContextNode(n)) {
      auto ep = format::EpContextNode::FromNodeProto(n);
      if (!ep.ok()) return ep.status();
      if (!have_main.count(ep->source) && mains.count(ep->source)) {
        const auto& main = mains.at(ep->source);
        ep->main_context = 1;
        ep->ep_cache_context = main.ep_cache_context;
        ep->embed_mode = main.embed_mode;
        *g->mutable_node(g->node_size() - 1) = ep->ToNodeProto();
        have_main.insert(ep->source);
      }
    }
    for (const auto& in : n.input()) {
      if (in.empty() || initializers.count(in) || produced.count(in) || !fed.insert(in).second)
        continue;
      const Tensor& t = values->at(in);
      auto* vi = g->add_input();
      vi->set_name(in);
      SetType(vi, t);
      feeds.emplace_back(in, t);
    }
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      produced.insert(out);
      g->add_output()->set_name(out);
      outputs.push_back(out);
    }
  }
  const std::string bytes = stage.SerializeAsString();
  SessionOptions so;
  so.context_file_path = ctx_path;
  auto session = Session::CreateFromBuffer(std::as_bytes(std::span(bytes)), so);
  if (!session.ok()) return session.status().WithContext("CPU stage load");
  auto outs = (*session)->Run(feeds, outputs);
  if (!outs.ok()) return outs.status().WithContext("CPU stage run");
  for (size_t i = 0; i < outputs.size(); ++i) (*values)[outputs[i]] = (*outs)[i];
  return Status::Ok();
}

}  // namespace

Result<CtxRunInfo> InspectCtxModel(const fs::path& ctx) {
  auto m = ReadModel(ctx);
  if (!m.ok()) return m.status();
  CtxRunInfo info;
  for (const auto& n : m->graph().node()) (IsCuda(n) ? info.cuda_nodes : info.other_nodes)++;
  return info;
}

Result<std::vector<Tensor>> RunCtxModel(const fs::path& ctx_path,
                                        const std::vector<std::pair<std::string, Tensor>>& feeds,
                                        CtxRunInfo* info) {
  auto model = ReadModel(ctx_path);
  if (!model.ok()) return model.status();
  const auto& graph = model->graph();
  *info = CtxRunInfo{};
  std::map<std::string, Tensor> values(feeds.begin(), feeds.end());
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());

  // Binaries by their path relative to the model; a node that names none uses the last one.
  std::map<std::string, std::shared_ptr<const format::ContextBinary>> binaries;
  std::shared_ptr<const format::ContextBinary> last;
  std::vector<bool> done(graph.node_size(), false);
  std::vector<bool> cuda(graph.node_size(), false);
  for (int i = 0; i < graph.node_size(); ++i) {
    cuda[i] = IsCuda(graph.node(i));
    (cuda[i] ? info->cuda_nodes : info->other_nodes)++;
  }
  auto available = [&](const std::string& v) {
    return v.empty() || values.count(v) || initializers.count(v);
  };

  for (int remaining = graph.node_size(); remaining > 0;) {
    bool progress = false;
    // Every CUDA node whose inputs exist.
    for (int i = 0; i < graph.node_size(); ++i) {
      if (done[i] || !cuda[i]) continue;
      const auto& n = graph.node(i);
      bool ready = true;
      for (const auto& in : n.input()) ready = ready && available(in);
      if (!ready) continue;
      auto ep = format::EpContextNode::FromNodeProto(n);
      if (!ep.ok()) return ep.status();
      if (ep->embed_mode != 0) return NotImplemented("embedded CUDA context binaries");
      if (!ep->ep_cache_context.empty()) {
        auto& bin = binaries[ep->ep_cache_context];
        if (!bin) {
          auto opened =
              format::ContextBinary::OpenFile(ctx_path.parent_path() / ep->ep_cache_context);
          if (!opened.ok()) return opened.status();
          bin = std::move(opened).value();
        }
        last = bin;
      }
      if (!last) return InvalidGraph("CUDA node " + n.name() + " names no context binary");
      auto interp = ProgramInterpreter::Load(last, ep->partition_name);
      if (!interp.ok()) return interp.status().WithContext("graph " + ep->partition_name);
      std::vector<Tensor> inputs;
      for (const auto& in : n.input()) {
        if (!values.count(in))
          return NotImplemented("CUDA node input " + in + " is not a computed value");
        inputs.push_back(values.at(in));
      }
      StepCounts counts;
      auto outs = interp->Run(inputs, &counts);
      if (!outs.ok()) return outs.status().WithContext("graph " + ep->partition_name);
      if (outs->size() != static_cast<size_t>(n.output_size()))
        return InvalidGraph("graph " + ep->partition_name + " returned another output count");
      for (int k = 0; k < n.output_size(); ++k) values[n.output(k)] = (*outs)[k];
      done[i] = true;
      --remaining;
      progress = true;
    }
    // The CPU nodes that can run now, in graph (topological) order, as one session.
    std::vector<int> stage;
    std::set<std::string> produced;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (done[i] || cuda[i]) continue;
      const auto& n = graph.node(i);
      bool ready = true;
      for (const auto& in : n.input()) ready = ready && (available(in) || produced.count(in));
      if (!ready) continue;
      stage.push_back(i);
      for (const auto& out : n.output()) produced.insert(out);
    }
    if (!stage.empty()) {
      ORTC_RETURN_IF_ERROR(RunCpuStage(*model, ctx_path, stage, &values));
      info->cpu_stages++;
      for (int i : stage) done[i] = true;
      remaining -= static_cast<int>(stage.size());
      progress = true;
    }
    if (!progress) return InvalidGraph("the ctx model has nodes whose inputs are never computed");
  }

  std::vector<Tensor> outputs;
  for (const auto& out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      return NotImplemented("graph output " + out.name() + " is not computed by a node");
    outputs.push_back(it->second);
  }
  return outputs;
}

}  // namespace ortc::test::cuda
