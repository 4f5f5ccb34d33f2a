// One value evaluated from its weight cone, intermediates freed after their last reader.
#include "lowering/constant_cone.h"

#include <unordered_map>
#include <vector>

namespace ortc::lowering {
namespace {

// The producers of v's cone in an order where each op follows the producers of its inputs
// (post-order), or nullopt when v is not computed from weights alone within the limits.
std::optional<std::vector<const IrOp*>> ConeOps(const SubgraphIr& ir, int v, size_t max_ops) {
  std::vector<const IrOp*> order;
  std::unordered_map<const IrOp*, bool> state;  // false: being visited, true: done
  struct Frame {
    const IrOp* op;
    size_t next_input;
  };
  std::vector<Frame> stack;
  auto push = [&](int value) -> bool {  // false: the cone cannot be evaluated
    if (value < 0) return true;
    const IrValue& val = ir.values[value];
    if (val.kind == ValueKind::kWeight) return val.bytes && val.info.shape.is_static();
    const IrOp* producer = ir.Producer(value);
    if (!producer || !producer->domain.empty() || !producer->subgraphs.empty()) return false;
    auto [it, fresh] = state.try_emplace(producer, false);
    if (!fresh) return it->second;  // a cycle is no cone (the IR is acyclic; be safe)
    if (state.size() > max_ops) return false;
    stack.push_back({producer, 0});
    return true;
  };
  if (!push(v)) return std::nullopt;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next_input < top.op->inputs.size()) {
      const int input = top.op->inputs[top.next_input++];
      if (!push(input)) return std::nullopt;
      continue;
    }
    state[top.op] = true;
    order.push_back(top.op);
    stack.pop_back();
  }
  return order;
}

}  // namespace

std::optional<HostTensor> EvaluateConstantCone(const SubgraphIr& ir, int v,
                                               const ConeLimits& limits) {
  if (v < 0) return std::nullopt;
  auto ops = ConeOps(ir, v, limits.max_ops);
  if (!ops) return std::nullopt;
  // How many cone inputs read each value: a result is freed when its count reaches zero.
  std::unordered_map<int, int> readers;
  for (const IrOp* op : *ops)
    for (int in : op->inputs)
      if (in >= 0) ++readers[in];
  std::unordered_map<int, HostTensor> known;
  auto value_of = [&](int value) -> const HostTensor* {
    if (auto it = known.find(value); it != known.end()) return &it->second;
    const IrValue& val = ir.values[value];
    if (val.kind != ValueKind::kWeight ||
        static_cast<int64_t>(val.bytes->size()) > limits.max_bytes)
      return nullptr;
    auto bytes = val.bytes->ReadAll();
    if (!bytes.ok()) return nullptr;
    HostTensor t{val.info.dtype, {}, **bytes};
    for (const auto& d : val.info.shape.dims) t.dims.push_back(d.value);
    return &known.emplace(value, std::move(t)).first->second;
  };
  if (ops->empty()) {  // v is a weight itself
    const HostTensor* t = value_of(v);
    return t ? std::optional<HostTensor>(*t) : std::nullopt;
  }
  for (const IrOp* op : *ops) {
    std::vector<const HostTensor*> inputs;
    std::vector<graph::TensorInfo> infos;
    for (int in : op->inputs) {
      inputs.push_back(in >= 0 ? value_of(in) : nullptr);
      if (in >= 0 && !inputs.back()) return std::nullopt;
      infos.push_back(in >= 0 ? ir.values[in].info : graph::TensorInfo{});
    }
    auto results = EvaluateOp(*op, inputs, infos, limits.max_bytes);
    if (!results || results->size() != op->outputs.size()) return std::nullopt;
    for (int in : op->inputs)
      if (in >= 0 && --readers[in] == 0) known.erase(in);
    for (size_t i = 0; i < results->size(); ++i) {
      const int out = op->outputs[i];
      if (out == v) return std::move((*results)[i]);
      if (out >= 0 && readers.count(out)) known[out] = std::move((*results)[i]);
    }
  }
  return std::nullopt;  // unreachable: v's producer is the last op of its cone
}

}  // namespace ortc::lowering
