// TfIdfVectorizer (opset 9) for int32/int64 input: counts the pool's n-grams in each row of X
// (1-D: one row; 2-D: one output row per input row) and writes Y[ngram_indexes[i]] for the
// i-th pool n-gram, as a count (TF), weight-if-present (IDF) or count times weight (TFIDF).
//
// The pool (pool_int64s) holds all 1-grams, then all 2-grams, ...; ngram_counts[k] is the offset
// in the pool where the (k+1)-grams start. An n-gram with skip s takes the items at j, j + s + 1,
// ..., j + (n - 1)(s + 1); every s in [0, max_skip_count] is tried, except for 1-grams, which do
// not depend on s and are counted once (as ONNX's test data expects). String input
// (pool_strings) is refused: ortc has no string tensors in its CPU kernels.
#include <algorithm>
#include <map>
#include <string>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

enum class Mode { kTf, kIdf, kTfIdf };

struct Pool {
  // Per n-gram length n (index n - 1): the pool's n-grams and their pool index.
  std::vector<std::map<std::vector<int64_t>, int64_t>> by_length;
  int64_t size = 0;  // number of n-grams in the pool
};

Result<Pool> MakePool(KernelContext& c) {
  const auto items = c.op().Ints("pool_int64s");
  const auto starts = c.op().Ints("ngram_counts");
  Pool pool;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k) + 1;
    const int64_t begin = starts[k];
    const int64_t end = k + 1 < starts.size() ? starts[k + 1] : static_cast<int64_t>(items.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(items.size()))
      return c.Error(
          "TfIdfVectorizer ngram_counts must be non-decreasing offsets into "
          "pool_int64s (size " +
          std::to_string(items.size()) + ")");
    if ((end - begin) % n != 0)
      return c.Error("TfIdfVectorizer pool has " + std::to_string(end - begin) + " items for " +
                     std::to_string(n) + "-grams, not a multiple of " + std::to_string(n));
    auto& level = pool.by_length.emplace_back();
    for (int64_t at = begin; at < end; at += n)
      level.emplace(std::vector<int64_t>(items.begin() + at, items.begin() + at + n), pool.size++);
  }
  return pool;
}

Status TfIdfVectorizer(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.dtype() == DataType::kString || c.op().Has("pool_strings"))
    return c.Error(
        "TfIdfVectorizer with string input (pool_strings) is not supported; "
        "only int32/int64 input with pool_int64s");
  if (x.dtype() != DataType::kInt32 && x.dtype() != DataType::kInt64)
    return c.Error("TfIdfVectorizer input must be int32 or int64");
  if (x.rank() != 1 && x.rank() != 2) return c.Error("TfIdfVectorizer input must be 1-D or 2-D");
  const int64_t min_n = c.op().Int("min_gram_length", 1), max_n = c.op().Int("max_gram_length", 1);
  const int64_t max_skip = c.op().Int("max_skip_count", 0);
  if (min_n < 1 || max_n < min_n)
    return c.Error("TfIdfVectorizer needs 1 <= min_gram_length <= max_gram_length");
  if (max_skip < 0) return c.Error("TfIdfVectorizer max_skip_count must be >= 0");
  const std::string mode_name = c.op().String("mode", "");
  Mode mode;
  if (mode_name == "TF")
    mode = Mode::kTf;
  else if (mode_name == "IDF")
    mode = Mode::kIdf;
  else if (mode_name == "TFIDF")
    mode = Mode::kTfIdf;
  else
    return c.Error("TfIdfVectorizer mode must be TF, IDF or TFIDF, got '" + mode_name + "'");

  auto pool = MakePool(c);
  if (!pool.ok()) return pool.status();
  const auto indexes = c.op().Ints("ngram_indexes");
  if (static_cast<int64_t>(indexes.size()) != pool->size)
    return c.Error("TfIdfVectorizer has " + std::to_string(indexes.size()) + " ngram_indexes for " +
                   std::to_string(pool->size) + " pool n-grams");
  int64_t width = 0;
  for (int64_t i : indexes) {
    if (i < 0 || i >= kMaxTensorElements)  // i + 1 below must not overflow
      return c.Error("TfIdfVectorizer ngram_indexes must be in [0, 2^40)");
    width = std::max(width, i + 1);
  }
  const auto weights = c.op().Floats("weights");
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != pool->size)
    return c.Error("TfIdfVectorizer has " + std::to_string(weights.size()) + " weights for " +
                   std::to_string(pool->size) + " pool n-grams");

  const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1, cols = x.shape().back();
  Tensor& y =
      c.Output(0, DataType::kFloat,
               x.rank() == 2 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{width});
  float* out = y.mutable_data<float>();
  const auto values = IntsOf(&x);
  std::vector<int64_t> counts(static_cast<size_t>(pool->size));
  std::vector<int64_t> gram;
  const int64_t top = std::min<int64_t>(max_n, static_cast<int64_t>(pool->by_length.size()));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    const int64_t* row = values->data() + r * cols;
    for (int64_t n = min_n; n <= top; ++n) {
      const auto& level = pool->by_length[n - 1];
      if (level.empty()) continue;
      gram.resize(static_cast<size_t>(n));
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip) {
        const int64_t stride = skip + 1, span = (n - 1) * stride;
        if (span >= cols) break;
        for (int64_t j = 0; j + span < cols; ++j) {
          for (int64_t k = 0; k < n; ++k) gram[k] = row[j + k * stride];
          if (auto it = level.find(gram); it != level.end()) ++counts[it->second];
        }
      }
    }
    for (int64_t i = 0; i < pool->size; ++i) {
      if (counts[i] == 0) continue;
      const double weight = weights.empty() ? 1.0 : weights[i];
      const double v = mode == Mode::kTf    ? static_cast<double>(counts[i])
                       : mode == Mode::kIdf ? weight
                                            : static_cast<double>(counts[i]) * weight;
      out[r * width + indexes[i]] = static_cast<float>(v);
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterTfIdfKernels(KernelTable& t) {
  t["TfIdfVectorizer"] = TfIdfVectorizer;
}

}  // namespace ortc::exec
