// `ortc check`: the runtime's version gate without running, for CI and before deployment.
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/report_error.h"
#include "ortc/runtime.h"

namespace ortc::cli {
namespace {

struct CheckArgs {
  std::string model, device;
  bool json = false, require_optimal = false;
};

int Run(const CheckArgs& a) {
  SessionOptions o;
  DeviceDescription device;
  auto fail = [&](const Status& s) { return ReportError(a.json, s); };
  if (!a.device.empty()) {
    std::ifstream in(a.device);
    if (!in) return fail(NoSuchFile(a.device + ": cannot open the device description"));
    std::stringstream ss;
    ss << in.rdbuf();
    auto d = DeviceDescription::FromJson(ss.str());
    if (!d.ok()) return fail(d.status());
    device = *d;
    o.device = &device;
  }
  if (a.require_optimal) o.policy = VerdictPolicy::kRequireOptimal;
  auto report = CheckModel(a.model, o);
  if (!report.ok()) return fail(report.status());
  nlohmann::json j{{"ok", true},
                   {"ep_context_nodes", report->ep_context_nodes},
                   {"onnx_nodes", report->onnx_nodes}};
  j["backends"] = nlohmann::json::array();
  for (const auto& b : report->backends) {
    j["backends"].push_back({{"backend", b.backend},
                             {"binary", b.binary},
                             {"verdict", std::string(VerdictName(b.verdict))},
                             {"reason", b.reason}});
  }
  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << a.model << ": " << report->ep_context_nodes << " EPContext node(s), "
              << report->onnx_nodes << " ONNX node(s)\n";
    for (const auto& b : report->backends) {
      std::cout << "  " << b.backend << " (" << b.binary << "): " << VerdictName(b.verdict)
                << (b.reason.empty() ? "" : ": " + b.reason) << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand(
      "check", "Run the runtime's version gate on a compiled model, without running it");
  cmd->add_option("model", a->model, "model_ctx.onnx")->required();
  cmd->add_option("--device", a->device,
                  "JSON description of the target device instead of this machine, e.g.\n"
                  "{\"cpu\": {\"arch\": \"x86_64\", \"isa\": [\"avx2\"]}, \"cuda\": "
                  "{\"driver_version\": 13000, \"archs\": [\"sm_80\"]}}");
  cmd->add_flag("--require-optimal", a->require_optimal,
                "Fail when a backend's verdict is 'prefer recompilation'");
  cmd->add_flag("--json", a->json, "Print a machine-readable report");
  cmd->footer(std::string("\nVerdicts: optimal, prefer recompilation (runs, but a recompile would "
                          "do better), unsupported (error).\n"
                          "Examples:\n  ortc check model_ctx.onnx\n  ortc check model_ctx.onnx "
                          "--device jetson.json --json\n\n") +
              kExitCodeHelp);
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace ortc::cli
