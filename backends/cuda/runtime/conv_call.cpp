// ConvCall through cuDNN's legacy API: tensor/filter/convolution descriptors (NCHW or NHWC,
// group count), the forward or backward-data algorithm chosen at load from cuDNN's heuristics,
// and one fused conv+bias+activation(+z) call when the plan has a bias.
#include <vector>

#include "library_calls.h"

namespace ortc::cuda_rt {

struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, z = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwd_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  size_t workspace = 0;
  bool transposed = false, relu = false, has_z = false;
  float alpha = 1, alpha2 = 0;
  CUdeviceptr px = 0, pw = 0, pb = 0, pz = 0, py = 0;
};

void ConvPlanDeleter::operator()(ConvPlan* p) const {
  const auto& d = Cudnn();
  if (p->x) d.cudnnDestroyTensorDescriptor(p->x);
  if (p->y) d.cudnnDestroyTensorDescriptor(p->y);
  if (p->z) d.cudnnDestroyTensorDescriptor(p->z);
  if (p->bias) d.cudnnDestroyTensorDescriptor(p->bias);
  if (p->w) d.cudnnDestroyFilterDescriptor(p->w);
  if (p->conv) d.cudnnDestroyConvolutionDescriptor(p->conv);
  if (p->act) d.cudnnDestroyActivationDescriptor(p->act);
  delete p;
}

