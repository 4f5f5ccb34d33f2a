// Semantic validation of CUDA programs: see program_validator.h.
#include "program_validator.h"

#include <vector>

#include "base/element_types.h"

namespace ortc::cuda {
namespace {

namespace fbc = ortc::fb::cuda;

// a * b, or false when it exceeds kMaxProgramBytes (or a factor is negative).
bool Mul(uint64_t a, int64_t b, uint64_t* out) {
  if (b < 0) return false;
  if (b > 0 && a > kMaxProgramBytes / static_cast<uint64_t>(b)) return false;
  *out = a * static_cast<uint64_t>(b);
  return true;
}

class Validator {
 public:
  explicit Validator(const fbc::Program& p) : p_(p), bufs_(*p.buffers()) {}

  std::string Run(uint32_t num_weights) {
    if (p_.arena_bytes() > kMaxProgramBytes || p_.workspace_bytes() > kMaxProgramBytes)
      return "arena_bytes or workspace_bytes above " + std::to_string(kMaxProgramBytes);
    for (uint32_t i = 0; i < bufs_.size(); ++i) {
      if (auto e = Buffer(*bufs_.Get(i), i, num_weights); !e.empty()) return e;
    }
    for (const auto* list : {p_.inputs(), p_.outputs()}) {
      const bool inputs = list == p_.inputs();
      for (uint32_t k = 0; k < list->size(); ++k) {
        const int32_t b = list->Get(k);
        const auto want = inputs ? fbc::BufferKind::Input : fbc::BufferKind::Output;
        if (!InRange(b) || bufs_.Get(static_cast<uint32_t>(b))->kind() != want)
          return std::string(inputs ? "input " : "output ") + std::to_string(k) + " names buffer " +
                 std::to_string(b) + ", not an " + (inputs ? "Input" : "Output") + " buffer";
      }
    }
    for (uint32_t s = 0; s < p_.steps()->size(); ++s) {
      const auto* step = p_.steps()->Get(s);
      const std::string where =
          "step " + std::to_string(s) + " ('" + (step->name() ? step->name()->str() : "") + "')";
      if (auto e = Step(*step); !e.empty()) return where + ": " + e;
    }
    return "";
  }

 private:
  bool InRange(int32_t b) const { return b >= 0 && static_cast<uint32_t>(b) < bufs_.size(); }

  std::string Buffer(const fbc::Buffer& b, uint32_t i, uint32_t num_weights) {
    const std::string what = "buffer " + std::to_string(i);
    if (b.kind() < fbc::BufferKind::MIN || b.kind() > fbc::BufferKind::MAX)
      return what + ": unknown kind " + std::to_string(static_cast<int>(b.kind()));
    if (HeldElementBytes(b.dtype()) == 0)
      return what + ": unknown element type " + std::to_string(b.dtype());
    if (b.byte_size() > kMaxProgramBytes) return what + ": byte_size above the limit";
    // A buffer with a static shape holds at least that many elements.
    if (b.dims()) {
      uint64_t need = HeldElementBytes(b.dtype());
      bool is_static = true;
      for (int64_t d : *b.dims()) {
        if (d < -1) return what + ": dimension " + std::to_string(d);
        if (d == -1) is_static = false;
        if (is_static && !Mul(need, d, &need)) return what + ": dims overflow";
      }
      if (is_static && b.byte_size() < need)
        return what + ": byte_size " + std::to_string(b.byte_size()) + " below its shape's " +
               std::to_string(need);
    }
    switch (b.kind()) {
      case fbc::BufferKind::Arena:
        if (b.offset() > p_.arena_bytes() || b.byte_size() > p_.arena_bytes() - b.offset())
          return what + ": arena range " + std::to_string(b.offset()) + "+" +
                 std::to_string(b.byte_size()) + " outside arena_bytes " +
                 std::to_string(p_.arena_bytes());
        break;
      case fbc::BufferKind::Weight:
        if (b.weight_slot() < 0 || static_cast<uint32_t>(b.weight_slot()) >= num_weights)
          return what + ": weight_slot " + std::to_string(b.weight_slot()) + " of " +
                 std::to_string(num_weights);
        break;
      case fbc::BufferKind::Input:
        if (b.io_index() < 0 || static_cast<uint32_t>(b.io_index()) >= p_.inputs()->size())
          return what + ": io_index " + std::to_string(b.io_index()) + " of " +
                 std::to_string(p_.inputs()->size()) + " inputs";
        break;
      case fbc::BufferKind::Output:
        if (b.io_index() < 0 || static_cast<uint32_t>(b.io_index()) >= p_.outputs()->size())
          return what + ": io_index " + std::to_string(b.io_index()) + " of " +
                 std::to_string(p_.outputs()->size()) + " outputs";
        break;
      case fbc::BufferKind::Alias: {
        const int32_t of = b.alias_of();
        if (of < 0 || static_cast<uint32_t>(of) >= i)
          return what + ": alias_of " + std::to_string(of) + " is not an earlier buffer";
        const uint64_t base = bufs_.Get(static_cast<uint32_t>(of))->byte_size();
        if (b.offset() > base || b.byte_size() > base - b.offset())
          return what + ": alias range " + std::to_string(b.offset()) + "+" +
                 std::to_string(b.byte_size()) + " outside buffer " + std::to_string(of);
        break;
      }
    }
    return "";
  }

