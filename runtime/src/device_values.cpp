// Device memory at the session's edges: which inputs and outputs only one backend graph touches
// (found once at load), and the Session calls that allocate such memory and copy it back.
#include <cstring>
#include <set>

#include "exec/plugin_node.h"
#include "session_impl.h"

namespace ortc {
namespace {

bool IsBackendGraph(const exec::ExecOp& op) {
  return op.domain.rfind("ortc.", 0) == 0 && op.state != nullptr;
}

const exec::PluginGraphState& StateOf(const exec::ExecOp& op) {
  return *static_cast<const exec::PluginGraphState*>(op.state.get());
}

// A backend graph and the position of a value among its inputs or outputs.
struct Use {
  const exec::ExecOp* op = nullptr;
  size_t index = 0;
};

// The one backend graph that reads value `v` (every reader is that graph, once), or no op.
Use OnlyReader(const exec::ExecGraph& g, int v) {
  Use reader;
  for (const auto& op : g.ops) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i] != v) continue;
      if (!IsBackendGraph(op) || reader.op) return {};
      reader = {&op, i};
    }
  }
  return reader;
}

// The backend graph that writes value `v` when nothing but backend graphs of the same library
// reads it, or no op.
Use DeviceWriter(const exec::ExecGraph& g, int v) {
  Use writer;
  for (const auto& op : g.ops)
    for (size_t i = 0; i < op.outputs.size(); ++i)
      if (op.outputs[i] == v) writer = {&op, i};
  if (!writer.op || !IsBackendGraph(*writer.op)) return {};
  for (const auto& op : g.ops)
    for (int in : op.inputs)
      if (in == v && (!IsBackendGraph(op) || StateOf(op).library != StateOf(*writer.op).library))
        return {};
  return writer;
}

void Record(const Use& use, const exec::PluginTensorSpec* spec, TensorInfo* info,
            std::map<std::string, DeviceValue>* found) {
  const auto& st = StateOf(*use.op);
  info->device = st.library->name();
  info->device_graph = use.op->name;
  // The graph's static shape is the value's: fills what the model's value info left unknown.
  info->dtype = spec->dtype;
  info->shape = spec->dims;
  (*found)[info->name] = {st.library, use.op->name, spec->dtype, spec->dims};
}

}  // namespace

std::map<std::string, DeviceValue> FindDeviceValues(loader::LoadedModel* model) {
  std::map<std::string, DeviceValue> found;
  const exec::ExecGraph& g = model->graph;
  const std::set<int> outputs(g.outputs.begin(), g.outputs.end());
  for (auto& info : model->inputs) {
    const int v = g.FindValue(info.name);
    // An input that is also a model output passes through the CPU side.
    if (v < 0 || outputs.count(v)) continue;
    const Use use = OnlyReader(g, v);
    if (use.op && use.index < StateOf(*use.op).inputs.size())
      Record(use, &StateOf(*use.op).inputs[use.index], &info, &found);
  }
  for (auto& info : model->outputs) {
    const int v = g.FindValue(info.name);
    const Use use = v < 0 ? Use{} : DeviceWriter(g, v);
    if (use.op && use.index < StateOf(*use.op).outputs.size())
      Record(use, &StateOf(*use.op).outputs[use.index], &info, &found);
  }
  return found;
}

Result<Tensor> Session::AllocateDevice(const std::string& name) const {
  const auto& m = impl_->model;
  bool known = false;
  for (const auto* list : {&m.inputs, &m.outputs})
    for (const auto& i : *list) known = known || i.name == name;
  if (!known) return InvalidArgument("the model has no input or output named '" + name + "'");
  auto it = impl_->device_values.find(name);
  if (it == impl_->device_values.end())
    return InvalidArgument("'" + name +
                           "' is read or written on the CPU, so it cannot be device memory: "
                           "compile so that one backend graph alone reads or writes it");
  const DeviceValue& value = it->second;
  int64_t elements = 1;
  for (int64_t d : value.shape) elements *= d;
  const size_t bytes = static_cast<size_t>(elements) * ElementSize(value.dtype);
  const auto library = value.library;
  void* ptr = nullptr;
  ORTC_RETURN_IF_ERROR(library->StatusOf(
      library->table()->allocate_device(library->table(), bytes, &ptr),
      "allocating " + std::to_string(bytes) + " bytes of " + library->name() + " memory"));
  // The allocation goes back to the plugin with the tensor's last copy; the library stays
  // loaded for the process, so the deleter may run after the session is gone.
  std::shared_ptr<void> owner(ptr, [library](void* p) {
    if (p) library->table()->free_device(library->table(), p);
  });
  return Tensor::OnDevice(value.dtype, value.shape, ptr, MemoryLocation::kCudaDevice,
                          std::move(owner));
}

