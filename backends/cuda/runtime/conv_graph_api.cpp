// ConvCall through cuDNN's graph (backend) API: one operation graph per call, conv -> (+ alpha2 *
// z) -> (+ bias) -> (Relu | clipped Relu | tanh Gelu), so residual, bias and activation run in the
// convolution's epilogue; the first engine the heuristics rank that finalizes within the
// workspace cap and the precision rules becomes the execution plan, and its variant pack holds
// the buffers' fixed device addresses. A run is then one cudnnBackendExecute.
#include <algorithm>

#include "conv_plan.h"

// The handle attributes of the plan and the operation graph are deprecated in cuDNN 9 but still
// read by its early releases; setting them is harmless on later ones.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace ortc::cuda_rt {
namespace {

enum Uid : int64_t { kX = 1, kW, kY, kZ, kBias, kVirtual = 100 };

// Creates descriptors into the plan's keep list and remembers the first failure.
class Builder {
 public:
  explicit Builder(GraphConv* g) : g_(g) {}

  cudnnBackendDescriptor_t Make(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    if (!ok()) return nullptr;
    Check(Cudnn().cudnnBackendCreateDescriptor(type, &d), "cudnnBackendCreateDescriptor");
    if (d) g_->keep.push_back(d);
    return d;
  }
  void Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, int64_t count, const void* values) {
    if (ok())
      Check(Cudnn().cudnnBackendSetAttribute(d, name, type, count, values),
            "cudnnBackendSetAttribute");
  }
  template <typename T>
  void Set1(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
            cudnnBackendAttributeType_t type, T value) {
    Set(d, name, type, 1, &value);
  }
  void Finalize(cudnnBackendDescriptor_t d, const char* what) {
    if (ok()) Check(Cudnn().cudnnBackendFinalize(d), what);
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  void Check(cudnnStatus_t s, const char* what) {
    if (s != CUDNN_STATUS_SUCCESS && error_.empty()) error_ = CudnnText(s, what);
  }
  GraphConv* g_;
  std::string error_;
};

// Strides of logical [N, C, spatial...] dims stored channels-last (NHWC, KRSC) or packed.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims, bool channels_last) {
  const size_t n = dims.size();
  std::vector<int64_t> s(n, 1);
  if (channels_last) {
    int64_t step = dims[1];
    for (size_t i = n - 1; i >= 2; --i) {
      s[i] = step;
      step *= dims[i];
    }
    s[1] = 1;
    s[0] = step;
  } else {
    for (size_t i = n - 1; i-- > 0;) s[i] = s[i + 1] * dims[i + 1];
  }
  return s;
}

// The largest power of two (up to 16) the address is aligned to: engines pick vector widths.
int64_t Alignment(CUdeviceptr p) {
  int64_t a = 16;
  while (a > 1 && p % static_cast<uint64_t>(a) != 0) a /= 2;
  return a;
}

cudnnBackendDescriptor_t Tensor(Builder& b, int64_t uid, cudnnDataType_t type,
                                const std::vector<int64_t>& dims, bool channels_last,
                                CUdeviceptr ptr, bool is_virtual) {
  cudnnBackendDescriptor_t t = b.Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::vector<int64_t> strides = Strides(dims, channels_last);
  const auto n = static_cast<int64_t>(dims.size());
  b.Set1(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type);
  b.Set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n, dims.data());
  b.Set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n, strides.data());
  b.Set1(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid);
  b.Set1(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, is_virtual ? 16 : Alignment(ptr));
  if (is_virtual) b.Set1(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, true);
  b.Finalize(t, "cudnnBackendFinalize(tensor)");
  return t;
}

// A clipped ReLU's bounds (the Clip activation).
struct ReluClip {
  double lower = 0, upper = 0;
};

// y = mode(x) or y = mode(x, other) with other scaled by alpha2; a RELU_FWD with `clip` clamps
// to [lower, upper].
cudnnBackendDescriptor_t Pointwise(Builder& b, cudnnPointwiseMode_t mode,
                                   cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t other,
                                   cudnnBackendDescriptor_t y, float alpha2,
                                   const ReluClip* clip = nullptr) {
  cudnnBackendDescriptor_t pw = b.Make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  b.Set1(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode);
  b.Set1(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
  if (clip) {
    b.Set1(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, clip->lower);
    b.Set1(pw, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, clip->upper);
  }
  b.Finalize(pw, "cudnnBackendFinalize(pointwise)");
  cudnnBackendDescriptor_t op = b.Make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  b.Set1(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw);
  b.Set1(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x);
  if (other) {
    b.Set1(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, other);
    if (alpha2 != 1.f) b.Set1(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, alpha2);
  }
  b.Set1(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y);
  b.Finalize(op, "cudnnBackendFinalize(pointwise operation)");
  return op;
}

// Numerical notes that mean an fp32 engine does not compute in IEEE fp32.
bool RoundsFp32(cudnnBackendDescriptor_t engine) {
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t n = 0;
  if (Cudnn().cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                       CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                                       &n, notes) != CUDNN_STATUS_SUCCESS)
    return true;  // unknown: treat as rounding, the strict path must not guess
  for (int64_t i = 0; i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
        notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
        notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)
      return true;
  }
  return false;
}

}  // namespace

