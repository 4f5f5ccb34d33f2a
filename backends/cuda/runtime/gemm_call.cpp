// GemmCall through cuBLASLt: ortc's row-major y[m,n] = a[m,k] @ b[k,n] is computed as the
// column-major product y^T = b^T a^T (same bytes), with batch strides, the bias/activation
// epilogue, the compute type of the program's precision, and the heuristic's first algorithm
// that fits the planned workspace.
#include "library_calls.h"

namespace ortc::cuda_rt {

struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  float alpha = 1, beta = 0;
  // Column-major operands: A' = the row-major b, B' = the row-major a.
  CUdeviceptr pa = 0, pb = 0, pc = 0, pd = 0, bias = 0;
};

void GemmPlanDeleter::operator()(GemmPlan* p) const {
  const auto& l = CublasLt();
  if (p->a) l.cublasLtMatrixLayoutDestroy(p->a);
  if (p->b) l.cublasLtMatrixLayoutDestroy(p->b);
  if (p->c) l.cublasLtMatrixLayoutDestroy(p->c);
  if (p->d) l.cublasLtMatrixLayoutDestroy(p->d);
  if (p->desc) l.cublasLtMatmulDescDestroy(p->desc);
  delete p;
}

namespace {

bool CudaType(int onnx, cudaDataType_t* out) {
  switch (onnx) {
    case 1:
      *out = CUDA_R_32F;
      return true;
    case 10:
      *out = CUDA_R_16F;
      return true;
    case 16:
      *out = CUDA_R_16BF;
      return true;
    default:
      return false;
  }
}

// A column-major rows x cols matrix with leading dimension ld, `batch` of them `stride` apart.
OrtcPluginStatus Layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                        int64_t stride, cublasLtMatrixLayout_t* out) {
  const auto& l = CublasLt();
  ORTC_CUBLAS(l.cublasLtMatrixLayoutCreate(out, type, static_cast<uint64_t>(rows),
                                           static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    ORTC_CUBLAS(l.cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                   sizeof(count)));
    ORTC_CUBLAS(l.cublasLtMatrixLayoutSetAttribute(
        *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return ORTC_PLUGIN_OK;
}

bool Valid(int index, BufferLookup buffers) {
  return index >= 0 && static_cast<size_t>(index) < buffers.size();
}

}  // namespace

OrtcPluginStatus PlanGemm(const LibraryContext& lib, const fbc::GemmCall& g, BufferLookup buffers,
                          GemmPlanPtr* out) {
  cublasLtHandle_t handle = lib.cublas;
  const uint64_t workspace_bytes = lib.workspace_bytes;
  const auto& l = CublasLt();
  if (!Valid(g.a(), buffers) || !Valid(g.b(), buffers) || !Valid(g.y(), buffers) ||
      (g.c() >= 0 && !Valid(g.c(), buffers)) || (g.bias() >= 0 && !Valid(g.bias(), buffers)))
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "GemmCall names a buffer out of range");
  if (g.m() <= 0 || g.n() <= 0 || g.k() <= 0 || g.batch() <= 0)
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "GemmCall has a non-positive m, n, k or batch");
  cudaDataType_t type = CUDA_R_32F;
  if (!CudaType(buffers[g.a()].dtype, &type))
    return Fail(ORTC_PLUGIN_NOT_IMPLEMENTED, "GemmCall element type is not float/float16/bfloat16");
  // Accumulate in fp32 for every input type. fp32 operands keep IEEE fp32 math (COMPUTE_32F
  // never rounds them to TF32); only a tf32 program opts in to TF32 tensor cores.
  const cublasComputeType_t compute = type == CUDA_R_32F && AllowsTf32(lib.precision)
                                          ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale = CUDA_R_32F;

  GemmPlanPtr p(new GemmPlan());
  p->alpha = g.alpha();
  p->beta = g.c() >= 0 ? g.beta() : 0.f;
  p->pa = buffers[g.b()].ptr;
  p->pb = buffers[g.a()].ptr;
  p->pd = buffers[g.y()].ptr;
  p->pc = g.c() >= 0 ? buffers[g.c()].ptr : p->pd;
  p->bias = g.bias() >= 0 ? buffers[g.bias()].ptr : 0;

  ORTC_CUBLAS(l.cublasLtMatmulDescCreate(&p->desc, compute, scale));
  // A' = b: row-major [k,n] is column-major n x k (ld n); transposed, [n,k] is k x n (ld k).
  const cublasOperation_t op_a = g.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N;
  ORTC_CUBLAS(
      l.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  ORTC_CUBLAS(
      l.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const bool has_bias = g.bias() >= 0;
  switch (g.epilogue()) {
    case fbc::Activation::None:
      epilogue = has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      break;
    case fbc::Activation::Relu:
      epilogue = has_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
      break;
    case fbc::Activation::Gelu:
      epilogue = has_bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      break;
    case fbc::Activation::Clip:
      return Fail(ORTC_PLUGIN_NOT_IMPLEMENTED, "GemmCall with a Clip epilogue (cuBLASLt has none)");
  }
  ORTC_CUBLAS(l.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                               sizeof(epilogue)));
  if (has_bias) {
    // The bias runs along the rows of the column-major D (n of them): one per output column.
    const void* bias = reinterpret_cast<const void*>(static_cast<uintptr_t>(p->bias));
    ORTC_CUBLAS(l.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                 sizeof(bias)));
  }
  const int64_t m = g.m(), n = g.n(), k = g.k(), batch = g.batch();
  // Row-major operands as stored: a row of b holds n (k with trans_b) elements unless ldb says
  // it is longer (a head's slice of a wider projection); likewise a and y.
  const int64_t ldb = g.ldb() > 0 ? g.ldb() : g.trans_b() ? k : n;
  const int64_t lda = g.lda() > 0 ? g.lda() : g.trans_a() ? m : k;
  const int64_t ldy = g.ldy() > 0 ? g.ldy() : n;
  ORTC_PLUGIN_TRY(g.trans_b() ? Layout(type, k, n, ldb, batch, g.stride_b(), &p->a)
                              : Layout(type, n, k, ldb, batch, g.stride_b(), &p->a));
  ORTC_PLUGIN_TRY(g.trans_a() ? Layout(type, m, k, lda, batch, g.stride_a(), &p->b)
                              : Layout(type, k, m, lda, batch, g.stride_a(), &p->b));
  ORTC_PLUGIN_TRY(Layout(type, n, m, ldy, batch, g.stride_y(), &p->c));
  ORTC_PLUGIN_TRY(Layout(type, n, m, ldy, batch, g.stride_y(), &p->d));

  cublasLtMatmulPreference_t pref = nullptr;
  ORTC_CUBLAS(l.cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = workspace_bytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t s = l.cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  // Operands inside a wider buffer (a head's slice) may be less aligned than the 256 bytes the
  // heuristic otherwise assumes: tell it each pointer's real alignment.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint64_t> aligned[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p->pa},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p->pb},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p->pc},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p->pd}};
  for (const auto& [attr, ptr] : aligned) {
    uint32_t bytes = 256;
    while (bytes > 1 && ptr % bytes != 0) bytes /= 2;
    if (s == CUBLAS_STATUS_SUCCESS)
      s = l.cublasLtMatmulPreferenceSetAttribute(pref, attr, &bytes, sizeof(bytes));
  }
  if (s == CUBLAS_STATUS_SUCCESS)
    s = l.cublasLtMatmulAlgoGetHeuristic(handle, p->desc, p->a, p->b, p->c, p->d, pref, 1, &result,
                                         &found);
  l.cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS)
    return Fail(ORTC_PLUGIN_EP_FAIL, CublasText(s, "cublasLtMatmulAlgoGetHeuristic"));
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS)
    return Fail(ORTC_PLUGIN_EP_FAIL,
                "cuBLASLt has no algorithm for this GemmCall (m=" + std::to_string(m) +
                    " n=" + std::to_string(n) + " k=" + std::to_string(k) + ") within " +
                    std::to_string(workspace_bytes) + " workspace bytes");
  p->algo = result.algo;
  p->workspace = result.workspaceSize;
  *out = std::move(p);
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus RunGemm(const GemmPlan& p, const LibraryContext& lib) {
  auto ptr = [](CUdeviceptr v) { return reinterpret_cast<void*>(static_cast<uintptr_t>(v)); };
  ORTC_CUBLAS(CublasLt().cublasLtMatmul(lib.cublas, p.desc, &p.alpha, ptr(p.pa), p.a, ptr(p.pb),
                                        p.b, &p.beta, ptr(p.pc), p.c, ptr(p.pd), p.d, &p.algo,
                                        ptr(lib.workspace), p.workspace,
                                        reinterpret_cast<cudaStream_t>(lib.stream)));
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
