// The compile side of the npu backend: the OrtcBackendCompiler table and its two exported entry
// points. get_capability answers every node from the QDQ matcher; compile turns one group of
// claimed nodes into an npu program (npu_program.h), its weight slots and its inputs and outputs,
// all reported through the host's sink. A vendor replaces the matcher with its op support query
// and the program writer with its graph compiler; the table plumbing stays as it is.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "abi_helpers.h"
#include "npu_program.h"
#include "qdq_patterns.h"
#include "sdk_version.h"

namespace npu {
namespace {

constexpr uint32_t kWeightAlignment = 64;

// One compiler instance: the table first, so the table pointer the host holds is this object.
struct NpuCompiler {
  OrtcBackendCompiler table;
  HostServices host;
};

const NpuCompiler& Self(const OrtcBackendCompiler* table) {
  return *reinterpret_cast<const NpuCompiler*>(table);
}

std::string Str(const char* s) {
  return s ? s : "";
}

OrtcPluginStatus CheckOptions(const OrtcKeyValue* options, uint32_t num_options) {
  if (num_options && !options) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: null options");
  if (num_options)
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT,
                "npu: unknown option '" + Str(options[0].key) + "' (this backend has no options)");
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus ValidateOptions(OrtcBackendCompiler*, const OrtcKeyValue* options,
                                 uint32_t num_options) {
  return Guard([&] { return CheckOptions(options, num_options); });
}

OrtcPluginStatus GetCapability(OrtcBackendCompiler*, const OrtcGraphView* graph,
                               const OrtcCapabilitySink* sink) {
  return Guard([&] {
    if (!graph || !sink || !sink->claim || !sink->refuse)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: get_capability: null argument");
    QdqAnalysis analysis;
    std::string error;
    if (!AnalyzeQdq(*graph, &analysis, &error)) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, error);
    for (uint32_t n = 0; n < graph->num_nodes; ++n) {
      if (!analysis.node_units[n].empty())
        sink->claim(sink->user, n);
      else
        sink->refuse(sink->user, n, analysis.refusals[n].c_str());
    }
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus Identity(OrtcBackendCompiler*, const OrtcKeyValue* options, uint32_t num_options,
                          const OrtcIdentitySink* sink) {
  return Guard([&] {
    if (!sink) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: identity: null sink");
    if (const OrtcPluginStatus s = CheckOptions(options, num_options)) return s;
    if (sink->set_sdk_version) sink->set_sdk_version(sink->user, kSdkVersion);
    if (sink->set_hardware_architecture)
      sink->set_hardware_architecture(sink->user, kHardwareArchitecture);
    if (sink->add_version) sink->add_version(sink->user, kSdkVersionKey, kSdkVersion);
    if (sink->add_hardware_target) sink->add_hardware_target(sink->user, kHardwareArchitecture);
    return ORTC_PLUGIN_OK;
  });
}

// Builds the program of one group from the units the matcher finds in it.
class GroupCompiler {
 public:
  GroupCompiler(const OrtcGraphView& g, const OrtcSubgraphRef& sub, const QdqAnalysis& a)
      : g_(g), sub_(sub), a_(a), group_(Str(sub.name)) {}

  OrtcPluginStatus Run(const OrtcCompileSink& sink, const HostServices& host) {
    if (const OrtcPluginStatus s = CheckRef()) return s;
    if (const OrtcPluginStatus s = FindUnits()) return s;
    if (const OrtcPluginStatus s = BuildProgram(sink)) return s;
    const std::string blob = WriteProgram(program_);
    Program check;
    std::string error;
    if (!ReadProgram(blob.data(), blob.size(), &check, &error))
      return Fail(ORTC_PLUGIN_INVALID_GRAPH,
                  "npu: group '" + group_ + "' made an invalid program (" + error + ")");
    Report(sink, blob);
    host.Log(0, "npu: group '" + group_ + "': " + std::to_string(units_.size()) + " units, " +
                    std::to_string(blob.size()) + " program bytes");
    return ORTC_PLUGIN_OK;
  }

 private:
  OrtcPluginStatus Bad(const std::string& what) const {
    return Fail(ORTC_PLUGIN_INVALID_GRAPH, "npu: group '" + group_ + "': " + what);
  }

  std::string NodeText(int32_t n) const {
    return "'" + Str(g_.nodes[n].name) + "' (" + Str(g_.nodes[n].op_type) + ")";
  }

  std::string ValueName(int32_t v) const { return Str(g_.values[v].name); }

  OrtcPluginStatus CheckRef() {
    if ((sub_.num_nodes && !sub_.nodes) || (sub_.num_inputs && !sub_.inputs) ||
        (sub_.num_outputs && !sub_.outputs))
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: compile: malformed subgraph reference");
    in_group_.assign(g_.num_nodes, false);
    for (uint32_t i = 0; i < sub_.num_nodes; ++i) {
      const int32_t n = sub_.nodes[i];
      if (n < 0 || static_cast<uint32_t>(n) >= g_.num_nodes || in_group_[n])
        return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: compile: group '" + group_ +
                                                      "' names node " + std::to_string(n) +
                                                      ", which is out of range or repeated");
      in_group_[n] = true;
    }
    for (const auto& [list, count] :
         {std::pair{sub_.inputs, sub_.num_inputs}, std::pair{sub_.outputs, sub_.num_outputs}})
      for (uint32_t i = 0; i < count; ++i)
        if (list[i] < 0 || static_cast<uint32_t>(list[i]) >= g_.num_values)
          return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: compile: group '" + group_ +
                                                        "' names value " + std::to_string(list[i]) +
                                                        ", which is out of range");
    return ORTC_PLUGIN_OK;
  }

  // The units whose every node is in the group, in the group's (topological) order of their
  // Conv or MatMul; every node of the group must belong to one.
  OrtcPluginStatus FindUnits() {
    std::vector<bool> covered(g_.num_nodes, false);
    for (uint32_t i = 0; i < sub_.num_nodes; ++i) {
      const int32_t n = sub_.nodes[i];
      for (const uint32_t u : a_.node_units[n]) {
        const QdqUnit& unit = a_.units[u];
        if (unit.op_node != n) continue;
        for (const int32_t member : {unit.x_dq, unit.w_dq, unit.b_dq, unit.q_node})
          if (member >= 0 && !in_group_[member])
            return Bad("the QDQ unit of " + NodeText(n) + " is split: its node " +
                       NodeText(member) + " is outside the group");
        for (const int32_t member : {unit.op_node, unit.x_dq, unit.w_dq, unit.b_dq, unit.q_node})
          if (member >= 0) covered[member] = true;
        units_.push_back(u);
      }
    }
    for (uint32_t i = 0; i < sub_.num_nodes; ++i) {
      const int32_t n = sub_.nodes[i];
      if (covered[n]) continue;
      const std::string& why = a_.refusals[n];
      return Bad("node " + NodeText(n) + " is not part of a complete npu unit in the group" +
                 (why.empty() ? "" : " (" + why + ")"));
    }
    return ORTC_PLUGIN_OK;
  }

  uint32_t AddTensor(int32_t value, int32_t dtype, const std::vector<int64_t>& dims,
                     uint32_t role) {
    const auto index = static_cast<uint32_t>(program_.tensors.size());
    program_.tensors.push_back({ValueName(value), dtype, role, dims});
    tensor_of_[value] = index;
    return index;
  }

  uint32_t AddSlot(int32_t value, int32_t dtype) {
    const auto found = slot_of_.find(value);
    if (found != slot_of_.end()) return found->second;
    const OrtcValueView& v = g_.values[value];
    const auto index = static_cast<uint32_t>(program_.slots.size());
    program_.slots.push_back({dtype, std::vector<int64_t>(v.dims, v.dims + v.rank)});
    slot_values_.push_back(value);
    slot_of_[value] = index;
    return index;
  }

  OrtcPluginStatus BuildProgram(const OrtcCompileSink& sink) {
    // The quantized activations the units read, and what they make.
    std::map<int32_t, const QdqUnit*> reader_of, maker_of;
    for (const uint32_t u : units_) {
      reader_of.emplace(a_.units[u].x_value, &a_.units[u]);
      maker_of.emplace(a_.units[u].y_value, &a_.units[u]);
    }
    for (uint32_t i = 0; i < sub_.num_inputs; ++i) {
      const int32_t v = sub_.inputs[i];
      const auto r = reader_of.find(v);
      if (r == reader_of.end() || maker_of.count(v) || tensor_of_.count(v))
        return Bad("input '" + ValueName(v) +
                   "' is not the quantized input of one of its units (or is listed twice)");
      program_.inputs.push_back(AddTensor(v, r->second->x_dtype, r->second->x_dims, kGraphInput));
    }
    const auto total = static_cast<int32_t>(units_.size());
    for (size_t i = 0; i < units_.size(); ++i) {
      const QdqUnit& u = a_.units[units_[i]];
      const auto x = tensor_of_.find(u.x_value);
      if (x == tensor_of_.end())
        return Bad("the unit of " + NodeText(u.op_node) + " reads '" + ValueName(u.x_value) +
                   "', which is neither a group input nor made before it in the group");
      StepRecord step;
      step.kind = u.kind;
      step.input = x->second;
      step.output = AddTensor(u.y_value, u.y_dtype, u.y_dims, kIntermediate);
      step.weight_slot = AddSlot(u.w_value, kInt8);
      step.bias_slot = u.b_value >= 0 ? static_cast<int32_t>(AddSlot(u.b_value, kInt32)) : -1;
      step.conv = u.conv;
      step.sx = u.sx;
      step.sw = u.sw;
      step.sb = u.sb;
      step.sy = u.sy;
      step.zx = u.zx;
      step.zy = u.zy;
      program_.steps.push_back(step);
      (u.kind == StepKind::kConv ? convs_ : matmuls_) += 1;
      if (sink.progress)
        sink.progress(sink.user, "npu compile", static_cast<int32_t>(i + 1), total);
    }
    for (uint32_t i = 0; i < sub_.num_outputs; ++i) {
      const int32_t v = sub_.outputs[i];
      const auto t = tensor_of_.find(v);
      if (!maker_of.count(v) || t == tensor_of_.end() ||
          program_.tensors[t->second].role != kIntermediate)
        return Bad("output '" + ValueName(v) +
                   "' is not the quantized output of one of its units (or is listed twice)");
      program_.tensors[t->second].role = kGraphOutput;
      program_.outputs.push_back(t->second);
    }
    return ORTC_PLUGIN_OK;
  }

  void Describe(void (*add)(void*, const OrtcTensorDesc*), void* user,
                const std::vector<uint32_t>& list) const {
    for (const uint32_t t : list) {
      const TensorRecord& r = program_.tensors[t];
      const OrtcTensorDesc desc{r.name.c_str(), r.dtype, static_cast<uint32_t>(r.dims.size()),
                                r.dims.data(), nullptr};
      add(user, &desc);
    }
  }

  void Report(const OrtcCompileSink& sink, const std::string& blob) const {
    Describe(sink.add_input, sink.user, program_.inputs);
    Describe(sink.add_output, sink.user, program_.outputs);
    for (size_t i = 0; i < program_.slots.size(); ++i) {
      const SlotRecord& slot = program_.slots[i];
      const OrtcValueView& v = g_.values[slot_values_[i]];
      const OrtcWeightDesc desc{slot.dtype, static_cast<uint32_t>(slot.dims.size()),
                                slot.dims.data(), "plain", kWeightAlignment};
      OrtcBytes bytes{};
      bytes.size = v.byte_size;
      if (v.data) {
        bytes.kind = ORTC_BYTES_COPY;
        bytes.data = v.data;
      } else {
        // External data: the host streams the region into the weight pool; never read here.
        bytes.kind = ORTC_BYTES_FILE_REGION;
        bytes.file = v.external_file;
        bytes.offset = v.external_offset;
      }
      sink.add_weight(sink.user, &desc, &bytes);
    }
    sink.set_program(sink.user, blob.data(), blob.size());
    if (sink.add_stat) {
      sink.add_stat(sink.user, "npu_qdq_conv", convs_);
      sink.add_stat(sink.user, "npu_qdq_matmul", matmuls_);
    }
    if (sink.add_note) sink.add_note(sink.user, "npu_units", std::to_string(units_.size()).c_str());
    if (sink.add_binary_version) sink.add_binary_version(sink.user, kSdkVersionKey, kSdkVersion);
  }

  const OrtcGraphView& g_;
  const OrtcSubgraphRef& sub_;
  const QdqAnalysis& a_;
  const std::string group_;
  std::vector<bool> in_group_;
  std::vector<uint32_t> units_;
  Program program_;
  std::map<int32_t, uint32_t> tensor_of_;  // value -> program tensor
  std::map<int32_t, uint32_t> slot_of_;    // value -> weight slot
  std::vector<int32_t> slot_values_;       // weight slot -> value
  int64_t convs_ = 0, matmuls_ = 0;
};

OrtcPluginStatus Compile(OrtcBackendCompiler* self, const OrtcGraphView* graph,
                         const OrtcSubgraphRef* subgraph, const OrtcKeyValue* options,
                         uint32_t num_options, const OrtcCompileSink* sink) {
  return Guard([&] {
    if (!self || !graph || !subgraph || !sink || !sink->set_program || !sink->add_input ||
        !sink->add_output || !sink->add_weight)
      return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "npu: compile: null argument or sink function");
    if (const OrtcPluginStatus s = CheckOptions(options, num_options)) return s;
    QdqAnalysis analysis;
    std::string error;
    if (!AnalyzeQdq(*graph, &analysis, &error)) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, error);
    GroupCompiler group(*graph, *subgraph, analysis);
    return group.Run(*sink, Self(self).host);
  });
}