  // Buffer b holds `elements` elements of its own type starting at its beginning.
  std::string Holds(const char* role, int32_t b, uint64_t elements) const {
    if (!InRange(b)) return std::string(role) + " names buffer " + std::to_string(b);
    const auto* buf = bufs_.Get(static_cast<uint32_t>(b));
    uint64_t bytes = 0;
    if (!Mul(HeldElementBytes(buf->dtype()), static_cast<int64_t>(elements), &bytes) ||
        bytes > buf->byte_size())
      return std::string(role) + " needs " + std::to_string(elements) + " elements; buffer " +
             std::to_string(b) + " has " + std::to_string(buf->byte_size()) + " bytes";
    return "";
  }

  static bool Product(const flatbuffers::Vector<int64_t>* dims, uint64_t* out) {
    *out = 1;
    for (int64_t d : *dims) {
      if (d <= 0 || !Mul(*out, d, out)) return false;
    }
    return true;
  }

  std::string Step(const fbc::Step& s) {
    const int kinds = (s.launch() != nullptr) + (s.conv() != nullptr) + (s.gemm() != nullptr) +
                      (s.copy() != nullptr) + (s.strided_gemm() != nullptr);
    if (kinds != 1)
      return "has " + std::to_string(kinds) + " kinds (launch, conv, gemm, copy, strided_gemm)";
    if (const auto* l = s.launch()) return Launch(*l);
    if (const auto* c = s.conv()) return Conv(*c);
    if (const auto* g = s.gemm()) {
      // Leading dimensions belong in strided_gemm (cuda_program.fbs).
      if (g->lda() || g->ldb() || g->ldy()) return "a gemm step with leading dimensions";
      return Gemm(*g);
    }
    if (const auto* g = s.strided_gemm()) return Gemm(*g);
    const auto* c = s.copy();
    if (auto e = Holds("copy source", c->src(), 0); !e.empty()) return e;
    if (auto e = Holds("copy destination", c->dst(), 0); !e.empty()) return e;
    const uint64_t src = bufs_.Get(static_cast<uint32_t>(c->src()))->byte_size(),
                   dst = bufs_.Get(static_cast<uint32_t>(c->dst()))->byte_size();
    if (c->bytes() > src || c->bytes() > dst)
      return "copies " + std::to_string(c->bytes()) + " bytes between buffers of " +
             std::to_string(src) + " and " + std::to_string(dst);
    return "";
  }

