// Attention on tensor-core GEMMs: each FusedAttention op (lowering_attention.cpp) becomes
//   StridedView copies of Q, K^T and V (skipped where the view already is the contiguous
//   tensor) -> MatMul Q K^T (cuBLASLt, the scale as its alpha) -> AttentionSoftmax (mask,
//   boolean mask, softmax, the all-masked-row guard: one kernel) -> MatMul P V -> Transpose
//   into the output's head layout when it is not the identity.
// Why: measured on an H200 at [1,128] (BERT-base, 12 heads, head dim 64), the one-kernel
// FusedAttention, a SIMT kernel, took about 72 us per layer against 7.7 us for PyTorch's SDPA,
// and the model ran faster with attention left to cuBLASLt's batched GEMMs and separate
// kernels (0.79 ms against 1.33 ms end to end). The GEMMs run on tensor cores at fp16/bf16.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"
#include "cuda/compile/op_desc.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::IrValue;
using lowering::SubgraphIr;

struct View {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0, head_group = 1;
};

View ViewAttr(const IrOp& op, const std::string& name) {
  return {op.IntsAttr(name + "_shape"), op.IntsAttr(name + "_strides"),
          op.IntAttr(name + "_offset", 0), op.IntAttr(name + "_head_group", 1)};
}

// Whether the view reads its source whole, in order: the source's bytes already are the
// contiguous [b, h, rows, cols] tensor.
bool IsContiguous(const View& v, int64_t source_elements) {
  if (v.offset != 0 || v.head_group != 1) return false;
  int64_t stride = 1, count = 1;
  for (size_t a = 4; a-- > 0;) {
    if (v.shape[a] != 1 && v.strides[a] != stride) return false;
    stride *= v.shape[a];
    count *= v.shape[a];
  }
  return count == source_elements;
}

// The operand [.., rows, cols] (the attention's rank) as a contiguous value: the source through
// a Reshape view when it already is one, else a StridedView copy.
int Materialize(SubgraphIr* ir, std::vector<IrOp>* ops, const std::string& base, int source,
                const View& v, size_t rank) {
  const auto& info = ir->values[source].info;
  std::vector<int64_t> dims(v.shape.end() - static_cast<std::ptrdiff_t>(rank), v.shape.end());
  int64_t elements = 1;
  for (const auto& d : info.shape.dims) elements *= d.value;
  const int out = NewValue(ir, base, info.dtype, dims);
  IrOp op;
  op.name = base;
  op.domain = "ortc";
  op.since_version = 1;
  op.outputs = {out};
  if (IsContiguous(v, elements)) {
    const int shape = ir->AddInt64s(base + ".shape", dims);
    op.op_type = "Reshape";
    op.domain = "";
    op.since_version = 14;
    op.inputs = {source, shape};
  } else {
    op.op_type = "StridedView";
    op.inputs = {source};
    op.SetIntsAttr("shape", v.shape);
    op.SetIntsAttr("strides", v.strides);
    op.SetIntAttr("offset", v.offset);
    op.SetIntAttr("head_group", v.head_group);
  }
  ops->push_back(std::move(op));
  return out;
}

// A matrix operand of a batched GEMM read in place: matrix i of the batch starts `stride`
// elements after matrix 0 (at `offset`), its rows are `ld` apart and its columns adjacent.
struct Direct {
  int64_t offset = 0, stride = 0, ld = 0;
};

// The [rows, cols] matrices of a view [b, h, rows, cols] as one uniformly strided batch over
// (b, h) (heads `group` at a time: batch element = b * h / group + h / group), or nullopt when
// the view's strides do not allow it (columns not adjacent, batches not evenly spaced).
std::optional<Direct> DirectOf(const View& v, int64_t group = 1) {
  const int64_t heads = v.shape[1] / group;
  if (v.shape[3] > 1 && v.strides[3] != 1) return std::nullopt;
  Direct d;
  d.offset = v.offset;
  d.ld = v.shape[2] > 1 ? v.strides[2] : v.shape[3];
  if (d.ld < v.shape[3]) return std::nullopt;
  const int64_t sb = v.strides[0], sh = v.strides[1];
  if (v.shape[0] == 1 || heads == 1) {
    d.stride = heads > 1 ? sh : sb;
  } else if (sb == heads * sh) {
    d.stride = sh;
  } else {
    return std::nullopt;
  }
  return d;
}

