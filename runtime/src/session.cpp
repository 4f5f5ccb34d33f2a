// Session: parse the model, build the executable graph through the loader, run it.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <fstream>

#include "base/regular_file.h"
#include "base/shape_limit.h"
#include "cpu_kernel/intra_op_threads.h"
#include "exec/buffer_pool.h"
#include "exec/profiler.h"
#include "loader/graph_loader.h"
#include "ortc/runtime.h"
#include "session_impl.h"

namespace ortc {

namespace {

namespace fs = std::filesystem;

Result<onnx::ModelProto> ParseModel(std::span<const std::byte> bytes, const std::string& name) {
  onnx::ModelProto m;
  if (bytes.size() >= static_cast<size_t>(INT_MAX) ||
      !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !m.has_graph()) {
    return InvalidGraph(name + ": not an ONNX model");
  }
  return m;
}

Result<onnx::ModelProto> ReadModel(const fs::path& path) {
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(path));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  return ParseModel({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()},
                    path.string());
}

fs::path DirOf(const fs::path& p) {
  return p.parent_path().empty() ? fs::path(".") : p.parent_path();
}

// The host buffers a run takes from the pool (the graph's arena, outputs of static shape),
// faulted in now so that the first run does not pay for mapping them.
void PrefaultRunBuffers(const loader::LoadedModel& model) {
  std::vector<size_t> sizes{static_cast<size_t>(std::max<int64_t>(model.graph.arena_bytes, 0))};
  for (const TensorInfo& o : model.outputs) {
    if (o.type != ValueType::kTensor || o.dtype == DataType::kString ||
        o.dtype == DataType::kUndefined)
      continue;
    size_t elements = 1;
    bool known = true;
    for (int64_t d : o.shape) {
      // Past the cap a buffer is never pooled; both bounds also keep the product from wrapping.
      known = known && d >= 0 && static_cast<uint64_t>(d) <= exec::kPoolCapBytes &&
              elements <= exec::kPoolCapBytes;
      elements *= known ? static_cast<size_t>(d) : 0;
    }
    if (known) sizes.push_back(elements * ElementSize(o.dtype));
  }
  exec::PrefaultBuffers(sizes);
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::Create(const fs::path& path,
                                                 const SessionOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto proto = ReadModel(path);
  if (!proto.ok()) return proto.status();
  const fs::path dir = DirOf(path);
  auto loaded = loader::LoadModel(*proto, &dir, options);
  if (!loaded.ok()) return loaded.status().WithContext(path.string());
  auto impl = std::make_unique<Impl>();
  impl->model = std::move(loaded).value();
  impl->device_values = FindDeviceValues(&impl->model);
  if (options.enable_profiling) impl->profiler = std::make_unique<exec::Profiler>();
  impl->intra_op_threads = exec::ResolveIntraOpThreads(options.intra_op_threads);
  PrefaultRunBuffers(impl->model);
  impl->model.report.load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Result<std::unique_ptr<Session>> Session::CreateFromBuffer(const void* data, size_t size,
                                                           const SessionOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (!data && size) return InvalidArgument("CreateFromBuffer: no data");
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(data), size);
  auto proto = ParseModel(bytes, "<buffer>");
  if (!proto.ok()) return proto.status();
  const fs::path dir =
      options.context_file_path.empty() ? fs::path() : DirOf(options.context_file_path);
  auto loaded =
      loader::LoadModel(*proto, options.context_file_path.empty() ? nullptr : &dir, options);
  if (!loaded.ok()) return loaded.status();
  auto impl = std::make_unique<Impl>();
  impl->model = std::move(loaded).value();
  impl->device_values = FindDeviceValues(&impl->model);
  if (options.enable_profiling) impl->profiler = std::make_unique<exec::Profiler>();
  impl->intra_op_threads = exec::ResolveIntraOpThreads(options.intra_op_threads);
  PrefaultRunBuffers(impl->model);
  impl->model.report.load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<TensorInfo>& Session::inputs() const {
  return impl_->model.inputs;
}
const std::vector<TensorInfo>& Session::outputs() const {
  return impl_->model.outputs;
}
const LoadReport& Session::load_report() const {
  return impl_->model.report;
}

Result<std::vector<Tensor>> Session::Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                         const std::vector<std::string>& output_names) const {
  return RunImpl(inputs, output_names, nullptr);
}

Result<std::vector<Tensor>> Session::RunBound(
    const std::vector<std::pair<std::string, Tensor>>& inputs,
    const std::vector<std::pair<std::string, Tensor>>& bound_outputs) const {
  const auto& m = impl_->model;
  std::vector<Tensor> bound(m.outputs.size());
  for (const auto& [name, tensor] : bound_outputs) {
    size_t k = 0;
    while (k < m.outputs.size() && m.outputs[k].name != name) ++k;
    if (k == m.outputs.size())
      return InvalidArgument("the model has no output named '" + name + "' to bind");
    const auto& info = m.outputs[k];
    if (tensor.empty() || !tensor.raw() || tensor.dtype() == DataType::kString ||
        (info.dtype != DataType::kUndefined && tensor.dtype() != info.dtype))
      return InvalidArgument("the tensor bound to output '" + name + "' must be " +
                             DataTypeName(info.dtype) + " with memory");
    if (tensor.is_view())
      return InvalidArgument("the tensor bound to output '" + name + "' is read-only");
    bound[k] = tensor;
  }
  return RunImpl(inputs, {}, &bound);
}

Result<std::vector<Tensor>> Session::RunImpl(
    const std::vector<std::pair<std::string, Tensor>>& inputs,
    const std::vector<std::string>& output_names, const std::vector<Tensor>* bound) const {
  const auto& m = impl_->model;
  std::vector<Tensor> ordered(m.inputs.size());
  for (const auto& [name, tensor] : inputs) {
    size_t k = 0;
    while (k < m.inputs.size() && m.inputs[k].name != name) ++k;
    if (k == m.inputs.size()) return InvalidArgument("the model has no input named '" + name + "'");
    const auto& info = m.inputs[k];
    if (auto f = m.fixed_inputs.find(name); f != m.fixed_inputs.end())
      ORTC_RETURN_IF_ERROR(loader::CheckFixedInput(name, f->second, tensor));
    if (info.type == ValueType::kSequence && !tensor.is_sequence())
      return InvalidArgument("input '" + name + "' must be a sequence of tensors");
    if (info.type == ValueType::kTensor && !tensor.is_tensor())
      return InvalidArgument("input '" + name + "' must be a tensor");
    if (tensor.is_none()) {
      ordered[k] = tensor;
      continue;
    }
    if (tensor.is_tensor() && !exec::ShapeWithinLimit(tensor.shape())) {
      return InvalidArgument("input '" + name +
                             "' has a negative dimension or more than 2^40 elements in its "
                             "non-zero dimensions");
    }
    if (info.dtype != DataType::kUndefined && tensor.dtype() != info.dtype) {
      return InvalidArgument("input '" + name + "' must be " + DataTypeName(info.dtype) + ", got " +
                             DataTypeName(tensor.dtype()));
    }
    if (tensor.is_tensor() && (!info.shape.empty() || tensor.rank() == 0)) {
      bool fits = info.shape.size() == tensor.shape().size();
      for (size_t d = 0; fits && d < info.shape.size(); ++d)
        fits = info.shape[d] < 0 || info.shape[d] == tensor.shape()[d];
      if (!fits && !(info.shape.empty() && tensor.rank() == 0)) {
        std::string want = "[", got = "[";
        for (int64_t d : info.shape)
          want += (want.size() > 1 ? "," : "") + (d < 0 ? std::string("?") : std::to_string(d));
        for (int64_t d : tensor.shape()) got += (got.size() > 1 ? "," : "") + std::to_string(d);
        return InvalidArgument("input '" + name + "' must have shape " + want + "], got " + got +
                               "]");
      }
    }
    ordered[k] = tensor;
  }
  for (size_t k = 0; k < ordered.size(); ++k) {
    if (ordered[k].empty()) return InvalidArgument("input '" + m.inputs[k].name + "' is missing");
  }
  exec::UseIntraOpThreads(impl_->intra_op_threads);
  auto outs = exec::Execute(m.graph, ordered, impl_->profiler.get(), bound);
  if (!outs.ok()) return outs.status();
  if (output_names.empty()) return outs;
  std::vector<Tensor> picked;
  for (const auto& name : output_names) {
    size_t k = 0;
    while (k < m.outputs.size() && m.outputs[k].name != name) ++k;
    if (k == m.outputs.size())
      return InvalidArgument("the model has no output named '" + name + "'");
    picked.push_back((*outs)[k]);
  }
  return picked;
}

Status Session::EndProfiling(const fs::path& path) const {
  if (!impl_->profiler)
    return InvalidArgument("the session was created without enable_profiling: nothing to write");
  return impl_->profiler->WriteAndClear(path);
}

Result<LoadReport> CheckModel(const fs::path& path, const SessionOptions& options) {
  auto proto = ReadModel(path);
  if (!proto.ok()) return proto.status();
  const fs::path dir = DirOf(path);
  auto loaded = loader::LoadModel(*proto, &dir, options, /*gate_only=*/true);
  if (!loaded.ok()) return loaded.status().WithContext(path.string());
  return loaded->report;
}

}  // namespace ortc
