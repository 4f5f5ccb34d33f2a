// ONNX backend conformance: every case of ONNX's own test data (Debian's libonnx-testdata)
// goes through `ortc compile --ep cpu` and the runtime, and its outputs are compared with the
// expected ones (rtol 1e-3, atol 1e-7, as ONNX's backend tests). Cases listed in the expected
// failures file must fail (each with a reason); any other failure fails the suite.
// Usage: onnx_conformance DATA_ROOT EXPECTED_FAILURES.txt REPORT.json [filter]
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "compile/compile_driver.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "io/tensor_files.h"
#include "ortc/runtime.h"
#include "tensor_compare.h"

namespace fs = std::filesystem;
using namespace ortc;

namespace {

struct Outcome {
  bool pass = false;
  std::string reason;
};

Result<Tensor> ReadValue(const fs::path& file, ValueType type) {
  if (type == ValueType::kSequence) return io::ReadSequenceFile(file);
  if (type == ValueType::kOptional) return io::ReadOptionalFile(file);
  return io::ReadTensorFile(file);
}

// Sequences element by element; an empty optional matches only an empty optional.
std::string CompareValues(const Tensor& got, const Tensor& want) {
  if (got.is_none() || want.is_none())
    return got.is_none() == want.is_none() ? "" : "one optional is empty, the other is not";
  if (got.is_sequence() != want.is_sequence()) return "sequence and tensor differ";
  if (!want.is_sequence()) return test::CompareTensors(got, want, test::Tolerance{});
  if (got.items().size() != want.items().size())
    return "sequence length " + std::to_string(got.items().size()) +
           " != " + std::to_string(want.items().size());
  for (size_t k = 0; k < want.items().size(); ++k) {
    const std::string diff =
        test::CompareTensors(got.items()[k], want.items()[k], test::Tolerance{});
    if (!diff.empty()) return "element " + std::to_string(k) + ": " + diff;
  }
  return "";
}

Outcome RunCase(const fs::path& dir, const fs::path& work) {
  fs::remove_all(work);
  fs::create_directories(work);
  compile::CompileOptions o;
  o.model = dir / "model.onnx";
  o.output = work / "m_ctx.onnx";
  auto compiled = compile::Compile(o);
  if (!compiled.ok()) return {false, "compile: " + compiled.status().message()};
  auto session = Session::Create(work / "m_ctx.onnx");
  if (!session.ok()) return {false, "load: " + session.status().message()};
  int sets = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory() || entry.path().filename().string().rfind("test_data_set_", 0) != 0)
      continue;
    ++sets;
    std::vector<std::pair<std::string, Tensor>> feeds;
    const auto& ins = (*session)->inputs();
    for (size_t i = 0; i < ins.size(); ++i) {
      auto t = ReadValue(entry.path() / ("input_" + std::to_string(i) + ".pb"), ins[i].type);
      if (!t.ok()) return {false, "input: " + t.status().message()};
      // ONNX's older test data stores bfloat16 tensors as uint16 (same bits).
      if (ins[i].dtype == DataType::kBfloat16 && t->dtype() == DataType::kUint16) {
        *t = Tensor::FromBytes(DataType::kBfloat16, t->shape(), t->raw(), t->byte_size());
      }
      feeds.push_back({ins[i].name, *t});
    }
    auto outs = (*session)->Run(feeds);
    if (!outs.ok()) return {false, "run: " + outs.status().message()};
    for (size_t i = 0; i < outs->size(); ++i) {
      const fs::path expected_file = entry.path() / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(expected_file)) continue;
      auto want = ReadValue(expected_file, (*session)->outputs()[i].type);
      if (!want.ok()) return {false, "expected output: " + want.status().message()};
      if ((*outs)[i].dtype() == DataType::kBfloat16 && want->dtype() == DataType::kUint16) {
        *want =
            Tensor::FromBytes(DataType::kBfloat16, want->shape(), want->raw(), want->byte_size());
      }
      const std::string diff = CompareValues((*outs)[i], *want);
      if (!diff.empty()) return {false, "output " + std::to_string(i) + ": " + diff};
    }
  }
  if (sets == 0) return {false, "no test data"};
  return {true, ""};
}

