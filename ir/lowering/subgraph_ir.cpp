// SubgraphIr construction and compaction.
#include "lowering/subgraph_ir.h"

#include "base/element_types.h"
#include "lowering/nested_subgraphs.h"

#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace ortc::lowering {
namespace {

template <typename T, typename Field>
std::string PackField(const Field& field) {
  std::string out(field.size() * sizeof(T), '\0');
  for (int i = 0; i < field.size(); ++i) {
    const T v = static_cast<T>(field.Get(i));
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return out;
}

}  // namespace

const onnx::AttributeProto* IrOp::Attr(const std::string& n) const {
  for (const auto& a : attributes) {
    if (a.name() == n) return &a;
  }
  return nullptr;
}
int64_t IrOp::IntAttr(const std::string& n, int64_t fallback) const {
  const auto* a = Attr(n);
  return a ? a->i() : fallback;
}
std::vector<int64_t> IrOp::IntsAttr(const std::string& n) const {
  const auto* a = Attr(n);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}
float IrOp::FloatAttr(const std::string& n, float fallback) const {
  const auto* a = Attr(n);
  return a ? a->f() : fallback;
}
onnx::AttributeProto& IrOp::MutableAttr(const std::string& n,
                                        onnx::AttributeProto::AttributeType type) {
  for (auto& a : attributes) {
    if (a.name() == n) {
      a.Clear();
      a.set_name(n);
      a.set_type(type);
      return a;
    }
  }
  attributes.emplace_back();
  attributes.back().set_name(n);
  attributes.back().set_type(type);
  return attributes.back();
}
void IrOp::SetIntAttr(const std::string& n, int64_t v) {
  MutableAttr(n, onnx::AttributeProto::INT).set_i(v);
}
void IrOp::SetFloatAttr(const std::string& n, float v) {
  MutableAttr(n, onnx::AttributeProto::FLOAT).set_f(v);
}
void IrOp::SetIntsAttr(const std::string& n, const std::vector<int64_t>& v) {
  auto& a = MutableAttr(n, onnx::AttributeProto::INTS);
  for (int64_t i : v) a.add_ints(i);
}
void IrOp::SetStringAttr(const std::string& n, const std::string& v) {
  MutableAttr(n, onnx::AttributeProto::STRING).set_s(v);
}
void IrOp::SetFloatsAttr(const std::string& n, const std::vector<float>& v) {
  auto& a = MutableAttr(n, onnx::AttributeProto::FLOATS);
  for (float f : v) a.add_floats(f);
}
void IrOp::SetStringsAttr(const std::string& n, const std::vector<std::string>& v) {
  auto& a = MutableAttr(n, onnx::AttributeProto::STRINGS);
  for (const auto& x : v) a.add_strings(x);
}

Result<bundle::ByteSource> InitializerBytes(const graph::Initializer& init) {
  if (init.external) {
    return bundle::ByteSource::FileRegion(init.external->file, init.external->offset,
                                          init.external->length);
  }
  const auto& t = *init.proto;
  if (t.has_raw_data())
    return bundle::ByteSource::Memory(std::make_shared<const std::string>(t.raw_data()));
  using T = onnx::TensorProto;
  std::string bytes;
  switch (t.data_type()) {
    case T::FLOAT:
      bytes = PackField<float>(t.float_data());
      break;
    case T::DOUBLE:
      bytes = PackField<double>(t.double_data());
      break;
    case T::INT64:
      bytes = PackField<int64_t>(t.int64_data());
      break;
    case T::UINT64:
      bytes = PackField<uint64_t>(t.uint64_data());
      break;
    case T::UINT32:
      bytes = PackField<uint32_t>(t.uint64_data());
      break;
    case T::INT32:
      bytes = PackField<int32_t>(t.int32_data());
      break;
    case T::INT16:
      bytes = PackField<int16_t>(t.int32_data());
      break;
    case T::UINT16:
    case T::FLOAT16:
    case T::BFLOAT16:
      bytes = PackField<uint16_t>(t.int32_data());
      break;
    case T::INT8:
      bytes = PackField<int8_t>(t.int32_data());
      break;
    case T::UINT8:
    case T::BOOL:
      bytes = PackField<uint8_t>(t.int32_data());
      break;
    default:
      return NotImplemented("initializer '" + init.name + "': data type " +
                            ElementTypeName(t.data_type()) +
                            " cannot be stored in a context binary");
  }
  return bundle::ByteSource::Memory(std::make_shared<const std::string>(std::move(bytes)));
}

Result<SubgraphIr> SubgraphIr::Build(const graph::Model& model, const std::string& name,
                                     const std::vector<int>& nodes, const std::vector<int>& inputs,
                                     const std::vector<int>& outputs) {
  const auto& g = model.graph;
  SubgraphIr ir;
  ir.name = name;
  std::map<int, int> local;  // graph value id -> ir value id
  auto value = [&](int v) -> Result<int> {
    if (v < 0) return -1;
    auto it = local.find(v);
    if (it != local.end()) return it->second;
    IrValue iv;
    iv.name = g.values[v].name;
    iv.info = g.values[v].info;
    if (g.values[v].initializer >= 0) {
      iv.kind = ValueKind::kWeight;
      auto bytes = InitializerBytes(g.initializers[g.values[v].initializer]);
      if (!bytes.ok()) return bytes.status();
      iv.bytes = std::move(bytes).value();
    }
    ir.values.push_back(std::move(iv));
    local[v] = static_cast<int>(ir.values.size()) - 1;
    return local[v];
  };
  for (int v : inputs) {
    auto id = value(v);
    if (!id.ok()) return id.status();
    ir.values[*id].kind = ValueKind::kInput;
    ir.inputs.push_back(*id);
  }
  for (int n : nodes) {
    const auto& node = g.nodes[n];
    IrOp op;
    op.name = node.name;
    op.op_type = node.op_type;
    op.domain = node.domain;
    op.since_version = node.since_version;
    for (int v : node.inputs) {
      auto id = value(v);
      if (!id.ok()) return id.status();
      op.inputs.push_back(*id);
    }
    for (int v : node.outputs) {
      auto id = value(v);
      if (!id.ok()) return id.status();
      op.outputs.push_back(*id);
    }
    for (const auto& a : node.proto->attribute()) {
      if (a.type() != onnx::AttributeProto::GRAPH) op.attributes.push_back(a);
    }
    if (node.has_subgraphs) {
      auto outer = [&](const std::string& name) -> Result<int> {
        const int v = g.FindValue(name);
        if (v < 0)
          return InvalidGraph("a subgraph of node '" + node.name + "' reads '" + name +
                              "', which is not defined");
        return value(v);
      };
      ORTC_RETURN_IF_ERROR(LowerSubgraphAttributes(*node.proto, model.opsets, outer, &op));
    }
    ir.ops.push_back(std::move(op));
  }
  for (int v : outputs) {
    auto id = value(v);
    if (!id.ok()) return id.status();
    if (ir.values[*id].kind == ValueKind::kIntermediate) ir.values[*id].kind = ValueKind::kOutput;
    ir.outputs.push_back(*id);
  }
  return ir;
}

int SubgraphIr::AddWeight(std::string name, graph::TensorInfo info,
                          std::shared_ptr<const std::string> bytes) {
  IrValue v;
  v.name = std::move(name);
  v.info = std::move(info);
  v.kind = ValueKind::kWeight;
  v.bytes = bundle::ByteSource::Memory(std::move(bytes));
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

int SubgraphIr::AddIntermediate(std::string name, graph::TensorInfo info) {
  IrValue v;
  v.name = std::move(name);
  v.info = std::move(info);
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

int SubgraphIr::RemoveDeadOps() {
  std::vector<int> readers(values.size(), 0);
  for (const auto& op : ops) {
    if (op.removed) continue;
    for (int v : op.inputs) {
      if (v >= 0) readers[v]++;
    }
  }
  for (int o : outputs) readers[o]++;
  int removed = 0;
  for (size_t i = ops.size(); i-- > 0;) {  // readers come after writers: one backward pass
    IrOp& op = ops[i];
    if (op.removed) continue;
    bool read = false;
    for (int v : op.outputs) read = read || (v >= 0 && readers[v] > 0);
    if (read) continue;
    op.removed = true;
    ++removed;
    for (int v : op.inputs) {
      if (v >= 0) readers[v]--;
    }
  }
  return removed;
}

void SubgraphIr::SortTopologically() {
  std::vector<int> producer(values.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int v : ops[i].outputs) {
      if (v >= 0) producer[v] = static_cast<int>(i);
    }
  }
  std::vector<int> waiting(ops.size(), 0);
  std::vector<std::vector<int>> users(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int v : ops[i].inputs) {
      const int p = v >= 0 ? producer[v] : -1;
      if (p < 0 || p == static_cast<int>(i)) continue;
      waiting[i]++;
      users[p].push_back(static_cast<int>(i));
    }
  }
  std::set<int> ready;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (waiting[i] == 0) ready.insert(static_cast<int>(i));
  }
  std::vector<IrOp> sorted;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    sorted.push_back(std::move(ops[i]));
    for (int u : users[i]) {
      if (--waiting[u] == 0) ready.insert(u);
    }
  }
  if (sorted.size() == ops.size()) ops = std::move(sorted);  // a cycle: leave it to the checks
}

