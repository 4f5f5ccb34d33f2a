// Activations of fused ops, for the kernels that do not hand them to oneDNN as post-ops.
#include "kernels/fused_activation.h"

#include <algorithm>
#include <cmath>

namespace ortc::exec {

Result<FusedActivation> ReadFusedActivation(const ExecOp& op) {
  FusedActivation act;
  const std::string name = op.String("activation", "");
  const std::vector<float> params = op.Floats("activation_params");
  auto param = [&](size_t i, float fallback) { return i < params.size() ? params[i] : fallback; };
  using K = FusedActivation::Kind;
  if (name.empty()) {
    act.kind = K::kNone;
  } else if (name == "Relu") {
    act.kind = K::kRelu;
  } else if (name == "LeakyRelu") {
    act.kind = K::kLeakyRelu;
    act.alpha = param(0, 0.01f);
  } else if (name == "Clip") {
    act.kind = K::kClip;
    act.alpha = param(0, -INFINITY);
    act.beta = param(1, INFINITY);
  } else if (name == "Sigmoid") {
    act.kind = K::kSigmoid;
  } else if (name == "HardSigmoid") {
    act.kind = K::kHardSigmoid;
    act.alpha = param(0, 0.2f);
    act.beta = param(1, 0.5f);
  } else if (name == "HardSwish") {
    act.kind = K::kHardSwish;
  } else if (name == "Tanh") {
    act.kind = K::kTanh;
  } else {
    return InvalidArgument("node '" + op.name + "' fuses the unknown activation '" + name +
                           "'; recompile the model with this version of ortc");
  }
  return act;
}

void ApplyFusedActivation(const FusedActivation& act, float* y, int64_t n) {
  using K = FusedActivation::Kind;
  switch (act.kind) {
    case K::kNone:
      return;
    case K::kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = std::max(y[i], 0.f);
      return;
    case K::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.f ? y[i] * act.alpha : y[i];
      return;
    case K::kClip:
      for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(y[i], act.alpha), act.beta);
      return;
    case K::kSigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = 1.f / (1.f + std::exp(-y[i]));
      return;
    case K::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i)
        y[i] = std::min(std::max(act.alpha * y[i] + act.beta, 0.f), 1.f);
      return;
    case K::kHardSwish:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] * std::min(std::max(y[i] / 6.f + 0.5f, 0.f), 1.f);
      return;
    case K::kTanh:
      for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(y[i]);
      return;
  }
}

}  // namespace ortc::exec