  std::string Launch(const fbc::KernelLaunch& l) {
    if (!l.kernel() || l.kernel()->size() == 0) return "a launch without a kernel name";
    bool listed = false;
    if (p_.kernels()) {
      for (const auto* k : *p_.kernels())
        listed = listed || k->string_view() == l.kernel()->string_view();
    }
    if (!listed) return "kernel '" + l.kernel()->str() + "' is not among the program's kernels";
    // CUDA's limits: block at most 1024 threads, grid y and z at most 65535, x at most 2^31-1.
    const uint64_t max_grid[3] = {(uint64_t{1} << 31) - 1, 65535, 65535};
    uint64_t threads = 1;
    for (uint32_t i = 0; i < 3; ++i) {
      const uint64_t g = l.grid() && i < l.grid()->size() ? l.grid()->Get(i) : 1;
      const uint64_t b = l.block() && i < l.block()->size() ? l.block()->Get(i) : 1;
      if (g == 0 || g > max_grid[i] || b == 0)
        return "launch geometry grid[" + std::to_string(i) + "]=" + std::to_string(g) + " block[" +
               std::to_string(i) + "]=" + std::to_string(b);
      threads *= b;
    }
    if ((l.grid() && l.grid()->size() > 3) || (l.block() && l.block()->size() > 3) ||
        threads > 1024)
      return "a block of " + std::to_string(threads) + " threads or more than 3 dimensions";
    if (l.shared_bytes() > 228 * 1024)
      return "shared_bytes " + std::to_string(l.shared_bytes()) + " above any GPU's 228 KiB";
    if (l.args()) {
      for (uint32_t k = 0; k < l.args()->size(); ++k) {
        const int32_t a = l.args()->Get(k);
        if (a < -1 || a >= static_cast<int32_t>(bufs_.size()))
          return "argument " + std::to_string(k) + " names buffer " + std::to_string(a);
      }
    }
    if (const auto* pairs = l.same_index()) {
      const int64_t n = l.args() ? l.args()->size() : 0;
      if (pairs->size() % 2 != 0)
        return "same_index has " + std::to_string(pairs->size()) + " entries, not pairs";
      for (uint32_t k = 0; k < pairs->size(); k += 2) {
        const int32_t in = pairs->Get(k), out = pairs->Get(k + 1);
        if (in < 0 || out < 0 || in >= n || out >= n || in == out)
          return "same_index pairs argument " + std::to_string(in) + " with argument " +
                 std::to_string(out) + " of " + std::to_string(n);
      }
    }
    return "";
  }

  std::string Conv(const fbc::ConvCall& c) {
    if (!c.x_dims() || !c.w_dims() || !c.y_dims() || c.x_dims()->size() < 3 ||
        c.x_dims()->size() > 5 || c.w_dims()->size() != c.x_dims()->size() ||
        c.y_dims()->size() != c.x_dims()->size())
      return "conv dims must be 3-D to 5-D and agree";
    const uint32_t spatial = c.x_dims()->size() - 2;
    auto sized = [&](const flatbuffers::Vector<int64_t>* v, uint32_t n, int64_t min) {
      if (!v || v->size() != n) return false;
      for (int64_t x : *v) {
        if (x < min || x > (int64_t{1} << 31)) return false;
      }
      return true;
    };
    if (!sized(c.pads(), 2 * spatial, 0) || !sized(c.strides(), spatial, 1) ||
        !sized(c.dilations(), spatial, 1))
      return "conv pads, strides or dilations of the wrong length or range";
    if (c.group() < 1 || c.group() > (int64_t{1} << 31))
      return "conv group " + std::to_string(c.group());
    uint64_t x = 0, w = 0, y = 0;
    if (!Product(c.x_dims(), &x) || !Product(c.w_dims(), &w) || !Product(c.y_dims(), &y))
      return "conv dims must be positive";
    if (auto e = Holds("conv x", c.x(), x); !e.empty()) return e;
    if (auto e = Holds("conv w", c.w(), w); !e.empty()) return e;
    if (auto e = Holds("conv y", c.y(), y); !e.empty()) return e;
    if (c.z() >= 0) {
      if (auto e = Holds("conv z", c.z(), y); !e.empty()) return e;
    }
    if (c.bias() >= 0) {
      if (auto e = Holds("conv bias", c.bias(), static_cast<uint64_t>(c.y_dims()->Get(1)));
          !e.empty())
        return e;
    }
    return "";
  }

