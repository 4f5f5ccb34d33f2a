// If, Loop, Scan and SequenceMap. Their subgraphs were compiled into nested programs
// (exec::Attribute::program); each run of a body is one Execute of that program on the
// subgraph's inputs followed by the outer values it captures.
#include <algorithm>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu/runtime/kernels/tensor_pieces.h"

namespace ortc::exec {
namespace {

struct Body {
  const ExecGraph* graph = nullptr;
  std::vector<Tensor> captured;  // appended after the formal inputs on every run
  size_t formal = 0;             // the subgraph's own inputs
};

Result<Body> BodyOf(KernelContext& c, const std::string& attribute) {
  auto it = c.op().attrs.find(attribute);
  if (it == c.op().attrs.end()) return c.Error("attribute '" + attribute + "' is missing");
  const Attribute& a = it->second;
  if (!a.program)
    return NotImplemented(c.op().op_type + " subgraph '" + attribute +
                          "' was not compiled: run the model through `ortc compile`, which turns "
                          "subgraphs into nested programs");
  Body body;
  body.graph = a.program.get();
  body.formal = a.program->inputs.size() - a.captures.size();
  for (int k : a.captures) {
    if (k < 0 || static_cast<size_t>(k) >= c.num_inputs() || !c.has_input(k))
      return c.Error("subgraph '" + attribute + "' captures a missing value");
    body.captured.push_back(c.in(k));
  }
  return body;
}

Result<std::vector<Tensor>> Run(KernelContext& c, const Body& body, std::vector<Tensor> inputs) {
  if (inputs.size() != body.formal)
    return c.Error("the subgraph takes " + std::to_string(body.formal) + " inputs, given " +
                   std::to_string(inputs.size()));
  inputs.insert(inputs.end(), body.captured.begin(), body.captured.end());
  auto out = Execute(*body.graph, inputs, c.profiler());
  if (!out.ok()) return out.status().WithContext(c.op().op_type + " subgraph");
  return out;
}

// The op's own inputs (outer values the subgraphs capture come after them).
size_t ExplicitInputs(KernelContext& c) {
  const int n = c.op().explicit_inputs;
  return n < 0 ? c.num_inputs() : static_cast<size_t>(n);
}

bool InsideOf(const Tensor& t, const Tensor& in) {
  if (!in.is_tensor() || in.empty() || !in.raw() || in.byte_size() == 0) return false;
  const char* p = static_cast<const char*>(t.raw());
  const char* b = static_cast<const char*>(in.raw());
  return p >= b && p < b + in.byte_size();
}

// A result that is an input's memory (a branch returning an outer value) is copied: the
// caller's memory plan may reuse that input's arena slot once this op has run.
Tensor Detached(KernelContext& c, Tensor t) {
  if (!t.is_tensor() || t.empty() || !t.raw()) return t;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (c.has_input(i) && InsideOf(t, c.in(i))) return t.Clone();
  }
  return t;
}

Result<bool> ScalarBool(KernelContext& c, const Tensor& t, const std::string& what) {
  if (!t.is_tensor() || t.elements() != 1 || t.dtype() == DataType::kString || !t.raw())
    return c.Error(what + " must be a one-element numeric or bool tensor");
  return ElementAsDouble(t, 0) != 0;
}

Status If(KernelContext& c) {
  auto cond = ScalarBool(c, c.in(0), "the If condition");
  if (!cond.ok()) return cond.status();
  auto body = BodyOf(c, *cond ? "then_branch" : "else_branch");
  if (!body.ok()) return body.status();
  auto out = Run(c, *body, {});
  if (!out.ok()) return out.status();
  if (out->size() != c.num_outputs())
    return c.Error("the branch returns " + std::to_string(out->size()) + " values, the node has " +
                   std::to_string(c.num_outputs()) + " outputs");
  for (size_t i = 0; i < out->size(); ++i) c.SetOutput(i, Detached(c, (*out)[i]));
  return Status::Ok();
}

Tensor ScalarInt64(int64_t v) {
  return Tensor::FromBytes(DataType::kInt64, {}, &v, sizeof v);
}
Tensor ScalarBoolTensor(bool v) {
  return Tensor::FromBytes(DataType::kBool, {}, &v, sizeof v);
}

// Stacks per-iteration scan outputs along a new leading axis; with no iterations, an empty
// tensor shaped from what the body declares.
Result<Tensor> StackScan(KernelContext& c, const std::vector<Tensor>& parts,
                         const ValueInfo& info) {
  if (parts.empty()) {
    std::vector<int64_t> shape{0};
    for (int64_t d : info.shape) shape.push_back(std::max<int64_t>(d, 0));
    const DataType dt = info.dtype == DataType::kUndefined ? DataType::kFloat : info.dtype;
    return Tensor::Allocate(dt, shape);
  }
  auto y = StackAlong(parts, 0);
  if (!y.ok())
    return c.Error("scan outputs differ in shape across iterations: " + y.status().message());
  return y;
}

Status Loop(KernelContext& c) {
  auto body = BodyOf(c, "body");
  if (!body.ok()) return body.status();
  const size_t n_in = ExplicitInputs(c);
  if (n_in < 2) return c.Error("Loop needs its trip count and condition inputs (possibly empty)");
  const size_t n_carried = n_in - 2;
  if (body->formal != n_carried + 2)
    return c.Error("the body takes " + std::to_string(body->formal) + " inputs; the Loop passes " +
                   std::to_string(n_carried + 2));
  int64_t trips = INT64_MAX;
  if (c.has_input(0)) {
    if (!c.in(0).is_tensor() || c.in(0).elements() != 1 || c.in(0).dtype() == DataType::kString ||
        !c.in(0).raw())
      return c.Error("M must be a numeric scalar");
    // Read as an integer: INT64_MAX (what exporters write for an unbounded loop) is 2^63 as a
    // double, and converting that, NaN or 1e30 back is undefined.
    if (!IsIntegerType(c.in(0).dtype())) return c.Error("M must be an integer scalar");
    trips = static_cast<int64_t>(ReadBits(c.in(0), 0));
    if (c.in(0).dtype() == DataType::kUint64 && trips < 0) trips = INT64_MAX;
  }
  bool cond = true;
  if (c.has_input(1)) {
    auto b = ScalarBool(c, c.in(1), "the Loop condition");
    if (!b.ok()) return b.status();
    cond = *b;
  }
  if (trips == INT64_MAX && !c.has_input(1))
    return c.Error("a Loop with neither a trip count nor a condition would never end");
  std::vector<Tensor> carried;
  for (size_t i = 0; i < n_carried; ++i) {
    if (!c.has_input(2 + i))
      return c.Error("loop-carried input " + std::to_string(i) + " is missing");
    carried.push_back(c.in(2 + i));
  }
  const size_t n_scan =
      body->graph->outputs.size() - std::min(body->graph->outputs.size(), 1 + n_carried);
  if (body->graph->outputs.size() != 1 + n_carried + n_scan ||
      c.num_outputs() != n_carried + n_scan)
    return c.Error("the body's outputs do not match the Loop's outputs");
  std::vector<std::vector<Tensor>> scans(n_scan);
  for (int64_t i = 0; i < trips && cond; ++i) {
    std::vector<Tensor> in{ScalarInt64(i), ScalarBoolTensor(cond)};
    in.insert(in.end(), carried.begin(), carried.end());
    auto out = Run(c, *body, std::move(in));
    if (!out.ok()) return out.status();
    auto next = ScalarBool(c, (*out)[0], "the body's condition output");
    if (!next.ok()) return next.status();
    cond = *next;
    for (size_t k = 0; k < n_carried; ++k) carried[k] = (*out)[1 + k];
    for (size_t k = 0; k < n_scan; ++k) {
      const Tensor& s = (*out)[1 + n_carried + k];
      if (!s.is_tensor()) return c.Error("scan outputs must be tensors");
      scans[k].push_back(s);
    }
  }
  for (size_t k = 0; k < n_carried; ++k) c.SetOutput(k, Detached(c, carried[k]));
  for (size_t k = 0; k < n_scan; ++k) {
    if (!c.wants_output(n_carried + k)) continue;
    auto y = StackScan(c, scans[k], body->graph->output_infos[1 + n_carried + k]);
    if (!y.ok()) return y.status();
    c.SetOutput(n_carried + k, std::move(y).value());
  }
  return Status::Ok();
}

// One Scan (opset 9 semantics) over `states` and `scan_inputs`; results go to `final_states`
// and `scan_outputs` (stacked along their axes).
Status ScanOnce(KernelContext& c, const Body& body, std::vector<Tensor> states,
                const std::vector<Tensor>& scan_inputs, int64_t steps_limit,
                std::vector<Tensor>* final_states, std::vector<Tensor>* scan_outputs) {
  const size_t n_state = states.size(), m = scan_inputs.size();
  const auto in_axes = c.op().Ints("scan_input_axes", std::vector<int64_t>(m, 0));
  const auto in_dirs = c.op().Ints("scan_input_directions", std::vector<int64_t>(m, 0));
  if (in_axes.size() != m || in_dirs.size() != m)
    return c.Error("scan_input_axes/directions need one entry per scan input");
  int64_t steps = -1;
  std::vector<int64_t> axes(m);
  for (size_t j = 0; j < m; ++j) {
    axes[j] = in_axes[j];
    if (!scan_inputs[j].is_tensor() || !NormaliseAxis(axes[j], scan_inputs[j].rank()))
      return c.Error("scan input " + std::to_string(j) + " has no axis " +
                     std::to_string(in_axes[j]));
    const int64_t len = scan_inputs[j].shape()[axes[j]];
    if (steps >= 0 && len != steps) return c.Error("scan inputs differ in sequence length");
    steps = len;
  }
  if (steps < 0) return c.Error("Scan needs at least one scan input");
  if (body.formal != n_state + m || body.graph->outputs.size() < n_state)
    return c.Error("the body takes " + std::to_string(body.formal) + " inputs and returns " +
                   std::to_string(body.graph->outputs.size()) + " values; the Scan has " +
                   std::to_string(n_state) + " states and " + std::to_string(m) + " scan inputs");
  const int64_t run = std::min(steps, steps_limit);
  const size_t n_scan_out =
      body.graph->outputs.size() - std::min(body.graph->outputs.size(), n_state);
  std::vector<std::vector<Tensor>> outs(n_scan_out);
  for (int64_t t = 0; t < run; ++t) {
    std::vector<Tensor> in = states;
    for (size_t j = 0; j < m; ++j)
      in.push_back(TakeAlong(scan_inputs[j], axes[j], in_dirs[j] ? steps - 1 - t : t));
    auto out = Run(c, body, std::move(in));
    if (!out.ok()) return out.status();
    for (size_t k = 0; k < n_state; ++k) states[k] = (*out)[k];
    for (size_t k = 0; k < n_scan_out; ++k) outs[k].push_back((*out)[n_state + k]);
  }
  const auto out_axes = c.op().Ints("scan_output_axes", std::vector<int64_t>(n_scan_out, 0));
  const auto out_dirs = c.op().Ints("scan_output_directions", std::vector<int64_t>(n_scan_out, 0));
  if (out_axes.size() != n_scan_out || out_dirs.size() != n_scan_out)
    return c.Error("scan_output_axes/directions need one entry per scan output");
  *final_states = std::move(states);
  scan_outputs->clear();
  for (size_t k = 0; k < n_scan_out; ++k) {
    auto& parts = outs[k];
    if (parts.empty()) return c.Error("Scan over zero steps has no scan output shape");
    // Steps past the limit (Scan-8 sequence_lens) contribute zeros.
    for (int64_t t = run; t < steps; ++t)
      parts.push_back(Tensor::Allocate(parts[0].dtype(), parts[0].shape()));
    if (out_dirs[k]) std::reverse(parts.begin(), parts.end());
    int64_t axis = out_axes[k];
    if (!NormaliseAxis(axis, parts[0].rank() + 1)) return c.Error("scan output axis out of range");
    auto y = StackAlong(parts, axis);
    if (!y.ok()) return c.Error(y.status().message());
    scan_outputs->push_back(std::move(y).value());
  }
  return Status::Ok();
}

Status Scan(KernelContext& c) {
  auto body = BodyOf(c, "body");
  if (!body.ok()) return body.status();
  const size_t n_in = ExplicitInputs(c);
  const int64_t m = c.op().Int("num_scan_inputs", -1);
  if (c.op().version >= 9) {
    if (m < 1 || static_cast<size_t>(m) > n_in) return c.Error("num_scan_inputs is out of range");
    const size_t n_state = n_in - static_cast<size_t>(m);
    std::vector<Tensor> states, scans;
    for (size_t i = 0; i < n_in; ++i) (i < n_state ? states : scans).push_back(c.in(i));
    std::vector<Tensor> final_states, outs;
    ORTC_RETURN_IF_ERROR(ScanOnce(c, *body, states, scans, INT64_MAX, &final_states, &outs));
    if (final_states.size() + outs.size() != c.num_outputs())
      return c.Error("the body's outputs do not match the Scan's outputs");
    for (size_t k = 0; k < final_states.size(); ++k) c.SetOutput(k, Detached(c, final_states[k]));
    for (size_t k = 0; k < outs.size(); ++k) c.SetOutput(n_state + k, std::move(outs[k]));
    return Status::Ok();
  }
  // Scan-8: input 0 is the optional sequence_lens, every other input has a leading batch axis,
  // and the scan runs per batch entry along axis 1 ("directions" instead of per-axis lists).
  if (m < 1 || static_cast<size_t>(m) + 1 > n_in) return c.Error("num_scan_inputs is out of range");
  const size_t n_state = n_in - 1 - static_cast<size_t>(m);
  if (n_in < 2 || !c.has_input(1)) return c.Error("Scan-8 needs inputs after sequence_lens");
  const int64_t batch = c.in(1).rank() > 0 ? c.in(1).shape()[0] : 0;
  std::optional<std::vector<int64_t>> lens;
  if (c.has_input(0)) {
    lens = IntsOf(c.input(0));
    if (!lens || static_cast<int64_t>(lens->size()) != batch)
      return c.Error("sequence_lens must hold one length per batch entry");
  }
  std::vector<std::vector<Tensor>> per_batch_states(n_state), per_batch_outs;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> states, scans;
    for (size_t i = 1; i < n_in; ++i) {
      if (c.in(i).rank() < 1 || c.in(i).shape()[0] != batch)
        return c.Error("every Scan-8 input needs the batch axis first");
      (i <= n_state ? states : scans).push_back(TakeAlong(c.in(i), 0, b));
    }
    // Scan-8 scans axis 0 of each batch slice (the sequence axis); directions per scan input.
    std::vector<Tensor> final_states, outs;
    ORTC_RETURN_IF_ERROR(
        ScanOnce(c, *body, states, scans, lens ? (*lens)[b] : INT64_MAX, &final_states, &outs));
    for (size_t k = 0; k < n_state; ++k) per_batch_states[k].push_back(final_states[k]);
    per_batch_outs.resize(outs.size());
    for (size_t k = 0; k < outs.size(); ++k) per_batch_outs[k].push_back(outs[k]);
  }
  if (batch == 0) return c.Error("Scan-8 over an empty batch");
  if (n_state + per_batch_outs.size() != c.num_outputs())
    return c.Error("the body's outputs do not match the Scan's outputs");
  for (size_t k = 0; k < n_state; ++k) {
    auto y = StackAlong(per_batch_states[k], 0);
    if (!y.ok()) return c.Error(y.status().message());
    c.SetOutput(k, std::move(y).value());
  }
  for (size_t k = 0; k < per_batch_outs.size(); ++k) {
    auto y = StackAlong(per_batch_outs[k], 0);
    if (!y.ok()) return c.Error(y.status().message());
    c.SetOutput(n_state + k, std::move(y).value());
  }
  return Status::Ok();
}