namespace {

bool CudnnType(int onnx, cudnnDataType_t* out) {
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

// cuDNN wants at least 4 dims: a 1-D convolution gets a unit trailing spatial dim.
std::vector<int> Dims4(const flatbuffers::Vector<int64_t>* v) {
  std::vector<int> d;
  for (int64_t x : *v) d.push_back(static_cast<int>(x));
  while (d.size() < 4) d.push_back(1);
  return d;
}

bool Valid(int index, BufferLookup buffers) {
  return index >= 0 && static_cast<size_t>(index) < buffers.size();
}

}  // namespace

OrtcPluginStatus PlanConv(cudnnHandle_t handle, const fbc::ConvCall& c, BufferLookup buffers,
                          uint64_t workspace_bytes, ConvPlanPtr* out) {
  const auto& d = Cudnn();
  if (!Valid(c.x(), buffers) || !Valid(c.w(), buffers) || !Valid(c.y(), buffers) ||
      (c.bias() >= 0 && !Valid(c.bias(), buffers)) || (c.z() >= 0 && !Valid(c.z(), buffers)))
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "ConvCall names a buffer out of range");
  if (!c.x_dims() || !c.w_dims() || !c.y_dims() || c.x_dims()->size() < 3 ||
      c.x_dims()->size() > 5 || c.w_dims()->size() != c.x_dims()->size() ||
      c.y_dims()->size() != c.x_dims()->size())
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "ConvCall dims must be 3-D to 5-D and agree");
  const size_t spatial = c.x_dims()->size() - 2;
  auto attr = [&](const flatbuffers::Vector<int64_t>* v, size_t n, int fill) {
    std::vector<int> r(spatial < 2 ? 2 : spatial, fill);
    for (size_t i = 0; v && i < n && i < v->size(); ++i) r[i] = static_cast<int>(v->Get(i));
    return r;
  };
  const std::vector<int> pads = attr(c.pads(), spatial, 0);  // begin pads (symmetric)
  const std::vector<int> strides = attr(c.strides(), spatial, 1);
  const std::vector<int> dilations = attr(c.dilations(), spatial, 1);
  if (c.activation() == fbc::Activation::Gelu)
    return Fail(ORTC_PLUGIN_NOT_IMPLEMENTED,
                "ConvCall with a GELU activation: cuDNN's legacy fused call has no GELU");

  cudnnDataType_t io = CUDNN_DATA_FLOAT, compute = CUDNN_DATA_FLOAT;
  if (!CudnnType(buffers[c.x()].dtype, &io) || !CudnnType(c.compute_dtype(), &compute))
    return Fail(ORTC_PLUGIN_NOT_IMPLEMENTED, "ConvCall element type is not float/float16/bfloat16");
  const cudnnTensorFormat_t format =
      c.layout() == fbc::TensorLayout::NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;

  ConvPlanPtr p(new ConvPlan());
  p->transposed = c.transposed();
  p->relu = c.activation() == fbc::Activation::Relu;
  p->alpha = c.alpha();
  p->alpha2 = c.alpha2();
  p->px = buffers[c.x()].ptr;
  p->pw = buffers[c.w()].ptr;
  p->py = buffers[c.y()].ptr;
  p->pb = c.bias() >= 0 ? buffers[c.bias()].ptr : 0;
  p->has_z = c.z() >= 0;
  p->pz = p->has_z ? buffers[c.z()].ptr : p->py;  // no z: y itself, scaled by alpha2 = 0

  std::vector<int> xd = Dims4(c.x_dims()), wd = Dims4(c.w_dims()), yd = Dims4(c.y_dims());
  const int nb = static_cast<int>(xd.size());
  ORTC_CUDNN(d.cudnnCreateTensorDescriptor(&p->x));
  ORTC_CUDNN(d.cudnnSetTensorNdDescriptorEx(p->x, format, io, nb, xd.data()));
  ORTC_CUDNN(d.cudnnCreateTensorDescriptor(&p->y));
  ORTC_CUDNN(d.cudnnSetTensorNdDescriptorEx(p->y, format, io, nb, yd.data()));
  ORTC_CUDNN(d.cudnnCreateTensorDescriptor(&p->z));
  ORTC_CUDNN(d.cudnnSetTensorNdDescriptorEx(p->z, format, io, nb, yd.data()));
  ORTC_CUDNN(d.cudnnCreateFilterDescriptor(&p->w));
  ORTC_CUDNN(d.cudnnSetFilterNdDescriptor(p->w, io, format, nb, wd.data()));
  ORTC_CUDNN(d.cudnnCreateConvolutionDescriptor(&p->conv));
  ORTC_CUDNN(d.cudnnSetConvolutionNdDescriptor(p->conv, nb - 2, pads.data(), strides.data(),
                                               dilations.data(), CUDNN_CROSS_CORRELATION, compute));
  ORTC_CUDNN(d.cudnnSetConvolutionGroupCount(p->conv, static_cast<int>(c.group())));
  // Tensor cores for reduced precision; fp32 keeps full-precision math (no TF32 conversion).
  ORTC_CUDNN(d.cudnnSetConvolutionMathType(
      p->conv, io == CUDNN_DATA_FLOAT ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH));
  if (c.bias() >= 0 || p->relu) {
    // Bias: one value per output channel, broadcast over N and space.
    std::vector<int> bd(static_cast<size_t>(nb), 1);
    bd[1] = yd[1];
    ORTC_CUDNN(d.cudnnCreateTensorDescriptor(&p->bias));
    ORTC_CUDNN(d.cudnnSetTensorNdDescriptorEx(p->bias, format, io, nb, bd.data()));
    ORTC_CUDNN(d.cudnnCreateActivationDescriptor(&p->act));
    ORTC_CUDNN(d.cudnnSetActivationDescriptor(
        p->act, p->relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
        CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }

  if (!p->transposed) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    ORTC_CUDNN(d.cudnnGetConvolutionForwardAlgorithm_v7(
        handle, p->x, p->w, p->conv, p->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
    // The fused call with an identity activation accepts only IMPLICIT_PRECOMP_GEMM.
    const bool fused_identity = c.bias() >= 0 && !p->relu;
    bool found = false;
    for (int i = 0; i < returned && !found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > workspace_bytes) continue;
      if (fused_identity && perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        continue;
      p->fwd_algo = perf[i].algo;
      found = true;
    }
    if (!found && !fused_identity)
      return Fail(ORTC_PLUGIN_EP_FAIL, "cuDNN offers no forward algorithm within the " +
                                           std::to_string(workspace_bytes) +
                                           "-byte workspace the plan reserved");
    ORTC_CUDNN(d.cudnnGetConvolutionForwardWorkspaceSize(handle, p->x, p->w, p->conv, p->y,
                                                         p->fwd_algo, &p->workspace));
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    // Transposed: x plays cuDNN's dy and y its dx.
    ORTC_CUDNN(d.cudnnGetConvolutionBackwardDataAlgorithm_v7(
        handle, p->w, p->x, p->conv, p->y, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf));
    bool found = false;
    for (int i = 0; i < returned && !found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > workspace_bytes) continue;
      p->bwd_algo = perf[i].algo;
      found = true;
    }
    if (!found)
      return Fail(ORTC_PLUGIN_EP_FAIL, "cuDNN offers no backward-data algorithm within the " +
                                           std::to_string(workspace_bytes) + "-byte workspace");
    ORTC_CUDNN(d.cudnnGetConvolutionBackwardDataWorkspaceSize(handle, p->w, p->x, p->conv, p->y,
                                                              p->bwd_algo, &p->workspace));
  }
  if (p->workspace > workspace_bytes)
    return Fail(ORTC_PLUGIN_EP_FAIL, "the convolution needs " + std::to_string(p->workspace) +
                                         " workspace bytes; the plan reserved " +
                                         std::to_string(workspace_bytes));
  *out = std::move(p);
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus RunConv(const ConvPlan& p, cudnnHandle_t handle, CUdeviceptr workspace,
                         CUstream stream) {
  const auto& d = Cudnn();
  ORTC_CUDNN(d.cudnnSetStream(handle, reinterpret_cast<cudaStream_t>(stream)));
  auto ptr = [](CUdeviceptr v) { return reinterpret_cast<void*>(static_cast<uintptr_t>(v)); };
  void* ws = ptr(workspace);
  const float one = 1.f, zero = 0.f;
  if (!p.transposed && p.pb) {
    // y = act(alpha * conv(x, w) + alpha2 * z + bias), one call.
    ORTC_CUDNN(d.cudnnConvolutionBiasActivationForward(
        handle, &p.alpha, p.x, ptr(p.px), p.w, ptr(p.pw), p.conv, p.fwd_algo, ws, p.workspace,
        &p.alpha2, p.z, ptr(p.pz), p.bias, ptr(p.pb), p.act, p.y, ptr(p.py)));
    return ORTC_PLUGIN_OK;
  }
  // Unfused: y = alpha * op(x, w) + beta * y, where y first holds z when the plan has one.
  float beta = 0.f;
  if (p.has_z && p.alpha2 != 0.f) {
    if (p.pz != p.py) {
      ORTC_CUDNN(d.cudnnAddTensor(handle, &one, p.z, ptr(p.pz), &zero, p.y, ptr(p.py)));
    }
    beta = p.alpha2;
  }
  if (!p.transposed) {
    ORTC_CUDNN(d.cudnnConvolutionForward(handle, &p.alpha, p.x, ptr(p.px), p.w, ptr(p.pw), p.conv,
                                         p.fwd_algo, ws, p.workspace, &beta, p.y, ptr(p.py)));
  } else {
    ORTC_CUDNN(d.cudnnConvolutionBackwardData(handle, &p.alpha, p.w, ptr(p.pw), p.x, ptr(p.px),
                                              p.conv, p.bwd_algo, ws, p.workspace, &beta, p.y,
                                              ptr(p.py)));
    if (p.pb) ORTC_CUDNN(d.cudnnAddTensor(handle, &one, p.bias, ptr(p.pb), &one, p.y, ptr(p.py)));
  }
  if (p.relu)
    ORTC_CUDNN(
        d.cudnnActivationForward(handle, p.act, &one, p.y, ptr(p.py), &zero, p.y, ptr(p.py)));
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
