// ConvCall through cuDNN's legacy API: tensor/filter/convolution descriptors (NCHW or NHWC,
// group count), the forward or backward-data algorithm chosen at load from cuDNN's heuristics,
// and one fused conv+bias+activation(+z) call when the plan has a bias. Used for ConvTranspose
// and when the graph API has no engine for a convolution.
#include <vector>

#include "conv_plan.h"

namespace ortc::cuda_rt {
namespace {

std::vector<int> Ints(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

// fp32 data: FMA kernels only (no TF32) unless the program is tf32; fp16/bf16: tensor cores.
cudnnMathType_t MathType(cudnnDataType_t io, fbc::Precision precision) {
  if (io != CUDNN_DATA_FLOAT) return CUDNN_TENSOR_OP_MATH;
  return AllowsTf32(precision) ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

}  // namespace

void ReleaseLegacyConv(LegacyConv* p) {
  const auto& d = Cudnn();
  if (p->x) d.cudnnDestroyTensorDescriptor(p->x);
  if (p->y) d.cudnnDestroyTensorDescriptor(p->y);
  if (p->z) d.cudnnDestroyTensorDescriptor(p->z);
  if (p->bias) d.cudnnDestroyTensorDescriptor(p->bias);
  if (p->w) d.cudnnDestroyFilterDescriptor(p->w);
  if (p->conv) d.cudnnDestroyConvolutionDescriptor(p->conv);
  if (p->act) d.cudnnDestroyActivationDescriptor(p->act);
  if (p->clip) d.cudnnDestroyActivationDescriptor(p->clip);
  *p = LegacyConv{};
}

OrtcPluginStatus PlanConvLegacy(const LibraryContext& lib, const fbc::ConvCall& c,
                                BufferLookup buffers, LegacyConv* p) {
  const auto& d = Cudnn();
  const size_t spatial = c.x_dims()->size() - 2;
  const std::vector<int> pads = Ints(ConvSpatial(c.pads(), spatial, 0));  // begin (symmetric)
  const std::vector<int> strides = Ints(ConvSpatial(c.strides(), spatial, 1));
  const std::vector<int> dilations = Ints(ConvSpatial(c.dilations(), spatial, 1));
  if (c.activation() == fbc::Activation::Gelu)
    return Fail(ORTC_PLUGIN_NOT_IMPLEMENTED,
                "ConvCall with a GELU activation: cuDNN's legacy fused call has no GELU");

  cudnnDataType_t io = CUDNN_DATA_FLOAT, compute = CUDNN_DATA_FLOAT;
  if (!CudnnDataType(buffers[c.x()].dtype, &io) || !CudnnDataType(c.compute_dtype(), &compute))
    return Fail(ORTC_PLUGIN_NOT_IMPLEMENTED, "ConvCall element type is not float/float16/bfloat16");
  const cudnnTensorFormat_t format =
      c.layout() == fbc::TensorLayout::NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;

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

  const std::vector<int> xd = Ints(ConvDims4(c.x_dims())), wd = Ints(ConvDims4(c.w_dims())),
                         yd = Ints(ConvDims4(c.y_dims()));
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
  ORTC_CUDNN(d.cudnnSetConvolutionMathType(p->conv, MathType(io, lib.precision)));
  if (c.activation() == fbc::Activation::Clip) {
    if (c.clip_min() != 0.f)
      return Fail(ORTC_PLUGIN_NOT_IMPLEMENTED, "ConvCall Clip with a lower bound other than 0");
    // The fused call knows no clipped ReLU: it runs with identity, then one activation call.
    ORTC_CUDNN(d.cudnnCreateActivationDescriptor(&p->clip));
    ORTC_CUDNN(d.cudnnSetActivationDescriptor(p->clip, CUDNN_ACTIVATION_CLIPPED_RELU,
                                              CUDNN_NOT_PROPAGATE_NAN, c.clip_max()));
  }
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

  const uint64_t budget = lib.workspace_bytes;
  if (!p->transposed) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    ORTC_CUDNN(d.cudnnGetConvolutionForwardAlgorithm_v7(
        lib.cudnn, p->x, p->w, p->conv, p->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
    // The fused call with an identity activation accepts only IMPLICIT_PRECOMP_GEMM.
    const bool fused_identity = c.bias() >= 0 && !p->relu;
    bool found = false;
    for (int i = 0; i < returned && !found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > budget) continue;
      if (fused_identity && perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        continue;
      p->fwd_algo = perf[i].algo;
      found = true;
    }
    if (!found && !fused_identity)
      return Fail(ORTC_PLUGIN_EP_FAIL, "cuDNN offers no forward algorithm within the " +
                                           std::to_string(budget) +
                                           "-byte workspace the plan reserved");
    ORTC_CUDNN(d.cudnnGetConvolutionForwardWorkspaceSize(lib.cudnn, p->x, p->w, p->conv, p->y,
                                                         p->fwd_algo, &p->workspace));
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    // Transposed: x plays cuDNN's dy and y its dx.
    ORTC_CUDNN(d.cudnnGetConvolutionBackwardDataAlgorithm_v7(lib.cudnn, p->w, p->x, p->conv, p->y,
                                                             CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                             &returned, perf));
    bool found = false;
    for (int i = 0; i < returned && !found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > budget) continue;
      p->bwd_algo = perf[i].algo;
      found = true;
    }
    if (!found)
      return Fail(ORTC_PLUGIN_EP_FAIL, "cuDNN offers no backward-data algorithm within the " +
                                           std::to_string(budget) + "-byte workspace");
    ORTC_CUDNN(d.cudnnGetConvolutionBackwardDataWorkspaceSize(lib.cudnn, p->w, p->x, p->conv, p->y,
                                                              p->bwd_algo, &p->workspace));
  }
  if (p->workspace > budget)
    return Fail(ORTC_PLUGIN_EP_FAIL, "the convolution needs " + std::to_string(p->workspace) +
                                         " workspace bytes; the plan reserved " +
                                         std::to_string(budget));
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus RunConvLegacy(const LegacyConv& p, const LibraryContext& lib) {
  const auto& d = Cudnn();
  auto ptr = [](CUdeviceptr v) { return reinterpret_cast<void*>(static_cast<uintptr_t>(v)); };
  cudnnHandle_t handle = lib.cudnn;
  void* ws = ptr(lib.workspace);
  const float one = 1.f, zero = 0.f;
  if (!p.transposed && p.pb) {
    // y = act(alpha * conv(x, w) + alpha2 * z + bias), one call.
    ORTC_CUDNN(d.cudnnConvolutionBiasActivationForward(
        handle, &p.alpha, p.x, ptr(p.px), p.w, ptr(p.pw), p.conv, p.fwd_algo, ws, p.workspace,
        &p.alpha2, p.z, ptr(p.pz), p.bias, ptr(p.pb), p.act, p.y, ptr(p.py)));
    if (p.clip)
      ORTC_CUDNN(
          d.cudnnActivationForward(handle, p.clip, &one, p.y, ptr(p.py), &zero, p.y, ptr(p.py)));
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
  if (p.relu || p.clip)
    ORTC_CUDNN(d.cudnnActivationForward(handle, p.relu ? p.act : p.clip, &one, p.y, ptr(p.py),
                                        &zero, p.y, ptr(p.py)));
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
