// Feed construction.
#include "io/feeds.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "base/element_types.h"
#include "base/shape_text.h"
#include "io/tensor_files.h"

namespace ortc::io {
namespace {

Tensor RandomTensor(DataType dtype, const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  Tensor t = Tensor::Allocate(dtype, shape);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  for (int64_t i = 0; i < t.elements(); ++i) {
    double v = IsFloatElementType(static_cast<int32_t>(dtype)) ? real(rng) : small(rng);
    if (dtype == DataType::kBool) v = small(rng) % 2;
    SetElementFromDouble(t, i, v);
  }
  return t;
}

// Generated inputs are for trying a model, not for benchmarks of huge tensors: a declared shape
// beyond this is refused before anything is allocated (a model may claim 1e12 elements).
constexpr int64_t kMaxGeneratedElements = int64_t{1} << 30;

std::string DimsListText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The element count of shape, or -1 when its non-zero dimensions' product exceeds
// kMaxGeneratedElements (no overflow). Zeros are left out of the bound, as every tensor's is
// (exec/shape_limit.h): [0, 2^62] would pass a plain product and then fail Tensor::Allocate.
int64_t BoundedElements(const std::vector<int64_t>& shape) {
  int64_t nonzero = 1, n = 1;
  for (int64_t d : shape) {
    if (d > 0 && nonzero > kMaxGeneratedElements / d) return -1;
    if (d > 0) nonzero *= d;
    n *= d;
  }
  return n;
}

// Memory the system could give now (MemAvailable), in bytes; 0 when unknown.
uint64_t AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(256, '\n');
  }
  return 0;
}

std::string GiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

}  // namespace

Result<Feeds> MakeFeeds(const std::vector<TensorInfo>& inputs,
                        const std::vector<std::string>& files,
                        const std::vector<std::string>& shape_specs, uint64_t seed) {
  // The same spelling and checks as compile's --input-shape (positive dims, lists).
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& s : shape_specs) ORTC_RETURN_IF_ERROR(ParseInputShape(s, &shapes));
  // A name that is not an input is a typo: say so, with the names there are.
  std::string names;
  for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
  auto unknown = [&](const std::string& flag, const std::string& name) {
    return InvalidArgument(flag + " names '" + name + "', which is not an input of the model " +
                           "(inputs: " + names + ")");
  };
  auto is_input = [&](const std::string& name) {
    return std::any_of(inputs.begin(), inputs.end(), [&](const auto& i) { return i.name == name; });
  };
  for (const auto& [name, dims] : shapes)
    if (!is_input(name)) return unknown("--input-shape", name);
  Feeds feeds;
  for (const auto& spec : files) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos) return InvalidArgument("--input '" + spec + "' is not name=file");
    const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    auto info =
        std::find_if(inputs.begin(), inputs.end(), [&](const auto& i) { return i.name == name; });
    if (info == inputs.end()) return unknown("--input", name);
    const ValueType type = info->type;
    auto t = type == ValueType::kSequence   ? ReadSequenceFile(file)
             : type == ValueType::kOptional ? ReadOptionalFile(file)
                                            : ReadTensorFile(file);
    if (!t.ok()) return t.status();
    // Data and a shape for one input must agree; neither silently wins.
    if (auto it = shapes.find(name);
        it != shapes.end() && type == ValueType::kTensor && t->shape() != it->second)
      return InvalidArgument("--input " + name + " holds shape " + DimsListText(t->shape()) +
                             " but --input-shape gives " + DimsListText(it->second) +
                             ": drop one or make them agree");
    feeds.push_back({spec.substr(0, eq), *t});
  }
  // Every generated input is sized first: inputs that would not fit in memory are refused
  // before any is generated (a declared [1e9, 1] int64 input took 44 s and 15 GB to fail).
  struct Generated {
    const TensorInfo* info;
    std::vector<int64_t> shape;
  };
  std::vector<Generated> generated;
  uint64_t generated_bytes = 0;
  for (const auto& info : inputs) {
    if (std::any_of(feeds.begin(), feeds.end(),
                    [&](const auto& f) { return f.first == info.name; }))
      continue;
    if (info.type != ValueType::kTensor)
      return InvalidArgument(
          "input '" + info.name + "' is " +
          (info.type == ValueType::kSequence ? "a sequence" : "an optional") +
          ": give it as --input " + info.name + "=file.pb (an ONNX " +
          (info.type == ValueType::kSequence ? "SequenceProto" : "OptionalProto") + ")");
    std::vector<int64_t> shape = shapes.count(info.name) ? shapes[info.name] : info.shape;
    for (auto& d : shape) d = d < 0 ? 1 : d;
    if (ElementSize(info.dtype) == 0)
      return InvalidArgument("input '" + info.name + "' needs a file (type " +
                             DataTypeName(info.dtype) + ")");
    if (BoundedElements(shape) < 0)
      return InvalidArgument("input '" + info.name + "' has shape " + DimsListText(shape) +
                             ", more than the " + std::to_string(kMaxGeneratedElements) +
                             " elements a generated input may have: give a smaller "
                             "--input-shape or the data with --input");
    generated_bytes += static_cast<uint64_t>(BoundedElements(shape)) * ElementSize(info.dtype);
    generated.push_back({&info, std::move(shape)});
  }
  if (const uint64_t available = AvailableMemoryBytes();
      available > 0 && generated_bytes > available / 2)
    return OutOfMemory("the generated inputs would take " + GiB(generated_bytes) +
                       ", more than half the memory available (" + GiB(available) +
                       "): give smaller --input-shape or the data with --input");
  std::mt19937_64 rng(seed);
  for (const auto& g : generated)
    feeds.push_back({g.info->name, RandomTensor(g.info->dtype, g.shape, rng)});
  return feeds;
}

}  // namespace ortc::io
