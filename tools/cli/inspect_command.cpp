// `ortc inspect`: show what a context binary or an EPContext model holds, or what is broken.
#include <iostream>

#include "base/format_bytes.h"
#include "base/shape_json.h"
#include "cli/exit_codes.h"
#include "cli/report_error.h"
#include "cli/runtime_commands.h"
#include "inspect/inspect.h"

namespace ortc::cli {
namespace {

void PrintCudaProgram(const nlohmann::json& c, const std::string& indent) {
  if (c.contains("error")) {
    std::cout << indent << "cuda program: " << c["error"].value("message", "") << "\n";
    return;
  }
  std::cout << indent << "cuda: " << c["precision"].get<std::string>() << ", conv layout "
            << c["conv_layout"].get<std::string>() << ", " << c["step_count"] << " steps (";
  bool first = true;
  for (const auto& [kind, n] : c["steps"].items()) {
    std::cout << (first ? "" : ", ") << kind << " " << n;
    first = false;
  }
  std::cout << "), " << c["kernels"].size() << " kernels, workspace "
            << tools::FormatBytes(c["workspace_bytes"].get<int64_t>()) << "\n";
  for (const auto& m : c["modules"]) {
    std::cout << indent << "  module " << m["target"].get<std::string>() << " ("
              << m["kind"].get<std::string>() << ") "
              << tools::FormatBytes(m["bytes"].get<int64_t>()) << "\n";
  }
}

void PrintBinary(const nlohmann::json& j, const std::string& indent) {
  std::cout << indent << "format " << j["format"].get<std::string>() << ", backend "
            << j["backend"].get<std::string>() << ", producer " << j["producer"].get<std::string>()
            << "\n";
  std::cout << indent << "content id " << j["content_id"].get<std::string>() << ", "
            << tools::FormatBytes(j["file_bytes"].get<int64_t>()) << "\n";
  std::cout << indent << "targets:";
  for (const auto& t : j["hardware_targets"]) std::cout << " " << t.get<std::string>();
  std::cout << "\n" << indent << "versions:";
  for (const auto& [k, v] : j["versions"].items())
    std::cout << " " << k << "=" << v.get<std::string>();
  std::cout << "\n" << indent << "sections:\n";
  for (const auto& s : j["sections"]) {
    std::cout << indent << "  " << s["kind"].get<std::string>() << " '"
              << s["name"].get<std::string>() << "' at " << s["offset"] << ", "
              << tools::FormatBytes(s["bytes"].get<int64_t>()) << ", align " << s["alignment"]
              << ", checksum " << s["checksum"].get<std::string>() << "\n";
  }
  std::cout << indent << "graphs:\n";
  for (const auto& g : j["graphs"]) {
    std::cout << indent << "  " << g["name"].get<std::string>() << ": " << g["weights"]["count"]
              << " weights (" << tools::FormatBytes(g["weights"]["bytes"].get<int64_t>())
              << "), arena " << tools::FormatBytes(g["arena_bytes"].get<int64_t>()) << "\n";
    if (g.contains("cuda")) PrintCudaProgram(g["cuda"], indent + "    ");
    for (const char* side : {"inputs", "outputs"}) {
      std::cout << indent << "    " << side << ":";
      for (const auto& d : g[side]) {
        std::cout << " " << d["name"].get<std::string>() << " " << d["dtype"].get<std::string>()
                  << tools::ShapeText(d["shape"]);
      }
      std::cout << "\n";
    }
  }
  const auto& w = j["weights"];
  std::cout << indent << "weights: " << w["count"] << " referenced ("
            << tools::FormatBytes(w["bytes"].get<int64_t>()) << "), " << w["unique_count"]
            << " stored (" << tools::FormatBytes(w["unique_bytes"].get<int64_t>()) << ")\n";
}

int Run(const std::string& path, bool json) {
  const auto j = inspect::InspectPath(path);
  const bool ok = j.value("ok", false);
  const Status error = ok ? Status::Ok() : inspect::ReportedError(j);
  // A report that failed without saying why is still a failed verification.
  const int failed = ExitCodeFor(error.ok() ? InvalidGraph("verification failed") : error);
  if (json) {
    std::cout << ReportText(j) << "\n";
    return ok ? kExitOk : failed;
  }
  std::cout << path << " (" << j.value("kind", "unknown") << ")\n";
  if (j.value("kind", "") == "context_binary") {
    if (ok) PrintBinary(j, "  ");
  } else if (j.contains("ep_context_nodes")) {
    for (const auto& n : j["ep_context_nodes"]) {
      std::cout << "  EPContext " << n["name"].get<std::string>();
      if (n.contains("source")) {
        std::cout << " source=" << n["source"].get<std::string>()
                  << " graph=" << n["partition_name"].get<std::string>()
                  << " main=" << n["main_context"] << " embed=" << n["embed_mode"];
        if (n.contains("ep_cache_context"))
          std::cout << " bin=" << n["ep_cache_context"].get<std::string>();
      }
      std::cout << ": " << n["status"].get<std::string>() << "\n";
    }
    std::cout << "  ONNX nodes kept:";
    if (j["onnx_nodes"].empty()) std::cout << " none";
    for (const auto& [op, count] : j["onnx_nodes"].items()) std::cout << " " << op << "x" << count;
    std::cout << "\n";
    for (const auto& b : j["binaries"]) {
      std::cout << "  binary "
                << (b["path"].is_string() ? b["path"].get<std::string>() : "(embedded)") << ":\n";
      PrintBinary(b, "    ");
    }
  }
  if (!ok) {
    std::cerr << "error: " << (error.ok() ? "verification failed" : error.ToString()) << "\n";
    return failed;
  }
  return kExitOk;
}

}  // namespace

void AddInspectCommand(CLI::App& app, int* exit_code) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("inspect", "Describe a ctx model or context binary and verify it");
  cmd->add_option("file", *path, "A model_ctx.onnx or a context binary (.bin)")->required();
  cmd->add_flag("--json", *json, "Print a machine-readable report on stdout");
  cmd->footer(
      "\nExamples:\n  ortc inspect model_ctx.onnx        # EPContext nodes, their binaries, "
      "checks\n"
      "  ortc inspect model_cpu.bin --json   # header, sections, graphs, weights\n\n"
      "Exits 3 when a file fails verification, naming the section and check.\n" +
      std::string(kExitCodeHelp));
  cmd->callback([path, json, exit_code] { *exit_code = Run(*path, *json); });
}

}  // namespace ortc::cli
