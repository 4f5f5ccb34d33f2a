// Einsum: a general contraction by direct summation, for any equation ONNX allows (explicit or
// implicit output, "..." broadcasting, repeated labels in one operand as diagonals). Each output
// element sums the product of the operands over the labels the output does not keep. Computed in
// double, written in the operands' type; small shapes (the op is rare in exported models).
#include <algorithm>
#include <map>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

// Labels are letters 'a'..'z', 'A'..'Z' (0..51); ellipsis dims get 52 + their position.
constexpr int kEllipsisBase = 52;

int LetterLabel(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
  return -1;
}

// One operand's (or the output's) term: letters, with "..." at most once.
struct Term {
  std::vector<int> letters_before, letters_after;  // around the ellipsis
  bool has_ellipsis = false;
};

Result<Term> ParseTerm(const std::string& s, const std::string& equation) {
  Term t;
  bool after = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.has_ellipsis)
        return InvalidArgument("Einsum '" + equation + "': two ellipses in a term");
      t.has_ellipsis = after = true;
      i += 2;
      continue;
    }
    const int l = LetterLabel(s[i]);
    if (l < 0)
      return InvalidArgument("Einsum '" + equation + "': unexpected character '" + s[i] + "'");
    (after ? t.letters_after : t.letters_before).push_back(l);
  }
  return t;
}

// The term's labels for an operand of `rank` dims, ellipsis dims right-aligned among `ellipsis`.
Result<std::vector<int>> Expand(const Term& t, int64_t rank, int64_t ellipsis_rank,
                                const std::string& equation) {
  const int64_t letters = static_cast<int64_t>(t.letters_before.size() + t.letters_after.size());
  const int64_t own = rank - letters;
  if (own < 0 || (!t.has_ellipsis && own != 0))
    return InvalidArgument("Einsum '" + equation + "': a term does not match its operand's rank " +
                           std::to_string(rank));
  std::vector<int> labels = t.letters_before;
  for (int64_t j = ellipsis_rank - own; j < ellipsis_rank; ++j)
    labels.push_back(kEllipsisBase + static_cast<int>(j));
  labels.insert(labels.end(), t.letters_after.begin(), t.letters_after.end());
  return labels;
}

