// Host reference for ConvCall and GemmCall: direct loops over logical indices, one fp32
// accumulator per output element, the epilogue in fp32 and one rounding to the stored type.
#include "library_reference.h"

#include <cmath>
#include <string>
#include <vector>

#include "codegen/reference_conversions.h"

namespace ortc::test::cuda {
namespace {

namespace fbc = ortc::fb::cuda;

std::vector<int64_t> Vec(const flatbuffers::Vector<int64_t>* v) {
  return v ? std::vector<int64_t>(v->begin(), v->end()) : std::vector<int64_t>{};
}

int64_t Product(const std::vector<int64_t>& d, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < d.size(); ++i) p *= d[i];
  return p;
}

// Offset of element (a, b, spatial...) of a tensor with logical dims [A, B, S...]: row-major,
// or with B moved last (channels-last activations, KRSC filters).
int64_t Offset(const std::vector<int64_t>& d, bool channels_last, int64_t a, int64_t b,
               const std::vector<int64_t>& pos) {
  int64_t off = channels_last ? a : a * d[1] + b;
  for (size_t i = 0; i < pos.size(); ++i) off = off * d[2 + i] + pos[i];
  return channels_last ? off * d[1] + b : off;
}

// Coordinates of linear index `i` over the spatial dims d[2..].
void Unflatten(const std::vector<int64_t>& d, int64_t i, std::vector<int64_t>* pos) {
  for (size_t k = d.size(); k-- > 2;) {
    (*pos)[k - 2] = i % d[k];
    i /= d[k];
  }
}

float Activate(fbc::Activation act, float v, float clip_min = 0.f, float clip_max = 0.f) {
  switch (act) {
    case fbc::Activation::Clip:
      return v < clip_min ? clip_min : (v > clip_max ? clip_max : v);
    case fbc::Activation::Relu:
      return v < 0.f ? 0.f : v;
    case fbc::Activation::Gelu: {
      // The tanh approximation (cuBLASLt's GELU epilogue, ONNX approximate="tanh").
      const float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * v * (1.f + std::tanh(k * (v + 0.044715f * v * v * v)));
    }
    default:
      return v;
  }
}

Status NeedElements(const char* what, const StoredTensor& t, int64_t n) {
  if (!t.data || !IsFloatStorage(t.dtype))
    return InvalidArgument(std::string(what) + " is not a float/float16/bfloat16 buffer");
  if (t.elements < n)
    return InvalidArgument(std::string(what) + " holds " + std::to_string(t.elements) +
                           " elements; the call reads " + std::to_string(n));
  return Status::Ok();
}

}  // namespace

bool IsFloatStorage(int32_t dtype) {
  return dtype == 1 || dtype == 10 || dtype == 16;
}

float LoadElement(const StoredTensor& t, int64_t i) {
  switch (t.dtype) {
    case 10:
      return RefHalfToFloat(static_cast<const uint16_t*>(t.data)[i]);
    case 16:
      return RefBf16ToFloat(static_cast<const uint16_t*>(t.data)[i]);
    default:
      return static_cast<const float*>(t.data)[i];
  }
}

void StoreElement(const StoredTensor& t, int64_t i, float v) {
  switch (t.dtype) {
    case 10:
      static_cast<uint16_t*>(t.data)[i] = RefFloatToHalf(v);
      break;
    case 16:
      static_cast<uint16_t*>(t.data)[i] = RefFloatToBf16(v);
      break;
    default:
      static_cast<float*>(t.data)[i] = v;
  }
}