int SubgraphIr::UseCount(int v) const {
  int uses = 0;
  for (const auto& op : ops) {
    if (op.removed) continue;
    for (int i : op.inputs) uses += i == v;
  }
  for (int o : outputs) uses += o == v;
  return uses;
}

std::vector<IrOp*> SubgraphIr::RewritableReaders(int v) {
  for (int o : outputs)
    if (o == v) return {};
  std::vector<IrOp*> readers;
  for (auto& op : ops) {
    if (op.removed) continue;
    for (int i : op.inputs)
      if (i == v) readers.push_back(&op);
  }
  return readers;
}

const IrOp* SubgraphIr::Producer(int v) const {
  for (const auto& op : ops) {
    if (op.removed) continue;
    for (int o : op.outputs)
      if (o == v) return &op;
  }
  return nullptr;
}

IrOp* SubgraphIr::Producer(int v) {
  return const_cast<IrOp*>(std::as_const(*this).Producer(v));
}

void SubgraphIr::Compact() {
  std::vector<IrOp> kept;
  for (auto& op : ops) {
    if (!op.removed) kept.push_back(std::move(op));
  }
  ops = std::move(kept);
  std::vector<bool> used(values.size(), false);
  for (int v : inputs) used[v] = true;
  for (int v : outputs) used[v] = true;
  for (const auto& op : ops) {
    for (int v : op.inputs) {
      if (v >= 0) used[v] = true;
    }
    for (int v : op.outputs) {
      if (v >= 0) used[v] = true;
    }
  }
  std::vector<int> remap(values.size(), -1);
  std::vector<IrValue> live;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = static_cast<int>(live.size());
    live.push_back(std::move(values[i]));
  }
  values = std::move(live);
  auto fix = [&](std::vector<int>& ids) {
    for (int& v : ids) v = v < 0 ? -1 : remap[v];
  };
  fix(inputs);
  fix(outputs);
  for (auto& op : ops) {
    fix(op.inputs);
    fix(op.outputs);
  }
}

