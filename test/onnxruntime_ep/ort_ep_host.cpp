// A small ONNX Runtime application for the plugin EP tests: it links ONNX Runtime (the library
// onnxruntime-node ships), registers libortc_ort_ep.so with RegisterExecutionProviderLibrary and
// selects it with SessionOptionsAppendExecutionProvider_V2, as any ONNX Runtime user would.
// It knows nothing of ortc beyond the library's path.
//
//   ort_ep_host --ep-library LIB [--ep-option k=v]... [--config k=v]... [--free-dim name=N]...
//               [--session 'MODEL|OUTDIR|input=file.npy|...']...   create all, then run each
//               [--count-mappings FILE]     after creating the sessions: mappings of FILE
//               [--compile IN OUT [--embed] [--from-buffer] [--to-buffer]
//                                 [--external-initializers NAME]]
//               [--compatibility 'INFO']    ONNX Runtime's answer for a compatibility string
//   --verbose shows ONNX Runtime's warnings (the EP's included).
//   --select-by-policy lets ONNX Runtime pick EPs (PREFER_CPU policy) instead of naming ortc.
//   --sessions-from-buffer creates the sessions from the model's bytes instead of its path.
//   --no-ep runs the sessions on ONNX Runtime's own CPU EP (the reference).
// Exit 0 on success; 1 with "error: <ONNX Runtime's message>" on stderr.
#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Npy {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

const std::map<std::string, std::pair<ONNXTensorElementDataType, size_t>>& NpyTypes() {
  static const std::map<std::string, std::pair<ONNXTensorElementDataType, size_t>> t = {
      {"<f4", {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 4}},
      {"<f8", {ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, 8}},
      {"<f2", {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, 2}},
      {"<i8", {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 8}},
      {"<i4", {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, 4}},
      {"|i1", {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, 1}},
      {"|u1", {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, 1}},
      {"|b1", {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, 1}},
  };
  return t;
}

Npy ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  char magic[8];
  f.read(magic, 8);
  if (std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(path + " is not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t n = 0;
    f.read(reinterpret_cast<char*>(&n), 2);
    header_len = n;
  } else {
    f.read(reinterpret_cast<char*>(&header_len), 4);
  }
  std::string header(header_len, ' ');
  f.read(header.data(), header_len);
  auto field = [&](const std::string& key) {
    auto p = header.find("'" + key + "'");
    if (p == std::string::npos) throw std::runtime_error(path + ": no " + key);
    return header.substr(header.find(':', p) + 1);
  };
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  if (field("fortran_order").find("True") < field("fortran_order").find(','))
    throw std::runtime_error(path + ": Fortran order is not supported");
  auto it = NpyTypes().find(descr);
  if (it == NpyTypes().end())
    throw std::runtime_error(path + ": dtype " + descr + " not supported");
  Npy n;
  n.type = it->second.first;
  std::string shape = field("shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  std::stringstream ss(shape);
  size_t count = 1;
  for (std::string d; std::getline(ss, d, ',');) {
    if (d.find_first_not_of(' ') == std::string::npos) continue;
    n.shape.push_back(std::stoll(d));
    count *= n.shape.back();
  }
  n.bytes.resize(count * it->second.second);
  f.read(n.bytes.data(), n.bytes.size());
  if (!f) throw std::runtime_error(path + ": truncated");
  return n;
}

void WriteNpy(const std::string& path, const Ort::Value& v) {
  auto info = v.GetTensorTypeAndShapeInfo();
  std::string descr;
  size_t elem = 0;
  for (const auto& [d, t] : NpyTypes())
    if (t.first == info.GetElementType()) descr = d, elem = t.second;
  if (descr.empty()) throw std::runtime_error("output type not writable as .npy");
  std::string shape = "(";
  for (int64_t d : info.GetShape()) shape += std::to_string(d) + ",";
  shape += ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t n = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&n), 2);
  f << header;
  f.write(static_cast<const char*>(v.GetTensorRawData()), info.GetElementCount() * elem);
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);) out.push_back(part);
  return out;
}

