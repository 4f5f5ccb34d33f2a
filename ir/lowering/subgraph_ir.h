// A mutable copy of one partition group, for backend lowering: values (inputs, outputs,
// intermediates, weights with their bytes) and ops with editable attributes. Passes (constant
// folding, fusion, packing) rewrite it; Compact() then drops what they left unused.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bundle/byte_source.h"
#include "graph/model.h"
#include "ortc/status.h"

namespace ortc::lowering {

enum class ValueKind { kIntermediate, kInput, kOutput, kWeight };

struct IrValue {
  std::string name;
  graph::TensorInfo info;
  ValueKind kind = ValueKind::kIntermediate;
  std::optional<bundle::ByteSource> bytes;  // weights only
  std::string layout = "plain";
};

struct SubgraphIr;

// A graph attribute lowered into a nested program (lowering/nested_subgraphs.h). The nested
// IR's inputs are the subgraph's own inputs, then one per captured outer value: captures[k] is
// the index in the op's inputs of the value feeding nested input (formal inputs + k).
struct IrSubgraph {
  std::string attribute;
  std::shared_ptr<SubgraphIr> ir;
  std::vector<int> captures;
};

struct IrOp {
  std::string name, op_type, domain;
  int since_version = 0;
  std::vector<int> inputs, outputs;  // value ids, -1 for omitted
  std::vector<onnx::AttributeProto> attributes;
  bool removed = false;
  // Ops with subgraphs: inputs from this index on are outer values the subgraphs read (so every
  // pass sees them as reads); -1 when all inputs are the op's own.
  int explicit_inputs = -1;
  std::vector<IrSubgraph> subgraphs;

  const onnx::AttributeProto* Attr(const std::string& n) const;
  int64_t IntAttr(const std::string& n, int64_t fallback) const;
  float FloatAttr(const std::string& n, float fallback) const;
  // The attribute's ints; empty when the op has no attribute of that name.
  std::vector<int64_t> IntsAttr(const std::string& n) const;
  // Setters replace an attribute of that name or add one.
  void SetIntAttr(const std::string& n, int64_t v);
  void SetFloatAttr(const std::string& n, float v);
  void SetIntsAttr(const std::string& n, const std::vector<int64_t>& v);
  void SetStringAttr(const std::string& n, const std::string& v);
  void SetFloatsAttr(const std::string& n, const std::vector<float>& v);
  void SetStringsAttr(const std::string& n, const std::vector<std::string>& v);

 private:
  onnx::AttributeProto& MutableAttr(const std::string& n, onnx::AttributeProto::AttributeType type);
};

struct SubgraphIr {
  std::string name;
  std::vector<IrValue> values;
  std::vector<IrOp> ops;
  std::vector<int> inputs, outputs;

  // Copies the group's nodes (in order) and the values they touch out of the model.
  static Result<SubgraphIr> Build(const graph::Model& model, const std::string& name,
                                  const std::vector<int>& nodes, const std::vector<int>& inputs,
                                  const std::vector<int>& outputs);
  int AddWeight(std::string name, graph::TensorInfo info, std::shared_ptr<const std::string> bytes);
  // A 1-D int64 weight of these values (a shape, split sizes), for an op a pass adds.
  int AddInt64s(std::string name, const std::vector<int64_t>& values);
  // A weight of this type and static shape holding `bytes` (raw little-endian), for a pass.
  int AddConstant(std::string name, int32_t dtype, const std::vector<int64_t>& dims,
                  std::string bytes);
  // A new intermediate value, for an op a pass adds; returns its index.
  int AddIntermediate(std::string name, graph::TensorInfo info);
  // Number of live ops reading value v.
  int UseCount(int v) const;
  // The live ops reading value v, one entry per input slot that reads it (an op reading v twice
  // appears twice); empty when v is a program output, since such a value must stay as it is.
  std::vector<IrOp*> RewritableReaders(int v);
  // The live op producing value v, or nullptr (an input or a weight).
  IrOp* Producer(int v);
  const IrOp* Producer(int v) const;
  // Marks removed every op whose outputs nothing reads (no live op, not a program output),
  // repeatedly: what folding left behind (a Transpose that fed only a folded Shape). Returns
  // how many.
  int RemoveDeadOps();
  // Reorders ops so each comes after the producers of its inputs, keeping the current order
  // where it already is one (a pass may append ops that earlier ops' readers need).
  void SortTopologically();
  // Removes deleted ops and values nothing refers to; renumbers.
  void Compact();
};

// The bytes of an initializer in ONNX's raw little-endian layout (typed fields converted).
Result<bundle::ByteSource> InitializerBytes(const graph::Initializer& init);

// The values of an int64 or int32 weight (shapes, pads, starts, perms...); nullopt for any other
// value, another type or unreadable bytes.
std::optional<std::vector<int64_t>> IntConstant(const SubgraphIr& ir, int v);

}  // namespace ortc::lowering
