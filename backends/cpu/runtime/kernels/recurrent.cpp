// Recurrent layers: RNN, GRU and LSTM (ONNX opsets 7, 14 and 22): every direction, both layouts,
// the optional inputs (B, sequence_lens, initial_h, initial_c, P) and outputs (Y, Y_h, Y_c).
//
// The input projection X * W^T does not depend on the state, so it is one GEMM over all time
// steps before the recurrence; each step then multiplies the previous state by R^T (one more
// GEMM) and applies the gate math elementwise. With layout 1 the rows of X are (batch, time)
// instead of (time, batch); the projection is the same GEMM and only the row lookup differs.
//
// Points the specification leaves open, decided as ONNX Runtime decides them (it is the
// reference the e2e test compares with):
// - `clip` bounds each gate's pre-activation (after biases and peepholes), not the cell state.
// - activation_alpha / activation_beta are consumed in list order, each value only by an
//   activation that takes that parameter; when the list runs out the defaults of the matching
//   ONNX operators apply (LeakyRelu 0.01, HardSigmoid 0.2 / 0.5, ...). Names are matched
//   case-insensitively. A bidirectional layer given one direction's list uses it for both.
// - LSTM input_forget couples the gates as f = 1 - i.
// - With sequence_lens, an entry's steps at or past its length leave its state unchanged and
//   its rows of Y zero, so Y_h / Y_c hold its last valid state; the reverse direction starts
//   at the entry's last valid step.
// float16 / bfloat16 are computed in float, double in double.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/shape_text.h"
#include "cpu/runtime/kernels/blas.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

enum class Cell { kRnn, kGru, kLstm };