// "test_abs" -> op name as the model's first node says (falls back to the case name).
std::string OpOf(const fs::path& model) {
  onnx::ModelProto m;
  std::ifstream in(model, std::ios::binary);
  if (!m.ParseFromIstream(&in) || m.graph().node_size() == 0) return "?";
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "Constant") return n.op_type();
  }
  return m.graph().node(0).op_type();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr
        << "usage: onnx_conformance DATA_ROOT EXPECTED_FAILURES.txt REPORT.json [name filter]\n";
    return 2;
  }
  const fs::path root = argv[1];
  const std::string filter = argc > 4 ? argv[4] : "";
  std::map<std::string, std::string> expected;
  std::ifstream xf(argv[2]);
  for (std::string line; std::getline(xf, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.find_first_of(" \t");
    expected[line.substr(0, sp)] =
        sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
  }
  const fs::path work =
      fs::temp_directory_path() / ("ortc-conformance-" + std::to_string(::getpid()));
  std::vector<fs::path> cases;
  for (const char* set : {"node", "simple", "pytorch-converted", "pytorch-operator"}) {
    if (!fs::exists(root / set)) continue;
    for (const auto& e : fs::directory_iterator(root / set)) {
      if (fs::exists(e.path() / "model.onnx") &&
          e.path().filename().string().find(filter) != std::string::npos)
        cases.push_back(e.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  int passed = 0, failed = 0, expected_failed = 0, unexpected_pass = 0;
  nlohmann::json report{{"cases", nlohmann::json::array()}};
  std::map<std::string, std::array<int, 2>> per_op;  // op -> {pass, total}
  std::vector<std::string> unexpected;
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    const std::string set = dir.parent_path().filename().string();
    Outcome r = RunCase(dir, work);
    const std::string op = OpOf(dir / "model.onnx");
    per_op[op][1]++;
    const bool listed = expected.count(name) > 0;
    std::string status;
    if (r.pass) {
      ++passed;
      per_op[op][0]++;
      status = listed ? "pass (listed as expected failure)" : "pass";
      if (listed) ++unexpected_pass;
    } else if (listed) {
      ++expected_failed;
      status = "expected failure";
    } else {
      ++failed;
      status = "FAIL";
      unexpected.push_back(set + "/" + name + ": " + r.reason);
    }
    report["cases"].push_back(
        {{"name", name}, {"set", set}, {"op", op}, {"status", status}, {"reason", r.reason}});
  }
  fs::remove_all(work);
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& [op, c] : per_op) ops[op] = {{"passed", c[0]}, {"total", c[1]}};
  report["per_op"] = ops;
  report["totals"] = {{"cases", cases.size()},
                      {"passed", passed},
                      {"failed", failed},
                      {"expected_failures", expected_failed},
                      {"listed_but_passing", unexpected_pass}};
  std::ofstream(argv[3]) << report.dump(2) << "\n";
  for (const auto& u : unexpected) std::cout << "FAIL " << u << "\n";
  std::cout << "per op (passed/total):";
  for (const auto& [op, c] : per_op) std::cout << " " << op << " " << c[0] << "/" << c[1];
  std::cout << "\n";
  if (unexpected_pass)
    std::cout << unexpected_pass
              << " case(s) listed as expected failures now pass: update the list\n";
  std::cout << "conformance: " << cases.size() << " cases, " << passed << " pass, "
            << expected_failed << " expected failures, " << failed << " unexpected failures\n";
  std::cout << passed << " passed, " << failed << " failed, " << expected_failed << " skipped\n";
  return failed == 0 ? 0 : 1;
}