const char* CompilerLastError(OrtcBackendCompiler*) {
  return LastError();
}

}  // namespace
}  // namespace npu

NPU_EXPORT OrtcPluginStatus ortc_backend_compiler_create(uint32_t host_abi_version,
                                                         const OrtcHostApi* host,
                                                         OrtcBackendCompiler** out) {
  using namespace npu;
  return Guard([&] {
    if (const OrtcPluginStatus s = CheckHostAbi(host_abi_version, out)) return s;
    auto* c = new NpuCompiler{};
    c->table = {ORTC_BACKEND_ABI_VERSION,
                sizeof(OrtcBackendCompiler),
                "npu",
                "ortc.npu",
                "skeleton NPU (host simulation): int8 QDQ Conv and MatMul",
                "npu skeleton 0.1",
                ORTC_COMPILER_CAN_COMPILE,
                &ValidateOptions,
                &GetCapability,
                &Identity,
                &Compile,
                nullptr,  // tuning_variants: nothing to tune
                nullptr,  // options_warning: no options, nothing to warn about
                &CompilerLastError};
    c->host.Set(host);
    *out = &c->table;
    return ORTC_PLUGIN_OK;
  });
}

NPU_EXPORT void ortc_backend_compiler_release(OrtcBackendCompiler* compiler) {
  delete reinterpret_cast<npu::NpuCompiler*>(compiler);
}