void ReleaseGraphConv(GraphConv* g) {
  const auto& d = Cudnn();
  if (g->pack) d.cudnnBackendDestroyDescriptor(g->pack);
  if (g->plan) d.cudnnBackendDestroyDescriptor(g->plan);
  for (auto it = g->keep.rbegin(); it != g->keep.rend(); ++it) d.cudnnBackendDestroyDescriptor(*it);
  *g = GraphConv{};
}

bool PlanConvGraph(const LibraryContext& lib, const fbc::ConvCall& c, BufferLookup buffers,
                   GraphConv* out, std::string* why) {
  if (c.transposed()) {
    *why = "ConvTranspose runs through the legacy backward-data call";
    return false;
  }
  cudnnDataType_t io = CUDNN_DATA_FLOAT;
  if (!CudnnDataType(buffers[c.x()].dtype, &io)) {
    *why = "element type is not float/float16/bfloat16";
    return false;
  }
  const bool nhwc = c.layout() == fbc::TensorLayout::NHWC;
  const std::vector<int64_t> xd = ConvDims4(c.x_dims()), wd = ConvDims4(c.w_dims()),
                             yd = ConvDims4(c.y_dims());
  const size_t spatial = c.x_dims()->size() - 2;
  const std::vector<int64_t> pads = ConvSpatial(c.pads(), spatial, 0);
  const std::vector<int64_t> strides = ConvSpatial(c.strides(), spatial, 1);
  const std::vector<int64_t> dilations = ConvSpatial(c.dilations(), spatial, 1);
  std::vector<int64_t> bd(yd.size(), 1);
  bd[1] = yd[1];

  Builder b(out);
  const bool has_z = c.z() >= 0 && c.alpha2() != 0.f, has_bias = c.bias() >= 0;
  const bool has_act = c.activation() != fbc::Activation::None;
  int64_t next_virtual = kVirtual;
  // The value after each stage: the last one writes y, the others stay virtual (on chip).
  const int stages = 1 + (has_z ? 1 : 0) + (has_bias ? 1 : 0) + (has_act ? 1 : 0);
  int stage = 0;
  auto stage_out = [&]() {
    ++stage;
    if (stage == stages) return Tensor(b, kY, io, yd, nhwc, buffers[c.y()].ptr, false);
    return Tensor(b, next_virtual++, CUDNN_DATA_FLOAT, yd, nhwc, 0, true);
  };

  cudnnBackendDescriptor_t x = Tensor(b, kX, io, xd, nhwc, buffers[c.x()].ptr, false);
  cudnnBackendDescriptor_t w = Tensor(b, kW, io, wd, nhwc, buffers[c.w()].ptr, false);
  cudnnBackendDescriptor_t conv = b.Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const auto nsp = static_cast<int64_t>(pads.size());
  b.Set1(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
  b.Set1(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
         CUDNN_CROSS_CORRELATION);
  b.Set1(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, nsp);
  b.Set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nsp, dilations.data());
  b.Set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, nsp, strides.data());
  b.Set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nsp, pads.data());
  b.Set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nsp, pads.data());
  b.Finalize(conv, "cudnnBackendFinalize(convolution)");

  std::vector<cudnnBackendDescriptor_t> ops;
  cudnnBackendDescriptor_t value = stage_out();
  cudnnBackendDescriptor_t op = b.Make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  b.Set1(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, x);
  b.Set1(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, w);
  b.Set1(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, value);
  b.Set1(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
         conv);
  b.Set1(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, c.alpha());
  b.Set1(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.f);
  b.Finalize(op, "cudnnBackendFinalize(convolution operation)");
  ops.push_back(op);
  std::vector<int64_t> uids = {kX, kW, kY};
  std::vector<void*> ptrs = {reinterpret_cast<void*>(buffers[c.x()].ptr),
                             reinterpret_cast<void*>(buffers[c.w()].ptr),
                             reinterpret_cast<void*>(buffers[c.y()].ptr)};
  if (has_z) {
    cudnnBackendDescriptor_t z = Tensor(b, kZ, io, yd, nhwc, buffers[c.z()].ptr, false);
    cudnnBackendDescriptor_t next = stage_out();
    ops.push_back(Pointwise(b, CUDNN_POINTWISE_ADD, value, z, next, c.alpha2()));
    value = next;
    uids.push_back(kZ);
    ptrs.push_back(reinterpret_cast<void*>(buffers[c.z()].ptr));
  }
  if (has_bias) {
    cudnnBackendDescriptor_t bias = Tensor(b, kBias, io, bd, nhwc, buffers[c.bias()].ptr, false);
    cudnnBackendDescriptor_t next = stage_out();
    ops.push_back(Pointwise(b, CUDNN_POINTWISE_ADD, value, bias, next, 1.f));
    value = next;
    uids.push_back(kBias);
    ptrs.push_back(reinterpret_cast<void*>(buffers[c.bias()].ptr));
  }
  if (has_act) {
    const bool gelu = c.activation() == fbc::Activation::Gelu;
    const ReluClip clip{c.clip_min(), c.clip_max()};
    cudnnBackendDescriptor_t next = stage_out();
    ops.push_back(
        Pointwise(b, gelu ? CUDNN_POINTWISE_GELU_APPROX_TANH_FWD : CUDNN_POINTWISE_RELU_FWD, value,
                  nullptr, next, 1.f, c.activation() == fbc::Activation::Clip ? &clip : nullptr));
  }

  cudnnBackendDescriptor_t graph = b.Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  b.Set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        static_cast<int64_t>(ops.size()), ops.data());
  b.Set1(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, lib.cudnn);
  b.Finalize(graph, "cudnnBackendFinalize(operation graph)");
  if (!b.ok()) {
    *why = "the operation graph was refused: " + b.error();
    return false;
  }

  const auto& d = Cudnn();
  const bool strict_fp32 = io == CUDNN_DATA_FLOAT && !AllowsTf32(lib.precision);
  int tried = 0, rounding = 0, too_big = 0, refused = 0;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    cudnnBackendDescriptor_t heur = b.Make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    b.Set1(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, graph);
    b.Set1(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
    b.Finalize(heur, "cudnnBackendFinalize(engine heuristics)");
    int64_t count = 0;
    if (!b.ok() || d.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                              nullptr) != CUDNN_STATUS_SUCCESS)
      continue;
    count = std::min<int64_t>(count, 32);
    std::vector<cudnnBackendDescriptor_t> cfgs;
    for (int64_t i = 0; i < count && b.ok(); ++i)
      cfgs.push_back(b.Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    int64_t got = 0;
    if (!b.ok() || count == 0 ||
        d.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                   cfgs.data()) != CUDNN_STATUS_SUCCESS)
      continue;
    for (int64_t i = 0; i < got && i < count; ++i) {
      ++tried;
      if (strict_fp32) {
        cudnnBackendDescriptor_t engine = b.Make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        int64_t n = 0;
        if (!b.ok() ||
            d.cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                       &engine) != CUDNN_STATUS_SUCCESS ||
            RoundsFp32(engine)) {
          ++rounding;
          continue;
        }
      }
      cudnnBackendDescriptor_t plan = nullptr;
      if (d.cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) !=
          CUDNN_STATUS_SUCCESS)
        break;
      int64_t ws = 0, n = 0;
      bool ok =
          d.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                     &lib.cudnn) == CUDNN_STATUS_SUCCESS &&
          d.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                     &cfgs[i]) == CUDNN_STATUS_SUCCESS &&
          d.cudnnBackendFinalize(plan) == CUDNN_STATUS_SUCCESS;
      if (!ok) ++refused;
      ok = ok && d.cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, &n, &ws) == CUDNN_STATUS_SUCCESS;
      if (ok && (ws < 0 || static_cast<uint64_t>(ws) > lib.workspace_bytes)) {
        ++too_big;
        ok = false;
      }
      if (!ok) {
        d.cudnnBackendDestroyDescriptor(plan);
        continue;
      }
      out->plan = plan;
      break;
    }
    if (out->plan) break;
  }
  if (!out->plan) {
    *why = "cuDNN has no engine for this fused convolution (" + std::to_string(tried) +
           " candidates: " + std::to_string(rounding) + " round fp32 inputs (TF32), " +
           std::to_string(refused) + " refused the graph, " + std::to_string(too_big) +
           " need more than the " + std::to_string(lib.workspace_bytes) + "-byte workspace)";
    return false;
  }

  // The variant pack: every tensor's fixed address and the instance's workspace.
  void* workspace = reinterpret_cast<void*>(lib.workspace);
  cudnnBackendDescriptor_t pack = nullptr;
  bool ok = d.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack) ==
            CUDNN_STATUS_SUCCESS;
  out->pack = pack;
  ok = ok &&
       d.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                                  static_cast<int64_t>(uids.size()),
                                  uids.data()) == CUDNN_STATUS_SUCCESS &&
       d.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                  static_cast<int64_t>(ptrs.size()),
                                  ptrs.data()) == CUDNN_STATUS_SUCCESS &&
       d.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                  &workspace) == CUDNN_STATUS_SUCCESS &&
       d.cudnnBackendFinalize(pack) == CUDNN_STATUS_SUCCESS;
  if (!ok) {
    *why = "cuDNN refused the variant pack";
    return false;
  }
  return true;
}

}  // namespace ortc::cuda_rt
