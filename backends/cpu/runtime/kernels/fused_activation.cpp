// Elementwise steps of fused ops, for the kernels that do not hand them to oneDNN as post-ops.
#include "cpu/runtime/kernels/fused_activation.h"

#include "cpu/runtime/kernels/vector_math.h"

#include <algorithm>
#include <cmath>

namespace ortc::exec {

Result<FusedActivation> ReadFusedActivation(const ExecOp& op) {
  FusedActivation act;
  if (!op.Has("activations")) return act;
  const auto it = op.attrs.find("activations");
  const std::vector<std::string>& names = it->second.strings;
  const std::vector<float> params = op.Floats("activation_params");
  if (params.size() != 2 * names.size())
    return InvalidArgument("node '" + op.name +
                           "': activation_params must hold two values per activation");
  using K = FusedStep::Kind;
  static const std::pair<const char*, K> kKinds[] = {{"Relu", K::kRelu},
                                                     {"LeakyRelu", K::kLeakyRelu},
                                                     {"Clip", K::kClip},
                                                     {"Sigmoid", K::kSigmoid},
                                                     {"HardSigmoid", K::kHardSigmoid},
                                                     {"HardSwish", K::kHardSwish},
                                                     {"Tanh", K::kTanh},
                                                     {"Linear", K::kLinear}};
  for (size_t i = 0; i < names.size(); ++i) {
    const auto* found = std::find_if(std::begin(kKinds), std::end(kKinds),
                                     [&](const auto& k) { return names[i] == k.first; });
    if (found == std::end(kKinds))
      return InvalidArgument("node '" + op.name + "' fuses the unknown activation '" + names[i] +
                             "'; recompile the model with this version of ortc");
    act.steps.push_back({found->second, params[2 * i], params[2 * i + 1]});
  }
  return act;
}

namespace {

float Step(const FusedStep& s, float v) {
  using K = FusedStep::Kind;
  switch (s.kind) {
    case K::kRelu:
      return std::max(v, 0.f);
    case K::kLeakyRelu:
      return v < 0.f ? v * s.alpha : v;
    case K::kClip:
      return std::min(std::max(v, s.alpha), s.beta);
    case K::kSigmoid:  // (ApplyFusedActivation runs Sigmoid and Tanh over whole arrays)
      return 1.f / (1.f + std::exp(-v));
    case K::kHardSigmoid:
      return std::min(std::max(s.alpha * v + s.beta, 0.f), 1.f);
    case K::kHardSwish:
      return v * std::min(std::max(v / 6.f + 0.5f, 0.f), 1.f);
    case K::kTanh:
      return std::tanh(v);
    case K::kLinear:
      return s.alpha * v + s.beta;
  }
  return v;
}

}  // namespace

void ApplyFusedActivation(const FusedActivation& act, float* y, int64_t n) {
  for (const FusedStep& s : act.steps) {
    // Sigmoid and Tanh through the same vectorised functions as the standalone ops, so a
    // graph computes the same bits whether or not the activation was fused.
    if (s.kind == FusedStep::Kind::kSigmoid) {
      SigmoidArray(y, y, n);
    } else if (s.kind == FusedStep::Kind::kTanh) {
      TanhArray(y, y, n);
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = Step(s, y[i]);
    }
  }
}

}  // namespace ortc::exec