Status SequenceMap(KernelContext& c) {
  auto body = BodyOf(c, "body");
  if (!body.ok()) return body.status();
  const size_t n_in = ExplicitInputs(c);
  if (n_in < 1 || !c.in(0).is_sequence()) return c.Error("input 0 must be a sequence");
  if (body->formal != n_in) return c.Error("the body's inputs do not match the node's");
  const size_t len = c.in(0).items().size();
  for (size_t i = 1; i < n_in; ++i) {
    if (c.in(i).is_sequence() && c.in(i).items().size() != len)
      return c.Error("the input sequences differ in length");
  }
  // Checked before the loop: with an empty sequence the body never runs, and the outputs' types
  // come from the body's output infos.
  if (body->graph->outputs.size() != c.num_outputs() ||
      body->graph->output_infos.size() != c.num_outputs())
    return c.Error("the body's outputs do not match the node's");
  std::vector<std::vector<Tensor>> results(c.num_outputs());
  for (size_t k = 0; k < len; ++k) {
    std::vector<Tensor> in;
    for (size_t i = 0; i < n_in; ++i)
      in.push_back(c.in(i).is_sequence() ? c.in(i).items()[k] : c.in(i));
    auto out = Run(c, *body, std::move(in));
    if (!out.ok()) return out.status();
    if (out->size() != c.num_outputs())
      return c.Error("the body's outputs do not match the node's");
    for (size_t o = 0; o < out->size(); ++o) {
      // A sequence holds tensors: ConcatFromSequence and the others read every item as one.
      if (!(*out)[o].is_tensor()) return c.Error("the body's outputs must be tensors");
      results[o].push_back((*out)[o].Clone());
    }
  }
  for (size_t o = 0; o < results.size(); ++o) {
    const DataType dt =
        !results[o].empty() ? results[o][0].dtype() : body->graph->output_infos[o].dtype;
    c.SetOutput(o, Tensor::Sequence(dt, std::move(results[o])));
  }
  return Status::Ok();
}

}  // namespace

void RegisterControlFlowKernels(KernelTable& t) {
  t["If"] = If;
  t["Loop"] = Loop;
  t["Scan"] = Scan;
  t["SequenceMap"] = SequenceMap;
}

}  // namespace ortc::exec