Status Einsum(KernelContext& c) {
  std::string equation;
  for (char ch : c.op().String("equation", ""))
    if (ch != ' ') equation += ch;
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    auto t =
        ParseTerm(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start),
                  equation);
    if (!t.ok()) return t.status();
    terms.push_back(*t);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.num_inputs())
    return c.Error("Einsum '" + equation + "' has " + std::to_string(terms.size()) + " terms for " +
                   std::to_string(c.num_inputs()) + " inputs");
  int64_t ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const int64_t letters =
        static_cast<int64_t>(terms[k].letters_before.size() + terms[k].letters_after.size());
    if (terms[k].has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, c.in(k).rank() - letters);
  }
  // Each label's size: letters must agree; ellipsis dims broadcast from 1.
  std::map<int, int64_t> size;
  std::vector<std::vector<int>> operand_labels;
  for (size_t k = 0; k < terms.size(); ++k) {
    auto labels = Expand(terms[k], c.in(k).rank(), ellipsis_rank, equation);
    if (!labels.ok()) return labels.status();
    for (size_t d = 0; d < labels->size(); ++d) {
      const int l = (*labels)[d];
      const int64_t n = c.in(k).shape()[d];
      auto it = size.find(l);
      if (it == size.end() || it->second == 1) {
        size[l] = n;
      } else if (n != it->second && !(l >= kEllipsisBase && n == 1)) {
        return c.Error("Einsum '" + equation + "': a label has sizes " +
                       std::to_string(it->second) + " and " + std::to_string(n));
      }
    }
    operand_labels.push_back(std::move(labels).value());
  }
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    auto t = ParseTerm(equation.substr(arrow + 2), equation);
    if (!t.ok()) return t.status();
    out_labels = t->letters_before;
    if (t->has_ellipsis)
      for (int64_t j = 0; j < ellipsis_rank; ++j)
        out_labels.push_back(kEllipsisBase + static_cast<int>(j));
    out_labels.insert(out_labels.end(), t->letters_after.begin(), t->letters_after.end());
    for (int l : out_labels)
      if (!size.count(l))
        return c.Error("Einsum '" + equation + "': an output label is in no input");
    // A repeated output label would index the output's diagonal past the inputs.
    std::vector<int> sorted = out_labels;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return c.Error("Einsum '" + equation + "': an output label is repeated");
  } else {
    // Implicit output: the ellipsis dims, then the letters used once, in alphabetical order.
    std::map<int, int> uses;
    for (const auto& labels : operand_labels)
      for (int l : labels) uses[l]++;
    for (int64_t j = 0; j < ellipsis_rank; ++j)
      out_labels.push_back(kEllipsisBase + static_cast<int>(j));
    std::vector<std::pair<char, int>> once;
    for (const auto& [l, n] : uses)
      if (l < kEllipsisBase && n == 1) once.emplace_back(l < 26 ? 'a' + l : 'A' + (l - 26), l);
    std::sort(once.begin(), once.end());
    for (const auto& [ch, l] : once) out_labels.push_back(l);
  }
  std::vector<int> summed;
  for (const auto& [l, n] : size)
    if (std::find(out_labels.begin(), out_labels.end(), l) == out_labels.end()) summed.push_back(l);

  // Per operand and label: the element stride that label moves (summed over repeated labels,
  // which walks a diagonal; zero for broadcast dims).
  std::vector<std::map<int, int64_t>> stride(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    const auto& shape = c.in(k).shape();
    int64_t s = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] != 1) stride[k][operand_labels[k][d]] += s;
      s *= shape[d];
    }
  }
  std::vector<int64_t> out_shape;
  for (int l : out_labels) out_shape.push_back(size[l]);
  const DataType dtype = c.in(0).dtype();
  Tensor& y = c.Output(0, dtype, out_shape);
  std::vector<int> order = out_labels;
  order.insert(order.end(), summed.begin(), summed.end());
  // The loop below runs inner times per output element: bounded before multiplying, so that
  // neither the product overflows nor a hostile equation runs for hours.
  int64_t inner = 1;
  for (int l : summed) {
    if (size[l] > 0 && inner > kMaxTensorElements / size[l])
      return c.Error("Einsum '" + equation + "' sums over more than 2^40 terms");
    inner *= size[l];
  }
  if (inner > 0 && y.elements() > kMaxTensorElements / inner)
    return c.Error("Einsum '" + equation + "' needs more than 2^40 multiply-adds");
  std::vector<int64_t> index(order.size(), 0);
  std::vector<int64_t> offset(terms.size(), 0);
  for (int64_t o = 0; o < y.elements(); ++o) {
    double sum = 0;
    for (int64_t r = 0; r < inner; ++r) {
      double product = 1;
      for (size_t k = 0; k < terms.size(); ++k) product *= ElementAsDouble(c.in(k), offset[k]);
      sum += product;
      // Odometer over all labels, last fastest; offsets follow each label's strides.
      for (int64_t p = static_cast<int64_t>(order.size()) - 1; p >= 0; --p) {
        const int l = order[p];
        index[p]++;
        for (size_t k = 0; k < terms.size(); ++k)
          offset[k] += stride[k].count(l) ? stride[k][l] : 0;
        if (index[p] < size[l]) break;
        for (size_t k = 0; k < terms.size(); ++k)
          offset[k] -= (stride[k].count(l) ? stride[k][l] : 0) * index[p];
        index[p] = 0;
      }
    }
    SetElementFromDouble(y, o, sum);
  }
  return Status::Ok();
}

}  // namespace

void RegisterEinsumKernels(KernelTable& t) {
  t["Einsum"] = Einsum;
}

}  // namespace ortc::exec
