// Initializer metadata and external-data checks.
#include "graph/initializer_info.h"

#include <charconv>
#include <system_error>

#include "base/element_types.h"
#include "base/shape_limit.h"

namespace ortc::graph {
namespace {

namespace fs = std::filesystem;

Result<int64_t> ParseNonNegative(const std::string& text, const std::string& what) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0) {
    return InvalidGraph("external data " + what + " '" + text + "' is not a non-negative integer");
  }
  return v;
}

// Element count of the typed repeated field that holds this tensor's embedded data.
int64_t TypedFieldCount(const onnx::TensorProto& t) {
  return t.float_data_size() + t.int32_data_size() + t.string_data_size() + t.int64_data_size() +
         t.double_data_size() + t.uint64_data_size();
}

}  // namespace

Result<fs::path> ResolveInsideFolder(const fs::path& base_dir, const std::string& location) {
  if (location.empty()) return InvalidGraph("external data location is empty");
  fs::path rel(location);
  if (rel.is_absolute()) {
    return InvalidGraph("external data location '" + location +
                        "' is absolute; ONNX requires a path relative to the model's folder");
  }
  for (const auto& part : rel) {
    if (part == "..") {
      return InvalidGraph("external data location '" + location +
                          "' leaves the model's folder ('..' is not allowed)");
    }
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(base_dir.empty() ? fs::path(".") : base_dir, ec);
  fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec) return InvalidGraph("cannot resolve external data location '" + location + "'");
  auto [bit, fit] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (bit != base.end()) {
    return InvalidGraph("external data location '" + location + "' resolves to " + full.string() +
                        ", outside the model's folder (through a symbolic link)");
  }
  return full;
}

Result<Initializer> ReadInitializerInfo(const onnx::TensorProto& t, const fs::path* base_dir) {
  Initializer init;
  init.name = t.name();
  init.dtype = t.data_type();
  init.proto = &t;
  const std::string where = "initializer '" + t.name() + "'";
  if (init.dtype == 0) return InvalidGraph(where + " has no data type");
  int64_t elements = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return InvalidGraph(where + " has a negative dimension " + std::to_string(d));
    init.dims.push_back(d);
  }
  // The runtime's bound on every shape (non-zero dimensions' product <= 2^40): elements * bits
  // below cannot overflow, and a [0, 2^62, 2^62] tensor cannot reach constant folding.
  if (!exec::ShapeWithinLimit(init.dims))
    return InvalidGraph(where + " declares more than 2^40 elements");
  for (int64_t d : init.dims) elements *= d;
  const int64_t bits = ElementBits(init.dtype);
  const bool is_string = init.dtype == onnx::TensorProto::STRING;
  if (bits == 0 && !is_string) {
    return InvalidGraph(where + " has unsupported data type " + ElementTypeName(init.dtype));
  }
  const int64_t expected = is_string ? -1 : (elements * bits + 7) / 8;

  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    if (is_string) return InvalidGraph(where + ": string tensors cannot use external data");
    if (!base_dir) {
      return InvalidArgument(where +
                             " uses external data but the model was loaded from a buffer: give "
                             "the folder holding its data files");
    }
    ExternalLocation loc;
    bool has_length = false;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") {
        loc.location = kv.value();
      } else if (kv.key() == "offset") {
        auto v = ParseNonNegative(kv.value(), "offset");
        if (!v.ok()) return v.status().WithContext(where);
        loc.offset = *v;
      } else if (kv.key() == "length") {
        auto v = ParseNonNegative(kv.value(), "length");
        if (!v.ok()) return v.status().WithContext(where);
        loc.length = *v;
        has_length = true;
      }
    }
    if (!has_length) loc.length = expected;
    if (loc.length != expected) {
      return InvalidGraph(where + " declares " + std::to_string(loc.length) +
                          " bytes of external data, but its shape and type need " +
                          std::to_string(expected));
    }
    auto path = ResolveInsideFolder(*base_dir, loc.location);
    if (!path.ok()) return path.status().WithContext(where);
    loc.file = *path;
    std::error_code ec;
    if (!fs::is_regular_file(loc.file, ec)) {
      return Status(StatusCode::kNoSuchFile,
                    where + ": external data file '" + loc.file.string() + "' does not exist");
    }
    const auto size = static_cast<int64_t>(fs::file_size(loc.file, ec));
    if (ec) return IoError(where + ": cannot read size of '" + loc.file.string() + "'");
    if (loc.offset > size || size - loc.offset < loc.length) {
      return InvalidGraph(where + ": external data file '" + loc.file.string() +
                          "' is truncated: needs " + std::to_string(loc.length) +
                          " bytes from offset " + std::to_string(loc.offset) + " but has " +
                          std::to_string(size));
    }
    init.byte_size = loc.length;
    init.external = std::move(loc);
    return init;
  }

  if (is_string) {
    if (t.string_data_size() != elements) {
      return InvalidGraph(where + " holds " + std::to_string(t.string_data_size()) +
                          " strings but its shape needs " + std::to_string(elements));
    }
    init.byte_size = 0;
    for (const auto& s : t.string_data()) init.byte_size += static_cast<int64_t>(s.size());
    return init;
  }
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != expected) {
      return InvalidGraph(where + " holds " + std::to_string(t.raw_data().size()) +
                          " bytes but its shape and type need " + std::to_string(expected));
    }
  } else {
    // Typed fields: complex types use two numbers per element; packed 16-bit and smaller
    // types use one int32 per element (4-bit types pack two per int32 entry, so allow either).
    const int64_t count = TypedFieldCount(t);
    const bool complex =
        init.dtype == onnx::TensorProto::COMPLEX64 || init.dtype == onnx::TensorProto::COMPLEX128;
    const int64_t want = complex ? 2 * elements : elements;
    const bool ok = count == want || (bits == 4 && count == (elements + 1) / 2);
    if (!ok) {
      return InvalidGraph(where + " holds " + std::to_string(count) +
                          " values but its shape needs " + std::to_string(want));
    }
  }
  init.byte_size = expected;
  return init;
}

}  // namespace ortc::graph