// The logical [b, h, rows, dv] output written into the stored tensor Transpose(logical, perm).
View OutputView(const std::vector<int64_t>& stored, const std::vector<int64_t>& perm) {
  View v;
  v.shape.assign(4, 1);
  v.strides.assign(4, 0);
  std::vector<int64_t> st(stored.size(), 1);
  for (size_t i = stored.size(); i-- > 1;) st[i - 1] = st[i] * stored[i];
  const size_t pad = 4 - stored.size();
  for (size_t a = 0; a < perm.size(); ++a) {
    v.shape[pad + perm[a]] = stored[a];
    v.strides[pad + perm[a]] = st[a];
  }
  for (size_t a = 0; a < pad; ++a) v.strides[a] = 0;
  return v;
}

IrOp StridedMatMul(const std::string& name, int a, const Direct& da, int b, const Direct& db,
                   bool trans_b, int y, const Direct& dy, int64_t batch, int64_t m, int64_t n,
                   int64_t k, float alpha) {
  IrOp op;
  op.name = name;
  op.op_type = "StridedMatMul";
  op.domain = "ortc";
  op.since_version = 1;
  op.inputs = {a, b};
  op.outputs = {y};
  op.SetIntsAttr("mnk", {m, n, k});
  op.SetIntAttr("batch", batch);
  op.SetIntsAttr("a", {da.offset, da.stride, da.ld});
  op.SetIntsAttr("b", {db.offset, db.stride, db.ld});
  op.SetIntsAttr("y", {dy.offset, dy.stride, dy.ld});
  op.SetIntAttr("trans_b", trans_b ? 1 : 0);
  op.SetFloatAttr("alpha", alpha);
  return op;
}

View Packed(const std::vector<int64_t>& shape4) {
  View v;
  v.shape = shape4;
  v.strides.assign(4, 0);
  int64_t s = 1;
  for (size_t a = 4; a-- > 0;) {
    v.strides[a] = shape4[a] == 1 ? 0 : s;
    s *= shape4[a];
  }
  return v;
}

View OneBatch(View v) {
  v.shape[0] = 1;
  v.strides[0] = 0;
  return v;
}

IrOp Softmax(const IrOp& f, int scores, int probs) {
  IrOp sm;
  sm.name = f.name;
  sm.op_type = "AttentionSoftmax";
  sm.domain = "ortc";
  sm.since_version = 1;
  sm.inputs = {scores, f.inputs[3], f.inputs[4]};
  sm.outputs = {probs};
  sm.SetFloatAttr("fill", f.FloatAttr("fill", 0.f));
  sm.SetIntAttr("keep_if_true", f.IntAttr("keep_if_true", 1));
  sm.SetIntAttr("mask_after_where", f.IntAttr("mask_after_where", 0));
  return sm;
}

// Batch b > 1 whose batch elements are not evenly spaced in some operand (a fused projection
// [b, s, 3 * h * d]: heads d apart, batch elements s * 3 * h * d apart): each batch element's
// heads are still one strided batch, so one GEMM pair per batch element reads everything in
// place. Returns false (nothing appended) unless every operand allows it.
bool ExpandPerBatch(SubgraphIr* ir, const IrOp& f, const View& q, const View& k, const View& v,
                    const View& ov, std::vector<IrOp>* ops) {
  constexpr int64_t kMaxBatches = 8;  // beyond, copies and one GEMM pair cost fewer launches
  const int64_t B = q.shape[0], H = q.shape[1], S = q.shape[2], D = q.shape[3];
  const int64_t keys = k.shape[2], DV = v.shape[3];
  if (B < 2 || B > kMaxBatches || k.head_group != 1 || v.head_group != 1 || q.head_group != 1)
    return false;
  const bool uniform = DirectOf(q) && DirectOf(k) && DirectOf(v) && DirectOf(ov);
  const auto dq = DirectOf(OneBatch(q)), dk = DirectOf(OneBatch(k)), dv = DirectOf(OneBatch(v)),
             dy = DirectOf(OneBatch(ov));
  if (uniform || !dq || !dk || !dv || !dy) return false;
  const int result = f.outputs[0];
  const size_t rank = ir->values[result].info.shape.dims.size();
  const std::string base = f.name + "/gemm";
  const int32_t dtype = ir->values[result].info.dtype;
  std::vector<int64_t> score4 = {B, H, S, keys};
  std::vector<int64_t> score_dims(score4.end() - static_cast<std::ptrdiff_t>(rank), score4.end());
  const int scores = NewValue(ir, base + "/scores", dtype, score_dims);
  const int probs = NewValue(ir, base + "/probs", dtype, score_dims);
  auto at = [](Direct d, int64_t offset) {
    d.offset += offset;
    return d;
  };
  for (int64_t b = 0; b < B; ++b) {
    ops->push_back(StridedMatMul(base + "/qk" + std::to_string(b), f.inputs[0],
                                 at(*dq, b * q.strides[0]), f.inputs[1], at(*dk, b * k.strides[0]),
                                 true, scores, Direct{b * H * S * keys, S * keys, keys}, H, S, keys,
                                 D, f.FloatAttr("scale", 1.f)));
  }
  ops->push_back(Softmax(f, scores, probs));
  for (int64_t b = 0; b < B; ++b) {
    ops->push_back(StridedMatMul(base + "/pv" + std::to_string(b), probs,
                                 Direct{b * H * S * keys, S * keys, keys}, f.inputs[2],
                                 at(*dv, b * v.strides[0]), false, result,
                                 at(*dy, b * ov.strides[0]), H, S, DV, keys, 1.f));
  }
  return true;
}