Status ReferenceConv(const fbc::ConvCall& c, const StoredTensor& x, const StoredTensor& w,
                     const StoredTensor* bias, const StoredTensor* z, const StoredTensor& y) {
  const auto xd = Vec(c.x_dims()), wd = Vec(c.w_dims()), yd = Vec(c.y_dims());
  if (xd.size() < 3 || wd.size() != xd.size() || yd.size() != xd.size())
    return InvalidArgument("ConvCall dims must have the same rank, at least 3");
  const size_t sp = xd.size() - 2;
  auto attr = [&](const flatbuffers::Vector<int64_t>* v, int64_t fill) {
    std::vector<int64_t> r = Vec(v);
    r.resize(sp, fill);  // pads: begin values first, end values (equal) ignored
    return r;
  };
  const auto pads = attr(c.pads(), 0), strides = attr(c.strides(), 1),
             dilations = attr(c.dilations(), 1);
  const int64_t group = c.group();
  const bool cl = c.layout() == fbc::TensorLayout::NHWC;
  const int64_t channels_in = xd[1], channels_out = yd[1];
  if (group <= 0 || channels_in % group || channels_out % group)
    return InvalidArgument("ConvCall group does not divide the channels");
  const int64_t cg = channels_in / group, kg = channels_out / group;
  if (c.transposed() ? (wd[0] != channels_in || wd[1] != kg)
                     : (wd[0] != channels_out || wd[1] != cg))
    return InvalidArgument("ConvCall filter dims do not match the channels and group");
  ORTC_RETURN_IF_ERROR(NeedElements("ConvCall x", x, Product(xd)));
  ORTC_RETURN_IF_ERROR(NeedElements("ConvCall w", w, Product(wd)));
  ORTC_RETURN_IF_ERROR(NeedElements("ConvCall y", y, Product(yd)));
  if (bias) ORTC_RETURN_IF_ERROR(NeedElements("ConvCall bias", *bias, channels_out));
  if (z) ORTC_RETURN_IF_ERROR(NeedElements("ConvCall z", *z, Product(yd)));

  // x and w decoded once to float in logical row-major order ([N, C, S...], [K, C, R...]).
  auto decode = [&](const StoredTensor& t, const std::vector<int64_t>& d) {
    std::vector<float> v(static_cast<size_t>(Product(d)));
    std::vector<int64_t> pos(sp);
    const int64_t space = Product(d, 2);
    for (int64_t a = 0; a < d[0]; ++a)
      for (int64_t b = 0; b < d[1]; ++b)
        for (int64_t p = 0; p < space; ++p) {
          Unflatten(d, p, &pos);
          v[(a * d[1] + b) * space + p] = LoadElement(t, Offset(d, cl, a, b, pos));
        }
    return v;
  };
  const std::vector<float> xv = decode(x, xd), wv = decode(w, wd);
  const int64_t in_space = Product(xd, 2), out_space = Product(yd, 2),
                kernel_space = Product(wd, 2);
  std::vector<int64_t> o(sp), r(sp);
  for (int64_t n = 0; n < yd[0]; ++n) {
    for (int64_t k = 0; k < channels_out; ++k) {
      const int64_t g = k / kg;
      for (int64_t op = 0; op < out_space; ++op) {
        Unflatten(yd, op, &o);
        float acc = 0.f;
        for (int64_t kp = 0; kp < kernel_space; ++kp) {
          Unflatten(wd, kp, &r);
          bool inside = true;
          int64_t in_lin = 0;
          for (size_t s = 0; s < sp && inside; ++s) {
            int64_t in = 0;
            if (!c.transposed()) {
              in = o[s] * strides[s] - pads[s] + r[s] * dilations[s];
            } else {
              // y position o receives x position i when i * stride - pad + r * dilation = o.
              const int64_t t = o[s] + pads[s] - r[s] * dilations[s];
              if (t % strides[s] != 0) inside = false;
              in = t / strides[s];
            }
            inside = inside && in >= 0 && in < xd[2 + s];
            in_lin = in_lin * xd[2 + s] + in;
          }
          if (!inside) continue;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t cx = g * cg + ci;
            const float xe = xv[(n * channels_in + cx) * in_space + in_lin];
            const float we = c.transposed() ? wv[(cx * kg + k % kg) * kernel_space + kp]
                                            : wv[(k * cg + ci) * kernel_space + kp];
            acc += xe * we;
          }
        }
        const int64_t yo = Offset(yd, cl, n, k, o);
        float v = c.alpha() * acc;
        if (z) v += c.alpha2() * LoadElement(*z, yo);
        if (bias) v += LoadElement(*bias, k);
        StoreElement(y, yo, Activate(c.activation(), v, c.clip_min(), c.clip_max()));
      }
    }
  }
  return Status::Ok();
}

Status ReferenceGemm(const fbc::GemmCall& g, const StoredTensor& a, const StoredTensor& b,
                     const StoredTensor* c, const StoredTensor* bias, const StoredTensor& y) {
  const int64_t m = g.m(), n = g.n(), k = g.k(), batch = g.batch();
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || g.stride_a() < 0 || g.stride_b() < 0 ||
      g.stride_y() < 0 || g.lda() < 0 || g.ldb() < 0 || g.ldy() < 0)
    return InvalidArgument("GemmCall has a non-positive m, n, k or batch, or a negative stride");
  // Row-major operands as stored, rows ld apart (0: packed): a [m, k] ([k, m] transposed),
  // b [k, n] ([n, k] transposed), y and c [m, n].
  const int64_t lda = g.lda() ? g.lda() : g.trans_a() ? m : k;
  const int64_t ldb = g.ldb() ? g.ldb() : g.trans_b() ? k : n;
  const int64_t ldy = g.ldy() ? g.ldy() : n;
  const int64_t a_rows = g.trans_a() ? k : m, a_cols = g.trans_a() ? m : k;
  const int64_t b_rows = g.trans_b() ? n : k, b_cols = g.trans_b() ? k : n;
  if (lda < a_cols || ldb < b_cols || ldy < n)
    return InvalidArgument("GemmCall leading dimension shorter than a row");
  ORTC_RETURN_IF_ERROR(NeedElements("GemmCall a", a, (batch - 1) * g.stride_a() +
                                                         (a_rows - 1) * lda + a_cols));
  ORTC_RETURN_IF_ERROR(NeedElements("GemmCall b", b, (batch - 1) * g.stride_b() +
                                                         (b_rows - 1) * ldb + b_cols));
  ORTC_RETURN_IF_ERROR(
      NeedElements("GemmCall y", y, (batch - 1) * g.stride_y() + (m - 1) * ldy + n));
  if (c)
    ORTC_RETURN_IF_ERROR(
        NeedElements("GemmCall c", *c, (batch - 1) * g.stride_y() + (m - 1) * ldy + n));
  if (bias) ORTC_RETURN_IF_ERROR(NeedElements("GemmCall bias", *bias, n));
  for (int64_t bi = 0; bi < batch; ++bi) {
    const int64_t oa = bi * g.stride_a(), ob = bi * g.stride_b(), oy = bi * g.stride_y();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.f;
        for (int64_t p = 0; p < k; ++p) {
          const float av = LoadElement(a, oa + (g.trans_a() ? p * lda + i : i * lda + p));
          const float bv = LoadElement(b, ob + (g.trans_b() ? j * ldb + p : p * ldb + j));
          acc += av * bv;
        }
        float v = g.alpha() * acc;
        if (c) v += g.beta() * LoadElement(*c, oy + i * ldy + j);
        if (bias) v += LoadElement(*bias, j);
        StoreElement(y, oy + i * ldy + j, Activate(g.epilogue(), v));
      }
    }
  }
  return Status::Ok();
}

}  // namespace ortc::test::cuda