enum class Act {
  kSigmoid,
  kTanh,
  kRelu,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct Activation {
  Act kind = Act::kTanh;
  float alpha = 0.f, beta = 0.f;
};

struct ActInfo {
  const char* name;
  Act kind;
  bool uses_alpha, uses_beta;
  float default_alpha, default_beta;
};

constexpr ActInfo kActivations[] = {
    {"sigmoid", Act::kSigmoid, false, false, 0.f, 0.f},
    {"tanh", Act::kTanh, false, false, 0.f, 0.f},
    {"relu", Act::kRelu, false, false, 0.f, 0.f},
    {"affine", Act::kAffine, true, true, 1.f, 0.f},
    {"leakyrelu", Act::kLeakyRelu, true, false, 0.01f, 0.f},
    {"thresholdedrelu", Act::kThresholdedRelu, true, false, 1.f, 0.f},
    {"scaledtanh", Act::kScaledTanh, true, true, 1.f, 1.f},
    {"hardsigmoid", Act::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", Act::kElu, true, false, 1.f, 0.f},
    {"softsign", Act::kSoftsign, false, false, 0.f, 0.f},
    {"softplus", Act::kSoftplus, false, false, 0.f, 0.f},
};

template <typename T>
T Apply(const Activation& a, T x) {
  const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
  switch (a.kind) {
    case Act::kSigmoid:
      return T(1) / (T(1) + std::exp(-x));
    case Act::kTanh:
      return std::tanh(x);
    case Act::kRelu:
      return std::max(x, T(0));
    case Act::kAffine:
      return alpha * x + beta;
    case Act::kLeakyRelu:
      return x >= T(0) ? x : alpha * x;
    case Act::kThresholdedRelu:
      return x > alpha ? x : T(0);
    case Act::kScaledTanh:
      return alpha * std::tanh(beta * x);
    case Act::kHardSigmoid:
      return std::clamp(alpha * x + beta, T(0), T(1));
    case Act::kElu:
      return x >= T(0) ? x : alpha * (std::exp(x) - T(1));
    case Act::kSoftsign:
      return x / (T(1) + std::fabs(x));
    case Act::kSoftplus:  // log(1 + e^x), written so that large |x| neither overflows nor drops
      return std::max(x, T(0)) + std::log1p(std::exp(-std::fabs(x)));
  }
  return x;
}

int GateCount(Cell cell) {
  return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
}

// The per-direction activation list: RNN f; GRU f, g; LSTM f, g, h.
std::vector<std::string> DefaultActivations(Cell cell) {
  if (cell == Cell::kRnn) return {"Tanh"};
  if (cell == Cell::kGru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

Result<std::vector<Activation>> ParseActivations(const ExecOp& op, Cell cell, int64_t dirs) {
  const std::vector<std::string> defaults = DefaultActivations(cell);
  const size_t per = defaults.size();
  std::vector<std::string> names;
  auto it = op.attrs.find("activations");
  if (it != op.attrs.end()) names = it->second.strings;
  if (names.empty()) {
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (dirs == 2 && names.size() == per) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  if (names.size() != per * static_cast<size_t>(dirs)) {
    return InvalidArgument("activations lists " + std::to_string(names.size()) +
                           " functions, expected " + std::to_string(per * dirs) + " (" +
                           std::to_string(per) + " per direction)");
  }
  const std::vector<float> alphas = op.Floats("activation_alpha");
  const std::vector<float> betas = op.Floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> acts;
  for (const std::string& name : names) {
    std::string lower = name;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const ActInfo* info = nullptr;
    for (const ActInfo& a : kActivations) {
      if (lower == a.name) info = &a;
    }
    if (!info) return InvalidArgument("unknown activation '" + name + "'");
    Activation a{info->kind, info->default_alpha, info->default_beta};
    if (info->uses_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (info->uses_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    acts.push_back(a);
  }
  return acts;
}

// Everything the recurrence needs, validated.
struct Config {
  Cell cell;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  bool batch_major = false;          // layout 1
  bool reverse_only = false;         // direction "reverse"
  std::optional<double> clip;        // bound on gate pre-activations
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
  std::vector<int64_t> lengths;      // per batch entry
  std::vector<Activation> acts;      // per direction, per function

  // Offsets of a (time, direction, batch) row of Y and of a (direction, batch) row of a state.
  int64_t YRow(int64_t t, int64_t d, int64_t b) const {
    return (batch_major ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
  }
  int64_t StateRow(int64_t d, int64_t b) const {
    return (batch_major ? b * dirs + d : d * batch + b) * hidden;
  }
  std::vector<int64_t> YShape() const {
    return batch_major ? std::vector<int64_t>{batch, seq, dirs, hidden}
                       : std::vector<int64_t>{seq, dirs, batch, hidden};
  }
  std::vector<int64_t> StateShape() const {
    return batch_major ? std::vector<int64_t>{batch, dirs, hidden}
                       : std::vector<int64_t>{dirs, batch, hidden};
  }
};

using io::DimsText;

Result<Config> MakeConfig(KernelContext& c, Cell cell) {
  const ExecOp& op = c.op();
  Config cfg;
  cfg.cell = cell;
  cfg.gates = GateCount(cell);
  const Tensor& x = c.in(0);
  if (!IsFloatType(x.dtype())) return InvalidArgument("X must be a floating-point tensor");
  for (size_t i = 1; i < c.num_inputs(); ++i) {
    if (i == 4 || !c.has_input(i)) continue;  // sequence_lens is int32
    if (c.in(i).dtype() != x.dtype())
      return InvalidArgument("input " + std::to_string(i) + " has a different type than X");
  }
  if (x.rank() != 3) return InvalidArgument("X must be 3-D, got " + DimsText(x.shape()));
  const int64_t layout = op.Int("layout", 0);
  if (layout != 0 && layout != 1) return InvalidArgument("layout must be 0 or 1");
  cfg.batch_major = layout == 1;
  cfg.seq = x.shape()[cfg.batch_major ? 1 : 0];
  cfg.batch = x.shape()[cfg.batch_major ? 0 : 1];
  cfg.input = x.shape()[2];

  const std::string direction = op.String("direction", "forward");
  if (direction == "bidirectional") {
    cfg.dirs = 2;
  } else if (direction == "reverse") {
    cfg.reverse_only = true;
  } else if (direction != "forward") {
    return InvalidArgument("direction '" + direction +
                           "' is not forward, reverse or bidirectional");
  }

  if (!c.has_input(1) || !c.has_input(2)) return InvalidArgument("W and R are required");
  const Tensor& w = c.in(1);
  const Tensor& r = c.in(2);
  const int64_t g = cfg.gates;
  if (w.rank() != 3 || w.shape()[0] != cfg.dirs || w.shape()[2] != cfg.input ||
      w.shape()[1] % g != 0) {
    return InvalidArgument("W has shape " + DimsText(w.shape()) + ", expected [" +
                           std::to_string(cfg.dirs) + ", " + std::to_string(g) + "*hidden_size, " +
                           std::to_string(cfg.input) + "]");
  }
  cfg.hidden = w.shape()[1] / g;
  if (op.Has("hidden_size") && op.Int("hidden_size", 0) != cfg.hidden) {
    return InvalidArgument("hidden_size " + std::to_string(op.Int("hidden_size", 0)) +
                           " does not match W's " + std::to_string(cfg.hidden));
  }
  const int64_t h = cfg.hidden;
  if (r.shape() != std::vector<int64_t>{cfg.dirs, g * h, h}) {
    return InvalidArgument("R has shape " + DimsText(r.shape()) + ", expected " +
                           DimsText({cfg.dirs, g * h, h}));
  }
  if (c.has_input(3) && c.in(3).shape() != std::vector<int64_t>{cfg.dirs, 2 * g * h}) {
    return InvalidArgument("B has shape " + DimsText(c.in(3).shape()) + ", expected " +
                           DimsText({cfg.dirs, 2 * g * h}));
  }
  cfg.lengths.assign(static_cast<size_t>(cfg.batch), cfg.seq);
  if (c.has_input(4)) {
    auto lens = IntsOf(c.input(4));
    if (!lens || static_cast<int64_t>(lens->size()) != cfg.batch)
      return InvalidArgument("sequence_lens must hold one integer per batch entry");
    for (int64_t len : *lens) {
      if (len < 0 || len > cfg.seq) {
        return InvalidArgument("sequence_lens value " + std::to_string(len) + " is outside [0, " +
                               std::to_string(cfg.seq) + "]");
      }
    }
    cfg.lengths = *lens;
  }
  for (size_t i : {size_t{5}, size_t{6}}) {
    if (i == 6 && cell != Cell::kLstm) continue;
    if (c.has_input(i) && c.in(i).shape() != cfg.StateShape()) {
      return InvalidArgument(std::string(i == 5 ? "initial_h" : "initial_c") + " has shape " +
                             DimsText(c.in(i).shape()) + ", expected " +
                             DimsText(cfg.StateShape()));
    }
  }
  if (cell == Cell::kLstm && c.has_input(7) &&
      c.in(7).shape() != std::vector<int64_t>{cfg.dirs, 3 * h}) {
    return InvalidArgument("P has shape " + DimsText(c.in(7).shape()) + ", expected " +
                           DimsText({cfg.dirs, 3 * h}));
  }
  // BLAS takes int dimensions.
  if (cfg.seq * cfg.batch > INT_MAX || g * h > INT_MAX || cfg.input > INT_MAX)
    return InvalidArgument("dimensions too large");

  if (op.Has("clip")) {
    const double clip = op.Float("clip", 0.f);
    if (!(clip > 0)) return InvalidArgument("clip must be positive");
    cfg.clip = clip;
  }
  if (cell == Cell::kGru) cfg.linear_before_reset = op.Int("linear_before_reset", 0) != 0;
  if (cell == Cell::kLstm) cfg.input_forget = op.Int("input_forget", 0) != 0;
  auto acts = ParseActivations(op, cell, cfg.dirs);
  if (!acts.ok()) return acts.status();
  cfg.acts = std::move(acts).value();
  return cfg;
}

// A tensor's elements as T (converted copy unless the type already matches); empty when absent.
template <typename T>
std::vector<T> Load(const Tensor* t) {
  if (!t) return {};
  std::vector<T> v(static_cast<size_t>(t->elements()));
  if (t->dtype() == (sizeof(T) == 4 ? DataType::kFloat : DataType::kDouble)) {
    if (!v.empty()) std::memcpy(v.data(), t->raw(), v.size() * sizeof(T));
  } else {
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<T>(ElementAsDouble(*t, static_cast<int64_t>(i)));
  }
  return v;
}

template <typename T>
void Store(Tensor& t, const std::vector<T>& v) {
  if (t.dtype() == (sizeof(T) == 4 ? DataType::kFloat : DataType::kDouble)) {
    if (!v.empty()) std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(T));
  } else {
    for (size_t i = 0; i < v.size(); ++i) SetElementFromDouble(t, static_cast<int64_t>(i), v[i]);
  }
}

template <typename T>
class Recurrence {
 public:
  Recurrence(const Config& cfg, KernelContext& c) : cfg_(cfg), c_(c) {}

  Status Run() {
    const int64_t s = cfg_.seq, n = cfg_.batch, h = cfg_.hidden, gh = cfg_.gates * h;
    x_ = Load<T>(c_.input(0));
    w_ = Load<T>(c_.input(1));
    r_ = Load<T>(c_.input(2));
    b_ = Load<T>(c_.input(3));
    h0_ = Load<T>(c_.input(5));
    if (cfg_.cell == Cell::kLstm) {
      c0_ = Load<T>(c_.input(6));
      p_ = Load<T>(c_.input(7));
    }
    want_y_ = c_.wants_output(0);
    if (want_y_) y_.assign(static_cast<size_t>(s * cfg_.dirs * n * h), T(0));
    yh_.assign(static_cast<size_t>(cfg_.dirs * n * h), T(0));
    yc_.assign(yh_.size(), T(0));
    proj_.resize(static_cast<size_t>(s * n * gh));
    gates_.resize(static_cast<size_t>(n * gh));
    state_.resize(static_cast<size_t>(n * h));
    cell_.resize(state_.size());
    scratch_.resize(state_.size());
    for (int64_t d = 0; d < cfg_.dirs; ++d) Direction(d);

    if (want_y_) Store(c_.OutputUninit(0, c_.in(0).dtype(), cfg_.YShape()), y_);
    if (c_.wants_output(1)) Store(c_.OutputUninit(1, c_.in(0).dtype(), cfg_.StateShape()), yh_);
    if (cfg_.cell == Cell::kLstm && c_.wants_output(2))
      Store(c_.OutputUninit(2, c_.in(0).dtype(), cfg_.StateShape()), yc_);
    return Status::Ok();
  }

 private:
  T Clip(T v) const {
    return cfg_.clip ? std::clamp(v, static_cast<T>(-*cfg_.clip), static_cast<T>(*cfg_.clip)) : v;
  }
  const Activation& Fn(int64_t d, int k) const {
    const size_t per = static_cast<size_t>(cfg_.cell == Cell::kRnn ? 1 : cfg_.gates - 1);
    return cfg_.acts[static_cast<size_t>(d) * per + static_cast<size_t>(k)];
  }

  void Direction(int64_t d) {
    const int64_t s = cfg_.seq, n = cfg_.batch, in = cfg_.input, h = cfg_.hidden;
    const int64_t gh = cfg_.gates * h;
    const bool reverse = cfg_.reverse_only || d == 1;
    // Input projection of all steps; rows follow X's (time, batch) or (batch, time) order.
    BlasGemm(false, true, s * n, gh, in, T(1), x_.data(), in, w_.data() + d * gh * in, in, T(0),
             proj_.data(), gh);
    // Wb + Rb per gate column; GRU with linear_before_reset keeps Rbh apart (it is reset-gated).
    bias_.assign(static_cast<size_t>(gh), T(0));
    rbh_.assign(static_cast<size_t>(h), T(0));
    if (!b_.empty()) {
      const T* wb = b_.data() + d * 2 * gh;
      const T* rb = wb + gh;
      for (int64_t j = 0; j < gh; ++j) bias_[j] = wb[j] + rb[j];
      if (cfg_.cell == Cell::kGru && cfg_.linear_before_reset) {
        for (int64_t j = 0; j < h; ++j) {
          bias_[2 * h + j] = wb[2 * h + j];
          rbh_[j] = rb[2 * h + j];
        }
      }
    }
    for (int64_t b = 0; b < n; ++b) {
      const int64_t row = cfg_.StateRow(d, b);
      for (int64_t j = 0; j < h; ++j) {
        state_[b * h + j] = h0_.empty() ? T(0) : h0_[row + j];
        cell_[b * h + j] = c0_.empty() ? T(0) : c0_[row + j];
      }
    }
    for (int64_t step = 0; step < s; ++step) {
      const int64_t t = reverse ? s - 1 - step : step;
      for (int64_t b = 0; b < n; ++b) {
        const T* src = proj_.data() + (cfg_.batch_major ? b * s + t : t * n + b) * gh;
        T* dst = gates_.data() + b * gh;
        for (int64_t j = 0; j < gh; ++j) dst[j] = src[j] + bias_[j];
      }
      switch (cfg_.cell) {
        case Cell::kRnn:
          RnnStep(d, t);
          break;
        case Cell::kGru:
          GruStep(d, t);
          break;
        case Cell::kLstm:
          LstmStep(d, t);
          break;
      }
    }
    for (int64_t b = 0; b < n; ++b) {
      const int64_t row = cfg_.StateRow(d, b);
      for (int64_t j = 0; j < h; ++j) {
        yh_[row + j] = state_[b * h + j];
        yc_[row + j] = cell_[b * h + j];
      }
    }
  }

  bool Active(int64_t b, int64_t t) const { return t < cfg_.lengths[b]; }

  void Emit(int64_t d, int64_t t, int64_t b) {
    const int64_t h = cfg_.hidden;
    if (!want_y_ || h == 0) return;  // memcpy from an empty vector's null data is undefined
    std::memcpy(y_.data() + cfg_.YRow(t, d, b), state_.data() + b * h, h * sizeof(T));
  }

  // Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb)
  void RnnStep(int64_t d, int64_t t) {
    const int64_t n = cfg_.batch, h = cfg_.hidden;
    BlasGemm(false, true, n, h, h, T(1), state_.data(), h, r_.data() + d * h * h, h, T(1),
             gates_.data(), h);
    const Activation& f = Fn(d, 0);
    for (int64_t b = 0; b < n; ++b) {
      if (!Active(b, t)) continue;
      for (int64_t j = 0; j < h; ++j) state_[b * h + j] = Apply(f, Clip(gates_[b * h + j]));
      Emit(d, t, b);
    }
  }

  // Gates z, r, h: zt = f(.), rt = f(.), ht = g(Xt Wh^T + (rt . Ht-1) Rh^T + Rbh + Wbh), or with
  // linear_before_reset g(Xt Wh^T + rt . (Ht-1 Rh^T + Rbh) + Wbh); Ht = (1 - zt) ht + zt Ht-1.
  void GruStep(int64_t d, int64_t t) {
    const int64_t n = cfg_.batch, h = cfg_.hidden, gh = 3 * h;
    const T* r = r_.data() + d * gh * h;
    const Activation& f = Fn(d, 0);
    const Activation& g = Fn(d, 1);
    BlasGemm(false, true, n, 2 * h, h, T(1), state_.data(), h, r, h, T(1), gates_.data(), gh);
    for (int64_t b = 0; b < n; ++b) {
      T* row = gates_.data() + b * gh;
      for (int64_t j = 0; j < 2 * h; ++j) row[j] = Apply(f, Clip(row[j]));
    }
    if (cfg_.linear_before_reset) {
      BlasGemm(false, true, n, h, h, T(1), state_.data(), h, r + 2 * h * h, h, T(0),
               scratch_.data(), h);
      for (int64_t b = 0; b < n; ++b) {
        T* row = gates_.data() + b * gh;
        for (int64_t j = 0; j < h; ++j)
          row[2 * h + j] += row[h + j] * (scratch_[b * h + j] + rbh_[j]);
      }
    } else {
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t j = 0; j < h; ++j)
          scratch_[b * h + j] = gates_[b * gh + h + j] * state_[b * h + j];
      }
      BlasGemm(false, true, n, h, h, T(1), scratch_.data(), h, r + 2 * h * h, h, T(1),
               gates_.data() + 2 * h, gh);
    }
    for (int64_t b = 0; b < n; ++b) {
      if (!Active(b, t)) continue;
      const T* row = gates_.data() + b * gh;
      for (int64_t j = 0; j < h; ++j) {
        const T z = row[j], cand = Apply(g, Clip(row[2 * h + j]));
        state_[b * h + j] = (T(1) - z) * cand + z * state_[b * h + j];
      }
      Emit(d, t, b);
    }
  }

  // Gates i, o, f, c; peepholes P = (Pi, Po, Pf). it = f(. + Pi Ct-1), ft = f(. + Pf Ct-1),
  // ct = g(.), Ct = ft Ct-1 + it ct, ot = f(. + Po Ct), Ht = ot h(Ct).
  void LstmStep(int64_t d, int64_t t) {
    const int64_t n = cfg_.batch, h = cfg_.hidden, gh = 4 * h;
    BlasGemm(false, true, n, gh, h, T(1), state_.data(), h, r_.data() + d * gh * h, h, T(1),
             gates_.data(), gh);
    const Activation& f = Fn(d, 0);
    const Activation& g = Fn(d, 1);
    const Activation& hf = Fn(d, 2);
    const T* pi = p_.empty() ? nullptr : p_.data() + d * 3 * h;
    const T* po = pi ? pi + h : nullptr;
    const T* pf = pi ? pi + 2 * h : nullptr;
    for (int64_t b = 0; b < n; ++b) {
      if (!Active(b, t)) continue;
      const T* row = gates_.data() + b * gh;
      for (int64_t j = 0; j < h; ++j) {
        const T prev = cell_[b * h + j];
        const T i = Apply(f, Clip(row[j] + (pi ? pi[j] * prev : T(0))));
        const T fg = cfg_.input_forget
                         ? T(1) - i
                         : Apply(f, Clip(row[2 * h + j] + (pf ? pf[j] * prev : T(0))));
        const T cand = Apply(g, Clip(row[3 * h + j]));
        const T next = fg * prev + i * cand;
        const T o = Apply(f, Clip(row[h + j] + (po ? po[j] * next : T(0))));
        cell_[b * h + j] = next;
        state_[b * h + j] = o * Apply(hf, next);
      }
      Emit(d, t, b);
    }
  }

  const Config& cfg_;
  KernelContext& c_;
  bool want_y_ = false;
  std::vector<T> x_, w_, r_, b_, h0_, c0_, p_;
  std::vector<T> y_, yh_, yc_;
  std::vector<T> proj_, gates_, state_, cell_, scratch_, bias_, rbh_;
};

Status RecurrentKernel(KernelContext& c, Cell cell) {
  auto cfg = MakeConfig(c, cell);
  if (!cfg.ok()) return cfg.status();
  if (c.in(0).dtype() == DataType::kDouble) return Recurrence<double>(*cfg, c).Run();
  return Recurrence<float>(*cfg, c).Run();
}

}  // namespace

void RegisterRecurrentKernels(KernelTable& t) {
  t["RNN"] = [](KernelContext& c) { return RecurrentKernel(c, Cell::kRnn); };
  t["GRU"] = [](KernelContext& c) { return RecurrentKernel(c, Cell::kGru); };
  t["LSTM"] = [](KernelContext& c) { return RecurrentKernel(c, Cell::kLstm); };
}

}  // namespace ortc::exec