// The ops replacing FusedAttention op `f`, appended to `ops`. Q, K and V are read in place by
// the GEMMs where their views are evenly strided batches of row-major matrices (a head's slice
// of a fused projection is: rows `ld` apart), the output written in place through the head
// merge the same way; otherwise that operand is copied (StridedView) or transposed.
void Expand(SubgraphIr* ir, const IrOp& f, std::vector<IrOp>* ops) {
  const int result = f.outputs[0];
  const size_t rank = ir->values[result].info.shape.dims.size();
  const std::string base = f.name + "/gemm";
  View q = ViewAttr(f, "q"), k = ViewAttr(f, "k"), v = ViewAttr(f, "v");
  int qs = f.inputs[0], ks = f.inputs[1], vs = f.inputs[2];
  std::vector<int64_t> out_perm = f.IntsAttr("out_perm");
  if (out_perm.empty()) {
    out_perm.resize(rank);
    std::iota(out_perm.begin(), out_perm.end(), 0);
  }
  std::vector<int64_t> stored;
  for (const auto& d : ir->values[result].info.shape.dims) stored.push_back(d.value);
  const View ov = OutputView(stored, out_perm);
  if (ExpandPerBatch(ir, f, q, k, v, ov, ops)) return;
  const int64_t B = q.shape[0], H = q.shape[1], S = q.shape[2], D = q.shape[3];
  const int64_t keys = k.shape[2], DV = v.shape[3];
  // GQA: query heads of one key/value head batched together as rows of one matrix, which needs
  // each head's rows to follow the previous head's (heads S rows apart).
  int64_t group = std::max<int64_t>(k.head_group, 1);
  if (group != v.head_group || q.strides[1] != S * std::max<int64_t>(q.strides[2], D) ||
      (S > 1 && q.strides[2] != D))
    group = 1;
  // An operand batched over (b, h / g): in place when its view allows, else copied contiguous
  // (per key/value head when g > 1) and read packed.
  auto direct = [&](const View& view, int* source, const std::string& name, int64_t g) {
    if (view.head_group == g) {
      if (auto d = DirectOf(view, g)) return *d;
    }
    View per_batch = view;
    per_batch.shape[1] /= g;  // g > 1: the view's heads repeat each source head g times
    per_batch.head_group = view.head_group / g;
    *source = Materialize(ir, ops, name, *source, per_batch, 4);
    return *DirectOf(Packed(per_batch.shape), 1);
  };
  Direct dq;
  if (group > 1) {
    // [b, h, s, d] contiguous per head: kv head j's query heads are g * S consecutive rows.
    dq = Direct{q.offset, group * q.strides[1], D};
    if (q.shape[0] > 1 && q.strides[0] != H * q.strides[1]) group = 1;
  }
  if (group == 1) dq = direct(q, &qs, base + "/q", 1);
  // K is read as K^T (trans_b) when its rows (keys) are row-major, else as the [d, keys] matrix
  // K^T itself when that one is (a model handing over K^T contiguous).
  View kt = k;
  std::swap(kt.shape[2], kt.shape[3]);
  std::swap(kt.strides[2], kt.strides[3]);
  const bool k_rows = k.head_group == group && DirectOf(k, group).has_value();
  const bool kt_rows = !k_rows && kt.head_group == group && DirectOf(kt, group).has_value();
  const Direct dk = kt_rows ? *DirectOf(kt, group) : direct(k, &ks, base + "/k", group);
  const Direct dv = direct(v, &vs, base + "/v", group);
  const int64_t batch = B * H / group, rows = S * group;
  const int32_t dtype = ir->values[result].info.dtype;
  std::vector<int64_t> score4 = {B, H, S, keys};
  std::vector<int64_t> score_dims(score4.end() - static_cast<std::ptrdiff_t>(rank), score4.end());
  const int scores = NewValue(ir, base + "/scores", dtype, score_dims);
  const float alpha = f.FloatAttr("scale", 1.f);
  // Scores packed [b, h, s, keys]: batch element i at i * rows * keys.
  ops->push_back(StridedMatMul(base + "/qk", qs, dq, ks, dk, !kt_rows, scores,
                               Direct{0, rows * keys, keys}, batch, rows, keys, D, alpha));
  const int probs = NewValue(ir, base + "/probs", dtype, score_dims);
  ops->push_back(Softmax(f, scores, probs));
  // The output: in place through out_perm when the rows of a batch element are evenly spaced.
  std::optional<Direct> dy;
  if (group == 1) {
    dy = DirectOf(ov, 1);
  } else if (ov.strides[3] == 1 && ov.strides[2] == DV && ov.strides[1] == S * DV &&
             (B == 1 || ov.strides[0] == H * S * DV)) {
    dy = Direct{0, group * S * DV, DV};
  }
  if (dy) {
    ops->push_back(StridedMatMul(base + "/pv", probs, Direct{0, rows * keys, keys}, vs, dv, false,
                                 result, *dy, batch, rows, DV, keys, 1.f));
    return;
  }
  // Otherwise packed [b, h, s, dv], then Transpose into the stored layout.
  std::vector<int64_t> o4 = {B, H, S, DV};
  std::vector<int64_t> o_dims(o4.end() - static_cast<std::ptrdiff_t>(rank), o4.end());
  const int o = NewValue(ir, base + "/o", dtype, o_dims);
  ops->push_back(StridedMatMul(base + "/pv", probs, Direct{0, rows * keys, keys}, vs, dv, false, o,
                               Direct{0, rows * DV, DV}, batch, rows, DV, keys, 1.f));
  IrOp t;
  t.name = base + "/merge_heads";
  t.op_type = "Transpose";
  t.since_version = 13;
  t.inputs = {o};
  t.outputs = {result};
  t.SetIntsAttr("perm", out_perm);
  ops->push_back(std::move(t));
}

