// A ConvCall's plan: the graph API when cuDNN has an engine for the fused convolution, else the
// legacy calls (with the reason kept for describe_graph); both are built once at load.
#include "conv_plan.h"

namespace ortc::cuda_rt {
namespace {

bool Valid(int index, BufferLookup buffers) {
  return index >= 0 && static_cast<size_t>(index) < buffers.size();
}

}  // namespace

bool CudnnDataType(int onnx, cudnnDataType_t* out) {
  switch (onnx) {
    case 1:
      *out = CUDNN_DATA_FLOAT;
      return true;
    case 10:
      *out = CUDNN_DATA_HALF;
      return true;
    case 16:
      *out = CUDNN_DATA_BFLOAT16;
      return true;
    default:
      return false;
  }
}

std::vector<int64_t> ConvDims4(const flatbuffers::Vector<int64_t>* v) {
  std::vector<int64_t> d(v->begin(), v->end());
  while (d.size() < 4) d.push_back(1);
  return d;
}

std::vector<int64_t> ConvSpatial(const flatbuffers::Vector<int64_t>* v, size_t spatial,
                                 int64_t fill) {
  std::vector<int64_t> r(spatial < 2 ? 2 : spatial, fill);
  for (size_t i = 0; v && i < spatial && i < v->size(); ++i)
    r[i] = v->Get(static_cast<uint32_t>(i));
  return r;
}

void ConvPlanDeleter::operator()(ConvPlan* p) const {
  ReleaseGraphConv(&p->graph);
  ReleaseLegacyConv(&p->legacy);
  delete p;
}

OrtcPluginStatus PlanConv(const LibraryContext& lib, const fbc::ConvCall& c, BufferLookup buffers,
                          ConvPlanPtr* out) {
  if (!Valid(c.x(), buffers) || !Valid(c.w(), buffers) || !Valid(c.y(), buffers) ||
      (c.bias() >= 0 && !Valid(c.bias(), buffers)) || (c.z() >= 0 && !Valid(c.z(), buffers)))
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "ConvCall names a buffer out of range");
  if (!c.x_dims() || !c.w_dims() || !c.y_dims() || c.x_dims()->size() < 3 ||
      c.x_dims()->size() > 5 || c.w_dims()->size() != c.x_dims()->size() ||
      c.y_dims()->size() != c.x_dims()->size())
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "ConvCall dims must be 3-D to 5-D and agree");
  ConvPlanPtr p(new ConvPlan());
  p->graph_api = PlanConvGraph(lib, c, buffers, &p->graph, &p->fallback_reason);
  if (!p->graph_api) {
    ReleaseGraphConv(&p->graph);
    ORTC_PLUGIN_TRY(PlanConvLegacy(lib, c, buffers, &p->legacy));
  }
  *out = std::move(p);
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus RunConv(const ConvPlan& p, const LibraryContext& lib) {
  if (!p.graph_api) return RunConvLegacy(p.legacy, lib);
  ORTC_CUDNN(Cudnn().cudnnBackendExecute(lib.cudnn, p.graph.plan, p.graph.pack));
  return ORTC_PLUGIN_OK;
}

const char* ConvPlanApi(const ConvPlan& p) {
  return p.graph_api ? "graph_api" : "legacy";
}

const std::string& ConvPlanFallbackReason(const ConvPlan& p) {
  return p.fallback_reason;
}

}  // namespace ortc::cuda_rt
