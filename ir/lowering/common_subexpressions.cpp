// Common subexpression elimination (see common_subexpressions.h): value numbering of small
// constants by their bytes, then of ops by (type, domain, version, inputs, attributes).
#include "lowering/common_subexpressions.h"

#include <xxhash.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "lowering/identity_ops.h"

namespace ortc::lowering {
namespace {

// Constants up to this size are compared by their bytes: masks' 0 and -inf, scales, shapes, and
// the position ranges and masks that grow with the context (a cache of 4096 rows has a 32 KiB
// int64 row range per layer). Larger ones are weights, which the binary stores once anyway.
constexpr int64_t kMaxComparedBytes = int64_t{1} << 20;

bool Mergeable(const IrOp& op) {
  static const std::set<std::string> random = {
      "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
      "Bernoulli",    "Multinomial",      "Dropout"};
  return !op.removed && op.subgraphs.empty() && !op.outputs.empty() && !random.count(op.op_type);
}

std::string Key(const IrOp& op) {
  std::string k = op.domain + "|" + op.op_type + "|" + std::to_string(op.since_version) + "|";
  for (int v : op.inputs) k += std::to_string(v) + ",";
  k += "|";
  for (const auto& a : op.attributes) k += a.SerializeAsString() + ";";
  return k;
}

}  // namespace

int EliminateCommonSubexpressions(SubgraphIr* ir) {
  // Equal small constants become one value: found by (type, shape, hash of the bytes), then
  // the bytes themselves compared, so a hash collision never merges two different constants.
  using ConstantKey = std::tuple<int32_t, std::string, uint64_t>;
  std::map<ConstantKey, std::vector<std::pair<int, std::shared_ptr<const std::string>>>> constants;
  std::vector<int> same(ir->values.size());
  for (size_t v = 0; v < ir->values.size(); ++v) {
    same[v] = static_cast<int>(v);
    const IrValue& value = ir->values[v];
    if (value.kind != ValueKind::kWeight || !value.bytes ||
        value.bytes->size() > kMaxComparedBytes || value.layout != "plain")
      continue;
    auto bytes = value.bytes->ReadAll();
    if (!bytes.ok()) continue;
    const std::string& b = **bytes;
    auto& kept =
        constants[{value.info.dtype, value.info.shape.ToString(), XXH3_64bits(b.data(), b.size())}];
    bool merged = false;
    for (const auto& [index, kept_bytes] : kept) {
      if (*kept_bytes != b) continue;
      same[v] = index;
      merged = true;
      break;
    }
    if (!merged) kept.emplace_back(static_cast<int>(v), *bytes);
  }
  std::set<int> outputs(ir->outputs.begin(), ir->outputs.end());
  int removed = 0;
  std::map<std::string, int> seen;  // op key -> index of the op kept
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    IrOp& op = ir->ops[i];
    if (op.removed) continue;
    for (int& v : op.inputs) {
      if (v >= 0) v = same[v];
    }
    // An op returning its input (identity_ops.h) is that input: TorchScript casts bool masks
    // to bool, a fixed-size cache is padded by zero rows.
    if (const int in = ReturnedInput(*ir, op); in >= 0 && !outputs.count(op.outputs[0])) {
      same[op.outputs[0]] = in;
      op.removed = true;
      ++removed;
      continue;
    }
    if (!Mergeable(op)) continue;
    const std::string key = Key(op);
    auto [it, fresh] = seen.emplace(key, static_cast<int>(i));
    if (fresh) continue;
    const IrOp& kept = ir->ops[it->second];
    bool program_output = false;
    for (int o : op.outputs) program_output = program_output || (o >= 0 && outputs.count(o));
    if (program_output || kept.outputs.size() != op.outputs.size()) continue;
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      if (op.outputs[k] >= 0) same[op.outputs[k]] = kept.outputs[k];
    }
    op.removed = true;
    ++removed;
  }
  if (removed > 0 || !constants.empty()) {
    for (auto& op : ir->ops) {
      for (int& v : op.inputs) {
        if (v >= 0) v = same[v];
      }
    }
    ir->Compact();
  }
  return removed;
}

}  // namespace ortc::lowering