std::pair<std::string, std::string> KeyValue(const std::string& s) {
  auto eq = s.find('=');
  if (eq == std::string::npos) throw std::runtime_error("expected key=value, got '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(f), {}};
}

int CountMappings(const std::string& file) {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.size() >= file.size() &&
        line.compare(line.size() - file.size(), file.size(), file) == 0)
      ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string library, count_file, compat;
  bool use_ep = true, embed = false, from_buffer = false, to_buffer = false, verbose = false;
  bool sessions_from_buffer = false, by_policy = false;
  std::string compile_in, compile_out, external_initializers;
  std::unordered_map<std::string, std::string> ep_options;
  std::vector<std::pair<std::string, std::string>> config, free_dims;
  std::vector<std::string> sessions;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--ep-library")
        library = next();
      else if (a == "--no-ep")
        use_ep = false;
      else if (a == "--select-by-policy")
        by_policy = true;
      else if (a == "--sessions-from-buffer")
        sessions_from_buffer = true;
      else if (a == "--verbose")
        verbose = true;
      else if (a == "--ep-option")
        ep_options.insert(KeyValue(next()));
      else if (a == "--config")
        config.push_back(KeyValue(next()));
      else if (a == "--free-dim")
        free_dims.push_back(KeyValue(next()));
      else if (a == "--session")
        sessions.push_back(next());
      else if (a == "--count-mappings")
        count_file = next();
      else if (a == "--compile")
        compile_in = next(), compile_out = next();
      else if (a == "--embed")
        embed = true;
      else if (a == "--from-buffer")
        from_buffer = true;
      else if (a == "--to-buffer")
        to_buffer = true;
      else if (a == "--external-initializers")
        external_initializers = next();
      else if (a == "--compatibility")
        compat = next();
      else
        throw std::runtime_error("unknown argument " + a);
    }
    if (use_ep && library.empty())
      throw std::runtime_error("--ep-library is required (or --no-ep)");

    Ort::Env env(verbose ? ORT_LOGGING_LEVEL_WARNING : ORT_LOGGING_LEVEL_ERROR, "ort_ep_host");
    std::vector<Ort::ConstEpDevice> devices;
    if (use_ep) {
      env.RegisterExecutionProviderLibrary("ortc", library);
      for (const auto& d : env.GetEpDevices())
        if (std::string(d.EpName()) == "ortc") devices.push_back(d);
      if (devices.empty()) throw std::runtime_error("ONNX Runtime lists no device for the ortc EP");
    }
    auto make_options = [&]() {
      Ort::SessionOptions so;
      so.SetIntraOpNumThreads(1);
      for (const auto& [k, v] : config) so.AddConfigEntry(k.c_str(), v.c_str());
      for (const auto& [k, v] : free_dims)
        so.AddFreeDimensionOverrideByName(k.c_str(), std::stoll(v));
      for (const auto& [k, v] : free_dims)
        so.AddFreeDimensionOverrideByName(k.c_str(), std::stoll(v));
      // ONNX Runtime's CPU EP must not get nodes ortc claims: no fallback surprises.
      if (use_ep && by_policy)
        so.SetEpSelectionPolicy(OrtExecutionProviderDevicePolicy_PREFER_CPU);
      else if (use_ep)
        so.AppendExecutionProvider_V2(env, devices, ep_options);
      return so;
    };

    if (!compat.empty()) {
      OrtCompiledModelCompatibility answer{};
      std::vector<const OrtEpDevice*> raw;
      for (const auto& d : devices) raw.push_back(d);
      Ort::ThrowOnError(Ort::GetApi().GetModelCompatibilityForEpDevices(raw.data(), raw.size(),
                                                                        compat.c_str(), &answer));
      const char* names[] = {"EP_NOT_APPLICABLE", "EP_SUPPORTED_OPTIMAL",
                             "EP_SUPPORTED_PREFER_RECOMPILATION", "EP_UNSUPPORTED"};
      std::cout << "compatibility: " << names[answer] << "\n";
    }

    if (!compile_in.empty()) {
      Ort::SessionOptions so = make_options();
      Ort::ModelCompilationOptions co(env, so);
      std::string input_bytes;
      if (from_buffer) {
        input_bytes = ReadFile(compile_in);
        co.SetInputModelFromBuffer(input_bytes.data(), input_bytes.size());
      } else {
        co.SetInputModelPath(compile_in.c_str());
      }
      co.SetEpContextEmbedMode(embed);
      void* buffer = nullptr;
      size_t size = 0;
      Ort::AllocatorWithDefaultOptions allocator;
      if (to_buffer)
        co.SetOutputModelBuffer(allocator, &buffer, &size);
      else
        co.SetOutputModelPath(compile_out.c_str());
      if (!external_initializers.empty())
        co.SetOutputModelExternalInitializersFile(external_initializers.c_str(), 0);
      Ort::Status s = Ort::CompileModel(env, co);
      if (!s.IsOK()) throw Ort::Exception(s.GetErrorMessage(), s.GetErrorCode());
      if (to_buffer) {
        std::ofstream f(compile_out, std::ios::binary);
        f.write(static_cast<const char*>(buffer), size);
        allocator.Free(buffer);
      }
      std::cout << "compiled " << compile_in << " -> " << compile_out << "\n";
    }

    // All sessions exist together, as an application holding a weight-sharing group would.
    struct Job {
      std::unique_ptr<Ort::Session> session;
      std::string out_dir;
      std::vector<std::pair<std::string, Npy>> inputs;
    };
    std::vector<Job> jobs;
    for (const auto& spec : sessions) {
      auto parts = Split(spec, '|');
      if (parts.size() < 2)
        throw std::runtime_error("--session needs 'MODEL|OUTDIR|input=file...'");
      Job job;
      if (sessions_from_buffer) {
        const std::string bytes = ReadFile(parts[0]);
        job.session =
            std::make_unique<Ort::Session>(env, bytes.data(), bytes.size(), make_options());
      } else {
        job.session = std::make_unique<Ort::Session>(env, parts[0].c_str(), make_options());
      }
      job.out_dir = parts[1];
      for (size_t k = 2; k < parts.size(); ++k) {
        auto [name, file] = KeyValue(parts[k]);
        job.inputs.emplace_back(name, ReadNpy(file));
      }
      jobs.push_back(std::move(job));
    }
    if (!count_file.empty())
      std::cout << "mappings of " << count_file << ": " << CountMappings(count_file) << "\n";
    for (auto& job : jobs) {
      Ort::MemoryInfo mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
      std::vector<Ort::Value> values;
      std::vector<const char*> in_names;
      for (auto& [name, npy] : job.inputs) {
        values.push_back(Ort::Value::CreateTensor(mem, npy.bytes.data(), npy.bytes.size(),
                                                  npy.shape.data(), npy.shape.size(), npy.type));
        in_names.push_back(name.c_str());
      }
      std::vector<std::string> out_names;
      for (size_t k = 0; k < job.session->GetOutputCount(); ++k)
        out_names.push_back(
            job.session->GetOutputNameAllocated(k, Ort::AllocatorWithDefaultOptions()).get());
      std::vector<const char*> out_ptrs;
      for (const auto& n : out_names) out_ptrs.push_back(n.c_str());
      auto outs = job.session->Run(Ort::RunOptions{nullptr}, in_names.data(), values.data(),
                                   values.size(), out_ptrs.data(), out_ptrs.size());
      std::string mk = "mkdir -p '" + job.out_dir + "'";
      if (std::system(mk.c_str()) != 0) throw std::runtime_error("cannot create " + job.out_dir);
      for (size_t k = 0; k < outs.size(); ++k) {
        std::string file = out_names[k];
        for (char& c : file)
          if (c == '/' || c == '\\') c = '_';
        WriteNpy(job.out_dir + "/" + file + ".npy", outs[k]);
      }
      std::cout << "ran " << out_names.size() << " outputs into " << job.out_dir << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