// A generation step's attention: one kernel reading the cache beats three steps (two GEMMs of a
// single row and a softmax), whose launches cost more than their work. Long caches too: the
// decode kernel splits them over the keys (SplitDecodeAttention).
bool DecodeShaped(const IrOp& f) {
  const View q = ViewAttr(f, "q"), k = ViewAttr(f, "k");
  return q.shape.size() == 4 && k.shape.size() == 4 && q.shape[2] >= 1 &&
         q.shape[2] <= codegen::kDecodeMaxRows;
}

}  // namespace

int LowerAttentionToGemms(SubgraphIr* ir, int* decode_kept) {
  std::vector<IrOp> ops;
  int lowered = 0;
  *decode_kept = 0;
  for (auto& op : ir->ops) {
    const bool attention = !op.removed && op.op_type == "FusedAttention";
    const bool decode = attention && DecodeShaped(op);
    *decode_kept += decode;
    if (!attention || decode) {
      ops.push_back(std::move(op));
      continue;
    }
    // Built into a separate list: NewValue and AddWeight grow ir->values, not ir->ops.
    std::vector<IrOp> parts;
    Expand(ir, op, &parts);
    for (auto& p : parts) ops.push_back(std::move(p));
    ++lowered;
  }
  ir->ops = std::move(ops);
  if (lowered > 0) ir->Compact();
  return lowered;
}

}  // namespace ortc::backends::cuda