int SubgraphIr::AddInt64s(std::string name, const std::vector<int64_t>& values) {
  graph::TensorInfo info;
  info.dtype = onnx::TensorProto::INT64;
  info.shape.rank_known = true;
  info.shape.dims = {graph::Dim{static_cast<int64_t>(values.size()), ""}};
  return AddWeight(std::move(name), std::move(info),
                   std::make_shared<const std::string>(reinterpret_cast<const char*>(values.data()),
                                                       values.size() * sizeof(int64_t)));
}

int SubgraphIr::AddConstant(std::string name, int32_t dtype, const std::vector<int64_t>& dims,
                            std::string bytes) {
  graph::TensorInfo info;
  info.dtype = dtype;
  info.shape.rank_known = true;
  for (int64_t d : dims) info.shape.dims.push_back(graph::Dim{d, ""});
  return AddWeight(std::move(name), std::move(info),
                   std::make_shared<const std::string>(std::move(bytes)));
}

std::optional<std::vector<int64_t>> IntConstant(const SubgraphIr& ir, int v) {
  if (v < 0 || ir.values[v].kind != ValueKind::kWeight || !ir.values[v].bytes) return std::nullopt;
  const int32_t t = ir.values[v].info.dtype;
  const size_t width = t == onnx::TensorProto::INT64 ? 8 : t == onnx::TensorProto::INT32 ? 4 : 0;
  if (width == 0) return std::nullopt;
  auto bytes = ir.values[v].bytes->ReadAll();
  if (!bytes.ok() || (*bytes)->size() % width != 0) return std::nullopt;
  const std::string& b = **bytes;
  std::vector<int64_t> out;
  for (size_t i = 0; i < b.size(); i += width) {
    if (width == 8) {
      int64_t e;
      std::memcpy(&e, b.data() + i, 8);
      out.push_back(e);
    } else {
      int32_t e;
      std::memcpy(&e, b.data() + i, 4);
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace ortc::lowering
