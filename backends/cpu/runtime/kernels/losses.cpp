// Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX's training-style
// losses, also used in inference graphs exported from PyTorch).
#include <cmath>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

// NLL over log-probabilities `logp` [N, C, d...] and integer `target` [N, d...].
Status Nll(KernelContext& c, const Tensor& logp, const Tensor& target, const Tensor* weight,
           size_t out_index) {
  const std::string reduction = c.op().String("reduction", "mean");
  const bool has_ignore = c.op().Has("ignore_index");
  const int64_t ignore = c.op().Int("ignore_index", 0);
  if (logp.rank() < 2) return c.Error("input must have rank >= 2");
  const int64_t N = logp.shape()[0], C = logp.shape()[1], inner = Product(logp.shape(), 2);
  auto labels = IntsOf(&target);
  if (!labels) return c.Error("target must be int32 or int64");
  // One label per (n, d...) position and one weight per class, as the loops below read them.
  if (static_cast<int64_t>(labels->size()) != N * inner)
    return c.Error(
        "target must hold one label per position of the input without its class "
        "dimension (" +
        std::to_string(N * inner) + "), it holds " + std::to_string(labels->size()));
  if (weight && weight->elements() != C)
    return c.Error("weight must have one element per class (" + std::to_string(C) + ")");
  std::vector<double> loss(static_cast<size_t>(N * inner), 0.0);
  double weight_sum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t t = (*labels)[n * inner + i];
      if (has_ignore && t == ignore) continue;
      if (t < 0 || t >= C) return c.Error("target " + std::to_string(t) + " out of range");
      const double w = weight ? ElementAsDouble(*weight, t) : 1.0;
      loss[n * inner + i] = -ElementAsDouble(logp, (n * C + t) * inner + i) * w;
      weight_sum += w;
    }
  if (reduction == "none") {
    Tensor& y = c.Output(out_index, logp.dtype(), target.shape());
    for (size_t i = 0; i < loss.size(); ++i)
      SetElementFromDouble(y, static_cast<int64_t>(i), loss[i]);
    return Status::Ok();
  }
  double total = 0;
  for (double l : loss) total += l;
  if (reduction == "mean") total = weight_sum == 0 ? 0 : total / weight_sum;
  Tensor& y = c.Output(out_index, logp.dtype(), {});
  SetElementFromDouble(y, 0, total);
  return Status::Ok();
}

Status NegativeLogLikelihoodLoss(KernelContext& c) {
  return Nll(c, c.in(0), c.in(1), c.input(2), 0);
}

Status SoftmaxCrossEntropyLoss(KernelContext& c) {
  const Tensor& scores = c.in(0);
  if (scores.rank() < 2) return c.Error("scores must have rank >= 2");
  const int64_t N = scores.shape()[0], C = scores.shape()[1], inner = Product(scores.shape(), 2);
  Tensor logp = Tensor::Allocate(scores.dtype(), scores.shape());
  // With no class (C = 0) there is nothing to normalise, and N * inner may be 2^40 rows.
  const int64_t rows = scores.elements() == 0 ? 0 : N;
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t i = 0; i < inner; ++i) {
      double peak = -INFINITY, sum = 0;
      for (int64_t k = 0; k < C; ++k)
        peak = std::max(peak, ElementAsDouble(scores, (n * C + k) * inner + i));
      for (int64_t k = 0; k < C; ++k)
        sum += std::exp(ElementAsDouble(scores, (n * C + k) * inner + i) - peak);
      for (int64_t k = 0; k < C; ++k) {
        const int64_t at = (n * C + k) * inner + i;
        SetElementFromDouble(logp, at, ElementAsDouble(scores, at) - peak - std::log(sum));
      }
    }
  if (c.wants_output(1)) c.SetOutput(1, logp);
  return Nll(c, logp, c.in(1), c.input(2), 0);
}

}  // namespace

void RegisterLossKernels(KernelTable& t) {
  t["NegativeLogLikelihoodLoss"] = NegativeLogLikelihoodLoss;
  t["SoftmaxCrossEntropyLoss"] = SoftmaxCrossEntropyLoss;
}

}  // namespace ortc::exec