  std::string Gemm(const fbc::GemmCall& g) {
    const int64_t limit = int64_t{1} << 40;
    for (int64_t v : {g.m(), g.n(), g.k(), g.batch()}) {
      if (v <= 0 || v > limit) return "gemm m, n, k and batch must be positive";
    }
    for (int64_t v : {g.stride_a(), g.stride_b(), g.stride_y()}) {
      if (v < 0 || v > limit) return "gemm batch strides must be non-negative";
    }
    // Each operand as stored: rows x cols row-major, rows `ld` apart (0: packed, ld = cols).
    struct Operand {
      int64_t rows, cols, ld, stride;
    };
    const Operand oa = g.trans_a() ? Operand{g.k(), g.m(), g.lda(), g.stride_a()}
                                   : Operand{g.m(), g.k(), g.lda(), g.stride_a()};
    const Operand ob = g.trans_b() ? Operand{g.n(), g.k(), g.ldb(), g.stride_b()}
                                   : Operand{g.k(), g.n(), g.ldb(), g.stride_b()};
    const Operand oy{g.m(), g.n(), g.ldy(), g.stride_y()};
    for (const Operand* o : {&oa, &ob, &oy}) {
      if (o->ld != 0 && (o->ld < o->cols || o->ld > limit))
        return "gemm leading dimension shorter than a row, or past the limit";
    }
    // Elements from the start of each operand the call touches: the last batch's last row.
    auto extent = [&](const Operand& o, uint64_t* out) {
      const int64_t ld = o.ld > 0 ? o.ld : o.cols;
      uint64_t last = 0, rows = 0;
      if (!Mul(static_cast<uint64_t>(g.batch() - 1), o.stride, &last) ||
          !Mul(static_cast<uint64_t>(o.rows - 1), ld, &rows) || last > kMaxProgramBytes - rows ||
          last + rows > kMaxProgramBytes - static_cast<uint64_t>(o.cols))
        return false;
      *out = last + rows + static_cast<uint64_t>(o.cols);
      return true;
    };
    uint64_t a = 0, b = 0, y = 0;
    if (!extent(oa, &a) || !extent(ob, &b) || !extent(oy, &y))
      return "gemm operand extents overflow";
    if (auto e = Holds("gemm a", g.a(), a); !e.empty()) return e;
    if (auto e = Holds("gemm b", g.b(), b); !e.empty()) return e;
    if (auto e = Holds("gemm y", g.y(), y); !e.empty()) return e;
    if (g.c() >= 0) {
      if (auto e = Holds("gemm c", g.c(), y); !e.empty()) return e;
    }
    if (g.bias() >= 0) {
      if (auto e = Holds("gemm bias", g.bias(), static_cast<uint64_t>(g.n())); !e.empty()) return e;
    }
    return "";
  }

  const fbc::Program& p_;
  const flatbuffers::Vector<flatbuffers::Offset<fbc::Buffer>>& bufs_;
};

}  // namespace

std::string ValidateCudaProgram(const fbc::Program& program, uint32_t num_weights) {
  if (!program.buffers() || !program.steps() || !program.inputs() || !program.outputs())
    return "the program is incomplete (buffers, steps, inputs or outputs missing)";
  return Validator(program).Run(num_weights);
}

}  // namespace ortc::cuda