namespace {

// The backend library whose device memory MemoryLocation::kCudaDevice names, among the graphs
// of this session, or nullptr.
const plugin::BackendLibrary* CudaLibrary(const std::map<std::string, DeviceValue>& values) {
  for (const auto& [name, value] : values)
    if (value.library->name() == "cuda") return value.library.get();
  return nullptr;
}

int32_t PluginLocation(const Tensor& t) {
  return t.location() == MemoryLocation::kHost ? ORTC_MEMORY_HOST : ORTC_MEMORY_DEVICE;
}

}  // namespace

Result<Tensor> Session::CopyToHost(const Tensor& device_tensor) const {
  if (device_tensor.location() == MemoryLocation::kHost || !device_tensor.is_tensor())
    return InvalidArgument("CopyToHost takes a device tensor");
  Tensor host = Tensor::AllocateUninitialized(device_tensor.dtype(), device_tensor.shape());
  ORTC_RETURN_IF_ERROR(CopyBytes(&host, 0, device_tensor, 0, device_tensor.byte_size()));
  return host;
}

Status Session::CopyBytes(Tensor* dst, size_t dst_offset, const Tensor& src, size_t src_offset,
                          size_t bytes) const {
  return CopyRows(dst, dst_offset, bytes, src, src_offset, bytes, bytes, 1);
}

Status Session::CopyRows(Tensor* dst, size_t dst_offset, size_t dst_pitch, const Tensor& src,
                         size_t src_offset, size_t src_pitch, size_t row_bytes, size_t rows) const {
  for (const Tensor* t : {static_cast<const Tensor*>(dst), &src})
    if (!t->is_tensor() || t->dtype() == DataType::kString || t->empty())
      return InvalidArgument("CopyBytes takes numeric tensors");
  if (row_bytes == 0 || rows == 0) return Status::Ok();
  // The last row ends furthest in; every pitch at least a row, so rows never overlap.
  auto past_end = [&](size_t offset, size_t pitch, size_t size) {
    if (rows > 1 && pitch < row_bytes) return true;
    const size_t span = (rows - 1) * pitch;
    return (rows > 1 && span / (rows - 1) != pitch) || offset > size || span > size - offset ||
           row_bytes > size - offset - span;
  };
  if (past_end(dst_offset, dst_pitch, dst->byte_size()) ||
      past_end(src_offset, src_pitch, src.byte_size()))
    return InvalidArgument(
        "CopyBytes: " + std::to_string(rows) + " x " + std::to_string(row_bytes) +
        " bytes at offsets " + std::to_string(src_offset) + " -> " + std::to_string(dst_offset) +
        " (pitches " + std::to_string(src_pitch) + ", " + std::to_string(dst_pitch) +
        ") pass the end of a tensor (" + std::to_string(src.byte_size()) + " and " +
        std::to_string(dst->byte_size()) +
        " bytes), or a pitch is shorter "
        "than a row");
  auto* to = static_cast<char*>(dst->mutable_raw());
  if (!to) return InvalidArgument("CopyBytes: the destination is a read-only view");
  const auto* from = static_cast<const char*>(src.raw());
  if (dst->location() == MemoryLocation::kHost && src.location() == MemoryLocation::kHost) {
    for (size_t r = 0; r < rows; ++r)
      std::memmove(to + dst_offset + r * dst_pitch, from + src_offset + r * src_pitch, row_bytes);
    return Status::Ok();
  }
  const plugin::BackendLibrary* library = CudaLibrary(impl_->device_values);
  if (!library)
    return InvalidArgument("no graph of this session runs on the device that holds the tensor");
  const std::string what =
      "copying " + std::to_string(rows * row_bytes) + " bytes of device memory";
  if (rows == 1)
    return library->StatusOf(
        library->table()->copy_memory(library->table(), to + dst_offset, PluginLocation(*dst),
                                      from + src_offset, PluginLocation(src), row_bytes),
        what);
  return library->StatusOf(library->table()->copy_memory_rows(
                               library->table(), to + dst_offset, PluginLocation(*dst), dst_pitch,
                               from + src_offset, PluginLocation(src), src_pitch, row_bytes, rows),
                           what);
}

}  // namespace ortc
